"""One greedy run of fuse-all over one function, and the cached legality questions.

A run is greedy, like MLIR's pass: dead nests are removed (`dead.py`, proven),
then for each nest (in order) the nests before it that it depends on are fused
into it, the most recent first, at the best depth within the tolerance; then
nests that read the same memrefs (siblings) are fused, the later one into the
earlier one when that costs less. After every step the text is parsed again, so
each step is checked against the code it actually transforms. Only fusions that
remove the first nest are taken (keeping it would not reduce the work left).

Locality (`transforms.locality`) has a veto: a fusion is taken only if the fused
code loads no more cache lines than the nests it replaces (and a fusion with a
shift only if it keeps each nest's innermost loop, which vectorizes: one fused
innermost loop carrying a dependence between the nests does not), and a nest's loops
are reordered for a fusion (MLIR's sinking of the loops that carry
dependences, `interchange.py`) only if the new order loads no more lines than
the written one (both within `LOCALITY_SLACK`), so an order the user chose for
its strides stays. An unlimited tolerance (maximal fusion) lifts the veto.

Every pair a run considers and does not fuse gets a `Verdict` saying why (in
words, computed when asked), and every nest keeps the line where it started in
the input (`State.lines`), for the report. The work of a whole fuse-all is
bounded by isl operations (`Evaluator.operations`, counted in every session).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, Block, FuncOp, ModuleModel, Operation
from affine_lsp.poly import Budget, IslSession, PolyError, budgets
from affine_lsp.poly.budgets import past
from affine_lsp.syntax import decode
from affine_lsp.transforms import locality
from affine_lsp.transforms.edits import EditMap
from affine_lsp.transforms.fusion.dead import Removal, removal
from affine_lsp.transforms.fusion.engine import (
    PRODUCER_CONSUMER,
    SIBLING,
    Candidate,
    FusionOptions,
    PairFusion,
)
from affine_lsp.transforms.fusion.interchange import Permuted, sink_sequential_loops, sinking_order
from affine_lsp.transforms.fusion.nests import loops_in, memrefs_touched, nest_blocks
from affine_lsp.transforms.fusion.shift import perfect_band, shift_text

MAX_FUSIONS = 10_000

LOCALITY_SLACK = 0.25
"""A fusion or a loop order may load this much more (relative) than before: the model
ranks orders, its small differences are noise (a reordering that undoes an
interchange loads several times the lines)."""

OVER_BUDGET = "too complex to analyse within fuse --all's budget"


@dataclass(frozen=True)
class Fusion:
    """One fusion done: where (lines of the input file), how deep, at what cost."""

    function: str
    first_line: int | None  # 1-based input lines (None: a loop an earlier fusion wrote)
    second_line: int | None
    mode: str
    depth: int
    extra: float
    permuted: tuple[str, ...] = ()  # the second nest's loops, reordered first (MLIR's way)
    shift: tuple[int, ...] = ()  # the second nest's iterations shifted by this per fused loop


@dataclass(frozen=True)
class Removed:
    """A dead nest removed: nothing reads what it writes before it is overwritten."""

    function: str
    line: int | None  # 1-based, in the input file (None: a loop a fusion wrote)


@dataclass
class Verdict:
    """The answer to one pair: the fusion to make, or why there is none (`why`: a short
    reason, `detail`: every depth's reason; both computed when asked)."""

    candidate: Candidate | None
    why: Callable[[], str] = field(default=lambda: "", repr=False)
    detail: Callable[[], str] = field(default=lambda: "", repr=False)


def _said(text: str) -> Callable[[], str]:
    return lambda: text


_SSA_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+")


def canonical_text(state: State, low: Operation, high: Operation) -> str:
    """The text from `low`'s start to `high`'s end (two ops of one block, or an op and
    the function that holds it) with the values it defines renamed in order of
    appearance: two texts that differ only by those names (as fuse-all's fresh names
    make them) ask the same questions."""
    start, end = low.span.start_byte, high.span.end_byte
    defined: set[str] = set()
    for op in state.function.walk():
        if start <= op.span.start_byte < end:
            defined.update(value.name for value in op.results)
            for region in op.regions:
                for block in region.blocks:
                    defined.update(argument.name for argument in block.arguments)
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        name = match.group(0)
        if name not in defined:
            return name
        return names.setdefault(name, f"%#{len(names)}")

    return _SSA_NAME.sub(rename, decode(state.data[start:end]))


def worth_trying(first: AffineForOp, second: AffineForOp, mode: str) -> bool:
    """Producer-consumer: the first nest writes what the second reads or writes;
    sibling: they read a memref in common (dependences are left to the proof)."""
    first_reads, first_writes = memrefs_touched(first)
    second_reads, second_writes = memrefs_touched(second)
    if mode == PRODUCER_CONSUMER:
        return bool(first_writes & (second_reads | second_writes))
    return bool(first_reads & second_reads)


def _conflict(a: Operation, b: Operation) -> bool:
    """Whether two ops touch a memref in common, one of them writing it."""
    reads_a, writes_a = memrefs_touched(a)
    reads_b, writes_b = memrefs_touched(b)
    return bool(writes_a & (reads_b | writes_b) or reads_a & writes_b)


def blocked(block: Block, first: AffineForOp, second: AffineForOp) -> bool:
    """Whether no place between the nests can hold the fused nest, by the memrefs the
    ops in between touch (as MLIR decides where a fused nest goes): the ops before
    the place must not touch what the earlier nest does (one of them writing it),
    those after it what the later one does."""
    operations = block.operations
    low, high = sorted((operations.index(first), operations.index(second)))
    between = [op for op in operations[low + 1 : high] if any(memrefs_touched(op))]
    earlier, later = operations[low], operations[high]
    for split in range(len(between) + 1):
        # The ops before the place now run before the earlier nest, those after it
        # after the later nest.
        if not any(_conflict(op, earlier) for op in between[:split]) and not any(
            _conflict(op, later) for op in between[split:]
        ):
            return False
    return True


@dataclass
class State:
    """A document during fuse-all, the function being fused in it (modelled), and the
    input line of each nest (by its offset in `data`)."""

    data: bytes
    model: ModuleModel  # for the alias table and module facts (unchanged by fusion)
    function: FuncOp
    lines: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)  # input line -> the loop's iv there
    parents: dict[int, int] = field(default_factory=dict)  # input line -> its loop's (0: none)
    pieces: dict[int, int] = field(default_factory=dict)
    """Loops (by offset) that one shifted fusion wrote (by that step): the pieces one
    nest runs alone, the loops that run both and the loops in them, never fused with
    each other again."""
    key: bytes = b""

    def __post_init__(self) -> None:
        self.key = hashlib.blake2b(self.data, digest_size=16).digest()
        if not self.lines:
            for op in self.function.walk():
                if isinstance(op, AffineForOp):
                    line = self.data.count(b"\n", 0, op.span.start_byte) + 1
                    self.lines[op.span.start_byte] = line
                    if op.induction_variable is not None:
                        self.names[line] = op.induction_variable.name
            for op in self.function.walk():
                if isinstance(op, AffineForOp):
                    parent = op.parent_op
                    self.parents[self.lines[op.span.start_byte]] = (
                        self.lines.get(parent.span.start_byte, 0) if parent is not None else 0
                    )

    def iv(self, loop: AffineForOp) -> str:
        """A loop's iv as the input names it (its own name if the input has no such loop)."""
        line = self.line(loop)
        own = loop.induction_variable.name if loop.induction_variable is not None else "?"
        return self.names.get(line, own) if line is not None else own

    def line(self, nest: Operation) -> int | None:
        """The input line of a nest (where it, or the nest it was fused into, started;
        None for a loop a fusion wrote that repeats none of the input's)."""
        return self.lines.get(nest.span.start_byte)

    def score(self) -> tuple[int, int]:
        """What fuse-all minimises: top-level nests of the function (the pieces of one
        shifted fusion count as one), then all its loops."""
        body = self.function.body
        nests = loops_in(body.entry) if body is not None and body.entry is not None else []
        groups = {self.pieces.get(nest.span.start_byte) for nest in nests} - {None}
        top = len([n for n in nests if n.span.start_byte not in self.pieces]) + len(groups)
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
    analysed, `operations` the isl operations spent, up to `max_operations`."""

    def __init__(
        self,
        options: FusionOptions,
        deadline: float | None,
        max_operations: int | None = budgets.FUSE_ALL_OPERATIONS,
    ) -> None:
        self.options = replace(options, keep_producer=False, refute=True, upward=True)
        self.deadline = deadline
        self.complete = True
        self.evaluations = 0
        self.operations = 0
        self.max_operations = max_operations
        self._fusions: dict[tuple, Verdict] = {}
        self._removals: dict[tuple, Removal | None] = {}
        self._permuted: dict[tuple, Permuted | None] = {}
        self._failed_windows: dict[tuple, Verdict] = {}
        self._alive: set[tuple[str, str]] = set()
        self._lines: dict[str, locality.NestLocality | None] = {}

    @property
    def profitable(self) -> bool:
        """Whether fusions must pay: locality has a veto unless the tolerance is
        unlimited (maximal fusion, as MLIR's `maximal` option: no cost counts)."""
        return self.options.tolerance != float("inf")

    # -- budget ---------------------------------------------------------------------

    def out_of_time(self) -> bool:
        return past(self.deadline)

    @property
    def spent(self) -> bool:
        """Whether the isl operation budget is used up (no new question is asked)."""
        return self.max_operations is not None and self.operations >= self.max_operations

    def budget(self, budget: Budget) -> Budget:
        """`budget` capped by the operations left."""
        if self.max_operations is None:
            return budget
        left = max(1, self.max_operations - self.operations)
        cap = budget.max_operations
        return Budget(min(cap, left) if cap else left, budget.time_limit)

    def charge(self, session: IslSession) -> None:
        self.operations += session.operations()

    def _asking(self) -> bool:
        """Whether a new question may be asked (time and operations left)."""
        if not self.complete or self.out_of_time():
            self.complete = False
            return False
        return not self.spent

    # -- questions --------------------------------------------------------------------

    def removal(self, state: State, nest: AffineForOp) -> Removal | None:
        key = (state.key, nest.span.start_byte)
        if key not in self._removals:
            # A nest found alive stays alive while the code from it to the end of the
            # function is the same (up to the names it defines): ask once.
            alive = (state.function.symbol, canonical_text(state, nest, state.function))
            if alive in self._alive:
                return None
            if not self._asking():
                return None
            session = IslSession(self.budget(self.options.budget))
            self._removals[key] = removal(
                state.data, state.model, state.function, nest, session.budget, session
            )
            self.charge(session)
            if self._removals[key] is None:
                self._alive.add(alive)
        return self._removals[key]

    def permuted(self, state: State, nest: AffineForOp) -> Permuted | None:
        """`nest` with its dependence-carrying loops sunk inward (proven), or None."""
        key = (state.key, nest.span.start_byte)
        if key not in self._permuted:
            if not self._asking():
                return None
            self._permuted[key] = sink_sequential_loops(
                state.data, state.model, state.function, nest, self.budget(self.options.budget)
            )
        return self._permuted[key]

    def lines(self, nest: AffineForOp, model: ModuleModel) -> locality.NestLocality | None:
        """The locality of a nest (cached by its text)."""
        if nest.node is None:
            return None
        key = _text(nest)
        if key not in self._lines:
            session = IslSession(self.budget(budgets.DEPENDENCE))
            self._lines[key] = locality.cost(nest, model, session=session)
            self.charge(session)
        return self._lines[key]

    def changed_lines(
        self, before: Block, after: Block, model: ModuleModel
    ) -> tuple[float, float] | None:
        """The cache lines of the nests of a block that a rewrite changed, before and
        after it (nests whose text it left alone are not counted: they would only
        dilute the difference); None if one cannot be modelled."""
        old = [nest for nest in loops_in(before)]
        new = [nest for nest in loops_in(after)]
        new_texts = [_text(nest) for nest in new]
        for nest in list(old):
            text = _text(nest)
            if text in new_texts:
                new_texts.remove(text)
                old.remove(nest)
                new.pop(next(k for k, n in enumerate(new) if _text(n) == text))
        totals = []
        for nests, nest_model in ((old, model), (new, model)):
            total = 0.0
            for nest in nests:
                found = self.lines(nest, nest_model)
                if found is None:
                    return None
                total += found.lines
            totals.append(total)
        return totals[0], totals[1]

    def fusion(self, state: State, first: AffineForOp, second: AffineForOp, mode: str) -> Verdict:
        """The best fusion of `first` into `second` (either may come first) that locality
        allows, or why there is none."""
        key = (state.key, first.span.start_byte, second.span.start_byte, mode)
        if key in self._fusions:
            return self._fusions[key]
        low, high = sorted((first, second), key=lambda op: op.span.start_byte)
        window = (state.function.symbol, canonical_text(state, low, high), mode, first is high)
        if window in self._failed_windows:
            return self._failed_windows[window]
        if not self._asking():
            return Verdict(None, _said(OVER_BUDGET), _said(OVER_BUDGET))
        block = first.parent_block
        if block is not None and blocked(block, first, second):
            verdict = Verdict(
                None,
                _said("the code between them touches what both nests touch"),
                _said("no place between the nests can hold the fused nest"),
            )
            self._failed_windows[window] = verdict
            return verdict
        options = self.options.until(self.deadline)
        options = replace(options, budget=self.budget(options.budget))
        fusion = PairFusion(state.data, state.model, state.function, first, second, mode, options)
        best = fusion.best(
            (lambda candidate: self._locality(state, first, candidate)) if self.profitable else None
        )
        self.evaluations += 1
        self.charge(fusion.session)
        if best is None or best.new_text is None or best.function is None:
            if fusion.ran_out and self.out_of_time():
                self.complete = False  # no verdict on this pair: stop here
            verdict = Verdict(None, lambda: _short(_explaining(fusion)), lambda: _detail(fusion))
            self._failed_windows[window] = verdict
        else:
            verdict = Verdict(best)
        self._fusions[key] = verdict
        return verdict

    def _locality(self, state: State, first: AffineForOp, candidate: Candidate) -> str | None:
        """Why a fusion is refused for locality: the nests of the block that holds the
        pair load more cache lines after it, or a shift made both nests' innermost
        loops one that carries a dependence between them (None: neither)."""
        if candidate.shift and candidate.innermost_together:
            return (
                f"{shift_text(candidate.shift)} at depth {candidate.depth}, the nests' "
                "innermost loops would be one that carries a dependence from the first to "
                "the second: it would not vectorize (fuse --line does it)"
            )
        block = first.parent_block
        if candidate.function is None or block is None:
            return None
        host = next(
            (op for op in candidate.function.walk() if op.span.start_byte == candidate.host_offset),
            None,
        )
        if host is None or host.parent_block is None:
            return None
        lines = self.changed_lines(block, host.parent_block, state.model)
        if lines is None:
            return None
        before, after = lines
        if after <= before * (1 + LOCALITY_SLACK):
            return None
        return f"fused at depth {candidate.depth}, the code would load {_more(after, before)}"


def _moved(found: dict[int, int], mapping: EditMap) -> dict[int, int]:
    """`found` with its offsets moved through edits (those inside one dropped)."""
    kept: dict[int, int] = {}
    for offset, value in found.items():
        new = mapping.to_new(offset)
        if new is not None:
            kept[new] = value
    return kept


def _text(nest: Operation) -> str:
    text = nest.node.text if nest.node is not None else None
    return text.decode("utf-8", "replace") if text is not None else str(id(nest))


def _more(after: float, before: float) -> str:
    """`12% more cache lines`, `4.5x the cache lines`."""
    if before <= 0:
        return "more cache lines"
    ratio = after / before
    if ratio < 2:
        return f"{ratio - 1:.0%} more cache lines"
    return f"{ratio:.1f}x the cache lines"


EXPLANATION_OPERATIONS = 2_000_000
"""isl operations a pair's reasons may take when they are asked for (after the
decision, so not counted in the budget): the exact comparison of a refuted fusion."""


def _explaining(fusion: PairFusion) -> PairFusion:
    """The pair, its session allowed the work of explaining."""
    fusion.allow_explanations(EXPLANATION_OPERATIONS)
    return fusion


def _short(fusion: PairFusion) -> str:
    """Why a pair does not fuse, in one line: a depth refused for locality if there is
    one, else the outermost depth's reason."""
    if fusion.failure is not None:
        return OVER_BUDGET if fusion.timed_out else fusion.failure
    tried = fusion.tried()
    if not tried:
        return "no depth to fuse at"
    refused = [d for d in tried if d in fusion.refused()]
    return fusion.why_not(refused[-1] if refused else tried[0])


def _detail(fusion: PairFusion) -> str:
    """Every depth tried and its reason."""
    _explaining(fusion)
    if fusion.failure is not None:
        return _short(fusion)
    reasons = [f"depth {depth}: {fusion.why_not(depth)}" for depth in fusion.tried()]
    return "; ".join(reasons) or "no depth to fuse at"


@dataclass
class Considered:
    """A pair a run looked at and did not fuse (nests by their input lines)."""

    function: str
    first_line: int
    second_line: int
    mode: str
    verdict: Verdict
    reordering: str | None = None  # why the host's loops were not reordered for it


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
        self.considered: dict[tuple[int, int, str], Considered] = {}  # by input lines

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

    def left_alone(self) -> list[Considered]:
        """The pairs considered and not fused whose nests are still apart at the end and
        were nests of one block in the input (of pieces fusions brought together, only
        those whose loop order locality kept), by input lines (producer-consumer
        reasons before sibling ones)."""
        nests = {
            self.state.lines.get(op.span.start_byte)
            for block in nest_blocks(self.state.function)
            for op in loops_in(block)
        }
        found: dict[tuple[int, int], Considered] = {}
        for considered in self.considered.values():  # in the order they were considered
            lines = (considered.first_line, considered.second_line)
            pair = (min(lines), max(lines))
            if pair[0] == pair[1] or not set(pair) <= nests:
                continue
            apart = self.state.parents.get(pair[0], -1) != self.state.parents.get(pair[1], -2)
            if apart and considered.reordering is None:
                continue  # brought together by fusions: only a kept loop order is news
            current = found.get(pair)
            if (
                current is None
                or current.mode == considered.mode
                or considered.mode == (PRODUCER_CONSUMER)
            ):
                found[pair] = considered
        return [found[pair] for pair in sorted(found)]

    def _apply(
        self,
        new_text: bytes,
        function: FuncOp,
        edits: list[list[TextEdit]],
        fresh: set[int],
        known: dict[int, int] | None = None,
        pieces: set[int] | None = None,
    ) -> set[int]:
        """Move to the state after `edits` (lists applied one after the other); the
        fresh offsets, moved (those inside an edit are dropped). `known`: the input
        lines of nests the edits wrote (by their new offsets); `pieces`: the nests a
        shifted fusion wrote side by side."""
        moved: set[int] = set(fresh)
        lines, together = dict(self.state.lines), dict(self.state.pieces)
        for step in edits:
            mapping = EditMap(step)
            moved = {o for o in (mapping.to_new(offset) for offset in moved) if o is not None}
            lines = _moved(lines, mapping)
            together = _moved(together, mapping)
        lines.update(known or {})
        together.update({offset: len(self.steps) for offset in pieces or ()})
        self.state = replace(
            self.state, data=new_text, function=function, lines=lines, pieces=together
        )
        return moved

    def _remove_dead(self, fresh: set[int]) -> set[int] | None:
        """Remove the first dead nest (the fresh offsets, moved), or None."""
        for block in nest_blocks(self.state.function):
            for nest in loops_in(block):
                found = self.evaluator.removal(self.state, nest)
                if found is None:
                    continue
                report = Removed(self.state.function.symbol, self.state.line(nest))
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
                    top = isinstance(block.parent_op, FuncOp)
                    move = self._move(chosen.copied, chosen.host, mode) if top else None
                    best = chosen.candidate
                    host_line = self.state.line(chosen.host)
                    report = Fusion(
                        self.state.function.symbol,
                        self.state.line(chosen.copied),
                        host_line,
                        mode,
                        best.depth,
                        best.extra or 0.0,
                        self._input_names(chosen.host, chosen.permuted.order)
                        if chosen.permuted
                        else (),
                        best.shift,
                    )
                    assert best.new_text is not None and best.function is not None
                    self.steps.append(Step(report, move))
                    edits = [chosen.permuted.edits] if chosen.permuted else []
                    before = chosen.state or self.state
                    known = {
                        new: before.lines[old]
                        for new, old in best.loop_origins.items()
                        if old in before.lines
                    }
                    if best.host_offset is not None and host_line is not None:
                        known[best.host_offset] = host_line
                    pieces: set[int] = set()
                    if best.shift and best.host_offset is not None:
                        # The loops of a shifted fusion stay as it wrote them: fusing
                        # its pieces, or the loops it left apart inside the fused ones,
                        # would undo its choices.
                        pieces = set(best.loop_origins) | {best.host_offset}
                    fresh = self._apply(
                        best.new_text, best.function, [*edits, best.edits], fresh, known, pieces
                    )
                    if best.host_offset is not None:
                        fresh.add(best.host_offset)
                    return fresh
        return None

    def _input_names(self, host: AffineForOp, order: list[str]) -> tuple[str, ...]:
        """The names of the host's band loops in `order` (current names) as the input
        names them."""
        band = perfect_band(host, len(order))
        names = {
            loop.induction_variable.name: self.state.iv(loop)
            for loop in band
            if loop.induction_variable is not None
        }
        return tuple(names.get(name, name) for name in order)

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
        inward, where that is needed or costs less, and locality allows it), or
        (siblings) the later into the earlier where that costs less."""
        if not worth_trying(first, second, mode):
            return None
        group = self.state.pieces.get(first.span.start_byte)
        if group is not None and group == self.state.pieces.get(second.span.start_byte):
            return None  # pieces of one shifted fusion
        options = [(first, second)]
        if mode == SIBLING:
            options.append((second, first))
        found: list[Choice] = []
        verdicts: list[Verdict] = []
        for copied, host in options:
            if copied.span.start_byte in fresh or self._move(copied, host, mode) in self.banned:
                continue
            verdict = self.evaluator.fusion(self.state, copied, host, mode)
            verdicts.append(verdict)
            best = verdict.candidate
            if best is not None:
                found.append(Choice(copied, host, best))
                if not best.extra:
                    break
        reordering = None
        if mode == PRODUCER_CONSUMER and (not found or found[0].candidate.extra):
            permuted, reordering = self._into_permuted(first, second)
            if permuted is not None:
                found.append(permuted)
        if not found:
            if verdicts:
                first_line, second_line = self.state.line(first), self.state.line(second)
                if first_line is not None and second_line is not None:
                    key = (first_line, second_line, mode)
                    self.considered.pop(key, None)  # the latest verdict last
                    self.considered[key] = Considered(
                        self.state.function.symbol,
                        first_line,
                        second_line,
                        mode,
                        verdicts[0],
                        reordering,
                    )
            return None
        return min(found, key=lambda choice: choice.candidate.extra or 0.0)

    def _into_permuted(
        self, copied: AffineForOp, host: AffineForOp
    ) -> tuple[Choice | None, str | None]:
        """`copied` fused into `host` once the host's dependence-carrying loops are sunk
        inward (MLIR's order), or None with why not when locality says no."""
        veto = self._order_veto(host) if self.evaluator.profitable else None
        if veto is not None:
            return None, veto
        permuted = self.evaluator.permuted(self.state, host)
        if permuted is None:
            return None, None
        mapping = EditMap(permuted.edits)
        lines: dict[int, int] = {}
        for offset, line in self.state.lines.items():
            new = mapping.to_new(offset)
            if new is not None:
                lines[new] = line
        host_line = self.state.line(host)
        if host_line is not None:
            lines[permuted.nest_offset] = host_line
        state = replace(self.state, data=permuted.new_text, function=permuted.function, lines=lines)
        loops = {op.span.start_byte: op for op in permuted.function.walk()}
        new_copied = loops.get(EditMap(permuted.edits).to_new(copied.span.start_byte) or -1)
        new_host = loops.get(permuted.nest_offset)
        if not isinstance(new_copied, AffineForOp) or not isinstance(new_host, AffineForOp):
            return None, None
        verdict = self.evaluator.fusion(state, new_copied, new_host, PRODUCER_CONSUMER)
        best = verdict.candidate
        return (Choice(copied, host, best, permuted, state) if best is not None else None), None

    def _order_veto(self, host: AffineForOp) -> str | None:
        """Why the host's loops are not reordered (MLIR's sinking) for a fusion: the new
        order loads more cache lines than the written one. None: no veto."""
        try:
            order = sinking_order(host, self.state.model, self.evaluator.budget(budgets.DEPENDENCE))
        except PolyError:
            return None
        if order is None:
            return None
        band = perfect_band(host, len(order))
        if len(band) != len(order):
            return None
        reordered = [band[k] for k in order]
        written = self.evaluator.lines(host, self.state.model)
        other = locality.cost(host, self.state.model, order=reordered)
        if written is None or other is None:
            return None
        if other.lines <= written.lines * (1 + LOCALITY_SLACK):
            return None
        names = ", ".join(self.state.iv(loop) for loop in reordered)
        return (
            f"fusing needs its loops reordered ({names} first), which would load "
            f"{_more(other.lines, written.lines)}"
        )


@dataclass
class Choice:
    """A fusion chosen for a pair: the nest copied, the host, the candidate (on the
    text after the permutation of the host's loops, if there is one)."""

    copied: AffineForOp
    host: AffineForOp
    candidate: Candidate
    permuted: Permuted | None = None
    state: State | None = None  # the state the candidate was found in (None: the run's)
