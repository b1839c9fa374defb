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

// -----

// Fifty ops moved before one user, in their order, after what they read.
// CHECK-LABEL: func.func @many
// CHECK-NEXT: %[[X:.*]] = "mlvm.relu"(%x)
// CHECK-NEXT: %[[F:.*]] = "mlvm.fill"()
// CHECK-NEXT: "mlvm.neg"(%[[F]])
// CHECK-COUNT-49: "mlvm.neg"(%[[F]])
// CHECK-NEXT: "mlvm.concat"
func.func @many(%x: tensor<2xf32>) -> (tensor<100xf32>, tensor<2xf32>) {
  %f = "mlvm.fill"() <{value = 1.0 : f32}> : () -> tensor<2xf32>
  %n0 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n1 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n2 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n3 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n4 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n5 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n6 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n7 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n8 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n9 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n10 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n11 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n12 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n13 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n14 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n15 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n16 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n17 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n18 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n19 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n20 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n21 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n22 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n23 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n24 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n25 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n26 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n27 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n28 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n29 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n30 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n31 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n32 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n33 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n34 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n35 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n36 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n37 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n38 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n39 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n40 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n41 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n42 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n43 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n44 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n45 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n46 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n47 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n48 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %n49 = "mlvm.neg"(%f) : (tensor<2xf32>) -> tensor<2xf32>
  %r = "mlvm.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %c = "mlvm.concat"(%n0, %n1, %n2, %n3, %n4, %n5, %n6, %n7, %n8, %n9, %n10, %n11, %n12, %n13, %n14, %n15, %n16, %n17, %n18, %n19, %n20, %n21, %n22, %n23, %n24, %n25, %n26, %n27, %n28, %n29, %n30, %n31, %n32, %n33, %n34, %n35, %n36, %n37, %n38, %n39, %n40, %n41, %n42, %n43, %n44, %n45, %n46, %n47, %n48, %n49) <{axis = 0 : i64}> : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<100xf32>
  func.return %c, %r : tensor<100xf32>, tensor<2xf32>
}

// -----

// A fused op whose body reads a value from outside it (here an argument)
// stays, as does the fill it reads.
// CHECK-LABEL: func.func @outer
// CHECK-NEXT: "mlvm.fill"()
// CHECK-NEXT: "mlvm.fused"
func.func @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "mlvm.fill"() <{value = 2.0 : f32}> : () -> tensor<4xf32>
  %y = "mlvm.fused"(%c) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = "mlvm.mul"(%a, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "mlvm.fused_yield"(%1) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "mlvm.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.add"(%r, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}
