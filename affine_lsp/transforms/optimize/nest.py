"""A loop nest as the scheduler and the cost model see it.

`Nest(session, root, model)` reads one outermost `affine.for` through the
polyhedral window of `poly` (loops around it are parameters) and groups its
memory accesses into *statements*: the accesses of one block that no loop
separates (`C[i, j] *= beta` is one statement: its load, its store and the
arithmetic between them). Each statement has an isl domain (tuple `S0`, `S1`,
..., one dimension per loop around it, outermost first), its reads and writes,
and its original schedule; each access has its subscripts as integer
coefficients of those loops (what strides and footprints are computed from).

The scheduler needs every statement to be movable on its own: a nest where a
value other than an index flows from one statement to another (a load before
an inner loop used inside it), or where loops carry `iter_args`, or with
`affine.parallel` or vector accesses, is `schedulable = False`
with the reason; the cost model still reads its accesses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import (
    AffineForOp,
    AffineParallelOp,
    IndexType,
    MemRefType,
    ModuleModel,
    Operation,
)
from affine_lsp.poly import IslSession, NotAffine, Window, fraction, single_aff, union_of_maps
from affine_lsp.poly import Statement as AccessStatement
from affine_lsp.transforms.loops import iv_name
from affine_lsp.transforms.performance import element_bytes, row_major_stride

UNKNOWN_TRIPS = 1000
"""The trip count assumed for a loop whose bounds are not constants (symbols)."""


@dataclass(frozen=True)
class Access:
    """One load or store: its array and its subscripts as integer coefficients of
    the statement's loops (outermost first) plus a constant (None: symbolic)."""

    op: Operation
    memref: str  # the source name, e.g. %A
    is_write: bool
    coefficients: tuple[tuple[int, ...], ...]  # [array dim][loop]
    constants: tuple[int | None, ...]
    shape: tuple[int | None, ...]
    element_bytes: int
    affine: bool = True  # False: a subscript the model cannot read (floor, mod)

    def stride(self, loop: int) -> int | None:
        """Elements between the addresses of two consecutive iterations of the
        statement's `loop`-th loop (row-major); None when unknown (a dynamic size
        that matters, or a subscript the model cannot read)."""
        if not self.affine:
            return None
        return row_major_stride(self.coefficients, self.shape, loop)


@dataclass
class Statement:
    name: str  # S0, S1, ...
    accesses: list[Access]
    loops: list[AffineForOp]  # the nest's loops around it, outermost first
    domain: isl.Set
    schedule: isl.Map  # the original one
    relations: list[isl.Map] = field(default_factory=list)  # of `accesses`, from `domain`

    @property
    def depth(self) -> int:
        return len(self.loops)

    def loop_names(self) -> list[str]:
        return [iv_name(loop) for loop in self.loops]


@dataclass
class Nest:
    """The statements of the nest rooted at `root` (see the module docstring)."""

    root: AffineForOp
    session: IslSession
    statements: list[Statement] = field(default_factory=list)
    trips: dict[int, int | None] = field(default_factory=dict)  # id(loop) -> count
    schedulable: bool = True
    reason: str = ""  # why not schedulable

    @classmethod
    def of(cls, session: IslSession, root: AffineForOp, model: ModuleModel) -> Nest:
        """The nest of `root`; NotAffine (a PolyError) when its accesses cannot be read."""
        block = root.parent_block
        if block is None:
            raise NotAffine("the loop is not in a block")
        position = block.operations.index(root)
        window = Window(session, block, position, position, model.alias_table())
        nest = cls(root, session)
        nest._build(window)
        return nest

    # -- construction ------------------------------------------------------------------

    def _build(self, window: Window) -> None:
        groups: dict[tuple[int, int], list[AccessStatement]] = {}
        for statement in window.statements:
            groups.setdefault(_group_key(statement.op), []).append(statement)
        for members in groups.values():
            self._add(members)
        self._check_schedulable()
        for statement in self.statements:
            for position, loop in enumerate(statement.loops):
                extent = _extent(statement.domain, position)
                known = self.trips.get(id(loop), 0)
                if id(loop) not in self.trips or (known is not None and (extent or 0) > known):
                    self.trips[id(loop)] = extent  # (the largest: a statement may be guarded)

    def _add(self, members: list[AccessStatement]) -> None:
        first = members[0]
        name = f"S{len(self.statements)}"
        loops = [level.op for level in first.domain.levels if isinstance(level.op, AffineForOp)]
        accesses = [_access(member, len(loops)) for member in members]
        domain = first.instances.set_tuple_name(name)
        schedule = first.schedule
        assert schedule is not None
        schedule = schedule.set_tuple_name(isl.dim_type.in_, name)
        if any(member.lanes for member in members):
            self._refuse("it has vector accesses")
        relations = [m.access.set_tuple_name(isl.dim_type.in_, name) for m in members]
        self.statements.append(Statement(name, accesses, loops, domain, schedule, relations))

    def _refuse(self, reason: str) -> None:
        if self.schedulable:
            self.schedulable = False
            self.reason = reason

    def _check_schedulable(self) -> None:
        owner: dict[int, str] = {}  # id(op) -> statement name
        for statement in self.statements:
            for access in statement.accesses:
                owner[id(access.op)] = statement.name
        for op in self.root.walk():
            if isinstance(op, AffineParallelOp):
                self._refuse(f"it holds an {op.name}")
            if isinstance(op, AffineForOp) and (op.iter_args or op.results):
                self._refuse(f"{iv_name(op)} carries values through iter_args")
        # A value (not an index) defined in one statement and used in another.
        group_of: dict[int, tuple[int, int]] = {}
        for op in self.root.walk():
            if not isinstance(op, AffineForOp):
                group_of[id(op)] = _group_key(op)
        for op in self.root.walk():
            if isinstance(op, AffineForOp):
                continue
            for use in op.operands:
                value = use.value
                definer = value.defining_op if value is not None else None
                if value is None or definer is None or id(definer) not in group_of:
                    continue
                if isinstance(value.type, IndexType):
                    continue
                if group_of[id(definer)] != group_of[id(op)]:
                    self._refuse(
                        f"{value.display_name} flows from one statement into a loop or "
                        "statement after it"
                    )
                    return

    # -- unions ------------------------------------------------------------------------

    def _union(self, maps: list[isl.Map]) -> isl.UnionMap:
        return self.session.run(lambda: union_of_maps(maps, self.session.ctx))

    def domains(self) -> isl.UnionSet:
        union = self._union([isl.Map.from_range(s.domain) for s in self.statements])
        return self.session.run(lambda: union.range())

    def accesses(self, writes: bool) -> isl.UnionMap:
        return self._union(
            [
                relation
                for statement in self.statements
                for access, relation in zip(statement.accesses, statement.relations, strict=True)
                if access.is_write == writes
            ]
        )

    def original_schedule(self) -> isl.UnionMap:
        return self._union([s.schedule for s in self.statements])

    def loops(self) -> list[AffineForOp]:
        """Every loop of the nest, in document order."""
        return [op for op in self.root.walk() if isinstance(op, AffineForOp)]

    def trip(self, loop: AffineForOp) -> int:
        """The loop's trip count (its extent over the whole nest), `UNKNOWN_TRIPS`
        when it is not a constant."""
        found = self.trips.get(id(loop))
        return UNKNOWN_TRIPS if found is None else found

    def statements_under(self, loop: AffineForOp) -> list[Statement]:
        return [s for s in self.statements if any(x is loop for x in s.loops)]


def _group_key(op: Operation) -> tuple[int, int]:
    """(the block, how many loops come before the op in it): ops of one block that
    no loop separates form one statement."""
    block = op.parent_block
    if block is None:
        return (id(op), 0)
    runs = 0
    for other in block.operations:
        if other is op:
            break
        if isinstance(other, AffineForOp):
            runs += 1
    return (id(block), runs)


def _access(statement: AccessStatement, loops: int) -> Access:
    op = statement.op
    memref_type = statement.memref.type
    shape: tuple[int | None, ...] = ()
    element = 4
    if isinstance(memref_type, MemRefType) and memref_type.shape is not None:
        shape = memref_type.shape
        element = element_bytes(memref_type.element)
    coefficients: list[tuple[int, ...]] = []
    constants: list[int | None] = []
    affine = True
    try:
        found: list[isl.MultiAff] = []
        statement.access.as_pw_multi_aff().foreach_piece(lambda _s, ma: found.append(ma))
    except isl.Error:
        found = []
    if len(found) != 1:
        affine = False
        count = len(shape)
        coefficients = [(0,) * loops for _ in range(count)]
        constants = [None] * count
    else:
        multi = found[0]
        for dim in range(multi.dim(isl.dim_type.out)):
            aff = multi.get_aff(dim)
            if aff.dim(isl.dim_type.div) and any(
                not aff.get_coefficient_val(isl.dim_type.div, k).is_zero()
                for k in range(aff.dim(isl.dim_type.div))
            ):
                affine = False
            row = []
            for loop in range(min(loops, aff.dim(isl.dim_type.in_))):
                value = fraction(aff.get_coefficient_val(isl.dim_type.in_, loop))
                if value.denominator != 1:
                    affine = False
                row.append(int(value))
            row += [0] * (loops - len(row))
            coefficients.append(tuple(row))
            symbolic = any(
                not aff.get_coefficient_val(isl.dim_type.param, k).is_zero()
                for k in range(aff.dim(isl.dim_type.param))
            )
            constant = fraction(aff.get_constant_val())
            constants.append(None if symbolic or constant.denominator != 1 else int(constant))
    return Access(
        op,
        statement.memref.display_name,
        statement.is_write,
        tuple(coefficients),
        tuple(constants),
        tuple(shape),
        element,
        affine,
    )


def _extent(domain: isl.Set, position: int) -> int | None:
    """max - min + 1 of one dimension over the set, when both are constants."""
    try:
        high = domain.dim_max(position).coalesce()
        low = domain.dim_min(position).coalesce()
    except isl.Error:
        return None
    values = []
    for bound in (low, high):
        pieces = single_aff(bound)
        if pieces is None or not pieces.is_cst():
            return None
        values.append(fraction(pieces.get_constant_val()))
    count = values[1] - values[0] + 1
    return int(count) if count.denominator == 1 and count > 0 else None
