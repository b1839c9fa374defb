"""Writes the runtime's stack table (mlvm/runtime_c/stack_usage.json): for
each Cortex-M core of mcu.CORES, the most stack each runtime function a
module may call uses, callees included, as arm-none-eabi-gcc builds it with
mcu.CFLAGS. `mlvm.codegen.stack` adds a module's own frames to it for the
header's `<M>_STACK_BYTES`.

* The runtime's functions (mcu.RUNTIME_FILES, and the static inline helpers
  of the headers a module includes) come from GCC's own call graph and
  frame sizes (`-fcallgraph-info=su`); a naked function's (assembly that
  pushes registers itself, to which GCC gives no frame) from its
  disassembly. A call through a pointer (a kernel
  calling a module's epilogue, or the GEMM its packing function) is kept
  apart: per function, the stack in use at such a call.
* The C library (newlib nano) and libgcc are prebuilt: their frames are
  read from the disassembly of a probe firmware that links every function
  a module or the runtime may call (prologue pushes and `sub sp`), their
  calls from its `bl` / tail-call `b` instructions.
* Every function may also call a libgcc helper the compiler inserts on its
  own (soft float, 64-bit division): the deepest one is added everywhere.

Run `python -m mlvm.codegen.stack_table` after changing the runtime;
tests/codegen/test_stack.py checks the table is current."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from mlvm.codegen import mcu
from mlvm.codegen.cc import INCLUDE_DIR, runtime_library, runtime_side_files
from mlvm.diagnostics import MlvmError

TABLE = mcu.STACK_TABLE
# Headers with static inline helpers a generated module may call.
HELPER_HEADERS = ("comm.h", "instance.h", "module.h", "params.h", "half.h", "kernels.h",
                  "queue.h", "scalar.h", "vmath.h")
# The C library and libgcc functions a module or the runtime may call (the
# math functions of the elementwise ops, in float and double).
LIBC = ["memcpy", "memset", "memmove"]
LIBM = [f + s for f in ("exp", "log", "sqrt", "floor", "ceil", "sin", "cos", "tan", "fmod",
                        "nearbyint", "rint", "round", "trunc", "tanh", "erf", "pow", "fabs",
                        "expm1", "log1p", "atan", "asin", "acos", "atan2", "sinh", "cosh",
                        "fmax", "fmin", "lrint", "lround")
        for s in ("f", "")]
LIBGCC = [f"__aeabi_{f}" for f in (
    "fadd", "fsub", "frsub", "fmul", "fdiv", "fcmpeq", "fcmplt", "fcmple", "fcmpge", "fcmpgt",
    "fcmpun", "f2iz", "f2uiz", "f2lz", "f2ulz", "i2f", "ui2f", "l2f", "ul2f", "f2d", "d2f",
    "dadd", "dsub", "drsub", "dmul", "ddiv", "dcmpeq", "dcmplt", "dcmple", "dcmpge", "dcmpgt",
    "dcmpun", "d2iz", "d2uiz", "d2lz", "d2ulz", "i2d", "ui2d", "l2d", "ul2d", "idiv", "uidiv",
    "idivmod", "uidivmod", "ldivmod", "uldivmod", "lmul", "llsl", "llsr", "lasr")]


class StackError(Exception):
    pass


def _run(cmd: list[str], cwd: Path | None = None) -> str:
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if res.returncode != 0:
        raise StackError(" ".join(cmd) + "\n" + res.stderr[-4000:])
    return res.stdout


# -- the runtime: GCC's call graph ------------------------------------------------------------
_NODE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"\\]+)(?:\\n[^"]*?)?(?:\\n(\d+) bytes \(([^)]+)\))?"')
_EDGE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def _call_graph(ci_files: Iterable[Path]) -> tuple[dict[str, int], dict[str, set[str]], dict[str, str]]:
    """(frame bytes of each defined function, its callees, name of each
    node) over .ci files; extern functions are keyed by their name, so
    calls across files meet."""
    frames: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    for ci in ci_files:
        for line in ci.read_text().splitlines():
            m = _NODE.match(line)
            if m is not None:
                key, name, size, kind = m.groups()
                names[key] = name
                if size is not None:
                    if kind == "dynamic":
                        raise StackError(f"{name} ({ci.name}): stack size not bounded ({kind})")
                    frames[key] = int(size)
                continue
            m = _EDGE.match(line)
            if m is not None:
                calls.setdefault(m.group(1), set()).add(m.group(2))
    return frames, calls, names


# -- prebuilt libraries: a probe firmware's disassembly ----------------------------------------
_FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
_INSN = re.compile(r"^\s+[0-9a-f]+:\s+(\S+)\s*(.*)$")
_REG_LIST = re.compile(r"\{([^}]*)\}")


def _list_bytes(regs: str) -> int:
    """Bytes a push / vpush of this register list stores."""
    total = 0
    for part in regs.split(","):
        part = part.strip()
        m = re.fullmatch(r"([rsd])(\d+)-\1?(\d+)", part) or re.fullmatch(r"([sd])(\d+)", part)
        if m is not None and m.group(1) in "sd":
            n = int(m.group(3)) - int(m.group(2)) + 1 if m.lastindex == 3 else 1
            total += n * (8 if m.group(1) == "d" else 4)
        elif part:
            total += 4
    return total


def _insn_frame(op: str, args: str) -> int:
    """Stack bytes one prologue-like instruction takes (0 for others)."""
    base = op.split(".")[0]
    if base in ("push", "vpush") or (base in ("stmdb", "vstmdb") and args.startswith("sp!")):
        m = _REG_LIST.search(args)
        return _list_bytes(m.group(1)) if m is not None else 0
    m = re.match(r"sp, (?:sp, )?#(\d+)", args)
    if base in ("sub", "subw") and m is not None:
        return int(m.group(1))
    m = re.search(r"\[sp, #-(\d+)\]!", args)
    if base.startswith("str") and m is not None:
        return int(m.group(1))
    return 0


def _add_frame(frames: dict[str, int], fn: str, insn: re.Match[str]) -> tuple[str, str]:
    """Adds one disassembled instruction's stack bytes to fn's frame (a
    dynamic adjustment, sp moved by a register, makes it unusable: -2^30);
    returns its opcode and operands."""
    op, args = insn.group(1), insn.group(2).split(";")[0].split("@")[0].strip()
    frames[fn] += _insn_frame(op, args)
    if op.split(".")[0] in ("sub", "mov") and re.match(r"sp, (?:sp, )?r\d+", args):
        frames[fn] = -1 << 30
    return op, args


def _disassembled(elf: Path) -> tuple[dict[str, int], dict[str, set[str]]]:
    """Frames and callees of every function of a linked ELF, from its
    disassembly. All `sub sp` and pushes of a function are added (a bound
    where it adjusts the stack more than once)."""
    text = _run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(elf)])
    frames: dict[str, int] = {}
    calls: dict[str, set[str]] = {}
    fn = None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m is not None:
            fn = m.group(1)
            frames[fn] = 0
            calls[fn] = set()
            continue
        m = _INSN.match(line)
        if m is None or fn is None:
            continue
        op, args = _add_frame(frames, fn, m)
        if op in ("blx",) and re.fullmatch(r"r\d+|ip|lr", args):
            calls[fn].add("__indirect_call")
        if op.split(".")[0] in ("bl", "blx", "b"):
            t = re.search(r"<([^>+]+)>", args)
            if t is not None and t.group(1) != fn:
                calls[fn].add(t.group(1))
    # the disassembly names one symbol per address: give aliases
    # (__aeabi_idiv = __divsi3) the same entry
    by_addr: dict[str, list[str]] = {}
    for line in _run(["arm-none-eabi-nm", str(elf)]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            by_addr.setdefault(parts[0], []).append(parts[2])
    for names in by_addr.values():
        known = [n for n in names if n in frames]
        for n in names:
            if known and n not in frames:
                frames[n], calls[n] = frames[known[0]], calls[known[0]]
    return frames, calls


_MEMBER = re.compile(r"^(\S+)\.o:\s+file format")


def _asm_frames(archive: Path, cis: list[Path]) -> dict[str, int]:
    """The frames of the runtime's naked functions (assembly that pushes
    registers itself, as qconv_ws.c's q_tile6 does), keyed as the call
    graph keys them: GCC gives such a function no frame, so every function
    it sizes at 0 bytes is given the pushes of its disassembly instead."""
    text = _run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(archive)])
    by_member: dict[str, dict[str, int]] = {}
    frames: dict[str, int] | None = None
    fn = None
    for line in text.splitlines():
        m = _MEMBER.match(line)
        if m is not None:
            frames = by_member.setdefault(m.group(1), {})
            fn = None
            continue
        m = _FUNC.match(line)
        if m is not None and frames is not None:
            fn = m.group(1)
            frames[fn] = 0
            continue
        m = _INSN.match(line)
        if m is not None and frames is not None and fn is not None:
            _add_frame(frames, fn, m)  # (a dynamic adjustment: _depths refuses it)
    out: dict[str, int] = {}
    for ci in cis:
        member = by_member.get(ci.stem, {})
        ci_frames, _, names = _call_graph([ci])
        for key, size in ci_frames.items():
            pushed = member.get(names.get(key, key), 0)
            if size == 0 and pushed != 0:
                out[key] = pushed
    return out


def _probe(core: str, tmp: Path, names: list[str]) -> Path:
    """A firmware that links every library function of `names`."""
    src = tmp / "probe.c"
    src.write_text(
        "".join(f"extern void {n}(void);\n" for n in names)
        + "void (*const mlvm_probe[])(void) = {" + ", ".join(names) + "};\n"
        + "int main(void) { return (int)(long)mlvm_probe[0]; }\n")
    elf = tmp / "probe.elf"
    _run([mcu.COMPILER, *mcu.CORES[core], "-O2", "-fno-builtin", "-w", str(src),
          "--specs=nano.specs", "--specs=nosys.specs", "-lm", "-o", str(elf)])
    return elf


# -- depths -------------------------------------------------------------------------------------
def _depths(frames: dict[str, int], calls: dict[str, set[str]], extern: dict[str, int],
            helper: int, roots: Iterable[str] | None = None) -> dict[str, tuple[int, int | None]]:
    """Per function: (deepest stack not counting calls through pointers,
    stack in use at the deepest call through a pointer or None). `extern`:
    depths of functions defined elsewhere (the libraries); `helper` is added
    below every function (a libgcc helper it may call)."""
    memo: dict[str, tuple[int, int | None]] = {}
    active: set[str] = set()

    def depth(f: str) -> tuple[int, int | None]:
        if f in memo:
            return memo[f]
        if f in extern and f not in frames:
            return (extern[f], None)
        if f not in frames:
            raise StackError(f"no stack size for {f}")
        if frames[f] < 0:
            raise StackError(f"{f} adjusts the stack by a run-time amount")
        if f in active:
            raise StackError(f"recursion through {f}")
        active.add(f)
        deep, ind = helper, None
        for c in calls.get(f, ()):
            if c == "__indirect_call":
                ind = 0 if ind is None else ind
                continue
            d, i = depth(c)
            deep = max(deep, d)
            if i is not None:
                ind = i if ind is None else max(ind, i)
        active.discard(f)
        memo[f] = (frames[f] + deep, None if ind is None else frames[f] + ind)
        return memo[f]

    return {f: depth(f) for f in (frames if roots is None else roots)}


def core_table(core: str, tmp: Path) -> dict[str, object]:
    """The table of one core (see the module docstring)."""
    flags = [*mcu.CORES[core], *mcu.CFLAGS]
    # the runtime's files as firmware links them (mlvm's cached library)
    archive = runtime_library(mcu.COMPILER, [*mcu.CORES[core], *mcu.RUNTIME_CFLAGS],
                              sources=mcu.RUNTIME_FILES)
    cis = runtime_side_files(archive, ".ci")
    if len(cis) != len(mcu.RUNTIME_FILES):
        raise StackError(f"{archive}: {len(cis)} call graphs for {len(mcu.RUNTIME_FILES)} files")
    probe = tmp / "helpers.c"
    probe.write_text("#include <math.h>\n#include <stdint.h>\n"
                     + "".join(f'#include "mlvm/{h}"\n' for h in HELPER_HEADERS))
    obj = tmp / f"{core}_helpers.o"
    _run([mcu.COMPILER, *flags, "-fkeep-static-functions", "-fkeep-inline-functions",
          "-Wno-unused-function", "-I", str(INCLUDE_DIR), "-fcallgraph-info=su",
          "-c", str(probe), "-o", str(obj)], cwd=tmp)
    asm_frames = _asm_frames(archive, cis)
    cis.append(obj.with_suffix(".ci"))
    frames, calls, names = _call_graph(cis)
    frames.update(asm_frames)
    # the runtime's calls into the C library, by the library's name
    for key in list(calls):
        calls[key] = {c if c in frames or c == "__indirect_call" or ":" not in c
                      else names.get(c, c) for c in calls[key]}
    outside = sorted({c for cs in calls.values() for c in cs
                      if c not in frames and c != "__indirect_call"})
    wanted = sorted(set(LIBC + LIBM + LIBGCC + outside))
    lib_frames, lib_calls = _disassembled(_probe(core, tmp, wanted))
    present = [n for n in wanted if n in lib_frames]
    missing = [n for n in outside if n not in lib_frames]
    if missing:
        raise StackError(f"{core}: the runtime calls {', '.join(missing)}, not in the C library")
    lib: dict[str, int] = {}
    for f, (d, through) in _depths(lib_frames, lib_calls, {}, 0, present).items():
        if through is not None:
            raise StackError(f"{f} (C library) calls through a pointer")
        lib[f] = d
    helper = max(lib[n] for n in LIBGCC if n in lib)
    depths = _depths(frames, calls, lib, helper)
    # functions of the runtime only reached through pointers: static ones
    # no function calls directly (GCC drops unused static functions)
    called = {c for cs in calls.values() for c in cs}
    targets = [k for k in frames if ":" in k and k not in called and not k.endswith("probe.c")
               and "helpers.c:" not in k]
    for k in targets:
        if depths[k][1] is not None:
            raise StackError(f"{names[k]}: called through a pointer and calls through one")
    functions: dict[str, list[int | None]] = {}
    for key, (d, ind) in sorted(depths.items()):
        name = names.get(key, key)
        if ":" in key and "helpers.c:" not in key:
            continue  # static to a runtime file: only reached through the exported ones
        functions[name] = [d, ind]
    for n in present:
        if not n.startswith("__aeabi_"):
            functions.setdefault(n, [lib[n], None])
    hard = "-mfloat-abi=hard" in mcu.CORES[core]
    return {
        "flags": flags,
        # callee-saved registers a function may push: r4-r11 and lr, and
        # s16-s31 with a hardware float ABI; 8-byte aligned
        "saved": 104 if hard else 40,
        "libgcc": helper,
        "through_pointer": max((depths[k][0] for k in targets), default=0),
        "types": _type_sizes(core, tmp),
        "functions": functions,
    }


def _type_sizes(core: str, tmp: Path) -> dict[str, int]:
    """sizeof of each struct / union type the runtime's headers define
    (a module's locals of those types), read from a probe's symbol sizes."""
    src = tmp / "types.c"
    includes = "".join(f'#include "mlvm/{h}"\n' for h in HELPER_HEADERS)
    src.write_text(includes)
    deps = _run([mcu.COMPILER, *mcu.CORES[core], "-I", str(INCLUDE_DIR), "-MM", str(src)])
    headers = [Path(h) for h in deps.replace("\\\n", " ").split()[2:] if h.endswith(".h")]
    names = sorted({n for h in headers
                    for n in re.findall(r"\}\s*(mlvm_\w+_t)\s*;", h.read_text())})
    src.write_text(includes + "".join(f"char mlvm_sizeof_{n}[sizeof({n})];\n" for n in names))
    obj = tmp / "types.o"
    _run([mcu.COMPILER, *mcu.CORES[core], *mcu.CFLAGS, "-fno-common", "-I", str(INCLUDE_DIR),
          "-c", str(src), "-o", str(obj)])
    sizes = {}
    for line in _run(["arm-none-eabi-nm", "-S", str(obj)]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3].startswith("mlvm_sizeof_"):
            sizes[parts[3][len("mlvm_sizeof_"):]] = int(parts[1], 16)
    return sizes


def compiler_version() -> str:
    return _run([mcu.COMPILER, "-dumpfullversion"]).strip()


def build_table() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        return {
            "compiler": f"{mcu.COMPILER} {compiler_version()}",
            "cores": {core: core_table(core, tmp) for core in mcu.CORES},
        }


def main() -> int:
    try:
        table = build_table()
    except (StackError, MlvmError, OSError) as e:
        print(f"mlvm.codegen.stack_table: {e}", file=sys.stderr)
        return 1
    TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
