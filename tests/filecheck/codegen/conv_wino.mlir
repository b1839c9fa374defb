// RUN: mlvm-opt %s -t c | filecheck %s

// A convolution with Winograd-transformed weights ([16, O, C]) calls
// mlvm_conv2d_wino_f32 with its workspace (conv2d_wino_workspace_bytes:
// the row passes, a channel's outputs, V and M for 128 tiles here).
// CHECK-LABEL: mlvm_status_t module_conv({{[^;]*$}}
// CHECK: mlvm_conv2d_wino_f32(&module__s{{[0-9]+}}, in_x, in_w, in_b, out0, ((void *)(arena + {{[0-9]+}})), NULL, NULL);
func.func @conv(%x: tensor<2x32x16x16xf32>, %w: tensor<16x32x32xf32>, %b: tensor<32xf32>) -> tensor<2x32x16x16xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<2x32x16x16xf32>, tensor<16x32x32xf32>, tensor<32xf32>) -> tensor<2x32x16x16xf32>
  func.return %0 : tensor<2x32x16x16xf32>
}
