"""Counts that must agree: map/set inputs vs operands, results, subscripts vs
memref rank, basis sizes, affine.parallel groups, stored value vs element type."""

from __future__ import annotations

from collections.abc import Callable

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Related, Severity
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import (
    body_node,
    field_span,
    is_generic,
    join,
    node_at,
    op_rule,
    plural,
)
from affine_lsp.checks.rules.rebind import split_again
from affine_lsp.ir import (
    AffineAccessOp,
    AffineApplyOp,
    AffineBound,
    AffineDmaOp,
    AffineForOp,
    AffineIfOp,
    AffineMap,
    AffineParallelOp,
    IndexBasisOp,
    IntegerSet,
    MapRef,
    MemRefType,
    Operation,
    Subscripts,
    Type,
    Use,
    VectorType,
    element_type,
)
from affine_lsp.syntax import FIELD, Node, Span

OPERAND_COUNT = register(
    "affine-operand-count",
    "the number of dimension/symbol operands differs from the map's or set's inputs",
    "arity",
)
MAP_KIND = register(
    "affine-map-kind",
    "an integer set is given where an affine map is expected, or the other way round",
    "arity",
)
APPLY_RESULTS = register(
    "affine-apply-results", "the map of affine.apply must have exactly one result", "arity"
)
BOUND_MINMAX = register(
    "affine-bound-minmax",
    "a loop bound map with several results needs `max` (lower) or `min` (upper)",
    "arity",
)
BOUND_EMPTY = register(
    "affine-bound-empty", "a loop bound map must have at least one result", "arity"
)
SUBSCRIPT_COUNT = register(
    "affine-subscript-count", "the number of subscripts differs from the memref's rank", "arity"
)
STORE_TYPE = register(
    "affine-store-type", "the stored value's type differs from the memref element type", "types"
)
VECTOR_ELEMENT = register(
    "affine-vector-element-type",
    "affine.vector_load/store: memref and vector element types differ",
    "types",
)
BASIS_COUNT = register(
    "affine-basis-count",
    "delinearize/linearize_index: result or index count does not fit the basis",
    "arity",
)
DMA_SUBSCRIPT_COUNT = register(
    "lint-dma-subscript-count",
    "affine.dma_start/dma_wait: the number of subscripts differs from the memref's rank (valid "
    "MLIR 22, but lowering rejects it)",
    "lint",
    Severity.WARNING,
    mlir_checks=False,
)
PARALLEL_COUNTS = register(
    "affine-parallel-counts",
    "affine.parallel: induction variables, bound groups and steps differ in number",
    "arity",
)
PARALLEL_REDUCTIONS = register(
    "affine-parallel-reductions",
    "affine.parallel: one valid reduction kind is needed per result",
    "arity",
)

REDUCTION_KINDS = frozenset(
    {
        "addf", "addi", "assign", "maximumf", "maxnumf", "maxs", "maxu", "minimumf", "minnumf",
        "mins", "minu", "mulf", "muli", "ori", "andi", "xori",
    }
)  # fmt: skip


def _inputs(count_dims: int, count_symbols: int) -> str:
    return f"{plural(count_dims, 'dimension')} and {plural(count_symbols, 'symbol')}"


def _list_spans(holder: Node | None) -> tuple[Span | None, Span | None]:
    """(dims list, symbols list) spans of a node with an `operands` field."""
    operands = holder.child_by_field_id(FIELD["operands"]) if holder is not None else None
    if operands is None:
        return None, None
    dims = operands.child_by_field_id(FIELD["dims"])
    symbols = operands.child_by_field_id(FIELD["symbols"])
    return (Span.of(dims) if dims else None, Span.of(symbols) if symbols else None)


def _mismatch_span(uses: list[Use], expected: int, list_span: Span | None, fallback: Span) -> Span:
    """The surplus operands, or the operand list when operands are missing."""
    if len(uses) > expected:
        return join([u.span for u in uses[expected:]])
    return list_span or fallback


def _related_map(ctx: CheckContext, ref: MapRef | None, what: str) -> tuple[Related, ...]:
    if ref is None or ref.alias is None:
        return ()
    span = ctx.definition_of(ref)
    return (Related(span, f"{ref.alias} is defined here: {what}"),) if span else ()


def _expect_map(ctx: CheckContext, ref: MapRef | None) -> AffineMap | None:
    resolved = ctx.resolve(ref)
    if isinstance(resolved, IntegerSet) and ref is not None:
        ctx.report(
            MAP_KIND,
            ref.span,
            f"expected an affine map, but {ref.alias or 'this'} is an integer set",
            related=_related_map(ctx, ref, "an integer set"),
        )
        return None
    return resolved if isinstance(resolved, AffineMap) else None


def _check_counts(
    ctx: CheckContext,
    user: Operation,
    ref: MapRef | None,
    inputs: AffineMap | IntegerSet,
    dims: list[Use],
    symbols: list[Use],
    list_spans: Callable[[], tuple[Span | None, Span | None]],
    fallback: Span,
    messages: tuple[str, str],
) -> None:
    """Report dim and symbol operand counts that differ from the map's or set's inputs
    (`list_spans()`: the spans of the dims and symbols lists, looked up only then)."""
    if len(dims) == inputs.num_dims and len(symbols) == inputs.num_symbols:
        return
    spans = list_spans()
    what = "set" if isinstance(inputs, IntegerSet) else "map"
    declared = _inputs(inputs.num_dims, inputs.num_symbols)
    given = f"{plural(len(dims), 'dimension operand')} and {plural(len(symbols), 'symbol operand')}"
    related = _related_map(ctx, ref, f"a {what} of {declared}")
    fixes = split_again(ctx, user, inputs, dims, symbols, spans)
    if len(dims) != inputs.num_dims:
        ctx.report(
            OPERAND_COUNT,
            _mismatch_span(dims, inputs.num_dims, spans[0], fallback),
            f"{messages[0]}: the {what} has {declared}, but {given} are bound",
            related=related,
            fixes=fixes,
        )
    if len(symbols) != inputs.num_symbols:
        symbols_span = spans[1] or spans[0]
        ctx.report(
            OPERAND_COUNT,
            _mismatch_span(symbols, inputs.num_symbols, symbols_span, fallback),
            f"{messages[1]}: the {what} has {declared}, but {given} are bound",
            related=related,
            fixes=fixes,
        )


def _check_generic_count(
    ctx: CheckContext,
    op: Operation,
    ref: MapRef | None,
    inputs: AffineMap | IntegerSet,
    given: list[Use],
    message: str,
) -> None:
    """The generic form lists a map's operands in one list: its length must be the
    number of the map's (or set's) dimensions and symbols."""
    expected = inputs.num_dims + inputs.num_symbols
    if len(given) == expected:
        return
    what = "set" if isinstance(inputs, IntegerSet) else "map"
    declared = _inputs(inputs.num_dims, inputs.num_symbols)
    ctx.report(
        OPERAND_COUNT,
        _mismatch_span(given, expected, field_span(op, "operands"), op.name_span),
        f"{message}: the {what} has {declared}, but {plural(len(given), 'operand')} "
        f"{'is' if len(given) == 1 else 'are'} given",
        related=_related_map(ctx, ref, f"a {what} of {declared}"),
    )


@op_rule("affine.apply", "affine.min", "affine.max")
def apply_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineApplyOp):
        return  # not modelled
    affine_map = _expect_map(ctx, op.map_ref)
    if affine_map is None or op.map_ref is None:
        return
    verifier_message = "operand count and affine map dimension and symbol count must match"
    if is_generic(op):
        _check_generic_count(ctx, op, op.map_ref, affine_map, op.operands, verifier_message)
    else:
        parser_message = "dimension or symbol index mismatch"
        messages = (parser_message if op.name == "affine.apply" else verifier_message,) * 2
        _check_counts(
            ctx,
            op,
            op.map_ref,
            affine_map,
            op.dims,
            op.symbols,
            lambda: _list_spans(body_node(op)),
            op.name_span,
            messages,
        )
    if op.name == "affine.apply" and len(affine_map.results) != 1:
        ctx.report(
            APPLY_RESULTS,
            op.map_ref.span,
            "mapping must produce one value: the map has "
            f"{plural(len(affine_map.results), 'result')}"
            "; use affine.min/affine.max to combine several",
            related=_related_map(ctx, op.map_ref, f"{len(affine_map.results)} results"),
        )
    if op.name != "affine.apply" and not affine_map.results:
        ctx.report(APPLY_RESULTS, op.map_ref.span, f"{op.name} needs a map with results")


def _check_bound(ctx: CheckContext, op: AffineForOp, bound: AffineBound, lower: bool) -> None:
    if bound.map_ref is None:
        return
    affine_map = _expect_map(ctx, bound.map_ref)
    if affine_map is None:
        return
    _check_counts(
        ctx,
        op,
        bound.map_ref,
        affine_map,
        bound.dims,
        bound.symbols,
        lambda: _list_spans(node_at(op, bound.span)),
        bound.span,
        (
            "dim operand count and affine map dim count must match",
            "symbol operand count and affine map symbol count must match",
        ),
    )
    which = "lower" if lower else "upper"
    if not affine_map.results:
        ctx.report(
            BOUND_EMPTY,
            bound.map_ref.span,
            f"expected {which} bound map to have at least one result",
        )
    elif len(affine_map.results) > 1 and not bound.minmax:
        prefix = "max" if lower else "min"
        ctx.report(
            BOUND_MINMAX,
            bound.map_ref.span,
            f"{which} loop bound affine map with multiple results requires '{prefix}' prefix: "
            f"the loop runs from the {prefix}imum of the results",
            related=_related_map(ctx, bound.map_ref, f"{len(affine_map.results)} results"),
        )


@op_rule("affine.for")
def for_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp) or is_generic(op):
        return  # not modelled; MLIR checks these counts and prefixes only when parsing
    if op.lower is not None:
        _check_bound(ctx, op, op.lower, True)
    if op.upper is not None:
        _check_bound(ctx, op, op.upper, False)


@op_rule("affine.if")
def if_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineIfOp):
        return  # not modelled
    resolved = ctx.resolve(op.condition)
    if op.condition is None or resolved is None:
        return
    if isinstance(resolved, AffineMap):
        ctx.report(
            MAP_KIND,
            op.condition.span,
            f"expected an integer set, but {op.condition.alias or 'this'} is an affine map",
            related=_related_map(ctx, op.condition, "an affine map"),
        )
        return
    if is_generic(op):
        message = "operand count and condition integer set dimension and symbol count must match"
        _check_generic_count(ctx, op, op.condition, resolved, op.operands, message)
        return
    _check_counts(
        ctx,
        op,
        op.condition,
        resolved,
        op.dims,
        op.symbols,
        lambda: _list_spans(body_node(op)),
        op.condition.span,
        (
            "dim operand count and integer set dim count must match",
            "symbol operand count and integer set symbol count must match",
        ),
    )


def _memref_rank_check(
    ctx: CheckContext,
    subscripts: Subscripts,
    memref_type: Type | None,
    message: str,
    type_span: Span | None,
    code: str = SUBSCRIPT_COUNT,
) -> None:
    if not isinstance(memref_type, MemRefType) or memref_type.rank is None:
        return
    count = len(subscripts.map.results)
    if count == memref_type.rank:
        return
    if count > memref_type.rank:
        span = join(subscripts.result_spans[memref_type.rank :])
    else:
        span = subscripts.span
    related = (
        (Related(type_span, f"{memref_type} has rank {memref_type.rank}"),) if type_span else ()
    )
    ctx.report(
        code,
        span,
        f"{message}: {plural(count, 'subscript')} for a memref of rank {memref_type.rank}",
        related=related,
    )


@op_rule(
    "affine.load", "affine.store", "affine.vector_load", "affine.vector_store", "affine.prefetch"
)
def access_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineAccessOp):
        return  # not modelled
    subscripts = op.subscripts
    if is_generic(op) and subscripts is not None:
        inputs = subscripts.map.num_dims + subscripts.map.num_symbols
        indices = subscripts.dims + subscripts.symbols
        if len(indices) != inputs:
            ctx.report(
                OPERAND_COUNT,
                _mismatch_span(indices, inputs, None, subscripts.span),
                "expects as many subscripts as affine map inputs: the map has "
                f"{_inputs(subscripts.map.num_dims, subscripts.map.num_symbols)}, but "
                f"{plural(len(indices), 'subscript operand')} "
                f"{'is' if len(indices) == 1 else 'are'} given",
                related=_related_map(ctx, op.map_ref, f"a map of {plural(inputs, 'input')}"),
            )
    if op.subscripts is not None:
        _memref_rank_check(
            ctx,
            op.subscripts,
            op.memref_type,
            "affine map num results must equal memref rank",
            op.memref_type_span,
        )
    memref_type = op.memref_type
    element = element_type(memref_type)
    if op.name == "affine.store" and op.stored_value is not None and element is not None:
        value = op.stored_value.value
        if value is not None and value.type is not None and value.type != element:
            ctx.report(
                STORE_TYPE,
                op.stored_value.span,
                f"value to store must have the same type as memref element type: "
                f"{value.display_name} is {value.type}, the element type of {memref_type} is "
                f"{element}",
                related=(Related(value.span, f"{value.display_name} is defined here"),),
            )
    if op.name in ("affine.vector_load", "affine.vector_store") and element is not None:
        vector = op.vector_type
        if isinstance(vector, VectorType) and (
            isinstance(element, VectorType) or vector.element != element
        ):
            ctx.report(
                VECTOR_ELEMENT,
                field_span(op, "vector_type") or op.name_span,
                f"requires memref and vector types of the same elemental type: {memref_type} "
                f"holds {element}, {vector} holds {vector.element}",
            )


@op_rule("affine.dma_start", "affine.dma_wait")
def dma_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineDmaOp) or not ctx.options.lints:
        return  # not modelled, or lints are off
    types = op.memref_types
    for position, (_, subscripts, role) in enumerate(op.accesses):
        memref_type = types[position] if position < len(types) else None
        _memref_rank_check(
            ctx,
            subscripts,
            memref_type,
            f"the number of {role} subscripts should equal the {role} memref's rank (MLIR 22 "
            "accepts it, but lowering it (--lower-affine) fails)",
            op.types_span,
            DMA_SUBSCRIPT_COUNT,
        )


@op_rule("affine.delinearize_index", "affine.linearize_index")
def basis_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, IndexBasisOp):
        return  # not modelled
    if is_generic(op) and op.basis_span is None:
        return  # no static_basis: affine-required-attribute reports it
    basis = len(op.basis)
    span = op.basis_span or op.name_span
    if op.name == "affine.delinearize_index":
        results = len(op.results) or len(op.result_types)
        if results not in (basis, basis + 1):
            ctx.report(
                BASIS_COUNT,
                field_span(op, "types") or span,
                "should return an index for each basis element and up to one extra index: "
                f"{plural(results, 'result')} for a basis of {plural(basis, 'element')}",
            )
    else:
        indices = len(op.indices)
        if basis not in (indices, indices - 1):
            ctx.report(
                BASIS_COUNT,
                span,
                "should be passed a basis element for each index except possibly the first: "
                f"{plural(indices, 'index')} with a basis of {plural(basis, 'element')}",
            )


@op_rule("affine.parallel")
def parallel_counts(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineParallelOp):
        return  # not modelled
    ivs = len(op.induction_variables)
    lower, upper = len(op.lower), len(op.upper)
    steps = len(op.steps) if op.steps_span is not None else ivs
    if not (ivs == lower == upper == steps):
        counts = [(lower, op.lower_span), (upper, op.upper_span), (steps, op.steps_span)]
        span = next((s for count, s in counts if count != ivs and s is not None), None)
        ivs_span = field_span(op, "induction_variables")
        ctx.report(
            PARALLEL_COUNTS,
            span or ivs_span or op.name_span,
            f"the number of region arguments ({ivs}) and the number of map groups for lower "
            f"({lower}) and upper bound ({upper}), and the number of steps ({steps}) must all "
            "match",
        )
    results = len(op.result_types)
    reductions_span = op.reductions_span or op.name_span
    if len(op.reductions) != results:
        ctx.report(
            PARALLEL_REDUCTIONS,
            op.reductions_span or field_span(op, "result_types") or op.name_span,
            f"reduction must be specified for each output: {plural(results, 'result')} but "
            f"{plural(len(op.reductions), 'reduction')}",
        )
    for kind in op.reductions:
        if kind not in REDUCTION_KINDS:
            ctx.report(
                PARALLEL_REDUCTIONS,
                reductions_span,
                f'invalid reduction value: "{kind}"; expected one of '
                + ", ".join(sorted(REDUCTION_KINDS)),
            )
