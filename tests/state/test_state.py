"""Module state (mlvm.global): persistence across calls, begin/resume,
instances, the Python mapping, and the in-place storage of loads and stores
checked against the numpy reference under every pass combination."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func

import mlvm
from mlvm import reference
from mlvm.analysis.storage import analyze
from mlvm.diagnostics import MlvmError
from mlvm.dialect.state import state_key
from mlvm.pipeline import CompileOptions, parse_file

MODEL = Path(__file__).parent / "model.mlir"
RNG = np.random.default_rng(7)
PARAMS = {
    "w0": RNG.standard_normal((3, 5)).astype(np.float32),
    "a0": RNG.standard_normal(7).astype(np.float32),
}
# Each pass that changes where bytes live, on and off.
VARIANTS = {
    "default": CompileOptions(),
    "plain": CompileOptions(canonicalize=False, fuse=False, inplace=False),
    "no-fuse": CompileOptions(fuse=False),
    "no-inplace": CompileOptions(inplace=False),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def m(request: pytest.FixtureRequest) -> mlvm.Module:
    return mlvm.compile(MODEL, params=PARAMS, options=VARIANTS[request.param])


@pytest.fixture
def fresh(m: mlvm.Module) -> mlvm.Module:
    m.reset_state()
    return m


def ref_state() -> dict[str, Any]:
    return dict(PARAMS)


def ref_call(state: dict[str, Any], fn: str, *args: np.ndarray) -> list[np.ndarray]:
    module, _ = parse_file(MODEL)
    return reference.run(module, fn, list(args), state)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_initial_values(fresh: mlvm.Module) -> None:
    s = fresh.state
    assert set(s) == {"count", "w", "v", "calls", "a", "b"}
    assert same_bits(s["w"], PARAMS["w0"]) and same_bits(s["a"], PARAMS["a0"])
    assert not s["count"].any() and s["calls"].dtype == np.int32 and s["calls"] == 0


def test_state_persists_across_calls(fresh: mlvm.Module) -> None:
    x = np.arange(4, dtype=np.float32)
    for k in range(1, 4):
        assert same_bits(fresh.step(x), k * x)
    assert same_bits(fresh.state["count"], 3 * x)


def test_every_function_matches_the_reference_over_many_calls(fresh: mlvm.Module) -> None:
    state = ref_state()
    rng = np.random.default_rng(1)
    for _ in range(5):
        for fn, args in (
            ("step", [rng.standard_normal(4).astype(np.float32)]),
            ("sgd", [rng.standard_normal((3, 5)).astype(np.float32), np.array(0.1, np.float32)]),
            ("swap", []),
            ("reread", [rng.standard_normal(7).astype(np.float32)]),
            ("peek", []),
        ):
            want = ref_call(state, fn, *args)
            got = fresh[fn](*args)
            got = list(got) if isinstance(got, tuple) else [got]
            for g, w in zip(got, want, strict=True):
                if fn == "sgd":  # a sum: the C may add in another order
                    np.testing.assert_allclose(g, w, rtol=1e-5)
                else:
                    assert same_bits(g, w), fn
    for name in fresh.state:
        key = state_key(name)
        want = state[key] if key in state else None
        if want is not None:
            assert same_bits(fresh.state[name], want), name


def test_swap_reads_both_values_before_either_store(fresh: mlvm.Module) -> None:
    a0 = fresh.state["a"]
    assert same_bits(fresh.swap(), a0)
    assert not fresh.state["a"].any() and same_bits(fresh.state["b"], a0)
    fresh.swap()
    assert same_bits(fresh.state["a"], a0) and not fresh.state["b"].any()


def test_state_persists_across_begin_and_resume(fresh: mlvm.Module) -> None:
    x = np.ones(4, np.float32)
    call = fresh.slow_step.begin(x)
    assert call.status == "SUSPENDED"
    assert not fresh.state["count"].any()  # nothing stored before the resume
    assert call.resume() == "OK"
    assert same_bits(call.result(), x) and same_bits(fresh.state["count"], x)
    # A suspending call copies what it loads: a store by another call while
    # it waits does not change the value it loaded.
    call = fresh.slow_step.begin(x)
    fresh.step(10 * x)
    call.resume()
    assert same_bits(call.result(), 2 * x)
    assert same_bits(fresh.state["count"], 2 * x)


def test_two_instances_have_separate_state(m: mlvm.Module) -> None:
    other = mlvm.load(m.path)
    m.reset_state()
    x = np.ones(4, np.float32)
    m.step(x)
    m.step(x)
    assert same_bits(other.step(x), x)
    assert same_bits(m.state["count"], 2 * x) and same_bits(other.state["count"], x)


def test_mapping_has_copy_semantics(fresh: mlvm.Module) -> None:
    got = fresh.state["count"]
    got[:] = 5
    assert not fresh.state["count"].any()
    value = np.full(4, 2, np.float32)
    fresh.state["count"] = value
    value[:] = 9
    assert same_bits(fresh.state["count"], np.full(4, 2, np.float32))
    fresh.state["calls"] = 41
    fresh.sgd(np.zeros((3, 5), np.float32), np.array(0, np.float32))
    assert fresh.state["calls"] == 42


def test_mapping_refuses_what_would_change_values(fresh: mlvm.Module) -> None:
    with pytest.raises(KeyError, match="no global 'nope'"):
        fresh.state["nope"]
    with pytest.raises(ValueError, match=r"global 'count' must have shape \(4,\)"):
        fresh.state["count"] = np.zeros(5, np.float32)
    with pytest.raises(ValueError, match="dtype int32"):
        fresh.state["calls"] = np.zeros((), np.float64)
    with pytest.raises(TypeError):
        del fresh.state["count"]
    assert "count: float32 (4,)" in repr(fresh.state)


def test_reset_state(fresh: mlvm.Module) -> None:
    fresh.step(np.ones(4, np.float32))
    fresh.swap()
    fresh.reset_state()
    assert not fresh.state["count"].any() and same_bits(fresh.state["a"], PARAMS["a0"])


def test_save_and_load(fresh: mlvm.Module, tmp_path: Path) -> None:
    fresh.step(np.full(4, 3, np.float32))
    fresh.state.save(tmp_path / "s.npz")
    fresh.reset_state()
    fresh.state.load(tmp_path / "s.npz")
    assert same_bits(fresh.state["count"], np.full(4, 3, np.float32))
    # All globals of the archive are checked before any is written.
    np.savez(tmp_path / "bad.npz", count=np.ones(4, np.float32), w=np.ones(2, np.float32))
    with pytest.raises(ValueError, match="global 'w'"):
        fresh.state.load(tmp_path / "bad.npz")
    assert same_bits(fresh.state["count"], np.full(4, 3, np.float32))


def test_out_argument_uses_the_instance(fresh: mlvm.Module) -> None:
    out = np.empty(4, np.float32)
    fresh.step(np.ones(4, np.float32), out=out)
    assert same_bits(out, np.ones(4, np.float32))
    assert same_bits(fresh.step(x=np.ones(4, np.float32)), np.full(4, 2, np.float32))


# -- where loads and stores put their bytes ---------------------------------


def _kinds(module: Any, fn: str) -> dict[str, str]:
    f = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == fn)
    fs = analyze(f)
    out = {}
    for op in f.body.block.ops:
        for r in op.results:
            if r.name_hint:
                out[r.name_hint] = fs.of(r).kind
    return out


def test_loads_and_stores_use_state_in_place_where_safe() -> None:
    module, _ = parse_file(MODEL)
    for p in CompileOptions().passes():
        p.apply(Context(), module)
    step = _kinds(module, "step")
    assert step["c"] == "state"   # read where it lies
    assert step["n"] == "output"  # returned: copied into the state by the store
    swap = _kinds(module, "swap")
    assert swap["a"] != "state"  # @a is stored while a is still read
    assert swap["b"] == "state"  # read by the store to @a, before @b is stored
    reread = _kinds(module, "reread")
    assert reread["a"] == "state" and reread["again"] != "state"
    assert _kinds(module, "slow_step")["c"] != "state"  # suspends: copied


def test_sgd_updates_the_globals_in_their_bytes() -> None:
    module, _ = parse_file(MODEL)
    for p in CompileOptions(fuse=False).passes():
        p.apply(Context(), module)
    sgd = _kinds(module, "sgd")
    assert sgd["v"] == "state" and sgd["nv"] == "state"
    assert sgd["w"] == "state" and sgd["nw"] == "state"


# -- errors ------------------------------------------------------------------


def _compile_text(tmp_path: Path, text: str, params: dict[str, np.ndarray] | None = None) -> str:
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    with pytest.raises(MlvmError) as info:
        mlvm.compile(path, params=params)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


GLOBAL = '"mlvm.global"() <{sym_name = "g", type = tensor<4xf32>%s}> : () -> ()\n'
FUNC = "func.func @f(%%x: tensor<4xf32>) -> tensor<4xf32> {\n  %s\n  func.return %%x : tensor<4xf32>\n}\n"


@pytest.mark.parametrize(
    ("text", "params", "match"),
    [
        (GLOBAL % "" + FUNC % '%c = "mlvm.global_load"() <{global = @h}> : () -> tensor<4xf32>',
         None, r"bad.mlir:3:3: error: mlvm.global_load: @h is not an mlvm.global"),
        (GLOBAL % "" + FUNC % '%c = "mlvm.global_load"() <{global = @g}> : () -> tensor<2x2xf32>',
         None, r"@g is tensor<4xf32>, but the op's value is tensor<2x2xf32>"),
        (GLOBAL % "" + FUNC % '"mlvm.global_store"(%x) <{global = @f}> : (tensor<4xf32>) -> ()',
         None, r"mlvm.global_store: @f is not an mlvm.global"),
        (GLOBAL % ', init = "p"' + FUNC % "", None,
         r"bad.mlir:1:1: error: mlvm.global: parameter 'p' \(the initial value of @g\) is not in"),
        (GLOBAL % ', init = "p"' + FUNC % "", {"p": np.zeros(5, np.float32)},
         r"parameter 'p' is float32 \(5,\) in the archive but @g is tensor<4xf32>"),
        ('"mlvm.global"() <{sym_name = "g", type = tensor<?xf32>}> : () -> ()\n' + FUNC % "",
         None, r"a global needs a static shape"),
        ('"mlvm.global"() <{sym_name = "g", type = tensor<4xf80>}> : () -> ()\n' + FUNC % "",
         None, r"a global must have an element type mlvm supports"),
        ('"mlvm.global"() <{sym_name = "g", type = tensor<1048576x1048576xf32>}> : () -> ()\n'
         + FUNC % "", None, r"the module state needs more than the limit of"),
        (GLOBAL % "" + GLOBAL % "" + FUNC % "", None, r'Redefinition of symbol "g"'),
    ],
)
def test_invalid_state_is_refused_in_one_line(
    tmp_path: Path, text: str, params: dict[str, np.ndarray] | None, match: str
) -> None:
    import re

    assert re.search(match, _compile_text(tmp_path, text, params))


def test_reference_keeps_state_in_its_params() -> None:
    state: dict[str, Any] = ref_state()
    x = np.ones(4, np.float32)
    ref_call(state, "step", x)
    ref_call(state, "step", x)
    assert same_bits(state[state_key("count")], 2 * x)


def test_pass_combinations_agree_bit_for_bit() -> None:
    """Every variant, the same sequence of calls, the same bits."""
    results = {}
    for name, opts in VARIANTS.items():
        mod = mlvm.compile(MODEL, params=PARAMS, options=opts)
        mod.reset_state()
        rng = np.random.default_rng(3)
        outs = []
        for _ in range(3):
            g = rng.standard_normal((3, 5)).astype(np.float32)
            outs.append(mod.sgd(g, np.array(0.05, np.float32)))
            outs.extend(mod.reread(rng.standard_normal(7).astype(np.float32)))
        outs.extend(mod.state[k] for k in sorted(mod.state))
        results[name] = b"".join(o.tobytes() for o in outs)
    assert len(set(results.values())) == 1


def test_a_suspending_call_takes_names_and_out(fresh: mlvm.Module) -> None:
    """slow_step has no one-shot entry: by name and with out= it runs to its
    end and writes the caller's array, which is checked first."""
    x = np.ones(4, np.float32)
    o = np.empty(4, np.float32)
    assert fresh.slow_step(x=x, out=o) is o and same_bits(o, x)
    with pytest.raises(ValueError, match=r"out\[0\] \('out0'\) must be float32 \(4,\)"):
        fresh.slow_step(x, out=np.empty(3, np.float32))
    assert same_bits(fresh.state["count"], x)  # the refused call did not run
