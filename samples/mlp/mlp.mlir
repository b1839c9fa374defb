// A 784-256-256-10 ReLU MLP on one input row, in generic form.
//
// The weights come from the parameter archive given at compile time
// (`gen_params.py` writes mlp.npz): w is (fan_in, fan_out), so each layer
// is `x @ w + b`, and the rank-1 bias broadcasts over the row.
//
//   mlvm-aot build samples/mlp/mlp.mlir -o mlp.so --params mlp.npz

func.func @main(%x: tensor<1x784xf32>) -> tensor<1x10xf32> {
  %w1 = "mlvm.param"() <{name = "w1"}> : () -> tensor<784x256xf32>
  %b1 = "mlvm.param"() <{name = "b1"}> : () -> tensor<256xf32>
  %w2 = "mlvm.param"() <{name = "w2"}> : () -> tensor<256x256xf32>
  %b2 = "mlvm.param"() <{name = "b2"}> : () -> tensor<256xf32>
  %w3 = "mlvm.param"() <{name = "w3"}> : () -> tensor<256x10xf32>
  %b3 = "mlvm.param"() <{name = "b3"}> : () -> tensor<10xf32>

  // Layer 1: relu(x @ w1 + b1)
  %z1 = "mlvm.matmul"(%x, %w1) : (tensor<1x784xf32>, tensor<784x256xf32>) -> tensor<1x256xf32>
  %y1 = "mlvm.add"(%z1, %b1) : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %h1 = "mlvm.relu"(%y1) : (tensor<1x256xf32>) -> tensor<1x256xf32>

  // Layer 2: relu(h1 @ w2 + b2)
  %z2 = "mlvm.matmul"(%h1, %w2) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %y2 = "mlvm.add"(%z2, %b2) : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %h2 = "mlvm.relu"(%y2) : (tensor<1x256xf32>) -> tensor<1x256xf32>

  // Output layer: logits = h2 @ w3 + b3
  %z3 = "mlvm.matmul"(%h2, %w3) : (tensor<1x256xf32>, tensor<256x10xf32>) -> tensor<1x10xf32>
  %logits = "mlvm.add"(%z3, %b3) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>

  func.return %logits : tensor<1x10xf32>
}
