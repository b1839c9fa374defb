// RUN: mlvm-opt %s --split-input-file -p mlvm-fuse-qdq | filecheck %s

// A QDQ convolution with an int32 bias and a relu: one integer kernel with
// the bias, the multiplier (sx * sw) / sy per channel, the output zero point
// and relu = 1 (clamped below at the zero point).
// CHECK-LABEL: func.func @conv
// CHECK-NOT: mlvm.conv2d
// CHECK-NOT: mlvm.dequantize
// CHECK: %[[P:.*]] = "mlvm.mul"(%{{.*}}, %{{.*}}) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[M:.*]] = "mlvm.div"(%[[P]], %{{.*}}) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK: %[[Y:.*]] = "mlvm.qconv2d_requant"(%xq, %wq, %{{.*}}, %{{.*}}, %[[M]], %zy, %bq) <{padding = array<i64: 1, 1, 1, 1>, relu = 1 : i64}> : (tensor<1x3x5x5xui8>, tensor<4x3x3x3xi8>, tensor<ui8>, tensor<4xi8>, tensor<4xf32>, tensor<ui8>, tensor<4xi32>) -> tensor<1x4x5x5xui8>
// CHECK-NOT: mlvm.requantize
// CHECK-NOT: mlvm.max
// CHECK: func.return %[[Y]]
func.func @conv(%xq: tensor<1x3x5x5xui8>, %wq: tensor<4x3x3x3xi8>, %bq: tensor<4xi32>, %sw: tensor<4x1x1x1xf32>, %zw: tensor<4x1x1x1xi8>) -> tensor<1x4x5x5xui8> {
  %sx = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %zx = "mlvm.constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %sb = "mlvm.constant"() <{value = dense<0.01> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zb = "mlvm.constant"() <{value = dense<0> : tensor<4xi32>}> : () -> tensor<4xi32>
  %sy = "mlvm.constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %zy = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %sx, %zx) : (tensor<1x3x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xf32>
  %w = "mlvm.dequantize"(%wq, %sw, %zw) : (tensor<4x3x3x3xi8>, tensor<4x1x1x1xf32>, tensor<4x1x1x1xi8>) -> tensor<4x3x3x3xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zb) : (tensor<4xi32>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  %c = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %r = "mlvm.relu"(%c) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %y = "mlvm.quantize"(%r, %sy, %zy) : (tensor<1x4x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x5x5xui8>
  func.return %y : tensor<1x4x5x5xui8>
}

// -----
// A QDQ matmul with per-column weight scales and zero points.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[ACC:.*]] = "mlvm.qmatmul"(%aq, %bq, %{{.*}}, %{{.*}}) : (tensor<2x8xi8>, tensor<8x3xi8>, tensor<i8>, tensor<3xi8>) -> tensor<2x3xi32>
// CHECK: "mlvm.requantize"(%[[ACC]], %{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<3xf32>, tensor<i8>) -> tensor<2x3xi8>
// CHECK-NOT: mlvm.matmul
func.func @matmul(%aq: tensor<2x8xi8>, %bq: tensor<8x3xi8>, %sb: tensor<1x3xf32>, %zb: tensor<1x3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<2x3xi8> {
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zb) : (tensor<8x3xi8>, tensor<1x3xf32>, tensor<1x3xi8>) -> tensor<8x3xf32>
  %m = "mlvm.matmul"(%a, %b) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %y = "mlvm.quantize"(%m, %s, %z) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}

// -----
// Left alone: a float bias (no int32 to add), a conv read by two ops, and a
// transposed matmul.
// CHECK-LABEL: func.func @not_qdq
// CHECK-NOT: mlvm.qconv2d
// CHECK-NOT: mlvm.qconv2d_requant
// CHECK-NOT: mlvm.qmatmul
// CHECK: "mlvm.conv2d"
// CHECK: "mlvm.conv2d"
// CHECK: "mlvm.matmul"
func.func @not_qdq(%xq: tensor<1x1x3x3xi8>, %wq: tensor<1x1x1x1xi8>, %fb: tensor<1xf32>, %s: tensor<f32>, %z: tensor<i8>, %aq: tensor<2x2xi8>) -> (tensor<1x1x3x3xi8>, tensor<1x1x3x3xi8>, tensor<1x1x3x3xf32>, tensor<2x2xi8>) {
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x1x3x3xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x3x3xf32>
  %w = "mlvm.dequantize"(%wq, %s, %z) : (tensor<1x1x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<1x1x1x1xf32>
  %c = "mlvm.conv2d"(%x, %w, %fb) : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  %y = "mlvm.quantize"(%c, %s, %z) : (tensor<1x1x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x3x3xi8>
  %c2 = "mlvm.conv2d"(%x, %w) : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
  %y2 = "mlvm.quantize"(%c2, %s, %z) : (tensor<1x1x3x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x1x3x3xi8>
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<2x2xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2xf32>
  %m = "mlvm.matmul"(%a, %a) <{transpose_rhs = true}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %y3 = "mlvm.quantize"(%m, %s, %z) : (tensor<2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2xi8>
  func.return %y, %y2, %c2, %y3 : tensor<1x1x3x3xi8>, tensor<1x1x3x3xi8>, tensor<1x1x3x3xf32>, tensor<2x2xi8>
}

// -----
// Without a bias or a relu, one multiplier (per-tensor weight scale), i8 out.
// CHECK-LABEL: func.func @conv_plain
// CHECK: "mlvm.qconv2d_requant"(%xq, %wq, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{relu = 0 : i64}> : (tensor<1x4x6x6xi8>, tensor<8x4x1x1xi8>, tensor<i8>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x8x6x6xi8>
func.func @conv_plain(%xq: tensor<1x4x6x6xi8>, %wq: tensor<8x4x1x1xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<1x8x6x6xi8> {
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x4x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x6xf32>
  %w = "mlvm.dequantize"(%wq, %s, %z) : (tensor<8x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<8x4x1x1xf32>
  %c = "mlvm.conv2d"(%x, %w) : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %y = "mlvm.quantize"(%c, %s, %z) : (tensor<1x8x6x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x6x6xi8>
  func.return %y : tensor<1x8x6x6xi8>
}

// -----
// A 16-bit output: the sums, then requantize (qconv2d_requant is 8-bit).
// CHECK-LABEL: func.func @conv_i16_out
// CHECK: %[[ACC:.*]] = "mlvm.qconv2d"(%xq, %wq, %{{.*}}, %{{.*}}) : (tensor<1x4x6x6xi8>, tensor<8x4x1x1xi8>, tensor<i8>, tensor<i8>) -> tensor<1x8x6x6xi32>
// CHECK: "mlvm.requantize"(%[[ACC]], %{{.*}}, %{{.*}}) : (tensor<1x8x6x6xi32>, tensor<f32>, tensor<i16>) -> tensor<1x8x6x6xi16>
// CHECK-NOT: mlvm.qconv2d_requant
func.func @conv_i16_out(%xq: tensor<1x4x6x6xi8>, %wq: tensor<8x4x1x1xi8>, %s: tensor<f32>, %z: tensor<i8>, %z16: tensor<i16>) -> tensor<1x8x6x6xi16> {
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x4x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x6xf32>
  %w = "mlvm.dequantize"(%wq, %s, %z) : (tensor<8x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<8x4x1x1xf32>
  %c = "mlvm.conv2d"(%x, %w) : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %y = "mlvm.quantize"(%c, %s, %z16) : (tensor<1x8x6x6xf32>, tensor<f32>, tensor<i16>) -> tensor<1x8x6x6xi16>
  func.return %y : tensor<1x8x6x6xi16>
}

// -----
// A residual add of two dequantized u8 tensors of one shape, quantized:
// one mlvm.qadd over the bytes.
// CHECK-LABEL: func.func @add
// CHECK: %[[Y:.*]] = "mlvm.qadd"(%aq, %sa, %za, %bq, %sb, %zb, %sy, %zy) : (tensor<1x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<1x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xui8>
// CHECK-NOT: mlvm.dequantize
// CHECK-NOT: mlvm.add
// CHECK: func.return %[[Y]]
func.func @add(%aq: tensor<1x4x3x3xui8>, %bq: tensor<1x4x3x3xui8>, %sa: tensor<f32>, %za: tensor<ui8>, %sb: tensor<f32>, %zb: tensor<ui8>, %sy: tensor<f32>, %zy: tensor<ui8>) -> tensor<1x4x3x3xui8> {
  %a = "mlvm.dequantize"(%aq, %sa, %za) : (tensor<1x4x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zb) : (tensor<1x4x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xf32>
  %s = "mlvm.add"(%a, %b) : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y = "mlvm.quantize"(%s, %sy, %zy) : (tensor<1x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4x3x3xui8>
  func.return %y : tensor<1x4x3x3xui8>
}

// -----
// Must not: an i8 operand or result (onnxruntime computes those adds in
// f32 on x86, as the float ops do).
// CHECK-LABEL: func.func @add_i8
// CHECK-NOT: mlvm.qadd
func.func @add_i8(%aq: tensor<6xui8>, %bq: tensor<6xi8>, %s: tensor<f32>, %z: tensor<ui8>, %zi: tensor<i8>) -> (tensor<6xui8>, tensor<6xi8>) {
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<6xui8>, tensor<f32>, tensor<ui8>) -> tensor<6xf32>
  %b = "mlvm.dequantize"(%bq, %s, %zi) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %0 = "mlvm.add"(%a, %b) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %y0 = "mlvm.quantize"(%0, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
  %1 = "mlvm.add"(%a, %a) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %y1 = "mlvm.quantize"(%1, %s, %zi) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  func.return %y0, %y1 : tensor<6xui8>, tensor<6xi8>
}

// -----
// An i8 quantize read by one dequantize, itself read once, their zero
// point one constant: the pair in ui8 with the zero point + 128 (the same
// values), so that the u8 rules apply; here the add of two such becomes a
// qadd of bytes.
// CHECK-LABEL: func.func @s8_pairs
// CHECK: %[[ZA:.*]] = "mlvm.constant"() <{value = dense<131> : tensor<ui8>}> : () -> tensor<ui8>
// CHECK: %[[QA:.*]] = "mlvm.quantize"(%xa, %s, %[[ZA]]) : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
// CHECK: %[[ZB:.*]] = "mlvm.constant"() <{value = dense<131> : tensor<ui8>}> : () -> tensor<ui8>
// CHECK: %[[QB:.*]] = "mlvm.quantize"(%xb, %s, %[[ZB]]) : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
// CHECK: %[[ZY:.*]] = "mlvm.constant"() <{value = dense<131> : tensor<ui8>}> : () -> tensor<ui8>
// CHECK: %[[Y:.*]] = "mlvm.qadd"(%[[QA]], %s, %[[ZA]], %[[QB]], %s, %[[ZB]], %s, %[[ZY]]) : (tensor<6xui8>, tensor<f32>, tensor<ui8>, tensor<6xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
// CHECK-NOT: "mlvm.add"
// CHECK: "mlvm.dequantize"(%[[Y]], %s, %[[ZY]]) : (tensor<6xui8>, tensor<f32>, tensor<ui8>) -> tensor<6xf32>
func.func @s8_pairs(%xa: tensor<6xf32>, %xb: tensor<6xf32>, %s: tensor<f32>) -> tensor<6xf32> {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<i8>}> : () -> tensor<i8>
  %qa = "mlvm.quantize"(%xa, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %a = "mlvm.dequantize"(%qa, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %qb = "mlvm.quantize"(%xb, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %b = "mlvm.dequantize"(%qb, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %sum = "mlvm.add"(%a, %b) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %qy = "mlvm.quantize"(%sum, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %y = "mlvm.dequantize"(%qy, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}

// -----
// A zero point whose shape the result's takes (the ops broadcast it): the
// new one shaped as it was.
// CHECK-LABEL: func.func @s8_pair_shaped_zero_point
// CHECK: %[[Z:.*]] = "mlvm.reshape"(%{{.*}}) : (tensor<ui8>) -> tensor<1x1x1x1xui8>
// CHECK: %[[Q:.*]] = "mlvm.quantize"(%x, %s, %[[Z]]) : (tensor<4xf32>, tensor<f32>, tensor<1x1x1x1xui8>) -> tensor<1x1x1x4xui8>
// CHECK: "mlvm.dequantize"(%[[Q]], %s, %{{.*}}) : (tensor<1x1x1x4xui8>, tensor<f32>, tensor<1x1x1x1xui8>) -> tensor<1x1x1x4xf32>
func.func @s8_pair_shaped_zero_point(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<1x1x1x4xf32> {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
  %q = "mlvm.quantize"(%x, %s, %z) : (tensor<4xf32>, tensor<f32>, tensor<1x1x1x1xi8>) -> tensor<1x1x1x4xi8>
  %d = "mlvm.dequantize"(%q, %s, %z) : (tensor<1x1x1x4xi8>, tensor<f32>, tensor<1x1x1x1xi8>) -> tensor<1x1x1x4xf32>
  func.return %d : tensor<1x1x1x4xf32>
}

// -----
// Must not: a quantize read twice, a dequantize read twice, a zero point
// known only at run time, unequal zero points: those pairs stay i8.
// CHECK-LABEL: func.func @s8_pairs_must_not
// CHECK-NOT: ui8
func.func @s8_pairs_must_not(%x: tensor<6xf32>, %s: tensor<f32>, %zr: tensor<i8>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<i8>}> : () -> tensor<i8>
  %z4 = "mlvm.constant"() <{value = dense<4> : tensor<i8>}> : () -> tensor<i8>
  %q0 = "mlvm.quantize"(%x, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %d0 = "mlvm.dequantize"(%q0, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %d0b = "mlvm.dequantize"(%q0, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %q1 = "mlvm.quantize"(%x, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %d1 = "mlvm.dequantize"(%q1, %s, %z) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %r1 = "mlvm.add"(%d1, %d1) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %q2 = "mlvm.quantize"(%x, %s, %zr) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %d2 = "mlvm.dequantize"(%q2, %s, %zr) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  %q3 = "mlvm.quantize"(%x, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<i8>) -> tensor<6xi8>
  %d3 = "mlvm.dequantize"(%q3, %s, %z4) : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  func.return %d0, %d0b, %r1, %d2, %d3 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}

// -----
// One operand broadcast over dims of one run (a quantized bias per
// channel, a row, a single value; either side): mlvm.qadd too.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: "mlvm.qadd"(%xq, %s, %z, %cq, %s, %z, %s, %z) : (tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<1x4x1x1xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
// CHECK: "mlvm.qadd"(%cq, %s, %z, %xq, %s, %z, %s, %z) : (tensor<1x4x1x1xui8>, tensor<f32>, tensor<ui8>, tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
// CHECK: "mlvm.qadd"(%xq, %s, %z, %rq, %s, %z, %s, %z) : (tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
// CHECK: "mlvm.qadd"(%oq, %s, %z, %xq, %s, %z, %s, %z) : (tensor<1xui8>, tensor<f32>, tensor<ui8>, tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
// CHECK-NOT: mlvm.add
func.func @add_broadcast(%xq: tensor<2x4x3x3xui8>, %cq: tensor<1x4x1x1xui8>, %rq: tensor<3xui8>, %oq: tensor<1xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> (tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>) {
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x4x3x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xf32>
  %c = "mlvm.dequantize"(%cq, %s, %z) : (tensor<1x4x1x1xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x1x1xf32>
  %r = "mlvm.dequantize"(%rq, %s, %z) : (tensor<3xui8>, tensor<f32>, tensor<ui8>) -> tensor<3xf32>
  %o = "mlvm.dequantize"(%oq, %s, %z) : (tensor<1xui8>, tensor<f32>, tensor<ui8>) -> tensor<1xf32>
  %0 = "mlvm.add"(%x, %c) : (tensor<2x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<2x4x3x3xf32>
  %y0 = "mlvm.quantize"(%0, %s, %z) : (tensor<2x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
  %1 = "mlvm.add"(%c, %x) : (tensor<1x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %y1 = "mlvm.quantize"(%1, %s, %z) : (tensor<2x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
  %2 = "mlvm.add"(%x, %r) : (tensor<2x4x3x3xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32>
  %y2 = "mlvm.quantize"(%2, %s, %z) : (tensor<2x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
  %3 = "mlvm.add"(%o, %x) : (tensor<1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %y3 = "mlvm.quantize"(%3, %s, %z) : (tensor<2x4x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4x3x3xui8>
  func.return %y0, %y1, %y2, %y3 : tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>, tensor<2x4x3x3xui8>
}

// -----
// Must not: both operands broadcast, the broadcast one's dims not one run
// ([4, 1, 3] over [4, 5, 3]), per-channel scales, a 16-bit output, a sum
// that is read again (the float add stays for it).
// CHECK-LABEL: func.func @add_must_not
// CHECK-NOT: mlvm.qadd
func.func @add_must_not(%aq: tensor<4x3xui8>, %cq: tensor<4x1xui8>, %rq: tensor<1x3xui8>, %gq: tensor<4x5x3xui8>, %hq: tensor<4x1x3xui8>, %s: tensor<f32>, %z: tensor<ui8>, %sc: tensor<4x1xf32>, %z16: tensor<ui16>) -> (tensor<4x3xui8>, tensor<4x5x3xui8>, tensor<4x3xui8>, tensor<4x3xui16>, tensor<4x3xui8>, tensor<4x3xf32>) {
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xf32>
  %col = "mlvm.dequantize"(%cq, %s, %z) : (tensor<4x1xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x1xf32>
  %r = "mlvm.dequantize"(%rq, %s, %z) : (tensor<1x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3xf32>
  %g = "mlvm.dequantize"(%gq, %s, %z) : (tensor<4x5x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x5x3xf32>
  %h = "mlvm.dequantize"(%hq, %s, %z) : (tensor<4x1x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x1x3xf32>
  %c = "mlvm.dequantize"(%aq, %sc, %z) : (tensor<4x3xui8>, tensor<4x1xf32>, tensor<ui8>) -> tensor<4x3xf32>
  %0 = "mlvm.add"(%col, %r) : (tensor<4x1xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  %y0 = "mlvm.quantize"(%0, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  %4 = "mlvm.add"(%g, %h) : (tensor<4x5x3xf32>, tensor<4x1x3xf32>) -> tensor<4x5x3xf32>
  %y4 = "mlvm.quantize"(%4, %s, %z) : (tensor<4x5x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x5x3xui8>
  %1 = "mlvm.add"(%a, %c) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y1 = "mlvm.quantize"(%1, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  %2 = "mlvm.add"(%a, %a) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y2 = "mlvm.quantize"(%2, %s, %z16) : (tensor<4x3xf32>, tensor<f32>, tensor<ui16>) -> tensor<4x3xui16>
  %3 = "mlvm.add"(%a, %a) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y3 = "mlvm.quantize"(%3, %s, %z) : (tensor<4x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  func.return %y0, %y4, %y1, %y2, %y3, %3 : tensor<4x3xui8>, tensor<4x5x3xui8>, tensor<4x3xui8>, tensor<4x3xui16>, tensor<4x3xui8>, tensor<4x3xf32>
}

// -----
// Per-channel weight zero points that are all one value (a constant or a
// fill, as importers write zeros) become that one value: the kernel takes
// its one-value path and nothing fills an array at run time. Unequal ones
// stay per channel.
// CHECK-LABEL: func.func @uniform_zero_points
// CHECK: %[[Z:.*]] = "mlvm.constant"() <{value = dense<0> : tensor<i8>}> : () -> tensor<i8>
// CHECK: "mlvm.qconv2d_requant"(%xq, %wq, %{{.*}}, %[[Z]], %{{.*}}, %{{.*}}) <{relu = 0 : i64}> : (tensor<1x4x6x6xi8>, tensor<8x4x1x1xi8>, tensor<i8>, tensor<i8>, tensor<8xf32>, tensor<i8>) -> tensor<1x8x6x6xi8>
// CHECK: %[[Z3:.*]] = "mlvm.constant"() <{value = dense<3> : tensor<i8>}> : () -> tensor<i8>
// CHECK: "mlvm.qmatmul"(%aq, %bq, %{{.*}}, %[[Z3]]) : (tensor<2x8xi8>, tensor<8x3xi8>, tensor<i8>, tensor<i8>) -> tensor<2x3xi32>
// CHECK: "mlvm.qmatmul"(%aq, %bq, %{{.*}}, %{{.*}}) : (tensor<2x8xi8>, tensor<8x3xi8>, tensor<i8>, tensor<3xi8>) -> tensor<2x3xi32>
func.func @uniform_zero_points(%xq: tensor<1x4x6x6xi8>, %wq: tensor<8x4x1x1xi8>, %sw: tensor<8x1x1x1xf32>, %s: tensor<f32>, %z: tensor<i8>, %aq: tensor<2x8xi8>, %bq: tensor<8x3xi8>, %sb: tensor<1x3xf32>) -> (tensor<1x8x6x6xi8>, tensor<2x3xi8>, tensor<2x3xi8>) {
  %zw = "mlvm.fill"() <{value = 0.0 : f32}> : () -> tensor<8x1x1x1xi8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x4x6x6xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x6xf32>
  %w = "mlvm.dequantize"(%wq, %sw, %zw) : (tensor<8x4x1x1xi8>, tensor<8x1x1x1xf32>, tensor<8x1x1x1xi8>) -> tensor<8x4x1x1xf32>
  %c = "mlvm.conv2d"(%x, %w) : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %y = "mlvm.quantize"(%c, %s, %z) : (tensor<1x8x6x6xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x6x6xi8>
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %z3 = "mlvm.constant"() <{value = dense<3> : tensor<1x3xi8>}> : () -> tensor<1x3xi8>
  %b3 = "mlvm.dequantize"(%bq, %sb, %z3) : (tensor<8x3xi8>, tensor<1x3xf32>, tensor<1x3xi8>) -> tensor<8x3xf32>
  %m3 = "mlvm.matmul"(%a, %b3) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %q3 = "mlvm.quantize"(%m3, %s, %z) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %zd = "mlvm.constant"() <{value = dense<[[0, 1, 0]]> : tensor<1x3xi8>}> : () -> tensor<1x3xi8>
  %bd = "mlvm.dequantize"(%bq, %sb, %zd) : (tensor<8x3xi8>, tensor<1x3xf32>, tensor<1x3xi8>) -> tensor<8x3xf32>
  %md = "mlvm.matmul"(%a, %bd) : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
  %qd = "mlvm.quantize"(%md, %s, %z) : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y, %q3, %qd : tensor<1x8x6x6xi8>, tensor<2x3xi8>, tensor<2x3xi8>
}

// -----
// A Linear layer (Gemm transB=1: a [N, K] parameter) with an int32 bias and
// a relu, one row: a 1x1 convolution over the row's K channels, its weight
// the parameter's [N, K] array viewed as [N, K, 1, 1].
// CHECK-LABEL: func.func @linear
// CHECK: %[[W:.*]] = "mlvm.param"() <{name = "w", view = array<i64: 6, 8>}> : () -> tensor<6x8x1x1xi8>
// CHECK: %[[X:.*]] = "mlvm.reshape"(%xq) : (tensor<1x8xui8>) -> tensor<1x8x1x1xui8>
// CHECK: %[[Y:.*]] = "mlvm.qconv2d_requant"(%[[X]], %[[W]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %bq) <{relu = 1 : i64}> : (tensor<1x8x1x1xui8>, tensor<6x8x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<6xf32>, tensor<ui8>, tensor<6xi32>) -> tensor<1x6x1x1xui8>
// CHECK: %[[R:.*]] = "mlvm.reshape"(%[[Y]]) : (tensor<1x6x1x1xui8>) -> tensor<1x6xui8>
// CHECK-NOT: mlvm.matmul
// CHECK-NOT: mlvm.dequantize
// CHECK: func.return %[[R]]
func.func @linear(%xq: tensor<1x8xui8>, %bq: tensor<6xi32>) -> tensor<1x6xui8> {
  %wq = "mlvm.param"() <{name = "w"}> : () -> tensor<6x8xi8>
  %sw = "mlvm.constant"() <{value = dense<[[0.01], [0.02], [0.03], [0.04], [0.05], [0.06]]> : tensor<6x1xf32>}> : () -> tensor<6x1xf32>
  %zw = "mlvm.constant"() <{value = dense<0> : tensor<6x1xi8>}> : () -> tensor<6x1xi8>
  %sx = "mlvm.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %zx = "mlvm.constant"() <{value = dense<128> : tensor<ui8>}> : () -> tensor<ui8>
  %sb = "mlvm.constant"() <{value = dense<0.01> : tensor<6xf32>}> : () -> tensor<6xf32>
  %zb = "mlvm.constant"() <{value = dense<0> : tensor<6xi32>}> : () -> tensor<6xi32>
  %sy = "mlvm.constant"() <{value = dense<0.25> : tensor<f32>}> : () -> tensor<f32>
  %zy = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %x = "mlvm.dequantize"(%xq, %sx, %zx) : (tensor<1x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x8xf32>
  %w = "mlvm.dequantize"(%wq, %sw, %zw) : (tensor<6x8xi8>, tensor<6x1xf32>, tensor<6x1xi8>) -> tensor<6x8xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zb) : (tensor<6xi32>, tensor<6xf32>, tensor<6xi32>) -> tensor<6xf32>
  %m = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<1x8xf32>, tensor<6x8xf32>) -> tensor<1x6xf32>
  %a = "mlvm.add"(%b, %m) : (tensor<6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %r = "mlvm.relu"(%a) : (tensor<1x6xf32>) -> tensor<1x6xf32>
  %y = "mlvm.quantize"(%r, %sy, %zy) : (tensor<1x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x6xui8>
  func.return %y : tensor<1x6xui8>
}

// -----
// A [K, N] constant weight over 6 rows, no bias: the weight made [N, K, 1,
// 1] at compile time, the rows transposed into positions (so that the
// weights are read once per call) and the result back.
// CHECK-LABEL: func.func @linear_rows
// CHECK: %[[W:.*]] = "mlvm.constant"() <{value = {{dense<\[\[\[\[1\]\], \[\[4\]\], \[\[7\]\], \[\[10\]\]\], \[\[\[2\]\], \[\[5\]\], \[\[8\]\], \[\[11\]\]\], \[\[\[3\]\], \[\[6\]\], \[\[9\]\], \[\[12\]\]\]\]>}} : tensor<3x4x1x1xi8>}>
// CHECK: %[[T:.*]] = "mlvm.transpose"(%xq) <{perm = array<i64: 1, 0>}> : (tensor<6x4xi8>) -> tensor<4x6xi8>
// CHECK: %[[X4:.*]] = "mlvm.reshape"(%[[T]]) : (tensor<4x6xi8>) -> tensor<1x4x6x1xi8>
// CHECK: %[[Y:.*]] = "mlvm.qconv2d_requant"(%[[X4]], %[[W]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{relu = 0 : i64}> : (tensor<1x4x6x1xi8>, tensor<3x4x1x1xi8>, tensor<i8>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x3x6x1xi8>
// CHECK: %[[Y2:.*]] = "mlvm.reshape"(%[[Y]]) : (tensor<1x3x6x1xi8>) -> tensor<3x6xi8>
// CHECK: %[[YT:.*]] = "mlvm.transpose"(%[[Y2]]) <{perm = array<i64: 1, 0>}> : (tensor<3x6xi8>) -> tensor<6x3xi8>
// CHECK: func.return %[[YT]]
func.func @linear_rows(%xq: tensor<6x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<6x3xi8> {
  %wq = "mlvm.constant"() <{value = dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]> : tensor<4x3xi8>}> : () -> tensor<4x3xi8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<6x4xi8>, tensor<f32>, tensor<i8>) -> tensor<6x4xf32>
  %w = "mlvm.dequantize"(%wq, %s, %z) : (tensor<4x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x3xf32>
  %m = "mlvm.matmul"(%x, %w) : (tensor<6x4xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  %y = "mlvm.quantize"(%m, %s, %z) : (tensor<6x3xf32>, tensor<f32>, tensor<i8>) -> tensor<6x3xi8>
  func.return %y : tensor<6x3xi8>
}

// -----
// Must not: a weight known only at run time (stays a float matmul: the
// transposed read has no integer form), a 16-bit output, a bias that is
// not one value per output column.
// CHECK-LABEL: func.func @linear_must_not
// CHECK-NOT: mlvm.qconv2d_requant
func.func @linear_must_not(%xq: tensor<1x8xui8>, %wi: tensor<6x8xi8>, %b2: tensor<1x6xi32>, %s: tensor<f32>, %zx: tensor<ui8>, %zw: tensor<i8>, %zi: tensor<i32>, %z16: tensor<i16>) -> (tensor<1x6xui8>, tensor<1x6xi16>, tensor<1x6xui8>) {
  %wq = "mlvm.param"() <{name = "w"}> : () -> tensor<6x8xi8>
  %x = "mlvm.dequantize"(%xq, %s, %zx) : (tensor<1x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x8xf32>
  %wr = "mlvm.dequantize"(%wi, %s, %zw) : (tensor<6x8xi8>, tensor<f32>, tensor<i8>) -> tensor<6x8xf32>
  %m0 = "mlvm.matmul"(%x, %wr) <{transpose_rhs = true}> : (tensor<1x8xf32>, tensor<6x8xf32>) -> tensor<1x6xf32>
  %y0 = "mlvm.quantize"(%m0, %s, %zx) : (tensor<1x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x6xui8>
  %w = "mlvm.dequantize"(%wq, %s, %zw) : (tensor<6x8xi8>, tensor<f32>, tensor<i8>) -> tensor<6x8xf32>
  %m1 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<1x8xf32>, tensor<6x8xf32>) -> tensor<1x6xf32>
  %y1 = "mlvm.quantize"(%m1, %s, %z16) : (tensor<1x6xf32>, tensor<f32>, tensor<i16>) -> tensor<1x6xi16>
  %b = "mlvm.dequantize"(%b2, %s, %zi) : (tensor<1x6xi32>, tensor<f32>, tensor<i32>) -> tensor<1x6xf32>
  %b3 = "mlvm.add"(%b, %b) : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %m2 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<1x8xf32>, tensor<6x8xf32>) -> tensor<1x6xf32>
  %a = "mlvm.add"(%m2, %b3) : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>
  %y2 = "mlvm.quantize"(%a, %s, %zx) : (tensor<1x6xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x6xui8>
  func.return %y0, %y1, %y2 : tensor<1x6xui8>, tensor<1x6xi16>, tensor<1x6xui8>
}

// -----
// Must not: a scale of one value per K column of a square [N, K] weight
// read transposed (it broadcasts along K, not per output), and a bias whose
// dequantization widens the result past the matmul's.
// CHECK-LABEL: func.func @linear_must_not_axes
// CHECK-NOT: mlvm.qconv2d_requant
func.func @linear_must_not_axes(%xq: tensor<1x4xui8>, %bq: tensor<4xi32>, %s: tensor<f32>, %zx: tensor<ui8>, %zw: tensor<i8>, %zi: tensor<i32>) -> (tensor<1x4xui8>, tensor<3x4xui8>) {
  %wq = "mlvm.param"() <{name = "w"}> : () -> tensor<4x4xi8>
  %sk = "mlvm.constant"() <{value = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %x = "mlvm.dequantize"(%xq, %s, %zx) : (tensor<1x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4xf32>
  %w = "mlvm.dequantize"(%wq, %sk, %zw) : (tensor<4x4xi8>, tensor<4xf32>, tensor<i8>) -> tensor<4x4xf32>
  %m0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %y0 = "mlvm.quantize"(%m0, %s, %zx) : (tensor<1x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x4xui8>
  %w1 = "mlvm.dequantize"(%wq, %s, %zw) : (tensor<4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<4x4xf32>
  %sb = "mlvm.constant"() <{value = dense<0.5> : tensor<3x1xf32>}> : () -> tensor<3x1xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %zi) : (tensor<4xi32>, tensor<3x1xf32>, tensor<i32>) -> tensor<3x4xf32>
  %m1 = "mlvm.matmul"(%x, %w1) <{transpose_rhs = true}> : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = "mlvm.add"(%m1, %b) : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %y1 = "mlvm.quantize"(%a, %s, %zx) : (tensor<3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x4xui8>
  func.return %y0, %y1 : tensor<1x4xui8>, tensor<3x4xui8>
}

// -----
// A QDQ Mul (a channel scaling, broadcast) as onnxruntime's QLinearMul: the
// integers' product in i32, times (sa * sb) / sy in f32, plus zy, then
// rounded and saturated by a quantize of scale 1 and zero point 0; a QDQ
// average pool as one qavgpool2d.
// CHECK-LABEL: func.func @mul_pool
// CHECK-NOT: mlvm.dequantize
// CHECK: %[[A:.*]] = "mlvm.cast"(%aq) : (tensor<1x3x4x4xui8>) -> tensor<1x3x4x4xi32>
// CHECK: %[[B:.*]] = "mlvm.cast"(%bq) : (tensor<3x1x1xui8>) -> tensor<3x1x1xi32>
// CHECK: %[[P:.*]] = "mlvm.mul"(%{{.*}}, %{{.*}}) : (tensor<1x3x4x4xi32>, tensor<3x1x1xi32>) -> tensor<1x3x4x4xi32>
// CHECK: %[[F:.*]] = "mlvm.cast"(%[[P]]) : (tensor<1x3x4x4xi32>) -> tensor<1x3x4x4xf32>
// CHECK: %[[S:.*]] = "mlvm.mul"(%[[F]], %{{.*}}) : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
// CHECK: %[[Z:.*]] = "mlvm.add"(%[[S]], %{{.*}}) : (tensor<1x3x4x4xf32>, tensor<f32>) -> tensor<1x3x4x4xf32>
// CHECK: %[[Q:.*]] = "mlvm.quantize"(%[[Z]], %{{.*}}, %{{.*}}) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
// CHECK: "mlvm.qavgpool2d"(%[[Q]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
// CHECK-NOT: mlvm.pool2d
func.func @mul_pool(%aq: tensor<1x3x4x4xui8>, %bq: tensor<3x1x1xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x3x2x2xui8> {
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %b = "mlvm.dequantize"(%bq, %s, %z) : (tensor<3x1x1xui8>, tensor<f32>, tensor<ui8>) -> tensor<3x1x1xf32>
  %m = "mlvm.mul"(%a, %b) : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %mq = "mlvm.quantize"(%m, %s, %z) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  %md = "mlvm.dequantize"(%mq, %s, %z) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %p = "mlvm.pool2d"(%md) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y = "mlvm.quantize"(%p, %s, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  func.return %y : tensor<1x3x2x2xui8>
}

// -----
// A QDQ max pool pools the bytes: alone where the output's scale, zero
// point and type are the input's (u8 and i8), requantized after the pool
// where they are not (a scale of its own; u8 in, i8 out).
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[P0:.*]] = "mlvm.pool2d"(%xq) <{kind = "max", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x5x5xui8>) -> tensor<1x3x3x3xui8>
// CHECK: %[[P1:.*]] = "mlvm.pool2d"(%iq) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xi8>) -> tensor<1x3x4x4xi8>
// CHECK: %[[P2:.*]] = "mlvm.pool2d"(%xq) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xui8>) -> tensor<1x3x4x4xui8>
// CHECK: %[[D2:.*]] = "mlvm.dequantize"(%[[P2]], %{{.*}}, %{{.*}}) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
// CHECK: %[[Q2:.*]] = "mlvm.quantize"(%[[D2]], %{{.*}}, %{{.*}}) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
// CHECK: %[[P3:.*]] = "mlvm.pool2d"(%xq) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xui8>) -> tensor<1x3x4x4xui8>
// CHECK: %[[D3:.*]] = "mlvm.dequantize"(%[[P3]], %{{.*}}, %{{.*}}) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
// CHECK: %[[Q3:.*]] = "mlvm.quantize"(%[[D3]], %{{.*}}, %{{.*}}) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
// CHECK: func.return %[[P0]], %[[P1]], %[[Q2]], %[[Q3]]
// CHECK-NOT: tensor<1x3x5x5xf32>
func.func @max_pool(%xq: tensor<1x3x5x5xui8>, %iq: tensor<1x3x5x5xi8>) -> (tensor<1x3x3x3xui8>, tensor<1x3x4x4xi8>, tensor<1x3x4x4xui8>, tensor<1x3x4x4xi8>) {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %s2 = "mlvm.constant"() <{value = dense<0.07> : tensor<f32>}> : () -> tensor<f32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %zi = "mlvm.constant"() <{value = dense<-5> : tensor<i8>}> : () -> tensor<i8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x3x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xf32>
  %i = "mlvm.dequantize"(%iq, %s, %zi) : (tensor<1x3x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x3x5x5xf32>
  %p0 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  %y0 = "mlvm.quantize"(%p0, %s, %z) : (tensor<1x3x3x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x3x3xui8>
  %p1 = "mlvm.pool2d"(%i) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x4x4xf32>
  %y1 = "mlvm.quantize"(%p1, %s, %zi) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
  %p2 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x4x4xf32>
  %y2 = "mlvm.quantize"(%p2, %s2, %z) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  %p3 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x4x4xf32>
  %y3 = "mlvm.quantize"(%p3, %s, %zi) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x4x4xi8>
  func.return %y0, %y1, %y2, %y3 : tensor<1x3x3x3xui8>, tensor<1x3x4x4xi8>, tensor<1x3x4x4xui8>, tensor<1x3x4x4xi8>
}

// -----
// QDQ moves (a channel shuffle's reshape and transpose, a slice) move the
// bytes: alone with the input's scale and zero point, requantized after
// the move with others (an i8 output).
// CHECK-LABEL: func.func @moves
// CHECK: %[[R:.*]] = "mlvm.reshape"(%xq) : (tensor<1x6x2x3xui8>) -> tensor<1x2x3x2x3xui8>
// CHECK: %[[T:.*]] = "mlvm.transpose"(%[[R]]) <{perm = array<i64: 0, 2, 1, 3, 4>}> : (tensor<1x2x3x2x3xui8>) -> tensor<1x3x2x2x3xui8>
// CHECK: %[[S:.*]] = "mlvm.slice"(%xq) <{start = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 2, 1, 1>}> : (tensor<1x6x2x3xui8>) -> tensor<1x3x2x2xui8>
// CHECK: %[[D:.*]] = "mlvm.dequantize"(%[[S]], %{{.*}}, %{{.*}}) : (tensor<1x3x2x2xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xf32>
// CHECK: %[[Q:.*]] = "mlvm.quantize"(%[[D]], %{{.*}}, %{{.*}}) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2x2xi8>
// CHECK: func.return %[[T]], %[[Q]]
// CHECK-NOT: xf32>) -> tensor<1x2x3x2x3xf32>
func.func @moves(%xq: tensor<1x6x2x3xui8>) -> (tensor<1x3x2x2x3xui8>, tensor<1x3x2x2xi8>) {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %s2 = "mlvm.constant"() <{value = dense<0.11> : tensor<f32>}> : () -> tensor<f32>
  %zi = "mlvm.constant"() <{value = dense<-2> : tensor<i8>}> : () -> tensor<i8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x6x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x6x2x3xf32>
  %r = "mlvm.reshape"(%x) : (tensor<1x6x2x3xf32>) -> tensor<1x2x3x2x3xf32>
  %rq = "mlvm.quantize"(%r, %s, %z) : (tensor<1x2x3x2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x2x3xui8>
  %rd = "mlvm.dequantize"(%rq, %s, %z) : (tensor<1x2x3x2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x3x2x3xf32>
  %t = "mlvm.transpose"(%rd) <{perm = array<i64: 0, 2, 1, 3, 4>}> : (tensor<1x2x3x2x3xf32>) -> tensor<1x3x2x2x3xf32>
  %tq = "mlvm.quantize"(%t, %s, %z) : (tensor<1x3x2x2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2x3xui8>
  %sl = "mlvm.slice"(%x) <{start = array<i64: 0, 1, 0, 1>, stride = array<i64: 1, 2, 1, 1>}> : (tensor<1x6x2x3xf32>) -> tensor<1x3x2x2xf32>
  %sq = "mlvm.quantize"(%sl, %s2, %zi) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2x2xi8>
  func.return %tq, %sq : tensor<1x3x2x2x3xui8>, tensor<1x3x2x2xi8>
}

// -----
// Must not move the bytes: per-channel scales (a move carries a channel
// elsewhere), a move read by another op too.
// CHECK-LABEL: func.func @moves_must_not
// CHECK: "mlvm.transpose"(%{{.*}}) {{.*}} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: %[[R:.*]] = "mlvm.reshape"(%{{.*}}) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK: "mlvm.quantize"(%[[R]], %{{.*}}, %{{.*}}) : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
func.func @moves_must_not(%xq: tensor<2x3xui8>, %sc: tensor<2x1xf32>, %z: tensor<ui8>) -> (tensor<3x2xui8>, tensor<6xui8>, tensor<6xf32>) {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %xc = "mlvm.dequantize"(%xq, %sc, %z) : (tensor<2x3xui8>, tensor<2x1xf32>, tensor<ui8>) -> tensor<2x3xf32>
  %t = "mlvm.transpose"(%xc) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tq = "mlvm.quantize"(%t, %s, %z) : (tensor<3x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<3x2xui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  %r = "mlvm.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf32>
  %rq = "mlvm.quantize"(%r, %s, %z) : (tensor<6xf32>, tensor<f32>, tensor<ui8>) -> tensor<6xui8>
  func.return %tq, %rq, %r : tensor<3x2xui8>, tensor<6xui8>, tensor<6xf32>
}

// -----
// Parameters of a higher rank than the values (they broadcast the
// dequantize's result to it): the float form stays; one-value parameters
// of rank 1 on a requantized move are taken as scalars.
// CHECK-LABEL: func.func @moves_ranked_params
// CHECK: "mlvm.transpose"(%{{.*}}) {{.*}} : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
// CHECK: %[[R:.*]] = "mlvm.reshape"(%xq) : (tensor<2x3xui8>) -> tensor<6xui8>
// CHECK: "mlvm.dequantize"(%[[R]], %{{.*}}, %{{.*}}) : (tensor<6xui8>, tensor<f32>, tensor<ui8>) -> tensor<6xf32>
func.func @moves_ranked_params(%xq: tensor<2x3xui8>, %z: tensor<ui8>) -> (tensor<1x3x2xui8>, tensor<6xui8>) {
  %s3 = "mlvm.constant"() <{value = dense<0.05> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %s1 = "mlvm.constant"() <{value = dense<0.05> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s2 = "mlvm.constant"() <{value = dense<0.07> : tensor<1xf32>}> : () -> tensor<1xf32>
  %z1 = "mlvm.constant"() <{value = dense<3> : tensor<1xui8>}> : () -> tensor<1xui8>
  %x = "mlvm.dequantize"(%xq, %s3, %z) : (tensor<2x3xui8>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x2x3xf32>
  %t = "mlvm.transpose"(%x) <{perm = array<i64: 0, 2, 1>}> : (tensor<1x2x3xf32>) -> tensor<1x3x2xf32>
  %tq = "mlvm.quantize"(%t, %s3, %z) : (tensor<1x3x2xf32>, tensor<1x1x1xf32>, tensor<ui8>) -> tensor<1x3x2xui8>
  %x1 = "mlvm.dequantize"(%xq, %s1, %z1) : (tensor<2x3xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<2x3xf32>
  %r = "mlvm.reshape"(%x1) : (tensor<2x3xf32>) -> tensor<6xf32>
  %rq = "mlvm.quantize"(%r, %s2, %z1) : (tensor<6xf32>, tensor<1xf32>, tensor<1xui8>) -> tensor<6xui8>
  func.return %tq, %rq : tensor<1x3x2xui8>, tensor<6xui8>
}

// -----
// Must not pool the bytes: a negative scale (it reverses the order: the
// max of the floats is the min of the bytes), a zero scale, the pool read
// by another op too.
// CHECK-LABEL: func.func @max_pool_must_not
// CHECK-COUNT-3: "mlvm.pool2d"(%{{.*}}) {{.*}} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NOT: "mlvm.pool2d"(%xq)
func.func @max_pool_must_not(%xq: tensor<1x3x4x4xui8>, %z: tensor<ui8>) -> (tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xf32>) {
  %s = "mlvm.constant"() <{value = dense<0.05> : tensor<f32>}> : () -> tensor<f32>
  %n = "mlvm.constant"() <{value = dense<-0.05> : tensor<f32>}> : () -> tensor<f32>
  %o = "mlvm.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %xn = "mlvm.dequantize"(%xq, %n, %z) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %p0 = "mlvm.pool2d"(%xn) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y0 = "mlvm.quantize"(%p0, %n, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %p1 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y1 = "mlvm.quantize"(%p1, %o, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  %p2 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y2 = "mlvm.quantize"(%p2, %s, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  func.return %y0, %y1, %y2, %p2 : tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xf32>
}

// -----
// Average pools of i8 (onnxruntime's QLinearAveragePool takes both types),
// a window over the whole map (its QLinearGlobalAveragePool: what the
// importer makes of a GlobalAveragePool), and a 1-D pool between the
// reshapes to 2-D and back: each one qavgpool2d, the reshapes on its bytes.
// CHECK-LABEL: func.func @avg_pools
// CHECK: %[[P0:.*]] = "mlvm.qavgpool2d"(%iq, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK: %[[P1:.*]] = "mlvm.qavgpool2d"(%uq, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 4, 4>}> : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x1x1xui8>
// CHECK: %[[R:.*]] = "mlvm.reshape"(%lq) : (tensor<1x2x6xui8>) -> tensor<1x2x1x6xui8>
// CHECK: %[[P2:.*]] = "mlvm.qavgpool2d"(%[[R]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 1, 2>}> : (tensor<1x2x1x6xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x1x5xui8>
// CHECK: %[[B:.*]] = "mlvm.reshape"(%[[P2]]) : (tensor<1x2x1x5xui8>) -> tensor<1x2x5xui8>
// CHECK: func.return %[[P0]], %[[P1]], %[[B]]
// CHECK-NOT: mlvm.pool2d
func.func @avg_pools(%iq: tensor<1x2x4x4xi8>, %uq: tensor<1x2x4x4xui8>, %lq: tensor<1x2x6xui8>, %s: tensor<f32>, %zi: tensor<i8>, %z: tensor<ui8>) -> (tensor<1x2x2x2xi8>, tensor<1x2x1x1xui8>, tensor<1x2x5xui8>) {
  %i = "mlvm.dequantize"(%iq, %s, %zi) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %p0 = "mlvm.pool2d"(%i) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %y0 = "mlvm.quantize"(%p0, %s, %zi) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p1 = "mlvm.pool2d"(%u) <{kind = "avg", window = array<i64: 4, 4>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %y1 = "mlvm.quantize"(%p1, %s, %z) : (tensor<1x2x1x1xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x1x1xui8>
  %l = "mlvm.dequantize"(%lq, %s, %z) : (tensor<1x2x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x6xf32>
  %l4 = "mlvm.reshape"(%l) : (tensor<1x2x6xf32>) -> tensor<1x2x1x6xf32>
  %p2 = "mlvm.pool2d"(%l4) <{kind = "avg", window = array<i64: 1, 2>}> : (tensor<1x2x1x6xf32>) -> tensor<1x2x1x5xf32>
  %p3 = "mlvm.reshape"(%p2) : (tensor<1x2x1x5xf32>) -> tensor<1x2x5xf32>
  %y2 = "mlvm.quantize"(%p3, %s, %z) : (tensor<1x2x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5xui8>
  func.return %y0, %y1, %y2 : tensor<1x2x2x2xi8>, tensor<1x2x1x1xui8>, tensor<1x2x5xui8>
}

// -----
// A pool that counts its pads (the importer pads with zeros first, then
// pools without padding): the bytes padded with x's zero point (3, which
// dequantizes to the zeros), then one qavgpool2d.
// CHECK-LABEL: func.func @avg_pool_pads
// CHECK: %[[P:.*]] = "mlvm.pad"(%uq) <{pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 3.000000e+00 : f32}> : (tensor<1x2x4x4xui8>) -> tensor<1x2x6x6xui8>
// CHECK: "mlvm.qavgpool2d"(%[[P]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 3, 3>}> : (tensor<1x2x6x6xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
// CHECK-NOT: mlvm.pool2d
func.func @avg_pool_pads(%uq: tensor<1x2x4x4xui8>, %s: tensor<f32>) -> tensor<1x2x4x4xui8> {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p = "mlvm.pad"(%u) <{pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
  %a = "mlvm.pool2d"(%p) <{kind = "avg", window = array<i64: 3, 3>}> : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  %y = "mlvm.quantize"(%a, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  func.return %y : tensor<1x2x4x4xui8>
}

// -----
// Must not: pads whose zero point is known only at run time (the bytes'
// pad value is a constant), pads of another value or of the channels.
// CHECK-LABEL: func.func @avg_pool_pads_must_not
// CHECK-NOT: mlvm.qavgpool2d
func.func @avg_pool_pads_must_not(%uq: tensor<1x2x4x4xui8>, %s: tensor<f32>, %zr: tensor<ui8>) -> (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x3x4x4xui8>) {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %ur = "mlvm.dequantize"(%uq, %s, %zr) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p0 = "mlvm.pad"(%ur) <{pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
  %a0 = "mlvm.pool2d"(%p0) <{kind = "avg", window = array<i64: 3, 3>}> : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  %y0 = "mlvm.quantize"(%a0, %s, %zr) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p1 = "mlvm.pad"(%u) <{pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 1.0 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x6xf32>
  %a1 = "mlvm.pool2d"(%p1) <{kind = "avg", window = array<i64: 3, 3>}> : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  %y1 = "mlvm.quantize"(%a1, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xui8>
  %p2 = "mlvm.pad"(%u) <{pads = array<i64: 0, 1, 1, 1, 0, 0, 1, 1>, value = 0.0 : f32}> : (tensor<1x2x4x4xf32>) -> tensor<1x3x6x6xf32>
  %a2 = "mlvm.pool2d"(%p2) <{kind = "avg", window = array<i64: 3, 3>}> : (tensor<1x3x6x6xf32>) -> tensor<1x3x4x4xf32>
  %y2 = "mlvm.quantize"(%a2, %s, %z) : (tensor<1x3x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xui8>
  func.return %y0, %y1, %y2 : tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>, tensor<1x3x4x4xui8>
}

// -----
// A u8 pool after a reshape of the model's own (onnxruntime moves a u8
// dequantize across a Reshape and fuses the pool): the reshape on the
// bytes, then one qavgpool2d.
// CHECK-LABEL: func.func @avg_pool_reshape
// CHECK: %[[R:.*]] = "mlvm.reshape"(%uq) : (tensor<1x2x4x4xui8>) -> tensor<1x8x1x4xui8>
// CHECK: "mlvm.qavgpool2d"(%[[R]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 1, 4>}> : (tensor<1x8x1x4xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<1x8x1x1xui8>
func.func @avg_pool_reshape(%uq: tensor<1x2x4x4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x8x1x1xui8> {
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %r = "mlvm.reshape"(%u) : (tensor<1x2x4x4xf32>) -> tensor<1x8x1x4xf32>
  %a = "mlvm.pool2d"(%r) <{kind = "avg", window = array<i64: 1, 4>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x1xf32>
  %y = "mlvm.quantize"(%a, %s, %z) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x8x1x1xui8>
  func.return %y : tensor<1x8x1x1xui8>
}

// -----
// An i8 reshape read by two pools: each pool fused (onnxruntime moves the
// dequantize across the Reshape and, the pair it makes read twice, leaves
// it i8 and fuses both pools).
// CHECK-LABEL: func.func @avg_pool_reshape_two_readers
// CHECK: %[[R0:.*]] = "mlvm.reshape"(%iq) : (tensor<1x2x4x4xi8>) -> tensor<1x8x1x4xi8>
// CHECK: "mlvm.qavgpool2d"(%[[R0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 1, 4>}>
// CHECK: %[[R1:.*]] = "mlvm.reshape"(%iq) : (tensor<1x2x4x4xi8>) -> tensor<1x8x1x4xi8>
// CHECK: "mlvm.qavgpool2d"(%[[R1]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{window = array<i64: 1, 2>}>
func.func @avg_pool_reshape_two_readers(%iq: tensor<1x2x4x4xi8>, %s: tensor<f32>, %zi: tensor<i8>) -> (tensor<1x8x1x1xi8>, tensor<1x8x1x3xi8>) {
  %i = "mlvm.dequantize"(%iq, %s, %zi) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %r = "mlvm.reshape"(%i) : (tensor<1x2x4x4xf32>) -> tensor<1x8x1x4xf32>
  %a0 = "mlvm.pool2d"(%r) <{kind = "avg", window = array<i64: 1, 4>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x1xf32>
  %y0 = "mlvm.quantize"(%a0, %s, %zi) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x1xi8>
  %a1 = "mlvm.pool2d"(%r) <{kind = "avg", window = array<i64: 1, 2>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x3xf32>
  %y1 = "mlvm.quantize"(%a1, %s, %zi) : (tensor<1x8x1x3xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x3xi8>
  func.return %y0, %y1 : tensor<1x8x1x1xi8>, tensor<1x8x1x3xi8>
}

// -----
// Must not: an i8 pool after a reshape of the model's own that it alone
// reads (onnxruntime on x86 makes that pair u8 and computes the pool in
// f32), a pool after a reshape the function also returns (onnxruntime
// moves nothing across a graph output), nor any pool before a reshape that
// is not the importer's 1-D form (onnxruntime moves no quantize back
// across a Flatten).
// CHECK-LABEL: func.func @avg_pool_reshape_must_not
// CHECK-NOT: mlvm.qavgpool2d
func.func @avg_pool_reshape_must_not(%iq: tensor<1x2x4x4xi8>, %uq: tensor<1x2x4x4xui8>, %s: tensor<f32>, %zi: tensor<i8>, %z: tensor<ui8>) -> (tensor<1x8x1x1xi8>, tensor<1x2xui8>, tensor<1x8x1x1xui8>, tensor<1x8x1x4xf32>) {
  %i = "mlvm.dequantize"(%iq, %s, %zi) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %r3 = "mlvm.reshape"(%i) : (tensor<1x2x4x4xf32>) -> tensor<1x8x1x4xf32>
  %a3 = "mlvm.pool2d"(%r3) <{kind = "avg", window = array<i64: 1, 4>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x1xf32>
  %y3 = "mlvm.quantize"(%a3, %s, %zi) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<1x8x1x1xi8>
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %a4 = "mlvm.pool2d"(%u) <{kind = "avg", window = array<i64: 4, 4>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
  %r4 = "mlvm.reshape"(%a4) : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32>
  %y4 = "mlvm.quantize"(%r4, %s, %z) : (tensor<1x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2xui8>
  %r5 = "mlvm.reshape"(%u) : (tensor<1x2x4x4xf32>) -> tensor<1x8x1x4xf32>
  %a5 = "mlvm.pool2d"(%r5) <{kind = "avg", window = array<i64: 1, 4>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x1x1xf32>
  %y5 = "mlvm.quantize"(%a5, %s, %z) : (tensor<1x8x1x1xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x8x1x1xui8>
  func.return %y3, %y4, %y5, %r5 : tensor<1x8x1x1xi8>, tensor<1x2xui8>, tensor<1x8x1x1xui8>, tensor<1x8x1x4xf32>
}

// -----
// Must not: average pools whose output's one-value scale has a higher rank
// than the values (the quantize broadcasts them), whose input's type is
// not the output's, or whose reshaped result is read by another op too.
// CHECK-LABEL: func.func @avg_pool_must_not
// CHECK-NOT: mlvm.qavgpool2d
func.func @avg_pool_must_not(%uq: tensor<1x2x4x4xui8>, %lq: tensor<1x2x6xui8>, %s: tensor<f32>, %s5: tensor<1x1x1x1x1xf32>, %z: tensor<ui8>, %zi: tensor<i8>) -> (tensor<1x1x2x2x2xui8>, tensor<1x2x2x2xi8>, tensor<1x2x5xui8>, tensor<1x2x5xf32>) {
  %u = "mlvm.dequantize"(%uq, %s, %z) : (tensor<1x2x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4x4xf32>
  %p0 = "mlvm.pool2d"(%u) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %y0 = "mlvm.quantize"(%p0, %s5, %z) : (tensor<1x2x2x2xf32>, tensor<1x1x1x1x1xf32>, tensor<ui8>) -> tensor<1x1x2x2x2xui8>
  %p1 = "mlvm.pool2d"(%u) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %y1 = "mlvm.quantize"(%p1, %s, %zi) : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
  %l = "mlvm.dequantize"(%lq, %s, %z) : (tensor<1x2x6xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x6xf32>
  %l4 = "mlvm.reshape"(%l) : (tensor<1x2x6xf32>) -> tensor<1x2x1x6xf32>
  %p2 = "mlvm.pool2d"(%l4) <{kind = "avg", window = array<i64: 1, 2>}> : (tensor<1x2x1x6xf32>) -> tensor<1x2x1x5xf32>
  %p3 = "mlvm.reshape"(%p2) : (tensor<1x2x1x5xf32>) -> tensor<1x2x5xf32>
  %y2 = "mlvm.quantize"(%p3, %s, %z) : (tensor<1x2x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5xui8>
  func.return %y0, %y1, %y2, %p3 : tensor<1x1x2x2x2xui8>, tensor<1x2x2x2xi8>, tensor<1x2x5xui8>, tensor<1x2x5xf32>
}

// -----
// Must not: a max pool whose scale is known only at run time (its sign
// with it), per-channel scales, an output of another type than the pool's
// input.
// CHECK-LABEL: func.func @pool_must_not
// CHECK-NOT: mlvm.qavgpool2d
func.func @pool_must_not(%xq: tensor<1x3x4x4xui8>, %s: tensor<f32>, %z: tensor<ui8>, %sc: tensor<3x1x1xf32>, %zi: tensor<i8>) -> (tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xi8>) {
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<1x3x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4x4xf32>
  %p0 = "mlvm.pool2d"(%x) <{kind = "max", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y0 = "mlvm.quantize"(%p0, %s, %z) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  %p1 = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y1 = "mlvm.quantize"(%p1, %sc, %z) : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>, tensor<ui8>) -> tensor<1x3x2x2xui8>
  %p2 = "mlvm.pool2d"(%x) <{kind = "avg", window = array<i64: 2, 2>, strides = array<i64: 2, 2>}> : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  %y2 = "mlvm.quantize"(%p2, %s, %zi) : (tensor<1x3x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x2x2xi8>
  func.return %y0, %y1, %y2 : tensor<1x3x2x2xui8>, tensor<1x3x2x2xui8>, tensor<1x3x2x2xi8>
}

// -----
// A QDQ softmax along the last axis (u8): one qsoftmax with the table of
// exponentials made from x's scale 0.125 and rows of 10.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[T:.*]] = "mlvm.constant"() <{value = dense<{{.*}}> : tensor<256xf32>}>
// CHECK: "mlvm.qsoftmax"(%xq, %[[T]], %{{.*}}, %{{.*}}) : (tensor<2x10xui8>, tensor<256xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x10xui8>
// CHECK-NOT: mlvm.softmax
func.func @softmax(%xq: tensor<2x10xui8>, %z: tensor<ui8>) -> tensor<2x10xui8> {
  %s = "mlvm.constant"() <{value = dense<0.125> : tensor<f32>}> : () -> tensor<f32>
  %sy = "mlvm.constant"() <{value = dense<0.00390625> : tensor<f32>}> : () -> tensor<f32>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x10xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x10xf32>
  %p = "mlvm.softmax"(%x) : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %y = "mlvm.quantize"(%p, %sy, %z) : (tensor<2x10xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x10xui8>
  func.return %y : tensor<2x10xui8>
}

// -----
// Must not (onnxruntime computes these in f32 on x86): i8 or mixed-type
// muls, i8 softmaxes; nor a softmax with a scale known only at run time
// (its table is made at compile time).
// CHECK-LABEL: func.func @i8_must_not
// CHECK-NOT: mlvm.qsoftmax
// CHECK-NOT: mlvm.cast
func.func @i8_must_not(%aq: tensor<1x2x4x4xi8>, %bq: tensor<2x1x1xui8>, %s: tensor<f32>, %z: tensor<i8>, %zu: tensor<ui8>, %uq: tensor<2x10xui8>) -> (tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>, tensor<2x10xui8>, tensor<2x10xui8>) {
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<1x2x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xf32>
  %b = "mlvm.dequantize"(%bq, %s, %zu) : (tensor<2x1x1xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x1x1xf32>
  %m0 = "mlvm.mul"(%a, %a) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y0 = "mlvm.quantize"(%m0, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  %m1 = "mlvm.mul"(%a, %b) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y1 = "mlvm.quantize"(%m1, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  %sm = "mlvm.softmax"(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y3 = "mlvm.quantize"(%sm, %s, %z) : (tensor<1x2x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x4x4xi8>
  %u = "mlvm.dequantize"(%uq, %s, %zu) : (tensor<2x10xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x10xf32>
  %su = "mlvm.softmax"(%u) : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %y4 = "mlvm.quantize"(%su, %s, %zu) : (tensor<2x10xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x10xui8>
  %u2 = "mlvm.dequantize"(%uq, %s, %zu) : (tensor<2x10xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x10xf32>
  %s0 = "mlvm.softmax"(%u2) <{axis = 0 : i64}> : (tensor<2x10xf32>) -> tensor<2x10xf32>
  %y5 = "mlvm.quantize"(%s0, %s, %zu) : (tensor<2x10xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x10xui8>
  func.return %y0, %y1, %y3, %y4, %y5 : tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>, tensor<1x2x4x4xi8>, tensor<2x10xui8>, tensor<2x10xui8>
}

// -----
// A QDQ concat: the bytes concatenated, an operand with the output's scale
// and zero point taken as it is, another requantized first (the same f32
// steps as the float form's).
// CHECK-LABEL: func.func @concat
// CHECK: %[[D:.*]] = "mlvm.dequantize"(%bq, %sb, %z) : (tensor<1x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xf32>
// CHECK: %[[R:.*]] = "mlvm.quantize"(%[[D]], %s, %z) : (tensor<1x3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xui8>
// CHECK: %[[C:.*]] = "mlvm.concat"(%aq, %[[R]]) <{axis = 1 : i64}> : (tensor<1x2x4xui8>, tensor<1x3x4xui8>) -> tensor<1x5x4xui8>
// CHECK: func.return %[[C]]
func.func @concat(%aq: tensor<1x2x4xui8>, %bq: tensor<1x3x4xui8>) -> tensor<1x5x4xui8> {
  %z = "mlvm.constant"() <{value = dense<3> : tensor<ui8>}> : () -> tensor<ui8>
  %s = "mlvm.constant"() <{value = dense<0.125> : tensor<f32>}> : () -> tensor<f32>
  %sb = "mlvm.constant"() <{value = dense<0.3> : tensor<f32>}> : () -> tensor<f32>
  %a = "mlvm.dequantize"(%aq, %s, %z) : (tensor<1x2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x4xf32>
  %b = "mlvm.dequantize"(%bq, %sb, %z) : (tensor<1x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xf32>
  %c = "mlvm.concat"(%a, %b) <{axis = 1 : i64}> : (tensor<1x2x4xf32>, tensor<1x3x4xf32>) -> tensor<1x5x4xf32>
  %y = "mlvm.quantize"(%c, %s, %z) : (tensor<1x5x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x5x4xui8>
  func.return %y : tensor<1x5x4xui8>
}

// -----
// A softmax along another axis: transposed to the last and back, as
// onnxruntime runs it.
// CHECK-LABEL: func.func @softmax_axis
// CHECK: %[[T:.*]] = "mlvm.transpose"(%xq) <{perm = array<i64: 0, 2, 1>}> : (tensor<2x10x3xui8>) -> tensor<2x3x10xui8>
// CHECK: %[[S:.*]] = "mlvm.qsoftmax"(%[[T]], %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<2x3x10xui8>, tensor<256xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3x10xui8>
// CHECK: %[[B:.*]] = "mlvm.transpose"(%[[S]]) <{perm = array<i64: 0, 2, 1>}> : (tensor<2x3x10xui8>) -> tensor<2x10x3xui8>
// CHECK: func.return %[[B]]
func.func @softmax_axis(%xq: tensor<2x10x3xui8>, %z: tensor<ui8>) -> tensor<2x10x3xui8> {
  %s = "mlvm.constant"() <{value = dense<0.125> : tensor<f32>}> : () -> tensor<f32>
  %sy = "mlvm.constant"() <{value = dense<0.00390625> : tensor<f32>}> : () -> tensor<f32>
  %x = "mlvm.dequantize"(%xq, %s, %z) : (tensor<2x10x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x10x3xf32>
  %p = "mlvm.softmax"(%x) <{axis = 1 : i64}> : (tensor<2x10x3xf32>) -> tensor<2x10x3xf32>
  %y = "mlvm.quantize"(%p, %sy, %z) : (tensor<2x10x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x10x3xui8>
  func.return %y : tensor<2x10x3xui8>
}
