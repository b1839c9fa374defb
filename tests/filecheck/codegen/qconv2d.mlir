// RUN: mlvm-opt %s -t c | filecheck %s

// The int8 convolutions: a static descriptor (the sizes of conv2d, then x
// signed, w signed, one zero point per output channel, w in lanes) and the
// workspace (qconv2d_workspace_bytes: 960 bytes here). The requantizing form adds a
// descriptor of its own (y signed, one multiplier per channel, relu) and
// passes NULL for a missing bias. Its last field, w_sums, is NULL where the
// weights are an argument; where they are constants, cores with vectors get
// a descriptor of their own pointing to each output channel's weight sum (as
// i8: u8 weights less 128), which the kernels then do not compute per call,
// and cores without (MLVM_SCALAR_CORE) one with NULL (shared between layers
// of the same sizes; no table in their firmware): MLVM_VECTOR_PICK. After
// the sums, w_pairs: 1 where no two weights of a row (as i8) add up past 128
// or -128 (AVX2 then sums byte pairs in 16 bits), 0 where they might or the
// weights are not known: -3s and 64s fit, 65s (130) and u8 0s (-128 - 128)
// do not, u8 130s (2) do.
// CHECK: #define MODULE_ACC_ARENA_BYTES 960u
// CHECK: #define MODULE_REQUANT_ARENA_BYTES 960u
// CHECK-DAG: static const mlvm_qconv2d_t [[Q:module__s[0-9]+]] = {1, 4, 4, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, NULL, 0};
// CHECK-DAG: static const mlvm_qrequant_t [[R:module__s[0-9]+]] = {1, 1, 1};
// CHECK: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const int32_t [[S8:module__s[0-9]+]][4] = {-12, -12, -12, -12};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t [[V8:module__s[0-9]+]] = {1, 4, 4, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, [[S8]], 1};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t [[N8:module__s[0-9]+]] = {1, 4, 4, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, NULL, 0};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const int32_t [[SU8:module__s[0-9]+]][4] = {8, 8, 8, 8};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t {{module__s[0-9]+}} = {1, 4, 4, 4, 4, 1, 1, 4, 4, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, [[SU8]], 1};
// CHECK: static const int32_t [[S64:module__s[0-9]+]][4] = {256, 256, 256, 256};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t {{module__s[0-9]+}} = {{{[0-9, ]*}}, [[S64]], 1};
// CHECK: static const int32_t [[S65:module__s[0-9]+]][4] = {260, 260, 260, 260};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t {{module__s[0-9]+}} = {{{[0-9, ]*}}, [[S65]], 0};
// CHECK: static const int32_t [[SU0:module__s[0-9]+]][4] = {-512, -512, -512, -512};
// CHECK-NEXT: #endif
// CHECK-NEXT: #if !defined(MLVM_SCALAR_CORE)
// CHECK-NEXT: static const mlvm_qconv2d_t {{module__s[0-9]+}} = {{{[0-9, ]*}}, [[SU0]], 0};
// CHECK-LABEL: mlvm_status_t module_acc({{[^;]*$}}
// CHECK: mlvm_qconv2d_ws_8(&[[Q]], in_x, in_w, in_zx, in_zw, out0, ((void *)(arena + 0)));
// CHECK-LABEL: mlvm_status_t module_requant({{[^;]*$}}
// CHECK: mlvm_qconv2d_requant_8(&[[Q]], &[[R]], in_x, in_w, in_zx, in_zw, NULL, in_m, in_zy, out0, ((void *)(arena + 0)));
// CHECK-LABEL: mlvm_status_t module_const_i8({{[^;]*$}}
// CHECK: mlvm_qconv2d_ws_8(MLVM_VECTOR_PICK(&[[V8]], &[[N8]]), in_x, ((const int8_t *)module__d{{[0-9]+}}.u), in_zx, in_zw, out0,
func.func @acc(%x: tensor<1x4x4x4xui8>, %w: tensor<4x4x1x1xi8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x4x4x4xi32> {
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
func.func @requant(%x: tensor<1x4x4x4xui8>, %w: tensor<4x4x1x1xi8>, %zx: tensor<ui8>, %zw: tensor<i8>, %m: tensor<4xf32>, %zy: tensor<i8>) -> tensor<1x4x4x4xi8> {
  %0 = "mlvm.qconv2d_requant"(%x, %w, %zx, %zw, %m, %zy) <{relu = 1 : i64}> : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>, tensor<4xf32>, tensor<i8>) -> tensor<1x4x4x4xi8>
  func.return %0 : tensor<1x4x4x4xi8>
}
func.func @const_i8(%x: tensor<1x4x4x4xui8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x4x4x4xi32> {
  %w = "mlvm.constant"() <{value = dense<-3> : tensor<4x4x1x1xi8>}> : () -> tensor<4x4x1x1xi8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
func.func @const_u8(%x: tensor<1x4x4x4xui8>, %zx: tensor<ui8>, %zw: tensor<ui8>) -> tensor<1x4x4x4xi32> {
  %w = "mlvm.constant"() <{value = dense<130> : tensor<4x4x1x1xui8>}> : () -> tensor<4x4x1x1xui8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
func.func @const_64(%x: tensor<1x4x4x4xui8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x4x4x4xi32> {
  %w = "mlvm.constant"() <{value = dense<64> : tensor<4x4x1x1xi8>}> : () -> tensor<4x4x1x1xi8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
func.func @const_65(%x: tensor<1x4x4x4xui8>, %zx: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x4x4x4xi32> {
  %w = "mlvm.constant"() <{value = dense<65> : tensor<4x4x1x1xi8>}> : () -> tensor<4x4x1x1xi8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xi8>, tensor<ui8>, tensor<i8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
func.func @const_u8_0(%x: tensor<1x4x4x4xui8>, %zx: tensor<ui8>, %zw: tensor<ui8>) -> tensor<1x4x4x4xi32> {
  %w = "mlvm.constant"() <{value = dense<0> : tensor<4x4x1x1xui8>}> : () -> tensor<4x4x1x1xui8>
  %0 = "mlvm.qconv2d"(%x, %w, %zx, %zw) : (tensor<1x4x4x4xui8>, tensor<4x4x1x1xui8>, tensor<ui8>, tensor<ui8>) -> tensor<1x4x4x4xi32>
  func.return %0 : tensor<1x4x4x4xi32>
}
