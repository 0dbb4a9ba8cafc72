"""`--tune`: a few candidate schedules of one function, each optimized and proven,
compiled and timed (`tune.py`); the fastest is kept.

The candidates are the model's choice and its variants (`VARIANTS`: tile sizes
halved and doubled, unroll-and-jam by at most 4 or 2, none; a register tile
wherever one fits), and the original. The function is
compiled alone, with the alias definitions of its document; a function that
calls others, or whose arguments the harness cannot make up, is not tuned
(`TuneError` says why, and the model's choice stands).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from affine_lsp.ir import FuncOp, ModuleModel, build_module
from affine_lsp.syntax import SourceDocument, decode
from affine_lsp.transforms.optimize.optimizer import NestReport, Options, optimize_nests
from affine_lsp.transforms.optimize.tune import Progress, Timing, TuneError, harness, measure

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
REGISTER_TILE = True
"""Also a candidate with a register tile wherever one fits (`Options.register_tile`):
the model takes one only where it predicts fewer cycles."""


@dataclass
class Tuned:
    """The chosen text and its reports, and what the timing found (in words)."""

    data: bytes
    reports: list[NestReport]
    words: str


def module_text(data: bytes, function_start: int) -> str:
    """The function starting at `function_start` with the document's alias
    definitions and its harness: a module to compile alone."""
    model = build_module(SourceDocument(data).tree.root_node)
    function = _function_at(model, function_start)
    aliases = [
        decode(data[item.span.start_byte : item.span.end_byte])
        for item in model.items
        if item.alias is not None
    ]
    own = decode(data[function.span.start_byte : function.span.end_byte])
    return "\n".join([*aliases, own, harness(function)])


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
    for variant, words in candidate_options(options):
        text, reports = optimize_nests(data, starts, variant)
        if text in seen:
            continue
        seen.add(text)
        candidates.append((words, text, reports))
    if len(candidates) == 1:
        raise TuneError("no candidate schedule changes the code")
    modules = [module_text(text, function_start) for _, text, _ in candidates]
    timings = measure(modules, progress=progress)
    best = _fastest(timings)
    reference = timings[0]
    assert reference is not None
    words, text, reports = candidates[best]
    chosen = timings[best]
    assert chosen is not None
    ratio = reference.seconds / max(chosen.seconds, 1e-9)
    summary = (
        f"tuned: {len(candidates) - 1} candidates timed; kept {words} "
        f"({chosen.seconds * 1e3:.2f} ms, {ratio:.2f}x the original's "
        f"{reference.seconds * 1e3:.2f} ms)"
    )
    if best == 0:
        summary = (
            f"tuned: {len(candidates) - 1} candidates timed, none faster than the original "
            f"({reference.seconds * 1e3:.2f} ms); the original is kept"
        )
    return Tuned(text, reports, summary)


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


def _fastest(timings: list[Timing | None]) -> int:
    best = 0
    for index, timing in enumerate(timings):
        current = timings[best]
        if timing is not None and (current is None or timing.seconds < current.seconds):
            best = index
    return best


def _variant_words(scale: float, jam: bool, most: int, register_tile: bool = False) -> str:
    parts = ["a register tile wherever one fits"] if register_tile else []
    if scale != 1.0:
        parts.append(f"tiles x{scale:g}")
    if not jam:
        parts.append("no unroll-and-jam")
    elif most < 8:
        parts.append(f"unroll-and-jam by at most {most}")
    return "the model's schedule" + (f" ({', '.join(parts)})" if parts else "")
