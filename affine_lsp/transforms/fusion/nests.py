"""Finding loop nests: the nest at a position, the next one, the blocks that hold nests."""

from __future__ import annotations

from collections.abc import Iterator

from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    Block,
    FuncOp,
    MemRefAccessOp,
    ModuleModel,
    Operation,
)
from affine_lsp.transforms.cursor import loops_holding, starting_on_line


def functions(model: ModuleModel) -> Iterator[FuncOp]:
    for op in model.walk():
        if isinstance(op, FuncOp) and op.body is not None:
            yield op


def nest_blocks(function: FuncOp) -> Iterator[Block]:
    """Blocks that can hold nests to fuse: the body and the bodies of affine.for ops,
    outermost first."""
    for op in function.walk():
        if op is function or isinstance(op, AffineForOp):
            for region in op.regions:
                yield from region.blocks


def loops_in(block: Block) -> list[AffineForOp]:
    return [op for op in block.operations if isinstance(op, AffineForOp)]


def next_nest(nest: AffineForOp) -> AffineForOp | None:
    block = nest.parent_block
    if block is None:
        return None
    following = block.operations[block.operations.index(nest) + 1 :]
    return next((op for op in following if isinstance(op, AffineForOp)), None)


def nest_at(model: ModuleModel, start: int, end: int, line_of) -> AffineForOp | None:
    """The nest a cursor/selection designates: a loop whose first line holds the cursor,
    else the outermost loop around it (`line_of(offset)` gives a line number)."""
    around = loops_holding(model, start, end)
    if not around:
        return None
    on_line = starting_on_line(around, line_of(start), line_of)
    if on_line:
        return on_line[-1]
    return around[0]


def nest_on_line(model: ModuleModel, line: int, point_of) -> AffineForOp | None:
    """The loop starting on 0-based `line`, else the outermost loop around that line."""
    loops = [op for op in model.walk() if isinstance(op, AffineForOp)]
    starting = [op for op in loops if point_of(op.span.start_byte)[0] == line]
    if starting:
        return starting[0]
    around = [
        op
        for op in loops
        if point_of(op.span.start_byte)[0] <= line <= point_of(op.span.end_byte)[0]
    ]
    return around[0] if around else None


def memrefs_touched(nest: Operation) -> tuple[set[int], set[int]]:
    """(ids of memref values read, ids written) by the accesses under `nest`."""
    reads: set[int] = set()
    writes: set[int] = set()
    for op in nest.walk():
        if isinstance(op, AffineAccessOp | MemRefAccessOp):
            if op.memref is None or op.memref.value is None or op.name == "affine.prefetch":
                continue
            (writes if op.is_write else reads).add(id(op.memref.value))
    return reads, writes


def are_siblings(first: Operation, second: Operation) -> bool:
    """Nests that read a memref in common and do not depend on each other."""
    first_reads, first_writes = memrefs_touched(first)
    second_reads, second_writes = memrefs_touched(second)
    shared = (first_reads & second_reads) - first_writes - second_writes
    dependent = first_writes & (second_reads | second_writes) or second_writes & first_reads
    return bool(shared) and not dependent
