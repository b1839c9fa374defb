// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// Epilogues of the same text are one static function: both layers' bias +
// tanh (the bias comes from the call's ctx, so the body is the same) call
// one, defined once; a bias with a ReLU or alone is the runtime's
// mlvm_epilogue_bias_f32 (no function generated for either).
// CHECK:     static void [[TANH:module__s[0-9]+]](const void *ctx,
// CHECK-NOT: static void module__s{{[0-9]+}}(const void *ctx,
// CHECK-LABEL: mlvm_status_t module_mlp({{[^;]*$}}
// CHECK:     mlvm_matmul_epilogue_f32({{.*}}, [[TANH]], ctx);
// CHECK:     mlvm_matmul_epilogue_f32({{.*}}, [[TANH]], ctx);
// CHECK:     const mlvm_bias_t bias = {in2, 0.0f};
// CHECK-NEXT: mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_bias_f32, &bias);
// CHECK:     const mlvm_bias_t bias = {in2, (-HUGE_VALF)};
// CHECK-NEXT: mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_bias_f32, &bias);
func.func @mlp(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
               %w2: tensor<16x16xf32>, %b2: tensor<16xf32>,
               %w3: tensor<16x16xf32>, %b3: tensor<16xf32>,
               %w4: tensor<16x4xf32>, %b4: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = "mlvm.matmul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = "mlvm.add"(%0, %b1) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %2 = "mlvm.tanh"(%1) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = "mlvm.matmul"(%2, %w2) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %4 = "mlvm.add"(%3, %b2) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %5 = "mlvm.tanh"(%4) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = "mlvm.matmul"(%5, %w3) : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %7 = "mlvm.add"(%6, %b3) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %8 = "mlvm.relu"(%7) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %9 = "mlvm.matmul"(%8, %w4) : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
  %10 = "mlvm.add"(%9, %b4) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  func.return %10 : tensor<4x4xf32>
}
