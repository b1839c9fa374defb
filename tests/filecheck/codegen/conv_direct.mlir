// RUN: mlvm-opt %s -p 'mlvm-fuse,mlvm-plan-memory{workspaces=false}' -t c | filecheck %s

// Without workspaces, a convolution that is not a 1x1 stride-1 one
// (depthwise ones too) calls mlvm_conv2d_direct_f32 (on cores without
// vectors the in-place sums alone, so a firmware links no other
// convolution), with its epilogue when one is fused; where every group
// has a multiple of 4 output channels, mlvm_conv2d_direct4_f32 (the same
// without the one-channel pass, which a firmware then does not link), and
// where every group has one (depthwise), mlvm_conv2d_direct1_f32 (the
// one-channel pass alone); a
// pointwise one calls mlvm_conv2d_pointwise_f32 (the GEMM reading x in
// place alone, on such cores). This module's pointwise convolution links
// the GEMM, so an activation is passed as the runtime's clamp function
// (conv_direct_clamp.mlir: a module without).
// CHECK-LABEL: mlvm_status_t module_conv({{[^;]*$}}
// CHECK: mlvm_conv2d_direct4_f32(&module__s{{[0-9]+}}, in_x, in_w, in_b, out0, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_conv_relu({{[^;]*$}}
// CHECK: mlvm_conv2d_direct4_f32(&module__s{{[0-9]+}}, in0, in1, in2, out, mlvm_epilogue_clamp_f32, &module__s{{[0-9]+}});
// CHECK-LABEL: mlvm_status_t module_six({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_grouped({{[^;]*$}}
// CHECK: mlvm_conv2d_direct4_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_pointwise({{[^;]*$}}
// CHECK: mlvm_conv2d_pointwise_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_depthwise({{[^;]*$}}
// CHECK: mlvm_conv2d_direct1_f32(&module__s{{[0-9]+}}, in_x, in_w, NULL, out0, NULL, NULL);
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x3x3xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  func.return %0 : tensor<1x8x3x3xf32>
}
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %1 : tensor<1x8x8x8xf32>
}
func.func @six(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
func.func @grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{groups = 2 : i64}> : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %0 : tensor<1x8x6x6xf32>
}
func.func @pointwise(%x: tensor<1x8x3x5xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x3x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x8x3x5xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x3x5xf32>
  func.return %0 : tensor<1x4x3x5xf32>
}
func.func @depthwise(%x: tensor<1x6x13x7xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x11x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{groups = 6 : i64}> : (tensor<1x6x13x7xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x11x5xf32>
  func.return %0 : tensor<1x6x11x5xf32>
}
