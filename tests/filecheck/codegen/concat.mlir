// RUN: mlvm-opt %s -t c | filecheck %s

// Each operand is a block of rows copied at its column offset in the
// result; empty operands are skipped.
// CHECK-LABEL: mlvm_status_t module_cols({{[^;]*$}}
// CHECK: mlvm_copy2d_b32(2, 12, in_a, 12, out0, 16);
// CHECK-NEXT: mlvm_copy2d_b32(2, 4, in_b, 4, out0 + 12, 16);
// CHECK-NEXT: return MLVM_OK;
// CHECK-LABEL: mlvm_status_t module_first({{[^;]*$}}
// CHECK: mlvm_copy2d_b32(1, 6, in_a, 6, out0, 21);
// CHECK-NEXT: mlvm_copy2d_b32(1, 15, in_b, 15, out0 + 6, 21);
func.func @cols(%a: tensor<2x3x4xf32>, %b: tensor<2x1x4xf32>, %c: tensor<2x0x4xf32>) -> tensor<2x4x4xf32> {
  %0 = "mlvm.concat"(%a, %c, %b) <{axis = 1 : i64}> : (tensor<2x3x4xf32>, tensor<2x0x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  func.return %0 : tensor<2x4x4xf32>
}
func.func @first(%a: tensor<2x3xi32>, %b: tensor<5x3xi32>) -> tensor<7x3xi32> {
  %0 = "mlvm.concat"(%a, %b) <{axis = -2 : i64}> : (tensor<2x3xi32>, tensor<5x3xi32>) -> tensor<7x3xi32>
  func.return %0 : tensor<7x3xi32>
}
