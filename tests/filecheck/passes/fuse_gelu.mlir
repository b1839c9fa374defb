// RUN: mlvm-opt %s --split-input-file -p mlvm-fuse-gelu | filecheck %s

// PyTorch's export: (x * (erf(x / sqrt 2) + 1)) * 0.5 -> one gelu; the
// chain's ops and its constants go.
// CHECK-LABEL: func.func @torch
// CHECK-NEXT: %[[G:.*]] = "mlvm.gelu"(%x) <{approximate = "none"}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %[[G]]
func.func @torch(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s2 = "mlvm.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %half = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %d = "mlvm.div"(%x, %s2) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %e = "mlvm.erf"(%d) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = "mlvm.add"(%e, %one) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %m = "mlvm.mul"(%x, %s) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %y = "mlvm.mul"(%m, %half) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// The other spellings: x * (1 / sqrt 2), 1 + erf, 0.5 first, constants of
// shape [1], and the half times the sum before x.
// CHECK-LABEL: func.func @spellings
// CHECK-NEXT: %[[A:.*]] = "mlvm.gelu"(%x) <{approximate = "none"}> : (tensor<7xf32>) -> tensor<7xf32>
// CHECK-NEXT: %[[B:.*]] = "mlvm.gelu"(%x) <{approximate = "none"}> : (tensor<7xf32>) -> tensor<7xf32>
// CHECK-NEXT: func.return %[[A]], %[[B]]
func.func @spellings(%x: tensor<7xf32>) -> (tensor<7xf32>, tensor<7xf32>) {
  %r2 = "mlvm.constant"() <{value = dense<0.707106769> : tensor<1xf32>}> : () -> tensor<1xf32>
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %half = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %d = "mlvm.mul"(%r2, %x) : (tensor<1xf32>, tensor<7xf32>) -> tensor<7xf32>
  %e = "mlvm.erf"(%d) : (tensor<7xf32>) -> tensor<7xf32>
  %s = "mlvm.add"(%one, %e) : (tensor<f32>, tensor<7xf32>) -> tensor<7xf32>
  %h = "mlvm.mul"(%half, %x) : (tensor<f32>, tensor<7xf32>) -> tensor<7xf32>
  %a = "mlvm.mul"(%h, %s) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  %d2 = "mlvm.mul"(%x, %r2) : (tensor<7xf32>, tensor<1xf32>) -> tensor<7xf32>
  %e2 = "mlvm.erf"(%d2) : (tensor<7xf32>) -> tensor<7xf32>
  %s2 = "mlvm.add"(%e2, %one) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
  %hs = "mlvm.mul"(%s2, %half) : (tensor<7xf32>, tensor<f32>) -> tensor<7xf32>
  %b = "mlvm.mul"(%x, %hs) : (tensor<7xf32>, tensor<7xf32>) -> tensor<7xf32>
  func.return %a, %b : tensor<7xf32>, tensor<7xf32>
}

// -----

// Not GELU, or not only: a constant off by one ulp, 0.25 for the half, erf
// of another tensor, an intermediate read elsewhere, x broadcast by the
// product. Every op stays.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: mlvm.gelu
// CHECK: func.return %a, %b, %c, %eu, %vb
func.func @not_gelu(%x: tensor<4xf32>, %z: tensor<4xf32>, %v: tensor<3x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>) {
  %s2 = "mlvm.constant"() <{value = dense<1.41421342> : tensor<f32>}> : () -> tensor<f32>
  %s2ok = "mlvm.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %half = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %quarter = "mlvm.constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %d = "mlvm.div"(%x, %s2) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = "mlvm.erf"(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.add"(%e, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = "mlvm.mul"(%x, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = "mlvm.mul"(%m, %half) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %dq = "mlvm.div"(%x, %s2ok) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %eq = "mlvm.erf"(%dq) : (tensor<4xf32>) -> tensor<4xf32>
  %sq = "mlvm.add"(%eq, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %mq = "mlvm.mul"(%x, %sq) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "mlvm.mul"(%mq, %quarter) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %dz = "mlvm.div"(%z, %s2ok) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %ez = "mlvm.erf"(%dz) : (tensor<4xf32>) -> tensor<4xf32>
  %sz = "mlvm.add"(%ez, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %mz = "mlvm.mul"(%x, %sz) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "mlvm.mul"(%mz, %half) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %du = "mlvm.div"(%x, %s2ok) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %eu = "mlvm.erf"(%du) : (tensor<4xf32>) -> tensor<4xf32>
  %su = "mlvm.add"(%eu, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %mu = "mlvm.mul"(%x, %su) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = "mlvm.mul"(%mu, %half) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %db = "mlvm.div"(%x, %s2ok) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %eb = "mlvm.erf"(%db) : (tensor<4xf32>) -> tensor<4xf32>
  %sb = "mlvm.add"(%eb, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = "mlvm.mul"(%x, %sb) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %vb = "mlvm.mul"(%mb, %v) : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %a, %b, %c, %eu, %vb : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>
}

// -----

// A half of shape [1, 1] broadcasts the product to [1, 4]: not x's type,
// so no gelu (it would change the result's shape). f16: gelu is f32 only.
// CHECK-LABEL: func.func @not_this_type
// CHECK-NOT: mlvm.gelu
// CHECK: func.return %y, %yh
func.func @not_this_type(%x: tensor<4xf32>, %xh: tensor<4xf16>) -> (tensor<1x4xf32>, tensor<4xf16>) {
  %s2 = "mlvm.constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %one = "mlvm.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %half = "mlvm.constant"() <{value = dense<0.5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %d = "mlvm.div"(%x, %s2) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = "mlvm.erf"(%d) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "mlvm.add"(%e, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %m = "mlvm.mul"(%x, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = "mlvm.mul"(%m, %half) : (tensor<4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %s2h = "mlvm.constant"() <{value = dense<1.414> : tensor<f16>}> : () -> tensor<f16>
  %oneh = "mlvm.constant"() <{value = dense<1.0> : tensor<f16>}> : () -> tensor<f16>
  %halfh = "mlvm.constant"() <{value = dense<0.5> : tensor<f16>}> : () -> tensor<f16>
  %dh = "mlvm.div"(%xh, %s2h) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %eh = "mlvm.erf"(%dh) : (tensor<4xf16>) -> tensor<4xf16>
  %sh = "mlvm.add"(%eh, %oneh) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %mh = "mlvm.mul"(%xh, %sh) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %yh = "mlvm.mul"(%mh, %halfh) : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  func.return %y, %yh : tensor<1x4xf32>, tensor<4xf16>
}
