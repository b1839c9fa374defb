"""Render a planned mlvm module as `<name>.c` + `<name>.h`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jinja2
import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Operation, SSAValue

from mlvm.analysis.storage import FunctionStorage, analyze, nbytes
from mlvm.codegen.lowering import C_TYPES, Lowering, StaticTable, elem, state_expr
from mlvm.codegen.params_file import param_key
from mlvm.codegen.stack import stack_lines
from mlvm.codegen.names import NameClash, Symbols, c_comment, c_ident, c_string, unique
from mlvm.diagnostics import op_error, tensor_bytes
from mlvm.dialect.base import MlvmOp, elem_name, type_str
from mlvm.dialect.control import CallCOp, QueueOp
from mlvm.dialect.elements import ELEMS, elem_for_dtype, to_bytes
from mlvm.dialect.nn import own_loop_epilogues, taps_convs
from mlvm.dialect.ops import ConstantOp, ParamOp, rows_narrow
from mlvm.dialect.state import GlobalAccessOp, GlobalOp
from mlvm.passes.plan_memory import PlanMemoryPass

DTYPE_ENUM = {n: e.enum for n, e in ELEMS.items()}
NP_DTYPES = {n: e.dtype for n, e in ELEMS.items()}


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("mlvm.codegen", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )


def _elem(v: SSAValue) -> str:
    return elem(v).name


def _words(arr: np.ndarray) -> str:
    """32-bit words of `arr` as hex, 8 per line: the exact bits, no rounding.

    Built with numpy, not one format call per word: a ResNet-50 has 25 M.
    """
    words = np.ascontiguousarray(arr).reshape(-1).view("<u4")
    n = words.size
    if n == 0:
        return ""
    digits = np.frombuffer(words.astype(">u4").tobytes().hex().encode(), dtype="S1")
    cells = np.empty((n, 13), dtype="S1")  # "0x" 8 digits "u" "," " " (or "\n" + indent)
    cells[:, 0], cells[:, 1] = b"0", b"x"
    cells[:, 2:10] = digits.reshape(n, 8)
    cells[:, 10], cells[:, 11], cells[:, 12] = b"u", b",", b" "
    text = cells.tobytes()
    # Lines of 8 words, each indented by four spaces; no separator after the last.
    line = 8 * 13
    rows = [text[i : i + line - 1] for i in range(0, len(text), line)]
    return "    " + "\n    ".join(r.decode() for r in rows).rstrip(", ")


def exported_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and (op.sym_visibility is None or op.sym_visibility.data == "public")
    ]


BLOB_ALIGN = 64


# Stands for a weight's words in the rendered C until it is written out
# (`EmittedC.write_c`): no C text the emitter writes contains a NUL byte.
_DATA_MARK = "\0mlvm-data {}\0"
_DATA_SPLIT = re.compile("\0mlvm-data (\\d+)\0")


@dataclass
class _Data:
    name: str
    n: int
    raw: bytes = b""  # the words (empty in the blob)
    in_blob: bool = False
    index: int = 0

    @property
    def words(self) -> str:
        """Where the template puts the C initializer: a mark, replaced by the
        hex words only when the C is written (a ResNet-50's are 300 MB)."""
        return _DATA_MARK.format(self.index)


@dataclass
class _Tensor:
    literal: str
    dtype: str
    rank: int
    dims: list[int]
    dims_name: str
    dims_ref: str


@dataclass
class _Function:
    name_literal: str
    cname: str
    macro: str
    doc: str
    arena_bytes: int
    params: list[str] = field(default_factory=list[str])
    entry_args: list[str] = field(default_factory=list[str])
    body: list[str] = field(default_factory=list[str])
    inputs: list[_Tensor] = field(default_factory=list[_Tensor])
    outputs: list[_Tensor] = field(default_factory=list[_Tensor])
    suspends: bool = False  # has suspension points: body lives in _resume
    needs_instance: bool = False  # calls imports, uses queues or state
    uses_state: bool = False  # reads or writes globals: begin checks the state
    uses_params: bool = False  # reads external parameters: begin checks them
    uses_comm: bool = False  # collectives or rank: begin checks the communicator
    coll: bool = False  # has collectives that wait: the call state keeps their progress
    entry_params: list[str] = field(default_factory=list[str])  # of the one-shot
    points: int = 0
    begin_params: list[str] = field(default_factory=list[str])
    call_args: list[str] = field(default_factory=list[str])
    arg_names: list[str] = field(default_factory=list[str])
    void_args: str = ""  # "(void)in_x; ..." for the one-shot entry
    arg_decls: list[str] = field(default_factory=list[str])
    struct_fields: list[str] = field(default_factory=list[str])

    @property
    def tensors(self) -> list[_Tensor]:
        return self.inputs + self.outputs

    @property
    def one_shot(self) -> bool:
        """Has a typed one-shot entry: it cannot wait on imports or queues."""
        return not (self.needs_instance and self.suspends)

    @property
    def takes_instance(self) -> bool:
        """The one-shot entry takes the instance first (for its state or its
        external parameters)."""
        return (self.uses_state or self.uses_params or self.uses_comm) and not self.suspends


@dataclass
class _Import:
    literal: str
    cname: str
    args: list[_Tensor]
    results: list[_Tensor]
    signature: tuple[object, ...]


@dataclass
class _Queue:
    literal: str
    elem: _Tensor
    type: object


@dataclass
class _Global:
    tensor: _Tensor
    offset: int
    size: int
    init: str  # C expression of the initial bytes, or NULL for zeros


class ModuleEmitter:
    def __init__(
        self,
        module: ModuleOp,
        name: str,
        params: Mapping[str, np.ndarray],
        source: str,
        header: str,
        static_arena: bool = False,
        blob: bool = False,
        external: bool = False,
    ) -> None:
        self.header = header
        # Weights in a parameter file bound to the instance (params.h), not
        # in the code: (key, array, descriptor) in slot order.
        self.external = external
        self.ext_params: dict[str, tuple[int, np.ndarray, _Tensor]] = {}
        self.static_arena = static_arena
        # Weights as a binary blob beside the C (linked by an assembler
        # .incbin) rather than hex text the C compiler has to parse.
        self.blob = blob
        self._blob: list[bytes] = []
        self._blob_size = 0
        self._blob_syms: list[tuple[str, int, int]] = []
        self.module = module
        self.mod = c_ident(name, "m")
        self.params = params
        self.source = source
        self.statics = StaticTable(f"{self.mod}__s")
        self.data: list[_Data] = []
        self._data_by_key: dict[object, str] = {}
        self.symbols = Symbols()
        self.imports: dict[str, _Import] = {}
        self.queues: dict[str, _Queue] = {}
        self.globals: dict[str, _Global] = {}
        self._narrow_rows: bool | None = None
        self._own_loops: bool | None = None
        self._taps_convs: bool | None = None

    # -- imports and queues (the Lowering's Tables) ------------------------
    def import_index(self, op: Operation) -> int:
        assert isinstance(op, CallCOp)
        name = op.callee.data
        self._check_string(op, "native function", name)
        sig = op.signature()
        imp = self.imports.get(name)
        if imp is None:
            i = len(self.imports)
            cname = f"{self.mod}__imp{i}"
            imp = _Import(
                c_string(name),
                cname,
                [self._tensor(c_string(f"arg{k}"), t, f"{cname}_a{k}_dims") for k, t in enumerate(sig[0])],
                [self._tensor(c_string(f"result{k}"), t, f"{cname}_r{k}_dims") for k, t in enumerate(sig[1])],
                sig,
            )
            self.imports[name] = imp
        elif imp.signature != sig:
            raise op_error(
                op, f"native function '{name}' is called with two different signatures",
                self.source,
            )
        return list(self.imports).index(name)

    def queue_index(self, op: Operation) -> int:
        assert isinstance(op, QueueOp)
        name = op.queue.data
        self._check_string(op, "queue", name)
        t = op.element()
        q = self.queues.get(name)
        if q is None:
            q = _Queue(c_string(name), self._tensor(c_string(name), t, f"{self.mod}__q{len(self.queues)}_dims"), t)
            self.queues[name] = q
        elif q.type != t:
            raise op_error(
                op, f"queue '{name}' is used with elements {type_str(q.type)} and "  # type: ignore[arg-type]
                f"{type_str(t)}", self.source,
            )
        return list(self.queues).index(name)

    def global_offset(self, op: Operation) -> int:
        assert isinstance(op, GlobalAccessOp)
        return self.globals[op.global_.string_value()].offset

    def own_loops(self) -> bool:
        if self._own_loops is None:
            self._own_loops = own_loop_epilogues(self.module)
        return self._own_loops

    def taps_convs(self) -> bool:
        if self._taps_convs is None:
            self._taps_convs = taps_convs(self.module)
        return self._taps_convs

    def narrow_rows(self) -> bool:
        if self._narrow_rows is None:
            self._narrow_rows = self.own_loops() and rows_narrow(self.module)
        return self._narrow_rows

    def _layout_globals(self) -> int:
        """Each global's offset in the state (64-byte aligned); the state's size."""
        size = 0
        for op in self.module.ops:
            if not isinstance(op, GlobalOp):
                continue
            name = op.sym_name.data
            self._check_string(op, "global", name)
            t = op.tensor_type()
            nb = max(tensor_bytes(t), 1)
            init = "NULL" if op.init is None else f"{self._global_init(op)}.u"
            cname = f"{self.mod}__g{len(self.globals)}_dims"
            self.globals[name] = _Global(self._tensor(c_string(name), t, cname), size, nb, init)
            size += -(-nb // BLOB_ALIGN) * BLOB_ALIGN
        return size

    def _global_init(self, op: GlobalOp) -> str:
        assert op.init is not None
        pname = op.init.data
        arr = self.params.get(pname)
        t = op.tensor_type()
        if arr is None:
            raise op_error(op, f"parameter '{pname}' (the initial value of @{op.sym_name.data}) "
                           "is not in the parameter archive", self.source)
        arr = np.asarray(arr)
        e = elem_name(t.element_type)
        assert e is not None
        if tuple(arr.shape) != tuple(t.get_shape()) or arr.dtype != NP_DTYPES[e]:
            raise op_error(
                op, f"parameter '{pname}' is {arr.dtype} {tuple(arr.shape)} in the archive but "
                f"@{op.sym_name.data} is {type_str(t)}", self.source,
            )
        return self._add_data(("param", pname, None), lambda: arr)

    def _check_string(self, op: Operation, what: str, name: str) -> None:
        """Names a loader finds by C string: no NUL (it would cut the name short)."""
        if "\0" in name or not name:
            raise op_error(op, f"{what} name {name!r} must be non-empty and have no NUL", self.source)

    def _claim(self, op: Operation, owner: str, *cnames: str) -> None:
        try:
            for c in cnames:
                self.symbols.claim(c, owner)
        except NameClash as e:
            raise op_error(op, str(e), self.source) from None

    # -- data ------------------------------------------------------------
    def _param_array(self, op: ParamOp) -> np.ndarray:
        pname = op.param_name.data
        elem = _elem(op.result)
        arr = self.params.get(pname)
        if arr is None:
            raise op_error(op, f"parameter '{pname}' is not in the parameter archive", self.source)
        arr = np.asarray(arr)
        perm = op.permutation()
        if tuple(arr.shape) != op.array_shape():
            declared = type_str(op.result.type)
            if op.view_shape() is not None:
                declared = f"view {list(op.view_shape() or ())} of {declared}"
            if perm is not None:
                declared += f" transposed by perm {list(perm)}"
            if op.panels() is not None:
                declared += f" in panels {list(op.panels() or ())}"
            if op.lane_dims() is not None:
                declared += f" in lanes {list(op.lane_dims() or ())}"
            if op.wino_dims() is not None:
                declared += " transformed for Winograd"
            raise op_error(
                op,
                f"parameter '{pname}' has shape {tuple(arr.shape)} in the archive but "
                f"the op declares {declared}",
                self.source,
            )
        if arr.dtype != NP_DTYPES[elem]:
            raise op_error(
                op,
                f"parameter '{pname}' has dtype {arr.dtype} in the archive but the op "
                f"declares {elem} ({NP_DTYPES[elem]})",
                self.source,
            )
        return op.stored(arr)

    def data_of(self, v: SSAValue) -> np.ndarray | None:
        """v's value where the compiler knows it: a constant's, or a
        parameter's (as stored) unless parameters are read at run time."""
        owner = v.owner
        if isinstance(owner, ParamOp):
            return None if self.external else self._param_array(owner)
        if isinstance(owner, ConstantOp):
            return np.asarray(owner.reference([], self.params)[0])
        return None

    def _data_name(self, op: MlvmOp) -> str:
        if isinstance(op, ParamOp):
            key: object = ("param", op.param_name.data, *op.layout_key())
            get = lambda: self._param_array(op)  # noqa: E731
        else:
            key = op
            get = lambda: op.reference([], self.params)[0]  # noqa: E731
        return self._add_data(key, get)

    def _ext_slot(self, op: ParamOp) -> int:
        """The slot of a weight read from the parameter file."""
        key = param_key(op.param_name.data, op.permutation(), op.panels(), op.lane_dims(),
                        op.wino_dims(), op.wino_panels(), op.view_shape())
        entry = self.ext_params.get(key)
        if entry is None:
            k = len(self.ext_params)
            t = self._tensor(c_string(key), op.result.type, f"{self.mod}__p{k}_dims")
            entry = (k, self._param_array(op), t)
            self.ext_params[key] = entry
        return entry[0]

    def params_entries(self) -> list[tuple[str, np.ndarray]]:
        """(key, array) of every weight in the parameter file, in slot order."""
        return [(key, arr) for key, (_, arr, _) in self.ext_params.items()]

    def _add_data(self, key: object, get: Callable[[], np.ndarray]) -> str:
        name = self._data_by_key.get(key)
        if name is None:
            arr = get()
            name = f"{self.mod}__d{len(self.data)}"
            e = elem_for_dtype(arr.dtype)
            assert e is not None
            raw = to_bytes(e, arr)
            raw += bytes(-len(raw) % 4)  # whole 32-bit words
            words = max(1, len(raw) // 4)
            if self.blob:
                self._add_blob(name, raw or bytes(4))
                self.data.append(_Data(name, words, in_blob=True, index=len(self.data)))
            else:
                self.data.append(_Data(name, words, raw, index=len(self.data)))
            self._data_by_key[key] = name
        return name

    def _add_blob(self, name: str, data: bytes) -> None:
        pad = -self._blob_size % BLOB_ALIGN
        if pad:
            self._blob.append(bytes(pad))
            self._blob_size += pad
        self._blob_syms.append((name, self._blob_size, len(data)))
        self._blob.append(data)
        self._blob_size += len(data)

    def blob_files(self) -> tuple[str, bytes]:
        """(assembler source, blob bytes): each weight a hidden symbol at its
        64-byte aligned offset in `<mod>.weights.bin` (found through the
        assembler's include path: no path is written into the source)."""
        lines = [f"/* Generated by mlvm: the weights of {c_comment(self.mod)}, bit-exact. */",
                 '\t.section .rodata.mlvm_weights,"a"']
        for name, off, size in self._blob_syms:
            lines += [f"\t.balign {BLOB_ALIGN}", f"\t.globl {name}", f"\t.hidden {name}",
                      f"\t.type {name}, %object", f"\t.size {name}, {size}", f"{name}:",
                      f'\t.incbin "{blob_names(self.mod)[0]}", {off}, {size}']
        lines.append('\t.section .note.GNU-stack,"",%progbits')
        return "\n".join(lines) + "\n", b"".join(self._blob)

    # -- functions ---------------------------------------------------------
    def _tensor(self, literal: str, v_type: object, dims_name: str) -> _Tensor:
        assert isinstance(v_type, TensorType)
        e = elem_name(v_type.element_type)
        assert e is not None
        dims = list(v_type.get_shape())
        return _Tensor(
            literal, DTYPE_ENUM[e], len(dims), dims, dims_name, dims_name if dims else "NULL"
        )

    def _check_body(self, f: func.FuncOp) -> None:
        if len(f.body.blocks) != 1:
            raise op_error(f, "functions must have exactly one block", self.source)
        for op in f.body.block.ops:
            if not isinstance(op, MlvmOp | func.ReturnOp):
                raise op_error(op, "this op cannot be compiled to C (only mlvm ops and func.return)", self.source)
        for t in [*f.function_type.inputs.data, *f.function_type.outputs.data]:
            if not isinstance(t, TensorType) or elem_name(t.element_type) is None:
                raise op_error(
                    f, f"function @{f.sym_name.data} has a {t} argument or result; "
                    "only f32 / i32 tensors are supported", self.source
                )

    def _function(self, f: func.FuncOp) -> _Function:
        self._check_body(f)
        if "mlvm.arena_bytes" not in f.attributes:
            PlanMemoryPass().apply(Context(), self.module)
        fname = f.sym_name.data
        self._check_string(f, "function", fname)
        cname = f"{self.mod}_{c_ident(fname, 'f')}"
        # Every file-scope name the templates derive from this function.
        self._claim(
            f, f"function @{fname}", cname,
            *(cname + s for s in (
                "_begin", "_resume", "_call", "_call_t", "_ARENA_BYTES", "_CALL_BYTES",
                "__entry", "__begin", "__resume", "__inputs", "__outputs",
            )),
            *(f"{cname}__in{i}_dims" for i in range(len(f.function_type.inputs.data))),
            *(f"{cname}__out{j}_dims" for j in range(len(f.function_type.outputs.data))),
        )
        arena_attr = f.attributes["mlvm.arena_bytes"]
        assert isinstance(arena_attr, IntegerAttr)
        out = _Function(
            c_string(fname),
            cname,
            cname.upper(),
            c_comment(
                f"@{fname}: " + ", ".join(type_str(t) for t in f.function_type.inputs.data)
                + " -> " + ", ".join(type_str(t) for t in f.function_type.outputs.data)
            ),
            int(arena_attr.value.data),
        )
        block = f.body.block
        fs = analyze(f)
        taken = {"arena_", "arena", "inputs", "outputs"}
        in_names: list[str] = []
        for i, arg in enumerate(block.args):
            hint = arg.name_hint or f"{i}"
            pname = unique(f"in_{c_ident(hint, 'v')}", taken)
            in_names.append(pname)
            e = _elem(arg)
            out.params.append(f"const {C_TYPES[e]} *{pname}")
            out.entry_args.append(f"(const {C_TYPES[e]} *)inputs[{i}]")
            out.inputs.append(self._tensor(c_string(hint), arg.type, f"{cname}__in{i}_dims"))
        out.params.insert(0, "void *arena_")
        out.entry_args.insert(0, "arena")
        ret = block.last_op
        assert isinstance(ret, func.ReturnOp)
        for j, v in enumerate(ret.operands):
            e = _elem(v)
            out.params.append(f"{C_TYPES[e]} *out{j}")
            out.entry_args.append(f"({C_TYPES[e]} *)outputs[{j}]")
            out.outputs.append(self._tensor(c_string(f"out{j}"), v.type, f"{cname}__out{j}_dims"))

        cg = Lowering(self.statics, lambda v: self._ptr(fs, v, in_names), self, self.source)
        for op in block.ops:
            if isinstance(op, MlvmOp) and not op.IS_DATA:
                op.lower(cg)
        for j, v in enumerate(ret.operands):
            st = fs.of(v)
            if st.kind == "output" and st.index == j:
                continue
            cg.stmt(f"mlvm_copy({nbytes(v)}, {self._ptr(fs, v, in_names)}, out{j});")
        out.body = cg.lines
        mlvm_ops = [op for op in block.ops if isinstance(op, MlvmOp)]
        out.suspends = any(op.SUSPENDS for op in mlvm_ops)
        out.needs_instance = any(op.NEEDS_INSTANCE for op in mlvm_ops)
        out.uses_state = any(op.USES_STATE for op in mlvm_ops)
        out.uses_params = self.external and any(
            isinstance(op, ParamOp) and op.result.uses for op in mlvm_ops
        )
        out.needs_instance = out.needs_instance or out.uses_params
        out.uses_comm = any(op.USES_COMM for op in mlvm_ops)
        out.coll = any(op.USES_COMM and op.SUSPENDS for op in mlvm_ops)
        out.points = cg.points
        # Inputs and outputs as the call state keeps them.
        typed = out.params[1:]
        out.arg_names = [p.rsplit("*", 1)[1] for p in typed]
        # inputs the body never reads compile without an unused-parameter warning
        out.void_args = " ".join(f"(void){n};" for n in out.arg_names)
        out.struct_fields = [f"{p};" for p in typed]
        out.arg_decls = [f"{p} = call->{n}; (void){n};" for p, n in zip(typed, out.arg_names, strict=True)]
        out.call_args = ["arena_", *out.arg_names]
        out.entry_params = list(out.params)
        if out.takes_instance:
            out.entry_params.insert(0, "const mlvm_instance_t *inst")
            out.call_args.insert(0, "inst")
        out.begin_params = [f"{cname}_call_t *call", "const mlvm_instance_t *inst", *out.params]
        return out

    def _ptr(self, fs: FunctionStorage, v: SSAValue, in_names: list[str]) -> str:
        st = fs.of(v)
        r = fs.roots(v)
        ctype = C_TYPES[_elem(v)]
        if st.kind == "input":
            return in_names[st.index]
        if st.kind == "output":
            return f"out{st.index}"
        if st.kind == "state":
            return state_expr(ctype, self.globals[st.name].offset)
        owner = r.owner
        assert isinstance(owner, MlvmOp)
        if st.kind == "data":
            if self.external and isinstance(owner, ParamOp):
                return f"((const {ctype} *)wparams[{self._ext_slot(owner)}])"
            e = _elem(r)
            name = self._data_name(owner)
            if e in ("f32", "i32"):
                return f"{name}.{'f' if e == 'f32' else 'i'}"
            return f"((const {ctype} *){name}.u)"
        offsets = owner.attributes.get("mlvm.offsets")
        assert isinstance(offsets, DenseArrayBase)
        assert isinstance(r, type(owner.results[0]))
        off = offsets.get_values()[owner.results.index(r)]
        return f"(({ctype} *)(arena + {off}))"

    def render(self, stack: bool = True) -> tuple[str, str]:
        """(C source, header); `stack`: the header states the call's stack
        per core (parsing the C: skipped for builds whose header no one
        reads)."""
        funcs = exported_functions(self.module)
        for op in self.module.ops:
            if not isinstance(op, func.FuncOp | GlobalOp):
                raise op_error(op, "only func.func and mlvm.global are allowed at module level", self.source)
        mod, owner = self.mod, f"module '{self.mod}'"
        self._claim(
            self.module, owner, f"{mod}_module", f"{mod}_ARENA_BYTES", f"{mod}_NUM_IMPORTS",
            f"{mod}_NUM_QUEUES", f"{mod}__arena", f"{mod}__exports", f"{mod}__imports",
            f"{mod}__queues", f"MLVM_GEN_{mod}_H_", f"{mod}__WEIGHT",
            f"{mod}_STATE_BYTES", f"{mod}_NUM_GLOBALS", f"{mod}__globals",
            f"{mod}_NUM_PARAMS", f"{mod}__params",
        )
        state_bytes = self._layout_globals()
        functions = [self._function(f) for f in funcs]
        header = self.header
        ctx = dict(
            source=c_comment(self.source),
            mod=self.mod,
            MOD=self.mod.upper(),
            mod_literal=c_string(self.mod),
            guard=f"MLVM_GEN_{self.mod.upper()}_H_",
            arena_bytes=max((f.arena_bytes for f in functions), default=0),
            largest_tensor=max(
                (tensor_bytes(v.type) for op in self.module.walk() for v in op.results),
                default=0,
            ),
            functions=functions,
            data=self.data,
            statics=self.statics.defs,
            header=header,
            static_arena=self.static_arena,
            imports=list(self.imports.values()),
            queues=list(self.queues.values()),
            globals=list(self.globals.values()),
            state_bytes=state_bytes,
            ext_params=[t for _, _, t in self.ext_params.values()],
            table_tensors=[t for imp in self.imports.values() for t in imp.args + imp.results]
            + [q.elem for q in self.queues.values()] + [g.tensor for g in self.globals.values()]
            + [t for _, _, t in self.ext_params.values()],
        )
        c_text = _env().get_template("module.c.j2").render(**ctx)
        ctx["stack_lines"] = []
        h_text = _env().get_template("module.h.j2").render(**ctx)
        if not stack:
            return c_text, h_text
        ctx["stack_lines"] = stack_lines(c_text, h_text, self.mod.upper())
        h_text = _env().get_template("module.h.j2").render(**ctx)
        return c_text, h_text


def blob_names(mod: str) -> tuple[str, str]:
    """(blob, assembler source) file names of module `mod`'s weights."""
    return f"{mod}.weights.bin", f"{mod}.weights.s"


@dataclass
class EmittedC:
    c_marked: str  # the C source with a mark where each weight's words go
    h: str
    asm: str | None = None     # with blob weights: the assembler source
    blob: bytes | None = None  # and the blob it .incbin's (see `blob_names`)
    # With external parameters: (key, array) of the parameter file's weights.
    params: list[tuple[str, np.ndarray]] | None = None
    data: list[_Data] = field(default_factory=list)

    def _pieces(self) -> Iterator[str]:
        parts = _DATA_SPLIT.split(self.c_marked)
        for k, part in enumerate(parts):
            yield _words(np.frombuffer(self.data[int(part)].raw, dtype="<u4")) if k % 2 else part

    @property
    def c(self) -> str:
        """The C source, weights written out."""
        return "".join(self._pieces())

    def write_c(self, path: Path) -> None:
        """The C source into `path`, one weight's text in memory at a time."""
        with open(path, "w") as f:
            for piece in self._pieces():
                f.write(piece)


def emit_c(
    module: ModuleOp,
    name: str,
    params: Mapping[str, np.ndarray],
    source: str,
    header: str | None = None,
    *,
    static_arena: bool = False,
    blob: bool = False,
    external_params: bool = False,
    stack: bool = True,
) -> EmittedC:
    """C source and header of a verified module; `name` becomes the C prefix.

    `blob` puts the weights in a binary blob for the host's assembler
    (`.incbin`) instead of C text: a build then costs about the time of
    reading the weights, not of compiling hundreds of MB of C.
    `external_params` leaves the weights of `mlvm.param` out of the code
    altogether: they go to a parameter file (`EmittedC.params`, see
    `params_file`) that an instance binds at run time. `stack=False` leaves
    `<M>_STACK_BYTES` out of the header (a host build's, which no one
    reads: the bound parses the whole C)."""
    mod = c_ident(name, "m")
    em = ModuleEmitter(module, name, params, source, header or f"{mod}.h", static_arena,
                       blob=blob, external=external_params)
    c_text, h_text = em.render(stack)
    entries = em.params_entries() if external_params else None
    if not blob:
        return EmittedC(c_text, h_text, params=entries, data=em.data)
    asm, data = em.blob_files()
    return EmittedC(c_text, h_text, asm, data, params=entries, data=em.data)
