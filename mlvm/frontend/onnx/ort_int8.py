"""onnxruntime's int8 arithmetic on this host, for comparing with it.

mlvm's integer products are exact sums on every target. onnxruntime's u8 x
s8 kernels on x86-64 without VNNI (AVX2, and AVX-512 without VNNI) take
vpmaddubsw, which adds each pair of products in 16 bits with saturation: a
pair of 255 x -128 saturates, so its results there are exact only where
the weights have 7 bits, as its quantizer's `reduce_range` makes them (and
its documentation advises on such machines). Tests, samples and benches
that compare mlvm with onnxruntime bit for bit quantize with it there."""

from __future__ import annotations

import platform

from mlvm.codegen.cc import host_cpu_flags

#: The CPU flags with which onnxruntime's x86 u8 x s8 kernels sum in 32 bits.
VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni"})


def onnxruntime_saturates() -> bool:
    """Whether onnxruntime's u8 x s8 products on this host saturate pairs of
    full-range 8-bit products (x86-64 without VNNI)."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    return not VNNI_FLAGS & host_cpu_flags()


def weight_bound() -> int:
    """The magnitude below which s8 weights stay exact in onnxruntime here:
    128 (all of them), or 64 where its products saturate."""
    return 64 if onnxruntime_saturates() else 128
