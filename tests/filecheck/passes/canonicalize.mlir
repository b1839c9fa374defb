// RUN: mlvm-opt %s --split-input-file -p mlvm-canonicalize | filecheck %s

// Neutral elements disappear when broadcasting does not grow the other side.
// CHECK-LABEL: func.func @neutral
// CHECK-NEXT: func.return %x : tensor<4x8xf32>
func.func @neutral(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %z = "mlvm.constant"() <{value = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %nz = "mlvm.constant"() <{value = dense<-0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %o = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.add"(%nz, %x) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.mul"(%0, %o) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %2 = "mlvm.sub"(%1, %z) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.div"(%2, %o) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %3 : tensor<4x8xf32>
}

// -----
// Not neutral: 0 - x, 1 / x, x + 0 where the zero is larger than x, x * 2,
// and x + (+0.0), which turns -0.0 into +0.0.
// CHECK-LABEL: func.func @not_neutral
// CHECK: "mlvm.sub"(%z, %x)
// CHECK: "mlvm.div"(%o, %0)
// CHECK: "mlvm.add"(%1, %zz)
// CHECK: "mlvm.mul"(%2, %t)
// CHECK: "mlvm.add"(%3, %pz)
func.func @not_neutral(%x: tensor<8xf32>) -> tensor<4x8xf32> {
  %pz = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %z = "mlvm.constant"() <{value = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %zz = "mlvm.constant"() <{value = dense<0.0> : tensor<4x8xf32>}> : () -> tensor<4x8xf32>
  %o = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %t = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.sub"(%z, %x) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = "mlvm.div"(%o, %0) : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = "mlvm.add"(%1, %zz) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.mul"(%2, %t) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %4 = "mlvm.add"(%3, %pz) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  func.return %4 : tensor<4x8xf32>
}

// -----
// Reshape chains collapse; a reshape or broadcast to the same type vanishes.
// CHECK-LABEL: func.func @views
// CHECK-NEXT: %0 = "mlvm.reshape"(%x) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT: func.return %0 : tensor<32xf32>
func.func @views(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %0 = "mlvm.reshape"(%x) : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %1 = "mlvm.reshape"(%0) : (tensor<8x4xf32>) -> tensor<2x16xf32>
  %2 = "mlvm.reshape"(%1) : (tensor<2x16xf32>) -> tensor<32xf32>
  %3 = "mlvm.broadcast_to"(%2) : (tensor<32xf32>) -> tensor<32xf32>
  %4 = "mlvm.reshape"(%3) : (tensor<32xf32>) -> tensor<32xf32>
  func.return %4 : tensor<32xf32>
}

// -----
// Constants fold through ops (by each op's reference), broadcasts of
// constants become constants, and dead ops go.
// CHECK-LABEL: func.func @fold
// CHECK-NEXT: %{{.*}} = "mlvm.constant"() <{value = dense<[[V:.*]]> : tensor<2x3xf32>}>
// CHECK-NEXT: %{{.*}} = "mlvm.add"(%x, %{{.*}})
// CHECK-NEXT: func.return
func.func @fold(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = "mlvm.constant"() <{value = dense<[1.0, 2.0, 4.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %b = "mlvm.broadcast_to"(%a) : (tensor<3xf32>) -> tensor<2x3xf32>
  %c = "mlvm.sqrt"(%b) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %d = "mlvm.add"(%x, %c) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %dead = "mlvm.exp"(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %d : tensor<2x3xf32>
}

// -----
// Large constant results are not folded (fold_limit elements).
// CHECK-LABEL: func.func @too_big
// CHECK: "mlvm.exp"
func.func @too_big() -> tensor<8192xf32> {
  %a = "mlvm.constant"() <{value = dense<1.0> : tensor<8192xf32>}> : () -> tensor<8192xf32>
  %b = "mlvm.exp"(%a) : (tensor<8192xf32>) -> tensor<8192xf32>
  func.return %b : tensor<8192xf32>
}

// -----
// A reshape of a constant is a constant of the new shape when the reshape
// is its one user (so a per-channel multiplier of known scales folds), or
// when it is small (a second copy); a large constant read elsewhere too
// stays one copy.
// CHECK-LABEL: func.func @reshaped_constants
// CHECK-DAG: %[[M:.*]] = "mlvm.constant"() <{value = dense<3.000000e+00> : tensor<65xf32>}>
// CHECK-DAG: %[[T:.*]] = "mlvm.constant"() <{value = dense<[[5.000000e-01], [1.000000e+00]]> : tensor<2x1xf32>}>
// CHECK-DAG: %[[TR:.*]] = "mlvm.constant"() <{value = dense<[5.000000e-01, 1.000000e+00]> : tensor<2xf32>}>
// CHECK-DAG: %[[BIG:.*]] = "mlvm.constant"() <{value = dense<2.000000e+00> : tensor<65x1xf32>}>
// CHECK-DAG: %[[RB:.*]] = "mlvm.reshape"(%[[BIG]]) : (tensor<65x1xf32>) -> tensor<65xf32>
// CHECK-NOT: mlvm.mul
// CHECK: func.return %[[M]], %[[T]], %[[TR]], %[[RB]], %[[BIG]]
func.func @reshaped_constants() -> (tensor<65xf32>, tensor<2x1xf32>, tensor<2xf32>, tensor<65xf32>, tensor<65x1xf32>) {
  %s = "mlvm.constant"() <{value = dense<1.5> : tensor<65x1xf32>}> : () -> tensor<65x1xf32>
  %r = "mlvm.reshape"(%s) : (tensor<65x1xf32>) -> tensor<65xf32>
  %k = "mlvm.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %m = "mlvm.mul"(%r, %k) : (tensor<65xf32>, tensor<f32>) -> tensor<65xf32>
  %t = "mlvm.constant"() <{value = dense<[[0.5], [1.0]]> : tensor<2x1xf32>}> : () -> tensor<2x1xf32>
  %tr = "mlvm.reshape"(%t) : (tensor<2x1xf32>) -> tensor<2xf32>
  %big = "mlvm.constant"() <{value = dense<2.0> : tensor<65x1xf32>}> : () -> tensor<65x1xf32>
  %rb = "mlvm.reshape"(%big) : (tensor<65x1xf32>) -> tensor<65xf32>
  func.return %m, %t, %tr, %rb, %big : tensor<65xf32>, tensor<2x1xf32>, tensor<2xf32>, tensor<65xf32>, tensor<65x1xf32>
}

// -----
// A batch folded into a matmul's rows (ONNX MatMul of [2, 3, 5] by [5, 4]):
// the bias add, the activation and the residual add run on the product's
// [6, 4], the residual and a per-row scale viewed alike, and one reshape
// gives the batch back; the fuse pass can then take the matmul as head.
// CHECK-LABEL: func.func @rows_of_a_batch
// CHECK: %[[P:.*]] = "mlvm.matmul"(%{{.*}}, %w) : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[B:.*]] = "mlvm.add"(%[[P]], %b) : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
// CHECK: %[[R:.*]] = "mlvm.relu"(%[[B]]) : (tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[X:.*]] = "mlvm.reshape"(%x) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[S:.*]] = "mlvm.add"(%[[R]], %[[X]]) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[K:.*]] = "mlvm.reshape"(%k) : (tensor<2x3x1xf32>) -> tensor<6x1xf32>
// CHECK: %[[M:.*]] = "mlvm.mul"(%[[K]], %[[S]]) : (tensor<6x1xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[Y:.*]] = "mlvm.reshape"(%[[M]]) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: func.return %[[Y]]
func.func @rows_of_a_batch(%a: tensor<2x3x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>,
                           %x: tensor<2x3x4xf32>, %k: tensor<2x3x1xf32>) -> tensor<2x3x4xf32> {
  %a2 = "mlvm.reshape"(%a) : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
  %p = "mlvm.matmul"(%a2, %w) : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %p3 = "mlvm.reshape"(%p) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %y = "mlvm.add"(%p3, %b) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %r = "mlvm.relu"(%y) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s = "mlvm.add"(%r, %x) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %m = "mlvm.mul"(%k, %s) : (tensor<2x3x1xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %m : tensor<2x3x4xf32>
}

// -----
// Left as they are: an operand that is neither one row for all nor every
// row ([2, 1, 4]: a row per batch), a reshape that is not a split of the
// rows ([6, 4] -> [2, 12]), a reshaped value no matmul made, and a product
// broadcast by the op ([3, 4] -> [2, 3, 4]).
// CHECK-LABEL: func.func @not_rows
// CHECK: "mlvm.add"(%p3, %c) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "mlvm.exp"(%q) : (tensor<2x12xf32>) -> tensor<2x12xf32>
// CHECK: "mlvm.exp"(%v3) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: "mlvm.add"(%n3, %x) : (tensor<1x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
func.func @not_rows(%a: tensor<6x5xf32>, %w: tensor<5x4xf32>, %w2: tensor<10x4xf32>, %c: tensor<2x1x4xf32>, %v: tensor<6x4xf32>,
                    %x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %p = "mlvm.matmul"(%a, %w) : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %p3 = "mlvm.reshape"(%p) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %y = "mlvm.add"(%p3, %c) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  %q = "mlvm.reshape"(%p) : (tensor<6x4xf32>) -> tensor<2x12xf32>
  %e = "mlvm.exp"(%q) : (tensor<2x12xf32>) -> tensor<2x12xf32>
  %v3 = "mlvm.reshape"(%v) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %f = "mlvm.exp"(%v3) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %a3 = "mlvm.reshape"(%a) : (tensor<6x5xf32>) -> tensor<3x10xf32>
  %n = "mlvm.matmul"(%a3, %w2) : (tensor<3x10xf32>, tensor<10x4xf32>) -> tensor<3x4xf32>
  %n3 = "mlvm.reshape"(%n) : (tensor<3x4xf32>) -> tensor<1x3x4xf32>
  %g = "mlvm.add"(%n3, %x) : (tensor<1x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %y, %e, %f, %g : tensor<2x3x4xf32>, tensor<2x12xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----
// A value moved onto the rows whose other readers cannot all move (one
// scales it per batch, [2, 1, 4]): the bias add moves, the rest stays on
// [2, 3, 4] as one tree (moving the add too would split it by shape).
// CHECK-LABEL: func.func @branch
// CHECK: %[[B:.*]] = "mlvm.add"(%p, %b) : (tensor<6x4xf32>, tensor<4xf32>) -> tensor<6x4xf32>
// CHECK: %[[T:.*]] = "mlvm.reshape"(%[[B]]) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[G:.*]] = "mlvm.mul"(%[[T]], %g) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
// CHECK: %[[O:.*]] = "mlvm.add"(%[[T]], %[[G]]) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: func.return %[[O]]
func.func @branch(%a: tensor<6x5xf32>, %w: tensor<5x4xf32>, %b: tensor<4xf32>,
                  %g: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
  %p = "mlvm.matmul"(%a, %w) : (tensor<6x5xf32>, tensor<5x4xf32>) -> tensor<6x4xf32>
  %p3 = "mlvm.reshape"(%p) : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  %t = "mlvm.add"(%p3, %b) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %tg = "mlvm.mul"(%t, %g) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  %o = "mlvm.add"(%t, %tg) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %o : tensor<2x3x4xf32>
}

// -----
// An average pool whose one window is the whole unpadded map (ONNX
// GlobalAveragePool) becomes the mean over the spatial axes; a window
// short of the map, a padded one and a max pool stay pools.
// CHECK-LABEL: func.func @global_pool
// CHECK: %[[M:.*]] = "mlvm.reduce"(%x) <{kind = "mean", axes = array<i64: 2, 3>, keepdims = true}> : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
// CHECK: %[[A:.*]] = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 5, 6>}>
// CHECK: %[[P:.*]] = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 5, 7>, padding = array<i64: 1, 0, 0, 0>}>
// CHECK: %[[X:.*]] = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 5, 7>}>
// CHECK: func.return %[[M]], %[[A]], %[[P]], %[[X]]
func.func @global_pool(%x: tensor<2x3x5x7xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x2xf32>, tensor<2x3x2x1xf32>, tensor<2x3x1x1xf32>) {
  %m = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 5, 7>}> : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
  %a = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 5, 6>}> : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x2xf32>
  %p = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 5, 7>, padding = array<i64: 1, 0, 0, 0>}> : (tensor<2x3x5x7xf32>) -> tensor<2x3x2x1xf32>
  %g = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 5, 7>}> : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
  func.return %m, %a, %p, %g : tensor<2x3x1x1xf32>, tensor<2x3x1x2xf32>, tensor<2x3x2x1xf32>, tensor<2x3x1x1xf32>
}
