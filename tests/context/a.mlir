// Module "a" of tests/context: exports that module "b" imports.
"mlvm.global"() <{sym_name = "total", type = tensor<4xf32>}> : () -> ()

// x * 2
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %y = "mlvm.mul"(%x, %two) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// total += x, returned: state of a's instance, seen through b.
func.func @accumulate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = "mlvm.global_load"() <{global = @total}> : () -> tensor<4xf32>
  %n = "mlvm.add"(%t, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%n) <{global = @total}> : (tensor<4xf32>) -> ()
  func.return %n : tensor<4xf32>
}

// x + 1, after a suspension.
func.func @slow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  "mlvm.yield"() : () -> ()
  %y = "mlvm.add"(%x, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
