// RUN: mlvm-opt %s -p mlvm-fuse -t c | filecheck %s

// A product of more rows than one of the GEMM's row blocks (192) whose rhs
// is in memory (not in panels) gets a workspace in the arena where packing
// the rhs pays (transposed, 512 x 512 elements or more, or rows a multiple
// of 1 KiB apart): the GEMM packs it there once per column block and
// contraction slice (matmul_workspace_bytes: 4 * min(k, 256) * min(n
// rounded up to 32, 256) bytes: 5120, 768 and 512 here), and calls the
// _ws entry. 192 rows need none, nor a small rhs with other strides (300
// columns: read in place). A fused epilogue's product takes it too.
// CHECK: #define MODULE_SLAB_ARENA_BYTES 5120u
// CHECK: #define MODULE_ROWS192_ARENA_BYTES 0u
// CHECK: #define MODULE_IN_PLACE_ARENA_BYTES 0u
// CHECK: #define MODULE_RELU_ARENA_BYTES 768u
// CHECK: #define MODULE_BATCHED_ARENA_BYTES 512u
// CHECK-LABEL: mlvm_status_t module_slab({{[^;]*$}}
// CHECK: mlvm_matmul_ws_f32(&{{module__s[0-9]+}}, &{{module__s[0-9]+}}, in_a, in_b, out0, ((void *)(arena + 0)));
// CHECK-LABEL: mlvm_status_t module_rows192({{[^;]*$}}
// CHECK: mlvm_matmul_f32(&{{module__s[0-9]+}}, &{{module__s[0-9]+}}, in_a, in_b, out0);
// CHECK-LABEL: mlvm_status_t module_in_place({{[^;]*$}}
// CHECK: mlvm_matmul_f32(&{{module__s[0-9]+}}, &{{module__s[0-9]+}}, in_a, in_b, out0);
// CHECK-LABEL: mlvm_status_t module_relu({{[^;]*$}}
// CHECK: mlvm_matmul_epilogue_ws_f32(&{{module__s[0-9]+}}, in0, in1, out, mlvm_epilogue_clamp_f32, &{{module__s[0-9]+}}, ((void *)(arena + 0)));
// CHECK-LABEL: mlvm_status_t module_batched({{[^;]*$}}
// CHECK: mlvm_matmul_ws_f32(&{{module__s[0-9]+}}, &{{module__s[0-9]+}}, in_a, in_b, out0, ((void *)(arena + 0)));
func.func @slab(%a: tensor<193x5xf32>, %b: tensor<5x512xf32>) -> tensor<193x512xf32> {
  %0 = "mlvm.matmul"(%a, %b) : (tensor<193x5xf32>, tensor<5x512xf32>) -> tensor<193x512xf32>
  func.return %0 : tensor<193x512xf32>
}
func.func @rows192(%a: tensor<192x5xf32>, %b: tensor<7x5xf32>) -> tensor<192x7xf32> {
  %0 = "mlvm.matmul"(%a, %b) <{transpose_rhs = true}> : (tensor<192x5xf32>, tensor<7x5xf32>) -> tensor<192x7xf32>
  func.return %0 : tensor<192x7xf32>
}
func.func @in_place(%a: tensor<400x5xf32>, %b: tensor<5x300xf32>) -> tensor<400x300xf32> {
  %0 = "mlvm.matmul"(%a, %b) : (tensor<400x5xf32>, tensor<5x300xf32>) -> tensor<400x300xf32>
  func.return %0 : tensor<400x300xf32>
}
func.func @relu(%a: tensor<3x200xf32>, %b: tensor<40x3xf32>) -> tensor<200x40xf32> {
  %0 = "mlvm.matmul"(%a, %b) <{transpose_lhs = true, transpose_rhs = true}> : (tensor<3x200xf32>, tensor<40x3xf32>) -> tensor<200x40xf32>
  %1 = "mlvm.relu"(%0) : (tensor<200x40xf32>) -> tensor<200x40xf32>
  func.return %1 : tensor<200x40xf32>
}
func.func @batched(%a: tensor<2x193x4xf32>, %b: tensor<1x9x4xf32>) -> tensor<2x193x9xf32> {
  %0 = "mlvm.matmul"(%a, %b) <{transpose_rhs = true}> : (tensor<2x193x4xf32>, tensor<1x9x4xf32>) -> tensor<2x193x9xf32>
  func.return %0 : tensor<2x193x9xf32>
}
