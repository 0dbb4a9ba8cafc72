"""Proving a loop transformation: the rewritten text, parsed back, computes what the
original computes.

The rewritten function is parsed and verified again; the ops of the rewritten
range form a new `Window`. Every new op has an origin: the original op it copies
(`text.Origin`, recorded while writing; ops outside the range are the same ops
as before). The iteration of the original op a new instance repeats is read from
the new text itself: each induction variable of the original op's loops, under
the copy's renaming, names a value of the new text, whose affine expression in
the new loops (through `affine.apply` and the like) gives that coordinate (an
iv that names nothing there — a loop the op was hoisted out of — stays free,
ranging over the original loop); in generated code (`transforms.schedule`) the
copy records each iv's value as an affine form of the new loops' ivs
(`Origin.substitution`), substituted into its affine maps. This gives the
origin relation of every new
statement, and then:

1. **memory** (`poly.equivalence.compare`, as for fusion): every new instance
   has an origin and touches what it touched, every read and the final
   contents of every memref see the write whose origin the original saw; a
   rewrite that only reorders is shown first by the cheaper sufficient condition
   `keeps_every_dependence` (each original instance once, same elements, every
   pair touching one element in the same order), the comparison deciding if not;
2. **values**: every new op computes what its origin computed from the same
   operands: same op text up to SSA names; each operand either the same value
   from outside, an index value equal (as an affine expression, checked by isl)
   to the original operand at the origin iteration, or the result of a new op
   that repeats the original operand's definer at a consistent iteration; ops
   without an origin may only compute indices (`affine.apply`, index
   constants) or be declared by the transformation (`Rewrite.stands_for`);
3. **parallel loops**: no two iterations of an `affine.parallel` of the new
   text touch the same element with one of them writing.

Values carried by `iter_args` are memory here (`scalars.py`): a loop's init,
block argument, yield and result are writes and reads of a scalar array shared
by the loops that stand for the same original loop, so 1 proves that every
carried value comes from the right iteration; a use of an original block
argument or result that the new text replaced by the value itself (an unrolled
body using the previous copy's result) must hold what the original's dataflow
delivered there (the yield operand of the iteration before, or the init).

An `iter_args` entry a rewrite declares as a memory element
(`Rewrite.promotions`: scalar replacement) is that element in 1 (checked to be
loaded just before the loop and stored just after it, and touched by nothing else
in the loop: `scalars.check_promotions`); its block argument holds what the
original load read, its yield must hold what the original store wrote (2). A
*rotating* entry (`Rewrite.rotations`: an element reused by the next iterations) is,
at each iteration, a read of the element the new text makes it hold (its init's
load at the first iteration, its yield operand's element one step before at the
others: `scalars.check_rotations`), which 1 compares with what the original load
read there; its block argument holds what that load read (2).

By induction over the execution order, every new statement instance computes
what its origin computed; with 1 the memory ends the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    Block,
    FuncOp,
    ModuleModel,
    Operation,
    Use,
    Value,
)
from affine_lsp.poly import (
    AffineForm,
    Domain,
    DomainBuilder,
    IslSession,
    Mismatch,
    NotAffine,
    PolyError,
    Statement,
    Window,
    compare,
    enclosing_levels,
    is_under,
    keeps_every_dependence,
    render_isl,
    union_of_maps,
)
from affine_lsp.syntax import Span, encode
from affine_lsp.transforms.edits import EditMap, apply_edits
from affine_lsp.transforms.functions import parse_function
from affine_lsp.transforms.loops.nest import ops_by_start
from affine_lsp.transforms.loops.scalars import (
    INIT,
    ITERATION,
    RESULT,
    YIELD,
    Carried,
    Promotion,
    Rotation,
    ScalarWindow,
    check_promotions,
    check_rotations,
    find_promotions,
    find_rotations,
)
from affine_lsp.transforms.loops.text import Origin, Renames

_SSA_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+(#\d+)?")
_INDEX_OPS = ("affine.apply", "affine.min", "affine.max", "arith.constant")
_SUBSCRIPT_ROLES = ("dim", "symbol")
_STRUCTURE = (AffineForOp, AffineParallelOp, AffineIfOp)


class ProofFailed(PolyError):
    """The rewritten text is not (proven) equivalent: `reason` says where."""


@dataclass
class Rewrite:
    """A proposed rewrite: the document range [start, end) replaced by `text`, whose
    copied ops have `origins` (absolute offsets in the new document); `extra` edits
    lie after `end` (renamed uses). `stands_for` lets a transformation declare that
    a new value (by name, in the new text) holds an original value (checked by the
    transformation itself, e.g. a reduction's combined result)."""

    start: int
    end: int
    text: str
    origins: dict[int, Origin]
    extra: list[TextEdit] = field(default_factory=list)
    stands_for: dict[str, Value] = field(default_factory=dict)
    operands: dict[int, list[Value]] = field(default_factory=dict)
    """For a new op (by its start offset) whose operands are not its origin's: the
    original values they must hold (a parallel loop's yield of reductions)."""
    promotions: list[Promotion] = field(default_factory=list)
    rotations: list[Rotation] = field(default_factory=list)
    first_iteration: set[int] = field(default_factory=set)
    """New ops (by start offset) hoisted out of loops that repeat their origin's first
    iteration of those loops only (not every one)."""
    also: dict[int, list[Origin]] = field(default_factory=dict)
    carries: dict[int, list[tuple[int, Origin]]] = field(default_factory=dict)
    """New loops (by start offset) carrying the values of several copies of one original
    loop (unroll-and-jam): for each iter_args position, the original position and the
    copy (the original loop with that copy's renaming) whose value it carries."""
    """New loads (by start offset) that repeat other original loads besides their
    origin (one load of an element standing for several): they must read what each
    of those read (memory), and their result holds what each of those loaded."""

    @property
    def edits(self) -> list[TextEdit]:
        return [TextEdit(Span(self.start, self.end), self.text), *self.extra]

    def apply(self, data: bytes) -> bytes:
        return apply_edits(data, self.edits)


@dataclass
class Proven:
    """A rewrite whose text has been checked: the new document and function."""

    new_text: bytes
    function: FuncOp
    window: Window


def _window_range(block_ops: list[Operation], start: int, end: int) -> tuple[int, int]:
    inside = [k for k, op in enumerate(block_ops) if start <= op.span.start_byte < end]
    if not inside:
        raise ProofFailed("the rewritten code could not be found")
    return inside[0], inside[-1]


class _Side:
    """One side (original or new) of the comparison: its window and the domains of
    any op in it (not only memory statements)."""

    def __init__(self, window: ScalarWindow) -> None:
        self.window = window
        self.builder = DomainBuilder(window.session, window.resolver)
        self.domains: dict[tuple, Domain] = {}
        self.statements = {id(s.op): s for s in window.statements if not isinstance(s, Carried)}
        self.carried = {(id(c.loop), c.kind, c.position): c for c in window.carried}

    def domain(self, op: Operation) -> Domain:
        levels, blocker = enclosing_levels(op, self.window.block)
        if blocker is not None:
            raise ProofFailed(f"'{blocker.name}' around an op is not affine")
        key = tuple((id(level.op), level.branch) for level in levels)
        found = self.domains.get(key)
        if found is None:
            found = self.domains[key] = self.builder.build(levels)
        return found

    def term(self, value: Value, domain: Domain) -> str | None:
        """The isl text of an index value over `domain`'s dims (None: not affine)."""
        try:
            return self.window.resolver.value(value, domain.scope).text
        except NotAffine:
            return None


def result_position(value: Value) -> int:
    """The position of a result among its op's results (`%s, %m = ...`: `%m` is 1,
    though each name is a group of its own)."""
    op = value.defining_op
    if op is not None:
        for position, result in enumerate(op.results):
            if result is value:
                return position
    return value.index


def _find_carries(
    function: Operation, carries: dict[int, list[tuple[int, Origin]]]
) -> dict[int, list[tuple[int, Origin]]]:
    """`Rewrite.carries` by id of the new loop (ProofFailed if one is not there)."""
    if not carries:
        return {}
    by_start = {op.span.start_byte: op for op in function.walk() if isinstance(op, AffineForOp)}
    found: dict[int, list[tuple[int, Origin]]] = {}
    for offset, entries in carries.items():
        loop = by_start.get(offset)
        if loop is None:
            raise ProofFailed("the rewritten code could not be found")
        found[id(loop)] = entries
    return found


def visible_value(op: Operation, name: str) -> Value | None:
    """The value named `name` that `op` sees (block arguments and earlier results of
    the blocks around it)."""
    base = name.split("#")[0]
    child: Operation | None = op
    while child is not None and child.parent_block is not None:
        block = child.parent_block
        for argument in block.arguments:
            if argument.name == base:
                return argument
        for earlier in block.operations:
            if earlier is child:
                break
            for result in earlier.results:
                if result.name == base:
                    return result
        child = block.parent_op
    return None


def _carried_use(value: Value) -> tuple[AffineForOp, str, int] | None:
    """(loop, ITERATION or RESULT, position) when `value` is an iter_arg block
    argument or a result of an affine.for."""
    if value.owner_block is not None:
        loop = value.owner_block.parent_op
        if isinstance(loop, AffineForOp) and value.role == "iter_arg":
            return loop, ITERATION, value.arg_number - 1
        return None
    loop = value.defining_op
    if isinstance(loop, AffineForOp) and loop.iter_args:
        return loop, RESULT, result_position(value)
    return None


class Prover:
    """Checks `Rewrite`s of the ops of the original window."""

    def __init__(
        self,
        session: IslSession,
        data: bytes,
        model: ModuleModel,
        function: FuncOp,
        block: Block,
        first: int,
        last: int,
    ) -> None:
        self.session = session
        self.data = data
        self.model = model
        self.function = function
        self.original = ScalarWindow(
            session, block, first, last, model.alias_table(), allow_parallel=True
        )
        self.old = _Side(self.original)
        self._old_sources: isl.UnionMap | None = None
        self.carries: dict[int, list[tuple[int, Origin]]] = {}

    # -- the new side -----------------------------------------------------------------

    def prove(self, rewrite: Rewrite) -> Proven:
        """The checked rewrite, or ProofFailed saying why not."""
        new_data = rewrite.apply(self.data)
        self.new_data = new_data
        self.rewrite = rewrite
        try:
            function = parse_function(new_data, self.function, self.model)
        except NotAffine as error:
            raise ProofFailed(
                error.reason.replace("the fused code", "the rewritten code")
            ) from None
        new_end = rewrite.start + len(encode(rewrite.text))
        block = self._new_block(function, rewrite.start, new_end)
        first, last = _window_range(block.operations, rewrite.start, new_end)
        origins = self._origins(function, rewrite, new_end)

        def array_of(loop: AffineForOp) -> str | None:
            origin = origins.get(id(loop))
            if origin is not None and isinstance(origin.op, AffineForOp):
                return f"L{origin.op.span.start_byte}"
            return f"N{loop.span.start_byte}"

        try:
            self.promoted = find_promotions(function, rewrite.promotions)
            self.rotated = find_rotations(function, rewrite.rotations)
        except PolyError as error:
            raise ProofFailed(error.reason) from None
        self.carries = _find_carries(function, rewrite.carries)
        window = ScalarWindow(
            self.session,
            block,
            first,
            last,
            self.original.resolver.aliases,
            allow_parallel=True,
            array_of=array_of,
            promoted=self.promoted,
            rotated=self.rotated,
        )
        check_promotions(window, self.session)
        check_rotations(window, self.session)
        new = _Side(window)
        self.sigmas: dict[tuple[int, int, int], isl.Map] = {}
        origin_map = self._statement_origins(new, origins)
        live = {a for a, m in self.original.memrefs.items() if not self.original.private(m)}
        mismatches = []
        if not keeps_every_dependence(self.session, self.original, window, origin_map):
            mismatches = compare(self.session, self.original, window, origin_map, live)
        if mismatches:
            raise ProofFailed(self._describe(mismatches[0], window))
        self._check_values(new, origins, rewrite)
        self._check_parallel(window)
        return Proven(new_data, function, window)

    def _new_block(self, function: FuncOp, start: int, end: int) -> Block:
        for op in function.walk():
            if start <= op.span.start_byte < end:
                parent = op.parent_op
                if parent is None or not (start <= parent.span.start_byte < end):
                    if op.parent_block is None:
                        break
                    return op.parent_block
        raise ProofFailed("the rewritten code could not be found")

    def _origins(self, function: FuncOp, rewrite: Rewrite, new_end: int) -> dict[int, Origin]:
        """Origin of every new op (by id) in the rewritten range or after it."""
        old_by_start = ops_by_start(self.function)
        mapping = EditMap(rewrite.edits)
        found: dict[int, Origin] = {}
        identity = Renames()
        for op in function.walk():
            offset = op.span.start_byte
            if rewrite.start <= offset < new_end:
                origin = rewrite.origins.get(offset)
                if origin is not None:
                    found[id(op)] = origin
                continue
            old, edit = mapping.to_old(offset)
            if edit is None and old is not None and old in old_by_start:
                found[id(op)] = Origin(old_by_start[old], identity, 0)
        return found

    # -- origins of statements ----------------------------------------------------------

    def _sigma(self, new: _Side, op: Operation, origin: Origin) -> isl.Map:
        """{ N[new instance of `op`] -> O[original instance of its origin] } (cached)."""
        key = (id(op), id(origin.op), id(origin.renames))
        found = self.sigmas.get(key)
        if found is not None:
            return found
        new_domain = new.domain(op)
        old_domain = self.old.domain(origin.op)
        params: set[str] = set(new_domain.params) | set(old_domain.params)
        outputs: list[str] = []
        constraints: list[str] = []
        substitution = origin.substitution or {}
        for position, old_iv in enumerate(old_domain.ivs):
            out = f"_o{position}"
            outputs.append(out)
            form = substitution.get(id(old_iv))
            if form is not None:
                text, used = self._substituted(new, op, form, new_domain)
                params |= used
                constraints.append(f"{out} = {text}")
                continue
            value = visible_value(op, origin.renames.get(old_iv))
            if value is None:
                continue  # hoisted out of that loop: any of its iterations
            try:
                term = new.window.resolver.value(value, new_domain.scope)
            except NotAffine:
                continue
            params |= term.params
            constraints.append(f"{out} = {term.text}")
        text = (
            f"[{', '.join(sorted(params))}] -> {{ N[{', '.join(new_domain.dims)}] -> "
            f"O[{', '.join(outputs)}] : {' and '.join(constraints) or 'true'} }}"
        )
        relation = self.session.map(text)
        assert new_domain.set is not None and old_domain.set is not None
        new_set = new_domain.set.set_tuple_name("N")
        old_set = old_domain.set.set_tuple_name("O")
        found = self.session.run(
            lambda: relation.intersect_domain(new_set).intersect_range(old_set),
            "an origin relation",
        )
        if op.span.start_byte in self.rewrite.first_iteration:
            found = self.session.run(found.lexmin, "an origin relation")
        self.sigmas[key] = found
        return found

    def _substituted(
        self, new: _Side, op: Operation, form: AffineForm, domain: Domain
    ) -> tuple[str, set[str]]:
        """An iv's substituted value (a form over SSA names visible at `op`) as an isl
        term over `domain`'s dims, and the parameters it uses."""
        terms: dict[str, str] = {}
        params: set[str] = set()
        for name in form.names():
            value = visible_value(op, name)
            if value is None:
                raise ProofFailed(f"{self._line_of(op)} uses {name}, which is not defined there")
            try:
                term = new.window.resolver.value(value, domain.scope)
            except NotAffine:
                raise ProofFailed(f"{self._line_of(op)}: {name} is not affine") from None
            terms[name] = f"({term.text})"
            params |= term.params
        return render_isl(form, terms.__getitem__), params

    def _named(self, relation: isl.Map, new_name: str, old_name: str) -> isl.Map:
        relation = relation.set_tuple_name(isl.dim_type.in_, new_name)
        return relation.set_tuple_name(isl.dim_type.out, old_name)

    def _carried_sigma(
        self, new: _Side, statement: Carried, origins: dict[int, Origin]
    ) -> tuple[isl.Map, Carried]:
        """The origin relation of a carried access of a new loop, and the original
        access it repeats."""
        loop = statement.loop
        origin = origins.get(id(loop))
        if (
            not isinstance(loop, AffineForOp)
            or origin is None
            or not isinstance(origin.op, AffineForOp)
        ):
            raise ProofFailed("a loop with iter_args has no original")
        old_loop = origin.op
        rotated = self.rotated.get((id(loop), statement.position))
        if rotated is not None:  # the element the original load reads in this iteration
            element = self.old.statements.get(id(rotated.rotation.load.op))
            yielded = _yield_of(loop)
            if element is None or yielded is None:
                raise ProofFailed("a rotating value has no original")
            return self._sigma(new, yielded, rotated.rotation.load), element  # type: ignore[return-value]
        promotion = self.promoted.get((id(loop), statement.position))
        if promotion is not None:  # the element: the original load, or store, repeated
            declared = promotion.promotion
            repeats = declared.load if statement.kind == ITERATION else declared.store
            element = self.old.statements.get(id(repeats.op))
            yielded = _yield_of(loop)
            if element is None or yielded is None:
                raise ProofFailed("a promoted value has no original")
            return self._sigma(new, yielded, repeats), element  # type: ignore[return-value]
        position, copy = self._carry(loop, statement.position)
        old = self.old.carried.get((id(old_loop), statement.kind, position))
        if old is None:
            raise ProofFailed("a carried value has no original")
        if statement.kind in (INIT, RESULT):
            return self._sigma(new, loop, copy or origin), old
        body = loop.body.entry if loop.body is not None else None
        ops = body.operations if body is not None else []
        if statement.kind == YIELD:
            anchor = ops[-1] if ops else None
        else:
            anchor = next(
                (
                    op
                    for op in ops
                    if id(op) in origins
                    and origins[id(op)].op.parent_op is old_loop
                    and (copy is None or origins[id(op)].copy == copy.copy)
                ),
                None,
            )
        if anchor is None or id(anchor) not in origins:
            raise ProofFailed("the body of a loop with iter_args has no original")
        found = origins[id(anchor)]
        if copy is not None:
            found = Origin(found.op, copy.renames, copy.copy)
        return self._sigma(new, anchor, found), old

    def _carry(self, loop: Operation, position: int) -> tuple[int, Origin | None]:
        """The original position of a new loop's iter_args entry, and the copy whose
        value it carries (None: the loop carries one copy's values, in their order)."""
        entries = self.carries.get(id(loop))
        if entries is None or position >= len(entries):
            return position, None
        return entries[position]

    def _statement_origins(self, new: _Side, origins: dict[int, Origin]) -> isl.UnionMap:
        maps = []
        self.carried_sigmas: dict[tuple[int, str, int], isl.Map] = {}
        for statement in new.window.statements:
            if isinstance(statement, Carried):
                relation, old = self._carried_sigma(new, statement, origins)
                self.carried_sigmas[(id(statement.loop), statement.kind, statement.position)] = (
                    relation
                )
                maps.append(
                    self._named(relation, statement.name, old.name)
                    .intersect_domain(statement.instances)
                    .intersect_range(old.instances)
                )
                continue
            origin = origins.get(id(statement.op))
            if origin is None:
                raise ProofFailed(f"{self._line_of(statement.op)} has no original")
            for repeated in [origin, *self.rewrite.also.get(statement.op.span.start_byte, [])]:
                old = self.old.statements.get(id(repeated.op))
                if old is None or old.lanes != statement.lanes:
                    raise ProofFailed(f"{self._line_of(statement.op)} does not repeat an access")
                relation = self._named(
                    self._sigma(new, statement.op, repeated), statement.name, old.name
                )
                if statement.lanes:
                    relation = self._with_lanes(relation, statement, old)
                maps.append(relation)
        return self.session.run(lambda: union_of_maps(maps, self.session.ctx))

    def _with_lanes(self, relation: isl.Map, new: Statement, old: Statement) -> isl.Map:
        lanes = [f"_l{k}" for k in range(new.lanes)]
        extended = self.session.map(f"{{ [{', '.join(lanes)}] -> [{', '.join(lanes)}] }}")
        product = relation.flat_product(extended)
        product = product.set_tuple_name(isl.dim_type.in_, new.name)
        product = product.set_tuple_name(isl.dim_type.out, old.name)
        return product.intersect_domain(new.instances).intersect_range(old.instances)

    # -- values ---------------------------------------------------------------------------

    def _check_values(self, new: _Side, origins: dict[int, Origin], rewrite: Rewrite) -> None:
        self.new = new
        self.origins = origins
        self.rewrite = rewrite
        for op in self._users_after(new.window):
            origin = origins.get(id(op))
            if origin is None or len(op.operands) != len(origin.op.operands):
                raise ProofFailed("a use of the rewritten code's results has no original")
            for use, old_use in zip(op.operands, origin.op.operands, strict=True):
                if use.value is not None and _inside(new.window, use.value):
                    self._check_operand(op, origin.op, use, old_use)
        promoted_yields = self._promoted_yields()
        for op in self._new_ops(new.window):
            origin = origins.get(id(op))
            if id(op) in promoted_yields:
                self._check_promoted_yield(op, origin)
                continue
            if id(op.parent_op) in self.carries and op.name == "affine.yield":
                self._check_jammed_yield(op, origin)
                continue
            if origin is None:
                self._check_introduced(op, rewrite)
                continue
            old = origin.op
            expected = rewrite.operands.get(op.span.start_byte)
            if expected is not None:
                if op.name != old.name or len(expected) != len(op.operands):
                    raise ProofFailed(f"{self._line_of(op)} does not repeat {old.name}")
                for use, value in zip(op.operands, expected, strict=True):
                    if use.value is None or not self._same_value(op, old, use.value, value):
                        raise ProofFailed(
                            f"{self._line_of(op)}: {use.name} does not hold what "
                            f"{value.display_name} held in the original"
                        )
                continue
            if origin.substitution is not None and isinstance(op, AffineAccessOp):
                self._check_substituted(op, old)
                continue
            if isinstance(op, _STRUCTURE) and not _same_text(self.data, old, self.new_data, op):
                # A header the transformation wrote (domains are compared): only
                # the values it carries in must be the original's.
                self._check_inits(op, old)
                continue
            if op.name != old.name or len(op.operands) != len(old.operands):
                raise ProofFailed(f"{self._line_of(op)} does not repeat {old.name}")
            if not _same_text(self.data, old, self.new_data, op):
                raise ProofFailed(f"{self._line_of(op)} differs from the original op")
            if isinstance(op, AffineForOp):
                self._check_inits(op, old)
                uses = [u for u in op.operands if u.role != "init"]
                old_uses = [u for u in old.operands if u.role != "init"]
            else:
                uses, old_uses = op.operands, old.operands
            for use, old_use in zip(uses, old_uses, strict=True):
                if self._promoted_store(op, use):
                    continue  # what the loop carried: checked at its yield
                self._check_operand(op, old, use, old_use)

    def _check_substituted(self, op: AffineAccessOp, old: Operation) -> None:
        """A copy whose subscripts were rewritten by substitution: the element it
        touches is proven by the memory comparison; the rest must be the original's."""
        if not isinstance(old, AffineAccessOp) or op.name != old.name:
            raise ProofFailed(f"{self._line_of(op)} does not repeat {old.name}")
        if _without_subscripts(self.data, old) != _without_subscripts(self.new_data, op):
            raise ProofFailed(f"{self._line_of(op)} differs from the original op")
        uses = [u for u in op.operands if u.role not in _SUBSCRIPT_ROLES]
        old_uses = [u for u in old.operands if u.role not in _SUBSCRIPT_ROLES]
        if len(uses) != len(old_uses):
            raise ProofFailed(f"{self._line_of(op)} does not repeat {old.name}")
        for use, old_use in zip(uses, old_uses, strict=True):
            if self._promoted_store(op, use):
                continue  # what the loop carried: checked at its yield
            self._check_operand(op, old, use, old_use)

    # -- promoted values (scalar replacement) -------------------------------------------

    def _promoted_yields(self) -> set[int]:
        loops = [f.loop for f in self.promoted.values()] + [f.loop for f in self.rotated.values()]
        yields = [_yield_of(loop) for loop in loops]
        return {id(y) for y in yields if y is not None}

    def _promoted_store(self, op: Operation, use: Use) -> bool:
        """`use` is the stored value of the store after a loop of a promoted value."""
        return any(
            found.store is op and getattr(op, "stored_value", None) is use
            for found in self.promoted.values()
        )

    def _check_promoted_yield(self, op: Operation, origin: Origin | None) -> None:
        """The yield of a loop with promoted values: its original operands as the
        original yield's, each promoted one holding what the original store wrote in
        that iteration."""
        loop = op.parent_op
        assert isinstance(loop, AffineForOp)
        old_yield = origin.op if origin is not None else None
        old_operands = old_yield.operands if old_yield is not None else []
        for position, use in enumerate(op.operands):
            if (id(loop), position) in self.rotated:
                continue  # the element one step later: checked by `check_rotations`
            promotion = self.promoted.get((id(loop), position))
            if promotion is None:
                if position >= len(old_operands) or old_yield is None:
                    raise ProofFailed(f"{self._line_of(op)} yields more than the original")
                self._check_operand(op, old_yield, use, old_operands[position])
                continue
            store = promotion.promotion.store
            stored = getattr(store.op, "stored_value", None)
            if use.value is None or stored is None or stored.value is None:
                raise ProofFailed(f"{self._line_of(op)} yields an undefined value")
            if not self._same_value(op, store.op, use.value, stored.value, store):
                raise ProofFailed(
                    f"{self._line_of(op)}: {use.name} does not hold what {stored.name} "
                    "stored in the original"
                )

    def _check_jammed_yield(self, op: Operation, origin: Origin | None) -> None:
        """The yield of a loop carrying the values of several copies: each operand
        holds what its copy's original operand held."""
        loop = op.parent_op
        assert loop is not None and origin is not None
        old_operands = origin.op.operands
        if len(op.operands) != len(self.carries[id(loop)]):
            raise ProofFailed(f"{self._line_of(op)} yields other values than the original")
        for index, use in enumerate(op.operands):
            position, copy = self._carry(loop, index)
            if position >= len(old_operands) or copy is None:
                raise ProofFailed(f"{self._line_of(op)} yields more than the original")
            old_use = old_operands[position]
            here = Origin(origin.op, copy.renames, copy.copy)
            if (
                use.value is None
                or old_use.value is None
                or not self._same_value(op, origin.op, use.value, old_use.value, here)
            ):
                raise ProofFailed(
                    f"{self._line_of(op)}: {use.name} does not hold what {old_use.name} held "
                    "in the original"
                )

    def _check_inits(self, op: Operation, old: Operation) -> None:
        if not isinstance(op, AffineForOp) or not isinstance(old, AffineForOp):
            return
        if id(op) in self.carries:
            self._check_jammed_inits(op, old)
            return
        window = self.new.window
        if len(op.iter_args) != len(old.iter_args) + sum(
            1 for (loop, _) in [*self.promoted, *self.rotated] if loop == id(op)
        ):
            raise ProofFailed(f"{self._line_of(op)} carries other values than the original")
        for position, ((_, use), (_, old_use)) in enumerate(
            zip(op.iter_args, old.iter_args, strict=False)
        ):
            if isinstance(window, ScalarWindow) and window.passes_through(op, position, use.value):
                continue  # the scalar array already holds it: memory compared
            self._check_operand(op, old, use, old_use)

    def _check_jammed_inits(self, op: AffineForOp, old: AffineForOp) -> None:
        entries = self.carries[id(op)]
        if len(op.iter_args) != len(entries):
            raise ProofFailed(f"{self._line_of(op)} carries other values than the original")
        for index, (_, use) in enumerate(op.iter_args):
            position, copy = entries[index]
            if position >= len(old.iter_args):
                raise ProofFailed(f"{self._line_of(op)} carries other values than the original")
            old_use = old.iter_args[position][1]
            if (
                use.value is None
                or old_use.value is None
                or not self._same_value(op, old, use.value, old_use.value, copy)
            ):
                raise ProofFailed(
                    f"{self._line_of(op)}: {use.name} does not hold what {old_use.name} held "
                    "in the original"
                )

    def _check_operand(self, op: Operation, old: Operation, use: Use, old_use: Use) -> None:
        u, w = use.value, old_use.value
        if u is None or w is None:
            raise ProofFailed(f"{self._line_of(op)} uses an undefined value")
        if not self._same_value(op, old, u, w):
            raise ProofFailed(
                f"{self._line_of(op)}: {use.name} does not hold what {old_use.name} held "
                "in the original"
            )

    def _users_after(self, window: Window) -> list[Operation]:
        """Ops outside the window that use a value defined in it."""
        found: dict[int, Operation] = {}
        for op in self._new_ops(window):
            values = list(op.results)
            for region in op.regions:
                for block in region.blocks:
                    values += block.arguments
            for value in values:
                for use in value.uses:
                    user = use.user
                    if user is not None and not window.contains(user):
                        found.setdefault(id(user), user)
        return list(found.values())

    def _new_ops(self, window: Window) -> list[Operation]:
        return [op for top in window.ops for op in top.walk()]

    def _check_introduced(self, op: Operation, rewrite: Rewrite) -> None:
        if isinstance(op, _STRUCTURE) or op.name == "affine.yield":
            if isinstance(op, AffineForOp) and op.iter_args:
                raise ProofFailed(f"{self._line_of(op)} carries values the original did not")
            return
        if op.name in _INDEX_OPS and all(str(r.type) == "index" for r in op.results):
            return
        if op.results and all(r.name in rewrite.stands_for for r in op.results):
            return
        raise ProofFailed(f"{self._line_of(op)} is not in the original code")

    def _same_value(
        self, op: Operation, old: Operation, u: Value, w: Value, origin: Origin | None = None
    ) -> bool:
        """`u` (used by `op`) holds what `w` held for `old` (`op`'s origin, unless given)."""
        new = self.new
        origin = origin or self.origins[id(op)]
        promoted = self._promoted_argument(u)
        if promoted is not None:
            loop, position, load = promoted
            if w.defining_op is not load:
                return False
            own = self.carried_sigmas.get((id(loop), ITERATION, position))
            relation = self._sigma(new, op, origin)
            return own is not None and self._consistent_with(relation, own)
        inside_new = _inside(new.window, u)
        inside_old = _inside(self.original, w)
        if not inside_new and not inside_old:
            return u.display_name == w.display_name
        if str(w.type) == "index" and str(u.type) == "index":
            if self._same_index(op, old, u, w, origin):
                return True
        declared = self.rewrite.stands_for.get(u.name)
        if declared is not None:
            return declared is w
        old_carried = _carried_use(w) if inside_old else None
        if old_carried is not None:
            read = self.old.carried.get((id(old_carried[0]), old_carried[1], old_carried[2]))
            if read is None:
                return False
            sigma = self._sigma(new, op, origin)
            return self._holds(u, self._to_read(sigma, read), read, 0)
        if not inside_new or not inside_old:
            return False
        definer = _owner(u)
        old_definer = _owner(w)
        if definer is None or old_definer is None or u.owner_block is not None:
            return False
        source = self.origins.get(id(definer))
        if source is not None and source.op is not old_definer and _is_load(definer):
            also = self.rewrite.also.get(definer.span.start_byte, [])
            source = next((o for o in also if o.op is old_definer and _is_load(o.op)), None)
        if (source is None or source.op is not old_definer) and _is_load(old_definer):
            return self._forwarded(op, origin, u, old_definer)
        if (
            source is None
            or source.op is not old_definer
            or result_position(u) != result_position(w)
        ):
            return False
        return self._consistent_with(
            self._sigma(new, op, origin), self._sigma(new, definer, source)
        )

    def _forwarded(self, op: Operation, origin: Origin, u: Value, load: Operation) -> bool:
        """`u` holds what the original `load` read at the instances of `op`'s origin (in
        its block): the value stored by the write it read there (store-to-load
        forwarding), which must be inside the window at every one of them."""
        statement = next((s for s in self.original.statements if s.op is load), None)
        if statement is None or statement.lanes or load.parent_op is not origin.op.parent_op:
            return False
        relation = self._sigma(self.new, op, origin).set_tuple_name(
            isl.dim_type.out, statement.name
        )
        delivered = self.session.run(
            lambda: isl.UnionMap.from_map(relation).apply_range(self._sources()),
            "a forwarded value",
        )
        covered = self.session.run(
            lambda: isl.UnionSet.from_set(relation.domain()).is_subset(delivered.domain()),
            "a forwarded value",
        )
        if not covered:
            return False  # (some instances read what the window did not write)
        for piece in _maps(delivered):
            if piece.is_empty():
                continue
            name = piece.get_tuple_name(isl.dim_type.out)
            writer = next((s for s in self.original.statements if s.name == name), None)
            if writer is None or writer.lanes or not isinstance(writer.op, AffineAccessOp):
                return False
            stored = writer.op.stored_value
            value = stored.value if stored is not None else None
            if value is None:
                return False
            old_definer = _owner(value)
            if _inside(self.original, value) and (
                old_definer is None or old_definer.parent_op is not writer.op.parent_op
            ):
                return False  # (the stored value computed in the store's block)
            if not self._repeats(u, value, piece):
                return False
        return True

    def _promoted_argument(self, u: Value) -> tuple[AffineForOp, int, Operation] | None:
        """(loop, position, original load) when `u` is a promoted block argument."""
        block = u.owner_block
        loop = block.parent_op if block is not None else None
        if not isinstance(loop, AffineForOp) or u.role != "iter_arg":
            return None
        key = (id(loop), u.arg_number - 1)
        rotated = self.rotated.get(key)
        if rotated is not None:
            return loop, key[1], rotated.rotation.load.op
        found = self.promoted.get(key)
        return (loop, key[1], found.promotion.load.op) if found is not None else None

    def _to_read(self, sigma: isl.Map, read: Carried) -> isl.Map:
        """`sigma` (N -> original instances of an op inside `read`'s loops) projected
        on `read`'s instances."""

        def run() -> isl.Map:
            keep = read.domain.set.dim(isl.dim_type.set)  # type: ignore[union-attr]
            projected = sigma.project_out(
                isl.dim_type.out, keep, sigma.dim(isl.dim_type.out) - keep
            )
            return projected.set_tuple_name(isl.dim_type.out, read.name)

        return self.session.run(run, "a carried value")

    def _holds(self, u: Value, relation: isl.Map, read: Carried, depth: int) -> bool:
        """`u` (a value of the new text, at the instances `relation` maps to original
        instances of the carried read `read`) holds what `read` received there."""
        if depth > 64:
            return False
        new_carried = _carried_use(u) if _inside(self.new.window, u) else None
        if new_carried is not None:
            loop, kind, position = new_carried
            origin = self.origins.get(id(loop))
            if (
                origin is not None
                and origin.op is read.loop
                and (kind, self._carry(loop, position)[0]) == (read.kind, read.position)
            ):
                own = self.carried_sigmas.get((id(loop), kind, position))
                if own is not None and self._projected_subset(relation, own):
                    return True
        old_loop = read.loop
        assert isinstance(old_loop, AffineForOp)
        delivered = self.session.run(
            lambda: isl.UnionMap.from_map(relation).apply_range(self._sources()),
            "a carried value",
        )
        for piece in _maps(delivered):
            if piece.is_empty():
                continue
            writer_name = piece.get_tuple_name(isl.dim_type.out)
            writer = next((c for c in self.original.carried if c.name == writer_name), None)
            if writer is None or writer.loop is not old_loop or writer.position != read.position:
                return False
            if writer.kind == INIT:
                init = old_loop.iter_args[read.position][1].value
                if init is None or _inside(self.original, init):
                    return False
                if _inside(self.new.window, u) or u.display_name != init.display_name:
                    return False
                continue
            yield_op = _yield_of(old_loop)
            if yield_op is None or read.position >= len(yield_op.operands):
                return False
            value = yield_op.operands[read.position].value
            if value is None:
                return False
            passed = _carried_use(value) if _inside(self.original, value) else None
            if passed is not None and passed[0] is old_loop and passed[1] == ITERATION:
                # The loop yields its own block argument: what it received before.
                source = self.old.carried.get((id(old_loop), ITERATION, passed[2]))
                if source is None:
                    return False
                earlier = piece.set_tuple_name(isl.dim_type.out, source.name)
                if not self._holds(u, earlier, source, depth + 1):
                    return False
                continue
            if not self._repeats(u, value, piece):
                return False
        return True

    def _repeats(self, u: Value, value: Value, piece: isl.Map) -> bool:
        """`u` (a value of the new text) holds, at the new instances `piece` maps to
        original instances of `value`'s definer (or of ops in its block, deeper), what
        the original `value` held there: the same value from outside, or the result of a
        new op repeating `value`'s definer at those instances."""
        if not _inside(self.original, value):
            return not _inside(self.new.window, u) and u.display_name == value.display_name
        definer = _owner(u)
        old_definer = _owner(value)
        if definer is None or old_definer is None or u.owner_block is not None:
            return False
        origin = self.origins.get(id(definer))
        if (
            origin is None
            or origin.op is not old_definer
            or result_position(u) != result_position(value)
        ):
            return False
        return self._projected_subset(piece, self._sigma(self.new, definer, origin))

    def _sources(self) -> isl.UnionMap:
        """Original read instance -> the write instance it reads (exact dataflow)."""
        if self._old_sources is None:
            window = self.original
            flow = window.dataflow(window.reads(), window.writes())
            self._old_sources = flow.dependence.reverse()
        return self._old_sources

    def _same_index(
        self, op: Operation, old: Operation, u: Value, w: Value, origin: Origin
    ) -> bool:
        new = self.new
        new_domain = new.domain(op)
        old_domain = self.old.domain(old)
        new_term = new.term(u, new_domain)
        old_term = self.old.term(w, old_domain)
        if new_term is None or old_term is None:
            return False
        relation = self._sigma(new, op, origin)
        params = sorted(
            set(new_domain.params)
            | set(old_domain.params)
            | _names_in(new_term + " " + old_term, relation)
        )
        new_dims = ", ".join(new_domain.dims)
        old_dims = ", ".join(old_domain.dims)
        differ = self.session.map(
            f"[{', '.join(params)}] -> {{ N[{new_dims}] -> O[{old_dims}] : "
            f"{new_term} < {old_term} or {new_term} > {old_term} }}"
        )
        return bool(self.session.run(lambda: relation.intersect(differ).is_empty()))

    def _consistent_with(self, relation: isl.Map, own: isl.Map) -> bool:
        return self._projected_subset(relation, own)

    def _projected_subset(self, relation: isl.Map, own: isl.Map) -> bool:
        keep_in = own.dim(isl.dim_type.in_)
        keep_out = own.dim(isl.dim_type.out)

        def check() -> bool:
            projected = relation.project_out(
                isl.dim_type.in_, keep_in, relation.dim(isl.dim_type.in_) - keep_in
            )
            projected = projected.project_out(
                isl.dim_type.out, keep_out, projected.dim(isl.dim_type.out) - keep_out
            )
            projected = projected.set_tuple_name(isl.dim_type.in_, "N")
            projected = projected.set_tuple_name(isl.dim_type.out, "O")
            reference = own.set_tuple_name(isl.dim_type.in_, "N")
            reference = reference.set_tuple_name(isl.dim_type.out, "O")
            return projected.is_subset(reference)

        return bool(self.session.run(check, "a value's origin"))

    # -- parallel loops ----------------------------------------------------------------------

    def _check_parallel(self, window: Window) -> None:
        for op in self._new_ops(window):
            if not isinstance(op, AffineParallelOp):
                continue
            under = [
                s for s in window.statements if is_under(s.op, op) and not isinstance(s, Carried)
            ]
            for a in under:
                for b in under:
                    if a.array != b.array or not (a.is_write or b.is_write):
                        continue
                    if not self.session.run(lambda a=a, b=b, op=op: _no_carried(op, a, b)):
                        raise ProofFailed(
                            "two iterations of the new affine.parallel touch the same "
                            f"element of {a.memref.display_name}"
                        )

    # -- words -----------------------------------------------------------------------------------

    def _line_of(self, op: Operation) -> str:
        return f"the rewritten {op.name}"

    def _describe(self, mismatch: Mismatch, window: Window) -> str:
        statement = next((s for s in window.statements if s.name == mismatch.statement), None)
        if isinstance(statement, Carried):
            what = f"the value carried by iter_args of the loop ({statement.kind})"
            memref = ""
        else:
            what = statement.op.name if statement is not None else "the code"
            memref = f" of {statement.memref.display_name}" if statement is not None else ""
        words = {
            "outside": f"{what}{memref} would run for iterations the original never runs",
            "cells": f"{what} would touch other elements{memref} than the original",
            "bounds": f"{what} would access{memref} out of bounds",
            "read": f"{what}{memref} would read a value the original never gave it",
            "final": "the final contents of a memref would change",
        }
        return f"the rewritten code is not equivalent: {words.get(mismatch.kind, 'it differs')}"


def _is_load(op: Operation) -> bool:
    """An access that reads memory (a statement of the window, compared as memory)."""
    return op.name in ("affine.load", "memref.load")


def _inside(window: Window, value: Value) -> bool:
    owner = _owner(value)
    return owner is not None and window.contains(owner)


def _owner(value: Value) -> Operation | None:
    if value.owner_block is not None:
        return value.owner_block.parent_op
    return value.defining_op


def _yield_of(loop: AffineForOp) -> Operation | None:
    body = loop.body.entry if loop.body is not None else None
    if body is None or not body.operations:
        return None
    last = body.operations[-1]
    return last if last.name == "affine.yield" else None


def _maps(union: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    union.foreach_map(found.append)
    return found


def _names_in(text: str, relation: isl.Map) -> set[str]:
    names = {
        relation.get_dim_name(isl.dim_type.param, k)
        for k in range(relation.dim(isl.dim_type.param))
    }
    return {n for n in names if n and n in text}


def _normalised(text: str) -> str:
    return " ".join(_SSA_NAME.sub("%", text).split())


def _op_text(data: bytes, op: Operation) -> str:
    start = op.name_span.start_byte
    end = op.span.end_byte
    if op.regions:
        end = min(end, op.regions[0].span.start_byte)
    return data[start:end].decode("utf-8", errors="replace")


def _without_subscripts(data: bytes, op: AffineAccessOp) -> str:
    """The op's text with SSA names and its subscripts blanked."""
    text = _op_text(data, op)
    subscripts = op.subscripts
    if subscripts is not None and subscripts.result_spans and op.map_ref is None:
        base = op.name_span.start_byte
        first = subscripts.result_spans[0].start_byte - base
        last = subscripts.result_spans[-1].end_byte - base
        encoded = text.encode()
        text = (encoded[:first] + b"..." + encoded[last:]).decode("utf-8", errors="replace")
    return _normalised(text)


def _same_text(old_data: bytes, old: Operation, new_data: bytes, new: Operation) -> bool:
    """The op's own text (without its results and regions) with SSA names blanked."""
    return _normalised(_op_text(old_data, old)) == _normalised(_op_text(new_data, new))


def _no_carried(parallel: AffineParallelOp, a: Statement, b: Statement) -> bool:
    """No instance pair of `a`, `b` in different iterations of `parallel` (and the
    same iterations of the loops around it) touches the same element."""
    outer = 0
    for level in a.domain.levels:
        if level.op is parallel:
            break
        if isinstance(level.op, AffineForOp | AffineParallelOp):
            outer += len(level.ivs)
    count = len(parallel.induction_variables)
    same = a.access.apply_range(b.access.reverse())
    space = same.get_space()
    equal_outer = isl.Map.universe(space)
    for k in range(outer):
        equal_outer = equal_outer.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    differ = None
    for k in range(outer, outer + count):
        less = isl.Map.universe(space).order_lt(isl.dim_type.in_, k, isl.dim_type.out, k)
        more = isl.Map.universe(space).order_gt(isl.dim_type.in_, k, isl.dim_type.out, k)
        part = less.union(more)
        differ = part if differ is None else differ.union(part)
    if differ is None:
        return True
    return same.intersect(equal_outer).intersect(differ).is_empty()
