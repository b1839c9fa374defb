"""The C runtime as a library of its own.

* `runtime_shared(checks)` builds the whole runtime (VM, tensors, shapes,
  scratch pads, arenas, eager execution, kernels) into a cached shared
  library, with or without `MLVM_CHECKS`; `mlvm.eager` loads it with cffi.
* `emit_runtime(dest)` copies the runtime's headers and sources into a
  firmware tree (`mlvm-aot runtime --emit DIR`, or
  `python -m mlvm.runtime --emit DIR`).

The static library that generated modules link against is built by
`mlvm.codegen.cc.runtime_library`; both compile the same sources.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mlvm.codegen.cc import (
    RUNTIME_DIR,
    build_lock,
    cache_dir,
    cc_version,
    cflags,
    compiler,
    fingerprint,
    run_cc,
    runtime_fingerprint,
    runtime_library,
)

SRC_DIR = RUNTIME_DIR / "src"

#: Runtime files that need a hosted system, left out of freestanding trees:
#: the malloc allocator (the VM takes the firmware's there) and the MPI
#: communicator (MPI needs processes).
STDLIB_SOURCES = ("alloc_std.c", "comm_mpi.c", "comm_mpi.h")

#: Headers the runtime's sources may include when built for bare metal: the
#: freestanding headers plus <string.h> and <math.h>.
FREESTANDING_HEADERS = frozenset(
    {"float.h", "iso646.h", "limits.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h",
     "string.h", "math.h",
     # compiler-provided intrinsics, included only under #if defined(__AVX2__) / (__AVX512F__)
     # and #if defined(__ARM_FEATURE_DSP)
     "immintrin.h", "arm_acle.h"}
)


def runtime_shared(checks: bool = True, cc: str | None = None,
                   flags: list[str] | None = None) -> Path:
    """The runtime as a shared library (cached by sources, compiler and flags).

    `checks` compiles it with `MLVM_CHECKS`: handles, dtypes, shapes and
    bounds are validated and reported as status codes.
    """
    cc = cc or compiler()
    flags = list(flags if flags is not None else cflags())
    if "-fPIC" not in flags:
        flags.append("-fPIC")
    if checks:
        flags.append("-DMLVM_CHECKS")
    key = fingerprint(runtime_fingerprint(), cc, cc_version(cc), *flags)
    lib = cache_dir() / "runtime" / f"libmlvm_rt-{key}.so"
    if lib.exists():
        return lib
    # Linked from the static library of the same flags (built once, its
    # files in parallel; without checks it is the one modules link).
    archive = runtime_library(cc, flags)
    with build_lock(lib):
        if not lib.exists():
            with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
                tmp_lib = os.path.join(tmp, lib.name)
                run_cc([cc, *flags, "-shared", "-Wl,--whole-archive", str(archive),
                        "-Wl,--no-whole-archive", "-lm", "-o", tmp_lib])
                os.replace(tmp_lib, lib)  # atomic: concurrent builders agree
    return lib


def runtime_files(freestanding: bool = False) -> list[Path]:
    """Every header and source of the runtime, relative to its root."""
    files = sorted(
        p.relative_to(RUNTIME_DIR)
        for p in RUNTIME_DIR.rglob("*")
        if p.is_file() and p.suffix in (".c", ".h")
    )
    if freestanding:
        files = [f for f in files if f.name not in STDLIB_SOURCES]
    return files


def emit_runtime(dest: str | Path, freestanding: bool = False) -> list[Path]:
    """Copy the runtime into `dest` (`include/mlvm/*.h`, `src/**/*.c`).

    `freestanding` leaves out the default malloc allocator, so every file
    compiles with only freestanding headers, <string.h> and <math.h>.
    Returns the files written.
    """
    dest = Path(dest)
    out = []
    for rel in runtime_files(freestanding):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(RUNTIME_DIR / rel, target)
        out.append(target)
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of `mlvm-aot runtime`."""
    p.add_argument("--emit", metavar="DIR", required=True,
                   help="copy the runtime's headers and sources into DIR")
    p.add_argument("--freestanding", action="store_true",
                   help="leave out the malloc-based default allocator (bare metal)")


def run(args: argparse.Namespace) -> int:
    """`mlvm-aot runtime --emit DIR [--freestanding]`."""
    files = emit_runtime(args.emit, args.freestanding)
    dest = Path(args.emit)
    print(f"{len(files)} files written to {dest}")
    print(f"compile: cc -std=c99 -I {dest / 'include'} -c {dest / 'src'}/*.c "
          f"{dest / 'src' / 'kernels'}/*.c")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m mlvm.runtime",
        description="copy the mlvm C runtime into a source tree",
    )
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
