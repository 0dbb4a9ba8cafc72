"""Locality of a loop nest: per-loop strides, stride-1 accesses, reuse, cache lines.

`cost(nest)` models every memory access under an `affine.for` nest (through
isl, so subscripts through `affine.apply` count too) and answers:

- `strides`: per access, its stride in elements along each loop around it
  (row-major memrefs; a dynamic size counts as `DEFAULT_EXTENT`; None where
  the subscript is not one affine expression);
- `stride1_fraction`: of the accesses the innermost loops execute, the share
  whose stride along their innermost loop is 0 or ±1 (weighted by executions);
- `reuse`: per access, the innermost loop along which it touches the same
  element again (stride 0) and the reuse distance, the bytes one iteration of
  that loop touches (`LoopLocality.working_set`);
- `lines`: the cache lines the nest loads, in the spirit of Kennedy and
  McKinley's LoopCost: an access loads a new line each time its innermost loop
  along which it moves (non-zero stride) takes a step, a whole line when the
  stride spans one, `|stride| * bytes / line` of one when it is smaller; the
  loops inside that one, along which it stays put, reuse the line. Accesses of
  one memref with the same strides whose elements lie within a line of each
  other (`A[i][j]`, `A[i][j + 1]`) share their lines (a reference group). Reuse
  across the outer loops (a working set that fits in a cache) is not counted.

`lines` compares loop orders: `cost(nest, order=[...])` evaluates the nest as if
its perfectly nested loops ran in another order, without rewriting it. Trip
counts are the extents of the loops' iterations (symbols taken as
`DEFAULT_EXTENT`), so a triangular loop counts as its bounding box: the model
ranks orders, it does not predict times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.ir import AffineForOp, AffineParallelOp, MemRefType, ModuleModel, Operation
from affine_lsp.poly import (
    IslSession,
    PolyError,
    Statement,
    Window,
    budgets,
    fraction,
    is_under,
)

LINE_BYTES = 64
"""A cache line (bytes)."""

DEFAULT_EXTENT = 100
"""A dynamic memref size, or a loop bound's symbol, when nothing says more."""

_BITS = re.compile(r"^(?:[a-z]*?)(\d+)$")


@dataclass(frozen=True)
class AccessLocality:
    """One access: where it is, its strides, how often it runs, its reuse."""

    op: Operation
    memref: str
    loops: tuple[str, ...]  # its loops (ivs), outermost first, in the evaluated order
    strides: dict[str, int | None]  # iv -> stride in elements (None: not affine)
    executions: float
    bytes: int  # per element
    reuse_loop: str | None = None  # innermost loop along which it is invariant
    reuse_distance: float | None = None  # bytes one iteration of `reuse_loop` touches

    @property
    def innermost(self) -> str | None:
        return self.loops[-1] if self.loops else None

    @property
    def innermost_stride(self) -> int | None:
        return self.strides.get(self.loops[-1]) if self.loops else 0

    @property
    def stride1(self) -> bool:
        stride = self.innermost_stride
        return stride is not None and abs(stride) <= 1


@dataclass(frozen=True)
class LoopLocality:
    """One loop: its trip count and the bytes one of its iterations touches."""

    iv: str
    trip: float
    working_set: float


@dataclass
class NestLocality:
    """The locality of a nest (see the module docstring)."""

    loops: list[LoopLocality] = field(default_factory=list)
    accesses: list[AccessLocality] = field(default_factory=list)
    lines: float = 0.0
    stride1_fraction: float = 1.0

    def loop(self, iv: str) -> LoopLocality | None:
        return next((loop for loop in self.loops if loop.iv == iv), None)

    def describe(self) -> str:
        """One line: the stride-1 share and the lines loaded."""
        return (
            f"{self.stride1_fraction:.0%} of the innermost accesses stride-1, "
            f"{self.lines:.3g} cache lines"
        )


def element_bytes(memref: MemRefType | None) -> int:
    """Bytes of one element (8 when unknown)."""
    if memref is None:
        return 8
    text = str(memref.element)
    if text == "index":
        return 8
    match = _BITS.match(text.replace("bf", "f"))
    if match:
        return max(1, int(match.group(1)) // 8)
    return 8


def _row_major(memref: MemRefType | None, rank: int) -> list[int]:
    """Element strides of a memref's dimensions (identity layout)."""
    shape = list(memref.shape) if memref is not None and memref.shape is not None else []
    if len(shape) != rank:
        shape = [None] * rank
    strides = [1] * rank
    for k in range(rank - 2, -1, -1):
        extent = shape[k + 1]
        strides[k] = strides[k + 1] * max(1, extent if extent is not None else DEFAULT_EXTENT)
    return strides


def _coefficients(statement: Statement) -> tuple[list[list[int]] | None, list[int]]:
    """Per memref dimension, the coefficient of each domain dim, and the constants;
    None when the access is not one affine function of the domain."""
    access = statement.access
    dims = len(statement.domain.dims)
    try:
        function = isl.PwMultiAff.from_map(access)
    except isl.Error:
        return None, []
    if function.n_piece() != 1:
        return None, []
    pieces: list[isl.MultiAff] = []
    function.foreach_piece(lambda _set, multi: pieces.append(multi))
    multi = pieces[0]
    rows: list[list[int]] = []
    constants: list[int] = []
    for m in range(multi.dim(isl.dim_type.out)):
        aff = multi.get_aff(m)
        if aff.dim(isl.dim_type.div):
            return None, []
        if not aff.get_denominator_val().is_one():
            return None, []
        rows.append(
            [int(fraction(aff.get_coefficient_val(isl.dim_type.in_, k))) for k in range(dims)]
        )
        constants.append(int(fraction(aff.get_constant_val())))
    return rows, constants


class _Extents:
    """Trip counts of loops (cached): the extent of a loop's iv when the loops around
    it stand at the middle of their ranges (exact for rectangular loops, the average
    for triangular ones, one tile for the point loops of a tiled nest); symbols are
    taken as `DEFAULT_EXTENT`."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.found: dict[int, float] = {}

    def trip(self, statement: Statement, position: int, loop: Operation) -> float:
        if id(loop) not in self.found:
            self.found[id(loop)] = self._extent(statement, position, _step(statement, position))
        return self.found[id(loop)]

    def _extent(self, statement: Statement, position: int, step: int = 1) -> float:
        points = statement.domain.set
        if points is None:
            return float(DEFAULT_EXTENT)
        ctx = points.get_ctx()
        for k in range(points.dim(isl.dim_type.param)):
            fixed = points.fix_val(isl.dim_type.param, k, isl.Val.int_from_si(ctx, DEFAULT_EXTENT))
            if not fixed.is_empty():
                points = fixed
        for k in range(position + 1):
            low, high = points.dim_min_val(k), points.dim_max_val(k)
            if not (low.is_int() and high.is_int()):
                return float(DEFAULT_EXTENT)
            first, last = int(fraction(low)), int(fraction(high))
            if k == position:
                return float(max(0, (last - first) // max(1, step) + 1))
            middle = points.fix_val(
                isl.dim_type.set, k, isl.Val.int_from_si(ctx, (first + last) // 2)
            )
            points = (
                middle
                if not middle.is_empty()
                else points.fix_val(isl.dim_type.set, k, isl.Val.int_from_si(ctx, first))
            )
        return float(DEFAULT_EXTENT)


def _loops_of(statement: Statement) -> list[tuple[Operation, int]]:
    """The loops around a statement with the position of their iv in its domain."""
    found: list[tuple[Operation, int]] = []
    position = 0
    for level in statement.domain.levels:
        if isinstance(level.op, AffineForOp):
            found.append((level.op, position))
            position += 1
        elif isinstance(level.op, AffineParallelOp):
            for _ in level.op.induction_variables:
                found.append((level.op, position))
                position += 1
    return found


def _step(statement: Statement, position: int) -> int:
    """The step of the loop whose iv is at `position` in the statement's domain."""
    for loop, at in _loops_of(statement):
        if at == position:
            if isinstance(loop, AffineForOp):
                return max(1, loop.step or 1)
            if isinstance(loop, AffineParallelOp):
                first = next(p for op, p in _loops_of(statement) if op is loop)
                steps = loop.steps
                return max(1, steps[position - first]) if position - first < len(steps) else 1
    return 1


def _iv(loop: Operation, index: int = 0) -> str:
    if isinstance(loop, AffineForOp) and loop.induction_variable is not None:
        return loop.induction_variable.name
    if isinstance(loop, AffineParallelOp) and loop.induction_variables:
        return loop.induction_variables[index].name
    return "?"


def cost(
    nest: AffineForOp,
    model: ModuleModel | None = None,
    *,
    window: Window | None = None,
    order: list[AffineForOp] | None = None,
    line_bytes: int = LINE_BYTES,
    session: IslSession | None = None,
) -> NestLocality | None:
    """The locality of `nest` (None when its accesses cannot be modelled). `window`:
    a model of the block holding `nest` to read it from (else one is built, with
    `model`'s aliases, in `session` or a session of its own); `order`: the loops of
    its perfect band in another order, to evaluate that order instead of the written
    one."""
    if window is None:
        block = nest.parent_block
        if block is None:
            return None
        session = session or IslSession(budgets.DEPENDENCE)
        index = block.operations.index(nest)
        aliases = model.alias_table() if model is not None else {}
        try:
            window = Window(session, block, index, index, aliases)
        except PolyError:
            return None
    try:
        return _Model(window, nest, order, line_bytes).run()
    except (PolyError, isl.Error):
        return None


_Row = tuple[Statement, list[tuple[Operation, int]], list[int | None], list[int], int]
"""A statement, its loops (and their positions in its domain), its stride along each,
its offset in elements, the bytes of its elements."""


class _Model:
    def __init__(
        self, window: Window, nest: AffineForOp, order: list[AffineForOp] | None, line: int
    ) -> None:
        self.window = window
        self.nest = nest
        self.order = order or []
        self.line = line
        self.extents = _Extents(window)

    def _ordered(self, loops: list[tuple[Operation, int]]) -> list[tuple[Operation, int]]:
        """The statement's loops with the band prefix in the evaluated order."""
        if not self.order:
            return loops
        band = {id(loop) for loop in self.order}
        prefix = [entry for entry in loops if id(entry[0]) in band]
        if len(prefix) != len(self.order) or loops[: len(prefix)] != prefix:
            return loops
        by_id = {id(loop): entry for loop, entry in ((e[0], e) for e in prefix)}
        return [by_id[id(loop)] for loop in self.order] + loops[len(prefix) :]

    def run(self) -> NestLocality:
        statements = [s for s in self.window.statements if is_under(s.op, self.nest)]
        rows: list[
            tuple[Statement, list[tuple[Operation, int]], list[int | None], list[int], int]
        ] = []
        for statement in statements:
            loops = self._ordered(_loops_of(statement))
            memref_type = getattr(statement.op, "memref_type", None)
            memref = memref_type if isinstance(memref_type, MemRefType) else None
            coefficients, constants = _coefficients(statement)
            rank = len(coefficients) if coefficients is not None else 0
            dim_strides = _row_major(memref, rank)
            strides: list[int | None] = []
            for _, position in loops:
                if coefficients is None:
                    strides.append(None)
                else:
                    strides.append(
                        sum(row[position] * dim_strides[m] for m, row in enumerate(coefficients))
                        * _step(statement, position)
                    )
            offset = sum(c * dim_strides[m] for m, c in enumerate(constants))
            rows.append((statement, loops, strides, [offset], element_bytes(memref)))
        trips: dict[int, float] = {}
        for statement, loops, _, _, _ in rows:
            for loop, position in loops:
                trips[id(loop)] = self.extents.trip(statement, position, loop)
        # Reference groups: one memref, the same innermost loop and strides, within a line.
        leaders: list[tuple[tuple, int, int]] = []
        lines = 0.0
        executed = 0.0
        stride1 = 0.0
        accesses: list[AccessLocality] = []
        names: dict[int, str] = {}
        for statement, loops, strides, (offset,), size in rows:
            executions = 1.0
            for loop, _ in loops:
                executions *= trips[id(loop)]
            innermost = strides[-1] if strides else 0
            # An access that moves along no loop touches one element: it shares its
            # line with every access of that element, in whichever loop.
            still = all(stride == 0 for stride in strides)
            key = (
                statement.array,
                0 if still or not loops else id(loops[-1][0]),
                tuple(strides) if not still else (),
            )
            grouped = (
                any(k == key and abs(offset - o) * size < self.line for k, o, _ in leaders)
                and None not in strides
            )
            if not grouped:
                leaders.append((key, offset, size))
                lines += self._lines(strides, size, trips, loops, executions)
            executed += executions
            if innermost is not None and abs(innermost) <= 1:
                stride1 += executions
            ivs = tuple(_iv(loop) for loop, _ in loops)
            for loop, _ in loops:
                names[id(loop)] = _iv(loop)
            accesses.append(
                AccessLocality(
                    statement.op,
                    statement.memref.display_name,
                    ivs,
                    dict(zip(ivs, strides, strict=True)),
                    executions,
                    size,
                )
            )
        loops_info = self._loops(rows, trips)
        by_iv = {loop.iv: loop for loop in loops_info}
        with_reuse = []
        for access in accesses:
            reuse = next((iv for iv in reversed(access.loops) if access.strides.get(iv) == 0), None)
            distance = by_iv[reuse].working_set if reuse is not None and reuse in by_iv else None
            with_reuse.append(
                AccessLocality(
                    access.op,
                    access.memref,
                    access.loops,
                    access.strides,
                    access.executions,
                    access.bytes,
                    reuse,
                    distance,
                )
            )
        fraction_1 = stride1 / executed if executed else 1.0
        return NestLocality(loops_info, with_reuse, lines, fraction_1)

    def _lines(
        self,
        strides: list[int | None],
        size: int,
        trips: dict[int, float],
        loops: list[tuple[Operation, int]],
        executions: float,
    ) -> float:
        """Lines an access loads: a new line each time its innermost loop with a
        non-zero stride moves it past one (`|stride| * bytes / line` lines per
        iteration of that loop, at most one); the loops inside it, along which it
        stays put, reuse that line."""
        runs = executions
        for (loop, _), stride in zip(reversed(loops), reversed(strides), strict=True):
            if stride is None:
                return runs
            if stride != 0:
                return runs * min(1.0, abs(stride) * size / self.line)
            runs /= max(1.0, trips[id(loop)])
        return 1.0

    def _loops(self, rows: list[_Row], trips: dict[int, float]) -> list[LoopLocality]:
        """Every loop of the nest (in the evaluated order of first appearance) with the
        bytes one of its iterations touches: per reference, the elements its inner
        loops reach (the product of the trip counts along which it moves)."""
        order: list[Operation] = []
        for _, loops, _, _, _ in rows:
            for loop, _ in loops:
                if loop not in order:
                    order.append(loop)
        found = []
        for loop in order:
            footprint = 0.0
            seen: set[tuple] = set()
            for statement, loops, strides, _, size in rows:
                ids = [id(entry[0]) for entry in loops]
                if id(loop) not in ids:
                    continue
                inner = ids.index(id(loop)) + 1
                key = (statement.array, tuple(strides[inner:]))
                if key in seen:
                    continue
                seen.add(key)
                elements = 1.0
                for (other, _), stride in zip(loops[inner:], strides[inner:], strict=True):
                    if stride != 0:
                        elements *= trips[id(other)]
                footprint += elements * size
            found.append(LoopLocality(_iv(loop), trips[id(loop)], footprint))
        return found


def lines_of(localities: list[NestLocality | None]) -> float | None:
    """The lines several nests load together (None if one is unknown)."""
    total = 0.0
    for locality in localities:
        if locality is None:
            return None
        total += locality.lines
    return total
