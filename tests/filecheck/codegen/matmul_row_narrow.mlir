// RUN: mlvm-opt %s -t c | filecheck %s
// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s --check-prefix=FUSE

// A module of single-row products only (no GEMM linked on cores without
// vectors), all narrower than 16 (a classifier's last layer), calls the
// narrow entries (mlvm_matmul_row4_*: blocks of four outputs on such
// cores, and no sixteen-wide code linked), and a Linear layer's bias
// through the entry that adds it in its own loop (no epilogue function
// linked); an activation alone stays the runtime's clamp function.
// CHECK-LABEL: mlvm_status_t module_logits({{[^;]*$}}
// CHECK: mlvm_matmul_row4_f32(&{{.*}}, in_x, in_w, {{.*}}, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_hidden({{[^;]*$}}
// CHECK: mlvm_matmul_row4_f32(&{{.*}}, in_x, in_w, {{.*}}, NULL, NULL);
// FUSE-LABEL: mlvm_status_t module_logits({{[^;]*$}}
// FUSE: const mlvm_bias_t bias = {in2, (-HUGE_VALF)};
// FUSE-NEXT: mlvm_matmul_row4_bias_f32(&{{.*}}, in0, in1, out, &bias);
// FUSE-LABEL: mlvm_status_t module_hidden({{[^;]*$}}
// FUSE: mlvm_matmul_row4_f32(&{{.*}}, in0, in1, out, mlvm_epilogue_clamp_f32, &{{.*}});
func.func @logits(%x: tensor<1x784xf32>, %w: tensor<784x10xf32>, %b: tensor<10xf32>) -> tensor<1x10xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x784xf32>, tensor<784x10xf32>) -> tensor<1x10xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %1 : tensor<1x10xf32>
}
func.func @hidden(%x: tensor<1x32xf32>, %w: tensor<32x15xf32>) -> tensor<1x15xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x32xf32>, tensor<32x15xf32>) -> tensor<1x15xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x15xf32>) -> tensor<1x15xf32>
  func.return %1 : tensor<1x15xf32>
}
