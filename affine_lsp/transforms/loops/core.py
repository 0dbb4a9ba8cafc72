"""What every loop transformation shares: the request (`Spec`), the answer
(`Result`), the context of one loop, and the pipeline

    plan (structure + legality from dependences)  ->  text  ->  proof

that `transform()` runs. A refusal anywhere gives a `Result` with a reason and no
text; a proof that fails refuses too.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from types import ModuleType

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineForOp, Block, FuncOp, ModuleModel, Operation, function_of
from affine_lsp.poly import Budget, BudgetExceeded, IslSession, PolyError, budgets
from affine_lsp.transforms.diff import minimal_edits
from affine_lsp.transforms.edits import line_start, rest_of_line_is_blank
from affine_lsp.transforms.loops.legality import NestAnalysis
from affine_lsp.transforms.loops.nest import body_block, iv_name
from affine_lsp.transforms.loops.proof import Prover, Rewrite
from affine_lsp.transforms.naming import FreshNames, names_in

INTERCHANGE = "interchange"
PERMUTE = "permute"
TILE = "tile"
UNROLL = "unroll"
UNROLL_JAM = "unroll-jam"
PARALLELIZE = "parallelize"
HOIST = "hoist"
DISTRIBUTE = "distribute"
SKEW = "skew"
WAVEFRONT = "wavefront"
SCALAR_REPLACE = "scalar-replace"
KINDS = (
    INTERCHANGE,
    PERMUTE,
    TILE,
    UNROLL,
    UNROLL_JAM,
    PARALLELIZE,
    HOIST,
    DISTRIBUTE,
    SKEW,
    WAVEFRONT,
    SCALAR_REPLACE,
)

TOO_COMPLEX = "too complex to analyse in time"
INTERNAL_ERROR = "cannot transform this loop (internal error)"


@dataclass(frozen=True)
class Spec:
    """One transformation request.

    permutation: for PERMUTE, `P[k]` = new position of the band's k-th loop;
    sizes: for TILE and WAVEFRONT (tiles in wavefront), one per loop from the
    outside (fewer: the outer loops only);
    factor: for UNROLL (None: full), UNROLL_JAM, SKEW (the second loop by this
    factor of the first loop's iv) and WAVEFRONT (rows at once; None: a whole
    diagonal in parallel);
    skew: for INTERCHANGE, PERMUTE, TILE and WAVEFRONT, skew the band's second loop
    by this factor of the first loop's iv first (None: no skew);
    skews: a general skew (for SKEW, and first for the others): row k - 1 holds the
    factors of loops 0..k-1 added to the band's k-th loop;
    peel: for TILE of generated code, peel the point loops (full tiles without
    `min`/`max` bounds); False: one copy of each statement, its point loops bounded
    by `min`/`max` (what `run` falls back to when the peeled code is too complex
    to prove).
    interleave: for UNROLL_JAM, write the copies in the body of the innermost jammed
    loop op by op (each op's copies side by side, an op the same in every copy
    once) where the dependences allow, so that a vectorizer sees each op's copies
    together; else, or where they do not, one copy after the other.
    """

    kind: str
    permutation: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()
    factor: int | None = None
    skew: int | None = None
    skews: tuple[tuple[int, ...], ...] = ()
    peel: bool = True
    interleave: bool = False

    def with_skew(self, factor: int) -> Spec:
        return replace(self, skew=factor, skews=())

    def with_skews(self, rows: tuple[tuple[int, ...], ...]) -> Spec:
        if len(rows) == 1 and len(rows[0]) == 1:
            return self.with_skew(rows[0][0])
        return replace(self, skew=None, skews=rows)

    def skew_rows(self) -> tuple[tuple[int, ...], ...]:
        """The skew asked for, as rows (empty: none)."""
        if self.skews:
            return self.skews
        if self.skew is not None:
            return ((self.skew,),)
        if self.kind == SKEW and self.factor is not None:
            return ((self.factor,),)
        return ()


class Refused(PolyError):
    """The transformation does not apply here, or would be wrong: `reason` says why;
    `hint` is a variant that would be legal (a skew first), if one was found."""

    def __init__(self, reason: str, hint: Spec | None = None) -> None:
        super().__init__(reason)
        self.hint = hint


@dataclass
class Result:
    spec: Spec
    new_text: bytes | None = None
    edits: list[TextEdit] = field(default_factory=list)
    reason: str | None = None
    timed_out: bool = False
    hint: Spec | None = None  # a legal variant of a refused transformation
    summary: str = ""  # what was done, in words
    rewrite: Rewrite | None = field(default=None, repr=False)  # the proven rewrite, origins

    @property
    def applied(self) -> bool:
        return self.new_text is not None


class Context:
    """One loop of one document, and what the transformations ask about it."""

    def __init__(
        self, data: bytes, model: ModuleModel, loop: AffineForOp, session: IslSession
    ) -> None:
        function = function_of(loop)
        if function is None:
            raise Refused("the loop is not in a function")
        self.data = data
        self.model = model
        self.loop = loop
        self.function: FuncOp = function
        self.session = session
        self._analyses: dict[int, NestAnalysis] = {}
        self._names: FreshNames | None = None

    def analysis(self, root: AffineForOp | None = None) -> NestAnalysis:
        root = root or self.loop
        found = self._analyses.get(id(root))
        if found is None:
            found = self._analyses[id(root)] = NestAnalysis(self.session, root, self.model)
        return found

    @property
    def names(self) -> FreshNames:
        if self._names is None:
            self._names = FreshNames(names_in(self.function))
        return self._names

    def fresh(self, like: str, suffix: str = "") -> str:
        """A new name derived from `like`: `%i` -> `%i_tile` (suffix) or `%i_1`."""
        if suffix:
            return self.names.reuse(f"{like}_{suffix}")
        return self.names.fresh(like)

    def line(self, op: Operation) -> int:
        return self.data.count(b"\n", 0, op.span.start_byte) + 1


def loop_name(loop: AffineForOp) -> str:
    return iv_name(loop)


def check_layout(context: Context, loop: AffineForOp, header: bool = True) -> None:
    """Refused unless the loop has its own lines, its body starting on the line
    after its header and ending on a line of its own; and, when the transformation
    rewrites the loop's header (`header`), unless it is in the custom form."""
    data = context.data
    body = loop.body
    if body is None or body_block(loop) is None:
        raise Refused(f"{loop_name(loop)} has no body")
    if header and data[loop.name_span.start_byte : loop.name_span.start_byte + 1] == b'"':
        raise Refused(
            f'{loop_name(loop)} is written in the generic form ("affine.for"(...)): its '
            f"header can be rewritten only in the custom form (affine.for {loop_name(loop)} "
            "= ... to ... { ... })"
        )
    start = line_start(data, loop.span.start_byte)
    if data[start : loop.span.start_byte].strip() or not rest_of_line_is_blank(
        data, loop.span.end_byte
    ):
        raise Refused("the loop shares its first or last line with other code")
    if not rest_of_line_is_blank(data, body.span.start_byte + 1):
        raise Refused("the loop's body starts on its header line")
    closing = body.span.end_byte - 1
    if data[line_start(data, closing) : closing].strip():
        raise Refused("the loop's body ends on the line of its last op")


def window_range(context: Context, rewrite: Rewrite) -> tuple[Block, int, int]:
    """(block, first, last): the original ops the rewrite replaces."""
    block = context.loop.parent_block
    if block is None:
        raise Refused("the loop is not in a block")
    inside = [
        k
        for k, op in enumerate(block.operations)
        if rewrite.start <= op.span.start_byte < rewrite.end
    ]
    if not inside:
        raise Refused("nothing to rewrite")
    return block, inside[0], inside[-1]


def proven_text(context: Context, rewrite: Rewrite) -> bytes:
    block, first, last = window_range(context, rewrite)
    prover = Prover(
        context.session, context.data, context.model, context.function, block, first, last
    )
    return prover.prove(rewrite).new_text


def run(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    spec: Spec,
    module: ModuleType,
    budget: Budget | None = None,
    prove: bool = True,
    check: bool = True,
) -> Result:
    """Plan, write and (unless `prove` is False) prove one transformation; `check`
    False skips the dependence check (to measure what a naive rewrite does).

    A tiling whose peeled point loops (`Spec.peel`) are too complex to prove is
    written again with one copy of each statement and proven within what is left
    of the deadline (`_unpeeled`): peeling a skewed band's tiles makes a copy of
    each statement per combination of full and partial tiles, and the proof
    compares every pair of copies that touch one element."""
    session = IslSession(budget or budgets.TRANSFORM)
    planned = False
    try:
        with session.errors("the loop"):  # (isl called directly: a cap run out on the way)
            context = Context(data, model, loop, session)
            plan = module.plan(context, spec, check)
            planned = getattr(plan, "scheduled", None) is not None  # (generated code)
            rewrite = module.rewrite(context, plan)
            if prove:
                new_text = proven_text(context, rewrite)
            else:
                new_text = rewrite.apply(data)
            summary = module.summary(context, plan) if hasattr(module, "summary") else ""
    except _STOPS as error:
        retry = _unpeeled(spec, error, planned, session)
        if retry is not None:
            return run(data, model, loop, retry[0], module, retry[1], prove, check)
        return _stopped(spec, error)
    if new_text == data:
        return Result(spec, reason="nothing to do")
    edits = minimal_edits(data, new_text)
    return Result(spec, new_text, edits, summary=summary, rewrite=rewrite)


_MODULES = {
    INTERCHANGE: "band",
    PERMUTE: "band",
    TILE: "band",
    SKEW: "band",
    WAVEFRONT: "band",
    UNROLL: "unroll",
    UNROLL_JAM: "unroll",
    PARALLELIZE: "parallel",
    HOIST: "hoist",
    DISTRIBUTE: "distribute",
    SCALAR_REPLACE: "scalar_replace",
}


def module_of(kind: str) -> ModuleType:
    """The module implementing `kind` (`plan`, `rewrite`, `title`, `summary`)."""
    return importlib.import_module(f"affine_lsp.transforms.loops.{_MODULES[kind]}")


def transform(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    spec: Spec,
    budget: Budget | None = None,
    prove: bool = True,
    check: bool = True,
) -> Result:
    """Apply `spec` to `loop`: the proven result, or why not."""
    return run(data, model, loop, spec, module_of(spec.kind), budget, prove, check)


def check_only(
    data: bytes,
    model: ModuleModel,
    loop: AffineForOp,
    spec: Spec,
    module: ModuleType,
    session: IslSession,
    contexts: dict[int, Context] | None = None,
) -> Result:
    """The fast path alone: structure and dependences (no text, no proof). A Result
    with `reason` None means the transformation is expected to apply."""
    try:
        with session.errors("the loop"):
            key = id(loop)
            context = (contexts or {}).get(key)
            if context is None:
                context = Context(data, model, loop, session)
                if contexts is not None:
                    contexts[key] = context
            module.plan(context, spec, True)
    except _STOPS as error:
        return _stopped(spec, error)
    return Result(spec)


def _unpeeled(
    spec: Spec, error: Exception, planned: bool, session: IslSession
) -> tuple[Spec, Budget] | None:
    """The tiling `spec` again without peeling, and its budget (the same operation
    cap, the deadline that is left), when the generated code of peeled tiles ran
    out of budget after its plan was found legal; None otherwise (no time left
    included)."""
    if not (isinstance(error, BudgetExceeded) and planned and spec.kind == TILE and spec.peel):
        return None
    left = budgets.seconds_left(session.deadline)
    if left is not None and left <= 0:
        return None
    return replace(spec, peel=False), Budget(session.budget.max_operations, left)


# Input we did not foresee: refused, never a crash (the tests count these).
_UNFORESEEN = (ValueError, KeyError, IndexError, AttributeError, TypeError)
_STOPS = (Refused, BudgetExceeded, PolyError, *_UNFORESEEN)


def _stopped(spec: Spec, error: Exception) -> Result:
    """The refusal of a transformation that `error` (one of `_STOPS`) stopped."""
    if isinstance(error, Refused):
        return Result(spec, reason=error.reason, hint=error.hint)
    if isinstance(error, BudgetExceeded):
        return Result(spec, reason=TOO_COMPLEX, timed_out=True)
    if isinstance(error, PolyError):
        return Result(spec, reason=_cannot(error.reason))
    return Result(spec, reason=f"{INTERNAL_ERROR}: {type(error).__name__}: {error}")


def _cannot(reason: str) -> str:
    if reason.startswith(("the rewritten", "cannot", "nothing")):
        return reason
    return f"cannot analyse the loop: {reason}"
