// RUN: mlvm-opt %s -t c | filecheck %s
// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s --check-prefix=FUSE

// A product of one row (m = 1, no batch) calls the single-row entry, which
// on cores without vectors does not link the blocked GEMM; more rows, or a
// batch of rows, keep the general one. This module's products of several
// rows link the GEMM (and with it the wide single-row passes): its single
// rows all call the wide entries, however narrow (matmul_row_narrow.mlir
// and matmul_row_wide.mlir: modules without a GEMM).
// CHECK-LABEL: mlvm_status_t module_row({{[^;]*$}}
// CHECK: mlvm_matmul_row_f32(&{{.*}}, in_x, in_w, {{.*}}, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_rows({{[^;]*$}}
// CHECK: mlvm_matmul_f32(
// CHECK-LABEL: mlvm_status_t module_batch_of_rows({{[^;]*$}}
// CHECK: mlvm_matmul_f32(
// CHECK-LABEL: mlvm_status_t module_wide_row({{[^;]*$}}
// CHECK: mlvm_matmul_row_f32(&{{.*}}, in_x, in_w, {{.*}}, NULL, NULL);

// Fused with its bias and ReLU (a Linear layer), the single row hands the
// runtime's bias epilogue to the same entry: this module's products of
// several rows link the GEMM, and with it that function (the entry that
// adds the bias in its own loop is for modules without a GEMM:
// matmul_row_narrow.mlir).
// FUSE-LABEL: mlvm_status_t module_row({{[^;]*$}}
// FUSE: const mlvm_bias_t bias = {in2, 0.0f};
// FUSE-NEXT: mlvm_matmul_row_f32(&{{.*}}, in0, in1, out, mlvm_epilogue_bias_f32, &bias);
// FUSE-LABEL: mlvm_status_t module_rows({{[^;]*$}}
// FUSE: mlvm_matmul_epilogue_f32(
func.func @row(%x: tensor<1x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<1x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<1x8xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %2 = "mlvm.relu"(%1) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %2 : tensor<1x8xf32>
}
func.func @rows(%x: tensor<3x16xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) -> tensor<3x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<3x8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  func.return %1 : tensor<3x8xf32>
}
func.func @batch_of_rows(%x: tensor<2x1x16xf32>, %w: tensor<2x16x8xf32>) -> tensor<2x1x8xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<2x1x16xf32>, tensor<2x16x8xf32>) -> tensor<2x1x8xf32>
  func.return %0 : tensor<2x1x8xf32>
}
func.func @wide_row(%x: tensor<1x8xf32>, %w: tensor<8x16xf32>) -> tensor<1x16xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x8xf32>, tensor<8x16xf32>) -> tensor<1x16xf32>
  func.return %0 : tensor<1x16xf32>
}
