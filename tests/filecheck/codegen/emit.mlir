// RUN: mlvm-opt %s -p mlvm-plan-memory -t c | filecheck %s
// RUN: mlvm-opt %s -t c | filecheck %s

// Bias add broadcasts along rows: the iteration space collapses to 2-D with
// a zero row stride for the bias; matmul with transpose_rhs walks rhs rows.
// CHECK: static const union { uint32_t u[1]; float f[1]; int32_t i[1]; uint64_t align8_; } [[ONE:module__d[0-9]+]] = {{[{][{]}}
// CHECK-NEXT: 0x3f800000u
// CHECK-DAG: static const mlvm_iter_t [[BIAS:module__s[0-9]+]] = {2, {4, 8}, {{[{][{]}}8, 1}, {0, 1}}};
// CHECK-DAG: static const mlvm_matmul_t [[MM:module__s[0-9]+]] = {4, 8, 16, 16, 1, 1, 16, 0};
// CHECK-LABEL: mlvm_status_t module_dense(void *arena_, const float *in_x, const float *in_w, const float *in_b, float *out0){{$}}
// CHECK: mlvm_matmul_f32(&[[MM]], &{{.*}}, in_x, in_w, ((float *)(arena + 0)));
// CHECK-NEXT: mlvm_add_f32(&[[BIAS]], ((float *)(arena + 0)), in_b, ((float *)(arena + 128)));
// CHECK-NEXT: mlvm_max_f32(&{{.*}}, ((float *)(arena + 128)), [[ONE]].f, out0);
// CHECK-NEXT: return MLVM_OK;
func.func @dense(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %c = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %2 = "mlvm.max"(%1, %c) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// Returning an input or a constant copies it into the output buffer; a
// reshape of an input is the same bytes.
// CHECK-LABEL: mlvm_status_t module_passthrough(void *arena_, const float *in_x, float *out0, float *out1){{$}}
// CHECK: mlvm_copy(24, in_x, out0);
// CHECK-NEXT: mlvm_copy(24, in_x, out1);
func.func @passthrough(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  %r = "mlvm.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %x, %r : tensor<2x3xf32>, tensor<6xf32>
}

// Reductions: the output strides are zero on reduced axes.
// CHECK-LABEL: mlvm_status_t module_reduce{{[^;]*$}}
// CHECK: mlvm_reduce_mean_f32(&{{.*}}, in_x, out0, 5, 12);
// CHECK: mlvm_argmax_f32(3, 4, 5, in_x, out1);
func.func @reduce(%x: tensor<3x4x5xf32>) -> (tensor<5xf32>, tensor<3x5xi32>) {
  %0 = "mlvm.reduce"(%x) <{kind = "mean", axes = array<i64: 0, -2>}> : (tensor<3x4x5xf32>) -> tensor<5xf32>
  %1 = "mlvm.argmax"(%x) <{axis = 1 : i64}> : (tensor<3x4x5xf32>) -> tensor<3x5xi32>
  func.return %0, %1 : tensor<5xf32>, tensor<3x5xi32>
}

// User names never reach the C unescaped: identifiers are sanitized and
// strings in the descriptor are escaped (no comment or trigraph breaks out).
// CHECK-LABEL: mlvm_status_t module_evil_2a_2f_3f_3f_3d_22(void *arena_, const float *in_x, float *out0){{$}}
// CHECK: { "evil*/\?\?=\"", 1, 1,
func.func @"evil*/??=\""(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlvm.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
