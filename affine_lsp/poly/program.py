"""A stretch of code as a polyhedral program: statements, schedules, accesses.

`Window` models the top-level ops `first..last` of one block: every memory
access inside them becomes a statement (one isl tuple per op) with its
iteration domain, the element it touches, and its place in execution order
(a `2d+1` schedule: block positions interleaved with loop ivs). Vector
accesses get one extra dimension per lane so that every statement instance
touches exactly one element. Anything whose memory effects we cannot describe
exactly (calls, unknown ops, non-affine indices, memrefs that may alias)
raises `Unanalysable` naming the op.

Values fixed over the window (function arguments, top-level values, ivs of
loops around the block) are parameters, named after their source names, so
two models of the same function agree on them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    AliasDef,
    Block,
    FuncOp,
    MemRefAccessOp,
    MemRefAllocOp,
    Operation,
    Value,
)
from affine_lsp.poly.dataflow import Dataflow
from affine_lsp.poly.describe import access_relation, vector_shape
from affine_lsp.poly.domain import Domain, DomainBuilder, Level, enclosing_levels
from affine_lsp.poly.exprs import Resolver
from affine_lsp.poly.isl_util import union_of_maps
from affine_lsp.poly.names import NameTable, exact_identifier
from affine_lsp.poly.session import IslSession, NotAffine, PolyError

_PURE_PREFIXES = ("arith.", "math.", "index.")
_PURE_OPS = frozenset(
    {
        "affine.apply",
        "affine.min",
        "affine.max",
        "affine.yield",
        "affine.linearize_index",
        "affine.delinearize_index",
        "memref.dim",
        "memref.rank",
        "memref.alloc",
        "memref.alloca",
        "memref.cast",
        "memref.subview",
        "memref.view",
        "memref.reinterpret_cast",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.extract_strided_metadata",
        "vector.broadcast",
        "vector.splat",
        "vector.extract",
        "vector.insert",
        "vector.extractelement",
        "vector.insertelement",
        "vector.shape_cast",
        "vector.fma",
        "vector.reduction",
        "vector.bitcast",
        "vector.transpose",
        "vector.shuffle",
        "builtin.unrealized_conversion_cast",
    }
)


class Unanalysable(PolyError):
    """An op whose memory effects cannot be described exactly."""

    def __init__(self, op: Operation, reason: str) -> None:
        super().__init__(reason)
        self.op = op


def is_under(op: Operation, root: Operation) -> bool:
    """Whether `op` is `root` or nested in it."""
    current: Operation | None = op
    while current is not None:
        if current is root:
            return True
        current = current.parent_op
    return False


def is_pure(op: Operation) -> bool:
    """Ops known to have no memory effects we need to track."""
    return op.name.startswith(_PURE_PREFIXES) or op.name in _PURE_OPS


def is_function_argument(value: Value) -> bool:
    block = value.owner_block
    return block is not None and isinstance(block.parent_op, FuncOp)


def is_distinct_memref(value: Value) -> bool:
    """Memrefs assumed not to alias any other: function arguments and fresh allocations."""
    return is_function_argument(value) or isinstance(value.defining_op, MemRefAllocOp)


def _freed_at_end(dealloc: Operation, memref: Value, inside: set[int]) -> bool:
    """A buffer allocated in a loop's body (or an affine.if's), deallocated at the end
    of that block after every other use, both in the window: each run of the block has
    a buffer of its own, and no access outlives it."""
    alloc = memref.defining_op
    if (
        alloc is None
        or id(alloc) not in inside
        or alloc.parent_block is not dealloc.parent_block
        or isinstance(alloc.parent_op, FuncOp)
    ):
        return False
    end = dealloc.span.start_byte
    return all(
        use.user is dealloc or (use.user is not None and use.user.span.end_byte <= end)
        for use in memref.uses
    )


def _per_iteration(relation: isl.Map, depth: int, array: str) -> isl.Map:
    """`relation` with its first `depth` input dims put before the subscripts: an
    instance of the buffer per iteration of the loops around its allocation."""
    inputs = relation.dim(isl.dim_type.in_)
    ivs = isl.Map.identity(relation.domain().get_space().map_from_set())
    ivs = ivs.project_out(isl.dim_type.out, depth, inputs - depth)
    return ivs.flat_range_product(relation).set_tuple_name(isl.dim_type.out, array)


def array_name(memref: Value) -> str:
    return "M_" + exact_identifier(memref.display_name)


@dataclass
class Statement:
    """One memory access op: its instances, the element each touches, its time."""

    name: str
    op: Operation
    domain: Domain
    lanes: int
    is_write: bool
    memref: Value
    array: str
    instances: isl.Set
    access: isl.Map
    path: list[object] = field(default_factory=list)  # ints and iv Values
    schedule: isl.Map | None = None
    # leading dims of `access` that tell apart the buffers of a loop-private allocation
    per_iteration: int = 0


def window_ops(ops: list[Operation]) -> Iterator[tuple[Operation, list[object]]]:
    """Every op under `ops` with its schedule path (positions and iv values), in order."""
    stack: list[tuple[Operation, list[object]]] = [
        (op, [position]) for position, op in reversed(list(enumerate(ops)))
    ]
    while stack:
        op, path = stack.pop()
        yield op, path
        nested: list[tuple[Operation, list[object]]] = []
        if isinstance(op, AffineForOp):
            body = op.body.entry if op.body is not None else None
            for index, child in enumerate(body.operations if body else []):
                nested.append((child, [*path, op.induction_variable, index]))
        elif isinstance(op, AffineParallelOp):
            body = op.body.entry if op.body is not None else None
            prefix: list[object] = []
            for iv in op.induction_variables:
                prefix += [iv, 0]
            for index, child in enumerate(body.operations if body else []):
                nested.append((child, [*path, *prefix[:-1], index]))
        elif isinstance(op, AffineIfOp):
            for branch, region in enumerate(op.regions):
                for index, child in enumerate(region.entry.operations if region.entry else []):
                    nested.append((child, [*path, branch, index]))
        stack.extend(reversed(nested))


class Window:
    """The memory accesses of `block.operations[first:last + 1]` as isl statements."""

    def __init__(
        self,
        session: IslSession,
        block: Block,
        first: int,
        last: int,
        aliases: dict[str, AliasDef],
        *,
        allow_parallel: bool = False,
    ) -> None:
        self.session = session
        self.block = block
        self.ops = block.operations[first : last + 1]
        self.names = NameTable("exact")
        self.resolver = Resolver(self.names, aliases)
        self.builder = DomainBuilder(session, self.resolver)
        self.statements: list[Statement] = []
        self.memrefs: dict[str, Value] = {}
        self.deallocated: list[tuple[Operation, Value]] = []
        self._allow_parallel = allow_parallel
        self._domains: dict[tuple, Domain] = {}
        with session.errors("the accesses of the window"):  # (a cap can run out anywhere)
            self._build()
            self.context = self._context()

    # -- construction -------------------------------------------------------------

    def _build(self) -> None:
        self._inside = {id(op) for op, _ in window_ops(self.ops)}
        for op, path in window_ops(self.ops):
            if isinstance(op, AffineForOp | AffineIfOp):
                continue
            if isinstance(op, AffineParallelOp):
                if not self._allow_parallel:
                    raise Unanalysable(op, "affine.parallel loops are not supported here")
                continue
            if isinstance(op, AffineAccessOp):
                if op.name == "affine.prefetch":
                    continue
                self._statement(op, path)
            elif isinstance(op, MemRefAccessOp):
                self._statement(op, path)
            elif op.name == "memref.dealloc":
                memref = op.operands[0].value if op.operands else None
                if memref is None:
                    raise Unanalysable(op, "dealloc of an unknown memref")
                self.deallocated.append((op, memref))
            elif not is_pure(op) or op.regions:
                raise Unanalysable(op, f"'{op.name}' may access memory in ways we do not model")
        for op, memref in self.deallocated:
            if array_name(memref) in self.memrefs and not _freed_at_end(op, memref, self._inside):
                raise Unanalysable(op, f"{memref.display_name} is deallocated here")
        depth = max((len(s.path) for s in self.statements), default=1)
        lanes = max((s.lanes for s in self.statements), default=0)
        for statement in self.statements:
            statement.schedule = self._schedule(statement, statement.path, depth, lanes)

    def _statement(self, op: Operation, path: list[object]) -> None:
        memref = op.memref.value if op.memref is not None else None  # type: ignore[attr-defined]
        if memref is None:
            raise Unanalysable(op, "access to an undefined memref")
        if not is_distinct_memref(memref):
            raise Unanalysable(
                op, f"{memref.display_name} may alias another memref (not an argument or alloc)"
            )
        levels, blocker = enclosing_levels(op, self.block)
        if blocker is not None:
            raise Unanalysable(blocker, f"'{blocker.name}' around an access is not affine")
        name = f"S{len(self.statements)}"
        shape = vector_shape(op)
        lanes = [(f"_l{k}", extent) for k, extent in enumerate(shape)]
        try:
            domain = self._domain(levels, name, lanes)
            array = array_name(memref)
            relation = access_relation(
                self.session,
                self.resolver,
                domain,
                op,
                array,
                name,
                [lane for lane, _ in lanes],
            )
        except NotAffine as error:
            raise Unanalysable(op, error.reason) from None
        assert domain.set is not None
        instances = domain.set.set_tuple_name(name)
        expand = self._private_depth(memref)
        if expand:
            relation = self.session.run(lambda: _per_iteration(relation, expand, array))
        access = self.session.run(lambda: relation.intersect_domain(instances))
        self.memrefs[array] = memref
        self.statements.append(
            Statement(
                name,
                op,
                domain,
                len(lanes),
                bool(getattr(op, "is_write", False)),
                memref,
                array,
                instances,
                access,
                path,
                per_iteration=expand,
            )
        )

    def private(self, memref: Value) -> bool:
        """A buffer allocated in the window and used only there, by accesses and a
        dealloc: its contents after the window count for nothing."""
        alloc = memref.defining_op
        if not isinstance(alloc, MemRefAllocOp) or id(alloc) not in self._inside:
            return False
        return all(
            use.user is not None
            and id(use.user) in self._inside
            and (
                use.user.name == "memref.dealloc"
                or isinstance(use.user, AffineAccessOp | MemRefAccessOp)
                and use.user.memref is use
            )
            for use in memref.uses
        )

    def _private_depth(self, memref: Value) -> int:
        """For a buffer each iteration of the window's loops allocates and frees (see
        `_freed_at_end`), how many of those loops' ivs tell its instances apart."""
        frees = [use.user for use in memref.uses if use.user and use.user.name == "memref.dealloc"]
        if len(frees) != 1 or memref.defining_op is None:
            return 0
        if not _freed_at_end(frees[0], memref, self._inside):
            return 0
        levels, _ = enclosing_levels(memref.defining_op, self.block)
        return sum(len(level.ivs) for level in levels)

    def _context(self) -> isl.Set:
        """The values the parameters take: the iterations of the loops around the block."""
        owner = self.block.parent_op
        if owner is None or not isinstance(owner, AffineForOp | AffineIfOp | AffineParallelOp):
            return self.session.set("{ : }")
        levels, _ = enclosing_levels(owner)
        levels = [*levels, Level(owner, self._branch(owner))]
        domain = DomainBuilder(self.session, self.resolver).build(levels)
        assert domain.set is not None
        space = domain.set
        names = [self.names.symbol(iv) for iv in domain.ivs]
        count = space.dim(isl.dim_type.set)
        params = space.move_dims(isl.dim_type.param, 0, isl.dim_type.set, 0, count)
        for position, name in enumerate(names):
            params = params.set_dim_name(isl.dim_type.param, position, name)
        return self.session.run(lambda: params.params())

    def _branch(self, owner: Operation) -> int:
        if isinstance(owner, AffineIfOp) and len(owner.regions) > 1:
            return 1 if self.block.parent_region is owner.regions[1] else 0
        return 0

    def _domain(self, levels: list[Level], name: str, lanes: list[tuple[str, int]]) -> Domain:
        """Domains are shared by the statements of one block (vector lanes aside)."""
        if lanes:
            return self.builder.build(levels, name, lanes=lanes)
        key = tuple((id(level.op), level.branch) for level in levels)
        found = self._domains.get(key)
        if found is None:
            found = self._domains[key] = self.builder.build(levels)
        return found

    def _schedule(
        self, statement: Statement, path: list[object], depth: int, lanes: int
    ) -> isl.Map:
        """The statement's schedule: `path` (block positions and ivs, outermost
        first) padded to `depth`, then its lanes padded to `lanes`."""
        dims = {
            id(iv): name
            for iv, name in zip(statement.domain.ivs, statement.domain.dims, strict=True)
        }
        time: list[str] = []
        for entry in path:
            time.append(str(entry) if isinstance(entry, int) else dims[id(entry)])
        time += ["0"] * (depth - len(time))
        lane_names = [f"_l{k}" for k in range(statement.lanes)]
        time += lane_names + ["0"] * (lanes - len(lane_names))
        text = statement.domain.text(f" -> [{', '.join(time)}]", statement.name, lane_names)
        schedule = self.session.map(text)
        return self.session.run(lambda: schedule.intersect_domain(statement.instances))

    # -- unions ---------------------------------------------------------------------

    def _union(self, maps: list[isl.Map]) -> isl.UnionMap:
        return self.session.run(lambda: union_of_maps(maps, self.session.ctx))

    def reads(self) -> isl.UnionMap:
        return self._union([s.access for s in self.statements if not s.is_write])

    def writes(self) -> isl.UnionMap:
        return self._union([s.access for s in self.statements if s.is_write])

    def schedule(self) -> isl.UnionMap:
        return self._union([s.schedule for s in self.statements if s.schedule is not None])

    def dataflow(self, reads: isl.UnionMap, writes: isl.UnionMap) -> Dataflow:
        """The last of `writes` each of `reads` sees under the window's schedule
        (checked exactly)."""
        return Dataflow(self.session, reads, writes, self.schedule())

    def instances(self) -> isl.UnionSet:
        return self.session.run(lambda: self._union([s.access for s in self.statements]).domain())

    @property
    def depth(self) -> int:
        """Length of the schedule vectors (positions, ivs, lanes)."""
        if not self.statements or self.statements[0].schedule is None:
            return 1
        return self.statements[0].schedule.dim(isl.dim_type.out)

    def contains(self, op: Operation) -> bool:
        """Whether `op` is one of the window's ops or nested in one."""
        window = {id(o) for o in self.ops}
        current: Operation | None = op
        while current is not None:
            if id(current) in window:
                return True
            current = current.parent_op
        return False
