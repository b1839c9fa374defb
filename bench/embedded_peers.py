"""mlvm next to a peer ONNX-to-C generator on the emulated Cortex-M4.

    python bench/embedded_peers.py      (make bench-embedded-peers)

The peer is emx-onnx-cgen (from the package index, installed into its own
virtualenv under build/, since it pins its own protobuf), run with
`--large-temp-threshold 0 --large-weight-threshold 0` (intermediates on the
stack, no malloc; weights in the C, not loaded from a file). Both
compile the same ONNX files with the same weights: the 784-256-256-10 MLP
in PyTorch layout (Gemm transB=1) and the 28x28 CNN of the embedded tests
(embedded/cortex_m/models.py). Each firmware is built by the harness's
toolchain, flags, startup and linker script, and run under qemu's
mps2-an386; outputs are checked against onnxruntime on the host.

Columns: instructions of one inference (exact: a firmware calling the
model twice minus once, under the harness's qemu plugin), code (bytes of
machine code the model brings: the firmware's function symbols minus
those of a firmware whose main prints as the others do but calls no
model; weights, which are read-only data, excluded), RAM (mlvm: arena + the measured stack of the
call; the peer: the measured stack of the call, where it keeps its
intermediates). The table goes into bench/README.md between the
embedded-peers markers (--no-readme leaves it alone).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import mlvm  # noqa: E402
from embedded.cortex_m import harness  # noqa: E402
from embedded.cortex_m.models import cnn28, mlp784  # noqa: E402

sys.path.append(str(ROOT / "bench"))
import embedded_tables  # noqa: E402

PEER = "emx-onnx-cgen==1.4.0"
PEER_VENV = ROOT / "build" / "peer-venv"


def peer_tool() -> Path:
    exe = PEER_VENV / "bin" / "emx-onnx-cgen"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
        subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", PEER], check=True)
    return exe


def firmware(sources: list[Path], main_c: Path, out: Path, include: Path) -> Path:
    """An M4 firmware of main_c and sources (a peer's code needs no runtime)."""
    try:
        return harness.link(sources, main_c, "m4", out, include, ("-Wno-unused-parameter",))
    except RuntimeError as e:
        raise SystemExit(str(e)) from None


def code_bytes(elf: Path) -> int:
    """Bytes of the firmware's function symbols but main (the test's own
    feeding and printing)."""
    out = subprocess.run(["arm-none-eabi-readelf", "-sW", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    # Num: Value Size Type Bind Vis Ndx Name (the linker script puts the
    # weights in .text too: functions are told by their symbol type)
    return sum(int(p[2], 0) for p in (line.split() for line in out.splitlines())
               if len(p) >= 8 and p[3] == "FUNC" and p[7] != "main")


def peer_main(decl: str, inputs: list[np.ndarray], out_shape: tuple[int, ...], calls: int) -> str:
    n = int(np.prod(out_shape))
    words = ", ".join(f"0x{int(v):08x}u" for v in np.ascontiguousarray(inputs[0]).reshape(-1).view(np.uint32))
    dims = "".join(f"[{d}]" for d in inputs[0].shape)
    odims = "".join(f"[{d}]" for d in out_shape)
    return "\n".join([
        "#include <stdint.h>", '#include "semihost.h"', decl,
        "uint32_t mlvm_stack_high_water(void);", "extern uint32_t _stack_top;",
        f"static const uint32_t in0[] = {{{words}}};", f"static uint32_t out0[{n}];",
        "int main(void)", "{", "    uint32_t k, sp;",
        '    __asm__ volatile("mov %0, sp" : "=r"(sp));',
        f"    for (k = 0; k < {calls}u; ++k)",
        f"        model((const float (*){dims[3:]})(const void *)in0, (float (*){odims[3:]})(void *)out0);"
        if calls else "    (void)in0;",
        '    sh_puts("status 0\\n"); sh_puts("out0");',
        f'    for (k = 0; k < {n}u; ++k) {{ sh_puts(" "); sh_put_hex(out0[k]); }}',
        '    sh_puts("\\n");',
        '    sh_puts("stack "); sh_put_dec(mlvm_stack_high_water()); sh_puts("\\n");',
        '    sh_puts("stack-base "); sh_put_dec((uint32_t)(uintptr_t)&_stack_top - sp); sh_puts("\\n");',
        "    return 0;", "}", ""])


def run_peer(c_file: Path, decl: str, x: np.ndarray, out_shape: tuple[int, ...], base: int,
             ) -> tuple[int, int, int, np.ndarray]:
    """(instructions, code bytes, stack of the call, output) of the peer's model."""
    counts, text1, elf1 = [], "", c_file
    for calls in (1, 2):
        main_c = c_file.with_name(f"{c_file.stem}_main{calls}.c")
        main_c.write_text(peer_main(decl, [x], out_shape, calls))
        elf = firmware([c_file], main_c, c_file.with_name(f"{c_file.stem}_{calls}.elf"), c_file.parent)
        code, text = harness.run_elf(elf, "m4", count=True)
        if code != 0:
            raise SystemExit(f"{elf.name}: exit {code}\n{text[-2000:]}")
        counts.append(harness._instructions(text))
        if calls == 1:
            text1, elf1 = text, elf
    m = re.search(r"^out0((?: [0-9a-f]{8})*)$", text1, re.M)
    assert m is not None, text1[-2000:]
    y = np.array([int(w, 16) for w in m.group(1).split()], np.uint32).view(np.float32).reshape(out_shape)
    stack = int(re.search(r"^stack (\d+)$", text1, re.M).group(1))  # type: ignore[union-attr]
    stack_base = int(re.search(r"^stack-base (\d+)$", text1, re.M).group(1))  # type: ignore[union-attr]
    return counts[1] - counts[0], code_bytes(elf1) - base, stack - stack_base, y


def main() -> int:
    args = embedded_tables.start(__doc__.split("\n\n")[0])
    if args is None:
        return 1
    import onnxruntime as ort

    tool = peer_tool()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        empty = d / "empty_main.c"
        # the mains' own printing (hex words, decimals, the stack's high
        # water) is in the base too: code counts the model's functions only
        empty.write_text('#include <stdint.h>\n#include "semihost.h"\nuint32_t mlvm_stack_high_water(void);\n'
                         'int main(void) { sh_puts("status 0\\n"); sh_put_hex(0); '
                         'sh_put_dec(mlvm_stack_high_water()); return 0; }\n')
        base = code_bytes(firmware([], empty, d / "empty.elf", d))
        for name, make in (("mlp 784-256-256-10", mlp784), ("cnn28", cnn28)):
            stem = name.split()[0]
            path = d / f"{stem}.onnx"
            make(path)
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            inp, out = sess.get_inputs()[0], sess.get_outputs()[0]
            x = np.random.default_rng(7).standard_normal(inp.shape).astype(np.float32)
            want = sess.run(None, {inp.name: x})[0]
            for label, extra in (("mlvm", []), ("mlvm --no-workspaces", ["--no-workspaces"])):
                c = d / f"{stem}{'_nows' if extra else ''}.c"
                subprocess.run([sys.executable, "-m", "mlvm", "compile", str(path), "-o", str(c), "-q",
                                "--no-winograd", *extra],
                               check=True)
                info = mlvm.compile(path).functions["main"]
                res = harness.run(c, info, [x], "m4", count=True)
                assert res.instructions is not None
                arena = int(re.search(r"_ARENA_BYTES (\d+)u", c.with_suffix(".h").read_text()).group(1))  # type: ignore[union-attr]
                mcode = code_bytes(harness.firmware(c, info, [x], "m4")) - base
                err = float(np.max(np.abs(res.outputs[0] - want)))
                rows.append(f"| {name} | {label} | {res.instructions:,} | {mcode:,} B | {arena:,} B "
                            f"| {res.stack_call:,} B | {arena + res.stack_call:,} B | {err:.1e} |")
            # the peer
            pc = d / f"{stem}_emx.c"
            subprocess.run([str(tool), "compile", "--large-temp-threshold", "0", "--large-weight-threshold", "0",
                            "--model-name", "model",
                            str(path), str(pc)], check=True, capture_output=True)
            decl = (f"void model(const float x{''.join(f'[{k}]' for k in x.shape)}, "
                    f"float y{''.join(f'[{k}]' for k in want.shape)});")
            insns, pcode, pstack, py = run_peer(pc, decl, x, tuple(want.shape), base)
            rows.append(f"| {name} | emx-onnx-cgen 1.4.0 | {insns:,} | {pcode:,} B | 0 B "
                        f"| {pstack:,} B | {pstack:,} B | {float(np.max(np.abs(py - want))):.1e} |")
    table = "\n".join([
        "| model | generator | instructions / inference | code | arena | stack | RAM | max abs error vs onnxruntime |",
        "|---|---|---|---|---|---|---|---|", *rows]) + "\n"
    print(table, end="")
    if not args.no_readme:
        embedded_tables.write_readme("embedded-peers", table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
