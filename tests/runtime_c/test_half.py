"""mlvm/half.h against numpy and ml_dtypes, bit for bit.

Every f16 bit pattern widens exactly; f32 -> f16 / bf16 round to nearest
even on all ties, both sides of every f16 rounding boundary, subnormals and
overflow; f64 -> f16 / bf16 round once (no double rounding through f32).
NaN only has to stay NaN (payload bits are not promised).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from mlvm.codegen.cc import INCLUDE_DIR

HERE = Path(__file__).parent
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture(scope="module")
def convert(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    d = tmp_path_factory.mktemp("half")
    exe = d / "half"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2",
         "-fsanitize=undefined", "-fno-sanitize-recover=all", "-I", str(INCLUDE_DIR),
         str(HERE / "half" / "main.c"), "-o", str(exe)],
        check=True,
    )

    def run(mode: str, x: np.ndarray, rec: np.dtype) -> np.ndarray:
        src, dst = d / f"{mode}.in", d / f"{mode}.out"
        x.tofile(src)
        subprocess.run([str(exe), mode, str(src), str(dst)], check=True)
        return np.fromfile(dst, dtype=rec)

    return run


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    nan = np.isnan(want.astype(np.float32))
    assert np.all(np.isnan(got.astype(np.float32))[nan]), f"{what}: NaN lost"
    bad = (got.view(np.uint16) != want.view(np.uint16)) & ~nan
    assert not bad.any(), f"{what}: {int(bad.sum())} differ, first at {np.flatnonzero(bad)[:5]}"


def _f32_inputs() -> np.ndarray:
    g = np.random.default_rng(7)
    every_h = np.arange(2**16, dtype=np.uint32)
    near = [(every_h << 13) + k for k in (0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF)]
    every_b = np.arange(2**16, dtype=np.uint32)
    nearb = [(every_b << 16) + k for k in (0x7FFF, 0x8000, 0x8001, 0x18000)]
    dense = np.arange(0x32F00000, 0x38900000, 61, dtype=np.uint32)  # f16 subnormal range
    rand = g.integers(0, 2**32, size=1_000_000, dtype=np.uint64).astype(np.uint32)
    u = np.concatenate([*near, *nearb, dense, rand, 0x80000000 | dense]).astype(np.uint32)
    return u.view(np.float32)


def test_f32_to_f16_bf16_and_back(convert) -> None:  # noqa: ANN001
    x = _f32_inputs()
    rec = np.dtype([("h", "<u2"), ("b", "<u2"), ("back", "<f4"), ("bback", "<f4")])
    out = convert("f32", x, rec)
    with np.errstate(all="ignore"):
        _same(out["h"].view(np.float16), x.astype(np.float16), "f32 -> f16")
        _same(out["b"].view(BF16), x.astype(BF16), "f32 -> bf16")
        h = out["h"].view(np.float16)
        widened = h.astype(np.float32)
        ok = np.isnan(widened) | (out["back"].view(np.uint32) == widened.view(np.uint32))
        assert ok.all(), "f16 -> f32 is not exact"
        bw = out["b"].view(BF16).astype(np.float32)
        okb = np.isnan(bw) | (out["bback"].view(np.uint32) == bw.view(np.uint32))
        assert okb.all(), "bf16 -> f32 is not exact"


def test_every_f16_widens_exactly(convert) -> None:  # noqa: ANN001
    h = np.arange(2**16, dtype=np.uint16).view(np.float16)
    x = h.astype(np.float32)  # exact; converting back must give the same bits
    rec = np.dtype([("h", "<u2"), ("b", "<u2"), ("back", "<f4"), ("bback", "<f4")])
    out = convert("f32", x, rec)
    _same(out["h"].view(np.float16), h, "f16 -> f32 -> f16")


def _ties(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Doubles at, just above and just below the midpoints of consecutive
    values lo < hi, with the correctly rounded answer of each (the midpoint
    itself rounds to the even one of the two)."""
    mid = (lo + hi) / 2
    eps = np.abs(mid) * 2.0**-40
    even = np.where(np.arange(lo.size) % 2 == 0, lo, hi)  # filled in by the caller
    return np.concatenate([mid + eps, mid - eps, mid]), np.concatenate([hi, lo, even])


def test_f64_rounds_once(convert) -> None:  # noqa: ANN001
    """Above or below a tie of f16 / bf16 by far less than an f32 ulp: a
    conversion through a float rounded to nearest would land on the tie."""
    rec = np.dtype([("h", "<u2"), ("b", "<u2")])
    for name, dt, col in (("f16", np.dtype(np.float16), "h"), ("bf16", BF16, "b")):
        bits = np.arange(0, 0x7C00 if name == "f16" else 0x7F80, dtype=np.uint16)  # positive finite
        lo = bits[:-1].view(dt).astype(np.float64)
        hi = bits[1:].view(dt).astype(np.float64)
        x, want = _ties(lo, hi)
        n = lo.size
        even = np.where(bits[:-1] % 2 == 0, lo, hi)
        want[2 * n:] = even
        x, want = np.concatenate([x, -x]), np.concatenate([want, -want])
        out = convert("f64", x, rec)
        got = out[col].view(dt).astype(np.float64)
        bad = got != want
        assert not bad.any(), f"f64 -> {name}: {int(bad.sum())} differ, e.g. {x[bad][:3]}"


def test_f64_edges_and_random(convert) -> None:  # noqa: ANN001
    g = np.random.default_rng(8)
    x = np.concatenate([g.normal(0, 1e3, 200_000), g.normal(0, 1e-6, 50_000),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e300, -1e-300, 65519.99, 65520.0,
                         -65520.0, 2.0**-25, 2.0**-24, 3 * 2.0**-26, 3.4e38, 3.5e38]])
    out = convert("f64", x, np.dtype([("h", "<u2"), ("b", "<u2")]))
    with np.errstate(all="ignore"):
        _same(out["h"].view(np.float16), x.astype(np.float16), "f64 -> f16")
        # ml_dtypes goes through f32: compare where that f32 is not a bf16 tie.
        via = x.astype(np.float32)
        clear = (via.view(np.uint32) & 0xFFFF) != 0x8000
        _same(out["b"][clear].view(BF16), x[clear].astype(BF16), "f64 -> bf16")
