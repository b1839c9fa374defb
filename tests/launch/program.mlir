// The program tests/launch launches on a VM: a native probe (which checks
// that no other launch runs at the same time), then x * 2 + total, where
// total is module state accumulating x.
"mlvm.global"() <{sym_name = "total", type = tensor<64xf32>}> : () -> ()

func.func @step(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %two = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %p = "mlvm.call_c"(%x) <{callee = "probe"}> : (tensor<64xf32>) -> tensor<64xf32>
  %t = "mlvm.global_load"() <{global = @total}> : () -> tensor<64xf32>
  %n = "mlvm.add"(%t, %x) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  "mlvm.global_store"(%n) <{global = @total}> : (tensor<64xf32>) -> ()
  %d = "mlvm.mul"(%p, %two) : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %y = "mlvm.add"(%d, %n) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %s = "mlvm.reduce"(%y) <{kind = "sum", axes = array<i64: 0>, keepdims = false}> : (tensor<64xf32>) -> tensor<f32>
  func.return %y, %s : tensor<64xf32>, tensor<f32>
}
