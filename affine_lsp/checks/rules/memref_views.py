"""View-like memref ops: memref.subview, reinterpret_cast, view, transpose and
cast. The result type each declares must be the one MLIR infers from the source
type and the offsets, sizes and strides; the strides and offsets of layouts are
computed as MLIR computes them (`affine_lsp.checks.layouts`). Each op is
checked in MLIR's order and reports its first problem, since the later checks
build on the earlier ones."""

from __future__ import annotations

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.layouts import (
    UNKNOWN,
    Layout,
    Strided,
    canonical_strides,
    layout_of,
    linear_form,
    saturated_add,
    saturated_mul,
    strided_type,
)
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import body_node, is_generic, op_rule, plural
from affine_lsp.checks.rules.memref import DYNAMIC_SIZES
from affine_lsp.checks.rules.memref_common import (
    LAYOUT,
    Declared,
    IndexList,
    declared_result,
    declared_source,
    mixed_list,
    report_result,
    segment_sizes,
    source_anchor,
    static_list,
)
from affine_lsp.ir import AffineDim, AffineMap, MemRefType, Operation, map_from_node
from affine_lsp.syntax import FIELD, Span, text

SLICE_LISTS = register(
    "memref-slice-lists",
    "subview/reinterpret_cast: offset, size and stride lists that do not fit the ranks, or "
    "negative offsets and sizes",
    "memref",
)
SLICE_BOUNDS = register(
    "memref-slice-bounds",
    "memref.subview: a constant offset or the last element of the slice lies outside a static "
    "dimension of the source",
    "memref",
)
CAST = register(
    "memref-cast-incompatible",
    "memref.cast between two types that cannot describe the same memref",
    "memref",
)
PERMUTATION = register(
    "memref-transpose-permutation",
    "memref.transpose: the map is not a permutation of the source's dimensions",
    "memref",
)


def _fmt(value: int | None) -> str:
    return "?" if value is None else str(value)


def _fmt_list(values: tuple[int | None, ...] | list[int | None]) -> str:
    return "[" + ", ".join(_fmt(v) for v in values) + "]"


# -- offsets, sizes and strides --------------------------------------------------------


def _slice_lists(op: Operation) -> tuple[IndexList, IndexList, IndexList] | None:
    body = body_node(op)
    if body is None:
        return None
    if is_generic(op):
        segments = segment_sizes(op)
        if segments is None or len(segments) != 4:
            return None
        lists = tuple(
            static_list(op, f"static_{name}", count)
            for name, count in zip(("offsets", "sizes", "strides"), segments[1:], strict=True)
        )
    else:
        names = ("offsets" if op.name == "memref.subview" else "offset", "sizes", "strides")
        lists = tuple(mixed_list(body.child_by_field_id(FIELD[name])) for name in names)
    if any(item is None for item in lists):
        return None
    return lists  # type: ignore[return-value]


def _check_lists(
    ctx: CheckContext,
    lists: tuple[IndexList, IndexList, IndexList],
    max_ranks: tuple[int, int, int],
    what: str,
) -> bool:
    """The checks MLIR's OffsetSizeAndStrideOpInterface makes; whether all passed."""
    offsets, sizes, strides = lists
    if not (len(offsets.entries) == 1 and max_ranks[0] == 1) and len(offsets.entries) != len(
        sizes.entries
    ):
        ctx.report(
            SLICE_LISTS,
            offsets.span,
            f"expected mixed offsets rank to match mixed sizes rank ({len(offsets.entries)} vs "
            f"{len(sizes.entries)}) so the rank of the result type is well-formed: one offset "
            "per size",
        )
        return False
    if len(sizes.entries) != len(strides.entries):
        ctx.report(
            SLICE_LISTS,
            strides.span,
            f"expected mixed sizes rank to match mixed strides rank ({len(sizes.entries)} vs "
            f"{len(strides.entries)}) so the rank of the result type is well-formed: one stride "
            "per size",
        )
        return False
    names = ("offset", "size", "stride")
    for name, listed, expected in zip(names, lists, max_ranks, strict=True):
        if len(listed.entries) != expected:
            ctx.report(
                SLICE_LISTS,
                listed.span,
                f"expected {expected} {name} values, got {len(listed.entries)}: {what}",
            )
            return False
    for name, listed in zip(names, lists, strict=True):
        dynamic = sum(1 for entry in listed.entries if entry.value is None)
        if listed.dynamic_operands is not None and listed.dynamic_operands != dynamic:
            ctx.report(
                SLICE_LISTS,
                listed.span,
                f"expected the number of '{name}s' to match the number of dynamic entries in "
                f"'static_{name}s' ({listed.dynamic_operands} vs {dynamic}): each dynamic entry "
                "takes its value from one operand",
            )
            return False
    for name, listed in zip(names[:2], lists[:2], strict=True):
        for entry in listed.entries:
            if entry.value is not None and entry.value < 0:
                ctx.report(
                    SLICE_LISTS,
                    entry.span,
                    f"expected {name}s to be non-negative, but got {entry.value}: {name}s count "
                    "elements",
                )
                return False
    return True


# -- memref.subview ------------------------------------------------------------------


@op_rule("memref.subview")
def subview(op: Operation, ctx: CheckContext) -> None:
    source, result = declared_source(op), declared_result(op)
    base, view = source.memref, result.memref
    lists = _slice_lists(op)
    if base is None or view is None or base.shape is None or view.shape is None or not lists:
        return
    rank = len(base.shape)
    if not _check_lists(ctx, lists, (rank, rank, rank), f"the source has rank {rank}"):
        return
    if base.memory_space != view.memory_space:
        report_result(
            ctx,
            op,
            result,
            f"different memory spaces specified for base memref type '{base}' and subview "
            f"memref type '{view}': a subview stays in the memory space of its source",
        )
        return
    base_layout = layout_of(base, ctx.module.aliases)
    if not base_layout.known:
        return
    if base_layout.strided is None:
        span, related = source_anchor(op, source)
        ctx.report(
            LAYOUT,
            span,
            f"base type '{base}' is not strided: subviews need a layout with strides and an offset",
            related=related,
        )
        return
    offsets, sizes, strides = (listed.static() for listed in lists)
    inferred = _infer_subview(base, base_layout.strided, offsets, sizes, strides)
    if _check_subview_result(ctx, op, result, view, inferred, sizes):
        _check_bounds(ctx, base, lists)


def _infer_subview(
    base: MemRefType,
    strided: Strided,
    offsets: tuple[int | None, ...],
    sizes: tuple[int | None, ...],
    strides: tuple[int | None, ...],
) -> MemRefType:
    offset = strided.offset
    for start, base_stride in zip(offsets, strided.strides, strict=True):
        offset = saturated_add(offset, saturated_mul(start, base_stride))
    result_strides = tuple(
        saturated_mul(s, t) for s, t in zip(strided.strides, strides, strict=True)
    )
    return strided_type(sizes, base, Strided(result_strides, offset))


def _rank_reduction(
    shape: tuple[int | None, ...], reduced: tuple[int | None, ...]
) -> set[int] | None:
    """Dimensions of `shape` dropped to get `reduced` (each a 1), or None if impossible."""
    dropped: set[int] = set()
    position = 0
    for index, size in enumerate(shape):
        if position < len(reduced) and size == reduced[position]:
            position += 1
            continue
        if size != 1:
            return None
        dropped.add(index)
    return dropped if position == len(reduced) else None


def _dropped_by_strides(
    inferred: Strided, candidate: Strided, sizes: tuple[int | None, ...], rank: int
) -> set[int] | None:
    """MLIR's choice of the dropped unit dimensions, told apart by their strides."""
    unit = {i for i, size in enumerate(sizes) if size == 1}
    if len(unit) + len(candidate.strides) == len(inferred.strides):
        return unit
    remaining: dict[int | None, int] = {}
    for stride in inferred.strides:
        remaining[stride] = remaining.get(stride, 0) + 1
    kept: dict[int | None, int] = {}
    for stride in candidate.strides:
        kept[stride] = kept.get(stride, 0) + 1
    dropped = set()
    for dim in sorted(unit):
        stride = inferred.strides[dim]
        if remaining.get(stride, 0) > kept.get(stride, 0):
            remaining[stride] -= 1
            dropped.add(dim)
        elif remaining.get(stride, 0) < kept.get(stride, 0):
            return None
    return dropped if len(dropped) + rank == len(inferred.strides) else None


def _check_subview_result(
    ctx: CheckContext,
    op: Operation,
    result: Declared,
    view: MemRefType,
    inferred: MemRefType,
    sizes: tuple[int | None, ...],
) -> bool:
    """MLIR's comparison of the declared type with the inferred one (rank reductions
    allowed); whether it passed."""
    assert view.shape is not None and inferred.shape is not None
    expected = f"expected result type to be '{inferred}' or a rank-reduced version."
    if len(view.shape) > len(inferred.shape):
        report_result(
            ctx,
            op,
            result,
            f"expected result rank to be smaller or equal to the source rank, but got '{view}': "
            "a subview may drop dimensions of size 1, never add any",
        )
        return False
    if view != inferred and _rank_reduction(inferred.shape, view.shape) is None:
        report_result(
            ctx,
            op,
            result,
            f"{expected} (mismatch of result sizes), but got '{view}': the slice has sizes "
            f"{_fmt_list(sizes)}; only dimensions of size 1 may be dropped",
        )
        return False
    if view.element != inferred.element:
        report_result(
            ctx,
            op,
            result,
            f"expected result element type to be '{inferred.element}', but got '{view}': a "
            "subview keeps the element type of its source",
        )
        return False
    view_layout = layout_of(view, ctx.module.aliases)
    if not view_layout.known:
        return True
    inferred_strided = layout_of(inferred, {}).strided
    assert inferred_strided is not None
    candidate = view_layout.strided
    mismatch = f"{expected} (mismatch of result layout), but got '{view}'"
    reduced = _rank_reduced(inferred, inferred_strided, view)
    if candidate is None:
        message = f"{mismatch}: the declared layout has no strides"
        report_result(ctx, op, result, message, expected=reduced)
        return False
    if candidate.offset != inferred_strided.offset:
        report_result(
            ctx,
            op,
            result,
            f"{mismatch}: the slice starts at offset {_fmt(inferred_strided.offset)}, the "
            f"declared layout at {_fmt(candidate.offset)}",
            expected=reduced,
        )
        return False
    dropped = _dropped_by_strides(inferred_strided, candidate, sizes, len(view.shape))
    kept = tuple(s for i, s in enumerate(inferred_strided.strides) if i not in (dropped or ()))
    if dropped is None or kept != candidate.strides:
        report_result(
            ctx,
            op,
            result,
            f"{mismatch}: the slice has strides {_fmt_list(inferred_strided.strides)}, the "
            f"declared layout {_fmt_list(candidate.strides)}",
            expected=reduced,
        )
        return False
    return True


def _rank_reduced(inferred: MemRefType, strided: Strided, view: MemRefType) -> MemRefType | None:
    """The inferred type with the unit dimensions the declared type drops dropped too."""
    assert inferred.shape is not None and view.shape is not None
    dropped = _rank_reduction(inferred.shape, view.shape)
    if dropped is None:
        return None
    strides = tuple(s for i, s in enumerate(strided.strides) if i not in dropped)
    return strided_type(view.shape, inferred, Strided(strides, strided.offset))


def _check_bounds(
    ctx: CheckContext, base: MemRefType, lists: tuple[IndexList, IndexList, IndexList]
) -> None:
    assert base.shape is not None
    offsets, sizes, strides = lists
    for dim, size_of_dim in enumerate(base.shape):
        if size_of_dim is None:
            continue
        start, size, stride = (listed.entries[dim] for listed in lists)
        if start.value is not None and start.value >= size_of_dim:
            ctx.report(
                SLICE_BOUNDS,
                start.span,
                f"offset {dim} is out-of-bounds: {start.value} >= {size_of_dim}: dimension "
                f"{dim} of the source has {size_of_dim} elements",
            )
            return
        if start.value is None or size.value is None or stride.value is None:
            continue
        last = start.value + (size.value - 1) * stride.value
        if last >= size_of_dim:
            ctx.report(
                SLICE_BOUNDS,
                Span(start.span.start_byte, stride.span.end_byte)
                if start.span != stride.span
                else start.span,
                f"slice along dimension {dim} runs out-of-bounds: {last} >= {size_of_dim}: "
                f"its last element is at {start.value} + ({size.value} - 1) * {stride.value}",
            )
            return


# -- memref.reinterpret_cast -----------------------------------------------------------


@op_rule("memref.reinterpret_cast")
def reinterpret_cast(op: Operation, ctx: CheckContext) -> None:
    source, result = declared_source(op), declared_result(op)
    view = result.memref
    lists = _slice_lists(op)
    if view is None or view.shape is None or not isinstance(source.type, MemRefType) or not lists:
        return
    layout = layout_of(view, ctx.module.aliases)
    if layout.known and layout.strided is None:
        report_result(
            ctx,
            op,
            result,
            f"'memref.reinterpret_cast' op result #0 must be strided memref of any type values, "
            f"but got '{view}'",
            LAYOUT,
        )
        return
    rank = len(view.shape)
    if not _check_lists(ctx, lists, (1, rank, rank), f"the result has rank {rank}"):
        return
    base = source.type
    if base.memory_space != view.memory_space:
        report_result(
            ctx,
            op,
            result,
            f"different memory spaces specified for source type '{base}' and result memref "
            f"type '{view}': the cast stays in the memory space of its source",
        )
        return
    if base.element != view.element:
        report_result(
            ctx,
            op,
            result,
            f"different element types specified for source type '{base}' and result memref "
            f"type '{view}': the cast keeps the element type",
        )
        return
    offsets, sizes, strides = (listed.static() for listed in lists)
    computed = strided_type(sizes, view, Strided(strides, offsets[0]))
    for dim, (declared, wanted) in enumerate(zip(view.shape, sizes, strict=True)):
        if declared is not None and declared != wanted:
            message = _expected_with("size", wanted, declared, dim)
            report_result(ctx, op, result, message, expected=computed)
            return
    if not layout.known or layout.strided is None:
        return
    if layout.strided.offset is not None and layout.strided.offset != offsets[0]:
        message = _expected_with("offset", offsets[0], layout.strided.offset)
        report_result(ctx, op, result, message, expected=computed)
        return
    for dim, (declared, wanted) in enumerate(zip(layout.strided.strides, strides, strict=True)):
        if declared is not None and declared != wanted:
            message = _expected_with("stride", wanted, declared, dim)
            report_result(ctx, op, result, message, expected=computed)
            return


def _expected_with(what: str, wanted: int | None, declared: int, dim: int | None = None) -> str:
    given = "dynamic" if wanted is None else str(wanted)
    where = f" in dim = {dim}" if dim is not None else ""
    return (
        f"expected result type with {what} = {given} instead of {declared}{where}: the "
        f"{what}{'s' if dim is not None else ''} given to the op and the declared type disagree"
    )


# -- memref.view -----------------------------------------------------------------------


@op_rule("memref.view")
def view(op: Operation, ctx: CheckContext) -> None:
    if is_generic(op):
        return  # not modelled
    source, result = declared_source(op), declared_result(op)
    base, viewed = source.memref, result.memref
    if base is None or viewed is None or viewed.shape is None:
        return
    base_layout = layout_of(base, ctx.module.aliases)
    if base_layout.known and not base_layout.is_identity:
        span, related = source_anchor(op, source)
        ctx.report(
            LAYOUT,
            span,
            f"unsupported map for base memref type '{base}': memref.view needs a contiguous "
            "buffer (no layout)",
            related=related,
        )
        return
    view_layout = layout_of(viewed, ctx.module.aliases)
    if view_layout.known and not view_layout.is_identity:
        report_result(
            ctx,
            op,
            result,
            f"unsupported map for result memref type '{viewed}': a view is contiguous (no layout)",
            LAYOUT,
        )
        return
    if base.memory_space != viewed.memory_space:
        report_result(
            ctx,
            op,
            result,
            f"different memory spaces specified for base memref type '{base}' and view memref "
            f"type '{viewed}': a view stays in the memory space of its buffer",
        )
        return
    body = body_node(op)
    sizes_node = body.child_by_field_id(FIELD["sizes"]) if body is not None else None
    sizes = [c for c in sizes_node.named_children if c.type == "value_use"] if sizes_node else []
    expected = viewed.dynamic_dims
    if len(sizes) != expected:
        span = (
            Span(sizes[expected].start_byte, sizes[-1].end_byte)
            if len(sizes) > expected
            else Span.of(sizes_node)
            if sizes_node is not None
            else result.span or op.name_span
        )
        ctx.report(
            DYNAMIC_SIZES,
            span,
            f"incorrect number of dynamic sizes, has {len(sizes)}, expected {expected}: one "
            f"size operand for each '?' of {viewed}",
        )


# -- memref.transpose ------------------------------------------------------------------


def _permutation(op: Operation, ctx: CheckContext) -> tuple[AffineMap, Span] | None:
    body = body_node(op)
    node = body.child_by_field_id(FIELD["permutation"]) if body is not None else None
    if node is None or node.has_error:
        return None
    if node.type == "attribute_alias":
        alias = ctx.module.aliases.get(text(node))
        return (alias.map, Span.of(node)) if alias is not None and alias.map is not None else None
    return map_from_node(node), Span.of(node)


def _is_permutation(affine_map: AffineMap) -> bool:
    if affine_map.num_symbols or affine_map.num_dims != len(affine_map.results):
        return False
    positions = [r.position for r in affine_map.results if isinstance(r, AffineDim)]
    return sorted(positions) == list(range(affine_map.num_dims))


@op_rule("memref.transpose")
def transpose(op: Operation, ctx: CheckContext) -> None:
    if is_generic(op):
        return  # not modelled
    found = _permutation(op, ctx)
    source, result = declared_source(op), declared_result(op)
    base, transposed = source.memref, result.memref
    if found is None or base is None or transposed is None or base.shape is None:
        return
    permutation, span = found
    if not _is_permutation(permutation):
        ctx.report(
            PERMUTATION,
            span,
            f"expected a permutation map: {permutation} must list each of its dimensions once, "
            "without symbols",
        )
        return
    if permutation.num_dims != len(base.shape):
        ctx.report(
            PERMUTATION,
            span,
            f"expected a permutation map of same rank as the input: the map has "
            f"{plural(permutation.num_dims, 'dimension')}, {base} has rank {len(base.shape)}",
        )
        return
    base_layout = layout_of(base, ctx.module.aliases)
    if base_layout.strided is None or transposed.shape is None:
        return
    order = [r.position for r in permutation.results if isinstance(r, AffineDim)]
    shape = tuple(base.shape[d] for d in order)
    strides = tuple(base_layout.strided.strides[d] for d in order)
    expected = strided_type(shape, base, Strided(strides, base_layout.strided.offset))
    declared_layout = layout_of(transposed, ctx.module.aliases)
    if not declared_layout.known:
        return
    same = (
        transposed.shape == expected.shape
        and transposed.element == expected.element
        and transposed.memory_space == expected.memory_space
        and _canonical_layout(declared_layout, transposed.shape)
        == _canonical_layout(layout_of(expected, {}), shape)
    )
    if not same:
        report_result(
            ctx,
            op,
            result,
            f"result type '{transposed}' is not equivalent to the canonical transposed input "
            f"type '{expected}': the result has the source's sizes and strides, permuted",
            expected=expected,
        )


def _canonical_layout(layout: Layout, shape: tuple[int | None, ...]) -> object:
    """A layout in a form where equal means MLIR's canonicalizeStridedLayout() gives the
    same type: the identity, or the linear form of its single-result map."""
    if layout.is_identity:
        return "identity"
    if layout.kind == "map":
        assert layout.map is not None
        form = linear_form(layout.map.results[0]) if len(layout.map.results) == 1 else None
        if form is None:
            return ("map", layout.map)
    elif layout.strided is not None:
        form = _strided_form(layout.strided)
    else:
        return ("unknown", id(layout))
    return (
        "identity"
        if form == _strided_form(Strided(canonical_strides(shape), 0), True)
        else (
            "linear",
            _freeze(form),
        )
    )


def _strided_form(strided: Strided, poison_inner_first: bool = False) -> dict:
    """The linear form of a strided layout's map: dynamic offset and strides become
    symbols (offset first, then strides; for the canonical row-major layout, symbols
    are numbered from the innermost dynamic stride outwards, as MLIR builds it)."""
    form: dict = {}
    symbol = 0
    if strided.offset is None:
        form[None] = {(symbol,): 1}
        symbol += 1
    elif strided.offset:
        form[None] = {(): strided.offset}
    dims = range(len(strided.strides))
    for dim in reversed(dims) if poison_inner_first else dims:
        stride = strided.strides[dim]
        if stride is None:
            form[dim] = {(symbol,): 1}
            symbol += 1
        elif stride:
            form[dim] = {(): stride}
    return form


def _freeze(form: dict) -> frozenset:
    return frozenset((key, frozenset(poly.items())) for key, poly in form.items())


# -- memref.cast -------------------------------------------------------------------------


@op_rule("memref.cast")
def cast(op: Operation, ctx: CheckContext) -> None:
    source, result = declared_source(op), declared_result(op)
    a, b = source.memref, result.memref
    if a is None or b is None:
        return
    reason = _cast_incompatibility(a, b, ctx)
    if reason:
        report_result(
            ctx,
            op,
            result,
            f"operand type '{a}' and result type '{b}' are cast incompatible: {reason}",
            CAST,
        )


def _cast_incompatibility(a: MemRefType, b: MemRefType, ctx: CheckContext) -> str:
    """Why MLIR's CastOp::areCastCompatible refuses the pair ('' if it accepts it or we
    cannot tell)."""
    if a.shape is None and b.shape is None:
        return "a cast from an unranked memref to an unranked memref is not supported"
    if a.element != b.element:
        return f"the element types differ ({a.element} vs {b.element})"
    if a.memory_space != b.memory_space:
        return "the memory spaces differ"
    if a.shape is None or b.shape is None:
        return ""
    if a.layout != b.layout:
        layout_a, layout_b = layout_of(a, ctx.module.aliases), layout_of(b, ctx.module.aliases)
        if layout_a is UNKNOWN or layout_b is UNKNOWN:
            return ""
        if layout_a.strided is None or layout_b.strided is None:
            return "a layout without strides can only be cast to the same layout"
        sa, sb = layout_a.strided, layout_b.strided
        if len(sa.strides) != len(sb.strides):
            return "the ranks differ"
        if not _compatible(sa.offset, sb.offset):
            return f"the offsets differ ({_fmt(sa.offset)} vs {_fmt(sb.offset)})"
        for dim, (x, y) in enumerate(zip(sa.strides, sb.strides, strict=True)):
            if not _compatible(x, y):
                return f"the strides of dimension {dim} differ ({_fmt(x)} vs {_fmt(y)})"
    if len(a.shape) != len(b.shape):
        return f"the ranks differ ({len(a.shape)} vs {len(b.shape)})"
    for dim, (x, y) in enumerate(zip(a.shape, b.shape, strict=True)):
        if x is not None and y is not None and x != y:
            return f"the sizes of dimension {dim} differ ({x} vs {y})"
    return ""


def _compatible(a: int | None, b: int | None) -> bool:
    return a is None or b is None or a == b
