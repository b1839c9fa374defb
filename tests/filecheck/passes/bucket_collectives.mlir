// RUN: mlvm-opt %s --split-input-file -p mlvm-bucket-collectives | filecheck %s

// Three all-reduces of one kind, none of their results read before the
// last: one all_reduce over their flattened, concatenated operands, sliced
// back (the ops between them stay where they were).
// CHECK-LABEL: func.func @bucket
// CHECK: %e = "mlvm.exp"(%b)
// CHECK-NEXT: %{{.*}} = "mlvm.reshape"(%a) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: %[[CAT:.*]] = "mlvm.concat"(%{{.*}}, %{{.*}}, %{{.*}}) <{axis = 0 : i64}> : (tensor<6xf32>, tensor<5xf32>, tensor<1xf32>) -> tensor<12xf32>
// CHECK-NEXT: %[[AR:.*]] = "mlvm.all_reduce"(%[[CAT]]) <{kind = "mean"}> : (tensor<12xf32>) -> tensor<12xf32>
// CHECK-NEXT: "mlvm.slice"(%[[AR]]) <{start = array<i64: 0>}> : (tensor<12xf32>) -> tensor<6xf32>
// CHECK: "mlvm.slice"(%[[AR]]) <{start = array<i64: 6>}>
// CHECK: "mlvm.slice"(%[[AR]]) <{start = array<i64: 11>}>
// CHECK-NOT: "mlvm.all_reduce"
// CHECK: func.return
func.func @bucket(%a: tensor<2x3xf32>, %b: tensor<5xf32>, %c: tensor<f32>) -> (tensor<2x3xf32>, tensor<5xf32>, tensor<f32>) {
  %x = "mlvm.all_reduce"(%a) <{kind = "mean"}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = "mlvm.exp"(%b) : (tensor<5xf32>) -> tensor<5xf32>
  %y = "mlvm.all_reduce"(%e) <{kind = "mean"}> : (tensor<5xf32>) -> tensor<5xf32>
  %z = "mlvm.all_reduce"(%c) <{kind = "mean"}> : (tensor<f32>) -> tensor<f32>
  %w = "mlvm.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %w, %y, %z : tensor<2x3xf32>, tensor<5xf32>, tensor<f32>
}

// -----
// Not bucketed: a result read before the next all_reduce, another kind,
// a suspension point between, another element type.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-5: "mlvm.all_reduce"
// CHECK-NOT: "mlvm.concat"
func.func @apart(%a: tensor<4xf32>, %n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>) {
  %x = "mlvm.all_reduce"(%a) <{kind = "sum"}> : (tensor<4xf32>) -> tensor<4xf32>
  %x2 = "mlvm.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %y = "mlvm.all_reduce"(%x2) <{kind = "sum"}> : (tensor<4xf32>) -> tensor<4xf32>
  %z = "mlvm.all_reduce"(%y) <{kind = "max"}> : (tensor<4xf32>) -> tensor<4xf32>
  "mlvm.yield"() : () -> ()
  %v = "mlvm.all_reduce"(%a) <{kind = "max"}> : (tensor<4xf32>) -> tensor<4xf32>
  %m = "mlvm.all_reduce"(%n) <{kind = "max"}> : (tensor<4xi32>) -> tensor<4xi32>
  func.return %z, %v, %x2, %m : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi32>
}
