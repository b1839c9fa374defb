"""Command-line entry points: `mlvm-aot` and `mlvm-opt`.

User mistakes print one line (`file:line:col: error: ...`) and exit 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from mlvm.diagnostics import (
    MAX_TENSOR_BYTES,
    LocatingParser,
    MlvmError,
    parse_error,
    verify_module,
)


def _fail(prog: str, err: Exception) -> int:
    msg = str(err).strip()
    first, _, rest = msg.partition("\n")
    print(first if "error" in first else f"{prog}: error: {first}", file=sys.stderr)
    if rest and "C compiler failed" in first:
        print(rest, file=sys.stderr)  # the compiler's own diagnostics
    return 1


def aot_main(argv: Sequence[str] | None = None) -> int:
    from mlvm.codegen.cc import build_shared
    from mlvm.pipeline import CompileOptions, write_c

    ap = argparse.ArgumentParser(prog="mlvm-aot", description="mlvm ahead-of-time compiler")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd, what in (("compile", "write OUT.c and OUT.h"), ("build", "build OUT.so")):
        p = sub.add_parser(cmd, help=what)
        p.add_argument("input", help="model (.mlir or .onnx)")
        p.add_argument("-o", "--output", required=True)
        p.add_argument("--params", help="parameter archive (.npz) for mlvm.param")
        p.add_argument("--alignment", type=int, default=64, help="arena buffer alignment")
        p.add_argument(
            "--max-bytes", type=int, default=MAX_TENSOR_BYTES, metavar="N",
            help="refuse tensors, arenas and parameter archives larger than N bytes "
            "(default 2^40)",
        )
        p.add_argument("--no-canonicalize", action="store_true", help="no folding or simplification")
        p.add_argument("--no-fuse", action="store_true", help="one kernel call per elementwise op")
        p.add_argument("--no-inplace", action="store_true", help="never reuse an operand's buffer")
        p.add_argument(
            "--arena", choices=("caller", "static"), default="caller",
            help="who provides the arena: the caller (default) or a static buffer",
        )
        p.add_argument("--memory-report", metavar="R.json", help="write the memory plan as JSON")
        p.add_argument("--memory-plot", metavar="R.svg", help="draw the memory plan as SVG")
        _add_input_shape(p)
    imp = sub.add_parser("import", help="write an ONNX model as dialect text and weights")
    imp.add_argument("input", help="model (.onnx)")
    imp.add_argument("-o", "--output", required=True, help="the dialect text (OUT.mlir)")
    imp.add_argument("--params-out", metavar="W.npz", help="the weights, for --params")
    _add_input_shape(imp)
    from mlvm import runtime

    runtime.add_arguments(sub.add_parser("runtime", help="copy the C runtime's sources"))
    args = ap.parse_args(argv)
    if args.cmd == "runtime":
        return runtime.run(args)
    try:
        shapes = _input_shapes(args.input_shape)
    except MlvmError as e:
        return _fail("mlvm-aot", e)
    if args.cmd == "import":
        from mlvm.pipeline import write_import

        try:
            write_import(args.input, args.output, args.params_out, shapes)
        except MlvmError as e:
            return _fail("mlvm-aot", e)
        except OSError as e:
            return _fail("mlvm-aot", MlvmError(f"{e.filename or ''}: error: {e.strerror or e}"))
        return 0
    options = CompileOptions(
        alignment=args.alignment,
        canonicalize=not args.no_canonicalize,
        fuse=not args.no_fuse,
        inplace=not args.no_inplace,
        static_arena=args.arena == "static",
        max_bytes=args.max_bytes,
    )
    reports = dict(
        memory_report=args.memory_report, memory_plot=args.memory_plot, input_shapes=shapes
    )
    try:
        out = Path(args.output)
        if args.cmd == "compile":
            if out.suffix != ".c":
                raise MlvmError(f"{out}: error: the output of compile must end in .c")
            write_c(args.input, out, args.params, options, **reports)
        else:
            if out.suffix != ".so":
                raise MlvmError(f"{out}: error: the output of build must end in .so")
            c_path = out.with_suffix(".c")
            write_c(args.input, c_path, args.params, options, **reports)
            build_shared(c_path, out)
    except MlvmError as e:
        return _fail("mlvm-aot", e)
    except OSError as e:  # unwritable output
        return _fail("mlvm-aot", MlvmError(f"{e.filename or ''}: error: {e.strerror or e}"))
    return 0


def _add_input_shape(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--input-shape", action="append", default=[], metavar="NAME=DxDx...",
        help="the shape of an ONNX input with unknown dims (repeat per input)",
    )


def _input_shapes(specs: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """`NAME=1x3x224x224` (a scalar: `NAME=`) per --input-shape."""
    out: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, eq, dims = spec.rpartition("=")
        try:
            shape = tuple(int(d) for d in dims.split("x")) if dims else ()
        except ValueError:
            shape = (-1,)
        if not eq or not name or any(d < 0 for d in shape):
            raise MlvmError(f"mlvm-aot: error: --input-shape '{spec}' is not NAME=DxDx... "
                            "with non-negative dims")
        out[name] = shape
    return out


@dataclass(frozen=True)
class CTarget(Target):
    """`mlvm-opt -t c`: the generated C source (parameters are not bound)."""

    name = "c"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from mlvm.codegen.emitter import emit_c

        c_text, _ = emit_c(module, "module", {}, "mlvm-opt")
        output.write(c_text)


class MlvmOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        from mlvm.dialect import Mlvm

        self.ctx.register_dialect("mlvm", lambda: Mlvm)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        from mlvm.passes import ALL_PASSES

        for name, factory in ALL_PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        self.available_targets["c"] = lambda: CTarget

    _line_offset = 0

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            name = self.get_input_name()
            try:
                text = io.read().decode()
            except UnicodeDecodeError as e:
                raise MlvmError(f"{name}: error: cannot read: {e}") from None
            parser = LocatingParser(self.ctx, text, name, self._line_offset)
            return parser.parse_module_checked()

        self.available_frontends["mlir"] = parse_mlir

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        # Locations of ops in a split chunk count lines from the file's start.
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def apply_passes(self, prog: ModuleOp) -> None:
        if not self.args.disable_verify:
            try:
                verify_module(prog, self.get_input_name())
            except MlvmError as e:
                # A DiagnosticException, so that --verify-diagnostics prints it.
                raise VerifyException(str(e)) from None
        super().apply_passes(prog)


def opt_main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            tool = MlvmOptMain(description="mlvm modular optimizer driver", args=argv)
        except ValueError as e:  # unknown passes, bad pass options
            return _fail("mlvm-opt", e)
        tool.run()
    except MlvmError as e:
        return _fail("mlvm-opt", e)
    except ParseError as e:
        return _fail("mlvm-opt", parse_error(e))
    except DiagnosticException as e:
        return _fail("mlvm-opt", e)
    except OSError as e:  # missing input, unwritable output
        return _fail("mlvm-opt", MlvmError(f"{e.filename or ''}: error: {e.strerror or e}"))
    return 0


if __name__ == "__main__":
    sys.exit(aot_main())
