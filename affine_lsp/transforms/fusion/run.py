"""One greedy run of fuse-all over one function, and the cached legality questions.

A run is greedy, like MLIR's pass: dead nests are removed (`dead.py`, proven),
then for each nest (in order) the nests before it that it depends on are fused
into it, the most recent first, at the best depth within the tolerance; then
nests that read the same memrefs (siblings) are fused, the later one into the
earlier one when that costs less. After every step the text is parsed again, so
each step is checked against the code it actually transforms. Only fusions that
remove the first nest are taken (keeping it would not reduce the work left).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, FuncOp, ModuleModel
from affine_lsp.poly.budgets import past
from affine_lsp.transforms.edits import EditMap
from affine_lsp.transforms.fusion.dead import Removal, removal
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.interchange import Permuted, sink_sequential_loops
from affine_lsp.transforms.fusion.nests import loops_in, memrefs_touched, nest_blocks

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
    permuted: tuple[str, ...] = ()  # the second nest's loops, reordered first (MLIR's way)


@dataclass(frozen=True)
class Removed:
    """A dead nest removed: nothing reads what it writes before it is overwritten."""

    function: str
    line: int  # 1-based, in the text the removal was applied to


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def worth_trying(first: AffineForOp, second: AffineForOp, mode: str) -> bool:
    """Producer-consumer: the first nest writes what the second reads or writes;
    sibling: they read a memref in common (dependences are left to the proof)."""
    first_reads, first_writes = memrefs_touched(first)
    second_reads, second_writes = memrefs_touched(second)
    if mode == PRODUCER_CONSUMER:
        return bool(first_writes & (second_reads | second_writes))
    return bool(first_reads & second_reads)


@dataclass
class State:
    """A document during fuse-all and the function being fused in it (modelled)."""

    data: bytes
    model: ModuleModel  # for the alias table and module facts (unchanged by fusion)
    function: FuncOp
    key: bytes = b""

    def __post_init__(self) -> None:
        self.key = hashlib.blake2b(self.data, digest_size=16).digest()

    def score(self) -> tuple[int, int]:
        """What fuse-all minimises: top-level nests of the function, then all its loops."""
        body = self.function.body
        top = len(loops_in(body.entry)) if body is not None and body.entry is not None else 0
        loops = sum(1 for op in self.function.walk() if isinstance(op, AffineForOp))
        return top, loops


@dataclass(frozen=True)
class Move:
    """A fusion as the search names it: the two nests' texts, the mode, the direction."""

    mode: str
    backward: bool
    first: bytes
    second: bytes


@dataclass
class Step:
    """A step taken: its report and, for fusions of top-level nests, the move (for the
    search to forbid)."""

    report: Fusion | Removed
    move: Move | None


class Evaluator:
    """Every legality question of one fuse-all, asked once (answers cached by the
    document's text and the nests' places); `evaluations` counts the pair fusions
    analysed."""

    def __init__(self, options: FusionOptions, deadline: float | None) -> None:
        self.options = replace(options, keep_producer=False)
        self.deadline = deadline
        self.complete = True
        self.evaluations = 0
        self._fusions: dict[tuple, Candidate | None] = {}
        self._removals: dict[tuple, Removal | None] = {}
        self._permuted: dict[tuple, Permuted | None] = {}
        self._failed_windows: set[tuple] = set()

    def out_of_time(self) -> bool:
        return past(self.deadline)

    def removal(self, state: State, nest: AffineForOp) -> Removal | None:
        key = (state.key, nest.span.start_byte)
        if key not in self._removals:
            if not self.complete or self.out_of_time():
                self.complete = False
                return None
            found = removal(state.data, state.model, state.function, nest, self.options.budget)
            self._removals[key] = found
        return self._removals[key]

    def permuted(self, state: State, nest: AffineForOp) -> Permuted | None:
        """`nest` with its dependence-carrying loops sunk inward (proven), or None."""
        key = (state.key, nest.span.start_byte)
        if key not in self._permuted:
            if not self.complete or self.out_of_time():
                return None
            self._permuted[key] = sink_sequential_loops(
                state.data, state.model, state.function, nest, self.options.budget
            )
        return self._permuted[key]

    def fusion(
        self, state: State, first: AffineForOp, second: AffineForOp, mode: str
    ) -> Candidate | None:
        """The best fusion of `first` into `second` (either may come first), or None."""
        key = (state.key, first.span.start_byte, second.span.start_byte, mode)
        if key in self._fusions:
            return self._fusions[key]
        low, high = sorted((first, second), key=lambda op: op.span.start_byte)
        window = (
            state.function.symbol,
            state.data[low.span.start_byte : high.span.end_byte],
            mode,
            first is high,
        )
        if window in self._failed_windows or not self.complete:
            return None
        fusion = PairFusion(
            state.data,
            state.model,
            state.function,
            first,
            second,
            mode,
            self.options.until(self.deadline),
        )
        best = fusion.best()
        self.evaluations += 1
        if best is None or best.new_text is None or best.function is None:
            if fusion.ran_out and self.out_of_time():
                self.complete = False  # no verdict on this pair: stop here
            else:
                self._failed_windows.add(window)
            best = None
        self._fusions[key] = best
        return best


class GreedyRun:
    """One greedy run over one function, never making the moves in `banned`."""

    def __init__(
        self,
        evaluator: Evaluator,
        state: State,
        modes: tuple[str, ...],
        banned: frozenset[Move] = frozenset(),
    ) -> None:
        self.evaluator = evaluator
        self.state = state
        self.modes = modes
        self.banned = banned
        self.steps: list[Step] = []

    def run(self) -> GreedyRun:
        """Remove dead nests and fuse producer-consumer pairs, then siblings, until
        nothing changes. Within one pass a nest that has just absorbed another is not
        fused into the next one: a chain of n nests then fuses pairwise, in log(n)
        passes, and each fusion is checked on nests of similar sizes."""
        progress = True
        while progress and len(self.steps) < MAX_FUSIONS:
            progress = False
            for mode in self.modes:
                fresh: set[int] = set()
                while len(self.steps) < MAX_FUSIONS:
                    moved = self._remove_dead(fresh)
                    if moved is None:
                        moved = self._fuse_one(mode, fresh)
                    if moved is None:
                        break
                    fresh = moved
                    progress = True
        return self

    def _apply(
        self, new_text: bytes, function: FuncOp, edits: list[list[TextEdit]], fresh: set[int]
    ) -> set[int]:
        """Move to the state after `edits` (lists applied one after the other); the
        fresh offsets, moved (those inside an edit are dropped)."""
        self.state = State(new_text, self.state.model, function)
        moved: set[int] = set(fresh)
        for step in edits:
            mapping = EditMap(step)
            moved = {o for o in (mapping.to_new(offset) for offset in moved) if o is not None}
        return moved

    def _remove_dead(self, fresh: set[int]) -> set[int] | None:
        """Remove the first dead nest (the fresh offsets, moved), or None."""
        for block in nest_blocks(self.state.function):
            for nest in loops_in(block):
                found = self.evaluator.removal(self.state, nest)
                if found is None:
                    continue
                report = Removed(
                    self.state.function.symbol, _line(self.state.data, nest.span.start_byte)
                )
                self.steps.append(Step(report, None))
                return self._apply(found.new_text, found.function, [found.edits], fresh)
        return None

    def _fuse_one(self, mode: str, fresh: set[int]) -> set[int] | None:
        """Do one fusion in the function (the fresh offsets, moved, with the fused
        nest's), or None."""
        for block in nest_blocks(self.state.function):
            loops = loops_in(block)
            for j, second in enumerate(loops):
                for first in reversed(loops[:j]):
                    chosen = self._pair(first, second, mode, fresh)
                    if chosen is None:
                        continue
                    data = self.state.data
                    top = isinstance(block.parent_op, FuncOp)
                    move = self._move(chosen.copied, chosen.host, mode) if top else None
                    best = chosen.candidate
                    report = Fusion(
                        self.state.function.symbol,
                        _line(data, chosen.copied.span.start_byte),
                        _line(data, chosen.host.span.start_byte),
                        mode,
                        best.depth,
                        best.extra or 0.0,
                        tuple(chosen.permuted.order) if chosen.permuted else (),
                    )
                    assert best.new_text is not None and best.function is not None
                    self.steps.append(Step(report, move))
                    edits = [chosen.permuted.edits] if chosen.permuted else []
                    fresh = self._apply(best.new_text, best.function, [*edits, best.edits], fresh)
                    if best.host_offset is not None:
                        fresh.add(best.host_offset)
                    return fresh
        return None

    def _move(self, copied: AffineForOp, host: AffineForOp, mode: str) -> Move:
        data = self.state.data
        return Move(
            mode,
            copied.span.start_byte > host.span.start_byte,
            data[copied.span.start_byte : copied.span.end_byte],
            data[host.span.start_byte : host.span.end_byte],
        )

    def _pair(
        self, first: AffineForOp, second: AffineForOp, mode: str, fresh: set[int]
    ) -> Choice | None:
        """The fusion to make of the pair, or None: the earlier nest into the later one
        (producer-consumer: into the later one with its dependence-carrying loops sunk
        inward, where that is needed or costs less), or (siblings) the later into the
        earlier where that costs less."""
        if not worth_trying(first, second, mode):
            return None
        options = [(first, second)]
        if mode == SIBLING:
            options.append((second, first))
        found: list[Choice] = []
        for copied, host in options:
            if copied.span.start_byte in fresh or self._move(copied, host, mode) in self.banned:
                continue
            best = self.evaluator.fusion(self.state, copied, host, mode)
            if best is not None:
                found.append(Choice(copied, host, best))
                if not best.extra:
                    break
        if mode == PRODUCER_CONSUMER and (not found or found[0].candidate.extra):
            permuted = self._into_permuted(first, second)
            if permuted is not None:
                found.append(permuted)
        if not found:
            return None
        return min(found, key=lambda choice: choice.candidate.extra or 0.0)

    def _into_permuted(self, copied: AffineForOp, host: AffineForOp) -> Choice | None:
        """`copied` fused into `host` once the host's dependence-carrying loops are sunk
        inward (MLIR's order), or None."""
        permuted = self.evaluator.permuted(self.state, host)
        if permuted is None:
            return None
        state = State(permuted.new_text, self.state.model, permuted.function)
        loops = {op.span.start_byte: op for op in permuted.function.walk()}
        new_copied = loops.get(EditMap(permuted.edits).to_new(copied.span.start_byte) or -1)
        new_host = loops.get(permuted.nest_offset)
        if not isinstance(new_copied, AffineForOp) or not isinstance(new_host, AffineForOp):
            return None
        best = self.evaluator.fusion(state, new_copied, new_host, PRODUCER_CONSUMER)
        return Choice(copied, host, best, permuted) if best is not None else None


@dataclass
class Choice:
    """A fusion chosen for a pair: the nest copied, the host, the candidate (on the
    text after the permutation of the host's loops, if there is one)."""

    copied: AffineForOp
    host: AffineForOp
    candidate: Candidate
    permuted: Permuted | None = None
