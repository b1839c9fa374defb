// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// An activation alone after a matmul or conv2d (relu; Clip as max with a
// constant then min with one) is the runtime's mlvm_epilogue_clamp_f32 with
// its bounds (which the depthwise kernels apply in their registers); no
// epilogue function is generated, and no ctx array. Anything else keeps a
// generated function.
// CHECK-DAG: static const mlvm_clamp_t [[RELU:module__s[0-9]+]] = {0.0f, 0.0f, 1};
// CHECK-DAG: static const mlvm_clamp_t [[CLIP:module__s[0-9]+]] = {0.0f, 0x1.8000000000000p+2f, 0};
// CHECK-DAG: static const mlvm_clamp_t [[LOW:module__s[0-9]+]] = {-0x1.0000000000000p+0f, HUGE_VALF, 0};
// CHECK-LABEL: mlvm_status_t module_relu({{[^;]*$}}
// CHECK-NOT: ctx[
// CHECK: mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_clamp_f32, &[[RELU]]);
// CHECK-LABEL: mlvm_status_t module_clip({{[^;]*$}}
// CHECK-NOT: ctx[
// CHECK: mlvm_conv2d_direct_ws_f32({{.*}}, mlvm_epilogue_clamp_f32, &[[CLIP]]);
// CHECK-LABEL: mlvm_status_t module_max_only({{[^;]*$}}
// CHECK: mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_clamp_f32, &[[LOW]]);
// CHECK-LABEL: mlvm_status_t module_min_then_max({{[^;]*$}}
// CHECK: mlvm_matmul_epilogue_f32({{.*}}, module__s{{[0-9]+}}, ctx);
func.func @relu(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlvm.relu"(%0) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}
func.func @clip(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %lo = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %hi = "mlvm.constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = "mlvm.max"(%0, %lo) : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %2 = "mlvm.min"(%1, %hi) : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  func.return %2 : tensor<1x8x6x6xf32>
}
func.func @max_only(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %lo = "mlvm.constant"() <{value = dense<-1.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlvm.max"(%0, %lo) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  func.return %1 : tensor<4x16xf32>
}
func.func @min_then_max(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %lo = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %hi = "mlvm.constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlvm.min"(%0, %hi) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  %2 = "mlvm.max"(%1, %lo) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  func.return %2 : tensor<4x16xf32>
}
