"""`mlvm.compile` on an xDSL module, caching and options."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import mlvm
import mlvm.api
from mlvm.pipeline import parse_file

SRC = """\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlvm.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "mlvm.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
"""


def test_compile_module_op_leaves_it_untouched(tmp_path: Path) -> None:
    (tmp_path / "m.mlir").write_text(SRC)
    module, _ = parse_file(tmp_path / "m.mlir")
    before = str(module)
    m = mlvm.compile(module)
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    np.testing.assert_allclose(m.main(x), -np.exp(x), rtol=1e-6)
    assert str(module) == before  # passes ran on a clone


def test_warm_cache_is_found_before_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached module is looked up by the source's and parameters' bytes:
    the source is not parsed again (a large model's warm compile is a hash)."""
    (tmp_path / "m.mlir").write_text(SRC)
    a = mlvm.compile(tmp_path / "m.mlir")

    def no_parse(*args: object, **kw: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(mlvm.api, "load_source", no_parse)
    assert mlvm.compile(tmp_path / "m.mlir").path == a.path
    # new bytes (unique to this run, so never cached): parsed
    (tmp_path / "m.mlir").write_text(f"// {tmp_path}\n" + SRC)
    with pytest.raises(AssertionError, match="parsed again"):
        mlvm.compile(tmp_path / "m.mlir")


def test_cache_key_follows_source_and_options(tmp_path: Path) -> None:
    (tmp_path / "m.mlir").write_text(SRC)
    a = mlvm.compile(tmp_path / "m.mlir")
    b = mlvm.compile(tmp_path / "m.mlir")
    c = mlvm.compile(tmp_path / "m.mlir", options=mlvm.CompileOptions(fuse=False))
    assert a.path == b.path and a.path != c.path
    (tmp_path / "m.mlir").write_text(SRC.replace("mlvm.neg", "mlvm.sqrt"))
    d = mlvm.compile(tmp_path / "m.mlir")
    assert d.path != a.path
    x = np.ones(4, np.float32)
    np.testing.assert_allclose(d.main(x), np.sqrt(np.exp(x)), rtol=1e-6)


def test_module_cflags_reach_the_module_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MLVM_MODULE_CFLAGS: in the module's compile (and its cache key), not
    in the runtime library's."""
    from mlvm.codegen.cc import runtime_library

    (tmp_path / "m.mlir").write_text(SRC)
    lib = runtime_library()
    a = mlvm.compile(tmp_path / "m.mlir")
    monkeypatch.setenv("MLVM_MODULE_CFLAGS", "-O1")
    b = mlvm.compile(tmp_path / "m.mlir")
    assert b.path != a.path and runtime_library() == lib
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    np.testing.assert_array_equal(b.main(x), a.main(x))
    (tmp_path / "no.h").write_text("#error included by MLVM_MODULE_CFLAGS\n")
    monkeypatch.setenv("MLVM_MODULE_CFLAGS", f"-O1 -include {tmp_path / 'no.h'}")
    with pytest.raises(mlvm.MlvmError, match="included by MLVM_MODULE_CFLAGS"):
        mlvm.compile(tmp_path / "m.mlir")


def test_runtime_objects_are_shared_between_flag_sets_that_read_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A macro a runtime file never reads does not rebuild that file: the
    second library (MLVM_CHECKS) compiles only the files whose preprocessed
    text it changes, and reuses the rest (with -D NAME as two arguments
    too); a code-generation flag (-O1), or one that records the command
    line in the object, rebuilds every file."""
    from mlvm.codegen import cc

    monkeypatch.setenv("MLVM_CACHE_DIR", str(tmp_path / "cache"))
    src = cc.RUNTIME_DIR / "src"
    files = [src / "arena.c", src / "tensor.c", src / "shape.c"]  # tensor.c reads MLVM_CHECKS
    compiled: list[str] = []
    real = cc.run_cc

    def counting(cmd: list[str], cwd: Path | None = None) -> None:
        compiled.extend(Path(a).name for a in cmd if a.endswith(".c"))
        real(cmd, cwd)

    monkeypatch.setattr(cc, "run_cc", counting)
    flags = ["-std=c99", "-O2"]
    a = cc.runtime_library("gcc", flags, sources=files)
    assert sorted(compiled) == ["arena.c", "shape.c", "tensor.c"]
    compiled.clear()
    b = cc.runtime_library("gcc", [*flags, "-DMLVM_CHECKS"], sources=files)
    assert compiled == ["tensor.c"] and a != b
    compiled.clear()
    cc.runtime_library("gcc", [*flags, "-D", "MLVM_CHECKS", "-U", "NDEBUG"], sources=files)
    assert compiled == []  # the two-argument forms: b's objects again
    cc.runtime_library("gcc", ["-std=c99", "-O1"], sources=files)
    assert sorted(compiled) == ["arena.c", "shape.c", "tensor.c"]
    compiled.clear()
    # a flag that records the command line in the object: never shared
    cc.runtime_library("gcc", [*flags, "-frecord-gcc-switches"], sources=files)
    assert sorted(compiled) == ["arena.c", "shape.c", "tensor.c"]


def test_concurrent_compiles_of_one_model_build_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two compiles of the same model at once (two threads here, two test
    workers or two processes in use): the second waits for the first's build
    and loads it, instead of compiling it again beside it."""
    import threading
    import time

    from mlvm.codegen.cc import runtime_library

    lib = runtime_library()  # the run's own, copied: only the module's build is at stake
    monkeypatch.setenv("MLVM_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "runtime").mkdir(parents=True)
    shutil.copyfile(lib, tmp_path / "cache" / "runtime" / lib.name)
    (tmp_path / "m.mlir").write_text(SRC)
    real, builds = mlvm.api._build, []

    def slow_build(*args: object, **kw: object) -> None:
        builds.append(1)
        time.sleep(0.5)  # both threads are past the cache lookup by now
        real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(mlvm.api, "_build", slow_build)
    start = threading.Barrier(2)
    out: list[mlvm.Module] = []

    def compile_it() -> None:
        start.wait()
        out.append(mlvm.compile(tmp_path / "m.mlir"))

    threads = [threading.Thread(target=compile_it) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 2 and builds == [1]
    x = np.linspace(-1, 1, 4, dtype=np.float32)
    for m in out:
        np.testing.assert_allclose(m.main(x), -np.exp(x), rtol=1e-6)
