// RUN: mlvm-opt %s --split-input-file -p mlvm-pack-weights | filecheck %s

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
