// RUN: mlvm-opt %s -t c | filecheck %s

// Trailing axes normalise rows of a matrix (gamma and beta may be absent:
// NULL); other axes walk two iteration descriptors, the kept dims and the
// normalised dims (x offsets, then gamma / beta offsets).
// CHECK-DAG: static const mlvm_iter_t [[OUTER:module__s[0-9]+]] = {2, {2, 20}, {{[{][{]}}60, 1}, {0, 0}}};
// CHECK-DAG: static const mlvm_iter_t [[INNER:module__s[0-9]+]] = {1, {3}, {{[{][{]}}20}, {1}}};
// CHECK-LABEL: mlvm_status_t module_rows({{[^;]*$}}
// CHECK: mlvm_layer_norm_f32(64, 128, 0x1.0c6f7a0000000p-20f, in_x, in_g, in_b, out0);
// CHECK-LABEL: mlvm_status_t module_trailing({{[^;]*$}}
// CHECK: mlvm_layer_norm_f32(6, 20, 0x1.4f8b580000000p-17f, in_x, NULL, NULL, out0);
// CHECK-LABEL: mlvm_status_t module_channels({{[^;]*$}}
// CHECK: mlvm_layer_norm_strided_f32(&[[OUTER]], &[[INNER]], 0x1.4f8b580000000p-17f, in_x, in_g, in_b, out0);
func.func @rows(%x: tensor<64x128xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<64x128xf32> {
  %0 = "mlvm.layer_norm"(%x, %g, %b) <{axes = array<i64: -1>, eps = 1.0e-06 : f32}> : (tensor<64x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  func.return %0 : tensor<64x128xf32>
}
func.func @trailing(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "mlvm.layer_norm"(%x) <{axes = array<i64: 3, 2>}> : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  func.return %0 : tensor<2x3x4x5xf32>
}
func.func @channels(%x: tensor<2x3x4x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %0 = "mlvm.layer_norm"(%x, %g, %b) <{axes = array<i64: 1>, eps = 1.0e-05 : f32}> : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  func.return %0 : tensor<2x3x4x5xf32>
}
