"""The streaming sample: two streams interleaved by the scheduler, in C."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_run() -> object:
    spec = importlib.util.spec_from_file_location("streaming_run", ROOT / "samples/streaming/run.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_two_streams_interleave_and_match_reference(tmp_path: Path) -> None:
    run = load_run()
    out = run.build_and_run(tmp_path)  # type: ignore[attr-defined]
    order = run.check(out)  # type: ignore[attr-defined]
    streams = [s for s, _ in order]
    # Neither stream ran all its frames before the other started.
    assert streams.index(1) < len(streams) - streams[::-1].index(0) - 1
    assert streams.index(0) < len(streams) - streams[::-1].index(1) - 1


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_generated_c_is_strict_c99(
    compiler: str,
    tmp_path: Path,
    aot_build: Callable[[Path, Path, Path | None], Path],
    strict_c99: Callable[[str, Path], None],
) -> None:
    so = aot_build(ROOT / "samples/streaming/stream.mlir", tmp_path, None)
    strict_c99(compiler, so.with_suffix(".c"))
