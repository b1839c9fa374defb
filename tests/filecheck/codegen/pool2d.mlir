// RUN: mlvm-opt %s -t c | filecheck %s

// Pooling descriptor: planes (n * c), h, w, window, output size, strides,
// top and left padding; strides default to 1 and padding to 0.
// CHECK-DAG: static const mlvm_pool2d_t [[MAX:module__s[0-9]+]] = {6, 9, 7, 3, 2, 5, 3, 2, 3, 2, 1};
// CHECK-DAG: static const mlvm_pool2d_t [[AVG:module__s[0-9]+]] = {4, 8, 8, 2, 2, 7, 7, 1, 1, 0, 0};
// CHECK-LABEL: mlvm_status_t module_max({{[^;]*$}}
// CHECK: mlvm_maxpool2d_f32(&[[MAX]], in_x, out0);
// CHECK-LABEL: mlvm_status_t module_avg({{[^;]*$}}
// CHECK: mlvm_avgpool2d_f32(&[[AVG]], in_x, out0);
func.func @max(%x: tensor<2x3x9x7xf32>) -> tensor<2x3x5x3xf32> {
  %0 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 3, 2>, strides = array<i64: 2, 3>, padding = array<i64: 2, 1, 1, 1>}> : (tensor<2x3x9x7xf32>) -> tensor<2x3x5x3xf32>
  func.return %0 : tensor<2x3x5x3xf32>
}
func.func @avg(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32> {
  %0 = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 2, 2>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32>
  func.return %0 : tensor<1x4x7x7xf32>
}

// An 8-bit max pool: the byte kernel, signed or not.
// CHECK-LABEL: mlvm_status_t module_max_u8({{[^;]*$}}
// CHECK: mlvm_maxpool2d_8(&{{module__s[0-9]+}}, 0, in_x, out0);
// CHECK-LABEL: mlvm_status_t module_max_i8({{[^;]*$}}
// CHECK: mlvm_maxpool2d_8(&{{module__s[0-9]+}}, 1, in_x, out0);
func.func @max_u8(%x: tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xui8> {
  %0 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xui8>
  func.return %0 : tensor<1x4x4x4xui8>
}
func.func @max_i8(%x: tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8> {
  %0 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8>
  func.return %0 : tensor<1x4x4x4xi8>
}
