// RUN: mlvm-opt %s -p mlvm-canonicalize,mlvm-fuse,mlvm-inplace -t c | filecheck %s

// Module state: loads read the global's bytes where they lie, a value
// stored to a global is computed straight into its bytes, and the loop
// that reads and writes one global in place is not `restrict`.

"mlvm.global"() <{sym_name = "v", type = tensor<8xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "w", type = tensor<8xf32>}> : () -> ()

// CHECK-LABEL: mlvm_status_t module_sgd(const mlvm_instance_t *inst, void *arena_, const float *in_g){{$}}
// CHECK-NEXT: {
// CHECK: if (inst == NULL || inst->state == NULL)
// CHECK-NEXT: return MLVM_ERR_INVALID;
// CHECK-NEXT: unsigned char *const state = inst->state;
// v = 0.5 v + g, into v's bytes (offset 0):
// CHECK: const float *in0 = ((float *)(state + 0));
// CHECK: float *out = ((float *)(state + 0));
// CHECK: }
// CHECK-NEXT: }
// w = w - v, into w's bytes (offset 64), and no copies:
// CHECK-NEXT: mlvm_sub_f32(&{{.*}}, ((float *)(state + 64)), ((float *)(state + 0)), ((float *)(state + 64)));
// CHECK-NEXT: return MLVM_OK;
func.func @sgd(%g: tensor<8xf32>) {
  %half = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<8xf32>
  %hv = "mlvm.mul"(%v, %half) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %nv = "mlvm.add"(%hv, %g) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "mlvm.global_store"(%nv) <{global = @v}> : (tensor<8xf32>) -> ()
  %w = "mlvm.global_load"() <{global = @w}> : () -> tensor<8xf32>
  %nw = "mlvm.sub"(%w, %nv) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "mlvm.global_store"(%nw) <{global = @w}> : (tensor<8xf32>) -> ()
  func.return
}

// A returned value is computed into the caller's output, then copied.
// CHECK-LABEL: mlvm_status_t module_bump(const mlvm_instance_t *inst, void *arena_, const float *in_x, float *out0){{$}}
// CHECK: mlvm_add_f32(&{{.*}}, ((float *)(state + 0)), in_x, out0);
// CHECK-NEXT: mlvm_copy(32, out0, ((float *)(state + 0)));
func.func @bump(%x: tensor<8xf32>) -> tensor<8xf32> {
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<8xf32>
  %n = "mlvm.add"(%v, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "mlvm.global_store"(%n) <{global = @v}> : (tensor<8xf32>) -> ()
  func.return %n : tensor<8xf32>
}

// Swapping: @v is stored while its loaded value is still read, so that
// load is a copy; the other reads @w's bytes in place.
// CHECK-LABEL: mlvm_status_t module_swap(const mlvm_instance_t *inst, void *arena_){{$}}
// CHECK: mlvm_copy(32, ((float *)(state + 0)), ((float *)(arena + 0)));
// CHECK-NEXT: mlvm_copy(32, ((float *)(state + 64)), ((float *)(state + 0)));
// CHECK-NEXT: mlvm_copy(32, ((float *)(arena + 0)), ((float *)(state + 64)));
func.func @swap() {
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<8xf32>
  %w = "mlvm.global_load"() <{global = @w}> : () -> tensor<8xf32>
  "mlvm.global_store"(%w) <{global = @v}> : (tensor<8xf32>) -> ()
  "mlvm.global_store"(%v) <{global = @w}> : (tensor<8xf32>) -> ()
  func.return
}

// A function that suspends copies what it loads (another call may store
// while it waits) and needs the instance: begin checks the state is bound.
// CHECK-LABEL: mlvm_status_t module_slow_resume(module_slow_call_t *call){{$}}
// CHECK: unsigned char *const state = call->hdr.inst->state;
// CHECK: mlvm_copy(32, ((float *)(state + 0)), {{.*}}arena
// CHECK-LABEL: mlvm_status_t module_slow_begin(
// CHECK: if (inst == NULL || inst->state == NULL) {
// CHECK-NEXT: call->hdr.pc = -1;
// CHECK-NEXT: call->hdr.status = MLVM_ERR_INVALID;
func.func @slow(%x: tensor<8xf32>) {
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<8xf32>
  "mlvm.yield"() : () -> ()
  %n = "mlvm.add"(%v, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "mlvm.global_store"(%n) <{global = @v}> : (tensor<8xf32>) -> ()
  func.return
}

// The descriptor: each global's tensor, offset, size and initial bytes.
// CHECK-LABEL: static const mlvm_global_desc_t module__globals[] = {
// CHECK-NEXT: { { "v", MLVM_F32, 1, module__g0_dims }, 0u, 32u, NULL },
// CHECK-NEXT: { { "w", MLVM_F32, 1, module__g1_dims }, 64u, 32u, NULL },
// CHECK: MODULE_STATE_BYTES,
// CHECK-NEXT: module__globals
