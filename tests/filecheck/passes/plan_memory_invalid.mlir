// RUN: not mlvm-opt %s -p 'mlvm-plan-memory{alignment=48}' 2>&1 | filecheck %s

// CHECK: mlvm-opt: error: mlvm-plan-memory: alignment 48 is not a power of two
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mlvm.neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
