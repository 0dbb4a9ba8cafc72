"""Regions, terminators and loop headers: affine.yield vs its parent, affine.if
with results, region arguments, iter_args vs results, positive steps."""

from __future__ import annotations

import re

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Related, Severity, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import (
    body_node,
    field_span,
    generic_op_rule,
    is_generic,
    item_rule,
    node_at,
    op_rule,
    plural,
)
from affine_lsp.ir import (
    TERMINATORS,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    IndexType,
    Operation,
    Region,
    TopLevelItem,
    attribute_entries,
)
from affine_lsp.syntax import Span, text

YIELD_COUNT = register(
    "affine-yield-count",
    "affine.yield has a different number of operands than its parent has results",
    "structure",
)
YIELD_TYPE = register(
    "affine-yield-type",
    "an affine.yield operand's type differs from its parent's result",
    "structure",
)
IF_YIELD = register(
    "affine-if-yield-missing",
    "an affine.if with results must end both of its regions with an affine.yield of values",
    "structure",
)
REGION_ARGUMENTS = register(
    "affine-region-arguments", "the regions of affine.if take no arguments", "structure"
)
REGION_COUNT = register(
    "affine-if-region-count",
    "affine.if in the generic form has two regions (then, else; the else region may be empty)",
    "structure",
)
INDUCTION_VARIABLE = register(
    "affine-induction-variable-type",
    "the body of affine.for in the generic form starts with an index argument, the induction "
    "variable",
    "structure",
)
ITER_ARGS_COUNT = register(
    "affine-iter-args-count",
    "affine.for: the number of iter_args differs from the number of results",
    "structure",
)
REQUIRED_ATTRIBUTE = register(
    "affine-required-attribute",
    "an affine op in the generic form lacks an attribute it requires (`map` of affine.apply/"
    "load/store, `condition` of affine.if, the bounds and step of affine.for, ...)",
    "structure",
)
STEP = register(
    "affine-step-not-positive",
    "affine.for in the custom form: a negative step, or one that is not an integer (a step of 0 "
    "is the lint lint-step-not-positive)",
    "structure",
)
STEP_LINT = register(
    "lint-step-not-positive",
    "a step of 0 (affine.for, affine.parallel), or a negative one (affine.parallel, affine.for "
    "in the generic form): valid MLIR 22, but the loop never advances and lowering rejects it",
    "lint",
    Severity.WARNING,
    mlir_checks=False,
)

TERMINATOR_LAST = register(
    "terminator-not-last",
    "an op with the Terminator trait (affine.yield, func.return, cf.br, ..., or one a project "
    "file declares) is followed by other ops in its block",
    "structure",
)

_YIELD_PARENTS = ("affine.for", "affine.if", "affine.parallel")


@op_rule(*TERMINATORS)
def terminator_last(op: Operation, ctx: CheckContext) -> None:
    if op.name in ctx.options.dialects.terminators:  # (a project file may say otherwise)
        _terminator_last(op, ctx)


@item_rule
def declared_terminators_last(item: TopLevelItem, ctx: CheckContext) -> None:
    """The same for the terminators a project file declares (only with one)."""
    terminators = ctx.options.dialects.terminators
    if terminators is TERMINATORS or item.operation is None:
        return
    declared = terminators - TERMINATORS
    for op in item.operation.walk() if declared else ():
        if op.name in declared:
            _terminator_last(op, ctx)


def _terminator_last(op: Operation, ctx: CheckContext) -> None:
    block = op.parent_block
    if block is None or block.operations[-1] is op:
        return
    following = block.operations[block.operations.index(op) + 1]
    if any(o.node is not None and o.node.has_error for o in (op, following)):
        return  # (a syntax error there already: what follows may be mis-read)
    ctx.report(
        TERMINATOR_LAST,
        op.name_span,
        f"'{op.name}' op must be the last operation in the parent block: a terminator ends "
        "its block, and ops after it would never run",
    )


@op_rule("affine.yield")
def yield_matches_parent(op: Operation, ctx: CheckContext) -> None:
    parent = op.parent_op
    if parent is None or parent.name not in _YIELD_PARENTS:
        return
    expected = parent.result_types
    if isinstance(parent, AffineForOp) and len(parent.iter_args) != len(expected):
        return  # affine-iter-args-count reports the loop itself
    if isinstance(parent, AffineForOp) and not expected:
        expected = [v.type for v, _ in parent.iter_args if v.type is not None]
    span = field_span(op, "operands") or op.name_span
    if len(op.operands) != len(expected):
        ctx.report(
            YIELD_COUNT,
            span,
            "parent of yield must have same number of results as the yield operands: "
            f"{describe(parent)} has {plural(len(expected), 'result')}, the yield has "
            f"{plural(len(op.operands), 'operand')}",
            related=(Related(parent.name_span, f"the parent {parent.name}"),),
        )
        return
    for use, wanted in zip(op.operands, expected, strict=True):
        value = use.value
        if value is None or value.type is None or wanted is None or value.type == wanted:
            continue
        ctx.report(
            YIELD_TYPE,
            use.span,
            f"types mismatch between yield op and its parent: {value.display_name} is "
            f"{value.type}, {describe(parent)} has a result of type {wanted}",
            related=(Related(parent.name_span, f"the parent {parent.name}"),),
        )


@op_rule("affine.for", "affine.parallel")
def implicit_yield(op: Operation, ctx: CheckContext) -> None:
    """A loop with results whose body does not end with an affine.yield: the custom
    form's parser ends it with one that yields nothing (the generic form adds none)."""
    if not isinstance(op, (AffineForOp, AffineParallelOp)) or not op.result_types:
        return
    if is_generic(op) or (
        isinstance(op, AffineForOp) and len(op.iter_args) != len(op.result_types)
    ):
        return  # (affine-iter-args-count reports the loop itself)
    body = op.regions[0] if op.regions else None
    if body is None or not body.blocks:
        return
    operations = body.blocks[-1].operations
    if operations and operations[-1].name == "affine.yield":
        return  # (yield_matches_parent compares it with the loop)
    ctx.report(
        YIELD_COUNT,
        op.name_span,
        "parent of yield must have same number of results as the yield operands: "
        f"the {op.name} has {plural(len(op.result_types), 'result')}, but its body ends "
        "without an affine.yield (the one MLIR adds yields nothing)",
        related=(Related(_closing_brace(body.span), "the body ends here"),),
    )


def describe(op: Operation) -> str:
    return f"the parent {op.name}"


def _yields_values(region: Region | None) -> bool:
    if region is None or not region.blocks or not region.blocks[-1].operations:
        return False
    last = region.blocks[-1].operations[-1]
    return last.name == "affine.yield" and bool(last.operands)


@op_rule("affine.if")
def if_regions(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineIfOp):
        return  # not modelled
    if is_generic(op) and len(op.regions) != 2:
        ctx.report(
            REGION_COUNT,
            field_span(op, "regions") or op.name_span,
            f"'affine.if' op expected 2 regions, but got {len(op.regions)}: the then region and "
            "an else region, which may be empty (`{}`)",
        )
    for index, region in enumerate(op.regions):
        for block in region.blocks[:1]:
            if block.arguments:
                ctx.report(
                    REGION_ARGUMENTS,
                    Span(block.span.start_byte, block.arguments[-1].span.end_byte),
                    f"'affine.if' op region #{index} should have no arguments",
                )
    if not op.result_types:
        return
    count = plural(len(op.result_types), "result")
    if op.else_region is None:
        ctx.report(
            IF_YIELD,
            op.then_region.span if op.then_region is not None else op.name_span,
            f"affine.if with {count} needs an else region that yields them too: without it "
            "there is nothing to return when the condition is false",
        )
    for name, region in (("then", op.then_region), ("else", op.else_region)):
        if region is not None and not _yields_values(region):
            ctx.report(
                IF_YIELD,
                _closing_brace(region.span),
                f"the {name} region of an affine.if with {count} must end with an explicit "
                "affine.yield of them",
            )


def _closing_brace(span: Span) -> Span:
    return Span(max(span.start_byte, span.end_byte - 1), span.end_byte)


@op_rule("affine.for")
def for_header(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineForOp):
        return  # not modelled
    if is_generic(op):
        _generic_induction_variable(op, ctx)
    if op.step_span is not None:
        _for_step(op, ctx)
    iter_args_span = field_span(op, "iter_args")
    if iter_args_span is not None or op.result_types:
        if len(op.iter_args) != len(op.result_types):
            ctx.report(
                ITER_ARGS_COUNT,
                field_span(op, "result_types") or iter_args_span or op.name_span,
                "mismatch between the number of loop-carried values and results: "
                f"{plural(len(op.iter_args), 'iter_args value')} but "
                f"{plural(len(op.result_types), 'result type')}",
            )


def _for_step(op: AffineForOp, ctx: CheckContext) -> None:
    """MLIR 22's custom parser takes a step of 0 or more; the verifier checks nothing."""
    assert op.step_span is not None
    generic = is_generic(op)
    # (the generic form's step is an attribute: `-2 : index` keeps its type)
    one = _TYPED_INTEGER.sub("1", _spelling(op, op.step_span), count=1) if generic else "1"
    fixes = (Fix("Use step 1", (TextEdit(op.step_span, one),), preferred=True),)
    if op.step is None or (op.step < 0 and not generic):
        if generic:
            return  # not an integer attribute: nothing we can say
        written = op.step if op.step is not None else _spelling(op, op.step_span)
        ctx.report(
            STEP,
            op.step_span,
            f"expected step to be representable as a positive signed integer, not {written}",
            fixes=fixes,
        )
    elif op.step <= 0 and ctx.options.lints:
        ctx.report(
            STEP_LINT,
            op.step_span,
            f"a step of {op.step} never brings the loop to its upper bound: MLIR 22 accepts "
            "it, but once entered the loop would run forever (lowered, an scf.for that never "
            "ends)",
            fixes=fixes,
        )


_TYPED_INTEGER = re.compile(r"^[-+]?(0x[0-9a-fA-F]+|[0-9]+)")


def _spelling(op: Operation, span: Span) -> str:
    node = node_at(op, span)
    return text(node) if node is not None else "this"


def _generic_induction_variable(op: AffineForOp, ctx: CheckContext) -> None:
    iv = op.induction_variable
    if iv is not None and (iv.type is None or isinstance(iv.type, IndexType)):
        return
    where = f"{iv.display_name} has type {iv.type}" if iv is not None else "the body has none"
    ctx.report(
        INDUCTION_VARIABLE,
        iv.span if iv is not None else field_span(op, "regions") or op.name_span,
        f"expected body to have a single index argument for the induction variable: {where}",
    )


@op_rule("affine.parallel")
def parallel_steps(op: Operation, ctx: CheckContext) -> None:
    if not isinstance(op, AffineParallelOp):
        return  # not modelled
    wrong = [step for step in op.steps if step <= 0]
    if op.steps_span is not None and wrong and ctx.options.lints:
        ctx.report(
            STEP_LINT,
            op.steps_span,
            f"a step of {wrong[0]} never brings affine.parallel to its upper bound: MLIR 22 "
            "accepts it, but lowering it (--lower-affine) fails: scf.parallel requires "
            "positive steps",
        )


# The attributes the generic form of each affine op must give (MLIR 22's ODS
# definitions; MLIR reports the first missing one in this alphabetical order).
REQUIRED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "affine.apply": ("map",),
    "affine.min": ("map",),
    "affine.max": ("map",),
    "affine.load": ("map",),
    "affine.store": ("map",),
    "affine.vector_load": ("map",),
    "affine.vector_store": ("map",),
    "affine.prefetch": ("isDataCache", "isWrite", "localityHint", "map"),
    "affine.for": ("lowerBoundMap", "step", "upperBoundMap"),
    "affine.if": ("condition",),
    "affine.parallel": (
        "lowerBoundsGroups",
        "lowerBoundsMap",
        "reductions",
        "steps",
        "upperBoundsGroups",
        "upperBoundsMap",
    ),
    "affine.delinearize_index": ("static_basis",),
}


@generic_op_rule
def required_attributes(op: Operation, ctx: CheckContext) -> None:
    required = REQUIRED_ATTRIBUTES.get(op.name)
    if required is None:
        return
    given = attribute_entries(body_node(op))
    missing = [name for name in required if name not in given]
    if not missing:
        return
    more = f" (and {', '.join(repr(m) for m in missing[1:])})" if len(missing) > 1 else ""
    them = "them" if missing[1:] else "it"
    ctx.report(
        REQUIRED_ATTRIBUTE,
        op.name_span,
        f"requires attribute '{missing[0]}'{more}: the generic form of {op.name} must give "
        f"{them} among its properties `<{{...}}>` or attributes `{{...}}`",
    )
