// RUN: mlvm-opt %s --split-input-file -p mlvm-pack-weights | filecheck %s
// RUN: mlvm-opt %s --split-input-file -p 'mlvm-pack-weights{workspaces=false}' | filecheck %s --check-prefix=NOWS
// The pass twice: weights already stored for their kernel stay so.
// RUN: mlvm-opt %s --split-input-file -p mlvm-pack-weights,mlvm-pack-weights | filecheck %s

// 3x3 stride-1 convolutions where Winograd's minimal filtering pays store
// their constant weights transformed (ResNet-8's three stages: 16 channels
// on 32x32, F(4x4, 3x3), [36, O, C]; 32 on 16x16 and 64 on 8x8, F(2x2,
// 3x3), [16, O, C], or with 48 outputs and more each plane in its GEMM's
// panels, [16, ceil(O / 24), C, 24]), bias and padding as they were.
// Without workspaces nothing is transformed (the kernels need one).
// CHECK-LABEL: func.func @stages
// CHECK: %w1 = "mlvm.param"() <{name = "w1", wino = array<i64: 16, 16>}> : () -> tensor<36x16x16xf32>
// CHECK: "mlvm.conv2d"(%x, %w1, %b) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino43"}> : (tensor<1x16x32x32xf32>, tensor<36x16x16xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
// CHECK: %w2 = "mlvm.param"() <{name = "w2", wino = array<i64: 32, 32>}> : () -> tensor<16x32x32xf32>
// CHECK: "mlvm.conv2d"(%y, %w2) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}>
// CHECK: %w3 = "mlvm.param"() <{name = "w3", wino = array<i64: 64, 64>}> : () -> tensor<16x3x64x24xf32>
// CHECK: "mlvm.conv2d"(%z, %w3) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}>
// NOWS-LABEL: func.func @stages
// NOWS-NOT: wino
func.func @stages(%x: tensor<1x16x32x32xf32>, %y: tensor<8x32x16x16xf32>, %z: tensor<2x64x8x8xf32>) -> (tensor<1x16x32x32xf32>, tensor<8x32x16x16xf32>, tensor<2x64x8x8xf32>) {
  %w1 = "mlvm.param"() <{name = "w1"}> : () -> tensor<16x16x3x3xf32>
  %b = "mlvm.param"() <{name = "b"}> : () -> tensor<16xf32>
  %0 = "mlvm.conv2d"(%x, %w1, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x16x32x32xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x32x32xf32>
  %w2 = "mlvm.param"() <{name = "w2"}> : () -> tensor<32x32x3x3xf32>
  %1 = "mlvm.conv2d"(%y, %w2) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<8x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<8x32x16x16xf32>
  %w3 = "mlvm.param"() <{name = "w3"}> : () -> tensor<64x64x3x3xf32>
  %2 = "mlvm.conv2d"(%z, %w3) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<2x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<2x64x8x8xf32>
  func.return %0, %1, %2 : tensor<1x16x32x32xf32>, tensor<8x32x16x16xf32>, tensor<2x64x8x8xf32>
}

// -----
// A weight stored transposed by the archive's perm keeps it under the
// transform (an ONNX weight read as [O, C, 3, 3] after a permutation).
// CHECK-LABEL: func.func @permuted
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 3, 2, 0, 1>, wino = array<i64: 32, 32>}> : () -> tensor<36x32x32xf32>
func.func @permuted(%x: tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  %w = "mlvm.param"() <{name = "w", perm = array<i64: 3, 2, 0, 1>}> : () -> tensor<32x32x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x28x28xf32>
  func.return %0 : tensor<1x32x28x28xf32>
}

// -----
// One weight read by two convolutions that want different tiles (28x28:
// F(4x4, 3x3); 16x16: F(2x2, 3x3)) is not transformed (it would be stored
// twice): both take the next choice, the IHWO kernel.
// CHECK-LABEL: func.func @two_tiles
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 1, 2, 3, 0>}> : () -> tensor<32x3x3x32xf32>
// CHECK-NOT: wino
func.func @two_tiles(%x: tensor<1x32x28x28xf32>, %y: tensor<1x32x16x16xf32>) -> (tensor<1x32x28x28xf32>, tensor<1x32x16x16xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<32x32x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x28x28xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x28x28xf32>
  %1 = "mlvm.conv2d"(%y, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x16x16xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  func.return %0, %1 : tensor<1x32x28x28xf32>, tensor<1x32x16x16xf32>
}

// -----
// Groups of enough channels each (AlexNet's two of 192 on 12x12): [16, O,
// C / groups].
// CHECK-LABEL: func.func @groups
// CHECK: %w = "mlvm.param"() <{name = "w", wino = array<i64: 256, 192>}> : () -> tensor<16x256x192xf32>
// CHECK: "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, w_layout = "wino23"}>
func.func @groups(%x: tensor<1x384x12x12xf32>) -> tensor<1x256x12x12xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<256x192x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64}> : (tensor<1x384x12x12xf32>, tensor<256x192x3x3xf32>) -> tensor<1x256x12x12xf32>
  func.return %0 : tensor<1x256x12x12xf32>
}

// -----
// Many channels: 512 on 14x14 (49 tiles), and on 7x7 with two images (32
// tiles), but not on 7x7 with one (16 tiles for 16 MiB of transformed
// weights: the channels-in-lanes kernel takes it).
// CHECK-LABEL: func.func @many_channels
// CHECK: %w = "mlvm.param"() <{name = "w", wino = array<i64: 512, 512>}> : () -> tensor<16x22x512x24xf32>
// CHECK: %v = "mlvm.param"() <{name = "v", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 512>}> : () -> tensor<16x512x3x3x32xf32>
// CHECK: %u = "mlvm.param"() <{name = "u", wino = array<i64: 512, 512>}> : () -> tensor<16x22x512x24xf32>
// CHECK: "mlvm.conv2d"(%z, %u) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<2x512x7x7xf32>, tensor<16x22x512x24xf32>
func.func @many_channels(%x: tensor<1x512x14x14xf32>, %y: tensor<1x512x7x7xf32>, %z: tensor<2x512x7x7xf32>) -> (tensor<1x512x14x14xf32>, tensor<1x512x7x7xf32>, tensor<2x512x7x7xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<512x512x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x512x14x14xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x14x14xf32>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<512x512x3x3xf32>
  %1 = "mlvm.conv2d"(%y, %v) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  %u = "mlvm.param"() <{name = "u"}> : () -> tensor<512x512x3x3xf32>
  %2 = "mlvm.conv2d"(%z, %u) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<2x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<2x512x7x7xf32>
  func.return %0, %1, %2 : tensor<1x512x14x14xf32>, tensor<1x512x7x7xf32>, tensor<2x512x7x7xf32>
}

// -----
// Must not: strided, dilated, groups of 4 channels, 5x5, too few channels (the 3-channel
// stem), too small a map for the channels (16 on 12x12, 64 on 6x6), an odd
// small map wasting a third of its tiles (128 channels on 5x5), a weight also
// read by a convolution that does not pay (it would be stored twice), an
// input weight.
// CHECK-LABEL: func.func @must_not
// CHECK-NOT: wino
func.func @must_not(%x: tensor<1x32x32x32xf32>, %s: tensor<1x3x32x32xf32>, %t: tensor<1x16x12x12xf32>, %u: tensor<1x64x6x6xf32>, %v: tensor<1x128x5x5xf32>, %wi: tensor<32x32x3x3xf32>) -> (tensor<1x32x16x16xf32>, tensor<1x32x30x30xf32>, tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>, tensor<1x16x32x32xf32>, tensor<1x16x12x12xf32>, tensor<1x64x6x6xf32>, tensor<1x128x5x5xf32>, tensor<1x32x32x32xf32>, tensor<1x32x16x16xf32>, tensor<1x32x32x32xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<32x32x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  %wd = "mlvm.param"() <{name = "wd"}> : () -> tensor<32x32x3x3xf32>
  %1 = "mlvm.conv2d"(%x, %wd) <{padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>}> : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x30x30xf32>
  %wg = "mlvm.param"() <{name = "wg"}> : () -> tensor<32x4x3x3xf32>
  %2 = "mlvm.conv2d"(%x, %wg) <{padding = array<i64: 1, 1, 1, 1>, groups = 8 : i64}> : (tensor<1x32x32x32xf32>, tensor<32x4x3x3xf32>) -> tensor<1x32x32x32xf32>
  %w5 = "mlvm.param"() <{name = "w5"}> : () -> tensor<32x32x5x5xf32>
  %3 = "mlvm.conv2d"(%x, %w5) <{padding = array<i64: 2, 2, 2, 2>}> : (tensor<1x32x32x32xf32>, tensor<32x32x5x5xf32>) -> tensor<1x32x32x32xf32>
  %ws = "mlvm.param"() <{name = "ws"}> : () -> tensor<16x3x3x3xf32>
  %4 = "mlvm.conv2d"(%s, %ws) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x32x32xf32>
  %wt = "mlvm.param"() <{name = "wt"}> : () -> tensor<16x16x3x3xf32>
  %5 = "mlvm.conv2d"(%t, %wt) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x16x12x12xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x12x12xf32>
  %wu = "mlvm.param"() <{name = "wu"}> : () -> tensor<64x64x3x3xf32>
  %6 = "mlvm.conv2d"(%u, %wu) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x6x6xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x6x6xf32>
  %wv = "mlvm.param"() <{name = "wv"}> : () -> tensor<128x128x3x3xf32>
  %7 = "mlvm.conv2d"(%v, %wv) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x128x5x5xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x5x5xf32>
  %ww = "mlvm.param"() <{name = "ww"}> : () -> tensor<32x32x3x3xf32>
  %8 = "mlvm.conv2d"(%x, %ww) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x32x32xf32>
  %9 = "mlvm.conv2d"(%x, %ww) <{padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}> : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x16x16xf32>
  %10 = "mlvm.conv2d"(%x, %wi) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x32x32xf32>, tensor<32x32x3x3xf32>) -> tensor<1x32x32x32xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<1x32x16x16xf32>, tensor<1x32x30x30xf32>, tensor<1x32x32x32xf32>, tensor<1x32x32x32xf32>, tensor<1x16x32x32xf32>, tensor<1x16x12x12xf32>, tensor<1x64x6x6xf32>, tensor<1x128x5x5xf32>, tensor<1x32x32x32xf32>, tensor<1x32x16x16xf32>, tensor<1x32x32x32xf32>
}

// -----
// Panels from two of them on: 48 outputs in two panels of 24, 40 kept
// [16, O, C]; a contraction of 300 channels (two slices of the panels).
// CHECK-LABEL: func.func @panels
// CHECK: %w = "mlvm.param"() <{name = "w", wino = array<i64: 48, 32>}> : () -> tensor<16x2x32x24xf32>
// CHECK: "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x32x16x16xf32>, tensor<16x2x32x24xf32>) -> tensor<1x48x16x16xf32>
// CHECK: %v = "mlvm.param"() <{name = "v", wino = array<i64: 40, 32>}> : () -> tensor<16x40x32xf32>
// CHECK: %u = "mlvm.param"() <{name = "u", wino = array<i64: 50, 300>}> : () -> tensor<16x3x300x24xf32>
func.func @panels(%x: tensor<1x32x16x16xf32>, %y: tensor<1x300x14x14xf32>) -> (tensor<1x48x16x16xf32>, tensor<1x40x16x16xf32>, tensor<1x50x14x14xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<48x32x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x16x16xf32>, tensor<48x32x3x3xf32>) -> tensor<1x48x16x16xf32>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<40x32x3x3xf32>
  %1 = "mlvm.conv2d"(%x, %v) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x32x16x16xf32>, tensor<40x32x3x3xf32>) -> tensor<1x40x16x16xf32>
  %u = "mlvm.param"() <{name = "u"}> : () -> tensor<50x300x3x3xf32>
  %2 = "mlvm.conv2d"(%y, %u) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x300x14x14xf32>, tensor<50x300x3x3xf32>) -> tensor<1x50x14x14xf32>
  func.return %0, %1, %2 : tensor<1x48x16x16xf32>, tensor<1x40x16x16xf32>, tensor<1x50x14x14xf32>
}
