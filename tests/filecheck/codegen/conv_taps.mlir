// RUN: mlvm-opt %s -p 'mlvm-fuse,mlvm-plan-memory{workspaces=false}' -t c | filecheck %s
// RUN: mlvm-opt %s -p 'mlvm-fuse,mlvm-plan-memory' -t c | filecheck %s --check-prefix=WS

// A module of at most three in-place convolutions with blocks of four
// output channels (no GEMM, each ending in nothing or a clamp) sums each
// on cores without vectors (MLVM_SCALAR_CORE) in a loop nest of its own,
// its sizes constants: the bias, the taps over their rectangles of outputs,
// then the clamp's rules; other cores call the runtime's direct entry as
// before. With workspaces (WS) the convolutions take the GEMM: no loop nest.
// CHECK: #ifdef MLVM_SCALAR_CORE
// CHECK-NEXT: static void [[RELU:module__s[0-9]+]](const mlvm_conv2d_t *p, const float *x, const float *w, const float *bias,
// CHECK: for (o = 0; o < 8; o += 4) {
// CHECK: po[16 + j] = bias[o + 1];
// CHECK: y0 = di < 0 ? (1 - di) / 2 : 0;
// CHECK: MLVM_MADD(r[ox], v, q0), MLVM_MADD(r[16 + ox], v, q1);
// CHECK: po[j] = h < 0.0f ? 0.0f : h;
// CHECK: #endif
// CHECK: #ifdef MLVM_SCALAR_CORE
// CHECK-NEXT: static void [[CLIP:module__s[0-9]+]](
// CHECK: (void)p, (void)act; (void)bias;
// CHECK: po[36 + j] = 0.0f;
// CHECK: const float m = !(h <= [[LO:[^)]+]]) ? h : [[LO]];
// CHECK-NEXT: po[j] = !(m >= 0x1.8000000000000p+2f) ? m : 0x1.8000000000000p+2f;
// CHECK-LABEL: mlvm_status_t module_conv_relu({{[^;]*$}}
// CHECK: #ifdef MLVM_SCALAR_CORE
// CHECK-NEXT: [[RELU]](&module__s{{[0-9]+}}, in0, in1, in2, out, &module__s{{[0-9]+}});
// CHECK-NEXT: #else
// CHECK-NEXT: mlvm_conv2d_direct4_clamp_f32(&module__s{{[0-9]+}}, in0, in1, in2, out, &module__s{{[0-9]+}});
// CHECK-NEXT: #endif
// CHECK-LABEL: mlvm_status_t module_four_clip({{[^;]*$}}
// CHECK: [[CLIP]](&module__s{{[0-9]+}}, in0, in1, NULL, out, &module__s{{[0-9]+}});
// WS-NOT: MLVM_SCALAR_CORE
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x4xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  %1 = "mlvm.relu"(%0) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  func.return %1 : tensor<1x8x4x4xf32>
}
func.func @four_clip(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %lo = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %hi = "mlvm.constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = "mlvm.max"(%0, %lo) : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %2 = "mlvm.min"(%1, %hi) : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  func.return %2 : tensor<1x4x6x6xf32>
}
