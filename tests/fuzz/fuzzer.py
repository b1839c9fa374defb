"""A mutation fuzzer for mlvm's untrusted inputs.

Four targets, each run in a forked child under a time limit:

- `compile`: mutated `.mlir` programs (the samples and every test program)
  through `mlvm-aot compile`. The only acceptable outcomes are exit 0, or
  exit 1 with one line naming the input and saying `error:`. Some programs
  that compile are built with AddressSanitizer + UndefinedBehaviorSanitizer
  and every one-shot export is called on random inputs by a C driver.
- `npz`: mutated parameter archives through `load_params`: a model file may
  be hostile, so anything but a one-line MlvmError is a finding.
- `call`: random arguments to loaded modules: only a one-line ValueError or
  TypeError may come back.
- `params`: mutated external parameter files (.mlvmp) bound to a module
  built with `--external-params`, and mutated `.safetensors` archives:
  only a one-line ValueError / MlvmError may come back.
- `onnx`: the onnx package's small test models (pytorch-converted,
  pytorch-operator, simple), their attributes, input dims, initializers,
  wiring, op types or bytes mutated, through `mlvm-aot compile
  model.onnx`: exit 0, or exit 1 with one line.

A finding is a traceback, a message of more than one line, a crash (signal),
a hang past the limit, or a sanitizer report. Findings are deduplicated and
written to the findings folder with the input and a command to reproduce.

    python tests/fuzz/fuzzer.py --seconds 1800 [--seed N] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import warnings

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
import c_build  # noqa: E402  (the tests' sanitizer flags and runtime libraries)

LIMIT_SECONDS = 20.0

HOSTILE_NAMES = [
    '"*/ __attribute__((constructor)) static void p(void) { __builtin_trap(); } /*"',
    '"a\\00b"', '"??/"', '"\\n#include <stdio.h>\\n"', '"module"', '"main_begin"', '"A"',
    '"' + "x" * 300 + '"', '"\\22"', '"\u00e9\u4e2d"', "_", "f__entry",
]
EXTREME_INTS = ["0", "1", "-1", "2147483647", "2147483648", "-2147483649", "4294967296",
                "9223372036854775807", "9223372036854775808", "18446744073709551616",
                "99999999999999999999", "65536"]
EXTREME_FLOATS = ["0.0", "-0.0", "1.0e+40", "-1.0e+40", "0x7FC00000", "0x7F800000", "1.0e-45",
                  "3.4028235e+38", "nan", "inf"]


def corpus() -> list[str]:
    """The seed programs: samples and test programs, split at `// -----`."""
    out: list[str] = []
    for p in sorted([*ROOT.glob("samples/**/*.mlir"), *ROOT.glob("tests/**/*.mlir")]):
        if "Output" in p.parts:
            continue
        for chunk in p.read_text(errors="replace").split("// -----"):
            if "func.func" in chunk:
                out.append(chunk)
    return out


# -- mutators ---------------------------------------------------------------------------
_NUM = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e[+-]?\d+)?")
_DIMS = re.compile(r"tensor<([0-9x]*)x?(f32|i32|f16|i64)>")
_NAME = re.compile(r'@"?[\w.$-]+"?|(name|queue|callee|kind|approximate) = "[^"]*"')


def mutate(text: str, rng: random.Random, seeds: list[str]) -> str:
    for _ in range(rng.randint(1, 4)):
        text = rng.choice(MUTATORS)(text, rng, seeds)
    return text


def _flip(text: str, rng: random.Random, seeds: list[str]) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    ch = chr(rng.choice([0, 9, 10, 34, 37, 40, 41, 60, 62, 64, 92, 123, 125, rng.randrange(32, 127)]))
    return text[:i] + ch + text[i + 1:]


def _number(text: str, rng: random.Random, seeds: list[str]) -> str:
    ms = list(_NUM.finditer(text))
    if not ms:
        return text
    m = rng.choice(ms)
    pool = EXTREME_FLOATS if "." in m.group() else EXTREME_INTS
    return text[:m.start()] + rng.choice(pool) + text[m.end():]


def _dims(text: str, rng: random.Random, seeds: list[str]) -> str:
    ms = list(_DIMS.finditer(text))
    if not ms:
        return text
    m = rng.choice(ms)
    dims = [rng.choice(["0", "1", "3", "7", "65536", "2147483648", "1099511627776"])
            for _ in range(rng.randint(0, 4))]
    new = f"tensor<{'x'.join(dims)}{'x' if dims else ''}{m.group(2)}>"
    return text[:m.start()] + new + text[m.end():]


def _name(text: str, rng: random.Random, seeds: list[str]) -> str:
    ms = list(_NAME.finditer(text))
    if not ms:
        return text
    m = rng.choice(ms)
    hostile = rng.choice(HOSTILE_NAMES)
    if m.group().startswith("@"):
        new = "@" + hostile
    else:
        new = m.group().split("=")[0] + "= " + (hostile if hostile.startswith('"') else f'"{hostile}"')
    return text[:m.start()] + new + text[m.end():]


def _lines(text: str, rng: random.Random, seeds: list[str]) -> str:
    lines = text.splitlines()
    if len(lines) < 2:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(j, lines[i])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    else:
        other = rng.choice(seeds).splitlines() or [""]
        lines.insert(j, rng.choice(other))
    return "\n".join(lines) + "\n"


def _truncate(text: str, rng: random.Random, seeds: list[str]) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _big(text: str, rng: random.Random, seeds: list[str]) -> str:
    choice = rng.randrange(3)
    if choice == 0:
        return text + '"' + "a" * rng.randint(10, 5000)
    if choice == 1:
        return text.replace("dense<", "dense<" + "[" * rng.randint(1, 300), 1)
    return text + "\n" + "// " + "x" * 100000 + "\n"


MUTATORS: list[Callable[[str, random.Random, list[str]], str]] = [
    _flip, _number, _number, _dims, _dims, _name, _lines, _lines, _truncate, _big,
]


# -- running one input in a child ---------------------------------------------------------
@dataclass
class Outcome:
    kind: str  # ok | finding
    detail: str = ""
    compiled: bool = False


def in_child(fn: Callable[[], Outcome], limit: float = LIMIT_SECONDS) -> Outcome:
    """Runs fn in a forked process: a crash or a hang there is a finding here."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child_main, args=(fn, child))
    proc.start()
    child.close()
    if parent.poll(limit):
        try:
            out: Outcome = parent.recv()
        except EOFError:
            out = Outcome("finding", f"crash: exit code {proc.exitcode}")
        proc.join(5)
        if proc.is_alive():
            proc.kill()
        return out
    proc.kill()
    proc.join()
    if proc.exitcode is not None and proc.exitcode < 0 and proc.exitcode != -signal.SIGKILL:
        return Outcome("finding", f"crash: signal {-proc.exitcode}")
    return Outcome("finding", f"hang: no answer in {limit:.0f} s")


def _child_main(fn: Callable[[], Outcome], conn: Any) -> None:
    try:
        out = fn()
    except BaseException:  # noqa: BLE001 - the child reports everything
        out = Outcome("finding", "uncaught: " + traceback.format_exc())
    try:
        conn.send(out)
    finally:
        conn.close()
        os._exit(0)


def one_line(msg: str, allowed: str) -> str | None:
    """None when msg is a single line containing `allowed`; else what is wrong."""
    lines = msg.strip().splitlines()
    if len(lines) != 1:
        return f"{len(lines)}-line message: " + msg.strip()[:2000]
    if allowed not in lines[0]:
        return "message without '" + allowed + "': " + lines[0][:500]
    return None


def compile_target(src: Path, out_c: Path) -> Callable[[], Outcome]:
    def run() -> Outcome:
        from contextlib import redirect_stderr, redirect_stdout

        from mlvm.cli import aot_main

        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            try:
                rc = aot_main(["compile", str(src), "-o", str(out_c)])
            except SystemExit as e:  # argparse
                rc = int(e.code or 0)
        if rc == 0:
            return Outcome("ok", compiled=True)
        if rc != 1:
            return Outcome("finding", f"exit code {rc}: {err.getvalue()[:2000]}")
        bad = one_line(err.getvalue(), "error:")
        return Outcome("finding", bad) if bad else Outcome("ok")
    return run


def onnx_corpus() -> list[Path]:
    """The onnx package's model test files that are small graphs
    (pytorch-converted, pytorch-operator, simple: convolutions, pools,
    recurrent cells, matmuls, reductions, ...)."""
    import onnx

    data = Path(onnx.__file__).parent / "backend" / "test" / "data"
    return sorted(p for kind in ("pytorch-converted", "pytorch-operator", "simple")
                  for p in (data / kind).glob("*/model.onnx"))


_ODD_INTS = [0, 1, -1, 2, 3, 5, 64, 2**15, 2**31 - 1, -(2**31), 2**40, -(2**40), 2**62]
_ODD_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-30, 1e30, float("inf"), float("-inf"), float("nan")]


def mutate_onnx(paths: list[Path], rng: random.Random) -> bytes:
    """A node test model with one to three mutations (or its bytes damaged)."""
    import onnx

    data = rng.choice(paths).read_bytes()
    if rng.random() < 0.1:  # damaged bytes: the parser's and the checks' turn
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b[: rng.randint(len(b) // 2, len(b))] if rng.random() < 0.3 else b)
    m = onnx.ModelProto.FromString(data)
    g = m.graph
    for _ in range(rng.randint(1, 3)):
        what = rng.random()
        attrs = [a for n in g.node for a in n.attribute]
        if what < 0.4 and attrs:
            a = rng.choice(attrs)
            if a.type == onnx.AttributeProto.INT:
                a.i = rng.choice(_ODD_INTS)
            elif a.type == onnx.AttributeProto.INTS:
                if a.ints and rng.random() < 0.7:
                    a.ints[rng.randrange(len(a.ints))] = rng.choice(_ODD_INTS)
                else:
                    a.ints.append(rng.choice(_ODD_INTS))
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice(_ODD_FLOATS)
            elif a.type == onnx.AttributeProto.STRING:
                a.s = rng.choice([b"", b"linear", b"nearest", b"cubic", b"reflect", b"SAME_UPPER", b"x" * 300])
        elif what < 0.6 and g.input:
            dims = [d for i in g.input for d in i.type.tensor_type.shape.dim]
            if dims:
                d = rng.choice(dims)
                if rng.random() < 0.2:
                    d.dim_param = "n"
                else:
                    d.dim_value = rng.choice([0, 1, 2, 3, 7, 2**20, 2**31, 2**40])
        elif what < 0.75 and g.initializer:
            t = rng.choice(g.initializer)
            if t.dims and rng.random() < 0.7:
                t.dims[rng.randrange(len(t.dims))] = rng.choice(_ODD_INTS[:8])
            else:
                t.dims.append(rng.choice([0, 1, 2, 2**33]))
        elif what < 0.9 and g.node:
            n = rng.choice(g.node)
            names = [v for x in g.node for v in (*x.input, *x.output)] + [i.name for i in g.input]
            if n.input and rng.random() < 0.5:
                n.input[rng.randrange(len(n.input))] = rng.choice(names + [""])
            else:
                n.input.append(rng.choice(names))
        elif g.node:
            other = onnx.ModelProto.FromString(rng.choice(paths).read_bytes()).graph.node
            if other:
                rng.choice(g.node).op_type = rng.choice(other).op_type
    return m.SerializeToString()


def onnx_target(path: Path, out_c: Path) -> Callable[[], Outcome]:
    def run() -> Outcome:
        from contextlib import redirect_stderr, redirect_stdout

        from mlvm.cli import aot_main

        err = io.StringIO()
        with redirect_stderr(err), redirect_stdout(io.StringIO()):
            try:  # sizes a little past a microcontroller's, so that no input takes long
                rc = aot_main(["compile", str(path), "-o", str(out_c), "--max-bytes", str(1 << 26)])
            except SystemExit as e:  # argparse
                rc = int(e.code or 0)
        if rc == 0:
            return Outcome("ok")
        if rc != 1:
            return Outcome("finding", f"exit code {rc}: {err.getvalue()[:2000]}")
        bad = one_line(err.getvalue(), "error:")
        return Outcome("finding", bad) if bad else Outcome("ok")
    return run


def npz_target(path: Path) -> Callable[[], Outcome]:
    def run() -> Outcome:
        from mlvm.diagnostics import MlvmError
        from mlvm.pipeline import load_params

        try:
            load_params(path, max_bytes=1 << 28)
        except MlvmError as e:
            bad = one_line(str(e), "error:")
            return Outcome("finding", bad) if bad else Outcome("ok")
        return Outcome("ok")
    return run


def mutate_npz(rng: random.Random) -> bytes:
    buf = io.BytesIO()
    arrays = {"w": np.arange(rng.randint(0, 40), dtype=rng.choice([np.float32, np.int32, np.float64])),
              "b": np.ones((2, 3), np.float32)}
    with zipfile.ZipFile(buf, "w", rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])) as zf:
        for k, a in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, a)
            data = bytearray(member.getvalue())
            if rng.random() < 0.5:  # edit the header: shapes, dtypes, versions
                header = data[:128].decode("latin-1")
                header = header.replace(str(a.shape), rng.choice(
                    ["(1099511627776,)", "(-1,)", "(4611686018427387904, 4)", "()", "(3, 3)"]))
                header = header.replace("'descr': '<", rng.choice(["'descr': '|O", "'descr': '<", "'descr': '>"]))
                data[:128] = header.encode("latin-1")[:128].ljust(128, b" ")
            zf.writestr(rng.choice([f"{k}.npy", f"{k}.txt", "../evil.npy", f"{k}.npy"]), bytes(data))
    raw = bytearray(buf.getvalue())
    for _ in range(rng.randint(0, 3)):
        if raw:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    if rng.random() < 0.2:
        raw = raw[: rng.randrange(len(raw) + 1)]
    return bytes(raw)


def mutate_params(rng: random.Random, good: bytes) -> bytes:
    """A damaged parameter file: flipped bytes, extreme header and table
    fields, cut or grown, often with the checksum made right again so the
    checks behind it are reached."""
    import struct
    import zlib

    raw = bytearray(good)
    for _ in range(rng.randint(0, 3)):
        if raw:
            raw[rng.randrange(len(raw))] = rng.randrange(256)
    if rng.random() < 0.5 and len(raw) >= 64 + 104:
        field = rng.choice([12, 16, 24, 32, 64, 72, 76, 80, 88, 152, 160])
        value = rng.choice([0, 1, 63, 64, 2**31, 2**32 - 1, 2**63, 2**64 - 1, len(raw), len(raw) + 1])
        width = 4 if field in (12, 72, 76, 80) else 8
        struct.pack_into("<I" if width == 4 else "<Q", raw, field, value % (1 << (8 * width)))
    if rng.random() < 0.2:
        raw = raw[: rng.randrange(len(raw) + 1)]
    elif rng.random() < 0.1:
        raw += bytes(rng.choice([1, 64, 4096]))
    if rng.random() < 0.6 and len(raw) >= 64:
        struct.pack_into("<Q", raw, 32, len(raw)) if rng.random() < 0.5 else None
        struct.pack_into("<I", raw, 40, zlib.crc32(bytes(raw[64:])))
    return bytes(raw)


def params_target(so: Path, path: Path) -> Callable[[], Outcome]:
    def run() -> Outcome:
        import mlvm

        try:
            m = mlvm.load(so, params=path)
        except ValueError as e:
            bad = one_line(str(e), str(path))
            return Outcome("finding", bad) if bad else Outcome("ok")
        m.main(np.zeros((2, 3), np.float32))
        return Outcome("ok")
    return run


def mutate_safetensors(rng: random.Random) -> bytes:
    import json
    import struct

    header = {"w": {"dtype": rng.choice(["F32", "I32", "F64", "BF16", "BOOL", "X"]),
                    "shape": rng.choice([[2, 3], [1 << 40], [-1], [], [6]]),
                    "data_offsets": rng.choice([[0, 24], [0, 1 << 40], [24, 0], [0, 23]])}}
    text = json.dumps(header).encode()
    if rng.random() < 0.3:
        text = text[: rng.randrange(len(text) + 1)]
    size = rng.choice([len(text), len(text) + 1, 1 << 62, 0])
    return struct.pack("<Q", size % (1 << 64)) + text + bytes(rng.choice([0, 24, 100]))


def safetensors_target(path: Path) -> Callable[[], Outcome]:
    return npz_target(path)


PARAMS_SRC = """\
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %w = "mlvm.param"() <{name = "w"}> : () -> tensor<2x3xf32>
  %v = "mlvm.param"() <{name = "v"}> : () -> tensor<3xf32>
  %y = "mlvm.add"(%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = "mlvm.mul"(%y, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
"""


CALL_SRC = """\
func.func @main(%x: tensor<2x3xf32>, %n: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<3xi32>) {
  %y = "mlvm.exp"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = "mlvm.add"(%n, %n) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %y, %m : tensor<2x3xf32>, tensor<3xi32>
}
"""


def call_target(so: Path, seed: int) -> Callable[[], Outcome]:
    def run() -> Outcome:
        import mlvm

        rng = np.random.default_rng(seed)
        m = mlvm.load(so)
        for _ in range(50):
            args = [_garbage(rng) for _ in range(int(rng.integers(0, 4)))]
            f = m.main.begin if rng.random() < 0.3 else m.main
            try:
                out = f(*args)
                if isinstance(out, mlvm.loader.Call):
                    out.result()
            except (ValueError, TypeError) as e:
                bad = one_line(str(e), "")
                if bad:
                    return Outcome("finding", bad)
        return Outcome("ok")
    return run


def _garbage(rng: np.random.Generator) -> Any:
    pick = int(rng.integers(0, 9))
    good = [np.zeros((2, 3), np.float32), np.zeros(3, np.int32)][int(rng.integers(0, 2))]
    if pick == 0:
        return good
    if pick == 1:
        return good.astype(rng.choice([np.float64, np.int64, np.float16, np.uint8, bool]))
    if pick == 2:
        return good.T if good.ndim == 2 else good[::2]
    if pick == 3:
        raw = np.zeros(good.nbytes + 1, np.uint8)
        return np.frombuffer(raw.data, dtype=good.dtype, count=good.size, offset=1).reshape(good.shape)
    if pick == 4:
        return good.reshape(-1)
    if pick == 5:
        return good.tolist()
    if pick == 6:
        return None
    if pick == 7:
        return np.zeros((0,), np.float32)
    return "x"


# -- sanitizer runs of compiled programs ----------------------------------------------------
DRIVER = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mlvm/module.h"
const mlvm_module_t *mlvm_so_module(void);
static size_t bytes_of(const mlvm_tensor_desc_t *t) {
    size_t n = 4; int32_t d;
    for (d = 0; d < t->rank; ++d) n *= (size_t)t->dims[d];
    return n;
}
int main(void) {
    const mlvm_module_t *m = mlvm_so_module();
    int32_t e, i;
    unsigned seed = 1;
    for (e = 0; e < m->num_exports; ++e) {
        const mlvm_export_t *x = &m->exports[e];
        void *ins[64], *outs[64];
        unsigned char *raw, *arena;
        size_t total = x->arena_bytes;
        if (x->call == NULL || x->num_inputs > 64 || x->num_outputs > 64) continue;
        for (i = 0; i < x->num_inputs; ++i) total += bytes_of(&x->inputs[i]);
        for (i = 0; i < x->num_outputs; ++i) total += bytes_of(&x->outputs[i]);
        if (total > ((size_t)1 << 28)) continue; /* a valid program too large to run here */
        for (i = 0; i < x->num_inputs; ++i) {
            size_t n = bytes_of(&x->inputs[i]), k;
            ins[i] = malloc(n ? n : 1);
            for (k = 0; k + 4 <= n; k += 4) {
                float v = (float)(int)((seed = seed * 1103515245u + 12345u) >> 16 & 255) / 16.0f - 8.0f;
                if (x->inputs[i].dtype == MLVM_I32) { int32_t w = (int32_t)v; memcpy((char *)ins[i] + k, &w, 4); }
                else memcpy((char *)ins[i] + k, &v, 4);
            }
        }
        for (i = 0; i < x->num_outputs; ++i) {
            size_t n = bytes_of(&x->outputs[i]);
            outs[i] = malloc(n ? n : 1);
        }
        raw = (unsigned char *)malloc(x->arena_bytes + 64);
        if (raw == NULL) continue;
        arena = raw + (64 - (uintptr_t)raw % 64);
        x->call(arena, ins, outs);
        free(raw);
        for (i = 0; i < x->num_inputs; ++i) free(ins[i]);
        for (i = 0; i < x->num_outputs; ++i) free(outs[i]);
    }
    return 0;
}
"""


@dataclass
class Sanitizer:
    work: Path
    objs: list[Path] = field(default_factory=list)

    def flags(self) -> list[str]:
        return ["-std=c99", *c_build.SANITIZE]

    def prepare(self) -> None:
        """The driver, and the runtime built with the same sanitizers (the
        tests' cached static library of them: built once, its files in
        parallel)."""
        from mlvm.codegen.cc import INCLUDE_DIR

        driver = self.work / "driver.c"
        driver.write_text(DRIVER)
        o = self.work / "driver.o"
        subprocess.run([c_build.CC, *self.flags(), "-I", str(INCLUDE_DIR), "-c", str(driver),
                        "-o", str(o)], check=True, capture_output=True)
        self.objs = [o, c_build.runtime_archive(c_build.SANITIZE)]

    def run(self, c_path: Path) -> Outcome:
        from mlvm.codegen.cc import INCLUDE_DIR

        exe = c_path.with_suffix(".exe")
        res = subprocess.run([c_build.CC, *self.flags(), "-DMLVM_SO_ENTRY", "-I", str(INCLUDE_DIR),
                              "-I", str(c_path.parent), str(c_path), *map(str, self.objs), "-lm",
                              "-o", str(exe)], capture_output=True, text=True)
        if res.returncode != 0:
            return Outcome("finding", "generated C does not build: " + res.stderr[:3000])
        try:
            run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=LIMIT_SECONDS,
                                 env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
        except subprocess.TimeoutExpired:
            return Outcome("finding", "generated code hangs")
        if run.returncode != 0:
            return Outcome("finding", f"sanitizer (exit {run.returncode}): " + run.stderr[:3000])
        return Outcome("ok")


# -- the loop -----------------------------------------------------------------------------------
def signature(detail: str) -> str:
    """What makes two findings the same: the last mlvm frame, or the message shape."""
    frames = re.findall(r'File "([^"]*mlvm[^"]*)", line (\d+)', detail)
    if frames:
        last = detail.strip().splitlines()[-1].split(":")[0]
        return f"{frames[-1][0].rsplit('/', 1)[-1]}:{frames[-1][1]} {last}"
    return re.sub(r"[\d]+", "N", re.sub(r"'[^']*'|\"[^\"]*\"", "S", detail.splitlines()[0]))[:160]


def fuzz(seconds: float, seed: int, out: Path, jobs: int = 1) -> tuple[int, dict[str, tuple[str, str, Path]]]:
    warnings.simplefilter("ignore")  # the mutators' own zip writing warns
    # Everything the targets run is imported here, once: each child is forked
    # from this process and runs this code, even if the files change meanwhile.
    import mlvm.cli
    import mlvm.frontend.onnx
    import mlvm.loader
    import mlvm.pipeline  # noqa: F401
    rng = random.Random(seed)
    seeds = corpus()
    onnx_seeds = onnx_corpus()
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mlvm-fuzz-"))
    try:
        san = Sanitizer(work)
        san.prepare()
        call_so = _call_module(work)
        params_so, params_good = _params_module(work)
        findings: dict[str, tuple[str, str, Path]] = {}
        tried = 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            tried += 1
            k = rng.random()
            case = work / f"case{tried % 4}"
            if k < 0.7:
                src = case.with_suffix(".mlir")
                text = mutate(rng.choice(seeds), rng, seeds)
                src.write_bytes(text.encode("utf-8", "surrogatepass"))
                res = in_child(compile_target(src, case.with_suffix(".c")))
                target, data, repro = "compile", src.read_bytes(), "mlvm-aot compile INPUT -o out.c"
                if res.kind == "ok" and res.compiled and rng.random() < 0.25:
                    res = san.run(case.with_suffix(".c"))
                    target, repro = "sanitize", "mlvm-aot compile INPUT -o out.c; build with ASan/UBSan"
            elif k < 0.8:
                path = case.with_suffix(".onnx")
                path.write_bytes(mutate_onnx(onnx_seeds, rng))
                res = in_child(onnx_target(path, case.with_suffix(".c")))
                target, data, repro = "onnx", path.read_bytes(), "mlvm-aot compile INPUT -o out.c --max-bytes 67108864"
            elif k < 0.86:
                path = case.with_suffix(".npz")
                path.write_bytes(mutate_npz(rng))
                res = in_child(npz_target(path))
                target, data, repro = "npz", path.read_bytes(), "mlvm-aot compile M.mlir -o o.c --params INPUT"
            elif k < 0.88:
                path = case.with_suffix(".safetensors")
                path.write_bytes(mutate_safetensors(rng))
                res = in_child(safetensors_target(path))
                target, data, repro = "safetensors", path.read_bytes(), "load_params(INPUT)"
            elif k < 0.94:
                path = case.with_suffix(".mlvmp")
                path.write_bytes(mutate_params(rng, params_good))
                res = in_child(params_target(params_so, path))
                target, data, repro = "params", path.read_bytes(), "mlvm.load(PARAMS_SRC module, params=INPUT)"
            else:
                s = rng.randrange(1 << 30)
                res = in_child(call_target(call_so, s))
                target, data, repro = "call", f"seed {s}".encode(), f"call_target(CALL_SRC module, {s})"
            if res.kind == "finding":
                sig = f"{target}: {signature(res.detail)}"
                if sig not in findings:
                    digest = hashlib.sha256(data).hexdigest()[:12]
                    path = out / f"{target}-{digest}.input"
                    path.write_bytes(data)
                    (out / f"{target}-{digest}.txt").write_text(f"{sig}\nreproduce: {repro}\n\n{res.detail}\n")
                    findings[sig] = (res.detail, repro, path)
                    print(f"finding {len(findings)}: {sig}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # findings were copied to out
    return tried, findings


def _call_module(work: Path) -> Path:
    import mlvm

    src = work / "call.mlir"
    src.write_text(CALL_SRC)
    return mlvm.compile(src).path


def _params_module(work: Path) -> tuple[Path, bytes]:
    """PARAMS_SRC built with external parameters, and its good parameter file."""
    from mlvm.cli import aot_main

    src = work / "params.mlir"
    src.write_text(PARAMS_SRC)
    np.savez(work / "params.npz", w=np.ones((2, 3), np.float32), v=np.ones(3, np.float32))
    so, good = work / "params.so", work / "params.mlvmp"
    assert aot_main(["build", str(src), "-o", str(so), "-q", "--params", str(work / "params.npz"),
                     "--external-params", str(good)]) == 0
    return so, good.read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("FUZZ_SECONDS", 1800)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("FUZZ_SEED", 1)))
    ap.add_argument("--out", default=str(ROOT / "fuzz-findings"))
    args = ap.parse_args()
    t0 = time.monotonic()
    tried, findings = fuzz(args.seconds, args.seed, Path(args.out))
    print(f"fuzz: {tried} inputs in {time.monotonic() - t0:.0f} s (seed {args.seed}), "
          f"{len(findings)} findings" + (f" in {args.out}" if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
