"""The Python loader against hostile .so files and careless callers.

One group of tests per finding: 1 duplicate names (a freed Queue the
instance still pointed at), 2 dangling argument views kept by a native,
3 descriptor sizes, 4 a native's error raised in another thread's call,
5 silent casts in `Queue.push`, 6 native results reshaped or cast,
7 unaligned inputs, 8 files that are not modules.
"""

from __future__ import annotations

import gc
import re
import threading
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import pytest

import mlvm
import mlvm.loader
from mlvm.codegen.cc import build_shared
from mlvm.pipeline import write_c

QUEUES = """\
func.func @main() -> tensor<2xf32> {
  %a = "mlvm.queue_pop"() <{queue = "qa"}> : () -> tensor<2xf32>
  %b = "mlvm.queue_pop"() <{queue = "qb"}> : () -> tensor<2xf32>
  %c = "mlvm.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
func.func @scalar() -> tensor<f32> {
  %a = "mlvm.queue_pop"() <{queue = "s"}> : () -> tensor<f32>
  func.return %a : tensor<f32>
}
func.func @ints() -> tensor<2xi32> {
  %a = "mlvm.queue_pop"() <{queue = "i"}> : () -> tensor<2xi32>
  func.return %a : tensor<2xi32>
}
"""

# f fails in "bad" after a yield; g succeeds through "good"; k and s have
# int32 and 0-d results.
NATIVES = """\
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  "mlvm.yield"() : () -> ()
  %y = "mlvm.call_c"(%x) <{callee = "bad"}> : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = "mlvm.call_c"(%x) <{callee = "good"}> : (tensor<3xf32>) -> tensor<3xf32>
  %z = "mlvm.neg"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %z : tensor<3xf32>
}
func.func @k(%x: tensor<3xi32>) -> tensor<3xi32> {
  %y = "mlvm.call_c"(%x) <{callee = "ints"}> : (tensor<3xi32>) -> tensor<3xi32>
  func.return %y : tensor<3xi32>
}
func.func @s(%x: tensor<f32>) -> tensor<f32> {
  %y = "mlvm.call_c"(%x) <{callee = "scalar"}> : (tensor<f32>) -> tensor<f32>
  func.return %y : tensor<f32>
}
"""

PLAIN = """\
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xf32> {
  %z = "mlvm.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""

# A descriptor written by hand, so every field can be made hostile without
# depending on the emitter's text. Its entries only end the call.
HAND_C = Template("""\
#include "mlvm/instance.h"
#include "mlvm/module.h"

static mlvm_status_t begin_(void *call, const struct mlvm_instance *inst, void *arena,
                            void *const *inputs, void *const *outputs)
{
    mlvm_call_header_t *h = (mlvm_call_header_t *)call;
    (void)inst; (void)arena; (void)inputs; (void)outputs;
    h->pc = -1;
    h->status = MLVM_OK;
    return MLVM_OK;
}

static mlvm_status_t resume_(void *call)
{
    return (mlvm_status_t)((mlvm_call_header_t *)call)->status;
}

static const int64_t dims_[] = { $dims };
static const int64_t qdims_[] = { 2 };
static const mlvm_tensor_desc_t tensors_[] = {
    { "x", $dtype, $rank, dims_ },
};
static const mlvm_export_t exports_[] = {
    { $export1, $num_inputs, 1, tensors_, tensors_, $arena, NULL, $call_bytes, begin_, resume_, 1, 0, NULL },
    { $export2, 0, 0, NULL, NULL, 0, NULL, sizeof(mlvm_call_header_t), begin_, resume_, 1, 0, NULL },
};
static const mlvm_import_desc_t imports_[] = {
    { $import1, 0, 0, NULL, NULL },
    { $import2, 0, 0, NULL, NULL },
};
static const mlvm_queue_desc_t queues_[] = {
    { $queue1, { "q1", MLVM_F32, 1, qdims_ } },
    { $queue2, { "q2", MLVM_F32, 1, qdims_ } },
};
static const mlvm_module_t module_ = {
    MLVM_MODULE_MAGIC, MLVM_ABI_VERSION, "hand", $num_exports, $num_imports,
    exports_, imports_, $module_arena, $num_queues, 0, queues_
};

const mlvm_module_t *mlvm_so_module(void);
const mlvm_module_t *mlvm_so_module(void) { return &module_; }
""")

HAND_DEFAULTS = {
    "dims": "4", "dtype": "MLVM_F32", "rank": "1", "num_inputs": "1", "arena": "64",
    "call_bytes": "sizeof(mlvm_call_header_t)", "module_arena": "64",
    "export1": '"f"', "export2": '"g"', "import1": '"a"', "import2": '"b"',
    "queue1": '"q1"', "queue2": '"q2"', "num_exports": "2", "num_imports": "2", "num_queues": "2",
}
HAND_IMPORTS = {"a": lambda: None, "b": lambda: None}


def hand_so(tmp_path: Path, **fields: str) -> Path:
    c = tmp_path / "hand.c"
    c.write_text(HAND_C.substitute({**HAND_DEFAULTS, **fields}))
    return build_shared(c, tmp_path / "hand.so")


def patched_so(tmp_path: Path, text: str, *edits: tuple[str, str]) -> Path:
    """A module built from generated C in which each regex was replaced."""
    src = tmp_path / "m.mlir"
    src.write_text(text)
    c, _ = write_c(src, tmp_path / "m.c")
    code = c.read_text()
    for pattern, repl in edits:
        code, n = re.subn(pattern, repl, code)
        assert n > 0, pattern
    c.write_text(code)
    return build_shared(c, tmp_path / "m.so")


def compiled(tmp_path: Path, text: str, name: str = "m", **kw: Any) -> mlvm.Module:
    src = tmp_path / f"{name}.mlir"
    src.write_text(text)
    return mlvm.compile(src, **kw)


def refused(so: Path, match: str, **kw: Any) -> str:
    with pytest.raises(ValueError, match=match) as info:
        mlvm.loader.load(so, **kw)
    msg = str(info.value)
    assert "\n" not in msg and str(so) in msg, msg
    return msg


def good(x: np.ndarray) -> np.ndarray:
    return x * 2


def bad(x: np.ndarray) -> np.ndarray:
    raise RuntimeError("boom")


NATIVE_IMPORTS = {"good": good, "bad": bad, "ints": lambda x: x, "scalar": lambda x: x}


# 1. Duplicate names: one Queue (or native) freed while the instance points at it.

def test_hand_written_descriptor_loads(tmp_path: Path) -> None:
    m = mlvm.load(hand_so(tmp_path), HAND_IMPORTS)
    assert set(m.functions) == {"f", "g"} and set(m.queues) == {"q1", "q2"}
    assert m.f.begin(np.zeros(4, np.float32)).status == "OK"


def test_duplicate_queue_names_after_nul_are_refused(tmp_path: Path) -> None:
    so = patched_so(tmp_path, QUEUES, (r'"qa"', r'"q\\0a"'), (r'"qb"', r'"q\\0b"'))
    refused(so, r"damaged module descriptor: two queues are named 'q'$")


@pytest.mark.parametrize("field,value,what", [
    ("queue2", '"q1"', "two queues are named 'q1'"),
    ("import2", '"a"', "two imports are named 'a'"),
    ("import2", r'"a\0b"', "two imports are named 'a'"),
    ("export2", '"f"', "two exports are named 'f'"),
], ids=["queue", "import", "import-nul", "export"])
def test_duplicate_names_are_refused(tmp_path: Path, field: str, value: str, what: str) -> None:
    refused(hand_so(tmp_path, **{field: value}), f"damaged module descriptor: {what}$",
            imports=HAND_IMPORTS)


def test_duplicate_names_with_newlines_give_one_line(tmp_path: Path) -> None:
    so = hand_so(tmp_path, import1=r'"a\nb"', import2=r'"a\nb"')
    refused(so, re.escape(r"two imports are named 'a\nb'"), imports=HAND_IMPORTS)


def test_duplicate_names_queues_live_as_long_as_the_module(tmp_path: Path) -> None:
    m = compiled(tmp_path, QUEUES)
    qa, qb = m.queues["qa"], m.queues["qb"]
    call = m.main.begin()
    m.queues.clear()  # the module, not the dict, keeps them alive
    m.queues["qa"] = m.queues["qb"] = None  # type: ignore[assignment]
    qa.push(np.ones(2, np.float32))
    qb.push(np.full(2, 2.0, np.float32))
    del qa, qb
    gc.collect()
    junk = [np.full(1 << 12, 7.0) for _ in range(64)]  # reuse freed memory
    assert call.resume() == "OK"
    np.testing.assert_array_equal(call.result(), [3.0, 3.0])
    del junk


def test_duplicate_names_call_outputs_cannot_be_swapped(tmp_path: Path) -> None:
    m = compiled(tmp_path, QUEUES)
    call = m.main.begin()
    with pytest.raises(TypeError):
        call.outputs[0] = np.zeros(2, np.float32)  # type: ignore[index]
    m.queues["qa"].push([1.0, 2.0])
    m.queues["qb"].push([3.0, 4.0])
    assert call.resume() == "OK"
    np.testing.assert_array_equal(call.outputs[0], [4.0, 6.0])


def test_duplicate_names_imports_must_be_callables(tmp_path: Path) -> None:
    src = tmp_path / "n.mlir"
    src.write_text(NATIVES)
    with pytest.raises(ValueError, match="import 'good' is a int, not a callable"):
        mlvm.compile(src, imports={**NATIVE_IMPORTS, "good": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="imports must map names to callables"):
        mlvm.compile(src, imports=[good])  # type: ignore[arg-type]


# 2. Dangling views: a native that keeps its arguments.

def churn() -> list[np.ndarray]:
    return [np.full(1 << 14, -1.0) for _ in range(64)]


def test_dangling_views_kept_arguments_hold_their_values(tmp_path: Path) -> None:
    kept: list[np.ndarray] = []

    def keep(x: np.ndarray) -> np.ndarray:
        kept.append(x)
        return x * 2

    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "good": keep})
    for k in range(4):  # one-shot (begin and resume under the hood)
        np.testing.assert_array_equal(m.g(np.full(3, k, np.float32)), np.full(3, -2.0 * k))
    calls = [m.g.begin(np.full(3, 10 + k, np.float32)) for k in range(4)]
    assert all(c.status == "OK" for c in calls)
    del calls, m  # frees every arena
    gc.collect()
    junk = churn()
    for k, x in zip([0, 1, 2, 3, 10, 11, 12, 13], kept, strict=True):
        np.testing.assert_array_equal(x, np.full(3, k, np.float32))
        assert x.flags.owndata and not x.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        kept[0][0] = 1.0
    del junk


# 3. Descriptor sizes re-checked.

@pytest.mark.parametrize("fields,what", [
    ({"dtype": "(int32_t)99"}, "tensor 'x' has unknown dtype code 99"),
    ({"rank": "40"}, "tensor 'x' has rank 40"),
    ({"rank": "-1"}, "tensor 'x' has rank -1"),
    ({"dims": "-4"}, r"tensor 'x' has shape \(-4,\)"),
    ({"dims": "(int64_t)1 << 39"}, r"tensor 'x' has shape \(549755813888,\)"),
    ({"rank": "2", "dims": "INT64_MAX, INT64_MAX"}, "tensor 'x' has shape"),
    ({"arena": "(size_t)1 << 50"}, "export 0 needs an arena of 1125899906842624 bytes"),
    ({"arena": "SIZE_MAX"}, "export 0 needs an arena of"),
    ({"module_arena": "(size_t)1 << 41"}, "arena of 2199023255552 bytes"),
    ({"call_bytes": "0"}, "export 0 has a call state of 0 bytes"),
    ({"call_bytes": "8"}, "export 0 has a call state of 8 bytes"),
    ({"call_bytes": "(size_t)1 << 40"}, "export 0 has a call state of"),
    ({"num_inputs": "-1"}, "input count -1 is out of range"),
    ({"num_inputs": "100000"}, "input count 100000 is out of range"),
    ({"num_exports": "-1"}, "export count -1 is out of range"),
    ({"num_imports": "-3"}, "import count -3 is out of range"),
    ({"num_queues": "1 << 30"}, "queue count 1073741824 is out of range"),
    ({"export1": "NULL"}, "an export has no name"),
], ids=lambda v: "-".join(v) if isinstance(v, dict) else None)
def test_size_checks_refuse_hostile_descriptors(tmp_path: Path, fields: dict[str, str],
                                                what: str) -> None:
    refused(hand_so(tmp_path, **fields), f"damaged module descriptor: {what}", imports=HAND_IMPORTS)


def test_size_checks_limit_is_a_parameter(tmp_path: Path) -> None:
    so = hand_so(tmp_path, arena="0", module_arena="0")
    refused(so, r"tensor 'x' has shape \(4,\)", imports=HAND_IMPORTS, max_bytes=15)
    assert mlvm.loader.load(so, HAND_IMPORTS, 2, max_bytes=16).functions["f"].inputs[0].shape == (4,)


def test_size_checks_in_generated_c(tmp_path: Path) -> None:
    so = patched_so(tmp_path, PLAIN, (r"MLVM_I32", "(mlvm_dtype_t)77"))
    refused(so, "damaged module descriptor: tensor 'i' has unknown dtype code 77$")


def test_size_checks_queue_storage(tmp_path: Path) -> None:
    src = tmp_path / "q.mlir"
    src.write_text(QUEUES)
    so = mlvm.compile(src).path
    refused(so, r"queue 'qa': 16 elements of 8 bytes \(the storage must hold 1 to 64 bytes\)$",
            queue_capacity=16, max_bytes=64)
    for cap in (0, -1, 1 << 31, 2.5, True):
        with pytest.raises(ValueError, match="queue_capacity must be an integer"):
            mlvm.compile(src, queue_capacity=cap)  # type: ignore[arg-type]


# 4. A native's error belongs to the call that ran it.

def test_thread_safe_errors_stay_in_their_call(tmp_path: Path) -> None:
    m = compiled(tmp_path, NATIVES, imports=NATIVE_IMPORTS)
    x = np.ones(3, np.float32)
    wrong: list[BaseException] = []
    failures = [0]
    start = threading.Barrier(2)

    def failing() -> None:
        start.wait()
        for _ in range(300):
            with pytest.raises(mlvm.MlvmCallError, match="f: native 'bad' failed: RuntimeError: boom"):
                m.f(x)
            failures[0] += 1

    def clean() -> None:
        start.wait()
        for _ in range(300):
            try:
                np.testing.assert_array_equal(m.g(x), -2 * x)
            except BaseException as e:  # noqa: BLE001 - any error here is the bug
                wrong.append(e)

    threads = [threading.Thread(target=failing), threading.Thread(target=clean)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong and failures[0] == 300


def test_thread_safe_errors_interleaved_calls_on_one_thread(tmp_path: Path) -> None:
    m = compiled(tmp_path, NATIVES, imports=NATIVE_IMPORTS)
    x = np.ones(3, np.float32)
    failing = m.f.begin(x)
    assert failing.status == "SUSPENDED"  # at its yield
    clean = m.g.begin(x)
    assert clean.status == "OK"
    with pytest.raises(mlvm.MlvmCallError, match="boom") as info:
        failing.resume()
    assert isinstance(info.value.__cause__, RuntimeError)
    assert failing.status == "ERR_IMPORT" and failing.resume() == "ERR_IMPORT"
    np.testing.assert_array_equal(m.g(x), -2 * x)  # nothing left over


def test_thread_safe_errors_nested_calls(tmp_path: Path) -> None:
    inner: list[mlvm.Module] = []

    def swallow(x: np.ndarray) -> np.ndarray:
        with pytest.raises(mlvm.MlvmCallError, match="boom"):
            inner[0].f(x)  # a failing call inside this native
        return x * 2

    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "good": swallow})
    inner.append(m)
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(m.g(x), -2 * x)  # the inner failure stayed inner


def test_thread_safe_errors_a_call_cannot_resume_itself(tmp_path: Path) -> None:
    calls: list[mlvm.Call] = []

    def reenter(x: np.ndarray) -> np.ndarray:
        calls[0].resume()
        return x

    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "bad": reenter})
    calls.append(m.f.begin(np.ones(3, np.float32)))
    msg = "native 'bad' failed: MlvmCallError: f: the call is already running"
    with pytest.raises(mlvm.MlvmCallError, match=msg):
        calls[0].resume()


def test_thread_safe_errors_keyboard_interrupt_passes_through(tmp_path: Path) -> None:
    def interrupt(x: np.ndarray) -> np.ndarray:
        raise KeyboardInterrupt

    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "good": interrupt})
    with pytest.raises(KeyboardInterrupt):
        m.g(np.ones(3, np.float32))


def test_thread_safe_errors_native_outside_a_call(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A native the C calls outside any begin/resume (only a damaged module
    would) reports through sys.unraisablehook and is not kept for a later call."""
    m = compiled(tmp_path, NATIVES, imports=NATIVE_IMPORTS)
    ffi = mlvm.loader._ffi
    callbacks = [o for o in m._natives if isinstance(o, ffi.CData) and ffi.typeof(o).kind == "function"]
    seen: list[Any] = []
    monkeypatch.setattr("sys.unraisablehook", seen.append)
    x = np.ones(3, np.float32)
    out = np.empty(3, np.float32)
    args = ffi.new("void *[]", [ffi.cast("void *", x.ctypes.data)])
    results = ffi.new("void *[]", [ffi.cast("void *", out.ctypes.data)])
    statuses = [cb(ffi.NULL, args, results) for cb in callbacks]
    assert sorted(statuses) == [-5, 0, 0, 0]  # "bad" failed, the others ran
    assert len(seen) == 1 and "native 'bad' called outside a call" in seen[0].err_msg
    assert isinstance(seen[0].exc_value, RuntimeError)
    np.testing.assert_array_equal(m.g(x), -2 * x)  # nothing left over


# 5. Queue.push refuses silent casts.

def test_queue_push_casts(tmp_path: Path) -> None:
    m = compiled(tmp_path, QUEUES)
    q, qi = m.queues["qa"], m.queues["i"]
    for x, message in [
        (np.zeros(2), "queue 'qa' element must have dtype float32, got float64"),
        (np.array([1e40, 0.0]), "must have dtype float32, got float64"),
        ([1e40, 0.0], "queue 'qa' element: values do not fit in float32"),
        ([16777217, 0], "values do not fit in float32"),  # 2**24 + 1 rounds
        (np.zeros((1, 2), np.float32), r"must have shape \(2,\), got \(1, 2\)"),
        (np.zeros(4, np.float32)[::2], None),  # strided: copied, fine
        (["a", "b"], "must be numbers of dtype float32"),
    ]:
        if message is None:
            assert q.push(x)
            continue
        with pytest.raises(ValueError, match=message):
            q.push(x)
    for x, message in [
        (np.array([1, 2], np.int64), "queue 'i' element must have dtype int32, got int64"),
        ([1.5, 2], "values do not fit in int32"),
        ([float("nan"), 0], "values do not fit in int32"),
        ([2**31, 0], "values do not fit in int32"),
    ]:
        with pytest.raises(ValueError, match=message):
            qi.push(x)
    assert q.push([0.1, 1.0]) and q.push(np.ones(2, np.float16)) and len(q) == 3
    assert qi.push(np.array([1, -2], np.int16)) and qi.push([3, 4]) and len(qi) == 2
    np.testing.assert_array_equal(qi.pop(), [1, -2])


def test_queue_push_scalar_elements(tmp_path: Path) -> None:
    m = compiled(tmp_path, QUEUES)
    q = m.queues["s"]
    assert q.push(1.5) and q.push(np.float32(2.5)) and q.push(np.array(3.5, np.float32))
    call = m.scalar.begin()
    assert call.status == "OK" and call.result().shape == ()
    assert float(call.result()) == 1.5
    popped = q.pop()
    assert popped is not None and popped.shape == () and float(popped) == 2.5


# 6. Native results are neither reshaped nor cast unsafely.

@pytest.mark.parametrize("fn,result,message", [
    ("g", np.zeros((3, 1), np.float32),
     r"g: native 'good' failed: ValueError: native 'good' result 0 must have shape \(3,\), got \(3, 1\)"),
    ("g", np.zeros(1, np.float32), r"result 0 must have shape \(3,\), got \(1,\)"),  # no broadcast
    ("g", np.zeros(3, np.float64), "result 0 must have dtype float32, got float64"),
    ("g", ([1e39, 0, 0],), "result 0: values do not fit in float32"),
    ("g", (np.zeros(3, np.float32), np.zeros(3, np.float32)), "returned 2 results, expected 1"),
    ("k", np.array([np.nan, 0, 0]), "result 0 must have dtype int32, got float64"),
    ("k", ([np.nan, 0, 0],), "result 0: values do not fit in int32"),
    ("k", ([0.5, 0, 0],), "result 0: values do not fit in int32"),
], ids=["reshaped", "broadcast", "float64", "overflow", "count", "nan-array", "nan-list", "fraction"])
def test_native_results_are_checked(tmp_path: Path, fn: str, result: object, message: str) -> None:
    natives = {"good": lambda x: result, "ints": lambda x: result}
    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, **natives})
    x = np.zeros(3, np.float32 if fn == "g" else np.int32)
    with pytest.raises(mlvm.MlvmCallError, match=message) as info:
        m[fn](x)
    assert isinstance(info.value.__cause__, ValueError) and "\n" not in str(info.value)


@pytest.mark.parametrize("result", [
    ([0.1, 0.2, 0.3],), ([1, 2, 3],), np.array([1, 2, 3], np.float16), np.array([1, 2, 3], np.int16),
], ids=["float-list", "int-list", "float16", "int16"])
def test_native_results_exact_conversions_pass(tmp_path: Path, result: object) -> None:
    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "good": lambda x: result})
    want = np.asarray(result[0] if isinstance(result, tuple) else result).astype(np.float32)
    np.testing.assert_array_equal(m.g(np.zeros(3, np.float32)), -want)


def test_native_results_scalar(tmp_path: Path) -> None:
    m = compiled(tmp_path, NATIVES, imports={**NATIVE_IMPORTS, "scalar": lambda x: float(x) + 0.5})
    y = m.s(np.array(1.0, np.float32))
    assert y.shape == () and float(y) == 1.5


# 7. Unaligned inputs.

def unaligned(dtype: type[np.generic], n: int, offset: int = 1) -> np.ndarray:
    raw = np.zeros(n * 4 + 8, np.uint8)
    x = np.frombuffer(raw.data, dtype=dtype, count=n, offset=offset)
    assert x.flags.c_contiguous and x.flags.aligned == (offset % 4 == 0)
    return x


def test_unaligned_inputs_are_refused(tmp_path: Path) -> None:
    m = compiled(tmp_path, PLAIN)
    x, i = np.ones(4, np.float32), np.zeros(4, np.int32)
    for off in (1, 2, 3):
        with pytest.raises(ValueError, match=r"main: input 0 \('x'\) is not aligned"):
            m.main(unaligned(np.float32, 4, off), i)
        with pytest.raises(ValueError, match=r"main: input 1 \('i'\) is not aligned"):
            m.main(x, unaligned(np.int32, 4, off))
        with pytest.raises(ValueError, match=r"main: input 0 \('x'\) is not aligned"):
            m.main.begin(unaligned(np.float32, 4, off), i)
    y = unaligned(np.float32, 4, 4)  # offset, yet aligned
    np.testing.assert_array_equal(m.main(y, i), -y)
    np.testing.assert_array_equal(m.main(np.array(unaligned(np.float32, 4)), i), np.zeros(4))


# 8. Files that are not modules.

def test_missing_file_and_non_modules(tmp_path: Path) -> None:
    refused(tmp_path / "nope.so", "nope.so: no such file$")
    with pytest.raises(ValueError, match="nope.so: no such file$"):
        mlvm.load("nope.so")  # the public entry, a relative name
    refused(tmp_path, "is not a file$")
    (tmp_path / "text.so").write_text("not a shared object\n")
    refused(tmp_path / "text.so", "text.so: cannot load shared object: ")
    (tmp_path / "empty.so").write_bytes(b"")
    refused(tmp_path / "empty.so", "cannot load shared object: ")
    (tmp_path / "other.c").write_text("int mlvm_other_symbol = 1;\n")
    other = build_shared(tmp_path / "other.c", tmp_path / "other.so")
    refused(other, "not an mlvm module \\(no mlvm_so_module symbol\\)")
