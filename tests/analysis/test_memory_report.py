"""Memory plans of the samples: within 5% of the lower bound, far below no reuse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlvm.analysis.memory_report import module_report
from mlvm.pipeline import CompileOptions, lower, parse_file

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = [
    ROOT / "samples/mlp/mlp.mlir",
    ROOT / "samples/mnist_train/train_step.mlir",
    ROOT / "samples/mlp_mixer/mixer_b1.mlir",
    ROOT / "samples/mlp_mixer/mixer_b8.mlir",
]
OPTIONS = [CompileOptions(), CompileOptions(fuse=False), CompileOptions(fuse=False, inplace=False)]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("options", OPTIONS, ids=("all", "nofuse", "noinplace"))
def test_arena_near_lower_bound(sample: Path, options: CompileOptions) -> None:
    module, name = parse_file(sample)
    lower(module, options, name)
    for fr in module_report(module)["functions"]:
        assert fr["lower_bound_bytes"] <= fr["arena_bytes"] <= 1.05 * fr["lower_bound_bytes"], fr
        assert fr["arena_bytes"] < fr["intermediate_bytes"], fr
        assert len({(b["offset"], b["start"]) for b in fr["buffers"]}) == len(fr["buffers"])


def test_cli_prints_figures(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "mlvm-aot"
    shapes = {"w1": (64, 32), "b1": (32,), "w2": (32, 10), "b2": (10,)}
    np.savez(tmp_path / "init.npz", **{k: np.zeros(s, np.float32) for k, s in shapes.items()})
    res = subprocess.run(
        [str(exe), "compile", str(SAMPLES[1]), "-o", str(tmp_path / "t.c"),
         "--params", str(tmp_path / "init.npz"), "--memory-report", str(tmp_path / "r.json")],
        capture_output=True, text=True,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["@train_step", "@predict", "@sgd_step", "@classify"]
    assert all("lower bound" in ln and "(x1.0" in ln for ln in lines), lines


def test_mixer_b8_arena_is_a_tenth_of_no_reuse() -> None:
    """Every intermediate in its own buffer would take 25 MB; the arena needs 1.5 MB."""
    module, name = parse_file(ROOT / "samples/mlp_mixer/mixer_b8.mlir")
    lower(module, CompileOptions(), name)
    (fr,) = module_report(module)["functions"]
    assert fr["intermediate_bytes"] > 20_000_000
    assert fr["arena_bytes"] <= fr["intermediate_bytes"] / 10, fr


def test_intermediates_do_not_depend_on_passes() -> None:
    """Fused values still count: the figure is the source program's."""
    sizes = set()
    for options in OPTIONS:
        module, name = parse_file(SAMPLES[3])
        lower(module, options, name)
        sizes.add(module_report(module)["functions"][0]["intermediate_bytes"])
    assert len(sizes) == 1, sizes


def test_plot_has_ticks_names_and_png(tmp_path: Path) -> None:
    """A new user's first hour: axis ticks, buffer names, PNG as well as SVG."""
    from mlvm.analysis.memory_report import byte_ticks, nice_ticks
    from mlvm.cli import aot_main

    assert nice_ticks(37) == [0, 10, 20, 30, 40]
    assert byte_ticks(196608) == [0, 50 * 1024, 100 * 1024, 150 * 1024, 200 * 1024]
    src = tmp_path / "m.mlir"
    src.write_text("""\
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %a = "mlvm.exp"(%x) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %b = "mlvm.matmul"(%a, %x) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %c = "mlvm.matmul"(%b, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
""")
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "m.c"), "--memory-plot",
                     str(tmp_path / "p.svg"), "--no-fuse"]) == 0
    svg = (tmp_path / "p.svg").read_text()
    assert "KiB</text>" in svg and 'text-anchor="middle">1</text>' in svg
    assert ">a (exp)</text>" in svg and ">b (matmul)</text>" in svg, svg
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "m.c"), "--memory-plot",
                     str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert aot_main(["compile", str(src), "-o", str(tmp_path / "m.c"), "--memory-plot",
                     str(tmp_path / "p.pdf")]) == 1
