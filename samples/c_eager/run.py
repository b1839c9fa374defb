"""Export the digits, build train.c against the runtime's sources, run it.

    python samples/c_eager/run.py [--out DIR] [--steps N] [--seed S] [--checks]

`--checks` builds the runtime with MLVM_CHECKS (every misuse reported as a
status code). The program itself only uses the runtime's C API.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent
REPO = SAMPLE_DIR.parents[1]
sys.path.insert(0, str(REPO))

from mlvm.codegen.cc import INCLUDE_DIR, compiler, runtime_sources  # noqa: E402

sys.path.insert(0, str(SAMPLE_DIR))
from export_digits import export  # noqa: E402

CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic"]


def build(out_dir: Path, checks: bool = False, extra: list[str] | None = None,
          runtime: Path | None = None) -> Path:
    """train.c and the runtime compiled into one program (`runtime`: a
    static library of the runtime built with the same flags, linked instead
    of compiling its sources)."""
    exe = out_dir / ("train-checks" if checks else "train")
    rt = [str(runtime)] if runtime is not None else [str(s) for s in runtime_sources()]
    cmd = [compiler(), *CFLAGS, *(extra or []), *(["-DMLVM_CHECKS"] if checks else []),
           "-I", str(INCLUDE_DIR), str(SAMPLE_DIR / "train.c"), *rt, "-lm", "-o", str(exe)]
    subprocess.run(cmd, check=True)
    return exe


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "out" / "c_eager"))
    ap.add_argument("--steps", type=int, default=1760)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--checks", action="store_true")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = out / "digits.bin"
    export(data, args.seed)
    exe = build(out, args.checks)
    return subprocess.run([str(exe), str(data), str(args.steps), str(args.seed)]).returncode


if __name__ == "__main__":
    sys.exit(main())
