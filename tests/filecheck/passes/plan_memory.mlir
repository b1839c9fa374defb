// RUN: mlvm-opt %s --split-input-file -p mlvm-plan-memory | filecheck %s
// RUN: mlvm-opt %s --split-input-file -p 'mlvm-plan-memory{alignment=16}' | filecheck %s --check-prefix=A16
// RUN: mlvm-opt %s --split-input-file -p 'mlvm-plan-memory{workspaces=false}' | filecheck %s --check-prefix=NOWS

// A chain ping-pongs between two buffers; the returned value is written
// straight into the caller's output (-1: not in the arena).
// CHECK-LABEL: func.func @chain
// CHECK-SAME: mlvm.arena_bytes = 128 : i64
// CHECK: "mlvm.exp"(%x) {mlvm.offsets = array<i64: 0>}
// CHECK: "mlvm.neg"(%0) {mlvm.offsets = array<i64: 64>}
// CHECK: "mlvm.exp"(%1) {mlvm.offsets = array<i64: 0>}
// CHECK: "mlvm.neg"(%2) {mlvm.offsets = array<i64: -1>}
// A16-LABEL: func.func @chain
// A16-SAME: mlvm.arena_bytes = 128 : i64
func.func @chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  %1 = "mlvm.neg"(%0) : (tensor<16xf32>) -> tensor<16xf32>
  %2 = "mlvm.exp"(%1) : (tensor<16xf32>) -> tensor<16xf32>
  %3 = "mlvm.neg"(%2) : (tensor<16xf32>) -> tensor<16xf32>
  func.return %3 : tensor<16xf32>
}

// -----
// A value read late stays live: %0 must not share bytes with %1, %2, %3.
// At %3 four buffers are live (no in-place yet); alignment pads 12-byte
// buffers to 64 (16 with alignment=16).
// CHECK-LABEL: func.func @long_lived
// CHECK-SAME: mlvm.arena_bytes = 256 : i64
// CHECK: "mlvm.exp"(%x) {mlvm.offsets = array<i64: [[A:[0-9]+]]>}
// CHECK-NOT: array<i64: [[A]]>
// CHECK: func.return
// A16-LABEL: func.func @long_lived
// A16-SAME: mlvm.arena_bytes = 64 : i64
func.func @long_lived(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlvm.neg"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlvm.exp"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = "mlvm.add"(%2, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = "mlvm.add"(%3, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %4 : tensor<3xf32>
}

// -----
// reshape aliases its operand: no buffer of its own, and the operand lives
// until the alias's last reader. A reshaped result is still computed
// straight into the output buffer.
// CHECK-LABEL: func.func @alias
// CHECK-SAME: mlvm.arena_bytes = 128 : i64
// CHECK: "mlvm.exp"(%x) {mlvm.offsets = array<i64: [[E:[0-9]+]]>}
// CHECK: "mlvm.reshape"(%0) {mlvm.offsets = array<i64: -1>}
// CHECK: "mlvm.neg"(%x) {mlvm.offsets = array<i64: [[N:[0-9]+]]>}
// CHECK: "mlvm.reshape"(%2) {mlvm.offsets = array<i64: -1>}
// CHECK: "mlvm.add"(%1, %3) {mlvm.offsets = array<i64: -1>}
func.func @alias(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "mlvm.reshape"(%0) : (tensor<4x4xf32>) -> tensor<16xf32>
  %2 = "mlvm.neg"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = "mlvm.reshape"(%2) : (tensor<4x4xf32>) -> tensor<16xf32>
  %4 = "mlvm.add"(%1, %3) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %5 = "mlvm.reshape"(%4) : (tensor<16xf32>) -> tensor<4x4xf32>
  func.return %5 : tensor<4x4xf32>
}

// -----
// Data ops (constants, params) and both results of a two-result op.
// CHECK-LABEL: func.func @data
// CHECK: "mlvm.constant"() <{value = dense<1.000000e+00> : tensor<2x5xf32>}> {mlvm.offsets = array<i64: -1>}
// CHECK: "mlvm.softmax_xent"(%c, %x) {mlvm.offsets = array<i64: -1, 0>}
func.func @data(%x: tensor<2x5xf32>) -> tensor<2xf32> {
  %c = "mlvm.constant"() <{value = dense<1.0> : tensor<2x5xf32>}> : () -> tensor<2x5xf32>
  %l, %g = "mlvm.softmax_xent"(%c, %x) : (tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2x5xf32>)
  func.return %l : tensor<2xf32>
}

// -----
// Nothing to place: the arena is empty.
// CHECK-LABEL: func.func @empty
// CHECK-SAME: mlvm.arena_bytes = 0 : i64
func.func @empty(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----
// A kernel's scratch is a buffer live while its op runs: conv2d's padded
// copy (tap offsets 128 B + one 6x6 plane and 64 floats of slack 448 B + 4
// outputs x 22 positions at the copy's pitch 384 B) sits beside the conv's
// result, and the exp after it may reuse its bytes.
// CHECK-LABEL: func.func @conv_workspace
// CHECK-SAME: mlvm.arena_bytes = 1216 : i64
// CHECK: "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> {mlvm.offsets = array<i64: 960>, mlvm.workspace = 0 : i64}
// CHECK: "mlvm.exp"(%0) {mlvm.offsets = array<i64: 0>}
// Without workspaces only the two results are planned.
// NOWS-LABEL: func.func @conv_workspace
// NOWS-SAME: mlvm.arena_bytes = 512 : i64
// NOWS: "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> {mlvm.offsets = array<i64: 0>}
// NOWS-NOT: mlvm.workspace
func.func @conv_workspace(%x: tensor<1x1x4x4xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x1x4x4xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = "mlvm.exp"(%0) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %2 = "mlvm.neg"(%1) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  func.return %2 : tensor<1x4x4x4xf32>
}

// -----
// The int8 convolution with its requantization fused keeps its sums only in
// its workspace, so the workspace is planned even without the optional ones
// (tap offsets 64 B + the copy 320 B + reordered weights, shares, zero
// points, window sums and the DSP path's halfwords 576 B).
// CHECK-LABEL: func.func @qconv_requant_workspace
// CHECK-SAME: mlvm.arena_bytes = 960 : i64
// CHECK: "mlvm.qconv2d_requant"{{.*}}mlvm.workspace = 0 : i64
// NOWS-LABEL: func.func @qconv_requant_workspace
// NOWS-SAME: mlvm.arena_bytes = 960 : i64
// NOWS: "mlvm.qconv2d_requant"{{.*}}mlvm.workspace = 0 : i64
func.func @qconv_requant_workspace(%x: tensor<1x4x4x4xui8>, %w: tensor<4x4x1x1xi8>, %zx: tensor<ui8>, %zw: tensor<i8>, %m: tensor<f32>, %zy: tensor<ui8>) -> tensor<1x4x4x4xui8> {
  %0 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x4x4xui8>
  func.return %0 : tensor<1x4x4x4xui8>
}
