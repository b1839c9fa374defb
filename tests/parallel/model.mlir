// The program tests/parallel/harness.c runs on 4 ranks (threads): the
// collectives whose buffers the ranks read from each other.
func.func @step(%x: tensor<1031xf32>, %k: tensor<3xi32>) -> (tensor<1031xf32>, tensor<12xi32>, tensor<3xi32>, tensor<i32>) {
  %s = "mlvm.all_reduce"(%x) <{kind = "sum"}> : (tensor<1031xf32>) -> tensor<1031xf32>
  %g = "mlvm.all_gather"(%k) <{axis = 0 : i64}> : (tensor<3xi32>) -> tensor<12xi32>
  %b = "mlvm.broadcast"(%k) <{root = 3 : i64}> : (tensor<3xi32>) -> tensor<3xi32>
  "mlvm.barrier"() : () -> ()
  %r = "mlvm.rank"() : () -> tensor<i32>
  func.return %s, %g, %b, %r : tensor<1031xf32>, tensor<12xi32>, tensor<3xi32>, tensor<i32>
}
