"""From MLIR text (or a ModuleOp) to C: parse, verify, plan, emit."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mlvm.analysis.memory_report import module_report, summary_lines, to_svg
from mlvm.codegen.emitter import emit_c
from mlvm.diagnostics import MlvmError, parse_module, read_source, verify_module
from mlvm.dialect import Mlvm
from mlvm.passes.canonicalize import CanonicalizePass
from mlvm.passes.fuse import FusePass
from mlvm.passes.inplace import InplacePass
from mlvm.passes.plan_memory import PlanMemoryPass


def make_context() -> Context:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Func)
    ctx.load_dialect(Mlvm)
    return ctx


@dataclass
class CompileOptions:
    """Knobs of the pass pipeline; every pass can be turned off for comparison."""

    alignment: int = 64
    canonicalize: bool = True
    fuse: bool = True
    inplace: bool = True
    static_arena: bool = False  # emit the arena as a static buffer

    def passes(self) -> list[ModulePass]:
        out: list[ModulePass] = []
        if self.canonicalize:
            out.append(CanonicalizePass())
        if self.fuse:
            out.append(FusePass())
        if self.inplace:
            out.append(InplacePass())
        out.append(PlanMemoryPass(alignment=self.alignment))
        return out


def load_params(path: str | Path | None) -> dict[str, np.ndarray]:
    """Arrays of a parameter archive (.npz); errors name the file."""
    if path is None:
        return {}
    p = Path(path)
    if not p.is_file():
        raise MlvmError(f"{p}: error: parameter archive not found")
    try:
        with np.load(p, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise MlvmError(f"{p}: error: not a readable .npz archive ({e})") from None


def parse_file(path: str | Path) -> tuple[ModuleOp, str]:
    text = read_source(path)
    name = str(path)
    module = parse_module(make_context(), text, name)
    verify_module(module, name)
    return module, name


def lower(module: ModuleOp, options: CompileOptions, source: str) -> None:
    """The pass pipeline between the verified dialect and C emission."""
    ctx = make_context()
    try:
        for p in options.passes():
            p.apply(ctx, module)
    except DiagnosticException as e:
        raise MlvmError(f"{source}: error: {e}") from None


_SAFE_FILE = re.compile(r"^[A-Za-z0-9_.+-]+$")


def header_name(c_path: Path) -> str:
    h = c_path.with_suffix(".h").name
    if not _SAFE_FILE.match(h):
        raise MlvmError(
            f"{c_path}: error: output file name must use only letters, digits and "
            "'_.+-' (it is #included by the generated C)"
        )
    return h


def compile_to_c(
    module: ModuleOp,
    c_path: Path,
    params: Mapping[str, np.ndarray],
    source: str,
    options: CompileOptions | None = None,
) -> tuple[str, str]:
    """Lower a verified module and return (C source, header) for `c_path`."""
    options = options or CompileOptions()
    lower(module, options, source)
    return emit_c(
        module, c_path.stem, params, source, header_name(c_path),
        static_arena=options.static_arena,
    )


def write_c(
    src: str | Path,
    c_path: str | Path,
    params_path: str | Path | None = None,
    options: CompileOptions | None = None,
    memory_report: str | Path | None = None,
    memory_plot: str | Path | None = None,
) -> tuple[Path, Path]:
    """`mlvm-aot compile`: write OUT.c and OUT.h (and the memory report/plot)."""
    module, name = parse_file(src)
    params = load_params(params_path)
    c_path = Path(c_path)
    c_text, h_text = compile_to_c(module, c_path, params, name, options)
    h_path = c_path.with_suffix(".h")
    c_path.parent.mkdir(parents=True, exist_ok=True)
    c_path.write_text(c_text)
    h_path.write_text(h_text)
    if memory_report is not None or memory_plot is not None:
        report = module_report(module)
        for line in summary_lines(report):
            print(line)
        if memory_report is not None:
            Path(memory_report).write_text(json.dumps(report, indent=2) + "\n")
        if memory_plot is not None:
            Path(memory_plot).write_text(to_svg(report))
    return c_path, h_path
