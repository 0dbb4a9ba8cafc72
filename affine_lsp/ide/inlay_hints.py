"""Inlay hints: the trip count after each `affine.for … {`, and the map
identifier each operand of an aliased map is bound to (`#map(d0: %i)[s0: %n]`)."""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ide.analysis import DocumentAnalysis, ItemView
from affine_lsp.ide.describe import input_names, map_bindings
from affine_lsp.ide.hover import describe_loop_at
from affine_lsp.ir import AffineForOp, MapRef, Use
from affine_lsp.poly import INLAY_TRIP_COUNT_SECONDS, Unknown, deadline_after, past


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
    deadline = deadline_after(INLAY_TRIP_COUNT_SECONDS)
    for view in analysis.views(records):
        hints += _view_hints(view, start, end, deadline)
    return sorted(hints, key=lambda h: h.offset)


def _view_hints(view: ItemView, start: int, end: int, deadline: float | None) -> list[InlayHint]:
    hints: list[InlayHint] = []
    for op in view.index.ops:  # (in document order)
        if op.span.start_byte > end:
            break  # its hints, and those of the ops after it, are after the range
        if isinstance(op, AffineForOp) and op.body is not None:
            brace = op.body.span.start_byte + 1
            if start <= brace <= end and not past(deadline):
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
        for ref, dims, symbols in map_bindings(op):
            hints += _binding_hints(view, ref, dims, symbols, start, end)
    return hints


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
    dim_names, symbol_names = input_names(value)
    for names, uses in ((dim_names, dims), (symbol_names, symbols)):
        for name, use in zip(names, uses, strict=False):
            if start <= use.span.start_byte <= end and name != use.name.lstrip("%"):
                hints.append(
                    InlayHint(use.span.start_byte, f"{name}:", "parameter", pad_right=True)
                )
    return hints
