"""Fuse everything worth fusing in a document, greedily, one checked fusion at a time.

Like MLIR's pass: for each nest (in order) the nests before it that produce
what it reads are fused into it, the most recent first, at the best depth
within the tolerance; then nests that read the same memrefs (siblings) are
fused. After every fusion the text is parsed again, so each step is checked
against the code it actually transforms. Only fusions that remove the first
nest are taken (keeping it would not reduce the work left).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel, build_module
from affine_lsp.poly import deadline_after, past
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.edits import EditMap
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.nests import (
    are_siblings,
    functions,
    loops_in,
    memrefs_touched,
    nest_blocks,
)

MAX_FUSIONS = 10_000


@dataclass(frozen=True)
class Fusion:
    """One fusion done: where, how deep, at what extra cost."""

    function: str
    first_line: int  # 1-based lines in the text the fusion was applied to
    second_line: int
    mode: str
    depth: int
    extra: float


@dataclass
class FuseAllResult:
    text: bytes
    fusions: list[Fusion] = field(default_factory=list)
    complete: bool = True  # False: the time limit stopped it (`text` has the fusions done)


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _worth_trying(first: AffineForOp, second: AffineForOp, mode: str) -> bool:
    if mode == PRODUCER_CONSUMER:
        _, first_writes = memrefs_touched(first)
        second_reads, _ = memrefs_touched(second)
        return bool(first_writes & second_reads)
    return are_siblings(first, second)


class _Greedy:
    def __init__(
        self,
        data: bytes,
        options: FusionOptions,
        only: set[str] | None,
        modes: tuple[str, ...] = (PRODUCER_CONSUMER, SIBLING),
        time_limit: float | None = None,
    ) -> None:
        self.modes = modes
        self.deadline = deadline_after(time_limit)
        self.complete = True
        self.data = data
        self.options = replace(options, keep_producer=False)
        self.only = only
        self.failed: set[tuple[bytes, str]] = set()
        self.fusions: list[Fusion] = []
        self.last_edits: list = []

    def run(self) -> FuseAllResult:
        model = build_module(SourceDocument(self.data).tree.root_node)
        index = 0
        while True:
            found = list(functions(model))
            if index >= len(found):
                break
            function = found[index]
            index += 1
            if self.only is not None and function.symbol.lstrip("@") not in self.only:
                continue
            if self._fuse_function(model, function):
                # Later functions moved: model the text again.
                model = build_module(SourceDocument(self.data).tree.root_node)
        return FuseAllResult(self.data, self.fusions, self.complete)

    def _fuse_function(self, model: ModuleModel, function: FuncOp) -> bool:
        """Fuse producer-consumer pairs, then siblings, until nothing changes.

        Within one pass a nest that has just absorbed another is not fused into the
        next one: a chain of n nests then fuses pairwise, in log(n) passes, and each
        fusion is checked on nests of similar sizes."""
        changed = False
        progress = True
        while progress and len(self.fusions) < MAX_FUSIONS:
            progress = False
            for mode in self.modes:
                fresh: set[int] = set()
                while len(self.fusions) < MAX_FUSIONS:
                    step = self._one(model, function, mode, fresh)
                    if step is None:
                        break
                    function, edits, consumer = step
                    mapping = EditMap(edits)
                    moved = {mapping.to_new(offset) for offset in fresh}
                    fresh = {offset for offset in moved if offset is not None}
                    fresh.add(mapping.to_new(consumer) or 0)
                    changed = progress = True
        return changed

    def _out_of_time(self) -> bool:
        return past(self.deadline)

    def _one(self, model: ModuleModel, function: FuncOp, mode: str, fresh: set[int]):
        """Do one fusion in `function`: (fused function, edits, consumer offset) or None."""
        for block in nest_blocks(function):
            loops = loops_in(block)
            for j, second in enumerate(loops):
                for first in reversed(loops[:j]):
                    if first.span.start_byte in fresh:
                        continue
                    fused = self._try(model, function, first, second, mode)
                    if fused is not None:
                        return fused, self.last_edits, second.span.start_byte
        return None

    def _try(
        self,
        model: ModuleModel,
        function: FuncOp,
        first: AffineForOp,
        second: AffineForOp,
        mode: str,
    ) -> FuncOp | None:
        if not _worth_trying(first, second, mode):
            return None
        key = (self.data[first.span.start_byte : second.span.end_byte], mode)
        if key in self.failed or not self.complete:
            return None
        fusion = PairFusion(
            self.data, model, function, first, second, mode, self.options.until(self.deadline)
        )
        best = fusion.best()
        if best is None or best.new_text is None or best.function is None:
            if fusion.ran_out and self._out_of_time():
                self.complete = False  # no verdict on this pair: stop here
            else:
                self.failed.add(key)
            return None
        self.fusions.append(
            Fusion(
                function.symbol,
                _line(self.data, first.span.start_byte),
                _line(self.data, second.span.start_byte),
                mode,
                best.depth,
                best.extra or 0.0,
            )
        )
        self.data = best.new_text
        self.last_edits = best.edits
        return best.function


def fuse_all(
    data: bytes,
    options: FusionOptions | None = None,
    only: set[str] | None = None,
    modes: tuple[str, ...] = (PRODUCER_CONSUMER, SIBLING),
    time_limit: float | None = None,
) -> FuseAllResult:
    """Fuse greedily in every function (or those named in `only`, without `@`), in the
    given modes (producer-consumer, then sibling, by default). With a `time_limit`
    (seconds) it stops when that runs out, with `complete` False."""
    return _Greedy(data, options or FusionOptions(), only, modes, time_limit).run()
