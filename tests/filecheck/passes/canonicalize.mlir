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
