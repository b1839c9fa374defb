"""ONNX graph -> mlvm module: values, constants, folding, one exported `main`.

Each ONNX node is either folded at import (every input known: shape
arithmetic, `Constant`, weight preprocessing), by the onnx package's own
reference implementation, or converted by its entry in `ops.CONVERTERS` onto
mlvm ops. Initializers and folded tensors that the program reads become
`mlvm.param`s (bit-exact, in the returned parameter dict) or, when tiny,
`mlvm.constant`s. Unsupported nodes are collected, not fatal one by one: the
error lists every unsupported op type with its node names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.inliner
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from mlvm.diagnostics import MlvmError
from mlvm.dialect.base import MlvmOp, elem_name
from mlvm.dialect.elements import ELEMS as ELEM_TABLE
from mlvm.dialect.elements import elem_for_dtype, xdsl_type
from mlvm.dialect.ops import FillOp, ParamOp
from mlvm.frontend.onnx.model import load_model, onnx_type_name, tensor_array
from mlvm.passes.canonicalize import make_constant

# Element types a runtime tensor may have, by numpy dtype and by ONNX type.
_T = onnx.TensorProto
ELEM_OF_ONNX: dict[int, str] = {
    int(_T.FLOAT): "f32", int(_T.DOUBLE): "f64", int(_T.FLOAT16): "f16", int(_T.BFLOAT16): "bf16",
    int(_T.INT8): "i8", int(_T.INT16): "i16", int(_T.INT32): "i32", int(_T.INT64): "i64",
    int(_T.UINT8): "ui8", int(_T.UINT16): "ui16", int(_T.UINT32): "ui32", int(_T.UINT64): "ui64",
    int(_T.BOOL): "i1",
}
ONNX_OF_ELEM: dict[str, int] = {e: code for code, e in ELEM_OF_ONNX.items()}
XDSL_ELEM = {name: xdsl_type(name) for name in ELEM_TABLE}

MAX_FOLD_ELEMENTS = 1 << 24
"""Largest tensor a node is folded into at import; past it the node runs."""

# Nodes never folded: random ones, and ops with no inputs that the
# converters handle directly.
# Never folded at import: random ops, and dequantization, whose integer
# weights the mlvm-fuse-qdq pass needs to see (it computes the op in integers).
NO_FOLD = frozenset({"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                     "Multinomial", "Bernoulli", "DequantizeLinear"})

TINY = 16
"""Known tensors up to this many elements are inlined as `mlvm.constant`."""

QPARAM_INLINE = 4096
"""Scales and zero points of quantization up to this many elements (one per
channel) are `mlvm.constant` too: the multipliers mlvm-fuse-qdq computes
from them then fold at compile time rather than run at every call."""


class UnsupportedModel(MlvmError):
    """A valid model that uses what mlvm does not convert yet (ops, attributes,
    element types): distinct from a broken model, for the conformance report.
    `runtime_inputs`: graph inputs a converter needed the values of."""

    runtime_inputs: frozenset[str] = frozenset()


class Unsupported(Exception):
    """A node the importer cannot convert (collected and reported together)."""


class RunTimeInput(Unsupported):
    """A value a converter needs at import (a shape, axes, scales, an
    exponent) is computed at run time; `value` is that input."""

    def __init__(self, what: str, value: object) -> None:
        super().__init__(f"{what} computed at run time")
        self.value = value


class NodeError(Exception):
    """A node that is wrong in the model itself (reported at once)."""


@dataclass(frozen=True)
class Const:
    """A tensor known at import time; `name` is its ONNX value name, if any."""

    array: np.ndarray
    name: str | None = None


@dataclass(frozen=True)
class Tensor:
    """A tensor computed by the program."""

    value: SSAValue

    @property
    def shape(self) -> tuple[int, ...]:
        t = self.value.type
        assert isinstance(t, TensorType)
        return tuple(t.get_shape())

    @property
    def elem(self) -> str:
        t = self.value.type
        assert isinstance(t, TensorType)
        e = elem_name(t.element_type)
        assert e is not None
        return e


class Poison:
    """The output of a node that could not be converted."""


Value = Const | Tensor | Poison


def show(name: str | bytes) -> str:
    """A user string for a one-line message: non-printables escaped (a name
    that is not UTF-8 comes as bytes from the protobuf parser)."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    return name.encode("unicode_escape").decode("ascii")


def attr_value(a: onnx.AttributeProto) -> Any:
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [x.decode("utf-8", "replace") for x in v]
    return v


def _rename(node: onnx.NodeProto, name: Callable[[str], str]) -> None:
    """node's value names mapped by `name`, in its subgraphs (If branches)
    too, so that a body keeps reading what it read."""
    node.input[:] = [name(x) for x in node.input]
    node.output[:] = [name(x) for x in node.output]
    for a in node.attribute:
        for g in [a.g] if a.HasField("g") else list(a.graphs):
            for lst in (g.input, g.output, g.value_info):
                for vi in lst:
                    vi.name = name(vi.name)
            for t in g.initializer:
                t.name = name(t.name)
            for n in g.node:
                _rename(n, name)


def to_attr(v: object) -> Attribute:
    """A property value as the dialect wants it (see DESIGN: property types)."""
    if isinstance(v, Attribute):
        return v
    if isinstance(v, bool):
        return BoolAttr.from_bool(v)
    if isinstance(v, int):
        return IntegerAttr(v, i64)
    if isinstance(v, float):
        return FloatAttr(v, f32)
    if isinstance(v, str):
        return StringAttr(v)
    if isinstance(v, tuple | list):
        return DenseArrayBase.from_list(i64, [int(x) for x in v])
    raise TypeError(f"no property for {v!r}")


def tensor_type(shape: Sequence[int], elem: str) -> TensorType[Attribute]:
    return TensorType(XDSL_ELEM[elem], [int(d) for d in shape])


_VALID_HINT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Importer:
    def __init__(
        self,
        model: onnx.ModelProto,
        path: Path,
        input_shapes: Mapping[str, Sequence[int]],
        max_bytes: int,
    ) -> None:
        self.model = model
        self.graph = model.graph
        self.path = path
        self.max_bytes = max_bytes
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1
        )
        self.block = Block()
        self.values: dict[str, Value] = {}
        self.params: dict[str, np.ndarray] = {}
        # known tensors made SSA values, by name: with the array they were
        # made from (an unrolled loop binds one name to a new array each time)
        self._materialized: dict[str, tuple[np.ndarray, SSAValue]] = {}
        self._param_names: set[str] = set()
        self.unsupported: dict[str, list[str]] = {}
        self.runtime_inputs: set[str] = set()  # graph inputs needed as constants
        # the graph inputs each run-time value is computed from: a value a
        # converter needs as a constant names the inputs to compile in
        self.sources: dict[SSAValue, frozenset[str]] = {}
        self._inlined = 0  # function bodies expanded so far
        self._depth = 0  # of function bodies inside function bodies
        self.unrolled = 0  # nodes imported by unrolling Scan and Loop bodies, bounded per model
        self.node: onnx.NodeProto | None = None
        self.node_label = ""
        self.uses = self._count_uses()
        self._input_shapes = dict(input_shapes)

    # -- values ------------------------------------------------------------
    def _count_uses(self) -> dict[str, int]:
        uses: dict[str, int] = {}
        for n in self.graph.node:
            for name in n.input:
                uses[name] = uses.get(name, 0) + 1
        for o in self.graph.output:
            uses[o.name] = uses.get(o.name, 0) + 1
        return uses

    def shape(self, v: Value) -> tuple[int, ...]:
        if isinstance(v, Const):
            return tuple(v.array.shape)
        assert isinstance(v, Tensor)
        return v.shape

    def elem(self, v: Value) -> str:
        if isinstance(v, Tensor):
            return v.elem
        assert isinstance(v, Const)
        e = elem_for_dtype(v.array.dtype)
        if e is None:
            raise Unsupported(f"a {v.array.dtype} tensor computed at run time")
        return e.name

    def t(self, v: Value | None, key: str | None = None, inline: int = TINY) -> SSAValue:
        """The SSA value of `v`; a known tensor becomes a param or constant
        (once; a constant up to `inline` elements)."""
        if v is None:
            raise NodeError("a required input is missing")
        if isinstance(v, Tensor):
            return v.value
        assert isinstance(v, Const)
        arr = v.array
        elem = self.elem(v)
        key = key or v.name
        done = self._materialized.get(key) if key is not None else None
        if done is not None and done[0] is arr:
            return done[1]
        t = tensor_type(arr.shape, elem)
        op: Operation
        flat = arr.reshape(-1)
        is_float = ELEM_TABLE[elem].is_float
        if arr.size <= inline and (not is_float or bool(np.isfinite(arr.astype(np.float64)).all())):
            op = make_constant(t, arr)
        elif arr.size and _fills_exactly(flat):
            # One value everywhere (ConstantOfShape and the like): filled at
            # run time rather than spelled out in the C.
            op = FillOp.create(result_types=[t], properties={"value": FloatAttr(float(flat[0]), f32)})
        else:
            name = self._param_name(key or f"{self.node_label}_const")
            self.params[name] = np.array(arr, order="C")  # (ascontiguousarray makes 0-d 1-d)
            op = ParamOp.create(result_types=[t], properties={"name": StringAttr(name)})
        self.block.add_op(op)
        if key is not None:
            self._materialized[key] = (arr, op.results[0])
        return op.results[0]

    def _param_name(self, base: str) -> str:
        name, k = base or "const", 2
        while name in self._param_names:
            name = f"{base}_{k}"
            k += 1
        self._param_names.add(name)
        return name

    def const(self, arr: np.ndarray | float | int, like: str = "f32") -> SSAValue:
        """A small constant of the element type `like`."""
        a = np.asarray(arr, dtype=ELEM_TABLE[like].dtype)
        return self.t(Const(a))

    def emit(
        self,
        cls: type[MlvmOp],
        operands: Sequence[SSAValue],
        shape: Sequence[int],
        elem: str = "f32",
        **props: object,
    ) -> SSAValue:
        """Append one mlvm op, verified now so a mistake names this node."""
        return self.emit_results(cls, operands, [(shape, elem)], **props)[0]

    def emit_results(
        self,
        cls: type[MlvmOp],
        operands: Sequence[SSAValue],
        results: Sequence[tuple[Sequence[int], str]],
        **props: object,
    ) -> list[SSAValue]:
        """`emit` for an op with several results: (shape, element type) each."""
        elem = results[0][1]
        op = cls.create(
            operands=list(operands),
            result_types=[tensor_type(s, e) for s, e in results],
            properties={k: to_attr(v) for k, v in props.items() if v is not None},
        )
        try:
            op.verify()
        except DiagnosticException as e:
            msg = str(e).strip().splitlines()[0].removeprefix("Operation does not verify: ")
            if "must have element type" in msg:  # the dialect lacks this op on this type
                raise Unsupported(f"{cls.name} on {elem}") from None
            raise NodeError(msg) from None
        self.block.add_op(op)
        return list(op.results)

    # -- the graph -----------------------------------------------------------
    def error(self, msg: str) -> MlvmError:
        return MlvmError(f"{self.path}: error: {msg}")

    def run(self) -> tuple[ModuleOp, dict[str, np.ndarray]]:
        from mlvm.frontend.onnx.ops import CONVERTERS

        inits = {t.name for t in self.graph.initializer}
        for t in self.graph.initializer:
            self.values[t.name] = Const(tensor_array(t, self.path, self.max_bytes), t.name)
        arg_types: list[Attribute] = []
        arg_names: list[str] = []
        for inp in self.graph.input:
            if inp.name in inits:
                continue
            arg_types.append(self._input_type(inp))
            arg_names.append(inp.name)
        unknown = set(self._input_shapes) - set(arg_names)
        if unknown:
            raise self.error(
                f"--input-shape names {', '.join(sorted(map(show, unknown)))}, which "
                "is not an input of the graph"
            )
        self.block = Block(arg_types=arg_types)
        for name, arg in zip(arg_names, self.block.args, strict=True):
            if _VALID_HINT.fullmatch(name):
                arg.name_hint = name
            self.values[name] = Tensor(arg)
            self.sources[arg] = frozenset({name})
        for index, node in enumerate(self._fold_batch_norms()):
            self._node(index, node, CONVERTERS)
        if self.unsupported:
            parts = [
                f"{what} ({len(names)}: {', '.join(names[:5])}{', ...' if len(names) > 5 else ''})"
                for what, names in sorted(self.unsupported.items())
            ]
            err = UnsupportedModel(f"{self.path}: error: unsupported ONNX ops: " + "; ".join(parts))
            err.runtime_inputs = frozenset(self.runtime_inputs)
            raise err
        results: list[SSAValue] = []
        for out in self.graph.output:
            v = self.values.get(out.name)
            if v is None:
                raise self.error(f"graph output '{show(out.name)}' is never computed")
            self.node_label = out.name
            try:
                results.append(self.t(v, key=out.name))
            except Unsupported as e:
                raise UnsupportedModel(
                    f"{self.path}: error: graph output '{show(out.name)}' is {e}") from None
        self.block.add_op(func.ReturnOp(*results))
        f = func.FuncOp(
            "main", ([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
        )
        return ModuleOp([f]), self.params

    def _input_type(self, inp: onnx.ValueInfoProto) -> Attribute:
        name = show(inp.name)
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise UnsupportedModel(f"{self.path}: error: input '{name}' is not a tensor")
        elem = ELEM_OF_ONNX.get(tt.elem_type)
        if elem is None:
            raise UnsupportedModel(
                f"{self.path}: error: input '{name}' has element type "
                f"{onnx_type_name(tt.elem_type)}, which mlvm does not have"
            )
        given = self._input_shapes.get(inp.name)
        if given is not None:
            dims = list(given)
            if tt.HasField("shape") and len(tt.shape.dim) != len(dims):
                raise self.error(
                    f"--input-shape {name} has rank {len(dims)} but the input has rank "
                    f"{len(tt.shape.dim)}"
                )
        else:
            if not tt.HasField("shape"):
                raise self.error(
                    f"input '{name}' has no shape; give it with --input-shape {name}=DxDx..."
                )
            dims = []
            for k, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and d.dim_value >= 0:
                    dims.append(d.dim_value)
                    continue
                sym = f" ('{show(d.dim_param)}')" if d.dim_param else ""
                raise self.error(
                    f"input '{name}' has an unknown dim {k}{sym}; give the shape with "
                    f"--input-shape {name}=DxDx... (input_shapes= in Python)"
                )
        if any(d < 0 for d in dims):
            raise self.error(f"input '{name}' has a negative dim in {dims}")
        return tensor_type(dims, elem)

    def _node(self, index: int, node: onnx.NodeProto, converters: Mapping[str, Any]) -> None:
        self.node = node
        label = node.name or f"#{index}"
        self.node_label = label
        ins: list[Value | None] = []
        for name in node.input:
            if name == "":
                ins.append(None)
                continue
            v = self.values.get(name)
            if v is None:
                raise self.error(
                    f"node '{show(label)}' ({show(node.op_type)}) reads '{show(name)}' before it "
                    "is computed (the graph is not in order, has a cycle or lacks an "
                    "initializer)"
                )
            ins.append(v)
        attrs = {a.name: attr_value(a) for a in node.attribute}
        outs: list[Value]
        if any(isinstance(v, Poison) for v in ins):
            outs = [Poison() for _ in node.output]
        else:
            try:
                if node.domain not in ("", "ai.onnx"):
                    raise Unsupported(f"domain '{show(node.domain)}'")
                known = [v for v in ins if v is not None]
                folded = None
                if all(isinstance(v, Const) for v in known) and node.op_type not in NO_FOLD:
                    folded = self._try_fold(node, ins)
                if folded is not None:
                    outs = folded
                else:
                    conv = converters.get(node.op_type)
                    if conv is None:
                        body = self._function_body(node, ins)
                        if body is None:
                            raise Unsupported("")
                        self._nested(body, index, "")  # the op as ONNX defines it
                        return
                    outs = conv(self, node, ins, attrs)
            except Unsupported as e:
                if isinstance(e, RunTimeInput) and isinstance(e.value, Tensor):
                    self.runtime_inputs.update(self.sources.get(e.value.value, ()))
                why = f" ({e})" if str(e) else ""
                self.unsupported.setdefault(f"{show(node.op_type)}{show(why)}", []).append(show(label))
                outs = [Poison() for _ in node.output]
            except NodeError as e:
                raise self.error(f"node '{show(label)}' ({show(node.op_type)}): {e}") from None
            except (IndexError, KeyError, ValueError, TypeError, ZeroDivisionError, OverflowError,
                    AssertionError, MemoryError) as e:
                # a model no converter check foresaw: still one line naming the node
                first = (str(e).strip().splitlines() or [""])[0][:200]
                raise self.error(f"node '{show(label)}' ({show(node.op_type)}) cannot be imported "
                                 f"as given ({type(e).__name__}{': ' + show(first) if first else ''})") from None
        deps = frozenset[str]().union(
            *(self.sources.get(v.value, frozenset()) for v in ins if isinstance(v, Tensor)))
        for v in outs:
            if isinstance(v, Tensor) and v.value not in self.sources:
                self.sources[v.value] = deps
        for name, v in zip(node.output, outs, strict=False):
            if name:
                self.values[name] = v

    def _fold_batch_norms(self) -> list[onnx.NodeProto]:
        """The graph's nodes with each Conv -> BatchNormalization pair whose
        parameters are initializers, and whose conv output nothing else reads,
        made one Conv with scaled weights and a shifted bias."""
        from mlvm.frontend.onnx.ops import batch_norm_affine

        nodes = list(self.graph.node)
        producer = {o: k for k, n in enumerate(nodes) for o in n.output if o}
        drop: set[int] = set()
        for k, bn in enumerate(nodes):
            if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx"):
                continue
            attrs = {a.name: attr_value(a) for a in bn.attribute}
            src = producer.get(bn.input[0]) if bn.input else None
            if (src is None or src in drop or int(attrs.get("training_mode", 0))
                    or any(o for o in bn.output[1:]) or len(bn.input) != 5
                    or self.uses.get(bn.input[0], 0) != 1):
                continue
            conv = nodes[src]
            if conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx") or len(conv.input) < 2:
                continue
            has_bias = len(conv.input) > 2 and conv.input[2] != ""
            wv = self.values.get(conv.input[1])
            bv = self.values.get(conv.input[2]) if has_bias else None
            bn_params = [self.values.get(n) for n in bn.input[1:]]
            if not isinstance(wv, Const) or wv.array.dtype != np.float32 or (
                    has_bias and not isinstance(bv, Const)) or not all(
                    isinstance(c, Const) for c in bn_params):
                continue
            w = wv.array
            b = bv.array if isinstance(bv, Const) else None
            scale, bias, mean, var = (c.array for c in bn_params if isinstance(c, Const))
            mul, add = batch_norm_affine(scale, bias, mean, var, float(attrs.get("epsilon", 1e-5)))
            w2 = (w.astype(np.float64) * mul.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32)
            b2 = ((b.astype(np.float64) if b is not None else 0.0) * mul + add).astype(np.float32)
            wname, bname = f"{conv.input[1]}__bn", f"{bn.name or bn.output[0]}__bias"
            self.values[wname], self.values[bname] = Const(w2, wname), Const(b2, bname)
            fused = onnx.NodeProto()
            fused.CopyFrom(conv)
            del fused.input[:]
            fused.input.extend([conv.input[0], wname, bname])
            del fused.output[:]
            fused.output.append(bn.output[0])
            nodes[src] = fused
            drop.add(k)
        return [n for k, n in enumerate(nodes) if k not in drop]

    # -- folding ---------------------------------------------------------------
    def _nested(self, nodes: Sequence[onnx.NodeProto], index: int, why: str) -> None:
        """Nodes of a function body or a subgraph imported in place, node by
        node; at most 8 levels deep (else Unsupported(why))."""
        from mlvm.frontend.onnx.ops import CONVERTERS

        if self._depth >= 8:
            raise Unsupported(why)
        self._depth += 1
        try:
            for sub in nodes:
                self._node(index, sub, CONVERTERS)
        finally:
            self._depth -= 1

    def subgraph_initializers(self, graph: onnx.GraphProto) -> dict[str, Const]:
        return {t.name: Const(tensor_array(t, self.path, self.max_bytes), t.name) for t in graph.initializer}

    def run_graph(self, graph: onnx.GraphProto, index: int,
                  initializers: Mapping[str, Const] | None = None) -> list[Value | None]:
        """The values of a subgraph's outputs, its nodes imported here (an If
        whose branch is known at import): it reads the outer graph's values,
        and its own initializers join them (read once by the caller that
        imports the graph again and again: `initializers`)."""
        for name, c in (initializers if initializers is not None
                        else self.subgraph_initializers(graph)).items():
            self.values[name] = c
        self._nested(graph.node, index, "subgraphs nested too deep")
        return [self.values.get(o.name) for o in graph.output]

    def _function_body(self, node: onnx.NodeProto,
                       ins: Sequence[Value | None]) -> list[onnx.NodeProto] | None:
        """The nodes ONNX defines `node`'s op as (a function of other ops:
        Attention, RotaryEmbedding, Mish, ...), inlined with the node's
        inputs, outputs and attributes; None for an op without one. Its
        values get names no other node uses."""
        try:
            schema = onnx.defs.get_schema(node.op_type, self.opset, node.domain)
        except onnx.defs.SchemaError:
            return None
        types = [helper.make_tensor_type_proto(ONNX_OF_ELEM[self.elem(v)], list(self.shape(v)))
                 if v is not None else onnx.TypeProto() for v in ins]
        # (onnx's type stubs lack these members of OpSchema)
        build = getattr(schema, "get_context_dependent_function", None)
        try:
            if getattr(schema, "has_context_dependent_function", False) and build is not None:
                raw = build(node.SerializeToString(), [t.SerializeToString() for t in types])
                fn = onnx.FunctionProto.FromString(raw)
            elif getattr(schema, "has_function", False):
                fn = onnx.FunctionProto()
                fn.CopyFrom(schema.function_body)
            else:
                return None
        except Exception:  # noqa: BLE001 - onnx could not build the body for these inputs
            return None
        fn.domain, fn.name = "mlvm.inline", node.op_type
        call = onnx.NodeProto()
        call.CopyFrom(node)
        call.domain = "mlvm.inline"
        names = [n for n in node.input if n]
        graph = helper.make_graph(
            [call], "inline",
            [helper.make_value_info(n, t) for n, t in zip(node.input, types, strict=True) if n],
            [helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o])
        model = helper.make_model(
            graph, functions=[fn],
            opset_imports=[*self.model.opset_import, helper.make_opsetid("mlvm.inline", 1)])
        try:
            inlined = onnx.inliner.inline_local_functions(model)
        except Exception:  # noqa: BLE001
            return None
        self._inlined += 1
        prefix = f"mlvm_inline{self._inlined}/"
        outer = set(names) | {o for o in node.output if o}
        def name(x: str) -> str:
            return x if x in outer or not x else prefix + x

        body = []
        for sub in inlined.graph.node:  # internal values renamed apart from the graph's
            n = onnx.NodeProto()
            n.CopyFrom(sub)
            _rename(n, name)
            body.append(n)
        return body

    def _try_fold(self, node: onnx.NodeProto, ins: Sequence[Value | None]) -> list[Value] | None:
        """The node's outputs computed now by the onnx package's reference, or
        None when their size is unknown or too large to compute at import
        (onnx's shape inference tells the size before anything is computed)."""
        from onnx.reference import ReferenceEvaluator

        names = [f"in{k}" if v is not None else "" for k, v in enumerate(ins)]
        feeds = {n: v.array for n, v in zip(names, ins, strict=True) if isinstance(v, Const)}
        if sum(a.size for a in feeds.values()) > MAX_FOLD_ELEMENTS:
            return None
        outs = [f"out{k}" if o else "" for k, o in enumerate(node.output)]
        n = helper.make_node(node.op_type, names, outs, domain=node.domain)
        n.attribute.extend(node.attribute)
        graph = helper.make_graph(
            [n], "fold", [],
            [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outs if o],
            initializer=[numpy_helper.from_array(a, k) for k, a in feeds.items()],
        )
        m = helper.make_model(graph, opset_imports=list(self.model.opset_import))
        m.ir_version = self.model.ir_version or onnx.IR_VERSION
        try:
            inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True, data_prop=True)
        except Exception:  # noqa: BLE001 - onnx's inference failed: run the node instead
            return None
        for vi in inferred.graph.output:
            tt = vi.type.tensor_type
            if not tt.HasField("shape") or any(not d.HasField("dim_value") for d in tt.shape.dim):
                return None
            if math.prod(d.dim_value for d in tt.shape.dim) > MAX_FOLD_ELEMENTS:
                return None
        try:
            with np.errstate(all="ignore"):
                results = ReferenceEvaluator(m).run(None, {})
        except Exception as e:  # noqa: BLE001 - the onnx reference's own failure
            why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise NodeError(f"cannot be computed at import: {why}") from None
        it = iter(results)
        return [Const(np.asarray(next(it)), name) if o else Poison()
                for o, name in zip(outs, node.output, strict=True)]


def _fills_exactly(flat: np.ndarray) -> bool:
    """All elements bit-identical and `mlvm.fill` (whose value is an f32
    property) reproduces them exactly: finite, -0.0 included, and the value
    survives the trip through f32 (integers up to 2**24)."""
    bits = flat.view(f"u{flat.dtype.itemsize}")
    if not bool((bits == bits[0]).all()):
        return False
    if flat.dtype.kind in "iub":
        return abs(int(flat[0])) <= 1 << 24
    v = np.float32(flat[0])
    back = np.array(v).astype(flat.dtype).reshape(1).view(f"u{flat.dtype.itemsize}")
    return bool(np.isfinite(v)) and int(back[0]) == int(bits[0])


def import_onnx(
    source: str | Path | onnx.ModelProto,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    max_bytes: int = 1 << 40,
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """The mlvm module of an ONNX model (a path, or a ModelProto whose external
    data, if any, lies beside the current folder) and its parameters."""
    if isinstance(source, onnx.ModelProto):
        model, p = source, Path("<model>")
    else:
        p = Path(source)
        model = load_model(p, max_bytes)
    return Importer(model, p, input_shapes or {}, max_bytes).run()
