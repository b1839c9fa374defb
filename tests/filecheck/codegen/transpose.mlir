// RUN: mlvm-opt %s -t c | filecheck %s

// A transpose is a strided gather into a contiguous result. Dims that stay
// neighbours are merged first: the image-patch transpose (rank 6) walks 4
// dims, its last one contiguous on both sides; unit dims vanish, leaving a
// plain copy.
// CHECK-DAG: static const mlvm_iter_t [[SWAP:module__s[0-9]+]] = {2, {53, 37}, {{[{][{]}}1, 53}, {37, 1}}};
// CHECK-DAG: static const mlvm_iter_t [[PATCH:module__s[0-9]+]] = {4, {16, 8, 4, 12}, {{[{][{]}}384, 12, 96, 1}, {384, 48, 12, 1}}};
// CHECK-DAG: static const mlvm_iter_t [[UNIT:module__s[0-9]+]] = {1, {35}, {{[{][{]}}1}, {1}}};
// CHECK-LABEL: mlvm_status_t module_swap({{[^;]*$}}
// CHECK: mlvm_gather_b32(&[[SWAP]], in_x, out0);
// CHECK-LABEL: mlvm_status_t module_patches({{[^;]*$}}
// CHECK: mlvm_gather_b32(&[[PATCH]], ((int32_t *)(arena + 0)), out0);
// CHECK-LABEL: mlvm_status_t module_unit({{[^;]*$}}
// CHECK: mlvm_gather_b32(&[[UNIT]], in_x, out0);
func.func @swap(%x: tensor<37x53xf32>) -> tensor<53x37xf32> {
  %0 = "mlvm.transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<37x53xf32>) -> tensor<53x37xf32>
  func.return %0 : tensor<53x37xf32>
}
func.func @patches(%x: tensor<2x8x4x8x4x3xf32>) -> tensor<2x8x8x4x4x3xi32> {
  %c = "mlvm.cast"(%x) : (tensor<2x8x4x8x4x3xf32>) -> tensor<2x8x4x8x4x3xi32>
  %0 = "mlvm.transpose"(%c) <{perm = array<i64: 0, 1, 3, 2, 4, 5>}> : (tensor<2x8x4x8x4x3xi32>) -> tensor<2x8x8x4x4x3xi32>
  func.return %0 : tensor<2x8x8x4x4x3xi32>
}
func.func @unit(%x: tensor<1x5x1x7xf32>) -> tensor<5x1x7x1xf32> {
  %0 = "mlvm.transpose"(%x) <{perm = array<i64: 1, 2, 3, 0>}> : (tensor<1x5x1x7xf32>) -> tensor<5x1x7x1xf32>
  func.return %0 : tensor<5x1x7x1xf32>
}
