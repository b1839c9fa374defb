// RUN: mlvm-opt %s -t c | filecheck %s

// Weight arrays of 64 words (256 bytes) or more start on a cache line on cores
// with data caches (MLVM_WEIGHT_ALIGNED, mlvm/module.h); smaller ones keep
// their natural alignment.
// CHECK: static const union { uint32_t u[64]; float f[64]; int32_t i[64]; uint64_t align8_; } module__d0 MLVM_WEIGHT_ALIGNED = {{[{][{]}}
// CHECK: static const union { uint32_t u[63]; float f[63]; int32_t i[63]; uint64_t align8_; } module__d1 = {{[{][{]}}
func.func @big(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c = "mlvm.constant"() <{value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]> : tensor<64xf32>}> : () -> tensor<64xf32>
  %0 = "mlvm.add"(%x, %c) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  func.return %0 : tensor<64xf32>
}

func.func @small(%x: tensor<63xf32>) -> tensor<63xf32> {
  %c = "mlvm.constant"() <{value = dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0]> : tensor<63xf32>}> : () -> tensor<63xf32>
  %0 = "mlvm.add"(%x, %c) : (tensor<63xf32>, tensor<63xf32>) -> tensor<63xf32>
  func.return %0 : tensor<63xf32>
}
