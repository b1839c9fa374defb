// RUN: mlvm-opt %s -t c | filecheck %s

// softmax over the middle dim of [outer, n, inner]; axis defaults to -1;
// log_softmax alike.
// CHECK-LABEL: mlvm_status_t module_last({{[^;]*$}}
// CHECK: mlvm_softmax_f32(12, 5, 1, in_x, out0);
// CHECK-LABEL: mlvm_status_t module_middle({{[^;]*$}}
// CHECK: mlvm_softmax_f32(3, 4, 5, in_x, out0);
// CHECK-LABEL: mlvm_status_t module_log_last({{[^;]*$}}
// CHECK: mlvm_log_softmax_f32(12, 5, 1, in_x, out0);
// CHECK-LABEL: mlvm_status_t module_log_first({{[^;]*$}}
// CHECK: mlvm_log_softmax_f32(1, 3, 20, in_x, out0);
func.func @last(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = "mlvm.softmax"(%x) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}
func.func @middle(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = "mlvm.softmax"(%x) <{axis = 1 : i64}> : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}
func.func @log_last(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = "mlvm.log_softmax"(%x) : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}
func.func @log_first(%x: tensor<3x4x5xf32>) -> tensor<3x4x5xf32> {
  %0 = "mlvm.log_softmax"(%x) <{axis = 0 : i64}> : (tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}
