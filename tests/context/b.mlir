// Module "b" of tests/context: imports a's exports (one by its qualified
// name) and a native function.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = "mlvm.call_c"(%x) <{callee = "scale"}> : (tensor<4xf32>) -> tensor<4xf32>
  %t = "mlvm.call_c"(%s) <{callee = "a.accumulate"}> : (tensor<4xf32>) -> tensor<4xf32>
  %u = "mlvm.call_c"(%t) <{callee = "slow"}> : (tensor<4xf32>) -> tensor<4xf32>
  %v = "mlvm.call_c"(%u) <{callee = "negate"}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return %v : tensor<4xf32>
}
