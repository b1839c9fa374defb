// RUN: mlvm-opt %s -t c | filecheck %s
// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s --check-prefix=FUSE

// gelu calls one kernel per mode; approximate defaults to "none" (erf).
// CHECK-LABEL: mlvm_status_t module_both({{[^;]*$}}
// CHECK: mlvm_gelu_tanh_f32(32, in_x, out0);
// CHECK-NEXT: mlvm_gelu_erf_f32(32, in_x, out1);
// CHECK-LABEL: mlvm_status_t module_dense({{[^;]*$}}
// CHECK: mlvm_matmul_f32(
// CHECK-NEXT: mlvm_add_f32(
// CHECK-NEXT: mlvm_gelu_tanh_f32(32,

// Fused, gelu is a scalar expression in the matmul's epilogue loop; where
// it ends the tree, the C with vector math (MLVM_VECTOR_MATH) runs it by
// its kernel after the GEMM and its bias epilogue instead.
// FUSE: const float t0 = (h + a2);
// FUSE-NEXT: const float t1 = mlvm_gelu_tanh(t0);
// FUSE-NEXT: row[j] = t1;
// FUSE: const float t0 = (h + a2);
// FUSE-NEXT: const float t1 = mlvm_gelu_tanh(t0);
// FUSE-NEXT: const float t2 = (t1 * h);
// FUSE-NEXT: row[j] = t2;
// FUSE-LABEL: mlvm_status_t module_dense({{[^;]*$}}
// FUSE: #if MLVM_VECTOR_MATH
// FUSE: mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_bias_f32, &bias);
// FUSE: mlvm_gelu_tanh_f32(32,
// FUSE-NEXT: #else
// FUSE: mlvm_matmul_epilogue_f32({{.*}}, ctx);
// FUSE: #endif
// FUSE-LABEL: mlvm_status_t module_dense_gated({{[^;]*$}}
// FUSE-NOT: MLVM_VECTOR_MATH
// FUSE: mlvm_matmul_epilogue_f32(
// FUSE-NOT: mlvm_gelu_tanh_f32
// FUSE: return MLVM_OK;
func.func @both(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "mlvm.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.gelu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @dense(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.gelu"(%1) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}
func.func @dense_gated(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.gelu"(%1) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.mul"(%2, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}
