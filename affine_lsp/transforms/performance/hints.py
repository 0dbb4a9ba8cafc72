"""Performance hints: hint-level diagnostics where the cost model sees a costly
pattern, in numbers, naming the action that fixes it.

They run with the checks of every edit, so they read the IR only (no isl):
subscripts as linear forms of the loops' ivs (`linear`), constant trip counts,
static shapes. Three patterns, each only where it is worth a word (loops of at
least `MIN_TRIPS` iterations, arrays larger than the L1 cache):

- **strided**: at least half of the accesses of an innermost loop that move at
  all jump a cache line or more per iteration, while another loop of the nest would make them
  consecutive ("3 of 4 accesses of %j jump 3200 bytes per iteration ...");
- **reduction in memory**: an innermost loop loads and stores one element that
  does not change along it (`C[i, j]` over `k`), at every iteration;
- **working set**: one iteration of a nest's outermost loop touches more than
  `WORKING_SET_FACTOR` times the L2 cache, and an array read in it does not move
  along that loop (it is read again from memory at every iteration).
"""

from __future__ import annotations

from affine_lsp.checks import Diagnostic, Severity
from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    Operation,
    Value,
)
from affine_lsp.transforms.performance.machine import Machine, human_size, machine
from affine_lsp.transforms.performance.reading import Access, read_access, trip_count

CODE = "performance"
MIN_TRIPS = 32
WORKING_SET_FACTOR = 4
FIX = "Optimize nest"


def _name(loop: AffineForOp) -> str:
    value = loop.induction_variable
    return value.name if value is not None else "the loop"


def _nearest_loop(op: Operation) -> AffineForOp | None:
    outer = op.parent_op
    while outer is not None and not isinstance(outer, AffineForOp):
        outer = outer.parent_op
    return outer


def performance_hints(
    root: Operation, data: bytes | bytearray, target: Machine | None = None
) -> list[Diagnostic]:
    """The performance hints of the loop nests under `root` (an item's operation)
    in the document `data`."""
    loops = [op for op in root.walk() if isinstance(op, AffineForOp)]
    if not loops:
        return []
    target = target or machine()
    parents = {id(loop): _nearest_loop(loop) for loop in loops}
    has_inner = {id(parent) for parent in parents.values() if parent is not None}
    found: list[Diagnostic] = []
    for loop in loops:
        trips = trip_count(loop)
        innermost = id(loop) not in has_inner and trips is not None and trips >= MIN_TRIPS
        outermost = id(loop) in has_inner and parents[id(loop)] is None
        if not (innermost or outermost):
            continue
        accesses = [
            access
            for op in loop.walk()
            if isinstance(op, AffineAccessOp) and op.name in ("affine.load", "affine.store")
            if (access := read_access(op, data)) is not None
        ]
        if not accesses:
            continue
        if innermost and trips is not None:
            found += _innermost(loop, trips, accesses, target)
        if outermost:
            found += _working_set(loop, accesses, target)
    return found


def _hint(loop: AffineForOp, message: str) -> Diagnostic:
    return Diagnostic(loop.name_span, Severity.HINT, CODE, message)


def _around(loop: AffineForOp) -> list[AffineForOp]:
    found = []
    outer = loop.parent_op
    while outer is not None:
        if isinstance(outer, AffineForOp):
            found.append(outer)
        outer = outer.parent_op
    return found


def _innermost(
    loop: AffineForOp, trips: int, accesses: list[Access], target: Machine
) -> list[Diagnostic]:
    found = []
    big = [a for a in accesses if (a.size() or 0) > target.cache(1)]
    moving = [a for a in accesses if a.stride(loop) != 0]
    strided = [
        a
        for a in big
        if (stride := a.stride(loop)) is None or abs(stride) * a.element >= target.line_bytes
    ]
    if strided and 2 * len(strided) >= len(moving):
        better = [
            outer
            for outer in _around(loop)
            if all(a.stride(outer) in (0, 1, -1) for a in strided)
            and (trip_count(outer) or 0) >= MIN_TRIPS
        ]
        if better:
            jump = max(
                (abs(s) * a.element for a in strided if (s := a.stride(loop)) is not None),
                default=0,
            )
            one = len(strided) == 1
            what = (
                f"{'jumps' if one else 'jump'} {jump} bytes"
                if jump
                else f"{'moves' if one else 'move'} by an unknown stride"
            )
            if len(strided) == len(moving):
                count = "the one access" if one else f"all {len(strided)} accesses"
            else:
                count = f"{len(strided)} of the {len(moving)} accesses"
            verb = "moves" if count == "the one access" else "move"
            found.append(
                _hint(
                    loop,
                    f"{count} that {verb} along {_name(loop)} {what} per iteration "
                    f"({_list(strided)}); with {_name(better[0])} innermost they would be "
                    f"consecutive: {FIX}",
                )
            )
    for store in accesses:
        if not store.writes or store.stride(loop) != 0:
            continue
        loads = [
            a
            for a in accesses
            if not a.writes and a.memref == store.memref and a.rows == store.rows
            if a.text == store.text and _feeds(a.op, store.op)
        ]
        if loads:
            found.append(
                _hint(
                    loop,
                    f"{store.memref}{store.text} is loaded and stored at each of the "
                    f"{trips} iterations of {_name(loop)}, though it does not change along "
                    f"it (a reduction kept in memory): {FIX}",
                )
            )
            break
    return found


def _feeds(load: AffineAccessOp, store: AffineAccessOp, limit: int = 64) -> bool:
    """Whether the value `store` writes is computed from what `load` read (within
    `limit` ops back): an update of the element, not a copy through it."""
    stored = store.stored_value.value if store.stored_value is not None else None
    results = {id(result) for result in load.results}
    stack: list[Value | None] = [stored] if stored is not None else []
    seen = 0
    while stack and seen < limit:
        value = stack.pop()
        seen += 1
        if value is None:
            continue
        if id(value) in results:
            return True
        definer = value.defining_op
        if definer is not None and definer.parent_block is store.parent_block:
            stack.extend(use.value for use in definer.operands)
    return False


def _working_set(loop: AffineForOp, accesses: list[Access], target: Machine) -> list[Diagnostic]:
    """One iteration of the outermost `loop` against the L2 cache."""
    trips = trip_count(loop)
    inner = [op for op in loop.walk() if isinstance(op, AffineForOp) and op is not loop]
    counts = {id(op): trip_count(op) for op in inner}
    if trips is None or trips < 2 or any(c is None for c in counts.values()):
        return []
    arrays: dict[str, int] = {}
    reread: list[str] = []
    for access in accesses:
        extent = access.element
        for dim, row in enumerate(access.rows):
            span = 1 + sum(abs(c) * ((counts.get(k) or 1) - 1) for k, c in row.items())
            size = access.shape[dim] if dim < len(access.shape) else None
            extent *= min(span, size) if size is not None else span
        arrays[access.memref] = max(arrays.get(access.memref, 0), extent)
        if not access.writes and access.stride(loop) == 0 and access.memref not in reread:
            reread.append(access.memref)
    total = sum(arrays.values())
    l2 = target.cache(2)
    reread = [name for name in reread if arrays[name] > l2 // 2]
    if total <= WORKING_SET_FACTOR * l2 or not reread:
        return []
    return [
        _hint(
            loop,
            f"each iteration of {_name(loop)} touches {human_size(total)} "
            f"({', '.join(arrays)}), {total // l2}x the L2 cache ({human_size(l2)}): "
            f"{', '.join(reread)} is read from memory again at each of its {trips} "
            f"iterations; tiling keeps it in cache: {FIX}",
        )
    ]


def _list(accesses: list[Access]) -> str:
    shown = []
    for access in accesses:
        text = f"{access.memref}{access.text}"
        if text not in shown:
            shown.append(text)
    return ", ".join(shown[:3]) + (", ..." if len(shown) > 3 else "")
