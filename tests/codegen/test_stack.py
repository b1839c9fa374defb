"""`<M>_STACK_BYTES` (mlvm/codegen/stack.py) and the runtime's stack table
(mlvm/codegen/stack_table.py, mlvm/runtime_c/stack_usage.json).

* The committed table is what the runtime builds to now.
* The frames the bound assumes for a module's own functions hold: many
  generated modules compiled for every core with -fstack-usage, each
  function's frame under its bound. (tests/mcu checks the whole bound
  against the stack a call really uses on the emulated M4 and M3.)
* The header states one bound per core group, and says why where it
  cannot (an array of unknown size, a call of an unknown function)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mlvm.cli import aot_main
from mlvm.codegen import mcu, stack, stack_table
from mlvm.codegen.cc import INCLUDE_DIR

ROOT = Path(__file__).resolve().parents[2]
needs_arm = pytest.mark.skipif(shutil.which(mcu.COMPILER) is None,
                               reason="arm-none-eabi-gcc not installed (make test installs it)")
# modules whose C the frame check compiles: every lit codegen / pass input,
# the coroutine and streaming models, and a long fused elementwise chain
MODELS = [*sorted((ROOT / "tests" / "filecheck").rglob("*.mlir")),
          ROOT / "samples" / "streaming" / "stream.mlir", ROOT / "tests" / "coroutines" / "model.mlir"]


def chain_model() -> str:
    """60 elementwise ops over 12 inputs (fused into long scalar loops)."""
    g = random.Random(1)
    t = "tensor<3x5xf32>"
    vals = [f"%a{i}" for i in range(12)]
    lines = [f"func.func @chain({', '.join(f'{v}: {t}' for v in vals)}) -> ({t}, {t}) {{"]
    for k in range(60):
        if g.random() < 0.6:
            a, b = g.sample(vals, 2)
            op = g.choice(["add", "sub", "mul", "max", "min", "div"])
            lines.append(f'  %v{k} = "mlvm.{op}"({a}, {b}) : ({t}, {t}) -> {t}')
        else:
            op = g.choice(["exp", "tanh", "sigmoid", "neg", "abs", "sqrt", "log", "sin", "erf"])
            lines.append(f'  %v{k} = "mlvm.{op}"({g.choice(vals)}) : ({t}) -> {t}')
        vals.append(f"%v{k}")
    lines += [f"  func.return %v59, %v40 : {t}, {t}", "}"]
    return "\n".join(lines) + "\n"


def fan_model(n: int = 50) -> str:
    """n results of one input, each from its own op, all read at the end
    (a concat of n): every result's address is live across every call."""
    t = "tensor<4xf32>"
    lines = [f"func.func @fan(%x: {t}, %w: {t}) -> tensor<{4 * n}xf32> {{"]
    for k in range(n):
        op = ("neg", "exp", "add")[k % 3]
        args, types = ("%x, %w", f"{t}, {t}") if op == "add" else ("%x", t)
        lines.append(f'  %v{k} = "mlvm.{op}"({args}) : ({types}) -> {t}')
    vals, types = ", ".join(f"%v{k}" for k in range(n)), ", ".join([t] * n)
    lines.append(f'  %c = "mlvm.concat"({vals}) <{{axis = 0 : i64}}> : ({types}) -> tensor<{4 * n}xf32>')
    lines += [f"  func.return %c : tensor<{4 * n}xf32>", "}"]
    return "\n".join(lines) + "\n"


def slices_model(n: int = 60) -> str:
    """n slices of one tensor summed (with a softmax call between), then
    the same slices again: each slice's address, `((float *)(arena + 0)) +
    4 k`, is live from the first pass to the second."""
    big, t = f"tensor<{4 * n}xf32>", "tensor<4xf32>"
    lines = [f"func.func @f(%x: {big}) -> {t} {{", f'  %y = "mlvm.neg"(%x) : ({big}) -> {big}']
    acc, i = "", 0
    for op in ("add", "mul"):
        for k in range(n):
            i += 1
            lines.append(f'  %s{i} = "mlvm.slice"(%y) <{{start = array<i64: {4 * k}>, '
                         f'stride = array<i64: 1>}}> : ({big}) -> {t}')
            if not acc:
                acc = f"%s{i}"
                continue
            lines.append(f'  %a{i} = "mlvm.{op}"({acc}, %s{i}) : ({t}, {t}) -> {t}')
            lines.append(f'  %b{i} = "mlvm.softmax"(%a{i}) <{{axis = 0 : i64}}> : ({t}) -> {t}')
            acc = f"%b{i}"
    lines += [f"  func.return {acc} : {t}", "}"]
    return "\n".join(lines) + "\n"


def compile_c(src: Path, out: Path, *extra: str) -> Path | None:
    """The module's C, or None for inputs that are not compilable modules
    (the lit tests' invalid cases)."""
    return out if aot_main(["compile", str(src), "-o", str(out), "-q", *extra]) == 0 else None


@needs_arm
def test_the_table_is_current() -> None:
    """Regenerate with `python -m mlvm.codegen.stack_table` after changing
    the runtime."""
    committed = json.loads(stack_table.TABLE.read_text())
    assert committed == stack_table.build_table(), (
        "mlvm/runtime_c/stack_usage.json is stale: run python -m mlvm.codegen.stack_table")


@needs_arm
def test_module_frames_stay_under_their_bound(tmp_path: Path) -> None:
    (tmp_path / "chain.mlir").write_text(chain_model())
    (tmp_path / "fan.mlir").write_text(fan_model())
    (tmp_path / "slices.mlir").write_text(slices_model())
    srcs = [*MODELS, *(tmp_path / f"{m}.mlir" for m in ("chain", "fan", "slices"))]
    cfiles = [c for i, s in enumerate(srcs)
              if (c := compile_c(s, tmp_path / f"m{i}_{s.stem}.c")) is not None]
    assert len(cfiles) >= 20 and {"chain", "fan", "slices"} <= {c.stem.split("_")[-1] for c in cfiles}
    # convolutions as loop nests of the module's own (nn.taps_convs)
    taps = compile_c(ROOT / "tests" / "filecheck" / "codegen" / "conv_taps.mlir", tmp_path / "nows_taps.c",
                     "--no-workspaces")
    assert taps is not None and "#ifdef MLVM_SCALAR_CORE" in taps.read_text()
    cfiles.append(taps)

    def frames(core: str, c: Path) -> list[tuple[str, int]]:
        obj = c.with_suffix(f".{core}.o")
        # (-Werror: an input a module never reads once failed -Wunused-parameter)
        subprocess.run([mcu.COMPILER, *mcu.CORES[core], *mcu.CFLAGS, "-fstack-usage",
                        "-I", str(INCLUDE_DIR), "-I", str(tmp_path), "-c", str(c), "-o", str(obj)],
                       check=True, capture_output=True, cwd=tmp_path)
        rows = []
        for line in obj.with_suffix(".su").read_text().splitlines():
            where, size, _ = line.split("\t")
            rows.append((where.split(":")[-1].split(".")[0], int(size)))  # f.constprop.0 -> f
        return rows

    jobs = [(core, c) for core in mcu.CORES for c in cfiles]
    with ThreadPoolExecutor(4) as ex:
        results = list(ex.map(lambda j: frames(*j), jobs))
    checked = 0
    for (core, c), rows in zip(jobs, results, strict=True):
        t = stack.table()["cores"][core]
        types = stack.with_header_types(c.with_suffix(".h").read_text(), t["types"])
        funcs = stack.parse_functions(c.read_text(), types)
        for name, size in rows:
            if name not in funcs:  # a header's static inline helper, out of line
                assert name in t["functions"], f"{c.name}: {name} not found by the parser"
                assert size <= t["functions"][name][0], f"{core} {c.name} {name}"
                continue
            bound = stack.frame_bound(funcs[name], t["saved"])
            assert size <= bound, f"{core} {c.name} {name}: frame {size} B > bound {bound} B"
            checked += 1
    assert checked > 500


def test_header_states_a_bound_per_core_group(tmp_path: Path) -> None:
    c = compile_c(ROOT / "tests" / "coroutines" / "model.mlir", tmp_path / "model.c")
    assert c is not None
    h = c.with_suffix(".h").read_text()
    for i, (test, _) in enumerate(mcu.GROUPS):
        assert f"#{'if' if i == 0 else 'elif'} {test}\n#define MODEL_STACK_BYTES " in h
    # the bound covers the deepest runtime function the module calls
    types = stack.with_header_types(h, stack.table()["cores"]["cortex-m4"]["types"])
    funcs = stack.parse_functions(c.read_text(), types)
    called = {n for f in funcs.values() for n in f.calls if n.startswith("mlvm_")}
    deepest = max(stack.table()["cores"]["cortex-m4"]["functions"][n][0] for n in called)
    assert stack.core_bound(c.read_text(), "cortex-m4", h) > deepest


MODULE = """\
static void m__s1(const void *ctx, mlvm_index_t i0, float *tile)
{
    float keep[%d];
    (void)ctx;
}
mlvm_status_t m_main(void *arena_, const float *in_x, float *out0)
{
    {
        const float *in0 = in_x;
        const void *ctx[3];
        ctx[0] = in0;
        mlvm_conv2d_epilogue_f32(&m__s0, in0, in0, in0, out0, arena_, m__s1, ctx);
    }
    {
        const float *in0 = in_x;
        const void *ctx[5];
        ctx[0] = in0;
        mlvm_fill_f32(3, 0.0f, out0);
    }
    return MLVM_OK;
}
"""


def test_sibling_blocks_share_their_locals() -> None:
    f = stack.parse_functions(MODULE % 4, {})["m_main"]
    assert f.local_bytes == 4 + 5 * 4  # the larger block, not both
    assert f.calls == {"mlvm_conv2d_epilogue_f32", "mlvm_fill_f32"}
    assert f.out_args == 8 and "m__s1" in f.named


def test_values_kept_across_calls_count_where_they_overlap() -> None:
    """An address used again after a call may sit in a stack slot meanwhile:
    three overlapping at the second call; one used by a single call, a
    small constant and the function's own names are not counted; a use in
    a loop with a call keeps the value across the whole loop."""
    body = """
    f(arena + 64, x, 3);
    f(arena + 128, arena + 64, 70000);
    f(arena + 192, arena + 128, 70000);
    g(arena + 192, arena + 64, weights);
    g(weights, out0 + 4, 5);
"""
    kept = stack._kept_bytes  # noqa: SLF001
    # across the 2nd call: arena+64, arena+128, 70000 (arena+192 is not yet
    # computed); across the 3rd: arena+64 and arena+192; the 4th: weights
    assert kept(body, {"arena", "x", "out0"}) == 12
    # the same address however parenthesized is one value, over a cast to
    # another pointer type another (two addresses, each read once: neither
    # kept); a constant's own bytes (the long long, the double) count
    cast = ("f(((float *)(arena + 0)) + 4, 300ll);\n    g(0x1.5p-3);\n"
            "    f((float *)(arena + 0) + 4, 300ll);\n    g(0x1.5p-3);\n")
    assert kept(cast, {"arena"}) == 4 + 8 + 8
    assert kept(cast.replace("f((float *)", "f((int8_t *)"), {"arena"}) == 8 + 8
    # a value only a parenthesized expression holds, read again after a call
    assert kept("y = *(w + x0 * 3);\n    f();\n    y = *(w + x0 * 3);\n", {"y", "w", "x0"}) == 4
    # in nested loops, a row's address (of the outer counter alone) lives
    # across the inner loop's calls; an element's (the inner counter) not
    nested = ("for (i0 = 0; i0 < 4; ++i0) {\n        for (i1 = 0; i1 < 8; ++i1) {\n"
              "            y[i0 * 8 + i1] = expf((x + i0 * 32)[i1]);\n        }\n    }\n")
    assert kept(nested, {"i0", "i1", "y", "x"}) == 4
    # names after . or ->, qualifiers, what return and goto name: no values
    quiet = "const float *restrict in = m__d0.f;\n    h(in, p->n);\n    h(in, p->n);\n    return MLVM_OK;\n"
    assert kept(quiet, {"in", "p"}) == 4  # MLVM_OK, read after the calls
    looped = "w = 0;\n    for (i = 0; i < 8; ++i) {\n        y[i] = expf(c[i] * 1.5f);\n    }\n"
    assert kept(looped, {"w", "i", "y"}) == 8  # c and 1.5f, kept across expf
    assert kept(looped.replace("expf(c[i] * 1.5f)", "c[i]"), {"w", "i", "y"}) == 0
    # a loop of one statement, no braces: the same
    assert kept("for (i = 0; i < 8; ++i)\n        y[i] = expf(c[i] * 1.5f);\n", {"i", "y"}) == 8
    # a loop whose one statement is a loop with a block ends with that block
    # (not at the block's first ';'): spans nest, and a, b and w, read in
    # the inner loop, are kept across h()'s calls in the outer header
    two = "for (i = 0; i < h(); ++i) for (j = 0; j < 4; ++j) { a[j] = 1; b[j] = w[j]; }\n    g();\n"
    (o0, o1, oc), (i0, i1, ic) = stack._loops(two)  # noqa: SLF001
    assert (oc, ic) == ("i", "j") and o0 < i0 and i1 == o1 == two.index("}") + 1
    assert kept(two, {"i", "j"}) == 12


def test_a_callback_counts_where_the_runtime_calls_it() -> None:
    """The epilogue's frame adds to the kernel's stack at its call through
    a pointer: a larger local array there makes the bound larger by it
    (both frames large enough that the path through the epilogue is the
    kernel's deepest)."""
    small = stack.core_bound(MODULE % 100, "cortex-m4")
    large = stack.core_bound(MODULE % 1100, "cortex-m4")
    assert large - small == 4000


def test_what_cannot_be_sized_is_said() -> None:
    unknown = MODULE.replace("mlvm_fill_f32(3", "mystery_fn(3") % 4
    assert stack.stack_lines(unknown, "", "M") == [
        "/* M_STACK_BYTES is not stated: the module has a call of mystery_fn. */"]
    vla = MODULE.replace("float keep[%d];", "float keep[n];")
    assert "an array of size n" in stack.stack_lines(vla, "", "M")[0]


@needs_arm
def test_naked_assembly_counts_its_own_pushes(tmp_path: Path) -> None:
    """GCC's call graph gives a naked function (assembly with its own
    prologue, as qconv_ws.c's q_tile6) no frame; the table takes its pushes
    from the disassembly, and leaves a function GCC sizes alone."""
    (tmp_path / "0_nk.c").write_text(
        "__attribute__((naked, noinline)) static void f(void)\n"
        "{ __asm__(\"push {r1, r3, r4-r11, lr}\\n\\tpop {r1, r3, r4-r11, pc}\"); }\n"
        "__attribute__((naked, noinline)) static void h(void)\n"
        "{ __asm__(\"push {r4, lr}\\n\\tsub sp, sp, r0\\n\\tpop {r4, pc}\"); }\n"
        "int g(int *p) { f(); h(); return p[0] + p[1]; }\n")
    subprocess.run([mcu.COMPILER, *mcu.CORES["cortex-m4"], *mcu.RUNTIME_CFLAGS, "-c", "0_nk.c",
                    "-o", "0_nk.o"], cwd=tmp_path, check=True)
    subprocess.run(["arm-none-eabi-ar", "rc", "lib.a", "0_nk.o"], cwd=tmp_path, check=True)
    frames = stack_table._asm_frames(tmp_path / "lib.a", [tmp_path / "0_nk.ci"])
    assert frames["0_nk.c:f"] == 44
    assert frames["0_nk.c:h"] < 0  # sp moved by a register: no bound (the table refuses it)
    assert set(frames) == {"0_nk.c:f", "0_nk.c:h"}
