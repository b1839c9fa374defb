// RUN: mlvm-opt %s -t c | filecheck %s

// A slice is a gather from the operand's pointer advanced to `start`, with
// the strides scaled by `stride` (negative ones walk backwards); whole rows
// merge into one contiguous run. An empty slice emits nothing.
// CHECK-DAG: static const mlvm_iter_t [[ROWS:module__s[0-9]+]] = {1, {39}, {{[{][{]}}1}, {1}}};
// CHECK-DAG: static const mlvm_iter_t [[STRIDED:module__s[0-9]+]] = {3, {2, 3, 2}, {{[{][{]}}-60, 10, 3}, {6, 2, 1}}};
// CHECK-LABEL: mlvm_status_t module_rows({{[^;]*$}}
// CHECK: mlvm_gather_b32(&[[ROWS]], in_x + 26, out0);
// CHECK-LABEL: mlvm_status_t module_strided({{[^;]*$}}
// CHECK: mlvm_gather_b32(&[[STRIDED]], in_x + 95, out0);
// CHECK-LABEL: mlvm_status_t module_empty({{[^;]*$}}
// CHECK-NOT: mlvm_gather_b32
// CHECK: return MLVM_OK;
func.func @rows(%x: tensor<7x13xf32>) -> tensor<3x13xf32> {
  %0 = "mlvm.slice"(%x) <{start = array<i64: 2, 0>}> : (tensor<7x13xf32>) -> tensor<3x13xf32>
  func.return %0 : tensor<3x13xf32>
}
func.func @strided(%x: tensor<4x6x5xi32>) -> tensor<2x3x2xi32> {
  %0 = "mlvm.slice"(%x) <{start = array<i64: 3, 1, 0>, stride = array<i64: -2, 2, 3>}> : (tensor<4x6x5xi32>) -> tensor<2x3x2xi32>
  func.return %0 : tensor<2x3x2xi32>
}
func.func @empty(%x: tensor<4x6xf32>) -> tensor<4x0xf32> {
  %0 = "mlvm.slice"(%x) <{start = array<i64: 0, 0>, stride = array<i64: 1, 1>}> : (tensor<4x6xf32>) -> tensor<4x0xf32>
  func.return %0 : tensor<4x0xf32>
}
