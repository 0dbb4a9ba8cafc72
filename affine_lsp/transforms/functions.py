"""Functions as the transformations see them: whether one has errors, a rewritten
one parsed back and verified, which values its rewritten bounds may use as symbols.
Shared by fusion and the loop transformations. Both judge with the dialects the
model was built with (`ModuleModel.dialects`: the document's project file's)."""

from __future__ import annotations

from affine_lsp.checks import CheckOptions, ModuleContext, Severity, check_item
from affine_lsp.ir import (
    FuncOp,
    ModuleModel,
    TopLevelItem,
    Value,
    build_operation_item,
    module_scope_of,
)
from affine_lsp.poly import NotAffine
from affine_lsp.syntax import SourceDocument, syntax_problems


def has_errors(document: SourceDocument, model: ModuleModel, function: FuncOp) -> bool:
    """Syntax or verifier errors inside the function (with the model's dialects)."""
    span = function.span
    if any(
        span.start_byte <= p.span.start_byte <= span.end_byte
        for p in syntax_problems(document.tree)
    ):
        return True
    item = _item_of(model, function)
    if item is None:
        return True
    context = ModuleContext.from_model(model)
    return any(
        d.severity == Severity.ERROR and span.start_byte <= d.span.start_byte <= span.end_byte
        for d in check_item(item, context, CheckOptions(dialects=model.dialects))
    )


def _item_of(model: ModuleModel, function: FuncOp) -> TopLevelItem | None:
    top = function
    while top.parent_op is not None:
        top = top.parent_op
    return next((item for item in model.items if item.operation is top), None)


def parse_function(data: bytes, function: FuncOp, model: ModuleModel) -> FuncOp:
    """Re-parse `data`, model the function that starts where `function` starts, and
    make sure the verifier finds no error in it (both with the model's dialects). The
    whole top-level item holding the function is modelled and checked (a function
    inside a `module { }` sees that module's globals), and errors inside the function
    count."""
    document = SourceDocument(data)
    start = function.span.start_byte
    node = document.tree.root_node.descendant_for_byte_range(start, start + 1)
    while node is not None and not (node.type == "operation" and node.start_byte == start):
        node = node.parent
    if node is None:
        raise NotAffine("the rewritten function could not be found")
    top = node
    while top.parent is not None and top.parent != document.tree.root_node:
        top = top.parent
    item = build_operation_item(top, module_scope_of(model.items), dialects=model.dialects)
    root = item.operation
    found = next((op for op in root.walk() if op.span.start_byte == start), None) if root else None
    if not isinstance(found, FuncOp):
        raise NotAffine("the rewritten function could not be found")
    problems = [
        p.message
        for p in syntax_problems(document.tree)
        if node.start_byte <= p.span.start_byte <= node.end_byte
    ]
    context = ModuleContext.from_model(model)
    options = CheckOptions(dialects=model.dialects)
    problems += [
        d.message
        for d in check_item(item, context, options)
        if d.severity == Severity.ERROR and node.start_byte <= d.span.start_byte <= node.end_byte
    ]
    if problems:
        raise NotAffine(f"the fused code does not verify: {problems[0]}")
    return found


def is_valid_symbol(value: Value) -> bool:
    """Function arguments and values defined at the function's top level."""
    if value.owner_block is not None:
        return isinstance(value.owner_block.parent_op, FuncOp)
    op = value.defining_op
    return op is not None and isinstance(op.parent_op, FuncOp)
