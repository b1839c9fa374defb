// RUN: mlvm-opt %s --split-input-file -p mlvm-sink-constants | filecheck %s

// A fill, and a product of constants, move right before their first
// users; the chain's own operand goes with it; the op reading the
// argument stays first.
// CHECK-LABEL: func.func @sink
// CHECK-NEXT: %[[A:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[F:.*]] = "mlvm.fill"() <{value = 1.000000e+00 : f32}>
// CHECK-NEXT: %[[B:.*]] = "mlvm.add"(%[[A]], %[[F]])
// CHECK-NEXT: %[[C:.*]] = "mlvm.constant"()
// CHECK-NEXT: %[[D:.*]] = "mlvm.mul"(%[[C]], %[[C]])
// CHECK-NEXT: %[[E:.*]] = "mlvm.mul"(%[[B]], %[[D]])
// CHECK-NEXT: func.return %[[E]]
func.func @sink(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<4xf32>
  %c = "mlvm.constant"() <{value = dense<2.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %d = "mlvm.mul"(%c, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.add"(%a, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = "mlvm.mul"(%b, %d) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// -----

// Two users: before the first. An op of a constant and the argument stays
// (it reads an input), as does its constant's move stop at it.
// CHECK-LABEL: func.func @first_user
// CHECK-NEXT: %[[A:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[F:.*]] = "mlvm.fill"() <{value = 3.000000e+00 : f32}>
// CHECK-NEXT: %[[G:.*]] = "mlvm.add"(%x, %[[F]])
// CHECK-NEXT: %[[B:.*]] = "mlvm.relu"(%[[A]])
// CHECK-NEXT: %[[H:.*]] = "mlvm.mul"(%[[B]], %[[F]])
// CHECK-NEXT: %[[S:.*]] = "mlvm.add"(%[[H]], %[[G]])
func.func @first_user(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = "mlvm.fill"() <{value = 3.0 : f32}> : () -> tensor<4xf32>
  %a = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %g = "mlvm.add"(%x, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %h = "mlvm.mul"(%b, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.add"(%h, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// A global's value is state, not a constant: its load, and what it feeds,
// stay before the store that changes it.
"mlvm.global"() <{sym_name = "w", type = tensor<4xf32>}> : () -> ()
// CHECK-LABEL: func.func @state
// CHECK-NEXT: %[[W:.*]] = "mlvm.global_load"() <{global = @w}>
// CHECK-NEXT: %[[N:.*]] = "mlvm.neg"(%[[W]])
// CHECK-NEXT: "mlvm.global_store"(%x) <{global = @w}>
// CHECK-NEXT: %[[R:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[S:.*]] = "mlvm.add"(%[[R]], %[[N]])
func.func @state(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = "mlvm.global_load"() <{global = @w}> : () -> tensor<4xf32>
  %n = "mlvm.neg"(%w) : (tensor<4xf32>) -> tensor<4xf32>
  "mlvm.global_store"(%x) <{global = @w}> : (tensor<4xf32>) -> ()
  %r = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.add"(%r, %n) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// A use inside a fused op's body: before the fused op. A result only
// returned: before the return.
// CHECK-LABEL: func.func @region
// CHECK-NEXT: %[[R:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[C:.*]] = "mlvm.fill"() <{value = 2.000000e+00 : f32}>
// CHECK-NEXT: %[[Y:.*]] = "mlvm.fused"(%[[R]], %[[C]])
// CHECK:      %[[K:.*]] = "mlvm.fill"() <{value = 5.000000e+00 : f32}>
// CHECK-NEXT: func.return %[[Y]], %[[K]]
func.func @region(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %k = "mlvm.fill"() <{value = 5.0 : f32}> : () -> tensor<4xf32>
  %c = "mlvm.fill"() <{value = 2.0 : f32}> : () -> tensor<4xf32>
  %r = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = "mlvm.fused"(%r, %c) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %1 = "mlvm.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "mlvm.fused_yield"(%1) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %k : tensor<4xf32>, tensor<4xf32>
}

// -----

// A fill another op still reads where it is (the add, which may write over
// it): the op reading it later (the neg) keeps its place, so that no buffer
// is read later than before; the fill itself moves to its first user.
// CHECK-LABEL: func.func @shared
// CHECK-NEXT: %[[R:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[F:.*]] = "mlvm.fill"()
// CHECK-NEXT: %[[S:.*]] = "mlvm.neg"(%[[F]])
// CHECK-NEXT: %[[A:.*]] = "mlvm.add"(%x, %[[F]])
// CHECK-NEXT: %[[M:.*]] = "mlvm.mul"(%[[A]], %[[S]])
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<4xf32>
  %r = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.neg"(%f) : (tensor<4xf32>) -> tensor<4xf32>
  %a = "mlvm.add"(%x, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = "mlvm.mul"(%a, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %m, %r : tensor<4xf32>, tensor<4xf32>
}

// -----

// A chain of three moves together, to its first user.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[R:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[F:.*]] = "mlvm.fill"()
// CHECK-NEXT: %[[A:.*]] = "mlvm.neg"(%[[F]])
// CHECK-NEXT: %[[B:.*]] = "mlvm.exp"(%[[A]])
// CHECK-NEXT: %[[C:.*]] = "mlvm.add"(%[[R]], %[[B]])
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<4xf32>
  %a = "mlvm.neg"(%f) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "mlvm.add"(%r, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}

