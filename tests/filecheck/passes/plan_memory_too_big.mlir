// RUN: not mlvm-opt %s -p mlvm-plan-memory 2>&1 | filecheck %s

// A kernel workspace is not bounded by --max-bytes the way tensors are: a
// conv2d whose stride splits its input copy into 2^62 phases asks for an
// arena past any memory, refused with the function's name.
// CHECK: error: mlvm-plan-memory: @main needs an arena of 221360928884514619968 bytes (more than 281474976710656)
func.func @main(%x: tensor<1x3x4x5xf32>, %w: tensor<4x3x3x4xf32>) -> tensor<1x4x2x1xf32> {
  %0 = "mlvm.conv2d"(%x, %w) <{strides = array<i64: 1, 4611686018427387904>}> : (tensor<1x3x4x5xf32>, tensor<4x3x3x4xf32>) -> tensor<1x4x2x1xf32>
  func.return %0 : tensor<1x4x2x1xf32>
}
