// RUN: mlvm-opt %s -p 'mlvm-fuse,mlvm-plan-memory{workspaces=false}' -t c | filecheck %s
// RUN: mlvm-opt %s -p 'mlvm-fuse,mlvm-plan-memory' -t c | filecheck %s --check-prefix=WS

// A module whose convolutions all sum in place without a workspace (and
// whose products are single rows: no GEMM on cores without vectors) calls
// the _clamp_f32 form of the direct entry for a convolution whose epilogue
// is an activation alone (relu, Clip): the clamp in the entry's own loop,
// so that such a firmware links no epilogue function. Any other epilogue
// stays a function; the module's single row (@dense, narrower than 16)
// takes the narrow entry with the bias in its own loop. With workspaces
// (WS, planned on the fused ops) the convolutions go through the GEMM,
// which links the runtime's epilogue functions and the wide single row
// anyway: they are passed, and the row takes the wide entry.
// CHECK-LABEL: mlvm_status_t module_conv_relu({{[^;]*$}}
// CHECK: mlvm_conv2d_direct4_clamp_f32(&module__s{{[0-9]+}}, in0, in1, in2, out, &module__s{{[0-9]+}});
// CHECK-LABEL: mlvm_status_t module_six_clip({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_clamp_f32(&module__s{{[0-9]+}}, in0, in1, NULL, out, &module__s{{[0-9]+}});
// CHECK-LABEL: mlvm_status_t module_depthwise_relu({{[^;]*$}}
// CHECK: mlvm_conv2d_direct1_clamp_f32(&module__s{{[0-9]+}}, in0, in1, NULL, out, &module__s{{[0-9]+}});
// CHECK-LABEL: mlvm_status_t module_conv_other({{[^;]*$}}
// CHECK: mlvm_conv2d_direct4_f32(&module__s{{[0-9]+}}, in0, in1, in2, out, module__s{{[0-9]+}}, ctx);
// CHECK-LABEL: mlvm_status_t module_dense({{[^;]*$}}
// CHECK: mlvm_matmul_row4_bias_f32(&{{.*}}, in0, in1, out, &bias);
// WS-LABEL: mlvm_status_t module_conv_relu({{[^;]*$}}
// WS: mlvm_conv2d_direct_ws_f32({{.*}}, mlvm_epilogue_clamp_f32, &module__s{{[0-9]+}});
// WS-LABEL: mlvm_status_t module_dense({{[^;]*$}}
// WS: mlvm_matmul_row_f32(&{{.*}}, in0, in1, out, mlvm_epilogue_bias_f32, &bias);
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %1 : tensor<1x8x8x8xf32>
}
func.func @six_clip(%x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %lo = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %hi = "mlvm.constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  %1 = "mlvm.max"(%0, %lo) : (tensor<1x6x6x6xf32>, tensor<f32>) -> tensor<1x6x6x6xf32>
  %2 = "mlvm.min"(%1, %hi) : (tensor<1x6x6x6xf32>, tensor<f32>) -> tensor<1x6x6x6xf32>
  func.return %2 : tensor<1x6x6x6xf32>
}
func.func @depthwise_relu(%x: tensor<1x6x13x7xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x11x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{groups = 6 : i64}> : (tensor<1x6x13x7xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x11x5xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x6x11x5xf32>) -> tensor<1x6x11x5xf32>
  func.return %1 : tensor<1x6x11x5xf32>
}
func.func @conv_other(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x3x3xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x3x3xf32>
  %1 = "mlvm.tanh"(%0) : (tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32>
  func.return %1 : tensor<1x8x3x3xf32>
}
func.func @dense(%x: tensor<1x72xf32>, %w: tensor<72x10xf32>, %b: tensor<10xf32>) -> tensor<1x10xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<1x72xf32>, tensor<72x10xf32>) -> tensor<1x10xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  func.return %1 : tensor<1x10xf32>
}
