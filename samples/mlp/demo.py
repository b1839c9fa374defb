"""`make demo`: compile the sample MLP to C, build it, run it, check it.

Steps, each the way a user would run it:

1. `gen_params.py out/demo` writes the weights (mlp.npz);
2. `mlvm-aot compile` writes mlp.c + mlp.h;
3. the system C compiler checks that the generated C is clean C99
   (`-std=c99 -Wall -Wextra -Werror -pedantic`);
4. `mlvm-aot build` links mlp.so against the runtime;
5. `mlvm.load` loads it, and a few random inputs are compared with a plain
   numpy implementation of the same MLP.

Exits 0 when every output matches within `RTOL` of the output scale.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

import mlvm
from mlvm.codegen.cc import INCLUDE_DIR

SAMPLE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SAMPLE_DIR.parent.parent
MLIR = SAMPLE_DIR / "mlp.mlir"
OUT_DIR = REPO_ROOT / "out" / "demo"

#: Tolerance on max |compiled - numpy|, relative to max |numpy| (the output scale).
RTOL = 1e-5
NUM_INPUTS = 5
C99_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")


def mlp_forward(params: Mapping[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The MLP of mlp.mlir in plain numpy (float32): logits for each row of `x`."""
    h = x
    for i in (1, 2, 3):
        h = h @ params[f"w{i}"] + params[f"b{i}"]
        if i < 3:
            h = np.maximum(h, np.float32(0))
    return h


def console_script(name: str) -> Path:
    """A console script installed next to the running interpreter."""
    return Path(sys.executable).parent / name


class StepFailed(Exception):
    """A command of the demo failed; the message says which and why."""


def run(cmd: Sequence[str | Path]) -> None:
    """Run `cmd`, raising `StepFailed` with its output when it fails."""
    args = [str(c) for c in cmd]
    res = subprocess.run(args, capture_output=True, text=True, cwd=REPO_ROOT)
    if res.returncode != 0:
        raise StepFailed(
            f"command failed (exit {res.returncode}): {' '.join(args)}\n"
            + (res.stderr or res.stdout).strip()
        )


def rel(path: Path) -> str:
    """`path` relative to the repository root, for short output."""
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def kib(path: Path) -> str:
    return f"{path.stat().st_size / 1024:,.0f} KiB"


def demo(out_dir: Path = OUT_DIR) -> bool:
    """Run every step, print the report and return whether the outputs match."""
    out_dir.mkdir(parents=True, exist_ok=True)
    npz, c_path, so = out_dir / "mlp.npz", out_dir / "mlp.c", out_dir / "mlp.so"
    print("mlvm demo: a 784-256-256-10 ReLU MLP compiled ahead of time to C")

    run([sys.executable, SAMPLE_DIR / "gen_params.py", out_dir])
    with np.load(npz) as archive:
        params = {k: archive[k] for k in archive.files}
    n_weights = sum(a.size for a in params.values())
    print(f"  params   {rel(npz)}: {n_weights:,} float32 values (He-normal, seed 0)")

    t0 = time.perf_counter()
    run([console_script("mlvm-aot"), "compile", MLIR, "-o", c_path, "--params", npz])
    h_path = c_path.with_suffix(".h")
    print(
        f"  compile  mlvm-aot compile -> {rel(c_path)} ({kib(c_path)}), "
        f"{h_path.name} ({time.perf_counter() - t0:.1f} s)"
    )

    cc: list[str | Path] = [
        "cc", *C99_FLAGS, "-c", "-I", INCLUDE_DIR, c_path, "-o", c_path.with_suffix(".o")
    ]
    run(cc)
    print(f"  C99      cc {' '.join(C99_FLAGS)} -c {c_path.name}: no warnings")

    t0 = time.perf_counter()
    run([console_script("mlvm-aot"), "build", MLIR, "-o", so, "--params", npz])
    print(f"  build    mlvm-aot build -> {rel(so)} ({time.perf_counter() - t0:.1f} s)")

    module = mlvm.load(so)
    info = module.functions["main"]
    print(
        f"  load     {module!r}: main {info.inputs[0].shape} -> {info.outputs[0].shape}, "
        f"arena {module.arena_bytes} bytes"
    )

    rng = np.random.default_rng(1)
    worst_abs, worst_rel = 0.0, 0.0
    for i in range(NUM_INPUTS):
        x = rng.random((1, 784), dtype=np.float32)
        got = module.main(x)
        want = mlp_forward(params, x)
        err = float(np.max(np.abs(got - want)))
        scale = float(np.max(np.abs(want)))
        worst_abs, worst_rel = max(worst_abs, err), max(worst_rel, err / scale)
        print(
            f"    input {i}: class {int(np.argmax(got))} (numpy {int(np.argmax(want))}), "
            f"max |err| {err:.1e} on outputs up to {scale:.2f}"
        )
    ok = worst_rel <= RTOL
    print(
        f"  result   max abs err {worst_abs:.1e}, max rel err {worst_rel:.1e} "
        f"(tolerance {RTOL:.0e}): {'OK' if ok else 'MISMATCH'}"
    )
    return ok


def main() -> int:
    try:
        return 0 if demo() else 1
    except StepFailed as e:
        print(f"demo: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
