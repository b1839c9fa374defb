"""Run a generated module on an emulated Cortex-M (qemu-system-arm).

`run(c_file, info, inputs, board)` writes a `main` that feeds the inputs
(bit-exact, as hex words) to the module's one-shot entry, builds it with the
module and the runtime files a module links (kernels, queues, instances,
scheduler) for the board, runs it under qemu with semihosting, and returns
the outputs, the measured stack high-water mark and the firmware's sizes.
With `count=True` it also counts the instructions of one inference exactly:
the firmware is built twice, calling the entry once and twice, each run
under the harness's qemu plugin (insn_count.c), and the counts subtracted.

Boards: `m4` = qemu's mps2-an386 (Cortex-M4F, hard float), `m3` =
mps2-an385 (Cortex-M3, soft float), `m4-soft` = the M4F board running code
built for an M4 without FPU. Needs arm-none-eabi-gcc (with newlib)
and qemu-system-arm (`make test` installs both on Debian).
"""

from __future__ import annotations

import bisect
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlvm.codegen.cc import INCLUDE_DIR, runtime_library
from mlvm.codegen.mcu import CFLAGS, COMPILER, CORES, RUNTIME_CFLAGS, RUNTIME_FILES
from mlvm.codegen.lowering import C_TYPES
from mlvm.dialect.base import DTYPES

HERE = Path(__file__).resolve().parent
# board: (qemu machine, core of mlvm.codegen.mcu.CORES)
BOARDS: dict[str, tuple[str, list[str]]] = {
    "m4": ("mps2-an386", CORES["cortex-m4"]),
    "m3": ("mps2-an385", CORES["cortex-m3"]),
    # an M4 built for soft float (the DSP extension without an FPU, as on
    # M4 parts that have none): code that never touches the FPU runs on the
    # M4F board as it would there
    "m4-soft": ("mps2-an386", ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft"]),
}
# The C type of each numpy dtype an entry takes, from the project's tables.
C_BY_DTYPE = {DTYPES[e]: c for e, c in C_TYPES.items()}


def available() -> str | None:
    """None when the tools are here, else what is missing."""
    missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    return ", ".join(missing) + " not installed" if missing else None


@dataclass
class Result:
    outputs: list[np.ndarray]
    stack_bytes: int  # high-water mark of the whole firmware
    text_bytes: int
    data_bytes: int
    bss_bytes: int
    instructions: int | None = None  # of one inference, with count=True
    stack_call: int = -1  # of the module's call: high water less main's own use
    stack_stated: int | None = None  # <M>_STACK_BYTES for the core (None: not stated)


def _words(a: np.ndarray) -> str:
    w = np.ascontiguousarray(a).reshape(-1).view(np.uint32)
    return ", ".join(f"0x{int(v):08x}u" for v in w) or "0u"


def main_source(header: str, prefix: str, info: Any, inputs: list[np.ndarray], calls: int = 1) -> str:
    """The firmware's main for `calls` calls of `info` (a loader FunctionInfo)."""
    entry = f"{prefix}_{info.name}"
    arena = f"{prefix.upper()}_{info.name.upper()}_ARENA_BYTES"
    stack = f"{prefix.upper()}_STACK_BYTES"
    lines = [
        "#include <stdint.h>",
        '#include "semihost.h"',
        f'#include "{header}"',
        "uint32_t mlvm_stack_high_water(void);",
        "extern uint32_t _stack_top;",
        f"static uint8_t arena[{arena} + 1u] __attribute__((aligned(64)));",
    ]
    for i, (spec, a) in enumerate(zip(info.inputs, inputs, strict=True)):
        lines.append(f"static const uint32_t in{i}[] = {{{_words(a.astype(spec.dtype))}}};")
    for j, spec in enumerate(info.outputs):
        lines.append(f"static uint32_t out{j}[{max(1, int(np.prod(spec.shape)))}];")
    args = ["arena"]
    args += [f"(const {C_BY_DTYPE[s.dtype]} *)(const void *)in{i}" for i, s in enumerate(info.inputs)]
    args += [f"({C_BY_DTYPE[s.dtype]} *)(void *)out{j}" for j, s in enumerate(info.outputs)]
    lines += [
        "int main(void)",
        "{",
        "    uint32_t k, sp;",
        "    int status = 0;",
        '    __asm__ volatile("mov %0, sp" : "=r"(sp));',
        f"    for (k = 0; k < {calls}u; ++k)",
        f"        status = (int){entry}({', '.join(args)});",
        '    sh_puts("status "); sh_put_dec((uint32_t)status); sh_puts("\\n");',
    ]
    for j, spec in enumerate(info.outputs):
        n = int(np.prod(spec.shape))
        lines += [
            f'    sh_puts("out{j}");',
            f'    for (k = 0; k < {n}u; ++k) {{ sh_puts(" "); sh_put_hex(out{j}[k]); }}',
            '    sh_puts("\\n");',
        ]
    lines += [
        '    sh_puts("stack "); sh_put_dec(mlvm_stack_high_water()); sh_puts("\\n");',
        # the stack main had used when it called the module, and the bound
        # the header states for this core
        '    sh_puts("stack-base "); sh_put_dec((uint32_t)(uintptr_t)&_stack_top - sp);'
        ' sh_puts("\\n");',
        f"#ifdef {stack}",
        f'    sh_puts("stack-stated "); sh_put_dec({stack}); sh_puts("\\n");',
        "#endif",
        "    return status;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def runtime_archive(arch: list[str]) -> Path:
    """What a module links (mcu.RUNTIME_FILES) compiled for a core with the
    harness's flags: a static library built once per core (files in
    parallel) and cached like the host's; the link keeps what is called."""
    return runtime_library(COMPILER, [*arch, *RUNTIME_CFLAGS], sources=RUNTIME_FILES)


def build(c_file: Path, main_c: Path, board: str, out: Path) -> Path:
    """The firmware ELF for `board` from a generated module and its main."""
    return link([c_file, runtime_archive(BOARDS[board][1])], main_c, board, out, c_file.parent)


def link(sources: list[Path], main_c: Path, board: str, out: Path, include: Path,
         flags: tuple[str, ...] = (), nano: bool = True) -> Path:
    """The firmware ELF for `board` of main_c and `sources` (headers also
    from `include`), with the harness's startup, semihosting and linker
    script; `flags` are added to the harness's. `nano`: newlib-nano (whose
    printf has no %g), else the full newlib."""
    _, arch = BOARDS[board]
    cmd = [
        COMPILER, *arch, *CFLAGS, *flags, "-I", str(INCLUDE_DIR), "-I", str(include),
        "-I", str(HERE), str(main_c), *(str(f) for f in sources),
        str(HERE / "startup.c"), str(HERE / "semihost.c"),
        "-nostartfiles", "-T", str(HERE / "mps2.ld"), *(["--specs=nano.specs"] if nano else []),
        "--specs=nosys.specs",
        "-Wl,--gc-sections", "-Wl,-Map=" + str(out.with_suffix(".map")), "-lm", "-o", str(out),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + res.stderr)
    return out


def kernel_test(src: Path, board: str, out: Path, flags: tuple[str, ...] = ()) -> tuple[int, str]:
    """Builds a host kernel test (tests/runtime_c/kernels/*.c: a main that
    prints its verdict and exits non-zero on a failure) for `board` with the
    runtime archive a module links, its main renamed and called by
    tests/mcu/kernel_main.c (heap, stdout and exit through semihosting), and
    runs it: (exit code, output). `flags` are added to the test's compile
    (kernel_paths.c takes -DMLVM_TEST_SMALL on a board). Linked with the
    full newlib (its printf formats floats; neither prints C99's %td or
    %zu)."""
    _, arch = BOARDS[board]
    obj = out / f"{src.stem}_{board}.o"
    res = subprocess.run([COMPILER, *arch, *CFLAGS, *flags, "-Dmain=mlvm_test_main", "-I", str(INCLUDE_DIR),
                          "-I", str(INCLUDE_DIR.parent / "src"), "-c", str(src), "-o", str(obj)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(res.stderr)
    main_c = HERE.parents[1] / "tests" / "mcu" / "kernel_main.c"
    elf = link([obj, runtime_archive(arch)], main_c, board, out / f"{src.stem}_{board}.elf", out,
               nano=False)
    return run_elf(elf, board, timeout=600)


def plugin() -> Path:
    """The instruction-counting qemu plugin, built once per source and compiler."""
    from mlvm.codegen.cc import cache_dir, compiler, fingerprint

    src = HERE / "insn_count.c"
    so = cache_dir() / "qemu" / f"insn_count-{fingerprint(src.read_bytes(), compiler())}.so"
    if not so.exists():
        so.parent.mkdir(parents=True, exist_ok=True)
        tmp = so.with_suffix(f".{os.getpid()}.tmp")
        subprocess.run([compiler(), "-shared", "-fPIC", "-O2", "-Wall", "-Werror", str(src),
                        "-o", str(tmp)], check=True)
        os.replace(tmp, so)  # atomic: concurrent builders agree
    return so


def run_elf(elf: Path, board: str, timeout: float = 120.0, count: bool = False,
            profile: bool = False) -> tuple[int, str]:
    machine, _ = BOARDS[board]
    cmd = ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none", "-serial", "none",
           "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)]
    if count or profile:
        cmd[1:1] = ["-plugin", str(plugin()) + (",profile=on" if profile else "")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return res.returncode, res.stdout + res.stderr


def _instructions(text: str) -> int:
    m = re.search(r"^mlvm-insns (\d+)$", text, re.M)
    if m is None:
        raise RuntimeError(f"no instruction count in:\n{text[-2000:]}")
    return int(m.group(1))


def firmware(c_file: Path, info: Any, inputs: list[np.ndarray], board: str, calls: int = 1) -> Path:
    """The ELF of a module whose main makes `calls` calls of `info`."""
    prefix = c_file.stem
    main_c = c_file.parent / f"{prefix}_{board}_main{calls}.c"
    main_c.write_text(main_source(c_file.with_suffix(".h").name, prefix, info, inputs, calls=calls))
    return build(c_file, main_c, board, c_file.parent / f"{prefix}_{board}_{calls}.elf")


def profile(c_file: Path, info: Any, inputs: list[np.ndarray], board: str = "m4") -> dict[str, int]:
    """Instructions of one inference per function (a firmware calling the
    entry twice minus once, blocks attributed by address with the ELF's
    symbols), largest first."""
    per: list[dict[str, int]] = []
    for calls in (1, 2):
        elf = firmware(c_file, info, inputs, board, calls)
        code, text = run_elf(elf, board, profile=True)
        if code != 0:
            raise RuntimeError(f"{elf.name} on {board}: exit {code}\n{text[-2000:]}")
        nm = subprocess.run(["arm-none-eabi-nm", "-n", "--defined-only", str(elf)], capture_output=True,
                            text=True, check=True).stdout
        syms = sorted((int(a, 16) & ~1, name) for a, t, name in
                      (line.split()[:3] for line in nm.splitlines() if len(line.split()) >= 3)
                      if t in "tTwW")
        starts = [a for a, _ in syms]
        counts: dict[str, int] = {}
        for m in re.finditer(r"^mlvm-tb ([0-9a-f]+) (\d+)$", text, re.M):
            i = bisect.bisect_right(starts, int(m.group(1), 16)) - 1
            name = syms[i][1] if i >= 0 else "?"
            counts[name] = counts.get(name, 0) + int(m.group(2))
        per.append(counts)
    one = {k: per[1].get(k, 0) - per[0].get(k, 0) for k in per[1]}
    return dict(sorted(((k, v) for k, v in one.items() if v > 0), key=lambda kv: -kv[1]))


def sizes(elf: Path) -> tuple[int, int, int]:
    res = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True, check=True)
    text, data, bss = (int(v) for v in res.stdout.splitlines()[1].split()[:3])
    return text, data, bss


def run(c_file: Path, info: Any, inputs: list[np.ndarray], board: str = "m4",
        count: bool = False) -> Result:
    """Build and run one call; raises RuntimeError on a build or run failure.
    `count`: also the exact instruction count of one inference."""
    elf = firmware(c_file, info, inputs, board)
    code, text = run_elf(elf, board, count=count)
    instructions = None
    if count:
        twice = firmware(c_file, info, inputs, board, calls=2)
        code2, text2 = run_elf(twice, board, count=True)
        if code2 != 0:
            raise RuntimeError(f"{twice.name} on {board}: exit {code2}\n{text2[-2000:]}")
        instructions = _instructions(text2) - _instructions(text)
    if code != 0 or "status 0" not in text:
        raise RuntimeError(f"{elf.name} on {board}: exit {code}\n{text[-2000:]}")
    outputs = []
    for j, spec in enumerate(info.outputs):
        m = re.search(rf"^out{j}((?: [0-9a-f]{{8}})*)$", text, re.M)
        if m is None:
            raise RuntimeError(f"no out{j} line in:\n{text[-2000:]}")
        words = np.array([int(w, 16) for w in m.group(1).split()], dtype=np.uint32)
        outputs.append(words.view(spec.dtype).reshape(spec.shape))
    stack = re.search(r"^stack (\d+)$", text, re.M)
    base = re.search(r"^stack-base (\d+)$", text, re.M)
    stated = re.search(r"^stack-stated (\d+)$", text, re.M)
    t, d, b = sizes(elf)
    res = Result(outputs, int(stack.group(1)) if stack else -1, t, d, b, instructions)
    if stack is not None and base is not None:
        res.stack_call = res.stack_bytes - int(base.group(1))
    if stated is not None:
        res.stack_stated = int(stated.group(1))
        if res.stack_call > res.stack_stated:
            raise RuntimeError(f"{elf.name} on {board}: the call used {res.stack_call} B of stack, "
                               f"more than the {res.stack_stated} B its header states")
    return res
