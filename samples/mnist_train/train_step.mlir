// Training a 64-32-10 ReLU MLP on 8x8 digits, in generic form.
//
// @train_step is one SGD step on a batch of 32: the forward pass, the
// backward pass written out by hand, and the update with learning rate 0.5.
// It returns the updated parameters (in argument order) and the batch's mean
// cross-entropy loss. @predict gives the class of each of 128 rows; train.py
// evaluates a test split of any size in chunks of 128, padding the last one.
//
// Shapes: w1 64x32, b1 32, w2 32x10, b2 10; x 32x64 (features in [0, 1]),
// y 32x10 (one-hot labels).

func.func @train_step(%w1: tensor<64x32xf32>, %b1: tensor<32xf32>,
                      %w2: tensor<32x10xf32>, %b2: tensor<10xf32>,
                      %x: tensor<32x64xf32>, %y: tensor<32x10xf32>)
    -> (tensor<64x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>) {
  %zero = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %batch = "mlvm.constant"() <{value = dense<32.0> : tensor<f32>}> : () -> tensor<f32>
  %lr = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>

  // ---- forward -------------------------------------------------------
  // z1 = x @ w1 + b1; h1 = relu(z1)
  %xw1 = "mlvm.matmul"(%x, %w1) : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
  %z1 = "mlvm.add"(%xw1, %b1) : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %h1 = "mlvm.relu"(%z1) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  // logits = h1 @ w2 + b2
  %hw2 = "mlvm.matmul"(%h1, %w2) : (tensor<32x32xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  %logits = "mlvm.add"(%hw2, %b2) : (tensor<32x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  // Per-row loss, and d(row loss)/d(logits) = softmax(logits) - y.
  %rows, %g = "mlvm.softmax_xent"(%y, %logits) : (tensor<32x10xf32>, tensor<32x10xf32>) -> (tensor<32xf32>, tensor<32x10xf32>)
  %loss = "mlvm.reduce"(%rows) <{kind = "mean", axes = array<i64: 0>, keepdims = false}> : (tensor<32xf32>) -> tensor<f32>

  // ---- backward (of the mean loss) -----------------------------------
  %dlogits = "mlvm.div"(%g, %batch) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  // dw2 = h1^T @ dlogits; db2 = sum over the batch of dlogits
  %dw2 = "mlvm.matmul"(%h1, %dlogits) <{transpose_lhs = true}> : (tensor<32x32xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  %db2 = "mlvm.reduce"(%dlogits) <{kind = "sum", axes = array<i64: 0>, keepdims = false}> : (tensor<32x10xf32>) -> tensor<10xf32>
  // dh1 = dlogits @ w2^T; through the ReLU: dz1 = dh1 * (z1 > 0)
  %dh1 = "mlvm.matmul"(%dlogits, %w2) <{transpose_rhs = true}> : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x32xf32>
  %mask = "mlvm.cmpl"(%z1, %zero) : (tensor<32x32xf32>, tensor<f32>) -> tensor<32x32xf32>
  %dz1 = "mlvm.mul"(%dh1, %mask) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  // dw1 = x^T @ dz1; db1 = sum over the batch of dz1
  %dw1 = "mlvm.matmul"(%x, %dz1) <{transpose_lhs = true}> : (tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %db1 = "mlvm.reduce"(%dz1) <{kind = "sum", axes = array<i64: 0>, keepdims = false}> : (tensor<32x32xf32>) -> tensor<32xf32>

  // ---- update: p <- p - lr * dp ----------------------------------------
  %sw1 = "mlvm.mul"(%dw1, %lr) : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  %nw1 = "mlvm.sub"(%w1, %sw1) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %sb1 = "mlvm.mul"(%db1, %lr) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %nb1 = "mlvm.sub"(%b1, %sb1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %sw2 = "mlvm.mul"(%dw2, %lr) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  %nw2 = "mlvm.sub"(%w2, %sw2) : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  %sb2 = "mlvm.mul"(%db2, %lr) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
  %nb2 = "mlvm.sub"(%b2, %sb2) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>

  func.return %nw1, %nb1, %nw2, %nb2, %loss : tensor<64x32xf32>, tensor<32xf32>, tensor<32x10xf32>, tensor<10xf32>, tensor<f32>
}

// The predicted class of each of 128 rows: argmax of the logits.
func.func @predict(%w1: tensor<64x32xf32>, %b1: tensor<32xf32>,
                   %w2: tensor<32x10xf32>, %b2: tensor<10xf32>,
                   %x: tensor<128x64xf32>) -> tensor<128xi32> {
  %xw1 = "mlvm.matmul"(%x, %w1) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
  %z1 = "mlvm.add"(%xw1, %b1) : (tensor<128x32xf32>, tensor<32xf32>) -> tensor<128x32xf32>
  %h1 = "mlvm.relu"(%z1) : (tensor<128x32xf32>) -> tensor<128x32xf32>
  %hw2 = "mlvm.matmul"(%h1, %w2) : (tensor<128x32xf32>, tensor<32x10xf32>) -> tensor<128x10xf32>
  %logits = "mlvm.add"(%hw2, %b2) : (tensor<128x10xf32>, tensor<10xf32>) -> tensor<128x10xf32>
  %class = "mlvm.argmax"(%logits) <{axis = 1 : i64}> : (tensor<128x10xf32>) -> tensor<128xi32>
  func.return %class : tensor<128xi32>
}

// ---- the same model with its parameters inside the module --------------
//
// The weights and the optimizer's velocities are module state: @sgd_step
// takes only a batch and the hyper-parameters and returns the loss, so no
// parameter crosses the Python boundary during training. SGD with momentum
// (PyTorch's form): v <- mu v + dp; p <- p - lr v. With mu = 0 it is
// @train_step's update, bit for bit. The weights start from the parameters
// "w1", "b1", "w2", "b2" of the archive given at compile time; the
// velocities from zeros.

"mlvm.global"() <{sym_name = "w1", type = tensor<64x32xf32>, init = "w1"}> : () -> ()
"mlvm.global"() <{sym_name = "b1", type = tensor<32xf32>, init = "b1"}> : () -> ()
"mlvm.global"() <{sym_name = "w2", type = tensor<32x10xf32>, init = "w2"}> : () -> ()
"mlvm.global"() <{sym_name = "b2", type = tensor<10xf32>, init = "b2"}> : () -> ()
"mlvm.global"() <{sym_name = "v_w1", type = tensor<64x32xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "v_b1", type = tensor<32xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "v_w2", type = tensor<32x10xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "v_b2", type = tensor<10xf32>}> : () -> ()

func.func @sgd_step(%x: tensor<32x64xf32>, %y: tensor<32x10xf32>,
                    %lr: tensor<f32>, %mu: tensor<f32>) -> tensor<f32> {
  %zero = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %batch = "mlvm.constant"() <{value = dense<32.0> : tensor<f32>}> : () -> tensor<f32>
  %w1 = "mlvm.global_load"() <{global = @w1}> : () -> tensor<64x32xf32>
  %b1 = "mlvm.global_load"() <{global = @b1}> : () -> tensor<32xf32>
  %w2 = "mlvm.global_load"() <{global = @w2}> : () -> tensor<32x10xf32>
  %b2 = "mlvm.global_load"() <{global = @b2}> : () -> tensor<10xf32>

  // forward and backward, as in @train_step
  %xw1 = "mlvm.matmul"(%x, %w1) : (tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<32x32xf32>
  %z1 = "mlvm.add"(%xw1, %b1) : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
  %h1 = "mlvm.relu"(%z1) : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %hw2 = "mlvm.matmul"(%h1, %w2) : (tensor<32x32xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  %logits = "mlvm.add"(%hw2, %b2) : (tensor<32x10xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  %rows, %g = "mlvm.softmax_xent"(%y, %logits) : (tensor<32x10xf32>, tensor<32x10xf32>) -> (tensor<32xf32>, tensor<32x10xf32>)
  %loss = "mlvm.reduce"(%rows) <{kind = "mean", axes = array<i64: 0>, keepdims = false}> : (tensor<32xf32>) -> tensor<f32>
  %dlogits = "mlvm.div"(%g, %batch) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  %dw2 = "mlvm.matmul"(%h1, %dlogits) <{transpose_lhs = true}> : (tensor<32x32xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  %db2 = "mlvm.reduce"(%dlogits) <{kind = "sum", axes = array<i64: 0>, keepdims = false}> : (tensor<32x10xf32>) -> tensor<10xf32>
  %dh1 = "mlvm.matmul"(%dlogits, %w2) <{transpose_rhs = true}> : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x32xf32>
  %mask = "mlvm.cmpl"(%z1, %zero) : (tensor<32x32xf32>, tensor<f32>) -> tensor<32x32xf32>
  %dz1 = "mlvm.mul"(%dh1, %mask) : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %dw1 = "mlvm.matmul"(%x, %dz1) <{transpose_lhs = true}> : (tensor<32x64xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %db1 = "mlvm.reduce"(%dz1) <{kind = "sum", axes = array<i64: 0>, keepdims = false}> : (tensor<32x32xf32>) -> tensor<32xf32>

  // v <- mu v + dp; p <- p - lr v, each into the global's own bytes
  %vw1 = "mlvm.global_load"() <{global = @v_w1}> : () -> tensor<64x32xf32>
  %mvw1 = "mlvm.mul"(%vw1, %mu) : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  %nvw1 = "mlvm.add"(%mvw1, %dw1) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  "mlvm.global_store"(%nvw1) <{global = @v_w1}> : (tensor<64x32xf32>) -> ()
  %sw1 = "mlvm.mul"(%nvw1, %lr) : (tensor<64x32xf32>, tensor<f32>) -> tensor<64x32xf32>
  %nw1 = "mlvm.sub"(%w1, %sw1) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  "mlvm.global_store"(%nw1) <{global = @w1}> : (tensor<64x32xf32>) -> ()

  %vb1 = "mlvm.global_load"() <{global = @v_b1}> : () -> tensor<32xf32>
  %mvb1 = "mlvm.mul"(%vb1, %mu) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %nvb1 = "mlvm.add"(%mvb1, %db1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  "mlvm.global_store"(%nvb1) <{global = @v_b1}> : (tensor<32xf32>) -> ()
  %sb1 = "mlvm.mul"(%nvb1, %lr) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %nb1 = "mlvm.sub"(%b1, %sb1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  "mlvm.global_store"(%nb1) <{global = @b1}> : (tensor<32xf32>) -> ()

  %vw2 = "mlvm.global_load"() <{global = @v_w2}> : () -> tensor<32x10xf32>
  %mvw2 = "mlvm.mul"(%vw2, %mu) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  %nvw2 = "mlvm.add"(%mvw2, %dw2) : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  "mlvm.global_store"(%nvw2) <{global = @v_w2}> : (tensor<32x10xf32>) -> ()
  %sw2 = "mlvm.mul"(%nvw2, %lr) : (tensor<32x10xf32>, tensor<f32>) -> tensor<32x10xf32>
  %nw2 = "mlvm.sub"(%w2, %sw2) : (tensor<32x10xf32>, tensor<32x10xf32>) -> tensor<32x10xf32>
  "mlvm.global_store"(%nw2) <{global = @w2}> : (tensor<32x10xf32>) -> ()

  %vb2 = "mlvm.global_load"() <{global = @v_b2}> : () -> tensor<10xf32>
  %mvb2 = "mlvm.mul"(%vb2, %mu) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
  %nvb2 = "mlvm.add"(%mvb2, %db2) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  "mlvm.global_store"(%nvb2) <{global = @v_b2}> : (tensor<10xf32>) -> ()
  %sb2 = "mlvm.mul"(%nvb2, %lr) : (tensor<10xf32>, tensor<f32>) -> tensor<10xf32>
  %nb2 = "mlvm.sub"(%b2, %sb2) : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>
  "mlvm.global_store"(%nb2) <{global = @b2}> : (tensor<10xf32>) -> ()

  func.return %loss : tensor<f32>
}

// @predict on the module's own weights.
func.func @classify(%x: tensor<128x64xf32>) -> tensor<128xi32> {
  %w1 = "mlvm.global_load"() <{global = @w1}> : () -> tensor<64x32xf32>
  %b1 = "mlvm.global_load"() <{global = @b1}> : () -> tensor<32xf32>
  %w2 = "mlvm.global_load"() <{global = @w2}> : () -> tensor<32x10xf32>
  %b2 = "mlvm.global_load"() <{global = @b2}> : () -> tensor<10xf32>
  %xw1 = "mlvm.matmul"(%x, %w1) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
  %z1 = "mlvm.add"(%xw1, %b1) : (tensor<128x32xf32>, tensor<32xf32>) -> tensor<128x32xf32>
  %h1 = "mlvm.relu"(%z1) : (tensor<128x32xf32>) -> tensor<128x32xf32>
  %hw2 = "mlvm.matmul"(%h1, %w2) : (tensor<128x32xf32>, tensor<32x10xf32>) -> tensor<128x10xf32>
  %logits = "mlvm.add"(%hw2, %b2) : (tensor<128x10xf32>, tensor<10xf32>) -> tensor<128x10xf32>
  %class = "mlvm.argmax"(%logits) <{axis = 1 : i64}> : (tensor<128x10xf32>) -> tensor<128xi32>
  func.return %class : tensor<128xi32>
}
