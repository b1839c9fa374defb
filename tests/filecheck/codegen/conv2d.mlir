// RUN: mlvm-opt %s -t c | filecheck %s

// The convolution's sizes go into a static descriptor: n, c, h, w, o, kh,
// kw, oh, ow, strides, top and left padding, dilations, groups. Without a
// bias the kernel gets NULL. A convolution that copies its input gets its
// workspace in the arena (conv2d_workspace_bytes: 2688 and 2880 bytes
// here; groups of fewer than 4 outputs copy all channels) and calls the
// entry of that path (on cores without vectors it links nothing else); a
// 1x1 one with stride 1 reads x in place and needs none.
// CHECK: #define MODULE_CONV_ARENA_BYTES 2688u
// CHECK: #define MODULE_DEPTHWISE_ARENA_BYTES 2880u
// CHECK: #define MODULE_POINTWISE_ARENA_BYTES 0u
// CHECK-DAG: static const mlvm_conv2d_t [[C:module__s[0-9]+]] = {2, 4, 9, 11, 6, 3, 2, 5, 4, 2, 3, 1, 0, 1, 1, 2, 0};
// CHECK-DAG: static const mlvm_conv2d_t [[D:module__s[0-9]+]] = {1, 6, 13, 7, 6, 3, 3, 9, 3, 1, 1, 0, 0, 2, 2, 6, 0};
// CHECK-DAG: static const mlvm_conv2d_t [[P:module__s[0-9]+]] = {1, 8, 3, 5, 4, 1, 1, 3, 5, 1, 1, 0, 0, 1, 1, 1, 0};
// CHECK-LABEL: mlvm_status_t module_conv({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_ws_f32(&[[C]], in_x, in_w, in_b, out0, ((void *)(arena + 0)), NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_depthwise({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_ws_f32(&[[D]], in_x, in_w, NULL, out0, ((void *)(arena + 0)), NULL, NULL);
// CHECK-LABEL: mlvm_status_t module_pointwise({{[^;]*$}}
// CHECK: mlvm_conv2d_pointwise_f32(&[[P]], in_x, in_w, NULL, out0, NULL, NULL);
func.func @conv(%x: tensor<2x4x9x11xf32>, %w: tensor<6x2x3x2xf32>, %b: tensor<6xf32>) -> tensor<2x6x5x4xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 3>, padding = array<i64: 1, 0, 2, 1>, dilations = array<i64: 1, 1>, groups = 2 : i64}> : (tensor<2x4x9x11xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x5x4xf32>
  func.return %0 : tensor<2x6x5x4xf32>
}
func.func @depthwise(%x: tensor<1x6x13x7xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x9x3xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{dilations = array<i64: 2, 2>, groups = 6 : i64}> : (tensor<1x6x13x7xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x9x3xf32>
  func.return %0 : tensor<1x6x9x3xf32>
}
func.func @pointwise(%x: tensor<1x8x3x5xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<1x4x3x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x8x3x5xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x3x5xf32>
  func.return %0 : tensor<1x4x3x5xf32>
}
