// RUN: mlvm-opt %s --split-input-file -p mlvm-fuse | filecheck %s
// RUN: mlvm-opt %s --split-input-file -p mlvm-fuse,mlvm-inplace,mlvm-plan-memory -t c | filecheck %s --check-prefix=C
// RUN: mlvm-opt %s --split-input-file -p 'mlvm-fuse{epilogues=false}' | filecheck %s --check-prefix=NOEPI

// A matmul, its bias add and activation, and a tree joining another
// elementwise branch, become one op: the matmul is the head, computed into
// the output by one GEMM that finishes each tile there with the epilogue.
// CHECK-LABEL: func.func @tree
// CHECK-NEXT: %{{.*}} = "mlvm.fused"(%x, %w, %b) ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x8xf32>, %{{.*}}: tensor<8xf32>):
// CHECK-NEXT: "mlvm.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: "mlvm.add"
// CHECK-NEXT: "mlvm.relu"
// CHECK-NEXT: "mlvm.exp"(%[[A]])
// CHECK-NEXT: "mlvm.mul"
// CHECK-NEXT: "mlvm.fused_yield"
// CHECK-NEXT: }) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: func.return
// The epilogue is a function the GEMM calls on each finished tile.
// C: static void [[EPI:[a-z_0-9]+]](const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
// C: const float h = row[j];
// C: const float a2 = in2[(i0 + i) * 0 + (j0 + j) * 1];
// C: row[j] = t3;
// C-LABEL: mlvm_status_t module_tree({{[^;]*$}}
// C: mlvm_matmul_epilogue_f32(&{{.*}}, in0, in1, out, [[EPI]], ctx);
// Without epilogues the matmul stays a kernel call.
// NOEPI-LABEL: func.func @tree
// NOEPI: %m = "mlvm.matmul"
// NOEPI-NEXT: "mlvm.fused"(%m, %b, %x)
func.func @tree(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %m = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %0 = "mlvm.add"(%m, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.relu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.mul"(%1, %e) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----
// A value read twice inside the tree is computed once per element (t0);
// one also read outside the tree stays an op of its own (it must exist in
// memory anyway); a producer of a smaller shape (it would be recomputed per
// row) stays outside and is read with broadcasting.
// CHECK-LABEL: func.func @boundaries
// CHECK: %0 = "mlvm.neg"(%b)
// CHECK: %s = "mlvm.sqrt"(%x)
// CHECK: "mlvm.fused"(%x, %0, %s)
// CHECK: "mlvm.exp"
// CHECK-NOT: "mlvm.sqrt"
// CHECK: "mlvm.fused_yield"
// C-LABEL: mlvm_status_t module_boundaries(
// C: const float t0 = mlvm_expf(a0);
// C: const float t3 = (t2 - t0);
func.func @boundaries(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = "mlvm.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.neg"(%b) : (tensor<8xf32>) -> tensor<8xf32>
  %s = "mlvm.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "mlvm.add"(%0, %1) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %3 = "mlvm.tanh"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "mlvm.sub"(%3, %0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = "mlvm.mul"(%4, %s) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %5, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----
// A lone elementwise op is left to its kernel; non-elementwise ops split
// chains (a reduction over a leading axis ends no fused op).
// CHECK-LABEL: func.func @single
// CHECK-NOT: mlvm.fused
// CHECK: func.return
func.func @single(%x: tensor<4x4xf32>) -> tensor<4xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "mlvm.reduce"(%0) <{kind = "sum", axes = array<i64: 0>}> : (tensor<4x4xf32>) -> tensor<4xf32>
  %2 = "mlvm.log"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// -----
// Integer ops fuse with their own scalar forms (wrapping arithmetic), and a
// comparison turns them into f32.
// CHECK-LABEL: func.func @ints
// CHECK: "mlvm.fused"(%a, %b)
// C-LABEL: mlvm_status_t module_ints(
// C: const int32_t t0 = ((int32_t)((uint32_t)a0 + (uint32_t)a1));
// C: const float t1 = ((t0 > a1) ? 1.0f : 0.0f);
func.func @ints(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xf32> {
  %0 = "mlvm.add"(%a, %b) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %1 = "mlvm.cmpl"(%0, %b) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xf32>
  func.return %1 : tensor<6xf32>
}

// -----
// A conv2d is a head too: its outputs, seen as the matrix [n * o, oh * ow],
// go to the epilogue group by group. The residual reads (i, j) at i * 81 +
// j, the per-channel shift of a single image at i, the scalar at 0. The
// convolution's workspace belongs to the fused op.
// CHECK-LABEL: func.func @conv_head
// CHECK-NEXT: %{{.*}} = "mlvm.fused"(%x, %w, %b, %r, %c, %lo) ({
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<1x8x9x9xf32>, %[[W:.*]]: tensor<8x8x3x3xf32>, %[[B:.*]]: tensor<8xf32>,
// CHECK-NEXT: "mlvm.conv2d"(%[[X]], %[[W]], %[[B]])
// C-LABEL: static void {{[a-z_0-9]+}}(const void *ctx, mlvm_index_t i0, mlvm_index_t rows,
// C: const float a3 = in3[(i0 + i) * 81 + (j0 + j) * 1];
// C: const float a4 = in4[(i0 + i) * 1 + (j0 + j) * 0];
// C: const float a5 = in5[(i0 + i) * 0 + (j0 + j) * 0];
// C-LABEL: mlvm_status_t module_conv_head({{[^;]*$}}
// C: mlvm_conv2d_direct_ws_f32(&{{.*}}, in0, in1, in2, out, ((void *)(arena + {{[0-9]+}})), {{[a-z_0-9]+}}, ctx);
// NOEPI-LABEL: func.func @conv_head
// NOEPI: %0 = "mlvm.conv2d"
func.func @conv_head(%x: tensor<1x8x9x9xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>, %r: tensor<1x8x9x9xf32>, %c: tensor<1x8x1x1xf32>, %lo: tensor<1xf32>) -> tensor<1x8x9x9xf32> {
  %0 = "mlvm.conv2d"(%x, %w, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x9x9xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x9x9xf32>
  %1 = "mlvm.add"(%0, %r) : (tensor<1x8x9x9xf32>, tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  %2 = "mlvm.sub"(%1, %c) : (tensor<1x8x9x9xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x9x9xf32>
  %3 = "mlvm.max"(%2, %lo) : (tensor<1x8x9x9xf32>, tensor<1xf32>) -> tensor<1x8x9x9xf32>
  func.return %3 : tensor<1x8x9x9xf32>
}

// -----
// Over two images a per-channel operand has no (i, j) strides: the tree is
// fused without the convolution.
// CHECK-LABEL: func.func @conv_not_head
// CHECK-NEXT: %0 = "mlvm.conv2d"(%x, %w)
// CHECK-NEXT: "mlvm.fused"(%0, %c)
func.func @conv_not_head(%x: tensor<2x8x9x9xf32>, %w: tensor<8x8x3x3xf32>, %c: tensor<1x8x1x1xf32>) -> tensor<2x8x9x9xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<2x8x9x9xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x9x9xf32>
  %1 = "mlvm.sub"(%0, %c) : (tensor<2x8x9x9xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x9x9xf32>
  %2 = "mlvm.relu"(%1) : (tensor<2x8x9x9xf32>) -> tensor<2x8x9x9xf32>
  func.return %2 : tensor<2x8x9x9xf32>
}

// -----
// A dequantized map read only by a mean over its last axes (a global
// average pool): the mean ends the fused op, which computes a chunk of four
// rows of 125 at a time into its workspace and sums each by the runtime's
// row function: the map is never stored whole.
// CHECK-LABEL: func.func @reduce_tail
// CHECK-NEXT: %{{.*}} = "mlvm.fused"(%q, %s, %z) ({
// CHECK-NEXT: ^bb0(%[[Q:.*]]: tensor<1x16x25x5xui8>, %[[S:.*]]: tensor<f32>, %[[Z:.*]]: tensor<ui8>):
// CHECK-NEXT: %[[V:.*]] = "mlvm.dequantize"(%[[Q]], %[[S]], %[[Z]])
// CHECK-NEXT: %[[M:.*]] = "mlvm.reduce"(%[[V]]) <{kind = "mean", axes = array<i64: 2, 3>, keepdims = true}>
// CHECK-NEXT: "mlvm.fused_yield"(%[[M]])
// CHECK-NEXT: }) : (tensor<1x16x25x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x1x1xf32>
// C-LABEL: mlvm_status_t module_reduce_tail(
// C: const float a1 = in1[0];
// C: float *restrict buf = (float *)((void *)(arena + {{[0-9]+}}));
// C: for (o = 0; o < 16; o += 4) {
// C: const uint8_t a0 = in0[o * 125 + j];
// C: buf[j] = t0;
// C: out[o + r] = (0.0f + mlvm_row_sum_f32(125, buf + r * 125)) / (float)125;
// NOEPI-LABEL: func.func @reduce_tail
// NOEPI-NEXT: "mlvm.fused"
func.func @reduce_tail(%q: tensor<1x16x25x5xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x16x1x1xf32> {
  %v = "mlvm.dequantize"(%q, %s, %z) : (tensor<1x16x25x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x16x25x5xf32>
  %m = "mlvm.reduce"(%v) <{kind = "mean", axes = array<i64: 2, 3>, keepdims = true}> : (tensor<1x16x25x5xf32>) -> tensor<1x16x1x1xf32>
  func.return %m : tensor<1x16x1x1xf32>
}

// -----
// Not ends of a fused op: a reduction over a leading axis, of a value
// something else reads too, of a tree reading a per-channel operand, an
// integer one, one whose rows all fit one chunk (nothing to save), and one
// of a tree that can take the buffer of an f32 value dying in it (the
// softmax's: the chunk would only add to the arena).
// CHECK-LABEL: func.func @no_reduce_tail
// CHECK-NOT: "mlvm.fused"
// CHECK: func.return
func.func @no_reduce_tail(%x: tensor<3x8xf32>, %c: tensor<3x1xf32>, %i: tensor<3x8xi32>, %y: tensor<64x8xf32>, %t: tensor<600x8xf32>) -> (tensor<1x8xf32>, tensor<3x1xf32>, tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xi32>, tensor<64x1xf32>, tensor<600x1xf32>) {
  %a = "mlvm.exp"(%x) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %ra = "mlvm.reduce"(%a) <{kind = "sum", axes = array<i64: 0>, keepdims = true}> : (tensor<3x8xf32>) -> tensor<1x8xf32>
  %b = "mlvm.neg"(%x) : (tensor<3x8xf32>) -> tensor<3x8xf32>
  %rb = "mlvm.reduce"(%b) <{kind = "max", axes = array<i64: 1>, keepdims = true}> : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %d = "mlvm.mul"(%x, %c) : (tensor<3x8xf32>, tensor<3x1xf32>) -> tensor<3x8xf32>
  %rd = "mlvm.reduce"(%d) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<3x8xf32>) -> tensor<3x1xf32>
  %n = "mlvm.neg"(%i) : (tensor<3x8xi32>) -> tensor<3x8xi32>
  %rn = "mlvm.reduce"(%n) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<3x8xi32>) -> tensor<3x1xi32>
  %e = "mlvm.exp"(%y) : (tensor<64x8xf32>) -> tensor<64x8xf32>
  %re = "mlvm.reduce"(%e) <{kind = "max", axes = array<i64: 1>, keepdims = true}> : (tensor<64x8xf32>) -> tensor<64x1xf32>
  %sm = "mlvm.softmax"(%t) <{axis = 1 : i64}> : (tensor<600x8xf32>) -> tensor<600x8xf32>
  %es = "mlvm.exp"(%sm) : (tensor<600x8xf32>) -> tensor<600x8xf32>
  %rs = "mlvm.reduce"(%es) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<600x8xf32>) -> tensor<600x1xf32>
  func.return %ra, %rb, %b, %rd, %rn, %re, %rs : tensor<1x8xf32>, tensor<3x1xf32>, tensor<3x8xf32>, tensor<3x1xf32>, tensor<3x1xi32>, tensor<64x1xf32>, tensor<600x1xf32>
}

// -----
// A matmul's tree read by a reduction keeps the matmul as its head (its
// epilogue stores nothing more; a tail would read its whole output).
// CHECK-LABEL: func.func @head_before_tail
// CHECK-NEXT: %[[F:.*]] = "mlvm.fused"(%x, %w) ({
// CHECK-NEXT: ^bb0
// CHECK-NEXT: "mlvm.matmul"
// CHECK-NEXT: "mlvm.relu"
// CHECK-NEXT: "mlvm.fused_yield"
// CHECK: "mlvm.reduce"(%[[F]])
func.func @head_before_tail(%x: tensor<600x16xf32>, %w: tensor<16x8xf32>) -> tensor<600x1xf32> {
  %m = "mlvm.matmul"(%x, %w) : (tensor<600x16xf32>, tensor<16x8xf32>) -> tensor<600x8xf32>
  %r = "mlvm.relu"(%m) : (tensor<600x8xf32>) -> tensor<600x8xf32>
  %s = "mlvm.reduce"(%r) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<600x8xf32>) -> tensor<600x1xf32>
  func.return %s : tensor<600x1xf32>
}

// -----
// A tree may end in an op whose own kernel beats its scalar form in a
// loop (exp, sigmoid, erf, GELU in either form: the kernel root). It fuses
// as any op; the C then holds two forms: where the runtime's array kernels
// are vectors (MLVM_VECTOR_MATH) the loop or epilogue without it, then the
// kernel over the output in place (a bias alone goes to the GEMM's tile
// kernels), else the loop or epilogue with it; the statics each form
// defines are under its condition. tanh, f64, an op inside a tree ending
// in another (SiLU) and a tree ended by a reduction keep one form.
// CHECK-LABEL: func.func @kernel_faster
// CHECK-NEXT: %g = "mlvm.fused"(%x, %w, %b) ({
// CHECK-NEXT: ^bb0
// CHECK-NEXT: "mlvm.matmul"
// CHECK-NEXT: "mlvm.add"
// CHECK-NEXT: "mlvm.gelu"
// CHECK-NEXT: "mlvm.fused_yield"
// NOEPI-LABEL: func.func @kernel_faster
// NOEPI: %m = "mlvm.matmul"
// NOEPI-NEXT: %g = "mlvm.fused"(%m, %b)
// NOEPI-NEXT: ^bb0
// NOEPI-NEXT: "mlvm.add"
// NOEPI-NEXT: "mlvm.gelu"
// C: #if MLVM_VECTOR_MATH
// C-NEXT: static const mlvm_matmul_t [[MV:module__s[0-9]+]] =
// C-NEXT: #endif
// C-NEXT: #if !MLVM_VECTOR_MATH
// C-NEXT: static const mlvm_matmul_t [[MS:module__s[0-9]+]] =
// C-NEXT: #endif
// C-NEXT: #if !MLVM_VECTOR_MATH
// C-NEXT: static void [[EPI:module__s[0-9]+]](const void *ctx,
// C: const float t1 = mlvm_gelu_erf(t0);
// C-LABEL: mlvm_status_t module_kernel_faster({{[^;]*$}}
// C: #if MLVM_VECTOR_MATH
// C: mlvm_matmul_epilogue_f32(&[[MV]], in0, in1, out, mlvm_epilogue_bias_f32, &bias);
// C-NEXT: }
// C-NEXT: mlvm_gelu_erf_f32(32, out0, out0);
// C-NEXT: #else
// C: mlvm_matmul_epilogue_f32(&[[MS]], in0, in1, out, [[EPI]], ctx);
// C-NEXT: }
// C: #endif
// C: #if MLVM_VECTOR_MATH
// C: mlvm_gelu_tanh_f32(32, out1, out1);
// C-NEXT: #else
// C: #endif
// The tanh: one loop.
// C: {
// C: const float t1 = mlvm_tanhf(t0);
// C: }
// A chain: the exp stays in the loop, the sigmoid ends it.
// C: #if MLVM_VECTOR_MATH
// C: const float t1 = mlvm_expf(t0);
// C-NEXT: out[i0] = t1;
// C: mlvm_sigmoid_f32(32, out2, out2);
// C-NEXT: #else
// C: const float t2 = mlvm_sigmoidf(t1);
// C: #endif
// C: #if MLVM_VECTOR_MATH
// C: mlvm_erf_f32(32, out3, out3);
// C: #endif
// f64, SiLU, the tail: one form each.
// C-NOT: MLVM_VECTOR_MATH
// C: const double t1 = exp(t0);
// C-NOT: MLVM_VECTOR_MATH
// C: const float t1 = (a0 * t0);
// C-NOT: MLVM_VECTOR_MATH
// C: mlvm_row_sum_f32
// C-NOT: MLVM_VECTOR_MATH
// C: return MLVM_OK;
func.func @kernel_faster(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>, %d: tensor<4x8xf64>, %y: tensor<600x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>, tensor<600x1xf32>, tensor<4x8xf32>) {
  %m = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %0 = "mlvm.add"(%m, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %g = "mlvm.gelu"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = "mlvm.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "mlvm.add"(%m2, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = "mlvm.gelu"(%1) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %ab = "mlvm.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %th = "mlvm.tanh"(%ab) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = "mlvm.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "mlvm.exp"(%n) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = "mlvm.sigmoid"(%e) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %n2 = "mlvm.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = "mlvm.erf"(%n2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %nd = "mlvm.neg"(%d) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %ed = "mlvm.exp"(%nd) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %si = "mlvm.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %silu = "mlvm.mul"(%x, %si) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %ny = "mlvm.neg"(%y) : (tensor<600x8xf32>) -> tensor<600x8xf32>
  %ey = "mlvm.exp"(%ny) : (tensor<600x8xf32>) -> tensor<600x8xf32>
  %sy = "mlvm.reduce"(%ey) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<600x8xf32>) -> tensor<600x1xf32>
  func.return %g, %t, %s, %r, %ed, %silu, %sy, %th : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>, tensor<600x1xf32>, tensor<4x8xf32>
}
