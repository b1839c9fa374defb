// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// A fused conv2d's epilogue runs over whole output planes: where every
// operand it reads is indexed like the output (a residual) or not at all,
// the planes are one flat run (no scalar remainder per row); a per-channel
// operand keeps the rows.
// CHECK: static void [[R:module__s[0-9]+]](const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
// CHECK: if (ldo == cols && rows > 1) {
// CHECK-NEXT: cols *= rows;
// CHECK-NEXT: rows = 1;
// CHECK: const float a2 = in2[(i0 + i) * 36 + (j0 + j) * 1];
// CHECK: static void [[C:module__s[0-9]+]](const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
// CHECK-NOT: ldo == cols
// CHECK: const float a2 = in2[(i0 + i) * 1 + (j0 + j) * 0];
// CHECK-LABEL: mlvm_status_t module_residual({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_ws_f32({{.*}}, [[R]], ctx);
// CHECK-LABEL: mlvm_status_t module_per_channel({{[^;]*$}}
// CHECK: mlvm_conv2d_direct_ws_f32({{.*}}, [[C]], ctx);
func.func @residual(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %r: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = "mlvm.add"(%0, %r) : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %2 = "mlvm.relu"(%1) : (tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %2 : tensor<1x8x6x6xf32>
}
func.func @per_channel(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>, %c: tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %1 = "mlvm.add"(%0, %c) : (tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  func.return %1 : tensor<1x8x6x6xf32>
}
