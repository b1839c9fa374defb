// Module state for tests/state: a counter, an SGD-with-momentum update,
// an i32 global, a suspending function and the hazards the storage
// analysis must see (a store while a loaded value is still read, a load
// between a value's definition and its store).

"mlvm.global"() <{sym_name = "count", type = tensor<4xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "w", type = tensor<3x5xf32>, init = "w0"}> : () -> ()
"mlvm.global"() <{sym_name = "v", type = tensor<3x5xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "calls", type = tensor<i32>}> : () -> ()
"mlvm.global"() <{sym_name = "a", type = tensor<7xf32>, init = "a0"}> : () -> ()
"mlvm.global"() <{sym_name = "b", type = tensor<7xf32>}> : () -> ()

// count += x; returns the new count.
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "mlvm.global_load"() <{global = @count}> : () -> tensor<4xf32>
  %n = "mlvm.add"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%n) <{global = @count}> : (tensor<4xf32>) -> ()
  func.return %n : tensor<4xf32>
}

// v = 0.9 v + g; w = w - lr v; returns |w|^2 summed, and counts calls.
func.func @sgd(%g: tensor<3x5xf32>, %lr: tensor<f32>) -> tensor<f32> {
  %mu = "mlvm.constant"() <{value = dense<0.9> : tensor<f32>}> : () -> tensor<f32>
  %one = "mlvm.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<3x5xf32>
  %mv = "mlvm.mul"(%v, %mu) : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %nv = "mlvm.add"(%mv, %g) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  "mlvm.global_store"(%nv) <{global = @v}> : (tensor<3x5xf32>) -> ()
  %w = "mlvm.global_load"() <{global = @w}> : () -> tensor<3x5xf32>
  %s = "mlvm.mul"(%nv, %lr) : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  %nw = "mlvm.sub"(%w, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  "mlvm.global_store"(%nw) <{global = @w}> : (tensor<3x5xf32>) -> ()
  %sq = "mlvm.mul"(%nw, %nw) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %norm = "mlvm.reduce"(%sq) <{kind = "sum", axes = array<i64: 0, 1>, keepdims = false}> : (tensor<3x5xf32>) -> tensor<f32>
  %k = "mlvm.global_load"() <{global = @calls}> : () -> tensor<i32>
  %k1 = "mlvm.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  "mlvm.global_store"(%k1) <{global = @calls}> : (tensor<i32>) -> ()
  func.return %norm : tensor<f32>
}

// Swaps a and b, returning the old a: both loads are read after a store.
func.func @swap() -> tensor<7xf32> {
  %a = "mlvm.global_load"() <{global = @a}> : () -> tensor<7xf32>
  %b = "mlvm.global_load"() <{global = @b}> : () -> tensor<7xf32>
  "mlvm.global_store"(%b) <{global = @a}> : (tensor<7xf32>) -> ()
  "mlvm.global_store"(%a) <{global = @b}> : (tensor<7xf32>) -> ()
  func.return %a : tensor<7xf32>
}

// a = a * 2 + x, read back between the definition and the store:
// the value cannot be computed into @a's bytes.
func.func @reread(%x: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>) {
  %two = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %a = "mlvm.global_load"() <{global = @a}> : () -> tensor<7xf32>
  %d = "mlvm.mul"(%a, %two) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
  %n = "mlvm.add"(%d, %x) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %again = "mlvm.global_load"() <{global = @a}> : () -> tensor<7xf32>
  "mlvm.global_store"(%n) <{global = @a}> : (tensor<7xf32>) -> ()
  %r = "mlvm.reshape"(%n) : (tensor<7xf32>) -> tensor<7xf32>
  %later = "mlvm.global_load"() <{global = @a}> : () -> tensor<7xf32>
  %diff = "mlvm.sub"(%later, %again) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  func.return %diff, %r : tensor<7xf32>, tensor<7xf32>
}

// The counter again, with a suspension between the load and the store.
func.func @slow_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "mlvm.global_load"() <{global = @count}> : () -> tensor<4xf32>
  "mlvm.yield"() : () -> ()
  %n = "mlvm.add"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%n) <{global = @count}> : (tensor<4xf32>) -> ()
  func.return %n : tensor<4xf32>
}

// Reads only.
func.func @peek() -> (tensor<4xf32>, tensor<i32>) {
  %c = "mlvm.global_load"() <{global = @count}> : () -> tensor<4xf32>
  %k = "mlvm.global_load"() <{global = @calls}> : () -> tensor<i32>
  func.return %c, %k : tensor<4xf32>, tensor<i32>
}

// The counter, after a check that x is `want`: a failing step stores nothing.
func.func @checked_step(%x: tensor<4xf32>, %want: tensor<4xf32>) -> tensor<4xf32> {
  "mlvm.check_eq"(%x, %want) : (tensor<4xf32>, tensor<4xf32>) -> ()
  %c = "mlvm.global_load"() <{global = @count}> : () -> tensor<4xf32>
  %n = "mlvm.add"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%n) <{global = @count}> : (tensor<4xf32>) -> ()
  func.return %n : tensor<4xf32>
}

// The counter, with no result: what a training step that keeps everything
// in the state may look like.
func.func @add_only(%x: tensor<4xf32>) {
  %c = "mlvm.global_load"() <{global = @count}> : () -> tensor<4xf32>
  %n = "mlvm.add"(%c, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%n) <{global = @count}> : (tensor<4xf32>) -> ()
  func.return
}
