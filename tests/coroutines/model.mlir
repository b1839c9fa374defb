// Functions exercising every suspension point; used by the coroutine tests.

func.func @steps(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  "mlvm.yield"() : () -> ()
  %1 = "mlvm.tanh"(%0) : (tensor<8xf32>) -> tensor<8xf32>
  "mlvm.yield"() : () -> ()
  %2 = "mlvm.mul"(%1, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %2 : tensor<8xf32>
}

func.func @pipe(%s: tensor<f32>) -> tensor<4xf32> {
  %a = "mlvm.queue_pop"() <{queue = "in"}> : () -> tensor<4xf32>
  "mlvm.yield"() : () -> ()
  %b = "mlvm.queue_pop"() <{queue = "in"}> : () -> tensor<4xf32>
  %c = "mlvm.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = "mlvm.call_c"(%c, %s) <{callee = "scale"}> : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  "mlvm.queue_push"(%d) <{queue = "out"}> : (tensor<4xf32>) -> ()
  func.return %d : tensor<4xf32>
}

func.func @checked(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %i: tensor<3xi32>) -> tensor<2x3xf32> {
  "mlvm.check_eq"(%i, %i) : (tensor<3xi32>, tensor<3xi32>) -> ()
  "mlvm.check_close"(%x, %y) <{atol = 1.0e-03 : f32, rtol = 0.0 : f32}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  %0 = "mlvm.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
