"""Inlay hints: the trip count after each `affine.for … {`, and the map
identifier each operand of an aliased map is bound to (`#map(d0: %i)[s0: %n]`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from affine_lsp.ide.analysis import DocumentAnalysis, ItemView
from affine_lsp.ide.hover import describe_loop_at
from affine_lsp.ir.model import AffineApplyOp, AffineForOp, AffineIfOp, MapRef, Use
from affine_lsp.poly import Unknown

TRIP_COUNT_SECONDS = 0.05
"""Time for the trip counts of one request; loops past it get no count hint."""


@dataclass(frozen=True)
class InlayHint:
    offset: int  # byte offset the hint is shown at
    label: str
    kind: str  # "type" (a computed fact) | "parameter" (a binding)
    tooltip: str = ""
    pad_left: bool = False
    pad_right: bool = False


def inlay_hints(analysis: DocumentAnalysis, start: int, end: int) -> list[InlayHint]:
    """Hints for the items overlapping bytes [start, end]."""
    analysis.sync()
    records = [r for r in analysis.records if r.end >= start and r.start <= end]
    hints: list[InlayHint] = []
    deadline = time.perf_counter() + TRIP_COUNT_SECONDS
    for view in analysis.views(records):
        hints += _view_hints(view, start, end, deadline)
    return sorted(hints, key=lambda h: h.offset)


def _view_hints(view: ItemView, start: int, end: int, deadline: float) -> list[InlayHint]:
    hints: list[InlayHint] = []
    for op in view.index.ops:
        if isinstance(op, AffineForOp) and op.body is not None:
            brace = op.body.span.start_byte + 1
            if start <= brace <= end and time.perf_counter() < deadline:
                answer = describe_loop_at(op, view)
                if not isinstance(answer, Unknown):
                    count = answer.trip_count
                    plural = "" if count == "1" else "s"
                    hints.append(
                        InlayHint(
                            brace,
                            f"{count} iteration{plural}",
                            "type",
                            f"iteration domain: {answer.domain}",
                            pad_left=True,
                        )
                    )
        for ref, dims, symbols in _aliased_maps(op):
            hints += _binding_hints(view, ref, dims, symbols, start, end)
    return hints


def _aliased_maps(op) -> list[tuple[MapRef, list[Use], list[Use]]]:
    if isinstance(op, AffineApplyOp) and op.map_ref is not None:
        return [(op.map_ref, op.dims, op.symbols)]
    if isinstance(op, AffineIfOp) and op.condition is not None:
        return [(op.condition, op.dims, op.symbols)]
    if isinstance(op, AffineForOp):
        return [
            (bound.map_ref, bound.dims, bound.symbols)
            for bound in (op.lower, op.upper)
            if bound is not None and bound.map_ref is not None
        ]
    return []


def _binding_hints(
    view: ItemView, ref: MapRef, dims: list[Use], symbols: list[Use], start: int, end: int
) -> list[InlayHint]:
    """`d0:` before each operand of an aliased map (inline maps show their names)."""
    if ref.alias is None:
        return []
    alias = view.context.aliases.get(ref.alias)
    value = (alias.map or alias.set) if alias is not None else None
    if value is None:
        return []
    hints = []
    for names, count, uses, prefix in (
        (value.dim_names, value.num_dims, dims, "d"),
        (value.symbol_names, value.num_symbols, symbols, "s"),
    ):
        shown = names if len(names) == count else tuple(f"{prefix}{i}" for i in range(count))
        for name, use in zip(shown, uses, strict=False):
            if start <= use.span.start_byte <= end and name != use.name.lstrip("%"):
                hints.append(
                    InlayHint(use.span.start_byte, f"{name}:", "parameter", pad_right=True)
                )
    return hints
