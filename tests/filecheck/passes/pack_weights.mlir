// RUN: mlvm-opt %s --split-input-file -p 'mlvm-pack-weights{winograd=false}' | filecheck %s

// A PyTorch-layout weight (transpose_rhs) is stored transposed once; the
// matmul reads it as it is.
// CHECK-LABEL: func.func @linear
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 1, 0>}> : () -> tensor<5x3xf32>
// CHECK-NEXT: %0 = "mlvm.matmul"(%x, %w) <{transpose_lhs = false, transpose_rhs = false}> : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
func.func @linear(%x: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<3x5xf32>
  %0 = "mlvm.matmul"(%x, %w) <{transpose_lhs = false, transpose_rhs = true}> : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----
// Two transposed reads share one stored copy; a transposed lhs and a
// batched weight swap their last two dims only.
// CHECK-LABEL: func.func @shared
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 1, 0>}> : () -> tensor<5x3xf32>
// CHECK: "mlvm.matmul"(%x, %w) <{transpose_rhs = false}>
// CHECK: "mlvm.matmul"(%x, %w) <{transpose_rhs = false}>
// CHECK: %a = "mlvm.param"() <{name = "a", perm = array<i64: 0, 2, 1>}> : () -> tensor<2x4x5xf32>
// CHECK: "mlvm.matmul"(%a, %y) <{transpose_lhs = false}>
func.func @shared(%x: tensor<4x5xf32>, %y: tensor<2x5x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4x3xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<3x5xf32>
  %0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  %1 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  %a = "mlvm.param"() <{name = "a"}> : () -> tensor<2x5x4xf32>
  %2 = "mlvm.matmul"(%a, %y) <{transpose_lhs = true}> : (tensor<2x5x4xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
  func.return %0, %1, %2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<2x4x3xf32>
}

// -----
// Must not: a weight also read untransposed (it would be stored twice), an
// input (not a compile-time value), a transposed read of a non-weight.
// CHECK-LABEL: func.func @must_not
// CHECK: %w = "mlvm.param"() <{name = "w"}> : () -> tensor<5x5xf32>
// CHECK: "mlvm.matmul"(%x, %w) <{transpose_rhs = true}>
// CHECK: "mlvm.matmul"(%x, %w) : (tensor<5x5xf32>, tensor<5x5xf32>)
// CHECK: "mlvm.matmul"(%x, %x) <{transpose_rhs = true}>
// CHECK-NOT: perm
func.func @must_not(%x: tensor<5x5xf32>) -> (tensor<5x5xf32>, tensor<5x5xf32>, tensor<5x5xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<5x5xf32>
  %0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<5x5xf32>, tensor<5x5xf32>) -> tensor<5x5xf32>
  %1 = "mlvm.matmul"(%x, %w) : (tensor<5x5xf32>, tensor<5x5xf32>) -> tensor<5x5xf32>
  %2 = "mlvm.matmul"(%x, %x) <{transpose_rhs = true}> : (tensor<5x5xf32>, tensor<5x5xf32>) -> tensor<5x5xf32>
  func.return %0, %1, %2 : tensor<5x5xf32>, tensor<5x5xf32>, tensor<5x5xf32>
}

// -----
// A convolution over a small map (8x8: NCHW lanes a quarter idle, rows
// copied out of the padded pitch) reads its constant weights [I][H][W][O],
// the output channels in the lanes, here in panels of 32 channels
// ([O / 32][I][H][W][32]: 64 channels); a 1x1 over a 3x3 map likewise, its
// 32 channels one panel, the plain layout.
// CHECK-LABEL: func.func @small_map
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 64>}> : () -> tensor<2x64x3x3x32xf32>
// CHECK: %b = "mlvm.param"() <{name = "b"}> : () -> tensor<64xf32>
// CHECK: "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}> : (tensor<1x64x8x8xf32>, tensor<2x64x3x3x32xf32>, tensor<64xf32>)
// CHECK: %p = "mlvm.param"() <{name = "p", perm = array<i64: 1, 2, 3, 0>}> : () -> tensor<64x1x1x32xf32>
// CHECK: "mlvm.conv2d"(%y, %p) <{w_layout = "ihwo"}>
func.func @small_map(%x: tensor<1x64x8x8xf32>, %y: tensor<2x64x3x3xf32>) -> (tensor<1x64x8x8xf32>, tensor<2x32x3x3xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<64x64x3x3xf32>
  %b = "mlvm.param"() <{name = "b"}> : () -> tensor<64xf32>
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x64x8x8xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  %p = "mlvm.param"() <{name = "p"}> : () -> tensor<32x64x1x1xf32>
  %1 = "mlvm.conv2d"(%y, %p) : (tensor<2x64x3x3xf32>, tensor<32x64x1x1xf32>) -> tensor<2x32x3x3xf32>
  func.return %0, %1 : tensor<1x64x8x8xf32>, tensor<2x32x3x3xf32>
}

// -----
// Mid-sized maps with many channels (ResNet-50's and Inception's): 128
// channels 3x3 on 28x28 (1152 taps, a 392 KiB input), 2048 to 512 1x1 on
// 7x7 (a 392 KiB input); long contractions on full maps: 512 to 128 1x1
// on 28x28 (512 taps, a 1.5 MiB input), 256 channels 3x3 with stride 2
// on 28x28 (2304 taps).
// CHECK-LABEL: func.func @mid_map
// CHECK: %w = "mlvm.param"() <{name = "w", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 128>}> : () -> tensor<4x128x3x3x32xf32>
// CHECK: "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}>
// CHECK: %p = "mlvm.param"() <{name = "p", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 512>}> : () -> tensor<16x2048x1x1x32xf32>
// CHECK: "mlvm.conv2d"(%y, %p) <{w_layout = "ihwo"}>
// CHECK: %q = "mlvm.param"() <{name = "q", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 128>}> : () -> tensor<4x512x1x1x32xf32>
// CHECK: "mlvm.conv2d"(%z, %q) <{w_layout = "ihwo"}>
// CHECK: %r = "mlvm.param"() <{name = "r", perm = array<i64: 1, 2, 3, 0>, panel = array<i64: 32, 256>}> : () -> tensor<8x256x3x3x32xf32>
// CHECK: "mlvm.conv2d"(%u, %r) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}>
func.func @mid_map(%x: tensor<1x128x28x28xf32>, %y: tensor<1x2048x7x7xf32>, %z: tensor<1x512x28x28xf32>, %u: tensor<1x256x28x28xf32>) -> (tensor<1x128x28x28xf32>, tensor<1x512x7x7xf32>, tensor<1x128x28x28xf32>, tensor<1x256x14x14xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<128x128x3x3xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x128x28x28xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x28x28xf32>
  %p = "mlvm.param"() <{name = "p"}> : () -> tensor<512x2048x1x1xf32>
  %1 = "mlvm.conv2d"(%y, %p) : (tensor<1x2048x7x7xf32>, tensor<512x2048x1x1xf32>) -> tensor<1x512x7x7xf32>
  %q = "mlvm.param"() <{name = "q"}> : () -> tensor<128x512x1x1xf32>
  %2 = "mlvm.conv2d"(%z, %q) : (tensor<1x512x28x28xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x28x28xf32>
  %r = "mlvm.param"() <{name = "r"}> : () -> tensor<256x256x3x3xf32>
  %3 = "mlvm.conv2d"(%u, %r) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x256x28x28xf32>, tensor<256x256x3x3xf32>) -> tensor<1x256x14x14xf32>
  func.return %0, %1, %2, %3 : tensor<1x128x28x28xf32>, tensor<1x512x7x7xf32>, tensor<1x128x28x28xf32>, tensor<1x256x14x14xf32>
}

// -----
// Must not: a large map (its NCHW lanes are full), groups, a weight also
// read by a conv that keeps OIHW, fewer than 32 output channels, a
// contraction too long for a sliver of weights in cache (513 x 3 x 3),
// weights that are inputs, 128 output channels of a 529 KiB input of 469
// channels and of a 577 KiB one of 511 (one tap short of a long
// contraction), 128 of a strided one of 72 KiB, a strided 257 x 3 x 3
// (2313 taps), 512 channels of a 2.06 MiB input, 40 and 1000 output
// channels of 512 (not a multiple of 32: no panels).
// CHECK-LABEL: func.func @conv_must_not
// CHECK-NOT: perm
// CHECK-NOT: ihwo
func.func @conv_must_not(%x: tensor<1x16x32x32xf32>, %g: tensor<1x32x6x6xf32>, %s: tensor<1x16x6x6xf32>, %d: tensor<1x513x7x7xf32>, %wi: tensor<32x16x1x1xf32>, %e: tensor<1x469x17x17xf32>, %f: tensor<1x511x6x6xf32>, %h: tensor<1x257x14x14xf32>, %k: tensor<1x512x32x33xf32>, %m: tensor<1x511x17x17xf32>, %n: tensor<1x512x28x28xf32>, %q: tensor<1x512x13x13xf32>) -> (tensor<1x32x32x32xf32>, tensor<1x32x6x6xf32>, tensor<1x32x6x6xf32>, tensor<1x32x32x32xf32>, tensor<1x16x6x6xf32>, tensor<1x32x7x7xf32>, tensor<1x32x6x6xf32>, tensor<1x128x17x17xf32>, tensor<1x128x3x3xf32>, tensor<1x64x7x7xf32>, tensor<1x128x32x33xf32>, tensor<1x128x17x17xf32>, tensor<1x40x28x28xf32>, tensor<1x1000x13x13xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<32x16x1x1xf32>
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x16x32x32xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x32x32xf32>
  %wg = "mlvm.param"() <{name = "wg"}> : () -> tensor<32x16x3x3xf32>
  %1 = "mlvm.conv2d"(%g, %wg) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64}> : (tensor<1x32x6x6xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x6x6xf32>
  %ws = "mlvm.param"() <{name = "ws"}> : () -> tensor<32x16x1x1xf32>
  %2 = "mlvm.conv2d"(%s, %ws) : (tensor<1x16x6x6xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x6x6xf32>
  %3 = "mlvm.conv2d"(%x, %ws) : (tensor<1x16x32x32xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x32x32xf32>
  %w16 = "mlvm.param"() <{name = "w16"}> : () -> tensor<16x16x3x3xf32>
  %4 = "mlvm.conv2d"(%s, %w16) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x16x6x6xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x6x6xf32>
  %wd = "mlvm.param"() <{name = "wd"}> : () -> tensor<32x513x3x3xf32>
  %5 = "mlvm.conv2d"(%d, %wd) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x513x7x7xf32>, tensor<32x513x3x3xf32>) -> tensor<1x32x7x7xf32>
  %6 = "mlvm.conv2d"(%s, %wi) : (tensor<1x16x6x6xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x6x6xf32>
  %wb = "mlvm.param"() <{name = "wb"}> : () -> tensor<128x469x1x1xf32>
  %7 = "mlvm.conv2d"(%e, %wb) : (tensor<1x469x17x17xf32>, tensor<128x469x1x1xf32>) -> tensor<1x128x17x17xf32>
  %wf = "mlvm.param"() <{name = "wf"}> : () -> tensor<128x511x1x1xf32>
  %8 = "mlvm.conv2d"(%f, %wf) <{strides = array<i64: 2, 2>}> : (tensor<1x511x6x6xf32>, tensor<128x511x1x1xf32>) -> tensor<1x128x3x3xf32>
  %wh = "mlvm.param"() <{name = "wh"}> : () -> tensor<64x257x3x3xf32>
  %9 = "mlvm.conv2d"(%h, %wh) <{strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x257x14x14xf32>, tensor<64x257x3x3xf32>) -> tensor<1x64x7x7xf32>
  %wk = "mlvm.param"() <{name = "wk"}> : () -> tensor<128x512x1x1xf32>
  %10 = "mlvm.conv2d"(%k, %wk) : (tensor<1x512x32x33xf32>, tensor<128x512x1x1xf32>) -> tensor<1x128x32x33xf32>
  %wm = "mlvm.param"() <{name = "wm"}> : () -> tensor<128x511x1x1xf32>
  %11 = "mlvm.conv2d"(%m, %wm) : (tensor<1x511x17x17xf32>, tensor<128x511x1x1xf32>) -> tensor<1x128x17x17xf32>
  %wn = "mlvm.param"() <{name = "wn"}> : () -> tensor<40x512x1x1xf32>
  %12 = "mlvm.conv2d"(%n, %wn) : (tensor<1x512x28x28xf32>, tensor<40x512x1x1xf32>) -> tensor<1x40x28x28xf32>
  %wq = "mlvm.param"() <{name = "wq"}> : () -> tensor<1000x512x1x1xf32>
  %13 = "mlvm.conv2d"(%q, %wq) : (tensor<1x512x13x13xf32>, tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<1x32x32x32xf32>, tensor<1x32x6x6xf32>, tensor<1x32x6x6xf32>, tensor<1x32x32x32xf32>, tensor<1x16x6x6xf32>, tensor<1x32x7x7xf32>, tensor<1x32x6x6xf32>, tensor<1x128x17x17xf32>, tensor<1x128x3x3xf32>, tensor<1x64x7x7xf32>, tensor<1x128x32x33xf32>, tensor<1x128x17x17xf32>, tensor<1x40x28x28xf32>, tensor<1x1000x13x13xf32>
}

// -----
// A large weight read only as a rank-2 matmul's rhs is stored in panels 32
// columns wide (after its transposition, for a PyTorch-layout one); a ragged
// 1000 columns pad to 1024. Fused or not, the matmuls read the panels.
// CHECK-LABEL: func.func @panels
// CHECK: %w = "mlvm.param"() <{name = "w", panel = array<i64: 32, 1000>, perm = array<i64: 1, 0>}> : () -> tensor<32x1024x32xf32>
// CHECK: "mlvm.matmul"(%x, %w) <{transpose_rhs = false, rhs_panel = 32 : i64}> : (tensor<8x1024xf32>, tensor<32x1024x32xf32>) -> tensor<8x1000xf32>
// CHECK: %v = "mlvm.param"() <{name = "v", panel = array<i64: 32, 512>}> : () -> tensor<16x1000x32xf32>
// CHECK: "mlvm.matmul"(%0, %v) <{rhs_panel = 32 : i64}> : (tensor<8x1000xf32>, tensor<16x1000x32xf32>) -> tensor<8x512xf32>
func.func @panels(%x: tensor<8x1024xf32>) -> tensor<8x512xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<1000x1024xf32>
  %0 = "mlvm.matmul"(%x, %w) <{transpose_rhs = true}> : (tensor<8x1024xf32>, tensor<1000x1024xf32>) -> tensor<8x1000xf32>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<1000x512xf32>
  %1 = "mlvm.matmul"(%0, %v) : (tensor<8x1000xf32>, tensor<1000x512xf32>) -> tensor<8x512xf32>
  func.return %1 : tensor<8x512xf32>
}

// -----
// A smaller weight (128 x 128 elements up) whose products all have 2 to 64
// rows (a batched Linear layer), the rows of a transposed lhs counted as
// its columns.
// CHECK-LABEL: func.func @few_rows
// CHECK: %s = "mlvm.param"() <{name = "s", panel = array<i64: 32, 256>}> : () -> tensor<8x256x32xf32>
// CHECK: "mlvm.matmul"(%x, %s) <{rhs_panel = 32 : i64}> : (tensor<8x256xf32>, tensor<8x256x32xf32>) -> tensor<8x256xf32>
// CHECK: "mlvm.matmul"(%y, %s) <{transpose_lhs = true, rhs_panel = 32 : i64}> : (tensor<256x64xf32>, tensor<8x256x32xf32>) -> tensor<64x256xf32>
// CHECK: %t = "mlvm.param"() <{name = "t", panel = array<i64: 32, 128>}> : () -> tensor<4x128x32xf32>
// CHECK: "mlvm.matmul"(%w, %t) <{rhs_panel = 32 : i64}> : (tensor<2x128xf32>, tensor<4x128x32xf32>) -> tensor<2x128xf32>
func.func @few_rows(%x: tensor<8x256xf32>, %y: tensor<256x64xf32>, %w: tensor<2x128xf32>) -> (tensor<8x256xf32>, tensor<64x256xf32>, tensor<2x128xf32>) {
  %s = "mlvm.param"() <{name = "s"}> : () -> tensor<256x256xf32>
  %0 = "mlvm.matmul"(%x, %s) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
  %1 = "mlvm.matmul"(%y, %s) <{transpose_lhs = true}> : (tensor<256x64xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  %t = "mlvm.param"() <{name = "t"}> : () -> tensor<128x128xf32>
  %2 = "mlvm.matmul"(%w, %t) : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
  func.return %0, %1, %2 : tensor<8x256xf32>, tensor<64x256xf32>, tensor<2x128xf32>
}

// -----
// No panels: a small weight of one row's product (its vector kernels are
// faster in place), of 65 rows', of one row's and eight rows' products
// (either order), ones below 128 x 128 elements (64 x 64, 127 x 128), one
// padded by more than 1/16 (300 columns stored as 320), one also read as
// an lhs, and a batched product's weight.
// CHECK-LABEL: func.func @no_panels
// CHECK-NOT: panel
// CHECK: func.return
func.func @no_panels(%x: tensor<1x256xf32>, %y: tensor<4x1000xf32>, %z: tensor<2x4x512xf32>, %v: tensor<65x256xf32>, %u: tensor<8x256xf32>, %q: tensor<8x64xf32>, %p: tensor<8x127xf32>) -> (tensor<1x256xf32>, tensor<4x300xf32>, tensor<512x512xf32>, tensor<2x4x512xf32>, tensor<65x256xf32>, tensor<1x256xf32>, tensor<8x256xf32>, tensor<8x64xf32>, tensor<8x256xf32>, tensor<1x256xf32>, tensor<8x128xf32>) {
  %s = "mlvm.param"() <{name = "s"}> : () -> tensor<256x256xf32>
  %0 = "mlvm.matmul"(%x, %s) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %h = "mlvm.param"() <{name = "h"}> : () -> tensor<256x256xf32>
  %4 = "mlvm.matmul"(%v, %h) : (tensor<65x256xf32>, tensor<256x256xf32>) -> tensor<65x256xf32>
  %g = "mlvm.param"() <{name = "g"}> : () -> tensor<256x256xf32>
  %5 = "mlvm.matmul"(%x, %g) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %6 = "mlvm.matmul"(%u, %g) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
  %f = "mlvm.param"() <{name = "f"}> : () -> tensor<64x64xf32>
  %7 = "mlvm.matmul"(%q, %f) : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %e = "mlvm.param"() <{name = "e"}> : () -> tensor<256x256xf32>
  %8 = "mlvm.matmul"(%u, %e) : (tensor<8x256xf32>, tensor<256x256xf32>) -> tensor<8x256xf32>
  %9 = "mlvm.matmul"(%x, %e) : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>
  %d = "mlvm.param"() <{name = "d"}> : () -> tensor<127x128xf32>
  %10 = "mlvm.matmul"(%p, %d) : (tensor<8x127xf32>, tensor<127x128xf32>) -> tensor<8x128xf32>
  %r = "mlvm.param"() <{name = "r"}> : () -> tensor<1000x300xf32>
  %1 = "mlvm.matmul"(%y, %r) : (tensor<4x1000xf32>, tensor<1000x300xf32>) -> tensor<4x300xf32>
  %l = "mlvm.param"() <{name = "l"}> : () -> tensor<512x512xf32>
  %2 = "mlvm.matmul"(%l, %l) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
  %b = "mlvm.param"() <{name = "b"}> : () -> tensor<2x512x512xf32>
  %3 = "mlvm.matmul"(%z, %b) : (tensor<2x4x512xf32>, tensor<2x512x512xf32>) -> tensor<2x4x512xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<1x256xf32>, tensor<4x300xf32>, tensor<512x512xf32>, tensor<2x4x512xf32>, tensor<65x256xf32>, tensor<1x256xf32>, tensor<8x256xf32>, tensor<8x64xf32>, tensor<8x256xf32>, tensor<1x256xf32>, tensor<8x128xf32>
}

// -----
// An i8 weight read by int8 convolutions with 4 or more outputs per group
// is stored in the kernel's lanes (four input channels per lane, [8, 4 *
// 2 * 3 * 3]; one input channel: nine taps in three lanes, [16, 12]).
// CHECK-LABEL: func.func @qconv_lanes
// CHECK: %w = "mlvm.param"() <{name = "w", lanes = array<i64: 6, 3, 3>}> : () -> tensor<8x72xi8>
// CHECK: "mlvm.qconv2d"(%x, %w, %zx, %zw) <{w_lanes = array<i64: 3, 3>}> : (tensor<1x6x5x5xui8>, tensor<8x72xi8>, tensor<ui8>, tensor<i8>)
// CHECK: %s = "mlvm.param"() <{name = "s", lanes = array<i64: 1, 3, 3>}> : () -> tensor<16x12xi8>
// CHECK: "mlvm.qconv2d_requant"(%y, %s, %zx, %zw, %m, %zy) <{relu = 1 : i64, w_lanes = array<i64: 3, 3>}>
func.func @qconv_lanes(%x: tensor<1x6x5x5xui8>, %y: tensor<1x1x5x5xui8>, %zx: tensor<ui8>, %zw: tensor<i8>, %m: tensor<f32>, %zy: tensor<ui8>) -> (tensor<1x8x3x3xi32>, tensor<1x16x3x3xui8>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<8x6x3x3xi8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x6x5x5xui8>, tensor<8x6x3x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x8x3x3xi32>
  %s = "mlvm.param"() <{name = "s"}> : () -> tensor<16x1x3x3xi8>
  %1 = "mlvm.qconv2d_requant"(%y, %s, %zx, %zw, %m, %zy) <{relu = 1 : i64}> : (tensor<1x1x5x5xui8>, tensor<16x1x3x3xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x3x3xui8>
  func.return %0, %1 : tensor<1x8x3x3xi32>, tensor<1x16x3x3xui8>
}

// -----
// A Linear weight read as a 1x1 convolution's (mlvm-fuse-qdq): its view of
// the archive's [N, K] or [K, N] array, and the perm of a [K, N] one, stay
// on the param stored in lanes.
// CHECK-LABEL: func.func @qconv_lanes_view
// CHECK: %w = "mlvm.param"() <{name = "w", lanes = array<i64: 8, 1, 1>, view = array<i64: 6, 8>}> : () -> tensor<6x8xi8>
// CHECK: %v = "mlvm.param"() <{name = "v", perm = array<i64: 1, 0, 2, 3>, lanes = array<i64: 8, 1, 1>, view = array<i64: 8, 6>}> : () -> tensor<6x8xi8>
func.func @qconv_lanes_view(%x: tensor<1x8x1x1xui8>, %zx: tensor<ui8>, %zw: tensor<i8>, %m: tensor<f32>, %zy: tensor<ui8>) -> (tensor<1x6x1x1xui8>, tensor<1x6x1x1xui8>) {
  %w = "mlvm.param"() <{name = "w", view = array<i64: 6, 8>}> : () -> tensor<6x8x1x1xi8>
  %0 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy) : (tensor<1x8x1x1xui8>, tensor<6x8x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x6x1x1xui8>
  %v = "mlvm.param"() <{name = "v", view = array<i64: 8, 6>, perm = array<i64: 1, 0, 2, 3>}> : () -> tensor<6x8x1x1xi8>
  %1 = "mlvm.qconv2d_requant"(%x, %v, %zx, %zw, %m, %zy) : (tensor<1x8x1x1xui8>, tensor<6x8x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<f32>, tensor<ui8>) -> tensor<1x6x1x1xui8>
  func.return %0, %1 : tensor<1x6x1x1xui8>, tensor<1x6x1x1xui8>
}

// -----
// Must not: u8 weights, fewer than 4 outputs per group (depthwise: the taps
// kernel reads OIHW), a weight that is an input.
// CHECK-LABEL: func.func @qconv_must_not
// CHECK-NOT: lanes
func.func @qconv_must_not(%x: tensor<1x6x5x5xui8>, %wi: tensor<8x6x3x3xi8>, %zx: tensor<ui8>, %zw: tensor<i8>, %zu: tensor<ui8>) -> (tensor<1x8x3x3xi32>, tensor<1x6x3x3xi32>, tensor<1x8x3x3xi32>) {
  %u = "mlvm.param"() <{name = "u"}> : () -> tensor<8x6x3x3xui8>
  %0 = "mlvm.qconv2d"(%x, %u, %zx, %zu) : (tensor<1x6x5x5xui8>, tensor<8x6x3x3xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x8x3x3xi32>
  %d = "mlvm.param"() <{name = "d"}> : () -> tensor<6x1x3x3xi8>
  %1 = "mlvm.qconv2d"(%x, %d, %zx, %zw) <{groups = 6 : i64}> : (tensor<1x6x5x5xui8>, tensor<6x1x3x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x6x3x3xi32>
  %2 = "mlvm.qconv2d"(%x, %wi, %zx, %zw) : (tensor<1x6x5x5xui8>, tensor<8x6x3x3xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x8x3x3xi32>
  func.return %0, %1, %2 : tensor<1x8x3x3xi32>, tensor<1x6x3x3xi32>, tensor<1x8x3x3xi32>
}

// -----
// Output channels not a multiple of 32 (48): the IHWO weights stay in rows
// of all channels (panels would need padding, which the convolution's
// sizes, taken from w, could not tell apart).
// CHECK-LABEL: func.func @ihwo_no_panels
// CHECK: %p = "mlvm.param"() <{name = "p", perm = array<i64: 1, 2, 3, 0>}> : () -> tensor<64x1x1x48xf32>
// CHECK: "mlvm.conv2d"(%y, %p) <{w_layout = "ihwo"}>
func.func @ihwo_no_panels(%y: tensor<2x64x3x3xf32>) -> tensor<2x48x3x3xf32> {
  %p = "mlvm.param"() <{name = "p"}> : () -> tensor<48x64x1x1xf32>
  %0 = "mlvm.conv2d"(%y, %p) : (tensor<2x64x3x3xf32>, tensor<48x64x1x1xf32>) -> tensor<2x48x3x3xf32>
  func.return %0 : tensor<2x48x3x3xf32>
}
