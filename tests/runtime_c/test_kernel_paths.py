"""Every kernel path on this host: the kernels built as portable C, with
AVX2 + FMA and with AVX-512 (each where the CPU runs it), and for the host
itself (-march=native, what mlvm builds by default).

* tests/runtime_c/kernels/kernel_paths.c: matmul and conv2d against float64
  loops. It names the path it ran, so a build that silently fell back is
  caught.
* tests/runtime_c/kernels/vmath_ulp.c: exp, sigmoid, tanh and erf of
  mlvm/vmath.h within their documented ulp bounds over a sweep of f32 bit
  patterns (every 10007th) and the edge values; with and without FMA the
  polynomials round differently, so each path is measured.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from mlvm.codegen.cc import INCLUDE_DIR, RUNTIME_DIR, host_cpu_flags

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "kernels" / "kernel_paths.c"
VMATH = HERE / "kernels" / "vmath_ulp.c"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2"]
# path: (flags, the /proc/cpuinfo flags the CPU needs to run it)
PATHS = {
    "portable": (["-DMLVM_PORTABLE_KERNELS"], ()),
    "avx2": (["-mavx2", "-mfma"], ("avx2", "fma")),
    "avx512": (["-mavx512f", "-mfma"], ("avx512f", "fma")),
}
LINE = re.compile(r"^kernel_paths\[(\w+)\]: (\d+) cases, (\d+) failures$", re.M)


def build_and_run(program: Path, flags: list[str], tmp_path: Path) -> str:
    exe = tmp_path / program.stem
    kernels = sorted((RUNTIME_DIR / "src" / "kernels").glob("*.c"))
    cmd = ["cc", *STRICT, *flags, "-I", str(INCLUDE_DIR), str(program),
           *(str(k) for k in kernels), "-lm", "-o", str(exe)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, " ".join(cmd) + "\n" + res.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr[-4000:]
    return run.stdout


def run_path(flags: list[str], tmp_path: Path) -> re.Match[str]:
    stdout = build_and_run(PROGRAM, flags, tmp_path)
    m = LINE.search(stdout)
    assert m is not None, stdout
    assert int(m.group(2)) >= 500 and m.group(3) == "0", stdout
    return m


def path_flags(path: str) -> list[str]:
    flags, needs = PATHS[path]
    missing = set(needs) - host_cpu_flags()
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(sorted(missing))}")
    return flags


@pytest.mark.parametrize("path", list(PATHS))
def test_kernel_path(path: str, tmp_path: Path) -> None:
    assert run_path(path_flags(path), tmp_path).group(1) == path


@pytest.mark.parametrize("path", list(PATHS))
def test_vector_math_within_its_ulp_bounds(path: str, tmp_path: Path) -> None:
    stdout = build_and_run(VMATH, path_flags(path), tmp_path)
    lines = re.findall(rf"^vmath_ulp\[{path}\] (\w+): max .* ulp", stdout, re.M)
    assert lines == ["exp", "sigmoid", "tanh", "erf"], stdout


def test_host_path_is_the_best_the_cpu_has(tmp_path: Path) -> None:
    have = host_cpu_flags()
    want = "avx512" if {"avx512f", "fma"} <= have else "avx2" if {"avx2", "fma"} <= have else "portable"
    assert run_path(["-march=native"], tmp_path).group(1) == want
