// RUN: mlvm-opt %s -t c | filecheck %s

// A convolution with IHWO weights calls the entry of its kind: given its
// workspace, mlvm_conv2d_ihwo_ws_f32 (the padded copy, the taps at
// offsets); a 1x1 stride-1 one, mlvm_conv2d_ihwo_pointwise_f32 (x read in
// place), so that a firmware links the one kernel each takes.
// CHECK-LABEL: mlvm_status_t module_conv({{[^;]*$}}
// CHECK: mlvm_conv2d_ihwo_ws_f32(&module__s{{[0-9]+}}, in_x, in_w, in_b, out0, ((void *)(arena + {{[0-9]+}})), NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_pointwise({{[^;]*$}}
// CHECK: mlvm_conv2d_ihwo_pointwise_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, NULL, NULL);
func.func @conv(%x: tensor<1x64x8x8xf32>, %w: tensor<64x3x3x64xf32>, %b: tensor<64xf32>) -> tensor<1x64x8x8xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}> : (tensor<1x64x8x8xf32>, tensor<64x3x3x64xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  func.return %0 : tensor<1x64x8x8xf32>
}
func.func @pointwise(%x: tensor<2x32x6x6xf32>, %w: tensor<32x1x1x64xf32>) -> tensor<2x64x6x6xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{w_layout = "ihwo"}> : (tensor<2x32x6x6xf32>, tensor<32x1x1x64xf32>) -> tensor<2x64x6x6xf32>
  func.return %0 : tensor<2x64x6x6xf32>
}
