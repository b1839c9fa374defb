"""`make conformance`: the onnx package's backend test suite against mlvm.

Runs every CPU case of `onnx.backend.test.BackendTest` (node, simple,
pytorch-converted, pytorch-operator and the real models, in their light form) through
`mlvm.frontend.onnx.backend`, unchanged, in worker processes; classifies each
as passed, failed or unsupported (the importer's "unsupported ONNX ops" error);
writes the table to docs/onnx_support.md and the passing node cases to
tests/frontend/onnx/passing_node_cases.txt (the regression list `make test` runs).

    python tests/frontend/onnx/conformance.py [--jobs N] [--filter REGEX]
"""

from __future__ import annotations

import argparse
import collections
import datetime
import multiprocessing
import os
import platform
import re
import signal
import sys
import time
import unittest
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
PASSING = Path(__file__).with_name("passing_node_cases.txt")
CASE_SECONDS = 300

_bt: Any = None


def _suite() -> Any:
    global _bt
    if _bt is None:
        warnings.simplefilter("ignore")
        import onnx.backend.test

        from mlvm.frontend.onnx import backend

        _bt = onnx.backend.test.BackendTest(backend, "conformance")
    return _bt


def _kinds() -> dict[str, str]:
    """Test name -> kind (node, simple, pytorch-converted, ...)."""
    from onnx.backend.test.loader import load_model_tests

    out: dict[str, str] = {}
    for kind in ("node", "simple", "pytorch-converted", "pytorch-operator", "real"):
        for t in load_model_tests(kind=kind):
            out[f"{t.name}_cpu"] = kind
    return out


def _node_ops() -> dict[str, str]:
    """Node test name -> the op it tests (the model's first non-Constant node)."""
    from onnx.backend.test.loader import load_model_tests

    out = {}
    for t in load_model_tests(kind="node"):
        ops = [n.op_type for n in t.model.graph.node if n.op_type != "Constant"] or ["Constant"]
        out[f"{t.name}_cpu"] = ops[0]
    return out


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def run_one(name: str) -> tuple[str, str, str]:
    """(name, passed|failed|unsupported, first line of the reason)."""
    bt = _suite()
    case = next((c for c in bt.test_cases.values() if hasattr(c, name)), None)
    if case is None:
        return name, "failed", "no such test"
    test = case(name)
    result = unittest.TestResult()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        test.run(result)
    except _Timeout:
        return name, "failed", f"over {CASE_SECONDS} s"
    finally:
        signal.alarm(0)
    problems = result.errors + result.failures
    if result.skipped:
        return name, "unsupported", result.skipped[0][1]
    if not problems:
        return name, "passed", ""
    text = problems[0][1].strip().splitlines()
    last = next((ln for ln in reversed(text) if ln.strip()), "")
    if "UnsupportedModel" in last:
        why = last.split(": error: ", 1)[-1]
        return name, "unsupported", why.removeprefix("unsupported ONNX ops: ")[:200]
    return name, "failed", last[:200]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--filter", default="", help="only tests whose name matches")
    ap.add_argument("--out", default=str(ROOT / "docs" / "onnx_support.md"))
    ap.add_argument("--details", metavar="FILE", help="also write one line per case")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    kinds = _kinds()
    ops = _node_ops()
    names = sorted(n for n in kinds if re.search(args.filter, n))
    t0 = time.time()
    results: list[tuple[str, str, str]] = []
    with multiprocessing.get_context("fork").Pool(args.jobs, maxtasksperchild=50) as pool:
        for k, r in enumerate(pool.imap_unordered(run_one, names, chunksize=4), 1):
            results.append(r)
            if k % 100 == 0:
                print(f"{k}/{len(names)} in {time.time() - t0:.0f} s", file=sys.stderr)
    elapsed = time.time() - t0
    if args.details:
        Path(args.details).write_text("".join(f"{n}\t{s}\t{w}\n" for n, s, w in sorted(results)))
    write_report(Path(args.out), results, kinds, ops, elapsed, args.jobs)
    if not args.filter:
        passed = sorted(n for n, s, _ in results if s == "passed" and kinds[n] == "node")
        PASSING.write_text("\n".join(passed) + "\n")
    totals = collections.Counter(s for _, s, _ in results)
    print(f"{totals['passed']} passed, {totals['failed']} failed, "
          f"{totals['unsupported']} unsupported in {elapsed:.0f} s")
    return 0


def write_report(out: Path, results: list[tuple[str, str, str]], kinds: dict[str, str],
                 ops: dict[str, str], elapsed: float, jobs: int) -> None:
    import onnx

    by_kind: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    by_op: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    reasons: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for name, status, why in results:
        by_kind[kinds[name]][status] += 1
        if kinds[name] == "node":
            op = ops.get(name, "?")
            by_op[op][status] += 1
            if status != "passed":
                reasons[op][why.split(" (", 1)[0][:80]] += 1
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lines = [
        "# ONNX support",
        "",
        "Generated by `make conformance` (`python tests/frontend/onnx/conformance.py`):",
        "the onnx package's own backend test suite (`onnx.backend.test.BackendTest`),",
        "run unchanged against `mlvm.frontend.onnx.backend`, CPU cases only.",
        "",
        f"- date: {datetime.date.today().isoformat()}",
        f"- onnx {onnx.__version__}, Python {platform.python_version()}",
        f"- machine: {cpu}, {jobs} worker processes, {elapsed:.0f} s",
        "",
        "A case is *unsupported* when the importer refuses the model with its",
        "\"unsupported ONNX ops\" error (an op, attribute or element type it does",
        "not convert yet); *failed* is any other error or a result outside the",
        "suite's tolerance. The suite feeds every tensor as a graph input, shapes,",
        "axes and Resize scales included: the backend compiles a model whose",
        "import needs such values when it is first run, with them as constants",
        "(again for other values; `mlvm/frontend/onnx/backend.py`). A model file",
        "gets them as initializers or Constant nodes.",
        "",
        "| suite | passed | failed | unsupported | total | passed % |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for kind in ("node", "simple", "pytorch-converted", "pytorch-operator", "real"):
        c = by_kind.get(kind, collections.Counter())
        total = sum(c.values())
        pct = 100.0 * c["passed"] / total if total else 0.0
        lines.append(f"| {kind} | {c['passed']} | {c['failed']} | {c['unsupported']} | {total} | {pct:.1f} |")
    lines += [
        "",
        "## Node cases by op",
        "",
        "| op | passed | failed | unsupported | most common reason |",
        "|---|---:|---:|---:|---|",
    ]
    for op in sorted(by_op):
        c = by_op[op]
        why = reasons[op].most_common(1)[0][0].replace("|", "\\|") if reasons[op] else ""
        lines.append(f"| {op} | {c['passed']} | {c['failed']} | {c['unsupported']} | {why} |")
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
