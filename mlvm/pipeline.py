"""From MLIR text (or a ModuleOp) to C: parse, verify, plan, emit."""

from __future__ import annotations

import json
import math
import re
import warnings
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, IntegerAttr, ModuleOp
from xdsl.dialects.func import Func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mlvm.analysis.memory_report import module_report, summary_lines, write_plot
from mlvm.codegen.emitter import EmittedC, blob_names, emit_c
from mlvm.codegen.params_file import write_params_file
from mlvm.codegen.names import c_comment, c_ident
from mlvm.diagnostics import (
    MAX_TENSOR_BYTES,
    MlvmError,
    op_error,
    parse_module,
    read_source,
    verify_module,
)
from mlvm.dialect.elements import elem_for_dtype
from mlvm.dialect import Mlvm
from mlvm.passes.canonicalize import CanonicalizePass
from mlvm.passes.fuse import FusePass
from mlvm.passes.fuse_gelu import FuseGeluPass
from mlvm.passes.fuse_qdq import FuseQdqPass
from mlvm.passes.qmatmul_conv import QMatmulConvPass
from mlvm.passes.bucket_collectives import BucketCollectivesPass
from mlvm.passes.inplace import InplacePass
from mlvm.passes.pack_weights import PackWeightsPass
from mlvm.passes.plan_memory import PlanMemoryPass
from mlvm.passes.sink_constants import SinkConstantsPass


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
    pack_weights: bool = True  # weights stored in the layout their kernel reads
    bucket_collectives: bool = True  # consecutive all-reduces as one (mlvm-bucket-collectives)
    fuse_qdq: bool = True  # QDQ-form int8 convs / matmuls computed in integers (mlvm-fuse-qdq)
    fuse_gelu: bool = True  # GELU's erf form spelt out as five ops -> one mlvm.gelu (mlvm-fuse-gelu)
    qmatmul_conv: bool = True  # int8 matmuls on the int8 convolution kernels (mlvm-qmatmul-conv)
    static_arena: bool = False  # emit the arena as a static buffer
    # Kernel scratch in the arena (conv2d copies its input padded, and reads
    # every tap in place): faster on hosts, more RAM.
    workspaces: bool = True
    # 3x3 stride-1 convolutions by Winograd's minimal filtering where it pays
    # (with workspaces): faster, with larger workspaces and weights.
    winograd: bool = True
    comm: str = "shm"  # the runtime's communicator for collectives: shm, or mpi (mpicc)
    # Largest tensor, arena or constant data a module may need; larger ones
    # are refused before anything is allocated or emitted.
    max_bytes: int = MAX_TENSOR_BYTES

    def passes(self) -> list[ModulePass]:
        out: list[ModulePass] = []
        if self.bucket_collectives:
            out.append(BucketCollectivesPass())
        if self.fuse_qdq:
            out.append(FuseQdqPass())
        if self.qmatmul_conv:
            out.append(QMatmulConvPass())
        if self.canonicalize:
            out.append(CanonicalizePass())
        if self.fuse_gelu:
            out.append(FuseGeluPass())
        if self.pack_weights:
            out.append(PackWeightsPass(workspaces=self.workspaces, winograd=self.winograd))
        out.append(SinkConstantsPass())
        if self.fuse:
            out.append(FusePass())
        if self.inplace:
            out.append(InplacePass())
        out.append(PlanMemoryPass(alignment=self.alignment, workspaces=self.workspaces))
        return out


def load_params(
    path: str | Path | None, max_bytes: int = MAX_TENSOR_BYTES
) -> dict[str, np.ndarray]:
    """Arrays of a parameter archive (.npz or .safetensors); errors name the file.

    The archive is untrusted: every member's header is read and checked
    (a plain array, no pickled objects, a size that matches the member and
    the limit) before numpy allocates anything for it.
    """
    if path is None:
        return {}
    p = Path(path)
    if not p.is_file():
        raise MlvmError(f"{p}: error: parameter archive not found")
    if p.suffix == ".safetensors":
        return _load_safetensors(p, max_bytes)
    try:
        with warnings.catch_warnings():  # numpy's notes on old headers are not errors
            warnings.simplefilter("ignore")
            with zipfile.ZipFile(p) as zf:
                total = 0
                for info in zf.infolist():
                    total += _check_member(p, zf, info, max_bytes)
                    if total > max_bytes:
                        raise MlvmError(
                            f"{p}: error: the arrays need more than the limit of {max_bytes} bytes"
                        )
            with np.load(p, allow_pickle=False) as npz:
                return check_params({k: npz[k] for k in npz.files}, str(p))
    except MlvmError:
        raise
    except Exception as e:  # noqa: BLE001 - the archive is untrusted: any failure is its fault

        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MlvmError(f"{p}: error: not a readable .npz archive ({why})") from None


def _load_safetensors(p: Path, max_bytes: int) -> dict[str, np.ndarray]:
    """A safetensors file, read by the `safetensors` package (a JSON header
    and raw little-endian data: nothing in it runs). Every tensor lies inside
    the file, so its size bounds what is allocated: it is checked first."""
    if p.stat().st_size > max_bytes:
        raise MlvmError(f"{p}: error: the arrays need more than the limit of {max_bytes} bytes")
    try:
        from safetensors.numpy import load_file
    except ImportError:
        raise MlvmError(
            f"{p}: error: reading .safetensors needs the safetensors package "
            "(pip install 'mlvm[safetensors]')"
        ) from None
    try:
        arrays = load_file(str(p))
    except Exception as e:  # noqa: BLE001 - untrusted file: any failure is its fault
        why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise MlvmError(f"{p}: error: not a readable .safetensors file ({why})") from None
    return check_params(arrays, str(p))


def _check_member(p: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, max_bytes: int) -> int:
    """Bytes of one `.npy` member after checking its header; MlvmError if it is unfit."""
    name = info.filename
    if not name.endswith(".npy"):
        raise MlvmError(f"{p}: error: member '{name}' is not a .npy array")
    if info.file_size > max_bytes + 65536:
        raise MlvmError(f"{p}: error: array '{name[:-4]}' is larger than the limit of {max_bytes} bytes")
    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise MlvmError(f"{p}: error: array '{name[:-4]}' has .npy version {version}")
        header_end = fh.tell()
    if dtype.hasobject:
        raise MlvmError(f"{p}: error: array '{name[:-4]}' holds Python objects")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes != info.file_size - header_end:
        raise MlvmError(
            f"{p}: error: array '{name[:-4]}' declares {nbytes} bytes of data but the "
            f"archive holds {info.file_size - header_end}"
        )
    return nbytes


def check_params(params: Mapping[Any, Any], source: str = "params") -> dict[str, np.ndarray]:
    """Parameters given as a dict: string names, numeric arrays."""
    out: dict[str, np.ndarray] = {}
    for k, v in params.items():
        if not isinstance(k, str):
            raise MlvmError(f"{source}: error: parameter names must be strings, got {k!r}")
        if not isinstance(v, np.ndarray):
            raise MlvmError(
                f"{source}: error: parameter '{k}' must be a numpy array, got {type(v).__name__}"
            )
        if v.dtype.hasobject or elem_for_dtype(v.dtype) is None:  # bf16 (ml_dtypes) included
            raise MlvmError(f"{source}: error: parameter '{k}' has unsupported dtype {v.dtype}")
        out[k] = v
    return out


def parse_file(path: str | Path, max_bytes: int = MAX_TENSOR_BYTES) -> tuple[ModuleOp, str]:
    text = read_source(path)
    name = str(path)
    module = parse_module(make_context(), text, name)
    verify_module(module, name, max_bytes)
    return module, name


InputShapes = Mapping[str, Sequence[int]]


def load_source(
    path: str | Path,
    options: CompileOptions | None = None,
    input_shapes: InputShapes | None = None,
) -> tuple[ModuleOp, str, dict[str, np.ndarray]]:
    """A verified module from `.mlir` text or an `.onnx` model, with the
    parameters the file itself carries (an ONNX model's initializers)."""
    options = options or CompileOptions()
    if Path(path).suffix.lower() != ".onnx":
        if input_shapes:
            raise MlvmError(f"{path}: error: input shapes are given only for .onnx models")
        module, name = parse_file(path, options.max_bytes)
        return module, name, {}
    try:
        from mlvm.frontend.onnx import import_onnx
    except ImportError:
        raise MlvmError(
            f"{path}: error: reading ONNX needs the onnx package (pip install 'mlvm[onnx]')"
        ) from None
    name = str(path)
    module, params = import_onnx(path, input_shapes, options.max_bytes)
    verify_module(module, name, options.max_bytes)
    return module, name, params


def merge_params(
    own: dict[str, np.ndarray], given: dict[str, np.ndarray], source: str
) -> dict[str, np.ndarray]:
    """A model's own parameters and those of `--params`; a name in both is an error."""
    both = sorted(set(own) & set(given))
    if both:
        raise MlvmError(
            f"{source}: error: parameter '{both[0]}' is both in the model and in --params"
        )
    return {**own, **given}


def lower(module: ModuleOp, options: CompileOptions, source: str) -> None:
    """The pass pipeline between the verified dialect and C emission."""
    ctx = make_context()
    try:
        for p in options.passes():
            p.apply(ctx, module)
    except DiagnosticException as e:
        raise MlvmError(f"{source}: error: {_one_line(str(e))}") from None
    for f in module.ops:
        arena = f.attributes.get("mlvm.arena_bytes")
        if isinstance(arena, IntegerAttr) and arena.value.data > options.max_bytes:
            raise op_error(
                f, f"the arena needs {arena.value.data} bytes, more than the limit of "
                f"{options.max_bytes}", source,
            )


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text


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
    return emit(module, c_path, params, source, options)


def emit(
    module: ModuleOp,
    c_path: Path,
    params: Mapping[str, np.ndarray],
    source: str,
    options: CompileOptions,
    external_params: Path | None = None,
) -> tuple[str, str]:
    """(C source, header) of a lowered module, for `c_path`; with
    `external_params`, the weights are written to that parameter file."""
    out = _emit(module, c_path, params, source, options, external_params, blob=False)
    return out.c, out.h


def _emit(
    module: ModuleOp,
    c_path: Path,
    params: Mapping[str, np.ndarray],
    source: str,
    options: CompileOptions,
    external_params: Path | None,
    blob: bool,
    stack: bool = True,
) -> EmittedC:
    """emit_c for `c_path`, and the parameter file when one is asked for
    (its name checked before anything is emitted)."""
    if external_params is not None and external_params.suffix != ".mlvmp":
        raise MlvmError(f"{external_params}: error: a parameter file must end in .mlvmp")
    out = emit_c(module, c_path.stem, params, source, header_name(c_path),
                 static_arena=options.static_arena, blob=blob,
                 external_params=external_params is not None, stack=stack)
    if external_params is not None:
        assert out.params is not None
        external_params.parent.mkdir(parents=True, exist_ok=True)
        write_params_file(external_params, out.params)
    return out


def blob_paths(c_path: Path) -> tuple[Path, Path]:
    """Where a host build of OUT.c keeps its weights: (blob, assembler source)."""
    blob, asm = blob_names(c_ident(c_path.stem, "m"))
    return c_path.parent / blob, c_path.parent / asm


def write_with_blob(
    module: ModuleOp,
    c_path: Path,
    params: Mapping[str, np.ndarray],
    source: str,
    options: CompileOptions,
    external_params: Path | None = None,
    stack: bool = True,
) -> Path:
    """Write OUT.c, OUT.h and the weights (blob and assembler source, see
    `blob_paths`) of a lowered module, for a host build; returns the
    assembler source. `stack`: as emit_c's."""
    out = _emit(module, c_path, params, source, options, external_params, blob=True, stack=stack)
    assert out.asm is not None and out.blob is not None
    blob, asm = blob_paths(c_path)
    c_path.parent.mkdir(parents=True, exist_ok=True)
    out.write_c(c_path)
    c_path.with_suffix(".h").write_text(out.h)
    blob.write_bytes(out.blob)
    asm.write_text(out.asm)
    return asm


def write_c(
    src: str | Path,
    c_path: str | Path,
    params_path: str | Path | None = None,
    options: CompileOptions | None = None,
    memory_report: str | Path | None = None,
    memory_plot: str | Path | None = None,
    input_shapes: InputShapes | None = None,
    progress: Callable[[str], None] | None = None,
    blob: bool = False,
    external_params: str | Path | None = None,
) -> tuple[Path, Path]:
    """`mlvm-aot compile`: write OUT.c and OUT.h (and the memory report/plot);
    `progress` is told when each stage ends. `blob` (for `mlvm-aot build`)
    puts the weights in `<mod>.weights.bin` and `.s` beside OUT.c;
    `external_params` writes the weights of `mlvm.param` to that parameter
    file (.mlvmp) instead of the code."""
    options = options or CompileOptions()
    stage = progress or (lambda name: None)
    module, name, own = load_source(src, options, input_shapes)
    params = merge_params(own, load_params(params_path, options.max_bytes), name)
    stage("import" if Path(src).suffix.lower() == ".onnx" else "parse and verify")
    c_path = Path(c_path)
    lower(module, options, name)
    stage("passes")
    h_path = c_path.with_suffix(".h")
    ext = Path(external_params) if external_params is not None else None
    if blob:
        write_with_blob(module, c_path, params, name, options, ext)
    else:
        out = _emit(module, c_path, params, name, options, ext, blob=False)
        c_path.parent.mkdir(parents=True, exist_ok=True)
        out.write_c(c_path)
        h_path.write_text(out.h)
    stage("C emission")
    if memory_report is not None or memory_plot is not None:
        report = module_report(module)
        for line in summary_lines(report):
            print(line)
        if memory_report is not None:
            Path(memory_report).write_text(json.dumps(report, indent=2) + "\n")
        if memory_plot is not None:
            write_plot(report, memory_plot)
    return c_path, h_path


def write_import(
    src: str | Path,
    mlir_path: str | Path,
    params_out: str | Path | None,
    input_shapes: InputShapes | None = None,
    max_bytes: int = MAX_TENSOR_BYTES,
) -> None:
    """`mlvm-aot import`: an ONNX model as dialect text and a parameter archive."""
    if Path(src).suffix.lower() != ".onnx":
        raise MlvmError(f"{src}: error: import reads .onnx models")
    module, name, params = load_source(src, CompileOptions(max_bytes=max_bytes), input_shapes)
    if params and params_out is None:
        raise MlvmError(
            f"{src}: error: the model has {len(params)} weight tensors: give --params-out W.npz"
        )
    weights = c_comment(Path(params_out).name) if params_out is not None else "(none)"
    header = f"// Imported by mlvm from {c_comment(Path(src).name)}; weights in {weights}.\n"
    Path(mlir_path).write_text(header + str(module) + "\n")
    if params_out is not None:
        save_params(params_out, params)


def save_params(path: str | Path, params: Mapping[str, np.ndarray]) -> None:
    """An .npz archive that `load_params` reads back (any parameter name)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in params.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(arr), allow_pickle=False)
