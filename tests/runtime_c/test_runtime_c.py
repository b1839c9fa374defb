"""The C runtime on its own: C unit tests, memory checkers, strict and
bare-metal compiles, the emitted source tree, and the eager C sample.

* The C tests (tests/runtime_c/*.c, a runner of their own that prints
  `runtime_c[<build>]: N tests, M checks, F failures`) are built twice, as
  the release runtime and with MLVM_CHECKS, under
  -fsanitize=address,undefined,float-cast-overflow, and must report 0 failures.
* The same tests, built without sanitizers, run under valgrind memcheck
  (when installed): no errors, no leaks.
* The runtime's sources compile with -std=c99 -Wall -Wextra -Werror
  -pedantic under gcc and clang, in both builds.
* `mlvm-aot runtime --emit` (here `python -m mlvm.runtime --emit`) writes a
  tree whose sources include only freestanding headers, <string.h> and
  <math.h>, and that compiles with arm-none-eabi-gcc for a Cortex-M4 (when
  installed).
* samples/c_eager trains the digits MLP through the eager C API: its loss
  falls and its held-out accuracy is at least 90 %.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlvm.codegen.cc import INCLUDE_DIR, runtime_library, runtime_sources
from mlvm.runtime import FREESTANDING_HEADERS, emit_runtime, runtime_files

import c_build

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TEST_SOURCES = sorted(HERE.glob("*.c"))
COUNT_LINE = re.compile(
    r"^runtime_c\[(release|checks)\]: (\d+) tests, (\d+) checks, (\d+) failures$", re.M
)
BUILDS = {"release": [], "checks": ["-DMLVM_CHECKS"]}
# The C tests of each build (TEST_LIST in check.h).
MIN_TESTS = {"release": 42, "checks": 54}


def cc() -> str:
    return os.environ.get("CC") or "cc"


def compile_tests(out: Path, flags: list[str], own: list[str] | None = None) -> Path:
    """The C tests linked with the runtime built with `flags` (`own`: flags
    for the tests' sources only)."""
    return c_build.build(TEST_SOURCES, flags, out, [HERE], own=own or [])


def check_count_line(stdout: str, build: str) -> None:
    m = COUNT_LINE.search(stdout)
    assert m, f"no count line in:\n{stdout}"
    assert m.group(1) == build
    assert int(m.group(2)) >= MIN_TESTS[build], stdout
    assert int(m.group(4)) == 0, stdout


@pytest.mark.parametrize("build", list(BUILDS))
def test_c_tests_under_asan_ubsan(build: str, tmp_path: Path) -> None:
    exe = compile_tests(tmp_path / f"rt-{build}", [*c_build.SANITIZE, *BUILDS[build]])
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1",
               UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    res = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "runtime error" not in res.stderr and "AddressSanitizer" not in res.stderr, res.stderr
    check_count_line(res.stdout, build)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
@pytest.mark.parametrize("build", list(BUILDS))
def test_c_tests_under_valgrind(build: str, tmp_path: Path) -> None:
    # the runtime as the strict gcc build below (one library for both), the
    # tests with debug info for valgrind's reports
    exe = compile_tests(tmp_path / f"rt-vg-{build}", ["-O2", *BUILDS[build]], own=["-g"])
    res = subprocess.run(
        ["valgrind", "--leak-check=full", "--show-leak-kinds=all",
         "--errors-for-leak-kinds=all", "--error-exitcode=99", str(exe)],
        capture_output=True, text=True, timeout=300,
    )
    print(res.stdout)
    print(res.stderr[-2000:])
    assert res.returncode == 0, res.stderr[-4000:]
    check_count_line(res.stdout, build)
    assert "ERROR SUMMARY: 0 errors" in res.stderr
    assert "All heap blocks were freed -- no leaks are possible" in res.stderr


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("build", list(BUILDS))
def test_runtime_compiles_strictly(compiler: str, build: str) -> None:
    if shutil.which(compiler) is None:
        pytest.skip(f"{compiler} not installed")
    flags = [*c_build.STRICT, "-O2", *BUILDS[build]]
    if compiler == "clang":
        # clang warns from its front end (its -Wuninitialized is not an
        # optimiser's): every file checked in one process, no code
        # generated; also with the AVX2 and the AVX-512 (VNNI, VBMI)
        # kernels' branches compiled in, which baseline x86-64 leaves out
        for isa in ([], ["-march=haswell"], ["-march=icelake-server"]):
            res = subprocess.run([compiler, *flags, *isa, "-fsyntax-only", "-I", str(INCLUDE_DIR),
                                  *map(str, runtime_sources())], capture_output=True, text=True)
            assert res.returncode == 0, " ".join(isa) + "\n" + res.stderr[-4000:]
        return
    # mlvm's cached builder, as the tests' own strict builds use it (the
    # release one is the library test_options.py links)
    lib = runtime_library(compiler, flags)
    members = subprocess.run(["ar", "t", str(lib)], capture_output=True, text=True, check=True)
    assert len(members.stdout.split()) == len(runtime_sources())


def test_static_library_holds_the_machine() -> None:
    """The cached library generated modules link against has the VM too."""
    lib = runtime_library()
    res = subprocess.run(["nm", "-g", "--defined-only", str(lib)], capture_output=True,
                         text=True, check=True)
    for sym in ("mlvm_vm_new", "mlvm_exec", "mlvm_pad_cut", "mlvm_arena_alloc",
                "mlvm_allocator_std", "mlvm_matmul_f32"):
        assert re.search(rf"\b{sym}\b", res.stdout), sym


# --------------------------------------------------------------------------
# The emitted runtime
# --------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# Functions of <string.h> and <math.h> (C99), in float, double or long double.
STRING_OR_MATH = re.compile(
    r"^(mem(cpy|move|set|cmp|chr)|str\w+|(exp|exp2|expm1|log|log2|log10|log1p|sqrt|cbrt"
    r"|tanh|sinh|cosh|sin|cos|tan|asin|acos|atan|atan2|pow|fabs|floor|ceil|round|trunc"
    r"|fmod|fmin|fmax|erf|erfc|lgamma|tgamma|hypot|nearbyint|rint|lrint|lround|ldexp"
    r"|frexp|modf|copysign|nextafter|remainder|fma)[fl]?)$"
)


def emit(dest: Path, freestanding: bool) -> list[Path]:
    args = [sys.executable, "-m", "mlvm.runtime", "--emit", str(dest)]
    if freestanding:
        args.append("--freestanding")
    res = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    assert "files written" in res.stdout
    return sorted(p for p in dest.rglob("*") if p.is_file())


def test_emit_copies_headers_and_sources(tmp_path: Path) -> None:
    files = emit(tmp_path / "full", freestanding=False)
    rel = {p.relative_to(tmp_path / "full").as_posix() for p in files}
    for h in ("vm.h", "shape.h", "tensor.h", "scratch.h", "arena.h", "exec.h", "alloc.h",
              "status.h", "kernels.h", "module.h", "runtime.h"):
        assert f"include/mlvm/{h}" in rel
    assert "src/alloc_std.c" in rel and "src/exec.c" in rel
    assert {f.as_posix() for f in runtime_files()} == rel
    free = emit(tmp_path / "free", freestanding=True)
    assert not any(p.name == "alloc_std.c" for p in free)
    # The copies are the sources themselves.
    assert (tmp_path / "free/src/exec.c").read_bytes() == (
        INCLUDE_DIR.parent / "src/exec.c").read_bytes()


def test_emitted_sources_need_only_freestanding_string_math(tmp_path: Path) -> None:
    files = emit_runtime(tmp_path, freestanding=True)
    local = {p.name for p in files}
    for p in files:
        for kind, name in INCLUDE.findall(p.read_text()):
            if kind == '"':
                assert Path(name).name in local, f"{p.name}: {name}"
            else:
                assert name in FREESTANDING_HEADERS, f"{p.name} includes <{name}>"


def test_emitted_objects_call_only_string_and_math(tmp_path: Path) -> None:
    """Linked together, the freestanding runtime needs nothing from the C
    library but <string.h> and <math.h> functions."""
    files = emit_runtime(tmp_path / "rt", freestanding=True)
    objs = []
    for src in (p for p in files if p.suffix == ".c"):
        obj = tmp_path / (src.stem + ".o")
        subprocess.run([cc(), "-std=c99", "-O2", "-I", str(tmp_path / "rt/include"), "-c",
                        str(src), "-o", str(obj)], check=True)
        objs.append(str(obj))
    defined = subprocess.run(["nm", "-g", "--defined-only", *objs], capture_output=True,
                             text=True, check=True).stdout
    undefined = subprocess.run(["nm", "-g", "--undefined-only", *objs],
                               capture_output=True, text=True, check=True).stdout
    have = set(re.findall(r"\b[TDRBC] (\w+)$", defined, re.M))
    # the linker's own table, where position-independent code takes a
    # function's address (the kernels compare epilogues with one)
    have.add("_GLOBAL_OFFSET_TABLE_")
    need = set(re.findall(r"\bU (\w+)$", undefined, re.M)) - have
    assert need, "the kernels call memmove and libm"
    assert all(STRING_OR_MATH.match(name) for name in need), sorted(need)


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None,
                    reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("build", list(BUILDS))
def test_emitted_runtime_compiles_for_cortex_m4(build: str, tmp_path: Path) -> None:
    files = emit_runtime(tmp_path / "rt", freestanding=True)
    for src in (p for p in files if p.suffix == ".c"):
        cmd = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-std=c99", "-Wall",
               "-Werror", *BUILDS[build], "-I", str(tmp_path / "rt/include"), "-c", str(src),
               "-o", str(tmp_path / (src.stem + ".o"))]
        res = subprocess.run(cmd, capture_output=True, text=True)
        assert res.returncode == 0, " ".join(cmd) + "\n" + res.stderr
    # The full tree too, with the default allocator compiled out.
    alloc = INCLUDE_DIR.parent / "src" / "alloc_std.c"
    res = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-std=c99",
                          "-Wall", "-Werror", "-DMLVM_NO_STDLIB", "-I", str(INCLUDE_DIR),
                          "-c", str(alloc), "-o", str(tmp_path / "alloc_std.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


# --------------------------------------------------------------------------
# samples/c_eager
# --------------------------------------------------------------------------

def test_c_eager_sample_trains_digits(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "samples" / "c_eager"))
    try:
        import run as sample  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    data = tmp_path / "digits.bin"
    sample.export(data)
    # MLVM_CHECKS and the sanitizers: any misuse of the API would show.
    exe = sample.build(tmp_path, checks=True, extra=c_build.SANITIZE,
                       runtime=c_build.runtime_archive([*c_build.SANITIZE, "-DMLVM_CHECKS"]))
    # 660 steps (3 loss lines), not the sample's 1760: every call the
    # training makes is made by then, and under the sanitizers each step
    # costs 5 ms (the released build: 96 % held-out accuracy at 660)
    res = subprocess.run([str(exe), str(data), "660"], capture_output=True, text=True,
                         timeout=120)
    print(res.stdout)
    assert res.returncode == 0, res.stdout + res.stderr
    losses = [float(v) for v in re.findall(r"^step\s+\d+\s+loss ([\d.]+)$", res.stdout, re.M)]
    assert len(losses) == 3
    m = re.search(r"^loss: ([\d.]+) -> ([\d.]+)$", res.stdout, re.M)
    assert m, res.stdout
    first, last = float(m.group(1)), float(m.group(2))
    assert first > 2.0 and last < 0.1 * first
    assert losses == sorted(losses, reverse=True) or losses[-1] < losses[0] / 10
    acc = re.search(r"^held-out accuracy: ([\d.]+)%", res.stdout, re.M)
    assert acc, res.stdout
    assert float(acc.group(1)) >= 90.0
