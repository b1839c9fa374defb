// Imports a's @scale with another shape: refused when instantiated.
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %s = "mlvm.call_c"(%x) <{callee = "scale"}> : (tensor<5xf32>) -> tensor<5xf32>
  func.return %s : tensor<5xf32>
}
