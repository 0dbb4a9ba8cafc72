"""Check a fused text against the original: parse it, model the same window, map
every new statement instance to the instance it repeats, compare dataflows."""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    AffineForOp,
    Block,
    FuncOp,
    MemRefAllocOp,
    MemRefType,
    ModuleModel,
    Operation,
    Value,
)
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    Mismatch,
    NotAffine,
    PolyError,
    Statement,
    Window,
    array_name,
    compare,
    is_function_argument,
    is_under,
    render_isl,
    union_of_maps,
)
from affine_lsp.syntax import Span
from affine_lsp.transforms.edits import EditMap, apply_edits
from affine_lsp.transforms.functions import parse_function
from affine_lsp.transforms.fusion.copy import Copy
from affine_lsp.transforms.fusion.refute import refutation
from affine_lsp.transforms.fusion.slicing import SlicePlan

_CONTEXT_LOOP = re.compile(r"\b_q(\d+)\b")


@dataclass
class MovedNest:
    """The second nest moved up to the first nest's place (with the copy inside)."""

    edit: TextEdit  # the document edit whose new text is the moved nest
    region_start: int  # where the moved lines start in the original
    local: EditMap  # the edits made to the moved lines (the copy's insertion among them)
    copy_edit: TextEdit  # that insertion


@dataclass
class Rewrite:
    """A candidate rewrite of one pair and what it takes to check it."""

    edits: list[TextEdit]
    producer: AffineForOp
    consumer: AffineForOp
    plan: SlicePlan
    copy: Copy
    remove_producer: bool
    copy_edit: TextEdit | None = None  # the document edit inserting the copy
    moved: MovedNest | None = None

    def origin_of(self, mapping: EditMap, offset: int) -> int | None:
        """The original offset of a new offset, or None inside the copy."""
        old, edit = mapping.to_old(offset)
        if edit is None:
            return old
        if edit is self.copy_edit:
            return None
        if self.moved is not None and edit is self.moved.edit:
            relative = offset - mapping.new_start(edit)
            old_relative, local = self.moved.local.to_old(relative)
            if local is None and old_relative is not None:
                return self.moved.region_start + old_relative
            if local is self.moved.copy_edit:
                return None
        raise NotAffine("a rewritten op has no original")


@dataclass
class Checked:
    """A rewritten window, modelled, and (once compared) how it differs: `legal`, and
    the `mismatches` (computed when asked if a quick refutation already settled it)."""

    new_text: bytes
    window: Window
    function: FuncOp
    origin: isl.UnionMap
    found: list[Mismatch]
    copied: set[str]  # names of the statements in the copy
    live: set[str]
    bounds: dict[str, tuple[int, ...]]
    undefined: set[str]
    host: Operation | None = None  # the rewritten second nest (holding the copy)
    kept: Operation | None = None  # the first nest, when it is kept
    compared: bool = False
    refuted: str | None = None  # which quick check showed a difference (`refute.py`)
    _against: tuple[IslSession, Window] | None = None

    @property
    def window_statements(self) -> set[str]:
        return {s.name for s in self.window.statements}

    @property
    def legal(self) -> bool:
        return self.refuted is None and not self.found

    @property
    def mismatches(self) -> list[Mismatch]:
        """How the rewrite differs (empty: equivalent); for a refuted rewrite, the exact
        comparison runs now."""
        if self.refuted is not None and not self.found and self._against is not None:
            session, original = self._against
            self._against = None
            try:
                self.found = self._exact(session, original)
            except PolyError:
                pass  # refuted all the same; only the details are missing
        return self.found

    def compare(self, session: IslSession, original: Window, refute: bool = False) -> Checked:
        """Run the exact dataflow comparison (once); with `refute`, the quick refutation
        first, and the exact comparison only if it finds nothing (or when the
        mismatches are asked for)."""
        if not self.compared:
            self.compared = True
            self._against = (session, original)
            try:
                if refute:
                    self.refuted = refutation(
                        session, original, self.window, self.origin, self.live, self.undefined
                    )
            except NotAffine:
                self.refuted = None
            if self.refuted is None:
                self.found = self._exact(session, original)
        return self

    def _exact(self, session: IslSession, original: Window) -> list[Mismatch]:
        return compare(
            session,
            original,
            self.window,
            self.origin,
            self.live,
            self.bounds,
            self.undefined,
        )


def dead_after(window: Window, memref) -> bool:
    """Whether nothing can observe `memref` after the window: a local allocation whose
    uses are in the window, deallocs, or ops that ran before it (and do not run again:
    the window is not inside a loop). In a loop body, an allocation made outside the
    body also needs no read in the window to see a value from before the window (one
    an earlier iteration left): only then does nothing carry over from one
    iteration's window to the next."""
    if is_function_argument(memref) or not isinstance(memref.defining_op, MemRefAllocOp):
        return False
    once = isinstance(window.block.parent_op, FuncOp)
    first = window.block.operations.index(window.ops[0])
    for use in memref.uses:
        user = use.user
        if user is None:
            return False
        if user.name == "memref.dealloc" or window.contains(user):
            continue
        if once and _position_in_block(user, window.block) in range(first):
            continue
        return False
    if once or memref.defining_op.parent_block is window.block:
        return True
    return not _reads_from_before(window, array_name(memref))


def _reads_from_before(window: Window, array: str) -> bool:
    """Whether some read of `array` in the window sees a value written before it."""
    reads = [s.access for s in window.statements if s.array == array and not s.is_write]
    writes = [s.access for s in window.statements if s.array == array and s.is_write]
    if not reads:
        return False
    if not writes:
        return True

    ctx = window.session.ctx
    flow = window.dataflow(union_of_maps(reads, ctx), union_of_maps(writes, ctx))
    return not flow.fresh.is_empty()


def live_arrays(window: Window) -> set[str]:
    """The memrefs of the window whose final contents can be observed afterwards."""
    return {a for a, m in window.memrefs.items() if not dead_after(window, m)}


def undefined_at_start(window: Window, memref, pair: tuple[Operation, Operation]) -> bool:
    """A fresh allocation nothing touches before the window: its contents are undefined
    there (reading them is reading garbage, in the original as in the rewrite). Only
    for memrefs the two nests alone touch in the window: garbage is not an excuse to
    reorder reads and writes of other ops."""
    if not isinstance(memref.defining_op, MemRefAllocOp):
        return False
    if not isinstance(window.block.parent_op, FuncOp):
        return False
    first = window.block.operations.index(window.ops[0])
    for use in memref.uses:
        user = use.user
        if user is None:
            return False
        if user.name == "memref.dealloc" or is_under(user, pair[0]) or is_under(user, pair[1]):
            continue
        if window.contains(user) or _position_in_block(user, window.block) < first:
            return False
    return True


def _position_in_block(op: Operation, block: Block) -> int:
    """Index in `block` of `op` or of its ancestor there (-1 if none)."""
    current: Operation | None = op
    while current is not None:
        if current.parent_block is block:
            return block.operations.index(current)
        current = current.parent_op
    return -1


def _origin_text(
    new: Statement, old: Statement, rewrite: Rewrite, params: str, in_copy: bool
) -> str:
    lanes = [f"_l{k}" for k in range(new.lanes)]
    if not in_copy:
        if len(new.domain.dims) != len(old.domain.dims):
            raise NotAffine("a statement changed its loops")
        outputs = list(new.domain.dims)
    else:
        depth = rewrite.plan.depth
        outputs = []
        kept = 0
        positions: dict[str, str] = {}
        for level in old.domain.levels:
            loop = level.op
            if not isinstance(loop, AffineForOp):
                continue
            loop_plan = rewrite.plan.plan_of(loop)
            promoted = rewrite.copy.promoted.get(id(loop))
            if promoted is not None:
                outputs.append(
                    "(" + _CONTEXT_LOOP.sub(lambda m: positions[f"_q{m.group(1)}"], promoted) + ")"
                )
            else:
                name = f"_d{depth + kept}"
                positions[loop_plan.name] = name
                outputs.append(name)
                kept += 1
        if len(new.domain.dims) != depth + kept:
            raise NotAffine("the copy's loops do not match the first nest")
    inputs = ", ".join(new.domain.dims + lanes)
    return f"[{params}] -> {{ {new.name}[{inputs}] -> {old.name}[{', '.join(outputs + lanes)}] }}"


def check_rewrite(
    session: IslSession,
    original: Window,
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    rewrite: Rewrite,
    compare_flows: bool = True,
    refute: bool = False,
) -> Checked:
    """Model the rewritten window and compare it with the original (unless
    `compare_flows` is False: then only the model is built, mismatches stay empty;
    `refute`: try the quick refutation first, `Checked.compare`)."""
    new_data = apply_edits(data, rewrite.edits)
    new_function = parse_function(new_data, function, model)
    mapping = EditMap(rewrite.edits)
    consumer_start = rewrite.consumer.span.start_byte
    consumer = next(
        (
            op
            for op in new_function.walk()
            if isinstance(op, AffineForOp)
            and rewrite.origin_of(mapping, op.span.start_byte) == consumer_start
        ),
        None,
    )
    if consumer is None or consumer.parent_block is None:
        raise NotAffine("the rewritten second nest could not be found")
    block = consumer.parent_block
    low, high = sorted((rewrite.producer.span.start_byte, rewrite.consumer.span.start_byte))
    inside = [
        index
        for index, op in enumerate(block.operations)
        if low <= (rewrite.origin_of(mapping, op.span.start_byte) or -1) <= high
    ]
    window = Window(session, block, inside[0], inside[-1], original.resolver.aliases)
    by_start = {s.op.span.start_byte: s for s in original.statements}
    producer_statements = [s for s in original.statements if is_under(s.op, rewrite.producer)]
    copied = []
    params: set[str] = set()
    pieces = []
    for statement in window.statements:
        params |= statement.domain.params
    for statement in original.statements:
        params |= statement.domain.params
    params |= set(rewrite.plan.params)
    param_text = ", ".join(sorted(params))
    for statement in window.statements:
        old_start = rewrite.origin_of(mapping, statement.op.span.start_byte)
        if old_start is None:
            copied.append(statement)
            continue
        old = by_start.get(old_start)
        if old is None:
            raise NotAffine("a rewritten statement has no original")
        pieces.append(_origin_text(statement, old, rewrite, param_text, False))
    if len(copied) != len(producer_statements):
        raise NotAffine("the copy does not have the first nest's accesses")
    for new, old in zip(copied, producer_statements, strict=True):
        pieces.append(_origin_text(new, old, rewrite, param_text, True))
    origin = _union(session, pieces)
    live = live_arrays(original)
    pair = (rewrite.producer, rewrite.consumer)
    undefined = {a for a, m in original.memrefs.items() if undefined_at_start(original, m, pair)}
    live |= {a for a, m in window.memrefs.items() if a not in original.memrefs}
    bounds = _changed_shapes(original, window, live)
    producer_start = rewrite.producer.span.start_byte
    kept = next(
        (
            op
            for op in window.ops
            if isinstance(op, AffineForOp)
            and rewrite.origin_of(mapping, op.span.start_byte) == producer_start
        ),
        None,
    )
    checked = Checked(
        new_data,
        window,
        new_function,
        origin,
        [],
        {s.name for s in copied},
        live,
        bounds,
        undefined,
        consumer,
        kept,
    )
    return checked.compare(session, original, refute) if compare_flows else checked


def _shapes(window: Window, live: set[str]) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for statement in window.statements:
        declared = getattr(statement.op, "memref_type", None)
        if statement.array in live or not isinstance(declared, MemRefType):
            continue
        if declared.shape is not None and all(d is not None for d in declared.shape):
            shapes.setdefault(statement.array, tuple(declared.shape))  # type: ignore[arg-type]
    return shapes


def _changed_shapes(original: Window, window: Window, live: set[str]) -> dict[str, tuple[int, ...]]:
    """Static shapes of the memrefs the rewrite shrank (their accesses must stay inside)."""
    before = _shapes(original, live)
    return {a: shape for a, shape in _shapes(window, live).items() if before.get(a) != shape}


def _union(session: IslSession, texts: list[str]) -> isl.UnionMap:
    maps = [session.map(text) for text in texts]
    return session.run(lambda: union_of_maps(maps, session.ctx))


def check_removal(
    session: IslSession,
    original: Window,
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    edits: list[TextEdit],
) -> Checked:
    """Check a rewrite that deletes whole top-level ops of the window and leaves every
    other op as it was: every remaining statement instance is its own origin."""
    new_data = apply_edits(data, edits)
    new_function = parse_function(new_data, function, model)
    mapping = EditMap(edits)
    starts = {op.span.start_byte for op in original.ops}
    survivors = []
    for op in new_function.walk():
        old, edit = mapping.to_old(op.span.start_byte)
        if edit is None and old in starts:
            survivors.append(op)
    if not survivors:
        raise NotAffine("nothing remains of the window")
    block = survivors[0].parent_block
    if block is None or any(op.parent_block is not block for op in survivors):
        raise NotAffine("the remaining ops are not in one block")
    indices = [block.operations.index(op) for op in survivors]
    window = Window(session, block, min(indices), max(indices), original.resolver.aliases)
    by_start = {s.op.span.start_byte: s for s in original.statements}
    params: set[str] = set()
    for statement in [*window.statements, *original.statements]:
        params |= statement.domain.params
    param_text = ", ".join(sorted(params))
    pieces = []
    for statement in window.statements:
        old, edit = mapping.to_old(statement.op.span.start_byte)
        source = by_start.get(old) if edit is None and old is not None else None
        if source is None:
            raise NotAffine("a remaining statement has no original")
        if len(statement.domain.dims) != len(source.domain.dims):
            raise NotAffine("a statement changed its loops")
        lanes = [f"_l{k}" for k in range(statement.lanes)]
        dims = ", ".join(statement.domain.dims + lanes)
        pieces.append(f"[{param_text}] -> {{ {statement.name}[{dims}] -> {source.name}[{dims}] }}")
    origin = (
        _union(session, pieces)
        if pieces
        else session.run(lambda: isl.UnionMap.empty(isl.Space.params_alloc(session.ctx, 0)))
    )
    live = live_arrays(original)
    checked = Checked(new_data, window, new_function, origin, [], set(), live, {}, set())
    return checked.compare(session, original, refute=True)


@dataclass
class CopiedOp:
    """Original code copied into a rewrite: the new text's range [start, end) holds
    copies of `accesses` (the original access ops, in text order), run at the values
    `above` gives the ivs of the original loops around the copy (forms over the new
    loops' SSA names, `%i`, and the window's isl parameters); loops inside the copy
    are copied one for one."""

    start: int
    end: int
    accesses: list[Operation]
    above: list[tuple[Value, AffineForm]]


def check_copies(
    session: IslSession,
    original: Window,
    data: bytes,
    model: ModuleModel,
    function: FuncOp,
    edits: list[TextEdit],
    copies: list[CopiedOp],
    pair: tuple[AffineForOp, AffineForOp],
    span: Span,
    host_offset: int,
) -> Checked:
    """Check a rewrite that replaces the window's ops by the new text in `span` (of
    the new document), made of `copies` of the original code; its main nest starts at
    `host_offset`."""
    new_data = apply_edits(data, edits)
    new_function = parse_function(new_data, function, model)
    host = next(
        (
            op
            for op in new_function.walk()
            if isinstance(op, AffineForOp) and op.span.start_byte == host_offset
        ),
        None,
    )
    if host is None or host.parent_block is None:
        raise NotAffine("the rewritten nest could not be found")
    block = host.parent_block
    inside = [
        k
        for k, op in enumerate(block.operations)
        if span.start_byte <= op.span.start_byte < span.end_byte
    ]
    window = Window(session, block, inside[0], inside[-1], original.resolver.aliases)
    by_op = {id(s.op): s for s in original.statements}
    params: set[str] = set()
    for statement in [*window.statements, *original.statements]:
        params |= statement.domain.params
    matched: dict[int, tuple[Statement, CopiedOp]] = {}
    for copy in copies:
        inside = sorted(
            (s for s in window.statements if copy.start <= s.op.span.start_byte < copy.end),
            key=lambda s: s.op.span.start_byte,
        )
        if len(inside) != len(copy.accesses):
            raise NotAffine("a copy does not have the original's accesses")
        for new, old_op in zip(inside, copy.accesses, strict=True):
            old = by_op.get(id(old_op))
            if old is None or old.lanes != new.lanes:
                raise NotAffine("a copied access has no original")
            matched[id(new.op)] = (old, copy)
        for _, form in copy.above:
            params |= {n for n in form.names() if not n.startswith("%")}
    param_text = ", ".join(sorted(params))
    pieces = []
    for new in window.statements:
        found = matched.get(id(new.op))
        if found is None:
            raise NotAffine("a rewritten access has no original")
        old, copy = found
        pieces.append(_copy_origin(new, old, copy, param_text))
    origin = _union(session, pieces)
    live = live_arrays(original)
    undefined = {a for a, m in original.memrefs.items() if undefined_at_start(original, m, pair)}
    checked = Checked(
        new_data, window, new_function, origin, [], set(), live, {}, undefined, host, None
    )
    return checked.compare(session, original)


def _copy_origin(new: Statement, old: Statement, copy: CopiedOp, params: str) -> str:
    above = [iv for iv, _ in copy.above]
    old_above = len(old.domain.ivs) - _count_inside(old, copy)
    if [id(v) for v in old.domain.ivs[:old_above]] != [id(v) for v in above]:
        raise NotAffine("a copy's loops do not match the original's")
    inside = len(old.domain.dims) - old_above
    new_above = len(new.domain.dims) - inside
    if new_above < 0:
        raise NotAffine("a copy lost loops of the original")
    dims = {iv.name: dim for iv, dim in zip(new.domain.ivs, new.domain.dims, strict=True)}

    def rename(name: str) -> str:
        if name.startswith("%"):
            if name not in dims:
                raise NotAffine(f"{name} is not a loop around the copy")
            return dims[name]
        return name

    outputs = [render_isl(_renamed(form, rename)) for _, form in copy.above]
    outputs += new.domain.dims[new_above:]
    lanes = [f"_l{k}" for k in range(new.lanes)]
    inputs = ", ".join(new.domain.dims + lanes)
    return f"[{params}] -> {{ {new.name}[{inputs}] -> {old.name}[{', '.join(outputs + lanes)}] }}"


def _count_inside(old: Statement, copy: CopiedOp) -> int:
    """How many of the loops around the original access are copied with it."""
    above = {id(iv) for iv, _ in copy.above}
    return len([iv for iv in old.domain.ivs if id(iv) not in above])


def _renamed(form: AffineForm, rename) -> AffineForm:
    return AffineForm(tuple((rename(n), c) for n, c in form.terms), (), form.constant)
