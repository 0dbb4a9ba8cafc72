"""A loop nest's accesses read from the IR alone (no isl): subscripts as linear
forms of the loops' ivs, constant trip counts, static shapes; and the cost model's
`Body` of a perfect band built from them (`body_of`), which fusion's choices can
ask the cost model about as the optimizer does.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import (
    AffineAccessOp,
    AffineBinary,
    AffineConst,
    AffineDim,
    AffineExpr,
    AffineForOp,
    AffineNeg,
    AffineSymbol,
    MemRefType,
    Value,
)
from affine_lsp.transforms.performance.cost import Body, Loop, Ref
from affine_lsp.transforms.performance.machine import element_bytes

UNKNOWN_TRIPS = 1000
"""The trip count assumed for a loop whose bounds are not constants."""


def linear(expr: AffineExpr) -> dict[int, int] | None:
    """The coefficients of an affine expression's dims (positions), None when it is
    not a linear form of them (a product of dims, floordiv, mod, ceildiv)."""
    values: dict[int, dict[int, int] | None] = {}
    stack: list[tuple[AffineExpr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        if not ready:
            stack.append((node, True))
            stack.extend((child, False) for child in node.children())
            continue
        found: dict[int, int] | None
        if isinstance(node, AffineConst | AffineSymbol):
            found = {}
        elif isinstance(node, AffineDim):
            found = {node.position: 1}
        elif isinstance(node, AffineNeg):
            inner = values[id(node.operand)]
            found = None if inner is None else {k: -v for k, v in inner.items()}
        elif isinstance(node, AffineBinary):
            found = _binary(node, values[id(node.lhs)], values[id(node.rhs)])
        else:
            found = None
        values[id(node)] = found
    return values[id(expr)]


def _binary(
    node: AffineBinary, lhs: dict[int, int] | None, rhs: dict[int, int] | None
) -> dict[int, int] | None:
    if lhs is None or rhs is None:
        return None
    if node.op in ("+", "-"):
        sign = 1 if node.op == "+" else -1
        merged = dict(lhs)
        for key, value in rhs.items():
            merged[key] = merged.get(key, 0) + sign * value
        return {k: v for k, v in merged.items() if v}
    if node.op == "*":
        factor = _constant(node.rhs) if not rhs else _constant(node.lhs) if not lhs else None
        if factor is None:
            return None if lhs and rhs else {}
        terms = lhs or rhs
        return {k: v * factor for k, v in terms.items()}
    return None if (lhs or rhs) else {}


def _constant(expr: AffineExpr) -> int | None:
    if isinstance(expr, AffineConst):
        return expr.value
    if isinstance(expr, AffineNeg):
        inner = _constant(expr.operand)
        return None if inner is None else -inner
    return None


@dataclass
class Access:
    op: AffineAccessOp
    memref: str
    writes: bool
    rows: list[dict[int, int]]  # per array dim: loop id -> coefficient
    shape: tuple[int | None, ...]
    element: int
    text: str  # the subscripts as written, with their brackets

    def stride(self, loop: AffineForOp) -> int | None:
        """Elements per iteration of `loop` (None: unknown)."""
        stride = 0
        span: int | None = 1
        for dim in reversed(range(len(self.rows))):
            coefficient = self.rows[dim].get(id(loop), 0)
            if coefficient:
                if span is None:
                    return None
                stride += coefficient * span
            size = self.shape[dim] if dim < len(self.shape) else None
            span = None if size is None or span is None else span * size
        return stride

    def size(self) -> int | None:
        total = self.element
        for size in self.shape:
            if size is None:
                return None
            total *= size
        return total


def read_access(op: AffineAccessOp, data: bytes | bytearray) -> Access | None:
    subscripts = op.subscripts
    memref = op.memref.value if op.memref is not None else None
    type_ = op.memref_type
    if subscripts is None or memref is None or not isinstance(type_, MemRefType):
        return None
    if type_.shape is None or type_.layout or op.vector_type is not None:
        return None
    rows = []
    for result in subscripts.map.results:
        form = linear(result)
        if form is None:
            return None
        row: dict[int, int] = {}
        for position, coefficient in form.items():
            if position >= len(subscripts.dims):
                return None
            value = subscripts.dims[position].value
            loop = _loop_of(value)
            if loop is None:
                return None  # an index computed otherwise: unknown movement
            row[id(loop)] = row.get(id(loop), 0) + coefficient
        rows.append(row)
    start, end = subscripts.span.start_byte, subscripts.span.end_byte
    return Access(
        op,
        memref.display_name,
        op.is_write,
        rows,
        type_.shape,
        element_bytes(type_.element),
        bytes(data[start:end]).decode("utf-8", "replace"),
    )


def _loop_of(value: Value | None) -> AffineForOp | None:
    if value is None or value.owner_block is None:
        return None
    owner = value.owner_block.parent_op
    if isinstance(owner, AffineForOp) and owner.induction_variable is value:
        return owner
    return None


def trip_count(loop: AffineForOp) -> int | None:
    lower, upper = loop.lower, loop.upper
    if lower is None or upper is None:
        return None
    low, high = lower.shorthand_constant, upper.shorthand_constant
    if low is None or high is None:
        return None
    step = loop.step or 1
    return max(0, -(-(high - low) // step))


def body_of(root: AffineForOp, data: bytes | bytearray, depth: int | None = None) -> Body | None:
    """The cost model's view of the perfect band from `root` (at most `depth` loops)
    and the loops inside it, from the IR alone; None when an access cannot be read
    (a subscript through an `affine.apply`, a dynamic layout)."""
    band = [root]
    while depth is None or len(band) < depth:
        block = band[-1].body.entry if band[-1].body is not None else None
        ops = [op for op in (block.operations if block else []) if op.name != "affine.yield"]
        if len(ops) != 1 or not isinstance(ops[0], AffineForOp):
            break
        band.append(ops[0])
    inner = [op for op in band[-1].walk() if isinstance(op, AffineForOp) and op is not band[-1]]
    order = band + inner
    position = {id(loop): k for k, loop in enumerate(order)}
    groups: dict[tuple, list[Access]] = {}
    for op in band[-1].walk():
        if not isinstance(op, AffineAccessOp) or op.name not in ("affine.load", "affine.store"):
            continue
        access = read_access(op, data)
        if access is None:
            return None
        rows = []
        for row in access.rows:
            full = [0] * len(order)
            for loop_id, coefficient in row.items():
                if loop_id in position:
                    full[position[loop_id]] += coefficient
            rows.append(tuple(full))
        groups.setdefault((access.memref, tuple(rows), access.writes), []).append(access)
    refs = []
    for (memref, rows, writes), members in groups.items():
        first = members[0]
        refs.append(
            Ref(
                memref,
                rows,
                tuple(0 for _ in rows),
                first.shape,
                first.element,
                writes,
                len(members),
            )
        )
    loops = tuple(Loop(_iv(loop), trip_count(loop) or UNKNOWN_TRIPS) for loop in band)
    inner_loops = tuple(Loop(_iv(loop), trip_count(loop) or UNKNOWN_TRIPS) for loop in inner)
    operations = sum(
        1
        for op in band[-1].walk()
        if op.name.startswith(("arith.", "math.")) and op.name != "arith.constant"
    )
    return Body(loops, inner_loops, tuple(refs), max(1, operations))


def _iv(loop: AffineForOp) -> str:
    value = loop.induction_variable
    return value.name if value is not None else "%?"
