"""Command-line entry points: `mlvm-aot` and `mlvm-opt`.

User mistakes print one line (`file:line:col: error: ...`) and exit 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
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
    from mlvm.pipeline import CompileOptions, blob_paths, write_c

    from mlvm import __version__

    ap = argparse.ArgumentParser(
        prog="mlvm-aot", description="mlvm ahead-of-time compiler: ML models to C",
        epilog=AOT_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"mlvm-aot {__version__}")
    sub = ap.add_subparsers(dest="cmd", metavar="{compile,build,import,verify,runtime}")
    for cmd, what in (("compile", "write OUT.c and OUT.h"),
                      ("build", "build OUT.so (the C goes to a build folder unless --keep-c)")):
        p = sub.add_parser(cmd, help=what, description=what)
        p.add_argument("input", help="model (.mlir or .onnx)")
        p.add_argument(
            "-o", "--output", required=True,
            help="OUT.c (compile: OUT.h is written beside it)" if cmd == "compile"
            else "OUT.so, a shared object that mlvm.load() reads",
        )
        if cmd == "build":
            p.add_argument("--comm", choices=("shm", "mpi"), default="shm",
                           help="communicator for collectives: shm (threads of one process) or "
                           "mpi (processes under mpirun; builds with mpicc)")
            p.add_argument("--keep-c", action="store_true",
                           help="also keep OUT.c and OUT.h beside OUT.so")
        p.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
        p.add_argument("-v", "--verbose", action="store_true",
                       help="print every stage with its time, even when piped")
        p.add_argument("--params", help="parameter archive (.npz) for mlvm.param")
        p.add_argument("--external-params", metavar="OUT.mlvmp",
                       help="write the weights to this parameter file instead of the code "
                       "(bound to the instance at run time)")
        p.add_argument("--alignment", type=int, default=64, help="arena buffer alignment")
        p.add_argument(
            "--max-bytes", type=int, default=MAX_TENSOR_BYTES, metavar="N",
            help="refuse tensors, arenas and parameter archives larger than N bytes "
            "(default 2^40)",
        )
        p.add_argument("--no-canonicalize", action="store_true", help="no folding or simplification")
        p.add_argument("--no-fuse", action="store_true", help="one kernel call per elementwise op")
        p.add_argument("--no-inplace", action="store_true", help="never reuse an operand's buffer")
        p.add_argument("--no-bucket-collectives", action="store_true",
                       help="one meeting of the ranks per all_reduce (no buckets)")
        p.add_argument("--no-pack-weights", action="store_true",
                       help="keep weights in the archive's layout (transposed reads at run time)")
        p.add_argument("--no-fuse-qdq", action="store_true",
                       help="compute QDQ-form int8 convolutions / matmuls in float (skip mlvm-fuse-qdq)")
        p.add_argument("--no-fuse-gelu", action="store_true",
                       help="keep GELU's erf form as the ops it is written in (skip mlvm-fuse-gelu)")
        p.add_argument("--no-qmatmul-conv", action="store_true",
                       help="int8 matmuls by their own portable kernel, not the int8 convolution "
                       "kernels (skip mlvm-qmatmul-conv)")
        p.add_argument("--no-workspaces", action="store_true",
                       help="no kernel scratch in the arena: conv2d gathers its windows per "
                       "block instead of copying its input once (less RAM, slower on hosts)")
        p.add_argument("--no-winograd", action="store_true",
                       help="no Winograd minimal filtering for 3x3 convolutions (smaller workspaces "
                       "and weights, slower on hosts; for microcontrollers)")
        p.add_argument(
            "--arena", choices=("caller", "static"), default="caller",
            help="who provides the arena: the caller (default) or a static buffer",
        )
        p.add_argument("--memory-report", metavar="R.json", help="write the memory plan as JSON")
        p.add_argument("--memory-plot", metavar="R.svg",
                       help="draw the memory plan: .svg, or .png (needs matplotlib)")
        _add_input_shape(p)
    imp = sub.add_parser("import", help="write an ONNX model as dialect text and weights")
    imp.add_argument("input", help="model (.onnx)")
    imp.add_argument("-o", "--output", required=True, help="the dialect text (OUT.mlir)")
    imp.add_argument("--params-out", metavar="W.npz", help="the weights, for --params")
    _add_input_shape(imp)
    from mlvm import runtime, verify

    ver = sub.add_parser("verify", help=verify.HELP, description=verify.__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    verify.add_arguments(ver)
    _add_input_shape(ver)
    runtime.add_arguments(sub.add_parser("runtime", help="copy the C runtime's sources"))
    args = ap.parse_args(argv)
    if args.cmd is None:
        ap.print_help(sys.stderr)
        return 2
    if args.cmd == "runtime":
        return runtime.run(args)
    if args.cmd == "verify":
        return verify.main_for(args)
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
        pack_weights=not args.no_pack_weights,
        fuse_qdq=not args.no_fuse_qdq,
        fuse_gelu=not args.no_fuse_gelu,
        qmatmul_conv=not args.no_qmatmul_conv,
        bucket_collectives=not args.no_bucket_collectives,
        static_arena=args.arena == "static",
        workspaces=not args.no_workspaces,
        winograd=not args.no_winograd,
        max_bytes=args.max_bytes,
    )
    progress = Progress(verbose=args.verbose, quiet=args.quiet)
    reports = dict(
        memory_report=args.memory_report, memory_plot=args.memory_plot, input_shapes=shapes,
        progress=progress.stage,
    )
    try:
        out = Path(args.output)
        if args.cmd == "compile":
            if out.suffix != ".c":
                raise MlvmError(f"{out}: error: the output of compile must end in .c")
            write_c(args.input, out, args.params, options, **reports,
                    external_params=args.external_params)
        else:
            if out.suffix != ".so":
                raise MlvmError(f"{out}: error: the output of build must end in .so")
            with tempfile.TemporaryDirectory() as tmp:
                c_path = (out if args.keep_c else Path(tmp) / out.name).with_suffix(".c")
                write_c(args.input, c_path, args.params, options, **reports, blob=True,
                        external_params=args.external_params)
                build_shared(c_path, out, on_runtime_build=progress.note, asm=blob_paths(c_path)[1],
                             comm=args.comm)
                progress.stage("cc")
    except MlvmError as e:
        return _fail("mlvm-aot", e)
    except OSError as e:  # unwritable output
        return _fail("mlvm-aot", MlvmError(f"{e.filename or ''}: error: {e.strerror or e}"))
    return 0


AOT_EXAMPLES = """\
examples:
  mlvm-aot compile model.mlir -o model.c --params w.npz   # model.c + model.h
  mlvm-aot build model.onnx -o model.so                   # then mlvm.load("model.so")
  mlvm-aot import model.onnx -o model.mlir --params-out w.npz
  mlvm-aot compile model.onnx -o model.c --input-shape x=1x3x224x224
  mlvm-aot verify model.onnx                              # against onnxruntime
  mlvm-aot runtime --emit rt/                             # the C runtime's sources
"""


class Progress:
    """One line per stage with its time, on a terminal once a build passes a
    second (always with --verbose, never with --quiet or when piped)."""

    def __init__(self, verbose: bool = False, quiet: bool = False) -> None:
        self.start = self.last = time.monotonic()
        self.show = verbose or (not quiet and sys.stderr.isatty())
        self.always = verbose and not quiet
        self.pending: list[str] = []

    def stage(self, name: str) -> None:
        now = time.monotonic()
        line = f"mlvm-aot: {name}: {now - self.last:.2f} s"
        self.last = now
        self._emit(line, now)

    def note(self, text: str) -> None:
        self._emit(f"mlvm-aot: {text}", time.monotonic())

    def _emit(self, line: str, now: float) -> None:
        if not self.show:
            return
        self.pending.append(line)
        if self.always or now - self.start > 1.0:
            print("\n".join(self.pending), file=sys.stderr, flush=True)
            self.pending.clear()


def _version() -> str:
    from mlvm import __version__

    return __version__


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


class _AllPasses(argparse.Action):
    """`--all-passes`: every registered pass, mlvm's first, then exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="list every pass (mlvm's and xDSL's) and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from mlvm.passes import ALL_PASSES

        print("mlvm passes:", ", ".join(ALL_PASSES))
        names = [n for n in getattr(parser, "_mlvm_all_passes", []) if n not in ALL_PASSES]
        print("xDSL passes:", ", ".join(sorted(names)))
        parser.exit()


class MlvmOptMain(xDSLOptMain):
    version_format = "mlvm-opt " + _version() + " (xDSL {xdsl_version})"

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        from mlvm.passes import ALL_PASSES

        for action in arg_parser._actions:
            if action.dest == "passes":  # xDSL lists ~150 of its own: show mlvm's
                action.help = (f"comma-separated passes; mlvm's: {', '.join(ALL_PASSES)} "
                               "(--all-passes lists xDSL's too)")
            if action.dest == "target":
                action.help = "output: mlir (default), c (the generated C, with --params for weights)"
        arg_parser._mlvm_all_passes = list(self.available_passes)  # type: ignore[attr-defined]
        arg_parser.add_argument("--all-passes", action=_AllPasses)
        arg_parser.add_argument("--params", metavar="W.npz",
                                help="parameter archive for mlvm.param (with -t c)")

    def _emit_c(self, module: ModuleOp, output: IO[str]) -> None:
        """`-t c`: the generated C as one file, its header in place of the
        #include, with the weights of --params."""
        from mlvm.codegen.emitter import emit_c
        from mlvm.pipeline import load_params, merge_params

        params = merge_params(self._own_params, load_params(self.args.params), self.get_input_name())
        emitted = emit_c(module, "module", params, self.get_input_name())
        c_text, h_text = emitted.c, emitted.h
        output.write(c_text.replace('#include "module.h"\n', h_text, 1))

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
        self.available_targets["c"] = self._emit_c

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

        def parse_onnx(io: IO[bytes]) -> ModuleOp:
            # the importer reads the file itself (sizes checked before
            # anything is allocated, external data beside it)
            from mlvm.pipeline import load_source

            io.close()
            module, _, self._own_params = load_source(self.get_input_name())
            return module

        self.available_frontends["onnx"] = parse_onnx

    # an ONNX model's initializers, for -t c
    _own_params: dict[str, Any] = {}

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        try:
            return super().prepare_input()
        except ValueError as e:  # an input of no known kind
            exts = ", ".join(f".{k}" for k in sorted(self.available_frontends))
            raise MlvmError(f"{self.get_input_name()}: error: {e} (mlvm-opt reads {exts})") from None

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
