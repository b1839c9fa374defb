"""Driving the C compiler: the runtime as a cached static library, modules as .so."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from mlvm.diagnostics import MlvmError

RUNTIME_DIR = Path(__file__).resolve().parent.parent / "runtime_c"
INCLUDE_DIR = RUNTIME_DIR / "include"

# -std=c99 also keeps gcc from contracting a*b+c into FMAs, so results
# match the numpy references operation for operation.
# -fno-math-errno changes no value (mlvm never reads errno) but lets gcc
# vectorise loops over sqrtf (else a test and a call per element, for
# errno). -fno-trapping-math, which would do the same for floorf and ceilf,
# made MobileNet-v1-0.25 3x slower (bench/README.md).
DEFAULT_CFLAGS = ["-std=c99", "-O3", "-march=native", "-fno-math-errno", "-fPIC"]


def cache_dir() -> Path:
    base = os.environ.get("MLVM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "mlvm"
    )
    p = Path(base)
    p.mkdir(parents=True, exist_ok=True)
    return p


@contextmanager
def build_lock(target: Path) -> Iterator[None]:
    """Held while `target` is built: a second process building the same
    cache entry waits for the first and then finds it, instead of
    compiling it again beside it (POSIX advisory lock on `target.lock`)."""
    try:
        import fcntl
    except ImportError:  # no flock: concurrent builders still agree (atomic rename)
        yield
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        f = open(f"{target}.lock", "a")
    except OSError:  # e.g. another user's lock file in a shared cache: build unlocked
        yield
        return
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
        except OSError:  # a file system without flock
            yield
            return
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def compiler() -> str:
    return os.environ.get("CC") or "cc"


def cflags() -> list[str]:
    extra = os.environ.get("MLVM_CFLAGS")
    return shlex.split(extra) if extra is not None else list(DEFAULT_CFLAGS)


def module_cflags() -> list[str]:
    """Flags for a generated module's own compile, after `cflags()` (so a
    later -O wins), never for the runtime it links: `MLVM_MODULE_CFLAGS`,
    e.g. "-O0" for a test suite's large module whose speed does not matter."""
    return shlex.split(os.environ.get("MLVM_MODULE_CFLAGS", ""))


def host_cpu_flags() -> set[str]:
    """The instruction-set flags /proc/cpuinfo lists (empty where it is absent)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    m = re.search(r"^flags\s*:(.*)$", text, re.M)
    return set(m.group(1).split()) if m is not None else set()


def runtime_sources() -> list[Path]:
    return sorted((RUNTIME_DIR / "src").rglob("*.c"))


def run_cc(cmd: list[str], cwd: Path | None = None) -> None:
    """Runs a compiler command; a failure becomes an MlvmError with its output."""
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if res.returncode != 0:
        raise MlvmError(
            "error: C compiler failed: " + " ".join(cmd) + "\n" + res.stderr.strip()
        )


@cache
def cc_version(cc: str) -> str:
    try:
        res = subprocess.run([cc, "--version"], capture_output=True, text=True)
    except FileNotFoundError:
        raise MlvmError(f"error: C compiler '{cc}' not found (set CC)") from None
    return res.stdout


def fingerprint(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def runtime_fingerprint() -> str:
    files = sorted(RUNTIME_DIR.rglob("*.[ch]"))
    return fingerprint(*(f.read_bytes() for f in files), *(str(f.relative_to(RUNTIME_DIR)) for f in files))


def runtime_library(
    cc: str | None = None,
    flags: list[str] | None = None,
    on_build: Callable[[str], None] | None = None,
    sources: list[Path] | None = None,
) -> Path:
    """The runtime compiled with `flags`, cached by sources, compiler and flags;
    `on_build` hears about it when it must be built (the first time).
    `sources`: those of the runtime's files only (e.g. what a firmware links),
    instead of all of them."""
    cc = cc or compiler()
    flags = flags if flags is not None else cflags()
    srcs = sources if sources is not None else runtime_sources()
    key = fingerprint(runtime_fingerprint(), cc, cc_version(cc), *flags,
                      *(str(s.relative_to(RUNTIME_DIR)) for s in srcs))
    lib = cache_dir() / "runtime" / f"libmlvm_rt-{key}.a"
    if lib.exists():
        return lib
    with build_lock(lib):
        if not lib.exists():
            _build_runtime(lib, cc, flags, srcs, on_build)
    return lib


def runtime_side_files(lib: Path, suffix: str) -> list[Path]:
    """What the compiler wrote beside each object of `lib` with this suffix
    (".ci" with -fcallgraph-info, ".su" with -fstack-usage), in the order of
    its sources; kept with the library when it was built."""
    side = lib.with_suffix(".side")
    return sorted(side.glob(f"*{suffix}"), key=lambda p: int(p.name.split("_", 1)[0]))


def archiver(cc: str) -> str:
    """$AR, else a cross compiler's own (arm-none-eabi-gcc: arm-none-eabi-ar,
    whose symbol index reads its objects), else ar."""
    if os.environ.get("AR"):
        return os.environ["AR"]
    if cc.endswith("-gcc") and shutil.which(cc[:-3] + "ar") is not None:
        return cc[:-3] + "ar"
    return "ar"


def _member(i: int, src: Path) -> str:
    """The archive member of the i-th source (numbered: two files may share a stem)."""
    return f"{i}_{src.stem}.o"


def _build_runtime(lib: Path, cc: str, flags: list[str], sources: list[Path],
                   on_build: Callable[[str], None] | None) -> None:
    if on_build is not None:
        on_build("building the mlvm runtime (once for this compiler and flags)")
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        objs = [os.path.join(tmp, _member(i, src)) for i, src in enumerate(sources)]
        # one compiler per core: the files are independent
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            list(pool.map(lambda so: _compile_object(cc, flags, *so), zip(sources, objs)))
        tmp_lib = os.path.join(tmp, lib.name)
        run_cc([archiver(cc), "rcs", tmp_lib, *objs])
        _keep_side_files(tmp, lib, {os.path.basename(o) for o in objs} | {lib.name})
        os.replace(tmp_lib, lib)  # atomic: readers never see a partial archive


# Flags that make the compiler write files beside the object (kept with the
# library, see _keep_side_files), or record in the object what the
# preprocessed text does not show (command-line macros in debug info, the
# flags themselves): such builds are not shared through the object cache.
_UNSHARED_FLAGS = ("-fcallgraph-info", "-fstack-usage", "-save-temps", "-MD", "-MMD", "-MF",
                   "--coverage", "-ftest-coverage", "-fprofile-arcs", "-gsplit-dwarf", "-fdump-",
                   "-fsave-optimization-record", "-ftime-trace", "-fdebug-macro",
                   "-frecord-gcc-switches", "-grecord-command-line")


def _code_flags(flags: list[str]) -> list[str]:
    """`flags` without the preprocessor's (-D, -U, -I): their whole effect
    is in the preprocessed text (-I also reaches the assembler, which only
    an inline `.include` or `.incbin` would see: the runtime has none)."""
    out: list[str] = []
    skip = False
    for f in flags:
        if skip:
            skip = False
        elif f in ("-D", "-U", "-I"):
            skip = True
        elif not f.startswith(("-D", "-U", "-I")):
            out.append(f)
    return out


def _compile_object(cc: str, flags: list[str], src: Path, obj: str) -> None:
    """`src` compiled to `obj`, through a cache of objects keyed by the
    compiler, its code-generation flags and the preprocessed source (as
    ccache's preprocessor mode does): two flag sets that differ only in a
    macro a file never reads (MLVM_CHECKS, a kernel's block size) build
    that file once."""
    base = [cc, *flags, "-I", str(INCLUDE_DIR)]
    cached = _object_entry(cc, flags, base, src)
    if cached is not None:
        try:
            shutil.copyfile(cached, obj)
            return
        except OSError:  # not cached (or unreadable): compile it
            pass
    run_cc([*base, "-c", str(src), "-o", obj])
    if cached is not None:
        _store_object(obj, cached)


def _object_entry(cc: str, flags: list[str], base: list[str], src: Path) -> Path | None:
    """Where the object cache keeps `src` built with `flags`, or None where
    it must not be shared (_UNSHARED_FLAGS) or does not preprocess (the
    compile then reports the error)."""
    if any(f.startswith(_UNSHARED_FLAGS) for f in flags):
        return None
    pre = subprocess.run([*base, "-E", str(src)], capture_output=True)
    if pre.returncode != 0:
        return None
    key = fingerprint(cc, cc_version(cc), *_code_flags(flags), pre.stdout)
    return cache_dir() / "objects" / f"{key}.o"


def _store_object(obj: str, cached: Path) -> None:
    """A copy of `obj` as `cached`, whole or not at all (a concurrent build
    sees the complete file or none); a cache that cannot be written (full,
    read-only) only costs the next build its compile."""
    part = None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, part = tempfile.mkstemp(dir=cached.parent, suffix=".tmp")
        os.close(fd)
        shutil.copyfile(obj, part)
        os.replace(part, cached)
    except OSError:
        if part is not None and os.path.exists(part):
            os.unlink(part)


def _keep_side_files(tmp: str, lib: Path, built: set[str]) -> None:
    """Files the flags made the compiler write beside the objects (call
    graphs, stack usage) go to `lib`'s .side folder, before the library
    itself appears."""
    side = [f for f in os.listdir(tmp) if f not in built]
    if not side:
        return
    folder = os.path.join(tmp, "side")
    os.mkdir(folder)
    for f in side:
        os.replace(os.path.join(tmp, f), os.path.join(folder, f))
    dest = lib.with_suffix(".side")
    if dest.exists():  # left by a build that died before its library
        shutil.rmtree(dest)
    os.replace(folder, dest)


def mpi_runtime_library(mpicc: str, flags: list[str],
                        on_build: Callable[[str], None] | None = None) -> Path:
    """The runtime with the MPI communicator: the library of `flags` with its
    comm_mpi.c member compiled by `mpicc` with MLVM_WITH_MPI (the only file
    the macro changes), instead of a second build of every file."""
    base = runtime_library(compiler(), flags, on_build)
    src = RUNTIME_DIR / "src" / "comm_mpi.c"
    member = _member(runtime_sources().index(src), src)
    key = fingerprint(base.name, mpicc, cc_version(mpicc))
    lib = cache_dir() / "runtime" / f"libmlvm_rt_mpi-{key}.a"
    if lib.exists():
        return lib
    with build_lock(lib), tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        if not lib.exists():
            tmp_lib = os.path.join(tmp, lib.name)
            shutil.copyfile(base, tmp_lib)
            obj = os.path.join(tmp, member)
            run_cc([mpicc, *flags, "-DMLVM_WITH_MPI", "-I", str(INCLUDE_DIR), "-c", str(src), "-o", obj])
            run_cc([archiver(compiler()), "rs", tmp_lib, obj])  # replaces the member of that name
            os.replace(tmp_lib, lib)
    return lib


def build_shared(
    c_path: Path, so_path: Path, on_runtime_build: Callable[[str], None] | None = None,
    asm: Path | None = None, comm: str = "shm",
) -> Path:
    """Compile a generated module and link it with the runtime into a .so.

    `asm`: the module's weights (`<mod>.weights.s`, whose `.incbin` reads
    the blob beside it); assembled in its own directory, so that no path is
    written into the source or split by option parsing. `comm="mpi"` builds
    with mpicc and the MPI communicator (the module's C is the same)."""
    cc, flags = compiler(), cflags()
    if comm == "mpi":
        mpicc = shutil.which("mpicc")
        if mpicc is None:
            raise MlvmError("error: --comm mpi needs mpicc (Open MPI: apt-get install libopenmpi-dev)")
        lib = mpi_runtime_library(mpicc, flags, on_runtime_build)
        cc, flags = mpicc, [*flags, "-DMLVM_WITH_MPI"]
    elif comm != "shm":
        raise MlvmError(f"error: unknown communicator {comm!r} (shm or mpi)")
    else:
        lib = runtime_library(cc, flags, on_runtime_build)
    so_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=so_path.parent) as tmp:
        tmp = os.path.abspath(tmp)
        tmp_so = os.path.join(tmp, so_path.name)
        objs: list[str] = []
        if asm is not None:
            obj = os.path.join(tmp, "weights.o")
            run_cc([cc, "-c", asm.name, "-o", obj], cwd=asm.parent)
            objs.append(obj)
        run_cc(
            [
                cc, *flags, *module_cflags(), "-shared", "-DMLVM_SO_ENTRY",
                "-I", str(INCLUDE_DIR), "-I", str(c_path.parent),
                # The whole runtime, so loaders find its entry points too.
                str(c_path), *objs, "-Wl,--whole-archive", str(lib), "-Wl,--no-whole-archive",
                "-lm", "-o", tmp_so,
            ]
        )
        os.replace(tmp_so, so_path)
    return so_path


def has_compiler(name: str) -> bool:
    return shutil.which(name) is not None
