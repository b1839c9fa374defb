// RUN: mlvm-opt %s --split-input-file -p mlvm-qmatmul-conv | filecheck %s

// A constant rhs: its transpose a constant [N, K, 1, 1] weight; the lhs's
// rows (batch dims flattened) transposed into one image of K channels and
// M positions, the sums transposed back; a zero point per column stays one
// per output channel.
// CHECK-LABEL: func.func @const_rows
// CHECK:      %[[W:.*]] = "mlvm.constant"() <{value = dense<{{\[\[\[\[}}1]], {{\[\[}}5]], {{.*}} : tensor<4x5x1x1xi8>}>
// CHECK-NEXT: %[[R:.*]] = "mlvm.reshape"(%a) : (tensor<2x3x5xui8>) -> tensor<6x5xui8>
// CHECK-NEXT: %[[T:.*]] = "mlvm.transpose"(%[[R]]) <{perm = array<i64: 1, 0>}> : (tensor<6x5xui8>) -> tensor<5x6xui8>
// CHECK-NEXT: %[[X:.*]] = "mlvm.reshape"(%[[T]]) : (tensor<5x6xui8>) -> tensor<1x5x6x1xui8>
// CHECK-NEXT: %[[C:.*]] = "mlvm.qconv2d"(%[[X]], %[[W]], %za, %zb) : (tensor<1x5x6x1xui8>, tensor<4x5x1x1xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<1x4x6x1xi32>
// CHECK-NEXT: %[[Y:.*]] = "mlvm.reshape"(%[[C]]) : (tensor<1x4x6x1xi32>) -> tensor<4x6xi32>
// CHECK-NEXT: %[[B:.*]] = "mlvm.transpose"(%[[Y]]) <{perm = array<i64: 1, 0>}> : (tensor<4x6xi32>) -> tensor<6x4xi32>
// CHECK-NEXT: %[[O:.*]] = "mlvm.reshape"(%[[B]]) : (tensor<6x4xi32>) -> tensor<2x3x4xi32>
// CHECK-NEXT: func.return %[[O]]
// CHECK-NOT: mlvm.qmatmul
func.func @const_rows(%a: tensor<2x3x5xui8>, %za: tensor<ui8>) -> tensor<2x3x4xi32> {
  %b = "mlvm.constant"() <{value = dense<[[1, -2, 3, -4], [5, -6, 7, -8], [9, -10, 11, -12], [13, -14, 15, -16], [17, -18, 19, -20]]> : tensor<5x4xi8>}> : () -> tensor<5x4xi8>
  %zb = "mlvm.constant"() <{value = dense<[0, 1, 2, 3]> : tensor<4xi8>}> : () -> tensor<4xi8>
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<2x3x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<4xi8>) -> tensor<2x3x4xi32>
  func.return %0 : tensor<2x3x4xi32>
}

// -----

// One row (a rank-1 lhs): no transposes, one position; an rhs computed at
// run time is transposed by an op.
// CHECK-LABEL: func.func @one_row_runtime_rhs
// CHECK-NEXT: %[[T:.*]] = "mlvm.transpose"(%b) <{perm = array<i64: 1, 0>}> : (tensor<5x4xui8>) -> tensor<4x5xui8>
// CHECK-NEXT: %[[W:.*]] = "mlvm.reshape"(%[[T]]) : (tensor<4x5xui8>) -> tensor<4x5x1x1xui8>
// CHECK-NEXT: %[[X:.*]] = "mlvm.reshape"(%a) : (tensor<5xui8>) -> tensor<1x5x1x1xui8>
// CHECK-NEXT: %[[C:.*]] = "mlvm.qconv2d"(%[[X]], %[[W]], %za, %zb) : (tensor<1x5x1x1xui8>, tensor<4x5x1x1xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x4x1x1xi32>
// CHECK-NEXT: %[[O:.*]] = "mlvm.reshape"(%[[C]]) : (tensor<1x4x1x1xi32>) -> tensor<4xi32>
// CHECK-NEXT: func.return %[[O]]
func.func @one_row_runtime_rhs(%a: tensor<5xui8>, %b: tensor<5x4xui8>, %za: tensor<ui8>, %zb: tensor<ui8>) -> tensor<4xi32> {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<5xui8>, tensor<5x4xui8>, tensor<ui8>, tensor<ui8>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

// A requantize that alone reads the sums, a multiplier per column: one
// qconv2d_requant, its bytes transposed back.
// CHECK-LABEL: func.func @requant
// CHECK:      "mlvm.qconv2d_requant"(%{{.*}}, %{{.*}}, %za, %zb, %m, %zy) : (tensor<1x5x6x1xui8>, tensor<4x5x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<4xf32>, tensor<ui8>) -> tensor<1x4x6x1xui8>
// CHECK-NEXT: "mlvm.reshape"
// CHECK-NEXT: %[[B:.*]] = "mlvm.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (tensor<4x6xui8>) -> tensor<6x4xui8>
// CHECK-NEXT: func.return %[[B]]
// CHECK-NOT: mlvm.requantize
func.func @requant(%a: tensor<6x5xui8>, %b: tensor<5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>, %m: tensor<4xf32>, %zy: tensor<ui8>) -> tensor<6x4xui8> {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %1 = "mlvm.requantize"(%0, %m, %zy) : (tensor<6x4xi32>, tensor<4xf32>, tensor<ui8>) -> tensor<6x4xui8>
  func.return %1 : tensor<6x4xui8>
}

// -----

// Sums read beside the requantize, or requantized to 16 bits, or by a
// multiplier per row: the sums as a convolution, the requantize kept.
// CHECK-LABEL: func.func @requant_kept
// CHECK-COUNT-3: "mlvm.qconv2d"(
// CHECK-NOT: mlvm.qconv2d_requant
// CHECK-NOT: mlvm.qmatmul
// CHECK: func.return
func.func @requant_kept(%a: tensor<6x5xui8>, %b: tensor<5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>, %m: tensor<f32>, %mr: tensor<6x1xf32>, %zy: tensor<ui8>, %zy16: tensor<ui16>) -> (tensor<6x4xui8>, tensor<6x4xi32>, tensor<6x4xui16>, tensor<6x4xui8>) {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %1 = "mlvm.requantize"(%0, %m, %zy) : (tensor<6x4xi32>, tensor<f32>, tensor<ui8>) -> tensor<6x4xui8>
  %2 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %3 = "mlvm.requantize"(%2, %m, %zy16) : (tensor<6x4xi32>, tensor<f32>, tensor<ui16>) -> tensor<6x4xui16>
  %4 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %5 = "mlvm.requantize"(%4, %mr, %zy) : (tensor<6x4xi32>, tensor<6x1xf32>, tensor<ui8>) -> tensor<6x4xui8>
  func.return %1, %0, %3, %5 : tensor<6x4xui8>, tensor<6x4xi32>, tensor<6x4xui16>, tensor<6x4xui8>
}

// -----

// No rows: left as it is (it computes nothing).
// CHECK-LABEL: func.func @empty
// CHECK-NEXT: "mlvm.qmatmul"
func.func @empty(%a: tensor<0x5xui8>, %b: tensor<5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>) -> tensor<0x4xi32> {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<0x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<0x4xi32>
  func.return %0 : tensor<0x4xi32>
}

// -----

// Three products of the same rows (a layer's query, key and value): one
// transpose of them, shared.
// CHECK-LABEL: func.func @shared_rows
// CHECK-COUNT-1: "mlvm.transpose"(%{{.*}}) <{perm = array<i64: 1, 0>}> : (tensor<6x5xui8>) -> tensor<5x6xui8>
// CHECK-NOT: (tensor<6x5xui8>) -> tensor<5x6xui8>
// CHECK: func.return
func.func @shared_rows(%a: tensor<6x5xui8>, %b: tensor<5x4xi8>, %za: tensor<ui8>, %zb: tensor<i8>) -> (tensor<6x4xi32>, tensor<6x4xi32>, tensor<6x4xi32>) {
  %0 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %1 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  %2 = "mlvm.qmatmul"(%a, %b, %za, %zb) : (tensor<6x5xui8>, tensor<5x4xi8>, tensor<ui8>, tensor<i8>) -> tensor<6x4xi32>
  func.return %0, %1, %2 : tensor<6x4xi32>, tensor<6x4xi32>, tensor<6x4xi32>
}
