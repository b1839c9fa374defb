"""Builds the streaming sample's C driver, runs two interleaved streams and
checks every result against the numpy reference of the same model.

    .venv/bin/python samples/streaming/run.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mlvm import reference
from mlvm.codegen.cc import INCLUDE_DIR, runtime_sources
from mlvm.dialect.control import queue_key
from mlvm.pipeline import parse_file

HERE = Path(__file__).resolve().parent
STREAMS, FRAMES = 2, 3


def frame(s: int, f: int) -> np.ndarray:
    i = np.arange(16)
    return (((s * 7 + f * 3 + i) % 11).astype(np.float32) / np.float32(5) - np.float32(1)).reshape(1, 16)


def expected() -> dict[int, tuple[list[np.ndarray], np.ndarray]]:
    """Per stream: the results pushed and the returned total, by the reference."""
    module, _ = parse_file(HERE / "stream.mlir")
    out = {}
    for s, gain in enumerate((1.0, -2.0)):
        queues = {queue_key("frames"): [frame(s, f) for f in range(FRAMES)], queue_key("results"): []}
        (total,) = reference.run(module, "stream", [np.array(gain, np.float32)], queues)
        out[s] = (queues[queue_key("results")], total)
    return out


def build_and_run(workdir: Path) -> str:
    aot = Path(sys.executable).parent / "mlvm-aot"
    subprocess.run([str(aot), "compile", str(HERE / "stream.mlir"), "-o", str(workdir / "stream.c")], check=True)
    exe = workdir / "stream"
    subprocess.run(
        ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(INCLUDE_DIR),
         "-I", str(workdir), str(HERE / "main.c"), str(workdir / "stream.c"),
         *map(str, runtime_sources()), "-lm", "-o", str(exe)],
        check=True,
    )
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


def check(stdout: str) -> list[tuple[int, int]]:
    """Compares the driver's output with the reference; the order results came in."""
    want = expected()
    order = []
    for line in stdout.splitlines():
        kind, *rest = line.split()
        if kind == "result":
            s, f = int(rest[0]), int(rest[1])
            np.testing.assert_allclose(np.array(rest[2:], np.float32), want[s][0][f], rtol=1e-5, atol=1e-6)
            order.append((s, f))
        elif kind == "total":
            s = int(rest[0])
            np.testing.assert_allclose(np.array(rest[1:], np.float32), want[s][1], rtol=1e-5, atol=1e-6)
    assert sorted(order) == [(s, f) for s in range(STREAMS) for f in range(FRAMES)], order
    return order


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = build_and_run(Path(tmp))
    order = check(out)
    print(out.strip())
    print("results arrived in the order", " ".join(f"s{s}f{f}" for s, f in order))
    print("all results match the numpy reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
