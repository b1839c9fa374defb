// RUN: mlvm-opt %s --split-input-file -p mlvm-inplace | filecheck %s
// RUN: mlvm-opt %s --split-input-file -p mlvm-inplace,mlvm-plan-memory | filecheck %s --check-prefix=PLAN

// A chain of elementwise ops runs in one buffer: each result takes over
// the operand that dies at it. The first op cannot: its operand is an input.
// CHECK-LABEL: func.func @chain
// CHECK: "mlvm.exp"(%x) : (tensor<16xf32>)
// CHECK: "mlvm.neg"(%0) {mlvm.inplace = 0 : i64}
// CHECK: "mlvm.exp"(%1) {mlvm.inplace = 0 : i64}
// PLAN-LABEL: func.func @chain
// PLAN-SAME: mlvm.arena_bytes = 0 : i64
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "mlvm.neg"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "mlvm.exp"(%1) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %2 : tensor<16xf32>
}

// -----
// Not in place: %0 is read again later; a broadcast operand (%b) is
// smaller than the result; constants are never written. The second add
// may take %1, the operand with the result's type that dies there.
// CHECK-LABEL: func.func @must_not
// CHECK: %1 = "mlvm.add"(%0, %c) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %2 = "mlvm.add"(%1, %0) {mlvm.inplace = 0 : i64}
// CHECK: %3 = "mlvm.mul"(%b, %2) {mlvm.inplace = 1 : i64}
func.func @must_not(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %c = "mlvm.constant"() <{value = dense<2.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %0 = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.add"(%0, %c) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.add"(%1, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.mul"(%b, %2) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----
// A value the function returns is never overwritten, even when its last
// computed reader comes first; nor is a value whose alias is read later.
// CHECK-LABEL: func.func @returned
// CHECK: %1 = "mlvm.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: %3 = "mlvm.exp"(%2) : (tensor<4xf32>) -> tensor<4xf32>
func.func @returned(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) {
  %0 = "mlvm.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlvm.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "mlvm.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "mlvm.reshape"(%2) : (tensor<4xf32>) -> tensor<2x2xf32>
  %3 = "mlvm.exp"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %r : tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>
}

// -----
// Ops whose kernels read after writing (matmul, reductions, softmax_xent)
// and type-changing ops are not candidates.
// CHECK-LABEL: func.func @not_elementwise
// CHECK-NOT: mlvm.inplace
// CHECK: func.return
func.func @not_elementwise(%x: tensor<4x4xf32>) -> tensor<4x4xi32> {
  %0 = "mlvm.exp"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "mlvm.matmul"(%0, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %l, %g = "mlvm.softmax_xent"(%1, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>)
  %2 = "mlvm.cast"(%g) : (tensor<4x4xf32>) -> tensor<4x4xi32>
  func.return %2 : tensor<4x4xi32>
}

// -----
// A broadcast operand that dies at the op is not taken over, even when it
// is the function's own buffer: the 4x1 value cannot hold the 4x8 result.
// The 4x8 operand that dies there may be.
// CHECK-LABEL: func.func @broadcast_dies
// CHECK: %0 = "mlvm.exp"(%b) : (tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK: %1 = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %2 = "mlvm.add"(%0, %1) {mlvm.inplace = 1 : i64}
// CHECK: %3 = "mlvm.mul"(%0, %x) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @broadcast_dies(%x: tensor<4x8xf32>, %b: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "mlvm.exp"(%b) : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %1 = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.add"(%0, %1) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.mul"(%0, %x) : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----
// Globals: a loaded value that names the global's bytes is never written
// over; an update of a global from its own value keeps its own buffer (it
// goes straight into the global); a value already stored is not
// overwritten. A copied load (stored while still read) is an arena buffer.
// CHECK-LABEL: func.func @state
// CHECK: %0 = "mlvm.exp"(%w) : (tensor<8xf32>)
// CHECK: %1 = "mlvm.mul"(%0, %g) {mlvm.inplace = 0 : i64}
// CHECK: %2 = "mlvm.sub"(%w, %1) : (tensor<8xf32>, tensor<8xf32>)
// CHECK: %3 = "mlvm.neg"(%2) : (tensor<8xf32>)
// CHECK: %4 = "mlvm.neg"(%v) {mlvm.inplace = 0 : i64}
"mlvm.global"() <{sym_name = "w", type = tensor<8xf32>}> : () -> ()
"mlvm.global"() <{sym_name = "v", type = tensor<8xf32>}> : () -> ()
func.func @state(%g: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %w = "mlvm.global_load"() <{global = @w}> : () -> tensor<8xf32>
  %0 = "mlvm.exp"(%w) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = "mlvm.mul"(%0, %g) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "mlvm.sub"(%w, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "mlvm.global_store"(%2) <{global = @w}> : (tensor<8xf32>) -> ()
  %3 = "mlvm.neg"(%2) : (tensor<8xf32>) -> tensor<8xf32>
  %v = "mlvm.global_load"() <{global = @v}> : () -> tensor<8xf32>
  "mlvm.global_store"(%g) <{global = @v}> : (tensor<8xf32>) -> ()
  %4 = "mlvm.neg"(%v) : (tensor<8xf32>) -> tensor<8xf32>
  func.return %3, %4 : tensor<8xf32>, tensor<8xf32>
}
