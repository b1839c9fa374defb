// RUN: mlvm-opt %s -t c | filecheck %s

// A function with suspension points becomes begin / resume: the body runs
// in _resume, which jumps to the resume point kept in the call state.
// CHECK-LABEL: mlvm_status_t module_f_resume(module_f_call_t *call){{$}}
// CHECK: const float *in_x = call->in_x; (void)in_x;
// CHECK: switch (call->hdr.pc) {
// CHECK: case 1:
// CHECK-NEXT: goto mlvm_resume_1;
// CHECK: case 4:
// CHECK-NEXT: goto mlvm_resume_4;

// yield: suspend, then the resume point right after.
// CHECK: { call->hdr.pc = 1; call->hdr.status = MLVM_SUSPENDED; return MLVM_SUSPENDED; }
// CHECK-NEXT: mlvm_resume_1: ;

// queue_pop: the resume point comes first, so an empty queue is retried.
// CHECK-NEXT: mlvm_resume_2: ;
// CHECK-NEXT: if (mlvm_queue_pop(call->hdr.inst->queues[0], [[F:.*]]) != MLVM_OK) { call->hdr.pc = 2;

// call_c: arguments and results by pointer; "would block" suspends and retries.
// CHECK: mlvm_resume_3: ;
// CHECK: const mlvm_native_t *fn_ = call->hdr.inst->imports[0];
// CHECK-NEXT: const mlvm_status_t st_ = fn_->fn(fn_->user, args_, res_);
// CHECK-NEXT: if (st_ == MLVM_SUSPENDED) { call->hdr.pc = 3;
// CHECK-NEXT: if (st_ != MLVM_OK) { call->hdr.pc = -1; call->hdr.status = st_; return st_; }

// check_close: the worst element into the call state, the op's location.
// CHECK: if (mlvm_check_close_f32(&{{.*}}, 0x1.0624de0000000p-10f, 0.0f, &call->hdr.check.index, &call->hdr.check.got, &call->hdr.check.want)) { call->hdr.check.where = "{{.*}}coroutines.mlir:{{[0-9]+}}:3: mlvm.check_close";

// queue_push, then the end of the call.
// CHECK: mlvm_resume_4: ;
// CHECK-NEXT: if (mlvm_queue_push(call->hdr.inst->queues[1], out0) != MLVM_OK) { call->hdr.pc = 4;
// CHECK: call->hdr.pc = -1;
// CHECK-NEXT: call->hdr.status = MLVM_OK;

// Imports and queues are described for the loader; a function that calls
// imports has no one-shot entry (it needs an instance).
// CHECK: static const mlvm_import_desc_t module__imports[] = {
// CHECK-NEXT: { "scale", 1, 1, module__imp0_args, module__imp0_results },
// CHECK: static const mlvm_queue_desc_t module__queues[] = {
// CHECK-NEXT: { "frames", { "frames", MLVM_F32, 1, module__q0_dims } },
// CHECK-NEXT: { "out", { "out", MLVM_F32, 1, module__q1_dims } },
// CHECK: { "f", 1, 1, module_f__inputs, module_f__outputs, MODULE_F_ARENA_BYTES, NULL, sizeof(module_f_call_t), module_f__begin, module_f__resume, 1, 0, NULL },
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  "mlvm.yield"() : () -> ()
  %f = "mlvm.queue_pop"() <{queue = "frames"}> : () -> tensor<4xf32>
  %s = "mlvm.add"(%x, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = "mlvm.call_c"(%s) <{callee = "scale"}> : (tensor<4xf32>) -> tensor<4xf32>
  "mlvm.check_close"(%r, %x) <{atol = 1.0e-03 : f32, rtol = 0.0 : f32}> : (tensor<4xf32>, tensor<4xf32>) -> ()
  "mlvm.queue_push"(%r) <{queue = "out"}> : (tensor<4xf32>) -> ()
  func.return %r : tensor<4xf32>
}
