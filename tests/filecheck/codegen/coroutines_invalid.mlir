// RUN: not mlvm-opt %s --split-input-file -t c 2>&1 | filecheck %s

// One native function, one signature.
// CHECK: coroutines_invalid.mlir:7:3: error: mlvm.call_c: native function 'f' is called with two different signatures
func.func @g(%x: tensor<4xf32>) -> tensor<2xf32> {
  %a = "mlvm.call_c"(%x) <{callee = "f"}> : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.call_c"(%x) <{callee = "f"}> : (tensor<4xf32>) -> tensor<2xf32>
  func.return %b : tensor<2xf32>
}
