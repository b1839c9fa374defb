"""The GEMM of runtime sources side by side with OpenBLAS, in one process.

    python bench/gemm_ab.py [--rev REV ...] [--shapes 512x512x512,...]
                            [--panel 32] [--rounds 40] [--aligns 16,32,64]

Each source (a git revision's mlvm/runtime_c, or `.`: the working tree's)
is built once per loop alignment (`-falign-loops=A`) into a shared object
of its own, and bench/gemm_ab.c calls mlvm_matmul_ws_f32 from each and
OpenBLAS's sgemm (numpy's bundled library, its Haswell kernels unless
OPENBLAS_CORETYPE says otherwise) in turns, in one process pinned to one
core. It prints per source the mean over the alignments of the median
ratio of its time to OpenBLAS's in the same round.

Why: on a shared host a process's speed drifts by 10-30 % from minute to
minute, so separate runs of two builds compare the host with itself; in
one process, taking turns, each round's ratio sees the same host. And a
build's speed moved 5-15 % with where its tile loop fell against 32- and
64-byte lines, so one build per source measures its layout, not its
code: the mean over several alignments does not. What `make bench`'s
matmul rows cannot tell apart, this can (bench/README.md, 2026-11-29).
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CFLAGS = ["-std=c99", "-O3", "-march=native", "-fno-math-errno", "-fPIC"]
# (sgemm, 64-bit ints, set threads) in the builds of OpenBLAS numpy ships
BLAS_SYMBOLS = (
    ("scipy_cblas_sgemm64_", 1, "scipy_openblas_set_num_threads64_"),
    ("cblas_sgemm64_", 1, "openblas_set_num_threads64_"),
    ("cblas_sgemm", 0, "openblas_set_num_threads"),
)


def openblas() -> tuple[str, str, int, str]:
    """numpy's OpenBLAS: its path and the names of sgemm and of its thread
    setter."""
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs", "*openblas*.so*"))
    for lib in libs:
        names = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                               text=True).stdout.split()
        for sgemm, wide, threads in BLAS_SYMBOLS:
            if sgemm in names and threads in names:
                return lib, sgemm, wide, threads
    sys.exit("gemm_ab: no OpenBLAS with cblas_sgemm next to numpy (numpy.libs)")


def source(rev: str, tmp: Path) -> Path:
    """The runtime's source tree of `rev` (`.`: the working tree)."""
    if rev == ".":
        return ROOT / "mlvm" / "runtime_c"
    out = tmp / f"src-{len(list(tmp.glob('src-*')))}"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "mlvm/runtime_c"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out / "mlvm" / "runtime_c"


def build(src: Path, align: int, out: Path) -> Path:
    """The whole runtime of `src` as one shared object (-Bsymbolic: its
    own symbols first, whatever else the process loads)."""
    objs = out.with_suffix("")
    objs.mkdir()
    files = [f for f in (src / "src").rglob("*.c") if f.name != "comm_mpi.c"]

    def one(f: Path) -> str:
        o = objs / (f.relative_to(src / "src").as_posix().replace("/", "_") + ".o")
        subprocess.run(["gcc", *CFLAGS, f"-falign-loops={align}", "-I", str(src / "include"),
                        "-c", str(f), "-o", str(o)], check=True)
        return str(o)

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        objects = list(pool.map(one, files))
    subprocess.run(["gcc", "-shared", "-Wl,-Bsymbolic", "-o", str(out), *objects, "-lm"], check=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rev", action="append", help="a git revision, or . (default: HEAD~1 and .)")
    ap.add_argument("--shapes", default="256x256x256,512x512x512,1024x1024x1024,1024x256x1024",
                    help="MxNxK,...")
    ap.add_argument("--panel", type=int, default=0, help="b in panels of this many columns")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--aligns", default="16,32,64", help="-falign-loops values, one build each")
    ap.add_argument("--cpu", type=int, default=1, help="the core to pin to")
    args = ap.parse_args()
    revs = args.rev or ["HEAD~1", "."]
    aligns = [int(a) for a in args.aligns.split(",")]
    if len(revs) * len(aligns) > 8:
        sys.exit("gemm_ab: at most 8 builds (sources x alignments)")
    lib, sgemm, wide, threads = openblas()
    env = dict(os.environ, OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "Haswell"))
    with tempfile.TemporaryDirectory(prefix="mlvm-gemm-ab-") as t:
        tmp = Path(t)
        exe = tmp / "gemm_ab"
        subprocess.run(["gcc", "-std=gnu11", "-O2", "-I", str(ROOT / "mlvm" / "runtime_c" / "include"),
                        str(ROOT / "bench" / "gemm_ab.c"), "-ldl", "-o", str(exe)], check=True)
        sos = [[build(source(rev, tmp), a, tmp / f"rt{i}-a{a}.so") for a in aligns]
               for i, rev in enumerate(revs)]
        flat = [str(s) for per in sos for s in per]
        print(f"OpenBLAS: {os.path.basename(lib)} (core {env['OPENBLAS_CORETYPE']}); cpu {args.cpu}; "
              f"{args.rounds} rounds; loop alignments {args.aligns}; b {'in panels of ' + str(args.panel) if args.panel else 'row-major'}")
        print(f"{'shape':>16}  " + "  ".join(f"{r:>14}" for r in revs) + "   (time / OpenBLAS's time)")
        for shape in args.shapes.split(","):
            m, n, k = shape.split("x")
            run = subprocess.run(["taskset", "-c", str(args.cpu), str(exe), m, n, k, str(args.panel),
                                  str(args.rounds), lib, sgemm, str(wide), threads, *flat],
                                 capture_output=True, text=True, env=env, check=True)
            ratio = {line.split("\t")[0]: float(line.split("\t")[3]) for line in run.stdout.splitlines()}
            means = [sum(ratio[str(s)] for s in per) / len(per) for per in sos]
            print(f"{shape:>16}  " + "  ".join(f"{x:14.3f}" for x in means))
    return 0


if __name__ == "__main__":
    sys.exit(main())
