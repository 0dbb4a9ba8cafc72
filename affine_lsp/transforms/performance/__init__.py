"""The performance model: the machine, the cost of a schedule, performance hints.

Light (the IR and plain arithmetic, no isl): the editor's analysis runs the hints
with the checks of every edit, and both the optimizer (`transforms.optimize`) and
fusion's choices can share one locality model.

The machine (`machine`): Machine (caches, line, vector width, registers;
with_overrides, lanes, cache, describe), machine() this one as the OS describes it,
parse_caches("48K,1M,32M"), human_size(bytes), element_bytes(type).
The cost model (`cost`; worked through in docs/optimize.md): Body (a band's loops
and references: Loop, Ref), Choice (order, tile sizes, unroll-and-jam), estimate
-> Estimate (cycles, traffic per cache level), memory_order, tile_sizes (loops of
at least MIN_TILED_TRIPS iterations),
scaled_tiles, jam_choice, jam_factor, register_tile and tile_registers (two loops
unrolled and jammed; JAM_PAYS the share of the cycles one must predict),
memory_streams (rows an unroll-and-jam streams from memory), cache_streams (rows
beyond L1 its copies read at once in a vector loop), apart_factor (copies half the
loop apart where consecutive rows from memory would slow it down),
lines_per_iteration, footprint, row_major_stride (a subscript's stride), promoted and
reduction_in_memory (what scalar replacement keeps in registers), vectorisable (a
loop LLVM vectorizes when innermost), wavefront_rows and
recurrence_latency (a recurrence along the innermost loop, broken by a wavefront).
Hints (`hints`): performance_hints(operation, data, machine) -> hint diagnostics.
The IR read without isl (`reading`): body_of(loop, data, depth) the model's Body of
a perfect band (for fusion's choices, as for the optimizer's).
"""

from affine_lsp.transforms.performance.cost import (
    JAM_PAYS,
    MIN_TILED_TRIPS,
    Body,
    Choice,
    Estimate,
    Loop,
    Ref,
    apart_factor,
    cache_streams,
    estimate,
    footprint,
    jam_choice,
    jam_factor,
    lines_per_iteration,
    memory_order,
    memory_streams,
    promoted,
    recurrence_latency,
    reduction_in_memory,
    register_tile,
    row_major_stride,
    scaled_tiles,
    tile_registers,
    tile_sizes,
    vectorisable,
    wavefront_rows,
)
from affine_lsp.transforms.performance.hints import performance_hints
from affine_lsp.transforms.performance.machine import (
    Machine,
    element_bytes,
    human_size,
    machine,
    parse_caches,
)
from affine_lsp.transforms.performance.reading import body_of

__all__ = [
    "JAM_PAYS",
    "MIN_TILED_TRIPS",
    "Body",
    "Choice",
    "Estimate",
    "Loop",
    "Machine",
    "Ref",
    "apart_factor",
    "body_of",
    "cache_streams",
    "element_bytes",
    "estimate",
    "footprint",
    "human_size",
    "jam_choice",
    "jam_factor",
    "lines_per_iteration",
    "machine",
    "memory_order",
    "memory_streams",
    "parse_caches",
    "performance_hints",
    "promoted",
    "reduction_in_memory",
    "register_tile",
    "recurrence_latency",
    "row_major_stride",
    "scaled_tiles",
    "tile_registers",
    "tile_sizes",
    "vectorisable",
    "wavefront_rows",
]
