"""Host builds link the weights as a binary blob (`<mod>.weights.bin`,
placed by `<mod>.weights.s` with `.incbin`) instead of compiling them as C
text; `mlvm-aot compile` (sources for firmware) keeps C arrays. Both give
the same bits. No path or user string is written into the assembler
source: the blob is found beside it, and weight symbols are the module's
own (hidden) identifiers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

import mlvm
from mlvm.cli import aot_main

SRC = """func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x4xf32>, tensor<4x5xf32>, tensor<0xf32>) {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<5x4xf32>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<4x5xf32>
  %e = "mlvm.param"() <{name = "e"}> : () -> tensor<0xf32>
  %0 = "mlvm.matmul"(%x, %w) : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %0, %v, %e : tensor<3x4xf32>, tensor<4x5xf32>, tensor<0xf32>
}
"""


def params() -> dict[str, np.ndarray]:
    g = np.random.default_rng(11)
    v = g.standard_normal((4, 5)).astype(np.float32)
    v.reshape(-1)[:4] = [np.nan, -0.0, np.inf, 1e-45]  # bits that must survive
    return {"w": g.standard_normal((5, 4)).astype(np.float32), "v": v,
            "e": np.zeros(0, np.float32)}


def test_blob_and_c_arrays_give_the_same_bits(tmp_path: Path) -> None:
    src = tmp_path / "odd name's model.mlir"
    src.write_text(SRC)
    np.savez(tmp_path / "p.npz", **params())
    out = tmp_path / "dir, with comma" / "m.so"
    assert aot_main(["build", str(src), "-o", str(out), "--params", str(tmp_path / "p.npz"),
                     "--keep-c", "-q"]) == 0
    names = {p.name for p in out.parent.iterdir()}
    assert {"m.c", "m.h", "m.so", "m.weights.s", "m.weights.bin"} <= names
    asm = (out.parent / "m.weights.s").read_text()
    assert '.incbin "m.weights.bin"' in asm and str(tmp_path) not in asm
    assert "extern const union" in (out.parent / "m.c").read_text()
    # the firmware sources: weights as C arrays, no blob
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "fw" / "m.c"),
                     "--params", str(tmp_path / "p.npz"), "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "fw").iterdir()) == ["m.c", "m.h"]
    built = mlvm.load(out)
    from_api = mlvm.compile(src, params=params())
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    for a, b in zip(built.main(x), from_api.main(x), strict=True):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    assert np.array_equal(built.main(x)[1].view(np.uint32), params()["v"].view(np.uint32))


def test_weight_symbols_stay_inside_the_shared_object(tmp_path: Path) -> None:
    src = tmp_path / "m.mlir"
    src.write_text(SRC)
    np.savez(tmp_path / "p.npz", **params())
    assert aot_main(["build", str(src), "-o", str(tmp_path / "m.so"), "--params",
                     str(tmp_path / "p.npz"), "-q"]) == 0
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(tmp_path / "m.so")],
                         capture_output=True, text=True, check=True).stdout
    assert "m__d" not in dyn


def test_c_arrays_are_written_one_weight_at_a_time(tmp_path: Path) -> None:
    """`mlvm-aot compile` writes each weight's words as the C file is
    written (a ResNet-50's are 300 MB of text): the file holds exactly the
    text `EmittedC.c` gives, every word in place, and no mark left over."""
    from mlvm.codegen.emitter import emit_c
    from mlvm.pipeline import lower, parse_file

    src = tmp_path / "m.mlir"
    src.write_text(SRC)
    module, _ = parse_file(src)
    lower(module, mlvm.CompileOptions(), str(src))
    out = emit_c(module, "m", params(), str(src))
    out.write_c(tmp_path / "m.c")
    text = (tmp_path / "m.c").read_text()
    assert text == out.c and "\0" not in text and "\0" in out.c_marked
    v = params()["v"].reshape(-1).view("<u4")
    assert ", ".join(f"0x{int(word):08x}u" for word in v[:4]) in text  # nan, -0.0, inf, denormal
    assert len(out.c_marked) < len(text)
