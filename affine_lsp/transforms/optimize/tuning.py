"""`--tune`: a few candidate schedules of one function, each optimized and proven,
compiled and timed (`tune.py`); the model's choice is kept unless another is
clearly faster.

The candidates are the model's choice and its variants (`VARIANTS`: tile sizes
halved and doubled, unroll-and-jam by at most 4 or 2, none; a register tile
wherever one fits), and the original. The function is compiled alone, with the
alias definitions of its document, apart from the harness that calls it; a
function that calls others, or whose arguments the harness cannot make up, is
not tuned (`TuneError` says why, and the model's choice stands). Another
candidate (the original too) replaces the model's choice only when its best
time is at least `MARGIN` below the model's: a tie, or a difference within the
timing's noise, keeps the model's choice (`choose`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from affine_lsp.ir import FuncOp, ModuleModel, build_module
from affine_lsp.syntax import SourceDocument, decode
from affine_lsp.transforms.optimize.optimizer import NestReport, Options, optimize_nests
from affine_lsp.transforms.optimize.tune import (
    Program,
    Progress,
    Timing,
    TuneError,
    declaration,
    harness,
    measure,
)

VARIANTS: tuple[tuple[float, bool, int], ...] = (
    (1.0, True, 8),
    (0.5, True, 8),
    (2.0, True, 8),
    (1.0, True, 4),
    (1.0, True, 2),
    (1.0, False, 8),
)
"""(tile scale, unroll-and-jam, its largest factor) of each candidate, the model's
own first."""
MARGIN = 0.05
"""How much faster (a fraction of the model's time) another candidate must be
to replace the model's choice."""
REGISTER_TILE = True
"""Also a candidate with a register tile wherever one fits (`Options.register_tile`):
the model takes one only where it predicts fewer cycles."""


@dataclass
class Tuned:
    """The chosen text and its reports, and what the timing found (in words)."""

    data: bytes
    reports: list[NestReport]
    words: str


def program(data: bytes, function_start: int) -> Program:
    """The function starting at `function_start` with the document's alias
    definitions (a module to compile alone, the function public), and its
    harness with the same definitions and the function's declaration."""
    model = build_module(SourceDocument(data).tree.root_node)
    function = _function_at(model, function_start)
    aliases = [
        decode(data[item.span.start_byte : item.span.end_byte])
        for item in model.items
        if item.alias is not None
    ]
    own = decode(data[function.span.start_byte : function.span.end_byte])
    own = _PRIVATE.sub("func.func ", own, count=1)
    return Program(
        "\n".join([*aliases, own]) + "\n",
        "\n".join([*aliases, declaration(function), harness(function)]),
    )


_PRIVATE = re.compile(r"^func\.func\s+private\s+")


def _function_at(model: ModuleModel, start: int) -> FuncOp:
    for op in model.walk():
        if isinstance(op, FuncOp) and op.span.start_byte == start:
            return op
    raise TuneError("the function could not be found again")


def tune_function(
    data: bytes,
    function_start: int,
    starts: list[int],
    options: Options,
    progress: Progress | None = None,
) -> Tuned:
    """The fastest of the candidates for the nests at `starts` (in the function at
    `function_start`); TuneError when nothing could be timed."""
    candidates: list[tuple[str, bytes, list[NestReport]]] = [("the original", data, [])]
    seen = {data}
    model_text = data
    for number, (variant, words) in enumerate(candidate_options(options)):
        text, reports = optimize_nests(data, starts, variant)
        if number == 0:
            model_text = text  # (the model's own schedule comes first)
        if text in seen:
            continue
        seen.add(text)
        candidates.append((words, text, reports))
    if len(candidates) == 1:
        raise TuneError("no candidate schedule changes the code")
    model = next(index for index, item in enumerate(candidates) if item[1] == model_text)
    timings = measure(
        [program(text, function_start) for _, text, _ in candidates], progress=progress
    )
    best = choose(timings, model)
    reference = timings[0]
    assert reference is not None
    words, text, reports = candidates[best]
    chosen = timings[best]
    assert chosen is not None
    count = len(candidates) - 1
    return Tuned(text, reports, _summary(count, words, chosen, reference, best == model))


def choose(timings: list[Timing | None], model: int, margin: float = MARGIN) -> int:
    """The candidate to keep: the model's (`model`; 0 is the original), unless
    another's best time is more than `margin` of the model's below it (the
    fastest such one). A candidate that could not be timed is never chosen."""
    incumbent = model if timings[model] is not None else 0
    current = timings[incumbent]
    assert current is not None
    best = incumbent
    for index, timing in enumerate(timings):
        chosen = timings[best]
        assert chosen is not None
        if timing is None or timing.seconds >= current.seconds * (1.0 - margin):
            continue
        if timing.seconds < chosen.seconds:
            best = index
    return best


def _summary(count: int, words: str, chosen: Timing, reference: Timing, model: bool) -> str:
    ratio = reference.seconds / max(chosen.seconds, 1e-9)
    timed = f"tuned: {count} candidates timed"
    if words == "the original":
        return (
            f"{timed}, the original clearly faster ({reference.seconds * 1e3:.2f} ms); "
            "the original is kept"
        )
    why = "none clearly faster" if model else "the fastest"
    return (
        f"{timed}; kept {words}, {why} ({chosen.seconds * 1e3:.2f} ms, "
        f"{ratio:.2f}x the original's {reference.seconds * 1e3:.2f} ms)"
    )


def candidate_options(options: Options) -> list[tuple[Options, str]]:
    """The options of each candidate and its words: the model's own first, then a
    register tile wherever one fits (`Options.register_tile`: the model takes one
    only where it predicts fewer cycles), then the other `VARIANTS`."""
    found = []
    for scale, jam, most in VARIANTS:
        variant = replace(options, tile_scale=scale, jam=jam, most_jam=most)
        found.append((variant, _variant_words(scale, jam, most)))
    tiled = replace(options, register_tile=True)
    found.insert(1, (tiled, _variant_words(1.0, True, 8, register_tile=True)))
    return found


def _variant_words(scale: float, jam: bool, most: int, register_tile: bool = False) -> str:
    parts = ["a register tile wherever one fits"] if register_tile else []
    if scale != 1.0:
        parts.append(f"tiles x{scale:g}")
    if not jam:
        parts.append("no unroll-and-jam")
    elif most < 8:
        parts.append(f"unroll-and-jam by at most {most}")
    return "the model's schedule" + (f" ({', '.join(parts)})" if parts else "")
