"""How the compiler's time grows with the graph: `mlvm-aot compile` (to C,
no C compiler) of a chain of n elementwise ops, each reading the one
before and a second input, for n = 500 .. 4000, with fusion (the chain is
one fused loop) and without (n kernel calls, each computed in place over
the one before). Linear passes give the same time per op at every n.

    python bench/compile_time.py [--sizes 500,1000,2000,4000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPS = ("mlvm.add", "mlvm.mul", "mlvm.sub", "mlvm.max")


def chain(n: int) -> str:
    t = "tensor<64xf32>"
    lines = [f"func.func @main(%x: {t}, %y: {t}) -> {t} {{"]
    v = "%x"
    for i in range(n):
        lines.append(f'  %v{i} = "{OPS[i % len(OPS)]}"({v}, %y) : ({t}, {t}) -> {t}')
        v = f"%v{i}"
    lines.append(f"  func.return {v} : {t}\n}}\n")
    return "\n".join(lines)


def compile_seconds(src: Path, out: Path, *flags: str) -> float:
    """Best of three runs of `mlvm-aot compile` (the interpreter's start included)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mlvm", "compile", str(src), "-o", str(out), "-q", *flags],
                       check=True)
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="500,1000,2000,4000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        empty = d / "empty.mlir"
        empty.write_text(chain(1))
        base = compile_seconds(empty, d / "empty.c")
        print(f"one op: {base:.2f} s (start-up); per op below: (time - that) / n")
        print("| ops | fused | per op | unfused | per op |")
        print("|---|---|---|---|---|")
        for n in sizes:
            src = d / f"chain{n}.mlir"
            src.write_text(chain(n))
            fused = compile_seconds(src, d / "f.c")
            plain = compile_seconds(src, d / "p.c", "--no-fuse")
            print(f"| {n} | {fused:.2f} s | {(fused - base) / n * 1e3:.2f} ms | {plain:.2f} s "
                  f"| {(plain - base) / n * 1e3:.2f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
