"""The memory plan of each function as data (JSON) and as a picture (SVG).

Read from a planned module: every arena buffer with its lifetime and offset,
the arena size, the lower bound (most bytes live at one op), and the sum of
all intermediates' sizes (what a planner that reuses nothing would need).
"""

from __future__ import annotations

from html import escape
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from mlvm.analysis.storage import analyze, nbytes
from mlvm.dialect.base import MlvmOp
from mlvm.dialect.fused import FusedYieldOp
from mlvm.dialect.ops import ReshapeOp


def _int_attr(op: func.FuncOp, name: str) -> int:
    attr = op.attributes.get(name)
    assert isinstance(attr, IntegerAttr), f"{name} missing: run mlvm-plan-memory first"
    return int(attr.value.data)


def _yielded(v: SSAValue) -> bool:
    """A fused body's result, i.e. the fused op's own (already counted) value."""
    return any(isinstance(u.operation, FusedYieldOp) for u in v.uses)


def function_report(f: func.FuncOp) -> dict[str, Any]:
    fs = analyze(f)
    ops = list(f.body.block.ops)
    buffers: list[dict[str, Any]] = []
    for iv in sorted(fs.intervals, key=lambda iv: iv.start):
        owner = iv.value.owner
        assert isinstance(owner, Operation)
        offsets = owner.attributes.get("mlvm.offsets")
        assert isinstance(offsets, DenseArrayBase)
        idx = list(owner.results).index(iv.value)  # type: ignore[arg-type]
        name = iv.value.name_hint or f"{ops[iv.start].name}#{iv.start}"
        offset = int(offsets.get_values()[idx])
        buffers.append(
            {
                "value": name,
                "op": ops[iv.start].name,
                "start": iv.start,
                "end": iv.end,
                "offset": offset,
                "bytes": iv.size,
            }
        )
    # What a planner that reuses nothing allocates for the source program:
    # every computed value that is neither a view nor returned to the caller,
    # counting the values fused loops no longer store (the ops in their bodies).
    returned = set(ops[-1].operands)
    intermediates = sum(
        nbytes(r)
        for op in f.body.block.walk()
        if isinstance(op, MlvmOp)
        and not op.IS_DATA
        and not isinstance(op, ReshapeOp)
        for r in op.results
        if r not in returned and not _yielded(r)
    )
    arena = _int_attr(f, "mlvm.arena_bytes")
    bound = _int_attr(f, "mlvm.arena_lower_bound")
    return {
        "function": f.sym_name.data,
        "arena_bytes": arena,
        "lower_bound_bytes": bound,
        "arena_over_lower_bound": arena / bound if bound else 1.0,
        "intermediate_bytes": intermediates,
        "arena_over_intermediates": arena / intermediates if intermediates else 0.0,
        "num_ops": len(ops),
        "buffers": buffers,
    }


def module_report(module: ModuleOp) -> dict[str, Any]:
    return {
        "functions": [
            function_report(op)
            for op in module.ops
            if isinstance(op, func.FuncOp) and not op.is_declaration
        ]
    }


def summary_lines(report: dict[str, Any]) -> list[str]:
    out = []
    for fr in report["functions"]:
        out.append(
            f"@{fr['function']}: arena {fr['arena_bytes']} B, lower bound "
            f"{fr['lower_bound_bytes']} B (x{fr['arena_over_lower_bound']:.3f}), "
            f"intermediates {fr['intermediate_bytes']} B "
            f"(arena is {100 * fr['arena_over_intermediates']:.1f}% of them)"
        )
    return out


def to_svg(report: dict[str, Any]) -> str:
    """Buffers as rectangles over (op index x offset); the lower bound as a line."""
    width, panel_h, margin = 760, 300, 50
    panels: list[str] = []
    y0 = 0
    for fr in report["functions"]:
        n = max(fr["num_ops"], 1)
        top = max(fr["arena_bytes"], fr["lower_bound_bytes"], 1)
        sx = (width - 2 * margin) / n
        sy = (panel_h - 2 * margin) / top

        def X(i: float) -> float:
            return margin + i * sx

        def Y(b: float) -> float:
            return y0 + panel_h - margin - b * sy

        parts = [
            f'<text x="{margin}" y="{y0 + 20}" font-size="14">@{escape(fr["function"])}: '
            f'arena {fr["arena_bytes"]} B, lower bound {fr["lower_bound_bytes"]} B</text>',
            f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(n)}" y2="{Y(0)}" stroke="black"/>',
            f'<line x1="{X(0)}" y1="{Y(0)}" x2="{X(0)}" y2="{Y(top)}" stroke="black"/>',
            f'<text x="{X(n) - 60}" y="{Y(0) + 30}" font-size="11">op index</text>',
            f'<text x="5" y="{Y(top) - 5}" font-size="11">offset (bytes)</text>',
        ]
        for i, b in enumerate(fr["buffers"]):
            hue = (i * 47) % 360
            parts.append(
                f'<rect x="{X(b["start"]):.2f}" y="{Y(b["offset"] + b["bytes"]):.2f}" '
                f'width="{max(sx * (b["end"] - b["start"] + 1), 1):.2f}" '
                f'height="{max(sy * b["bytes"], 1):.2f}" fill="hsl({hue},60%,65%)" '
                f'stroke="black" stroke-width="0.5"><title>{escape(str(b["value"]))} '
                f'({escape(b["op"])}): {b["bytes"]} B at {b["offset"]}, ops '
                f'{b["start"]}..{b["end"]}</title></rect>'
            )
        lb = Y(fr["lower_bound_bytes"])
        parts.append(
            f'<line x1="{X(0)}" y1="{lb:.2f}" x2="{X(n)}" y2="{lb:.2f}" stroke="red" '
            f'stroke-dasharray="6,3"/><text x="{X(n) - 90}" y="{lb - 4:.2f}" '
            f'font-size="11" fill="red">lower bound</text>'
        )
        panels.extend(parts)
        y0 += panel_h
    height = max(y0, panel_h)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(panels)
        + "\n</svg>\n"
    )
