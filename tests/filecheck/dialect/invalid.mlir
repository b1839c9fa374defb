// RUN: mlvm-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier messages: one line, with the file, line, op and shapes.

func.func @f(%a: tensor<4x3xf32>, %b: tensor<5xf32>) -> tensor<4x3xf32> {
  %0 = "mlvm.add"(%a, %b) : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: invalid.mlir:6:3: error: mlvm.add: operands lhs tensor<4x3xf32> and rhs tensor<5xf32> do not broadcast

// -----
func.func @f(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x4xf32> {
  %0 = "mlvm.mul"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.mul: result type tensor<4x4xf32> does not match the expected tensor<4x3xf32>

// -----
func.func @f(%a: tensor<4x3xi1>) -> tensor<4x3xi1> {
  %0 = "mlvm.div"(%a, %a) : (tensor<4x3xi1>, tensor<4x3xi1>) -> tensor<4x3xi1>
  func.return %0 : tensor<4x3xi1>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.div: lhs tensor<4x3xi1> must have element type f16, bf16, f32, f64, i8, i16, i32, i64, ui8, ui16, ui32 or ui64

// -----
func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x3xi32>) -> tensor<4x3xf32> {
  %0 = "mlvm.sub"(%a, %b) : (tensor<4x3xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.sub: operand element types differ: lhs tensor<4x3xf32>, rhs tensor<4x3xi32>

// -----
func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "mlvm.matmul"(%a, %b) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.matmul: contraction dims differ (3 vs 4) for lhs tensor<4x3xf32> and rhs tensor<4x3xf32>

// -----
func.func @f(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x4x5xf32> {
  %0 = "mlvm.matmul"(%a, %b) : (tensor<2x4x3xf32>, tensor<3x5xf32>) -> tensor<2x4x5xf32>
  func.return %0 : tensor<2x4x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.matmul: lhs tensor<2x4x3xf32> and rhs tensor<3x5xf32> must both be rank 2, or both rank >= 3 with batch dims

// -----
func.func @f(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<2x4x5xf32> {
  %0 = "mlvm.matmul"(%a, %b) : (tensor<2x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x4x5xf32>
  func.return %0 : tensor<2x4x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.matmul: batch dims of lhs tensor<2x4x3xf32> and rhs tensor<3x3x5xf32> do not broadcast

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = "mlvm.reduce"(%a) <{kind = "median", axes = array<i64: 1>}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.reduce: kind 'median' is not one of sum, max, mean, min, prod

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = "mlvm.reduce"(%a) <{kind = "sum", axes = array<i64: 2>}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.reduce: axis 2 is out of range for operand tensor<4x3xf32>

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = "mlvm.reduce"(%a) <{kind = "sum", axes = array<i64: 1, -1>}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.reduce: axis -1 is repeated in axes

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = "mlvm.reduce"(%a) <{kind = "max", axes = array<i64: 1>, keepdims = true}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.reduce: result type tensor<4xf32> does not match the expected tensor<4x1xf32>

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xi32> {
  %0 = "mlvm.argmax"(%a) <{axis = 3 : i64}> : (tensor<4x3xf32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.argmax: axis 3 is out of range for operand tensor<4x3xf32>

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = "mlvm.argmax"(%a) <{axis = 1 : i64}> : (tensor<4x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.argmax: result tensor<4xf32> must have element type i32 or i64

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<5x2xf32> {
  %0 = "mlvm.reshape"(%a) : (tensor<4x3xf32>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.reshape: cannot reshape operand tensor<4x3xf32> (12 elements) to tensor<5x2xf32> (10 elements)

// -----
func.func @f(%a: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %0 = "mlvm.broadcast_to"(%a) : (tensor<4x3xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.broadcast_to: operand tensor<4x3xf32> does not broadcast to tensor<4x6xf32>

// -----
func.func @f(%a: tensor<4x3xf32>, %b: tensor<4x4xf32>) -> tensor<4xf32> {
  %l, %g = "mlvm.softmax_xent"(%a, %b) : (tensor<4x3xf32>, tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4x4xf32>)
  func.return %l : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.softmax_xent: labels tensor<4x3xf32> and logits tensor<4x4xf32> must have the same shape, rank >= 1

// -----
func.func @f(%a: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %0 = "mlvm.exp"(%a) : (tensor<4x3xi32>) -> tensor<4x3xi32>
  func.return %0 : tensor<4x3xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.exp: operand tensor<4x3xi32> must have element type f16, bf16, f32 or f64

// -----
func.func @f(%a: tensor<4x3xi32>) -> tensor<4x3xi32> {
  %0 = "mlvm.relu"(%a) : (tensor<4x3xi32>) -> tensor<4x3xi32>
  func.return %0 : tensor<4x3xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.relu: operand tensor<4x3xi32> must have element type f16, bf16, f32 or f64

// -----
func.func @f() -> tensor<4xi32> {
  %0 = "mlvm.fill"() <{value = 2.5 : f32}> : () -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fill: value 2.5 is not an integer but the result is i32

// -----
func.func @f() -> tensor<3xf32> {
  %0 = "mlvm.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.constant: value type tensor<4xf32> does not match result type tensor<3xf32>

// -----
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlvm.rsqrt"(%a) <{eps = 1.0 : f64}> : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.rsqrt: property 'eps' must be an f32 float

// -----
func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "mlvm.neg"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %0 : tensor<?x4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.neg: operand tensor<?x4xf32> must have a static shape

// -----
"mlvm.global"() <{sym_name = "g", type = tensor<4xf32>}> : () -> ()
func.func @f() -> tensor<5xf32> {
  %0 = "mlvm.global_load"() <{global = @g}> : () -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.global_load: @g is tensor<4xf32>, but the op's value is tensor<5xf32>

// -----
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  "mlvm.global_store"(%a) <{global = @f}> : (tensor<4xf32>) -> ()
  func.return %a : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.global_store: @f is not an mlvm.global of this module

// -----
"mlvm.global"() <{sym_name = "g", type = tensor<?xf32>}> : () -> ()
// CHECK: invalid.mlir:{{[0-9]+}}:1: error: mlvm.global: @g has type tensor<?xf32>; a global needs a static shape of rank <= 8

// -----
func.func @f(%x: tensor<2x8x9x9xf32>, %w: tensor<8x8x3x3xf32>, %c: tensor<1x8x1x1xf32>) -> tensor<2x8x9x9xf32> {
  %0 = "mlvm.fused"(%x, %w, %c) ({
  ^bb0(%a: tensor<2x8x9x9xf32>, %b: tensor<8x8x3x3xf32>, %d: tensor<1x8x1x1xf32>):
    %1 = "mlvm.conv2d"(%a, %b) <{padding = array<i64: 1, 1, 1, 1>}> : (tensor<2x8x9x9xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x9x9xf32>
    %2 = "mlvm.sub"(%1, %d) : (tensor<2x8x9x9xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x9x9xf32>
    "mlvm.fused_yield"(%2) : (tensor<2x8x9x9xf32>) -> ()
  }) : (tensor<2x8x9x9xf32>, tensor<8x8x3x3xf32>, tensor<1x8x1x1xf32>) -> tensor<2x8x9x9xf32>
  func.return %0 : tensor<2x8x9x9xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: operand 2 cannot be read by a conv2d epilogue (per-channel over several images)

// -----
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "mlvm.fill"() <{value = 2.0 : f32}> : () -> tensor<4xf32>
  %y = "mlvm.fused"(%c) ({
  ^bb0(%a: tensor<4xf32>):
    %1 = "mlvm.mul"(%a, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "mlvm.fused_yield"(%1) : (tensor<4xf32>) -> ()
  }) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: body op mlvm.mul reads a value from outside the fused op (pass it as an operand)

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x4xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "hwio"}> : (tensor<1x4x5x5xf32>, tensor<4x3x3x4xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w_layout 'hwio' is not one of 'oihw', 'ihwo', 'wino23', 'wino43'

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<4x4x3x3xf32> must be [16, O, C] for w_layout wino23

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<16x4x4xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino43"}> : (tensor<1x4x5x5xf32>, tensor<16x4x4xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<16x4x4xf32> must be [36, O, C] for w_layout wino43

// -----
func.func @f(%x: tensor<1x4x6x6xf32>, %w: tensor<16x4x4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{strides = array<i64: 2, 2>, w_layout = "wino23"}> : (tensor<1x4x6x6xf32>, tensor<16x4x4xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w_layout wino23 needs strides and dilations 1

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<16x4x4xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<16x4x4xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<16x4x4xf32> has 4 input channels per group, expected 2 (x tensor<1x4x5x5xf32> has 4 channels, groups 2)

// -----
func.func @f() -> tensor<16x8x4xf32> {
  %0 = "mlvm.param"() <{name = "w", wino = array<i64: 4, 8>}> : () -> tensor<16x8x4xf32>
  func.return %0 : tensor<16x8x4xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: wino [4, 8] does not describe tensor<16x8x4xf32>: [O, C] stores an f32 [O, C, 3, 3] weight as [16, O, C] or [36, O, C], without panels or lanes

// -----
// Winograd's planes in their GEMM's panels: [16, ceil(O / 24), C, 24]
// (4 outputs: one panel, not two).
func.func @f() -> tensor<16x2x8x24xf32> {
  %0 = "mlvm.param"() <{name = "w", wino = array<i64: 4, 8>}> : () -> tensor<16x2x8x24xf32>
  func.return %0 : tensor<16x2x8x24xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: wino [4, 8] does not describe tensor<16x2x8x24xf32>: [O, C] stores an f32 [O, C, 3, 3] weight as [16, O, C] or [36, O, C], without panels or lanes (or each plane in its GEMM's panels: [16 or 36, ceil(O / 24), C, 24])

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<16x1x4x24xf32>) -> tensor<1x30x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<16x1x4x24xf32>) -> tensor<1x30x5x5xf32>
  func.return %0 : tensor<1x30x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<16x1x4x24xf32> in panels must be [16, ceil(O / 24), C, 24] for w_layout wino23, O the result's 30 channels, groups 1

// -----
func.func @f(%x: tensor<1x8x5x5xf32>, %w: tensor<16x2x4x24xf32>) -> tensor<1x30x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, w_layout = "wino23"}> : (tensor<1x8x5x5xf32>, tensor<16x2x4x24xf32>) -> tensor<1x30x5x5xf32>
  func.return %0 : tensor<1x30x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<16x2x4x24xf32> in panels must be [16, ceil(O / 24), C, 24] for w_layout wino23, O the result's 30 channels, groups 1

// -----
// The weight's outputs and the convolution's (both 2 panels of 24).
func.func @f(%x: tensor<1x4x5x5xf32>) -> tensor<1x30x5x5xf32> {
  %w = "mlvm.param"() <{name = "w", wino = array<i64: 48, 4>}> : () -> tensor<16x2x4x24xf32>
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "wino23"}> : (tensor<1x4x5x5xf32>, tensor<16x2x4x24xf32>) -> tensor<1x30x5x5xf32>
  func.return %0 : tensor<1x30x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w is a 48-output weight stored for Winograd; this convolution has 30 outputs and w_layout wino23

// -----
// A weight stored for Winograd read as OIHW.
func.func @f(%x: tensor<1x4x5x5xf32>) -> tensor<1x16x3x3xf32> {
  %w = "mlvm.param"() <{name = "w", wino = array<i64: 16, 4>}> : () -> tensor<16x16x4xf32>
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x4x5x5xf32>, tensor<16x16x4xf32>) -> tensor<1x16x3x3xf32>
  func.return %0 : tensor<1x16x3x3xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<16x16x4xf32> must be rank 4 (OIHW)

// -----
// Winograd's planes in panels whose shape happens to read as OIHW.
func.func @f(%x: tensor<1x2x5x30xf32>) -> tensor<1x16x4x7xf32> {
  %w = "mlvm.param"() <{name = "w", wino = array<i64: 48, 2>}> : () -> tensor<16x2x2x24xf32>
  %0 = "mlvm.conv2d"(%x, %w) : (tensor<1x2x5x30xf32>, tensor<16x2x2x24xf32>) -> tensor<1x16x4x7xf32>
  func.return %0 : tensor<1x16x4x7xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w is a 48-output weight stored for Winograd; this convolution has 16 outputs and w_layout oihw

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<2x3x3x4xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, groups = 2 : i64, w_layout = "ihwo"}> : (tensor<1x4x5x5xf32>, tensor<2x3x3x4xf32>) -> tensor<1x4x5x5xf32>
  func.return %0 : tensor<1x4x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w_layout ihwo needs groups 1, not 2

// -----
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x4xf32>) -> tensor<1x6x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}> : (tensor<1x4x5x5xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x5x5xf32>
  func.return %0 : tensor<1x6x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: result type tensor<1x6x5x5xf32> does not match the expected tensor<1x4x5x5xf32>

// -----
func.func @f() -> tensor<2x8x32xf32> {
  %0 = "mlvm.param"() <{name = "w", panel = array<i64: 32, 70>}> : () -> tensor<2x8x32xf32>
  func.return %0 : tensor<2x8x32xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: panel [32, 70] does not describe tensor<2x8x32xf32>: [width, columns] with width a multiple of 32 stores a [..., columns] array as [ceil(columns / width), ..., width]

// -----
func.func @f() -> tensor<1x8x16xf32> {
  %0 = "mlvm.param"() <{name = "w", panel = array<i64: 16, 10>}> : () -> tensor<1x8x16xf32>
  func.return %0 : tensor<1x8x16xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: panel [16, 10] does not describe tensor<1x8x16xf32>

// -----
func.func @f(%x: tensor<4x8xf32>, %w: tensor<2x8x32xf32>) -> tensor<4x70xf32> {
  %0 = "mlvm.matmul"(%x, %w) <{rhs_panel = 32 : i64}> : (tensor<4x8xf32>, tensor<2x8x32xf32>) -> tensor<4x70xf32>
  func.return %0 : tensor<4x70xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.matmul: rhs_panel 32 needs rhs [3, 8, 32] (a [8, 70] matrix in panels, width a multiple of 32); lhs tensor<4x8xf32> and rhs tensor<2x8x32xf32>

// -----
func.func @f(%x: tensor<4x8xf32>, %w: tensor<2x8x32xf32>) -> tensor<4x60xf32> {
  %0 = "mlvm.matmul"(%x, %w) <{rhs_panel = 32 : i64, transpose_rhs = true}> : (tensor<4x8xf32>, tensor<2x8x32xf32>) -> tensor<4x60xf32>
  func.return %0 : tensor<4x60xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.matmul: rhs_panel needs a rank-2 product without transpose_rhs (lhs tensor<4x8xf32> and rhs tensor<2x8x32xf32>)

// -----
func.func @f() -> tensor<8x36xi8> {
  %0 = "mlvm.param"() <{name = "w", lanes = array<i64: 5, 3, 3>}> : () -> tensor<8x36xi8>
  func.return %0 : tensor<8x36xi8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: lanes [5, 3, 3] does not describe tensor<8x36xi8>: [I, KH, KW] stores an i8 [O, I, KH, KW] weight as [O, 4 k] (k = 18), without panels

// -----
func.func @f() -> tensor<6x8x1x1xi8> {
  %0 = "mlvm.param"() <{name = "w", view = array<i64: 6, 7>}> : () -> tensor<6x8x1x1xi8>
  func.return %0 : tensor<6x8x1x1xi8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: view [6, 7] does not hold the 48 elements of the archive shape [6, 8, 1, 1]

// -----
func.func @f() -> tensor<8x36xui8> {
  %0 = "mlvm.param"() <{name = "w", lanes = array<i64: 3, 3, 3>}> : () -> tensor<8x36xui8>
  func.return %0 : tensor<8x36xui8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.param: lanes [3, 3, 3] does not describe tensor<8x36xui8>

// -----
func.func @f(%x: tensor<1x6x5x5xui8>, %w: tensor<8x36xi8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x8x3x3xi32> {
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) <{w_lanes = array<i64: 3, 3>}> : (tensor<1x6x5x5xui8>, tensor<8x36xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x8x3x3xi32>
  func.return %0 : tensor<1x8x3x3xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qconv2d: w tensor<8x36xi8> is not an i8 weight in lanes for w_lanes [3, 3] and x tensor<1x6x5x5xui8> (groups 1): want [O, 4 k]

// -----
func.func @f(%x: tensor<1x6x5x5xui8>, %w: tensor<3x72xi8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x3x3x3xi32> {
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) <{w_lanes = array<i64: 3, 3>}> : (tensor<1x6x5x5xui8>, tensor<3x72xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x3x3x3xi32>
  func.return %0 : tensor<1x3x3x3xi32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qconv2d: w_lanes needs 4 or more output channels per group (3 in 1 groups)

// -----
func.func @f(%a: tensor<4x1xui8>, %b: tensor<3xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4x3xui8> {
  %0 = "mlvm.qadd"(%a, %s, %z, %b, %s, %z, %s, %z) : (tensor<4x1xui8>, tensor<f32>, tensor<ui8>, tensor<3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  func.return %0 : tensor<4x3xui8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qadd: a tensor<4x1xui8> and b tensor<3xui8> must have one shape, or one of them broadcast to the other's over dims of one run

// -----
func.func @f(%a: tensor<4x5x3xui8>, %b: tensor<4x1x3xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4x5x3xui8> {
  %0 = "mlvm.qadd"(%a, %s, %z, %b, %s, %z, %s, %z) : (tensor<4x5x3xui8>, tensor<f32>, tensor<ui8>, tensor<4x1x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4x5x3xui8>
  func.return %0 : tensor<4x5x3xui8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qadd: a tensor<4x5x3xui8> and b tensor<4x1x3xui8> must have one shape, or one of them broadcast to the other's over dims of one run

// -----
func.func @f(%a: tensor<4x3xui8>, %s: tensor<f32>, %s2: tensor<2xf32>, %z: tensor<ui8>) -> tensor<4x3xui8> {
  %0 = "mlvm.qadd"(%a, %s, %z, %a, %s2, %z, %s, %z) : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<4x3xui8>, tensor<2xf32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  func.return %0 : tensor<4x3xui8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qadd: b_scale tensor<2xf32> must be a single value

// -----
func.func @f(%a: tensor<4x3xui8>, %s: tensor<f32>, %z: tensor<ui8>, %zi: tensor<i8>) -> tensor<4x3xui8> {
  %0 = "mlvm.qadd"(%a, %s, %zi, %a, %s, %z, %s, %z) : (tensor<4x3xui8>, tensor<f32>, tensor<i8>, tensor<4x3xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xui8>
  func.return %0 : tensor<4x3xui8>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.qadd: a_zero_point tensor<i8> must have element type ui8

// -----
// IHWO weights in panels: [P, C, KH, KW, width], width a multiple of 32.
func.func @f(%x: tensor<1x4x5x5xf32>, %w: tensor<2x4x3x3x16xf32>) -> tensor<1x32x5x5xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{padding = array<i64: 1, 1, 1, 1>, w_layout = "ihwo"}> : (tensor<1x4x5x5xf32>, tensor<2x4x3x3x16xf32>) -> tensor<1x32x5x5xf32>
  func.return %0 : tensor<1x32x5x5xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.conv2d: w tensor<2x4x3x3x16xf32> in panels must be [P, C, KH, KW, width], width a multiple of 32

// -----
func.func @f(%x: tensor<600x8xf32>, %c: tensor<600x1xf32>) -> tensor<600x1xf32> {
  %y = "mlvm.fused"(%x, %c) ({
  ^bb0(%a: tensor<600x8xf32>, %b: tensor<600x1xf32>):
    %1 = "mlvm.mul"(%a, %b) : (tensor<600x8xf32>, tensor<600x1xf32>) -> tensor<600x8xf32>
    %2 = "mlvm.reduce"(%1) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<600x8xf32>) -> tensor<600x1xf32>
    "mlvm.fused_yield"(%2) : (tensor<600x1xf32>) -> ()
  }) : (tensor<600x8xf32>, tensor<600x1xf32>) -> tensor<600x1xf32>
  func.return %y : tensor<600x1xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: with a reduction at the end, operand 1 must be one value or of the reduced tree's shape

// -----
func.func @f(%x: tensor<3x8xf32>) -> tensor<1x8xf32> {
  %y = "mlvm.fused"(%x) ({
  ^bb0(%a: tensor<3x8xf32>):
    %1 = "mlvm.exp"(%a) : (tensor<3x8xf32>) -> tensor<3x8xf32>
    %2 = "mlvm.reduce"(%1) <{kind = "sum", axes = array<i64: 0>, keepdims = true}> : (tensor<3x8xf32>) -> tensor<1x8xf32>
    "mlvm.fused_yield"(%2) : (tensor<1x8xf32>) -> ()
  }) : (tensor<3x8xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: the reduction cannot end the body: its axes [0] are not the last of 2

// -----
func.func @f(%x: tensor<6x8xf32>) -> tensor<6x1xf32> {
  %y = "mlvm.fused"(%x) ({
  ^bb0(%a: tensor<6x8xf32>):
    %1 = "mlvm.exp"(%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
    %2 = "mlvm.reduce"(%1) <{kind = "sum", axes = array<i64: 1>, keepdims = true}> : (tensor<6x8xf32>) -> tensor<6x1xf32>
    "mlvm.fused_yield"(%2) : (tensor<6x1xf32>) -> ()
  }) : (tensor<6x8xf32>) -> tensor<6x1xf32>
  func.return %y : tensor<6x1xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: the reduction cannot end the body: its 6 rows fit one chunk of 6

// -----
func.func @f(%x: tensor<600x8xf32>) -> tensor<600x1xf32> {
  %y = "mlvm.fused"(%x) ({
  ^bb0(%a: tensor<600x8xf32>):
    %1 = "mlvm.exp"(%a) : (tensor<600x8xf32>) -> tensor<600x8xf32>
    %2 = "mlvm.reduce"(%1) <{kind = "prod", axes = array<i64: 1>, keepdims = true}> : (tensor<600x8xf32>) -> tensor<600x1xf32>
    "mlvm.fused_yield"(%2) : (tensor<600x1xf32>) -> ()
  }) : (tensor<600x8xf32>) -> tensor<600x1xf32>
  func.return %y : tensor<600x1xf32>
}
// CHECK: invalid.mlir:{{[0-9]+}}:3: error: mlvm.fused: the reduction cannot end the body: its kind 'prod' is not one of sum, max, mean, min
