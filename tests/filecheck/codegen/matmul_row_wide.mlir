// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// A module of single-row products only (no GEMM linked on cores without
// vectors) with one row of 16 outputs or more: every single row calls the
// wide entries (sixteen outputs per pass on such cores; a firmware links
// one kind), the narrow one too, and a Linear layer's bias goes through
// the entry that adds it in its own loop (no epilogue function linked).
// CHECK-LABEL: mlvm_status_t module_hidden({{[^;]*$}}
// CHECK: const mlvm_bias_t bias = {in2, 0.0f};
// CHECK-NEXT: mlvm_matmul_row_bias_f32(&{{.*}}, in0, in1, out, &bias);
// CHECK-LABEL: mlvm_status_t module_logits({{[^;]*$}}
// CHECK: const mlvm_bias_t bias = {in2, (-HUGE_VALF)};
// CHECK-NEXT: mlvm_matmul_row_bias_f32(&{{.*}}, in0, in1, out, &bias);
// CHECK-LABEL: mlvm_status_t module_plain({{[^;]*$}}
// CHECK: mlvm_matmul_row_f32(&{{.*}}, in_x, in_w, {{.*}}, NULL, NULL);
// CHECK-NOT: mlvm_matmul_row4
func.func @hidden(%x: tensor<1x32xf32>, %w: tensor<32x16xf32>, %b: tensor<16xf32>) -> tensor<1x16xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x32xf32>, tensor<32x16xf32>) -> tensor<1x16xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %2 = "mlvm.relu"(%1) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  func.return %2 : tensor<1x16xf32>
}
func.func @logits(%x: tensor<1x16xf32>, %w: tensor<16x10xf32>, %b: tensor<10xf32>) -> tensor<1x10xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x16xf32>, tensor<16x10xf32>) -> tensor<1x10xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %1 : tensor<1x10xf32>
}
func.func @plain(%x: tensor<1x16xf32>, %w: tensor<16x3xf32>) -> tensor<1x3xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x16xf32>, tensor<16x3xf32>) -> tensor<1x3xf32>
  func.return %0 : tensor<1x3xf32>
}
