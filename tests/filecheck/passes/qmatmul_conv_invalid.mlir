// RUN: not mlvm-opt %s -p mlvm-qmatmul-conv 2>&1 | filecheck %s

// A malformed qmatmul (a rank-3 rhs) is refused by its verifier before the
// pass runs: one line naming the file, line and op, no traceback.
// CHECK: qmatmul_conv_invalid.mlir:8:3: error: mlvm.qmatmul: lhs tensor<2x5xui8> must have rank >= 1 and rhs tensor<1x5x4xi8> rank 2
// CHECK-NOT: Traceback
func.func @f(%a: tensor<2x5xui8>, %b: tensor<1x5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>) -> tensor<2x4xi32> {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<2x5xui8>, tensor<1x5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<2x4xi32>
  func.return %0 : tensor<2x4xi32>
}
