// RUN: mlvm-opt %s | filecheck %s
// RUN: mlvm-opt %s --print-op-generic | mlvm-opt | filecheck %s

// Every op of the dialect parses in generic form and prints back.

// CHECK-LABEL: func.func @all_ops
func.func @all_ops(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>) -> tensor<2xi32> {
  // CHECK: "mlvm.constant"() <{value = dense<1.000000e+00> : tensor<3xf32>}> : () -> tensor<3xf32>
  %c = "mlvm.constant"() <{value = dense<1.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  // CHECK: "mlvm.param"() <{name = "w"}> : () -> tensor<3x4xf32>
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<3x4xf32>
  // CHECK: "mlvm.fill"() <{value = 2.500000e+00 : f32}> : () -> tensor<2x3xf32>
  %f = "mlvm.fill"() <{value = 2.5 : f32}> : () -> tensor<2x3xf32>
  // CHECK: "mlvm.rng_normal"() <{seed = 7 : i64}> : () -> tensor<4xf32>
  %r = "mlvm.rng_normal"() <{seed = 7 : i64}> : () -> tensor<4xf32>
  // CHECK: "mlvm.add"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = "mlvm.add"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.sub"
  %1 = "mlvm.sub"(%0, %f) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.mul"
  %2 = "mlvm.mul"(%1, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.div"
  %3 = "mlvm.div"(%2, %c) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.max"
  %4 = "mlvm.max"(%3, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.min"
  %5 = "mlvm.min"(%4, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.eq"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  %6 = "mlvm.eq"(%i, %i) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.cmpl"
  %7 = "mlvm.cmpl"(%5, %6) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.neg"
  %8 = "mlvm.neg"(%7) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.exp"
  %9 = "mlvm.exp"(%8) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.log"
  %10 = "mlvm.log"(%9) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.sqrt"
  %11 = "mlvm.sqrt"(%10) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.rsqrt"(%{{.*}}) <{eps = 1.000000e-05 : f32}>
  %12 = "mlvm.rsqrt"(%11) <{eps = 1.0e-05 : f32}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.tanh"
  %13 = "mlvm.tanh"(%12) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.sigmoid"
  %14 = "mlvm.sigmoid"(%13) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.relu"
  %15 = "mlvm.relu"(%14) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.matmul"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %16 = "mlvm.matmul"(%15, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  // CHECK: "mlvm.matmul"(%{{.*}}, %{{.*}}) <{transpose_lhs = true, transpose_rhs = true}>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<4x2xf32>
  %17 = "mlvm.matmul"(%a, %v) <{transpose_lhs = true, transpose_rhs = true}> : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<3x4xf32>
  // CHECK: "mlvm.reduce"(%{{.*}}) <{kind = "mean", axes = array<i64: 1>, keepdims = true}> : (tensor<3x4xf32>) -> tensor<3x1xf32>
  %18 = "mlvm.reduce"(%17) <{kind = "mean", axes = array<i64: 1>, keepdims = true}> : (tensor<3x4xf32>) -> tensor<3x1xf32>
  // CHECK: "mlvm.broadcast_to"
  %19 = "mlvm.broadcast_to"(%18) : (tensor<3x1xf32>) -> tensor<3x2xf32>
  // CHECK: "mlvm.reshape"
  %20 = "mlvm.reshape"(%19) : (tensor<3x2xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.softmax_xent"(%{{.*}}, %{{.*}}) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %l, %g = "mlvm.softmax_xent"(%20, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  // CHECK: "mlvm.log_softmax"(%{{.*}}) <{axis = 0 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %lsm = "mlvm.log_softmax"(%g) <{axis = 0 : i64}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: "mlvm.cast"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %22 = "mlvm.cast"(%g) : (tensor<2x3xf32>) -> tensor<2x3xi32>
  // CHECK: "mlvm.argmax"(%{{.*}}) <{axis = 1 : i64}> : (tensor<2x3xf32>) -> tensor<2xi32>
  %23 = "mlvm.argmax"(%g) <{axis = 1 : i64}> : (tensor<2x3xf32>) -> tensor<2xi32>
  func.return %23 : tensor<2xi32>
}

// Winograd's weights with each plane in its GEMM's panels: 30 outputs in
// two panels of 24.
// CHECK-LABEL: func.func @wino_panels
// CHECK: "mlvm.param"() <{name = "w", wino = array<i64: 30, 4>}> : () -> tensor<16x2x4x24xf32>
// CHECK: "mlvm.conv2d"(%{{.*}}, %{{.*}}) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<16x2x4x24xf32>) -> tensor<1x30x5x5xf32>
func.func @wino_panels(%x: tensor<1x4x5x5xf32>) -> tensor<1x30x5x5xf32> {
  %w = "mlvm.param"() <{name = "w", wino = array<i64: 30, 4>}> : () -> tensor<16x2x4x24xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<16x2x4x24xf32>) -> tensor<1x30x5x5xf32>
  func.return %0 : tensor<1x30x5x5xf32>
}
