"""Fusion of two loop nests of one block, checked by exact dataflow analysis.

`PairFusion` looks at a pair (first nest, later nest) in one mode:
  * "producer-consumer": the copy of the first nest is sliced by the
    dependences between the nests (RAW, WAR, WAW over every memref);
  * "sibling": also by the reads both nests make of the same memrefs.
For each depth `d` (the number of the second nest's loops the copy is placed
in) it plans a slice, writes the fused text (first nest removed, or kept when
its results are needed elsewhere), and accepts it only if the dataflow check
proves it equivalent. Each accepted depth has a cost: the extra computation
relative to the two nests. `best()` picks the deepest depth within tolerance.

The "first" nest is the one copied, the "second" the one it is copied into
(the host). Usually the first comes first in the block; it may also come
after the second (a later nest sliced into an earlier one, as sibling fusion
does): its copy then goes at the end of the host's loop body instead of the
start. The fused nest stays where the host is, or, when ops between the two
nests forbid that, moves to another place between them (`placements`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    UPSTREAM,
    AffineForOp,
    AffineYieldOp,
    Block,
    Dialects,
    FuncOp,
    ModuleModel,
    Operation,
)
from affine_lsp.poly import (
    Budget,
    BudgetExceeded,
    IslSession,
    Level,
    Mismatch,
    PolyError,
    Statement,
    Window,
    budgets,
    enclosing_levels,
    is_under,
    maps_of,
    seconds_left,
)
from affine_lsp.syntax import Span, decode, encode
from affine_lsp.transforms.edits import (
    EditMap,
    apply_edits,
    indentation,
    line_start,
    next_line_start,
    only_whitespace,
    rest_of_line_is_blank,
)
from affine_lsp.transforms.fusion.copy import CannotEdit, Copy, CopyBuilder, nest_lines
from affine_lsp.transforms.fusion.cost import DEFAULT_SYMBOL, CostModel
from affine_lsp.transforms.fusion.explain import Explainer
from affine_lsp.transforms.fusion.privatize import Privatizer
from affine_lsp.transforms.fusion.privatize import candidates as private_candidates
from affine_lsp.transforms.fusion.render import BoundRenderer
from affine_lsp.transforms.fusion.shift import shifted_fusion
from affine_lsp.transforms.fusion.slicing import SlicePlanner
from affine_lsp.transforms.fusion.verify import Checked, MovedNest, Rewrite, check_rewrite
from affine_lsp.transforms.naming import FreshNames, names_in

PRODUCER_CONSUMER = "producer-consumer"
SIBLING = "sibling"

ESTIMATE_MARGIN = 0.25  # estimates before writing the copy may be off by this much

STAY = None  # placement: the fused nest stands where the second nest (the host) was

ALIGNED: list[tuple[Statement, Statement]] = []
"""The relation of no pairs: the first nest's perfect loops matched one for one with
the second's (its iteration i runs in the host's iteration i)."""


class PlacementUnavailable(CannotEdit):
    """The fused nest cannot be written at this place (others may work)."""


@dataclass(frozen=True)
class FusionOptions:
    """How fusion decides: the extra-compute tolerance and the analysis budget; and
    the dialects the text is modelled with where fusion models it itself (`fuse_all`)."""

    tolerance: float = 0.30
    budget: Budget = budgets.FUSION
    keep_producer: bool = True
    dialects: Dialects = UPSTREAM
    refute: bool = False  # refuse with the quick refutation, explaining only when asked
    upward: bool = False
    """`best()` tries depths from the outermost in and stops at the first illegal one
    (fuse --all: a fusion is rarely legal deeper than a depth where it is not, and
    the depths tried are most of the work), instead of from the innermost out."""

    def until(self, deadline: float | None, max_operations: int | None = None) -> FusionOptions:
        """These options with an isl budget that ends at `deadline` (a `perf_counter`
        time; already past: spent at once) and at most `max_operations`."""
        if deadline is None and max_operations is None:
            return self
        budget = self.budget
        limit = budget.time_limit
        left = seconds_left(deadline)
        if left is not None:
            limit = left if limit is None else min(limit, left)
        operations = budget.max_operations
        if max_operations is not None:
            operations = min(operations or max_operations, max_operations)
        return replace(self, budget=Budget(operations, limit))


@dataclass
class Candidate:
    """Fusing a pair at one depth: legal or not, why, what it costs, the edits."""

    mode: str
    depth: int
    legal: bool
    given_reason: str | None = None
    extra: float | None = None  # extra computation, as a fraction of the two nests
    edits: list[TextEdit] = field(default_factory=list)
    new_text: bytes | None = None
    producer_kept: bool = False
    find_mismatches: Callable[[], list[Mismatch]] | None = field(default=None, repr=False)
    copied: set[str] = field(default_factory=set)
    function: FuncOp | None = None  # the fused function, modelled from `new_text`
    explain: Callable[[], str] | None = field(default=None, repr=False)
    timed_out: bool = False  # the budget ran out before legality was decided
    host_offset: int | None = None  # where the fused nest starts in `new_text`
    find_involved: Callable[[], list[set[int]]] | None = field(default=None, repr=False)
    shift: tuple[int, ...] = ()  # the second nest's iterations moved by this per fused loop
    innermost_together: bool = False  # shifted: both nests' innermost loops made one
    loop_origins: dict[int, int] = field(default_factory=dict)
    """Loops the fusion wrote anew (by offset in `new_text`) and the loop each repeats
    (by offset in the original text), where known."""
    _involved: list[set[int]] | None = field(default=None, repr=False)
    _mismatches: list[Mismatch] | None = field(default=None, repr=False)

    @property
    def involved(self) -> list[set[int]]:
        """Per mismatch, the ids of the original window's top-level ops whose accesses
        take part in it (computed when asked)."""
        if self._involved is None:
            self._involved = self.find_involved() if self.find_involved else []
            self.find_involved = None
        return self._involved

    @property
    def mismatches(self) -> list[Mismatch]:
        """How the fused code would differ (computed when asked)."""
        if self._mismatches is None:
            self._mismatches = self.find_mismatches() if self.find_mismatches else []
            self.find_mismatches = None
        return self._mismatches

    @property
    def reason(self) -> str | None:
        """Why the fusion is illegal (explaining costs isl work: done when asked)."""
        if self.given_reason is None and self.explain is not None:
            self.given_reason, self.explain = self.explain(), None
        return self.given_reason

    def within(self, tolerance: float) -> bool:
        return self.legal and self.extra is not None and self.extra <= tolerance + 1e-9


def _common_loop_prefix(statements: list[Statement], root: AffineForOp) -> list[AffineForOp]:
    """The loops (from `root` down) that enclose every statement."""
    chains = []
    for statement in statements:
        chain = [lv.op for lv in statement.domain.levels if isinstance(lv.op, AffineForOp)]
        if root not in chain:
            return []
        chains.append(chain[chain.index(root) :])
    prefix: list[AffineForOp] = []
    for loops in zip(*chains, strict=False):
        if any(loop is not loops[0] for loop in loops):
            break
        prefix.append(loops[0])
    return prefix


def _perfect_chain(root: AffineForOp) -> list[AffineForOp]:
    chain = [root]
    while True:
        body = chain[-1].body
        inner = [op for op in body.operations()] if body is not None else []
        loops = [op for op in inner if isinstance(op, AffineForOp)]
        if len(loops) != 1 or len([op for op in inner if op.name != "affine.yield"]) != 1:
            return chain
        chain.append(loops[0])


def _copied_loops(
    rewrite: Rewrite, copy: Copy, function: FuncOp, first: AffineForOp
) -> dict[int, int]:
    """The loops of the copy (new offsets) and the first nest's loops they repeat (old
    offsets): the first nest's loops in order, less the promoted ones. Empty when the
    copy moved with its host (not followed)."""
    if rewrite.copy_edit is None:
        return {}
    start = EditMap(rewrite.edits).new_start(rewrite.copy_edit)
    end = start + len(encode(copy.text))
    new = [
        op.span.start_byte
        for op in function.walk()
        if isinstance(op, AffineForOp) and start <= op.span.start_byte < end
    ]
    old = [
        op.span.start_byte
        for op in first.walk()
        if isinstance(op, AffineForOp) and id(op) not in copy.promoted
    ]
    return dict(zip(new, old, strict=False)) if len(new) == len(old) else {}


class PairFusion:
    """Every depth at which `first` can be fused into `second` (same block, first before)."""

    def __init__(
        self,
        data: bytes,
        model: ModuleModel,
        function: FuncOp,
        first: AffineForOp,
        second: AffineForOp,
        mode: str = PRODUCER_CONSUMER,
        options: FusionOptions | None = None,
    ) -> None:
        self.data = data
        self.model = model
        self.function = function
        self.first = first
        self.second = second
        self.mode = mode
        self.options = options or FusionOptions()
        self.block: Block = first.parent_block  # type: ignore[assignment]
        self._candidates: dict[int, Candidate] = {}
        self._alignable: dict[int, bool] = {}
        self._shifted: dict[tuple[int, bool], Candidate | None] = {}
        self._estimates: dict[int, float] = {}  # extra compute estimated for a depth
        self._refused: dict[int, str] = {}  # legal depths `accept` refused, and why
        self._explaining = False
        self._first_depth: int | None = 1
        self.session = IslSession(self.options.budget)
        self.failure: str | None = None
        self.timed_out = False  # the budget ran out while preparing (see `failure`)
        self.backward = False  # the first nest comes after the second in the block
        self.window: Window | None = None
        self.relations: list[list[tuple[Statement, Statement]]] = []
        self.consumer_path: list[AffineForOp] = []
        self._prepare()

    # -- analysis of the pair -------------------------------------------------------

    def _prepare(self) -> None:
        if self.first.parent_block is not self.second.parent_block:
            self.failure = "the nests are not in the same block"
            return
        operations = self.block.operations
        first_index = operations.index(self.first)
        second_index = operations.index(self.second)
        self._between: list[Operation] = []  # ops between the nests that touch memory
        if first_index == second_index:
            self.failure = "a nest cannot be fused with itself"
            return
        self.backward = first_index > second_index
        if self.first.results:
            self.failure = "the first nest returns values used after it"
            return
        low, high = sorted((first_index, second_index))
        try:
            self.window = Window(self.session, self.block, low, high, self.model.alias_table())
        except PolyError as error:
            self.failure = error.reason
            self.timed_out = isinstance(error, BudgetExceeded)
            return
        except Exception as error:  # a bug must not take the editor down
            self.failure = f"internal error while analysing ({type(error).__name__}: {error})"
            return
        firsts = [s for s in self.window.statements if is_under(s.op, self.first)]
        seconds = [s for s in self.window.statements if is_under(s.op, self.second)]
        between = [s for s in self.window.statements if s not in firsts and s not in seconds]
        touching = {id(op) for op in self.window.ops if any(is_under(s.op, op) for s in between)}
        self._between = [op for op in self.window.ops if id(op) in touching]
        dependent, shared, flows = [], [], []
        for a in firsts:
            for b in seconds:
                if a.array != b.array:
                    continue
                producer, consumer = (b, a) if self.backward else (a, b)
                if producer.is_write and not consumer.is_write:
                    flows.append((a, b))
                if a.is_write or b.is_write:
                    dependent.append((a, b))
                else:
                    shared.append((a, b))
        # Slices come from the pairs that define the fusion (values the second nest
        # reads from the first, or reads they share); if the result does not check,
        # from every pair that constrains the order.
        if self.mode == SIBLING:
            if not shared:
                self.failure = "the nests read no memref in common"
                return
            # Reads alone may leave loops of the first nest free (each of its
            # iterations serving many of the second's, or some serving none): the
            # loops matched one for one (ALIGNED) are the alternative when that slice
            # costs too much or does not check.
            self.relations = [shared, shared + dependent, ALIGNED]
        else:
            self.relations = [flows, dependent] if flows else [dependent]
        self.relations = [r for i, r in enumerate(self.relations) if r not in self.relations[:i]]
        defining = self.relations[0]
        if defining:
            self.consumer_path = _common_loop_prefix([b for _, b in defining], self.second)
        else:
            self.consumer_path = _perfect_chain(self.second)
        if not self.consumer_path:
            self.failure = "the second nest's accesses share no loop"
            return
        try:
            self._first_depth = self._first_interleaving_depth()
        except PolyError as error:
            self.failure = error.reason
            self.timed_out = isinstance(error, BudgetExceeded)
            return
        if self._first_depth is None:
            self.failure = "the second nest's loops run once: fusing would interleave nothing"

    def _first_interleaving_depth(self) -> int | None:
        """The smallest depth at which the copy is interleaved with something: the
        second nest's outer loops run more than once, or the copy is a single
        iteration (single iterations merged, as MLIR does). A slice of many
        iterations copied into loops that run once would only be sequential code
        in a loop."""
        assert self.window is not None
        if self._single_iteration(self.first):
            return 1
        for depth, loop in enumerate(self.consumer_path, 1):
            if not self._single_iteration(loop, outer_only=True):
                return depth
            relation, slice_loops = self._relation(depth, self.relations[0])
            if relation is None or len(slice_loops) < len(_perfect_chain(self.first)):
                continue
            image = relation.range()

            def single(image: isl.Set = image) -> bool:
                return image.is_singleton() and not image.is_empty()

            if self.session.run(single, "the slice"):
                return depth
        return None

    def _single_iteration(self, nest: AffineForOp, outer_only: bool = False) -> bool:
        """Whether every loop of `nest` (or, with `outer_only`, `nest` and the loops
        around it in the block) has one iteration."""
        assert self.window is not None
        loops = [nest] if outer_only else [op for op in nest.walk() if isinstance(op, AffineForOp)]
        for loop in loops:
            levels, _ = enclosing_levels(loop, self.block)
            domain = self.window.builder.build([*levels, Level(loop)])
            assert domain.set is not None
            if not self.session.run(domain.set.is_singleton, "a loop's iterations"):
                return False
        return True

    @property
    def ran_out(self) -> bool:
        """Whether the budget ran out before a question asked so far was decided."""
        return self.timed_out or any(c.timed_out for c in self._candidates.values())

    def depths(self) -> list[int]:
        if self.failure is not None:
            return []
        return list(range(self._first_depth or 1, len(self.consumer_path) + 1))

    def _slices_inner_loops(self, depth: int, pairs: list[tuple[Statement, Statement]]) -> bool:
        """Whether the slice would bound loops of the first nest deeper than `depth`."""
        inner = self.consumer_path[depth - 1]
        users = [a for a, b in pairs if is_under(b.op, inner)]
        return len(_common_loop_prefix(users, self.first)) > depth

    def _relation(
        self, depth: int, pairs: list[tuple[Statement, Statement]], outer_only: bool = False
    ) -> tuple[isl.Map | None, list[AffineForOp]]:
        """c (first `depth` ivs of the second nest) -> slice loops of the first nest."""
        if not pairs:
            chain = _perfect_chain(self.first)[:depth]
            slice_loops = chain
            dims = ", ".join(f"c{k}" for k in range(depth))
            outs = ", ".join(f"c{k}" for k in range(len(chain)))
            return self.session.map(f"{{ [{dims}] -> [{outs}] }}"), slice_loops
        # Only accesses inside the loop the copy goes into can be served by the slice.
        inner = self.consumer_path[depth - 1]
        pairs = [(a, b) for a, b in pairs if is_under(b.op, inner)]
        if not pairs:
            return None, []
        slice_loops = _common_loop_prefix([a for a, _ in pairs], self.first)
        stop = next((i for i, loop in enumerate(slice_loops) if loop.iter_args), None)
        if stop is not None:
            slice_loops = slice_loops[:stop]
        if outer_only:
            # Slice only the loops matched with the insertion loops; inner ones run whole.
            slice_loops = slice_loops[:depth]
        relation = None
        for a, b in pairs:
            same = self.session.run(lambda a=a, b=b: b.access.apply_range(a.access.reverse()))
            extra_in = same.dim(isl.dim_type.in_) - depth
            extra_out = same.dim(isl.dim_type.out) - len(slice_loops)
            same = same.project_out(isl.dim_type.in_, depth, extra_in)
            same = same.project_out(isl.dim_type.out, len(slice_loops), extra_out)
            same = same.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
            relation = (
                same
                if relation is None
                else self.session.run(lambda r=relation, s=same: r.union(s))
            )
        return relation, slice_loops

    # -- candidates -----------------------------------------------------------------

    def candidate(self, depth: int) -> Candidate:
        """The fusion at `depth` by a copy of the first nest (legal or not, and why)."""
        if depth not in self._candidates:
            self._candidates[depth] = self._evaluate(depth)
        return self._candidates[depth]

    def tried(self) -> list[int]:
        """The depths whose fusion has been evaluated (or estimated too costly)."""
        return sorted(set(self._candidates) | set(self._estimates) | set(self._refused))

    def allow_explanations(self, operations: int) -> None:
        """Let the reasons asked from now on take `operations` more isl operations than
        the pair's budget (once: later calls do nothing)."""
        if not self._explaining:
            self._explaining = True
            self.session.allow(operations)

    def refused(self) -> dict[int, str]:
        """The legal depths `best`'s `accept` refused, and why."""
        return dict(self._refused)

    def why_not(self, depth: int) -> str:
        """Why the fusion at a depth tried was not chosen, in words."""
        if depth in self._refused:
            return self._refused[depth]
        if depth not in self._candidates:
            extra = self._estimates.get(depth, 0.0)
            return (
                f"about +{extra:.0%} compute (estimated) exceeds the "
                f"{self.options.tolerance:.0%} tolerance"
            )
        candidate = self._candidates[depth]
        if candidate.timed_out:
            return "too complex to analyse within the budget"
        if candidate.legal:
            return (
                f"+{(candidate.extra or 0):.0%} compute exceeds the "
                f"{self.options.tolerance:.0%} tolerance"
            )
        return candidate.reason or "the fused code would compute something else"

    def choice(self, depth: int) -> Candidate:
        """What fusing at `depth` does: the copy if it is legal within the tolerance,
        else the fusion with a shift if there is one, else the copy's failure."""
        candidate = self.candidate(depth)
        if candidate.within(self.options.tolerance) or candidate.timed_out:
            return candidate
        return self.shifted(depth) or candidate

    def best(self, accept: Callable[[Candidate], str | None] | None = None) -> Candidate | None:
        """The deepest legal candidate within the tolerance (depths whose slice is
        estimated to cost too much are not even written and checked: only their
        fusion with a shift is) that `accept` does not refuse (it returns why).
        With the options' `upward`, depths are tried from the outermost in, until
        one is illegal (see `FusionOptions`). A fusion with a shift that would put
        both nests' innermost loops into one, a dependence between them carried by
        it, gives way to the fusion one loop less deep, if there is one: each nest
        keeps its own unit-stride innermost loop, which vectorizes (jacobi-2d's
        sweeps: 1.3x at depth 1, 0.9x at depth 2)."""
        found = self._best(accept)
        if found is not None and not (found.shift and found.innermost_together):
            return found
        together = [
            candidate
            for (_, aligned), candidate in self._shifted.items()
            if candidate is not None and not aligned and candidate.innermost_together
        ]
        for candidate in sorted(together, key=lambda c: -c.depth):
            if candidate.depth <= 1:
                continue
            shallower = self.shifted(candidate.depth - 1, aligned=True)
            if shallower is not None and (accept is None or accept(shallower) is None):
                return shallower
        return found

    def _best(self, accept: Callable[[Candidate], str | None] | None) -> Candidate | None:
        order = self.depths() if self.options.upward else list(reversed(self.depths()))
        found: Candidate | None = None
        for depth in order:
            if depth not in self._candidates and self._too_costly(depth):
                candidate = self.shifted(depth)
                if candidate is None:
                    continue  # legal perhaps, but too costly: another depth may cost less
            else:
                candidate = self.choice(depth)
            if candidate.within(self.options.tolerance):
                refused = accept(candidate) if accept is not None else None
                if refused is None:
                    found = candidate
                    if not self.options.upward:
                        return found
                else:
                    self._refused[depth] = refused
            elif self.options.upward and not candidate.legal:
                # Deeper copies are illegal too, but a shift may make a depth legal.
                deeper = [d for d in order if d > depth]
                for other in reversed(deeper):
                    shifted = self.shifted(other)
                    if shifted is not None and (accept is None or accept(shifted) is None):
                        return shifted
                break
        return found

    def shifted(self, depth: int, aligned: bool = False) -> Candidate | None:
        """The proven fusion at `depth` with the second nest's iterations shifted
        (`shift.py`; with `aligned`, also by nothing), or None when no shift applies or
        it is not proven."""
        key = (depth, aligned)
        if key in self._shifted:
            return self._shifted[key]
        found = None
        if self.mode == PRODUCER_CONSUMER and self.failure is None and not self.backward:
            assert self.window is not None
            try:
                result = shifted_fusion(
                    self.session,
                    self.window,
                    self.data,
                    self.model,
                    self.function,
                    self.first,
                    self.second,
                    depth,
                    aligned,
                )
            except PolyError:
                result = None
            if result is not None:
                found = Candidate(
                    self.mode,
                    depth,
                    True,
                    None,
                    0.0,
                    result.edits,
                    result.new_text,
                    function=result.function,
                    host_offset=result.host_offset,
                    shift=result.amounts,
                    loop_origins=result.loop_origins,
                    innermost_together=result.innermost_together,
                )
        self._shifted[key] = found
        return found

    def _too_costly(self, depth: int) -> bool:
        """The slice plan's estimated extra computation is well over the tolerance."""
        if self.window is None or not self.relations:
            return False
        if not self._estimate_too_costly(depth, self.relations[0]):
            return False
        if ALIGNED in self.relations[1:] and self._aligns(depth, ALIGNED):
            if not self._estimate_too_costly(depth, ALIGNED):
                return False
        return True

    def _aligns(self, depth: int, pairs: list[tuple[Statement, Statement]]) -> bool:
        """Whether `pairs` is no alignment, or one of as many loops as `depth` (fewer
        would repeat the whole copy in each iteration of the host's inner loops) whose
        iterations are among the host's (others would be left out)."""
        if pairs is not ALIGNED:
            return True
        if depth not in self._alignable:
            self._alignable[depth] = self._covered(depth)
        return self._alignable[depth]

    def _covered(self, depth: int) -> bool:
        assert self.window is not None
        chain = _perfect_chain(self.first)
        if len(chain) < depth:
            return False
        builder = self.window.builder
        try:
            first = builder.build([Level(loop) for loop in chain[:depth]]).set
            host = builder.build([Level(loop) for loop in self.consumer_path[:depth]]).set
            assert first is not None and host is not None
            return bool(self.session.run(lambda: first.is_subset(host), "aligned loops"))
        except PolyError:
            return False

    def _estimate_too_costly(self, depth: int, pairs: list[tuple[Statement, Statement]]) -> bool:
        assert self.window is not None
        try:
            relation, slice_loops = self._relation(depth, pairs)
            consumer_loops = self.consumer_path[:depth]
            planner = SlicePlanner(self.session, self.window, self.first, consumer_loops)
            plan = planner.plan(relation, slice_loops)
            trips = planner.average_trips(plan, DEFAULT_SYMBOL)
            cost = CostModel(self.window)
            body = consumer_loops[-1].body
            inner = next(iter(body.operations()), None) if body is not None else None
            if inner is None:
                return False
            per_copy = cost.executions(inner)
            original = cost.nest(self.first) + cost.nest(self.second)
            fused = cost.nest(self.second) + cost.copy_estimate(self.first, trips, per_copy)
        except PolyError:
            return False
        if original <= 0:
            return False
        self._estimates[depth] = max(self._estimates.get(depth, 0.0), fused / original - 1)
        return fused / original - 1 > self.options.tolerance + ESTIMATE_MARGIN

    def _evaluate(self, depth: int) -> Candidate:
        if self.failure is not None:
            return Candidate(self.mode, depth, False, self.failure, timed_out=self.timed_out)
        if depth not in self.depths():
            return Candidate(self.mode, depth, False, f"depth {depth} is not available")
        first_failure: Candidate | None = None
        costly: Candidate | None = None  # legal, over the tolerance
        for remove in (True, False):
            if not remove and not self._worth_keeping(first_failure):
                break
            variants = [
                (pairs, outer_only, placement)
                for placement in (self.placements() if remove else [STAY])
                for pairs in self.relations
                for outer_only in (False, True)
                if not outer_only or self._slices_inner_loops(depth, pairs)
            ]
            for pairs, outer_only, placement in variants:
                if (costly is not None and pairs is not ALIGNED) or not self._aligns(depth, pairs):
                    continue  # after a legal slice that costs too much, only the alignment
                if outer_only and not self._worth_keeping(first_failure, True):
                    continue  # running whole inner loops only helps missing results
                if placement is not STAY and not self._between_involved(first_failure):
                    continue  # moving the fused nest helps only with ops in between
                try:
                    candidate = self._attempt(depth, remove, pairs, outer_only, placement)
                except PlacementUnavailable:
                    continue
                except CannotEdit as error:
                    return Candidate(self.mode, depth, False, str(error))
                except BudgetExceeded as error:
                    # Legality is unknown: an earlier variant's failure is no verdict.
                    return Candidate(self.mode, depth, False, error.reason, timed_out=True)
                except PolyError as error:
                    candidate = Candidate(self.mode, depth, False, error.reason)
                except Exception as error:  # a bug must not take the editor down
                    reason = f"internal error while fusing ({type(error).__name__}: {error})"
                    return Candidate(self.mode, depth, False, reason)
                if candidate.legal:
                    if candidate.within(self.options.tolerance):
                        return candidate
                    if pairs is ALIGNED:
                        return min(
                            [c for c in (costly, candidate) if c is not None],
                            key=lambda c: c.extra or 0.0,
                        )
                    costly = costly or candidate
                    continue  # legal but over the tolerance: the alignment may cost less
                first_failure = first_failure or candidate
        if costly is not None:
            return costly
        assert first_failure is not None
        return first_failure

    def placements(self) -> list[int | None]:
        """Where the fused nest may stand (byte offsets in the original text where the
        host's lines are moved to; STAY first): next to each op between the nests that
        touches memory, nearest the host first, and in the first nest's place."""
        if not self._between:
            return [STAY]
        offsets: list[int | None] = [STAY]
        try:
            if self.backward:
                # The host moves down: before each op in between, then to the copied nest.
                for op in self._between[1:]:
                    offsets.append(nest_lines(self.data, op, True)[0])
                offsets.append(nest_lines(self.data, self.first, True)[0])
            else:
                # The host moves up: after each op in between, then to the first nest.
                for op in reversed(self._between[:-1]):
                    offsets.append(nest_lines(self.data, op, False)[1])
                offsets.append(nest_lines(self.data, self.first, True)[0])
        except CannotEdit:
            pass
        return list(dict.fromkeys(offsets))

    def _between_involved(self, failure: Candidate | None) -> bool:
        """Whether the ops between the nests take part in every mismatch of a failure:
        another place for the fused nest changes only the order of the fused code and
        those ops, so it cannot mend a mismatch between the two nests alone."""
        if failure is None:
            return True
        if not failure.mismatches:
            return False
        between = {id(op) for op in self._between}
        return all(ops & between for ops in failure.involved)

    def _worth_keeping(self, failure: Candidate | None, whole_loops: bool = False) -> bool:
        """Keeping the first nest (or copying its inner loops whole) helps only when
        the copy itself computes the right values and what is missing is the rest of
        the first nest's results."""
        if failure is None or (not whole_loops and not self.options.keep_producer):
            return False
        if not failure.mismatches:
            return False
        return not any(
            m.kind == "read" and m.statement in failure.copied for m in failure.mismatches
        )

    def _attempt(
        self,
        depth: int,
        remove: bool,
        pairs: list[tuple[Statement, Statement]],
        outer_only: bool = False,
        placement: int | None = STAY,
    ) -> Candidate:
        assert self.window is not None
        consumer_loops = self.consumer_path[:depth]
        relation, slice_loops = self._relation(depth, pairs, outer_only)
        planner = SlicePlanner(self.session, self.window, self.first, consumer_loops)
        plan = planner.plan(relation, slice_loops)
        renderer = BoundRenderer(self.session, self.window, plan.params)
        for k, loop in enumerate(consumer_loops):
            assert loop.induction_variable is not None
            renderer.ssa_names[f"_d{k}"] = loop.induction_variable.name
        fresh = FreshNames(names_in(self.function, self.first if remove else None))
        target, indent = self._insertion_point(consumer_loops[-1], at_end=self.backward)
        builder = CopyBuilder(self.data, self.first, plan, renderer, fresh)
        copy = builder.build(indent, remove)
        rewrite = self._assemble(plan, copy, target, remove, placement, [])
        checked = None
        if remove:
            private = self._private_edits(plan, builder, copy)
            if private is not None:
                shrunk, document_edits = private
                try:
                    attempt = self._assemble(
                        plan, shrunk, target, remove, placement, document_edits
                    )
                    result = check_rewrite(
                        self.session,
                        self.window,
                        self.data,
                        self.model,
                        self.function,
                        attempt,
                        refute=self.options.refute,
                    )
                except BudgetExceeded:
                    raise  # (out of time: the candidate is decided later, never unshrunk)
                except PolyError:
                    result = None
                if result is not None and result.legal:
                    rewrite, checked = attempt, result
        if checked is None:
            checked = check_rewrite(
                self.session,
                self.window,
                self.data,
                self.model,
                self.function,
                rewrite,
                refute=self.options.refute,
            )
        if not checked.legal:
            return Candidate(
                self.mode,
                depth,
                False,
                None,
                explain=lambda: self._explain(checked),
                edits=rewrite.edits,
                producer_kept=not remove,
                find_mismatches=lambda: checked.mismatches,
                copied=checked.copied,
                find_involved=lambda: self._involved_ops(checked),
            )
        extra = self._extra_compute(checked, remove)
        return Candidate(
            self.mode,
            depth,
            True,
            None,
            extra,
            rewrite.edits,
            checked.new_text,
            not remove,
            function=checked.function,
            host_offset=checked.host.span.start_byte if checked.host is not None else None,
            loop_origins=_copied_loops(rewrite, copy, checked.function, self.first),
        )

    def _assemble(
        self,
        plan,
        copy: Copy,
        target: int,
        remove: bool,
        placement: int | None,
        document_edits: list[TextEdit],
    ) -> Rewrite:
        """The document edits of a fusion: the copy inserted at `target` (inside the
        second nest), the first nest removed or kept, the second nest moved to the
        offset `placement` (STAY: left in place), plus other `document_edits`."""
        insertion = TextEdit(Span(target, target), copy.text)
        if placement is STAY:
            edits = [insertion] + document_edits
            if remove:
                edits.append(TextEdit(Span(copy.start, copy.end), ""))
            return Rewrite(edits, self.first, self.second, plan, copy, remove, insertion)
        if not remove:
            raise PlacementUnavailable("a kept first nest stays in place")
        start, end = nest_lines(self.data, self.second, True)
        if indentation(self.data, self.first.span.start_byte) != indentation(
            self.data, self.second.span.start_byte
        ):
            raise PlacementUnavailable("the nests are not indented alike")
        if start <= placement <= end:
            raise PlacementUnavailable("the fused nest would not move")
        inside = [e for e in document_edits if start <= e.span.start_byte < end]
        outside = [e for e in document_edits if e not in inside]
        local = [TextEdit(Span(target - start, target - start), copy.text)] + [
            TextEdit(Span(e.span.start_byte - start, e.span.end_byte - start), e.new_text)
            for e in inside
        ]
        moved_text = decode(apply_edits(self.data[start:end], local))
        if placement == copy.start:
            moved = TextEdit(Span(copy.start, copy.end), moved_text)  # in the first nest's place
            edits = [moved]
        else:
            if copy.start < placement < copy.end:
                raise PlacementUnavailable("the place is inside the first nest")
            moved = TextEdit(Span(placement, placement), moved_text)
            edits = [moved, TextEdit(Span(copy.start, copy.end), "")]
        edits += [TextEdit(Span(start, end), "")] + outside
        nest = MovedNest(moved, start, EditMap(local), local[0])
        return Rewrite(edits, self.first, self.second, plan, copy, remove, None, nest)

    def _private_edits(
        self, plan, builder: CopyBuilder, copy: Copy
    ) -> tuple[Copy, list[TextEdit]] | None:
        """The copy and document edits that make every intermediate buffer private to an
        iteration of the fused loops (None when no buffer can be)."""
        assert self.window is not None
        privatizer = Privatizer(self.session, self.window, plan, copy, self.first, self.second)
        copy_edits: list[TextEdit] = []
        document_edits: list[TextEdit] = []
        for memref in private_candidates(self.window, self.first, self.second):
            try:
                private = privatizer.privatize(memref)
            except BudgetExceeded:
                raise  # (a result must not depend on how loaded the machine is)
            except PolyError:
                private = None
            if private is not None:
                copy_edits += private.copy_edits
                document_edits += private.document_edits
        if not copy_edits and not document_edits:
            return None
        return builder.with_replacements(copy, copy_edits), document_edits

    def _involved_ops(self, checked: Checked) -> list[set[int]]:
        """Per mismatch, the ids of the original top-level ops whose accesses take part
        in it: the origins of the reads that see another value and of the writes they
        see or should see (empty for copies that run or touch the wrong iterations)."""
        assert self.window is not None
        window = self.window
        by_name = {s.name: s for s in window.statements}

        def names(mismatch: Mismatch) -> set[str]:
            found: set[str] = set()
            if mismatch.kind not in ("read", "final"):
                return found
            for relation in (mismatch.seen, mismatch.expected):
                if relation is not None:
                    found |= {m.get_tuple_name(isl.dim_type.out) for m in maps_of(relation)}
            if mismatch.statement in checked.window_statements:
                instances = isl.UnionSet.from_set(mismatch.instances)
                origins = checked.origin.intersect_domain(instances)
                found |= {m.get_tuple_name(isl.dim_type.out) for m in maps_of(origins)}
            return found

        everything = {id(op) for op in window.ops}
        involved = []
        for mismatch in checked.mismatches:
            try:
                found = self.session.run(lambda m=mismatch: names(m), "the ops a mismatch involves")
            except PolyError:
                involved.append(everything)
                continue
            ops: set[int] = set()
            for name in found:
                statement = by_name.get(name)
                if statement is not None:
                    ops |= {id(op) for op in window.ops if is_under(statement.op, op)}
            involved.append(ops)
        return involved

    def _explain(self, checked: Checked) -> str:
        assert self.window is not None
        explainer = Explainer(
            self.window, checked.window, checked.origin, self.first, self.second, self.data
        )

        def priority(mismatch: Mismatch) -> int:
            if mismatch.kind == "read":
                return 0 if mismatch.statement in checked.copied else 1
            return 2 if mismatch.kind == "final" else 3

        if not checked.mismatches:
            return "the fused code would compute something else"
        mismatch = min(checked.mismatches, key=priority)
        try:
            return self.session.run(lambda: explainer.explain(mismatch), "an explanation")
        except PolyError:
            return "the fused code would compute something else"

    def _insertion_point(self, loop: AffineForOp, at_end: bool = False) -> tuple[int, str]:
        """Where the copy goes in `loop`'s body (the start of the line after the opening
        brace, or with `at_end` the start of the line of the closing brace or of the
        body's `affine.yield`) and its indentation."""
        region = loop.body
        if region is None:
            raise CannotEdit("the loop has no body")
        brace = region.span.start_byte
        if not rest_of_line_is_blank(self.data, brace + 1):
            raise CannotEdit("the loop body does not start on a new line")
        inner = [op for op in region.operations()]
        if inner:
            indent = indentation(self.data, inner[0].span.start_byte)
        else:
            indent = indentation(self.data, loop.span.start_byte) + "  "
        if not at_end:
            return next_line_start(self.data, brace), indent
        closing = region.span.end_byte - 1
        yields = [op for op in inner if isinstance(op, AffineYieldOp)]
        end = yields[-1].span.start_byte if yields else closing
        start = line_start(self.data, end)
        if not only_whitespace(self.data, start, end):
            raise CannotEdit("the loop body does not end on its own line")
        return start, indent

    # -- cost ---------------------------------------------------------------------------

    def _extra_compute(self, checked: Checked, remove: bool) -> float:
        """Extra executions of the fused code relative to the two nests (0 when every
        instance of the first nest still runs exactly once)."""
        assert self.window is not None and checked.host is not None
        if remove and self._runs_once(checked):
            return 0.0
        before = CostModel(self.window)
        after = CostModel(checked.window)
        original = before.nest(self.first) + before.nest(self.second)
        fused = after.nest(checked.host)
        if checked.kept is not None:
            fused += after.nest(checked.kept)
        if original <= 0:
            return 0.0
        return max(0.0, fused / original - 1.0)

    def _runs_once(self, checked: Checked) -> bool:
        """Whether the origin relation is a bijection onto the first nest's instances."""
        assert self.window is not None
        firsts = [s for s in self.window.statements if is_under(s.op, self.first)]
        if not firsts:
            return True
        targets = self.window.session.run(lambda: isl.UnionSet.from_set(firsts[0].instances))
        for statement in firsts[1:]:
            targets = targets.union(isl.UnionSet.from_set(statement.instances))

        def check() -> bool:
            copies = checked.origin.intersect_range(targets)
            return copies.is_injective() and copies.range().is_equal(targets)

        return bool(self.session.run(check, "the slice coverage"))
