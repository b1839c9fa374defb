// RUN: mlvm-opt %s -t c | filecheck %s

// A convolution with Winograd-transformed weights calls the kernel of its
// tile with its workspace (conv2d_wino_workspace_bytes: the row passes, a
// channel's outputs, V and M for 128 tiles here): [16, O, C],
// mlvm_conv2d_wino_f32; [36, O, C], mlvm_conv2d_wino4_f32.
// CHECK-LABEL: mlvm_status_t module_conv({{[^;]*$}}
// CHECK: mlvm_conv2d_wino_f32(&module__s{{[0-9]+}}, in_x, in_w, in_b, out0, ((void *)(arena + {{[0-9]+}})), NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_conv4({{[^;]*$}}
// CHECK: mlvm_conv2d_wino4_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, ((void *)(arena + {{[0-9]+}})), NULL, NULL);
func.func @conv(%x: tensor<2x32x16x16xf32>, %w: tensor<16x32x32xf32>, %b: tensor<32xf32>) -> tensor<2x32x16x16xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<2x32x16x16xf32>, tensor<16x32x32xf32>, tensor<32xf32>) -> tensor<2x32x16x16xf32>
  func.return %0 : tensor<2x32x16x16xf32>
}
func.func @conv4(%x: tensor<1x16x30x30xf32>, %w: tensor<36x24x16xf32>) -> tensor<1x24x28x28xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{w_layout = "wino43"}> : (tensor<1x16x30x30xf32>, tensor<36x24x16xf32>) -> tensor<1x24x28x28xf32>
  func.return %0 : tensor<1x24x28x28xf32>
}
