// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// A matmul's bias (one value per column, [n] or [1, n], on either side of
// the add), then a ReLU or nothing, is the runtime's mlvm_epilogue_bias_f32
// with its struct on the stack (the bias is an operand: its address is
// known only in the call). Anything else keeps a generated function.
// CHECK-LABEL: mlvm_status_t module_bias_relu({{[^;]*$}}
// CHECK:       const mlvm_bias_t bias = {in2, 0.0f};
// CHECK-NEXT:  mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_bias_f32, &bias);
func.func @bias_relu(%x: tensor<3x8xf32>, %w: tensor<8x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %2 = "mlvm.relu"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %2 : tensor<3x5xf32>
}
// CHECK-LABEL: mlvm_status_t module_bias_first_row({{[^;]*$}}
// CHECK:       const mlvm_bias_t bias = {in2, (-HUGE_VALF)};
// CHECK-NEXT:  mlvm_matmul_epilogue_f32({{.*}}, mlvm_epilogue_bias_f32, &bias);
func.func @bias_first_row(%x: tensor<3x8xf32>, %w: tensor<8x5xf32>, %b: tensor<1x5xf32>) -> tensor<3x5xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.add"(%b, %0) : (tensor<1x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %1 : tensor<3x5xf32>
}
// Must not: a value per row, a full matrix, a clip after the bias.
// CHECK-LABEL: mlvm_status_t module_per_row({{[^;]*$}}
// CHECK-NOT:   mlvm_epilogue_bias_f32
// CHECK:       mlvm_matmul_epilogue_f32({{.*}}, module__s{{[0-9]+}}, ctx);
func.func @per_row(%x: tensor<3x8xf32>, %w: tensor<8x5xf32>, %b: tensor<3x1xf32>) -> tensor<3x5xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<3x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  func.return %1 : tensor<3x5xf32>
}
// CHECK-LABEL: mlvm_status_t module_residual({{[^;]*$}}
// CHECK-NOT:   mlvm_epilogue_bias_f32
// CHECK:       mlvm_matmul_epilogue_f32({{.*}}, module__s{{[0-9]+}}, ctx);
func.func @residual(%x: tensor<3x8xf32>, %w: tensor<8x5xf32>, %r: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.add"(%0, %r) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return %1 : tensor<3x5xf32>
}
// CHECK-LABEL: mlvm_status_t module_bias_clip({{[^;]*$}}
// CHECK-NOT:   mlvm_epilogue_bias_f32
// CHECK:       mlvm_matmul_epilogue_f32({{.*}}, module__s{{[0-9]+}}, ctx);
func.func @bias_clip(%x: tensor<3x8xf32>, %w: tensor<8x5xf32>, %b: tensor<5xf32>) -> tensor<3x5xf32> {
  %hi = "mlvm.constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %1 = "mlvm.add"(%0, %b) : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %2 = "mlvm.relu"(%1) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %3 = "mlvm.min"(%2, %hi) : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
  func.return %3 : tensor<3x5xf32>
}
