// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// Epilogues of the same text are one static function: both layers' bias +
// ReLU (the bias comes from the call's ctx, so the body is the same) call
// one, defined once; a different epilogue (bias alone) has its own.
// CHECK:     static void [[BIASRELU:module__s[0-9]+]](const void *ctx,
// CHECK:     static void [[BIAS:module__s[0-9]+]](const void *ctx,
// CHECK-NOT: static void module__s{{[0-9]+}}(const void *ctx,
// CHECK-LABEL: mlvm_status_t module_mlp({{[^;]*$}}
// CHECK:     mlvm_matmul_epilogue_f32({{.*}}, [[BIASRELU]], ctx);
// CHECK:     mlvm_matmul_epilogue_f32({{.*}}, [[BIASRELU]], ctx);
// CHECK:     mlvm_matmul_epilogue_f32({{.*}}, [[BIAS]], ctx);
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x16xf32>, %b2: tensor<16xf32>,
               %w3: tensor<16x4xf32>, %b3: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = "mlvm.matmul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlvm.add"(%0, %b1) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "mlvm.relu"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "mlvm.matmul"(%2, %w2) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %4 = "mlvm.add"(%3, %b2) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %5 = "mlvm.relu"(%4) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = "mlvm.matmul"(%5, %w3) : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %7 = "mlvm.add"(%6, %b3) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  func.return %7 : tensor<4x4xf32>
}
