"""Build the semantic model from a syntax tree, one top-level item at a time.

Two iterative passes per item:
  1. structure (here): operations, regions, blocks, values and (unresolved) uses;
  2. names (`affine_lsp.ir.resolve`): every use is resolved against the scopes it
     can see, recording redefinitions, unresolved names and uses before definition.

Nothing here raises on broken input: whatever the tree has is modelled, the rest
is skipped.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager

from affine_lsp.ir.affine import AffineMap, IntegerSet
from affine_lsp.ir.affine_syntax import (
    expression_children,
    map_from_node,
    parse_integer,
    set_from_node,
)
from affine_lsp.ir.custom_forms import custom_result_types
from affine_lsp.ir.generic import GENERIC_CLASSES, specialise
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineApplyOp,
    AffineBound,
    AffineDmaOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    AffineYieldOp,
    AliasDef,
    Block,
    FuncOp,
    IndexBasisOp,
    MapRef,
    MemRefAccessOp,
    MemRefAllocOp,
    MemRefDimOp,
    ModuleModel,
    Operation,
    ParallelBound,
    Region,
    Subscripts,
    TopLevelItem,
    Use,
    Value,
)
from affine_lsp.ir.registry import (
    FUNC_DEFAULT_DIALECT,
    LEGACY_NAMES,
    UPSTREAM,
    Dialects,
    canonical_name,
)
from affine_lsp.ir.resolve import NameScope, declare, resolve_names
from affine_lsp.ir.subscripts import subscripts_from_exprs
from affine_lsp.ir.types import (
    INDEX,
    FunctionType,
    IntegerType,
    MemRefType,
    OpaqueType,
    Type,
    element_type,
    type_from_node,
    types_from_list,
)
from affine_lsp.syntax import FIELD, Node, Span, text

# Grammar field ids, read once: the builder asks for fields by the hundred thousand,
# and a module constant costs less than a lookup in `FIELD` each time.
_F_AFTER = FIELD["after"]
_F_ARGUMENT = FIELD["argument"]
_F_ARGUMENTS = FIELD["arguments"]
_F_ASYNC = FIELD["async"]
_F_BASIS = FIELD["basis"]
_F_BEFORE = FIELD["before"]
_F_BODY = FIELD["body"]
_F_CLAUSE = FIELD["clause"]
_F_CONDITION = FIELD["condition"]
_F_COUNT = FIELD["count"]
_F_DEPENDENCIES = FIELD["dependencies"]
_F_DIMS = FIELD["dims"]
_F_DISJOINT = FIELD["disjoint"]
_F_DYNAMIC_SIZES = FIELD["dynamic_sizes"]
_F_ELSE = FIELD["else"]
_F_EXPR = FIELD["expr"]
_F_ID = FIELD["id"]
_F_INDEX = FIELD["index"]
_F_INDICES = FIELD["indices"]
_F_INDUCTION_VARIABLE = FIELD["induction_variable"]
_F_INDUCTION_VARIABLES = FIELD["induction_variables"]
_F_INIT = FIELD["init"]
_F_ITER_ARGS = FIELD["iter_args"]
_F_KIND = FIELD["kind"]
_F_LABEL = FIELD["label"]
_F_LEGACY_TYPES = FIELD["legacy_types"]
_F_LINEAR_INDEX = FIELD["linear_index"]
_F_LOWER = FIELD["lower"]
_F_MAP = FIELD["map"]
_F_MAX = FIELD["max"]
_F_MEMREF = FIELD["memref"]
_F_MIN = FIELD["min"]
_F_NAME = FIELD["name"]
_F_OPERANDS = FIELD["operands"]
_F_REDUCTIONS = FIELD["reductions"]
_F_RESULT_TYPES = FIELD["result_types"]
_F_RESULTS = FIELD["results"]
_F_RW = FIELD["rw"]
_F_SHARED_MEMORY_SIZE = FIELD["shared_memory_size"]
_F_SHARED_OUT = FIELD["shared_out"]
_F_SHORTHAND = FIELD["shorthand"]
_F_SIZE = FIELD["size"]
_F_SOURCE = FIELD["source"]
_F_STEP = FIELD["step"]
_F_STEPS = FIELD["steps"]
_F_SUBSCRIPTS = FIELD["subscripts"]
_F_SYMBOL = FIELD["symbol"]
_F_SYMBOLS = FIELD["symbols"]
_F_THEN = FIELD["then"]
_F_TO = FIELD["to"]
_F_TYPE = FIELD["type"]
_F_TYPES = FIELD["types"]
_F_UPPER = FIELD["upper"]
_F_VALUE = FIELD["value"]
_F_VECTOR_TYPE = FIELD["vector_type"]
_F_VISIBILITY = FIELD["visibility"]

# -- pass 1: structure ----------------------------------------------------------------


class _ItemBuilder:
    """Builds the operations of one top-level item."""

    def __init__(
        self, aliases: Mapping[str, AliasDef] | None = None, item_node: Node | None = None
    ) -> None:
        # The item's text and where it starts: names are sliced out of it (a node's
        # `text` costs several times as much, and a model has names by the ten thousand).
        self._source: bytes = (item_node.text or b"") if item_node is not None else b""
        self._base: int = item_node.start_byte if item_node is not None else 0
        self.used_aliases: set[str] = set()
        self.aliases: Mapping[str, AliasDef] = aliases or {}
        # (region node, Region, entry-block arguments) waiting to be filled
        self._pending: list[tuple[Node, Region, list[Value]]] = []
        self._after_regions: list[Callable[[], None]] = []

    # -- small helpers ---------------------------------------------------------

    def _slice(self, node: Node, start: int, end: int) -> str:
        base = self._base
        if start < base or end - base > len(self._source):  # (not a node of the item)
            return text(node)
        return self._source[start - base : end - base].decode("utf-8", "replace")

    def text(self, node: Node | None) -> str:
        """The source text of a node ('' for None)."""
        return "" if node is None else self._slice(node, node.start_byte, node.end_byte)

    def use(self, node: Node, role: str = "operand", in_symbol_call: bool = False) -> Use:
        start, end = node.start_byte, node.end_byte
        base = self._base
        if start < base or end - base > len(self._source):  # (not a node of the item)
            name = text(node)
        else:  # (`_slice`, inlined: a model has uses by the ten thousand)
            name = self._source[start - base : end - base].decode("utf-8", "replace")
        return Use(name, Span(start, end), role, None, None, in_symbol_call)

    def map_ref(self, node: Node | None) -> MapRef | None:
        if node is None or node.is_missing:
            return None
        if node.type == "attribute_alias":
            self.used_aliases.add(text(node))
            return MapRef(Span.of(node), alias=text(node), node=node)
        if node.type in ("affine_map", "legacy_affine_map"):
            return MapRef(Span.of(node), inline=map_from_node(node), node=node)
        if node.type in ("integer_set", "legacy_integer_set"):
            return MapRef(Span.of(node), inline=set_from_node(node), node=node)
        return None

    def resolve(self, ref: MapRef | None) -> AffineMap | IntegerSet | None:
        """The map or set of `ref`: inline, or an alias of the table given to the builder."""
        if ref is None:
            return None
        if ref.inline is not None:
            return ref.inline
        alias = self.aliases.get(ref.alias or "")
        if alias is None:
            return None
        return alias.map if alias.map is not None else alias.set

    def after_regions(self, action: Callable[[], None]) -> None:
        """Run `action` once every region of the item has its blocks and operations."""
        self._after_regions.append(action)

    def finish(self) -> None:
        for action in self._after_regions:
            action()
        self._after_regions.clear()

    def operand_lists(self, node: Node | None) -> tuple[list[Use], list[Use]]:
        """Uses of a `dim_and_symbol_operands` node: (dims, symbols)."""
        if node is None:
            return [], []
        dims_node = node.child_by_field_id(_F_DIMS)
        symbols_node = node.child_by_field_id(_F_SYMBOLS)
        dims = [self.use(n, "dim") for n in _value_uses(dims_node)]
        symbols = [self.use(n, "symbol") for n in _value_uses(symbols_node)]
        return dims, symbols

    def subscripts(self, node: Node | None) -> tuple[Subscripts | None, list[Use]]:
        if node is None:
            return None, []
        return subscripts_from_exprs(Span.of(node), expression_children(node), self.use)

    def bound(self, node: Node | None) -> AffineBound | None:
        if node is None:
            return None
        bound = AffineBound(Span.of(node))
        shorthand = node.child_by_field_id(_F_SHORTHAND)
        if shorthand is not None:
            if shorthand.type == "value_use" and not shorthand.is_missing:
                bound.shorthand_value = self.use(shorthand, "symbol")
            elif shorthand.type == "integer":
                bound.shorthand_constant = parse_integer(shorthand)
            return bound
        bound.map_ref = self.map_ref(node.child_by_field_id(_F_MAP))
        bound.minmax = (
            node.child_by_field_id(_F_MAX) or node.child_by_field_id(_F_MIN)
        ) is not None
        bound.dims, bound.symbols = self.operand_lists(node.child_by_field_id(_F_OPERANDS))
        return bound

    def region(
        self, node: Node | None, op: Operation, entry_arguments: list[Value] | None = None
    ) -> None:
        if node is None:
            return
        region = Region(Span.of(node), parent_op=op)
        op.regions.append(region)
        self._pending.append((node, region, entry_arguments or []))

    # -- operations -------------------------------------------------------------

    def operation(self, op_node: Node) -> Operation | None:
        body = op_node.child_by_field_id(_F_BODY)
        if body is None:
            return None
        op = _FACTORIES.get(body.type, _build_other)(self, body)
        op.span = Span(op_node.start_byte, op_node.end_byte)
        op.node = op_node
        results = op_node.child_by_field_id(_F_RESULTS)
        if results is not None:
            if op.kind == "custom_operation" and not op.result_types:  # (kind: body's type)
                op.result_types = custom_result_types(op.name, body, _result_count(results))
            self._attach_results(op, results)
        for use in op.operands:
            use.user = op
        return op

    def _attach_results(self, op: Operation, results_node: Node) -> None:
        """Values for the results, taking the declared result types in order."""
        types = op.result_types
        taken = 0
        for result in results_node.named_children:
            if result.type != "op_result":
                continue
            name_node = result.child_by_field_id(_F_VALUE)
            if name_node is None or name_node.is_missing:
                continue
            count_node = result.child_by_field_id(_F_COUNT)
            start, end = name_node.start_byte, name_node.end_byte
            name = self._slice(name_node, start, end)
            span = Span(start, end)
            if count_node is None:  # `%x = ...`: most results
                declared = types[taken] if taken < len(types) else None
                taken += 1
                op.results.append(Value(name, span, declared, "result", op, None, 0, 1))
                continue
            count = max(1, min(parse_integer(count_node) or 1, 4096))
            for index in range(count):
                declared = types[taken] if taken < len(types) else None
                taken += 1
                op.results.append(Value(name, span, declared, "result", op, None, index, count))

    def fill_regions(self) -> Iterable[tuple[Node, Block]]:
        """Create the blocks of pending regions; yields (op node, block) to build."""
        while self._pending:
            node, region, entry_arguments = self._pending.pop()
            operations: list[Node] = []
            blocks: list[Node] = []
            for child in node.named_children:
                kind = child.type
                if kind == "operation":
                    operations.append(child)
                elif kind == "block":
                    blocks.append(child)
            if operations or not blocks:
                entry = Block(None, Span.of(node), list(entry_arguments), parent_region=region)
                for argument in entry.arguments:
                    argument.owner_block = entry
                region.blocks.append(entry)
                for child in operations:
                    yield child, entry
            for block_node in blocks:
                block = self._block(block_node, region)
                if not region.blocks and entry_arguments and not block.arguments:
                    block.arguments = list(entry_arguments)
                    for argument in block.arguments:
                        argument.owner_block = block
                region.blocks.append(block)
                for child in block_node.named_children:
                    if child.type == "operation":
                        yield child, block

    def _block(self, node: Node, region: Region) -> Block:
        label_node = node.child_by_field_id(_F_LABEL)
        label = text(label_node.child_by_field_id(_F_NAME)) if label_node else None
        block = Block(label, Span.of(node), parent_region=region)
        if label_node is not None:
            for index, argument in enumerate(label_node.children_by_field_id(_F_ARGUMENT)):
                name = argument.child_by_field_id(_F_NAME)
                if name is None or name.is_missing:
                    continue
                block.arguments.append(
                    Value(
                        text(name),
                        Span.of(name),
                        type_from_node(argument.child_by_field_id(_F_TYPE)),
                        "argument",
                        owner_block=block,
                        arg_number=index,
                    )
                )
        return block


def _result_count(results_node: Node) -> int:
    """How many values an `op_result_list` defines (`%a, %b:2 = ...` defines 3)."""
    total = 0
    for result in results_node.named_children:
        if result.type == "op_result":
            count = result.child_by_field_id(_F_COUNT)
            total += max(1, parse_integer(count) or 1) if count is not None else 1
    return total


def _value_uses(node: Node | None) -> list[Node]:
    if node is None:
        return []
    return [c for c in node.named_children if c.type == "value_use" and not c.is_missing]


def _descendant_uses(node: Node) -> list[Node]:
    """value_use nodes under `node`, not entering regions (iterative, in order)."""
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.type
        if kind == "value_use":
            if not current.is_missing:
                found.append(current)
            continue
        if kind == "region":
            continue
        stack.extend(reversed(current.named_children))
    return found


def _base(builder: _ItemBuilder, body: Node, cls: type[Operation] = Operation) -> Operation:
    kind = body.type
    body_span = Span(body.start_byte, body.end_byte)
    name_node = body.child_by_field_id(_F_NAME)
    if name_node is None:
        spelling, name_span = kind, body_span
    else:
        if name_node.is_named or name_node.is_missing:
            spelling = builder.text(name_node)
            if kind == "generic_operation":
                spelling = spelling.strip('"')
        else:
            spelling = name_node.type  # a keyword (`affine.load`): its type is its text
        name_span = Span(name_node.start_byte, name_node.end_byte)
    if spelling in LEGACY_NAMES:
        op = cls(LEGACY_NAMES[spelling], kind, body_span, name_span)
        op.legacy = True
        return op
    return cls(FUNC_DEFAULT_DIALECT.get(spelling, spelling), kind, body_span, name_span)


# -- per-kind factories ------------------------------------------------------------------


def _build_generic(builder: _ItemBuilder, body: Node) -> Operation:
    """An op in the generic form; affine ops get their model class and fields."""
    name_node = body.child_by_field_id(_F_NAME)
    name = canonical_name(text(name_node).strip('"'))[0] if name_node is not None else ""
    op = _build_other(builder, body, GENERIC_CLASSES.get(name, Operation))
    specialise(builder, op, body)
    return op


def _build_other(builder: _ItemBuilder, body: Node, cls: type[Operation] = Operation) -> Operation:
    """Ops modelled only by their operands, regions and declared types."""
    op = _base(builder, body, cls)
    kind = op.kind  # (body's type)
    op.operands = [builder.use(n) for n in _descendant_uses(body)]
    for child in body.named_children:
        if child.type == "region":
            builder.region(child, op)
        elif child.type == "region_list":
            for region in child.named_children:
                if region.type == "region":
                    builder.region(region, op)
    to_type = body.child_by_field_id(_F_TO)
    declared = body.child_by_field_id(_F_TYPE)
    if to_type is not None:
        op.result_types = types_from_list(to_type)
    elif kind == "generic_operation" and declared is not None:
        function_type = type_from_node(declared)
        if isinstance(function_type, FunctionType):
            op.result_types = list(function_type.results)
            op.operand_types = list(function_type.inputs)
    elif kind == "memref_get_global" and declared is not None:
        op.result_types = types_from_list(declared)
    elif kind in ("memref_generic_atomic_rmw",) and declared is not None:
        element = element_type(type_from_node(declared))
        op.result_types = [element] if element else []
    elif kind == "memref_atomic_rmw" and declared is not None:
        function_type = type_from_node(declared)
        if isinstance(function_type, FunctionType):
            op.result_types = list(function_type.results)
    elif kind in _RESULT_TYPES_FIELD:
        op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    elif kind == "transform_match" and declared is not None:
        function_type = type_from_node(declared)
        if isinstance(function_type, FunctionType):
            op.result_types = list(function_type.results)
    elif kind == "scf_while" and declared is not None:
        function_type = type_from_node(declared)
        if isinstance(function_type, FunctionType):
            op.result_types = list(function_type.results)
    return op


# Ops whose result types are the types after their `->`.
_RESULT_TYPES_FIELD = frozenset(
    {
        "memref_alloca_scope",
        "scf_if",
        "scf_parallel",
        "scf_execute_region",
        "scf_index_switch",
        "linalg_generic",
        "transform_sequence",
    }
)


def _build_func(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, FuncOp)
    assert isinstance(op, FuncOp)
    symbol = body.child_by_field_id(_F_SYMBOL)
    op.symbol = text(symbol)
    op.symbol_span = Span.of(symbol) if symbol is not None else None
    visibility = body.child_by_field_id(_F_VISIBILITY)
    op.visibility = text(visibility).strip('"') if visibility is not None else None
    arguments: list[Value] = []
    arguments_node = body.child_by_field_id(_F_ARGUMENTS)
    for index, child in enumerate(arguments_node.named_children if arguments_node else []):
        if child.type == "func_argument":
            name = child.child_by_field_id(_F_NAME)
            argument_type = type_from_node(child.child_by_field_id(_F_TYPE))
            op.argument_types.append(argument_type or OpaqueType("?"))
            if name is not None and not name.is_missing:
                arguments.append(
                    Value(text(name), Span.of(name), argument_type, "argument", arg_number=index)
                )
        elif child.type == "func_argument_type":
            argument_type = type_from_node(child.child_by_field_id(_F_TYPE))
            op.argument_types.append(argument_type or OpaqueType("?"))
    legacy_types = body.child_by_field_id(_F_LEGACY_TYPES)
    if legacy_types is not None:
        for value, declared in zip(arguments, types_from_list(legacy_types), strict=False):
            value.type = declared
    results = body.child_by_field_id(_F_RESULTS)
    if results is not None:
        op.declared_result_types = [
            type_from_node(c.child_by_field_id(_F_TYPE)) or OpaqueType("?")
            if c.type == "func_result"
            else type_from_node(c) or OpaqueType("?")
            for c in ([results] if results.type != "func_results" else results.named_children)
        ]
        if (
            results.type == "func_results"
            and not any(c.type == "func_result" for c in results.named_children)
            and results.named_children
        ):
            op.declared_result_types = [
                type_from_node(results.named_children[0]) or OpaqueType("?")
            ]
    builder.region(body.child_by_field_id(_F_BODY), op, arguments)
    return op


def _build_call(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    op.operands = [builder.use(n) for n in _value_uses(body.child_by_field_id(_F_OPERANDS))]
    declared = type_from_node(body.child_by_field_id(_F_TYPE))
    if isinstance(declared, FunctionType):
        op.result_types = list(declared.results)
    return op


def _build_return(builder: _ItemBuilder, body: Node) -> Operation:
    cls = AffineYieldOp if body.type == "affine_yield" else Operation
    op = _base(builder, body, cls)
    op.operands = [builder.use(n) for n in _value_uses(body.child_by_field_id(_F_OPERANDS))]
    op.result_types = []
    return op


def _build_arith(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    op.operands = [builder.use(n) for n in _descendant_uses(body)]
    kind = body.type
    if kind == "arith_constant":
        op.result_types = _constant_type(body.child_by_field_id(_F_VALUE))
    elif kind == "arith_cast":
        op.result_types = types_from_list(body.child_by_field_id(_F_TO))
    elif kind == "arith_cmp":
        compared = type_from_node(body.child_by_field_id(_F_TYPE))
        op.result_types = [IntegerType(1)] if compared is not None else []
    elif op.name == "arith.addui_extended":  # `: sum type, overflow type`
        op.result_types = types_from_list(body.child_by_field_id(_F_TYPE))
    elif op.name in ("arith.mulsi_extended", "arith.mului_extended"):  # low and high halves
        declared = types_from_list(body.child_by_field_id(_F_TYPE))
        op.result_types = declared[-1:] * 2 if declared else []
    else:
        declared = types_from_list(body.child_by_field_id(_F_TYPE))
        op.result_types = declared[-1:] if declared else []
    return op


def _constant_type(value: Node | None) -> list[Type]:
    if value is None:
        return []
    if value.type == "typed_literal":
        declared = type_from_node(value.child_by_field_id(_F_TYPE))
        return [declared] if declared else []
    if value.type == "boolean":
        return [IntegerType(1)]
    return []


def _build_apply(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineApplyOp)
    assert isinstance(op, AffineApplyOp)
    op.map_ref = builder.map_ref(body.child_by_field_id(_F_MAP))
    op.dims, op.symbols = builder.operand_lists(body.child_by_field_id(_F_OPERANDS))
    op.operands = op.dims + op.symbols
    op.result_types = [INDEX]
    return op


def _build_basis(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, IndexBasisOp)
    assert isinstance(op, IndexBasisOp)
    if body.type == "affine_delinearize_index":
        linear = body.child_by_field_id(_F_LINEAR_INDEX)
        op.indices = (
            [builder.use(linear, "index")] if linear is not None and not linear.is_missing else []
        )
        op.result_types = types_from_list(body.child_by_field_id(_F_TYPES))
    else:
        indices = _value_uses(body.child_by_field_id(_F_INDICES))
        op.indices = [builder.use(n, "index") for n in indices]
        op.disjoint = body.child_by_field_id(_F_DISJOINT) is not None
        op.result_types = types_from_list(body.child_by_field_id(_F_TYPE))
    basis = body.child_by_field_id(_F_BASIS)
    op.basis_span = Span.of(basis) if basis is not None else None
    basis_uses: list[Use] = []
    for child in basis.named_children if basis is not None else []:
        if child.type == "value_use" and not child.is_missing:
            use = builder.use(child, "basis")
            basis_uses.append(use)
            op.basis.append(use)
        elif child.type == "integer":
            op.basis.append(parse_integer(child) or 0)
    op.operands = op.indices + basis_uses
    return op


def _build_for(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineForOp)
    assert isinstance(op, AffineForOp)
    iv_node = body.child_by_field_id(_F_INDUCTION_VARIABLE)
    arguments: list[Value] = []
    if iv_node is not None and not iv_node.is_missing:
        op.induction_variable = Value(text(iv_node), Span.of(iv_node), INDEX, "induction_variable")
        arguments.append(op.induction_variable)
    op.lower = builder.bound(body.child_by_field_id(_F_LOWER))
    op.upper = builder.bound(body.child_by_field_id(_F_UPPER))
    step = body.child_by_field_id(_F_STEP)
    if step is not None:
        op.step = parse_integer(step)
        op.step_span = Span.of(step)
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    inits: list[Use] = []
    iter_args = body.child_by_field_id(_F_ITER_ARGS)
    for index, iter_arg in enumerate(
        c for c in (iter_args.named_children if iter_args else []) if c.type == "iter_arg"
    ):
        name = iter_arg.child_by_field_id(_F_NAME)
        init = iter_arg.child_by_field_id(_F_INIT)
        if name is None or init is None or name.is_missing or init.is_missing:
            continue
        declared = op.result_types[index] if index < len(op.result_types) else None
        value = Value(text(name), Span.of(name), declared, "iter_arg", arg_number=index + 1)
        use = builder.use(init, "init")
        op.iter_args.append((value, use))
        arguments.append(value)
        inits.append(use)
    bounds = [b for b in (op.lower, op.upper) if b is not None]
    op.operands = [u for b in bounds for u in b.operands] + inits
    builder.region(body.child_by_field_id(_F_BODY), op, arguments)
    return op


def _build_if(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineIfOp)
    assert isinstance(op, AffineIfOp)
    op.condition = builder.map_ref(body.child_by_field_id(_F_CONDITION))
    op.dims, op.symbols = builder.operand_lists(body.child_by_field_id(_F_OPERANDS))
    op.operands = op.dims + op.symbols
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    builder.region(body.child_by_field_id(_F_THEN), op)
    builder.region(body.child_by_field_id(_F_ELSE), op)
    return op


def _parallel_bounds(
    builder: _ItemBuilder, node: Node | None
) -> tuple[list[ParallelBound], list[Use]]:
    bounds: list[ParallelBound] = []
    uses: list[Use] = []
    for child in node.named_children if node is not None else []:
        if child.type != "parallel_bound":
            continue
        kind_node = child.child_by_field_id(_F_KIND)
        bound = ParallelBound(
            Span.of(child), kind=kind_node.type if kind_node is not None else None
        )
        for expr in child.children_by_field_id(_F_EXPR):
            subscripts, expr_uses = subscripts_from_exprs(Span.of(expr), [expr], builder.use)
            bound.exprs.append(subscripts)
            uses += expr_uses
        bounds.append(bound)
    return bounds, uses


def _build_parallel(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineParallelOp)
    assert isinstance(op, AffineParallelOp)
    ivs = body.child_by_field_id(_F_INDUCTION_VARIABLES)
    for index, iv in enumerate(
        c for c in (ivs.named_children if ivs else []) if c.type == "value_def"
    ):
        op.induction_variables.append(
            Value(text(iv), Span.of(iv), INDEX, "induction_variable", arg_number=index)
        )
    lower, upper = body.child_by_field_id(_F_LOWER), body.child_by_field_id(_F_UPPER)
    op.lower, lower_uses = _parallel_bounds(builder, lower)
    op.upper, upper_uses = _parallel_bounds(builder, upper)
    op.lower_span = Span.of(lower) if lower is not None else None
    op.upper_span = Span.of(upper) if upper is not None else None
    steps = body.child_by_field_id(_F_STEPS)
    if steps is not None:
        op.steps_span = Span.of(steps)
        op.steps = [parse_integer(c) or 0 for c in steps.named_children if c.type == "integer"]
    reductions = body.child_by_field_id(_F_REDUCTIONS)
    if reductions is not None:
        op.reductions_span = Span.of(reductions)
        op.reductions = [
            text(c).strip('"') for c in reductions.named_children if c.type == "string"
        ]
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    op.operands = lower_uses + upper_uses
    builder.region(body.child_by_field_id(_F_BODY), op, list(op.induction_variables))
    return op


def _build_access(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineAccessOp)
    assert isinstance(op, AffineAccessOp)
    kind = op.kind  # (body's type)
    op.is_write = kind in ("affine_store", "affine_vector_store") or (
        kind == "affine_prefetch" and text(body.child_by_field_id(_F_RW)) == "write"
    )
    operands: list[Use] = []
    value = body.child_by_field_id(_F_VALUE)
    if value is not None and not value.is_missing:
        op.stored_value = builder.use(value, "value")
        operands.append(op.stored_value)
    memref = body.child_by_field_id(_F_MEMREF)
    if memref is not None and not memref.is_missing:
        op.memref = builder.use(memref, "memref")
        operands.append(op.memref)
    op.subscripts, subscript_uses = builder.subscripts(body.child_by_field_id(_F_SUBSCRIPTS))
    operands += subscript_uses
    type_node = body.child_by_field_id(_F_TYPE)
    op.memref_type = type_from_node(type_node)
    op.memref_type_span = Span.of(type_node) if type_node is not None else None
    op.vector_type = type_from_node(body.child_by_field_id(_F_VECTOR_TYPE))
    if kind == "affine_load":
        element = element_type(op.memref_type)
        op.result_types = [element] if element is not None else []
    elif kind == "affine_vector_load":
        op.result_types = [op.vector_type] if op.vector_type is not None else []
    op.operands = operands
    return op


def _build_dma(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, AffineDmaOp)
    assert isinstance(op, AffineDmaOp)
    operands: list[Use] = []
    roles = (
        [
            ("source", "source_subscripts"),
            ("destination", "destination_subscripts"),
            ("tag", "tag_subscripts"),
        ]
        if body.type == "affine_dma_start"
        else [("tag", "tag_subscripts")]
    )
    for memref_field, subscripts_field in roles:
        memref = body.child_by_field_id(FIELD[memref_field])
        subscripts, uses = builder.subscripts(body.child_by_field_id(FIELD[subscripts_field]))
        if memref is None or memref.is_missing or subscripts is None:
            continue
        memref_use = builder.use(memref, "memref")
        op.accesses.append((memref_use, subscripts, memref_field))
        operands += [memref_use, *uses]
    for extra in ("num_elements", "stride", "elements_per_stride"):
        node = body.child_by_field_id(FIELD[extra])
        if node is not None and not node.is_missing:
            use = builder.use(node, extra)
            operands.append(use)
            if extra == "num_elements":
                op.num_elements = use
    types = body.child_by_field_id(_F_TYPES) or body.child_by_field_id(_F_TYPE)
    op.memref_types = types_from_list(types)
    op.types_span = Span.of(types) if types is not None else None
    op.operands = operands
    return op


def _build_alloc(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, MemRefAllocOp)
    assert isinstance(op, MemRefAllocOp)
    sizes = _value_uses(body.child_by_field_id(_F_DYNAMIC_SIZES))
    op.dynamic_sizes = [builder.use(n, "size") for n in sizes]
    symbols = _value_uses(body.child_by_field_id(_F_SYMBOLS))
    op.symbol_operands = [builder.use(n, "symbol") for n in symbols]
    type_node = body.child_by_field_id(_F_TYPE)
    op.memref_type = type_from_node(type_node)
    op.type_span = Span.of(type_node) if type_node is not None else None
    op.result_types = [op.memref_type] if op.memref_type is not None else []
    op.operands = op.dynamic_sizes + op.symbol_operands
    return op


def _build_memref_access(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, MemRefAccessOp)
    assert isinstance(op, MemRefAccessOp)
    op.is_write = body.type == "memref_store"
    operands: list[Use] = []
    value = body.child_by_field_id(_F_VALUE)
    if value is not None and not value.is_missing:
        op.stored_value = builder.use(value, "value")
        operands.append(op.stored_value)
    memref = body.child_by_field_id(_F_MEMREF)
    if memref is not None and not memref.is_missing:
        op.memref = builder.use(memref, "memref")
        operands.append(op.memref)
    indices = body.child_by_field_id(_F_INDICES)
    op.indices_span = Span.of(indices) if indices is not None else None
    op.index_nodes = expression_children(indices)
    for index_node in op.index_nodes:
        for use_node in _descendant_uses(index_node):
            use = builder.use(use_node, "index")
            operands.append(use)
            if use_node == index_node:
                op.indices.append(use)
    op.memref_type = type_from_node(body.child_by_field_id(_F_TYPE))
    if not op.is_write:
        element = element_type(op.memref_type)
        op.result_types = [element] if element is not None else []
    op.operands = operands
    return op


def _build_dim(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body, MemRefDimOp)
    assert isinstance(op, MemRefDimOp)
    source = body.child_by_field_id(_F_SOURCE)
    if source is not None and not source.is_missing:
        op.source = builder.use(source, "memref")
        op.operands.append(op.source)
    index = body.child_by_field_id(_F_INDEX)
    if index is not None and not index.is_missing:
        if index.type == "value_use":
            use = builder.use(index, "index")
            op.index = use
            op.operands.append(use)
        else:
            op.index = parse_integer(index)
    op.source_type = type_from_node(body.child_by_field_id(_F_TYPE))
    op.result_types = [INDEX]
    return op


def _build_builtin_module(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    if op.name == "module":
        op.name = "builtin.module"
    builder.region(body.child_by_field_id(_F_BODY), op)
    return op


def _build_scf_for(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    arguments: list[Value] = []
    iv = body.child_by_field_id(_F_INDUCTION_VARIABLE)
    if iv is not None and not iv.is_missing:
        arguments.append(Value(text(iv), Span.of(iv), None, "argument"))
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    operands = [
        builder.use(n)
        for n in (
            body.child_by_field_id(_F_LOWER),
            body.child_by_field_id(_F_UPPER),
            body.child_by_field_id(_F_STEP),
        )
        if n is not None and not n.is_missing
    ]
    iter_args = body.child_by_field_id(_F_ITER_ARGS)
    for index, iter_arg in enumerate(
        c for c in (iter_args.named_children if iter_args else []) if c.type == "iter_arg"
    ):
        name, init = (
            iter_arg.child_by_field_id(_F_NAME),
            iter_arg.child_by_field_id(_F_INIT),
        )
        if name is None or init is None or name.is_missing or init.is_missing:
            continue
        declared = op.result_types[index] if index < len(op.result_types) else None
        arguments.append(
            Value(text(name), Span.of(name), declared, "iter_arg", arg_number=index + 1)
        )
        operands.append(builder.use(init, "init"))
    op.operands = operands
    builder.region(body.child_by_field_id(_F_BODY), op, arguments)
    return op


def _build_scf_while(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    function_type = type_from_node(body.child_by_field_id(_F_TYPE))
    inputs = list(function_type.inputs) if isinstance(function_type, FunctionType) else []
    op.result_types = list(function_type.results) if isinstance(function_type, FunctionType) else []
    arguments: list[Value] = []
    for index, iter_arg in enumerate(c for c in body.named_children if c.type == "iter_arg"):
        name, init = (
            iter_arg.child_by_field_id(_F_NAME),
            iter_arg.child_by_field_id(_F_INIT),
        )
        if name is None or init is None or name.is_missing or init.is_missing:
            continue
        declared = inputs[index] if index < len(inputs) else None
        arguments.append(Value(text(name), Span.of(name), declared, "argument", arg_number=index))
        op.operands.append(builder.use(init, "init"))
    builder.region(body.child_by_field_id(_F_BEFORE), op, arguments)
    builder.region(body.child_by_field_id(_F_AFTER), op)
    return op


def _build_scf_parallel(builder: _ItemBuilder, body: Node) -> Operation:
    op = _base(builder, body)
    ivs = body.child_by_field_id(_F_INDUCTION_VARIABLES)
    arguments = [
        Value(text(iv), Span.of(iv), INDEX, "induction_variable", arg_number=index)
        for index, iv in enumerate(
            c for c in (ivs.named_children if ivs else []) if c.type == "value_def"
        )
    ]
    for name in ("lower", "upper", "steps", "inits"):
        op.operands += [builder.use(n) for n in _value_uses(body.child_by_field_id(FIELD[name]))]
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    builder.region(body.child_by_field_id(_F_BODY), op, arguments)
    return op


def _iter_arg_definitions(
    builder: _ItemBuilder, nodes: Iterable[Node], role: str, first: int
) -> tuple[list[Value], list[Use]]:
    """`%x = %init` pairs (iter_arg nodes) as region arguments and the uses of their
    initial values."""
    arguments: list[Value] = []
    inits: list[Use] = []
    for node in nodes:
        name, init = node.child_by_field_id(_F_NAME), node.child_by_field_id(_F_INIT)
        if name is None or name.is_missing:
            continue
        arguments.append(
            Value(text(name), Span.of(name), None, role, arg_number=first + len(arguments))
        )
        if init is not None and not init.is_missing:
            inits.append(builder.use(init, "init"))
    return arguments, inits


def _build_scf_forall(builder: _ItemBuilder, body: Node) -> Operation:
    """scf.forall: induction variables, then the shared outputs, as region arguments."""
    op = _base(builder, body)
    ivs = body.child_by_field_id(_F_INDUCTION_VARIABLES)
    arguments = [
        Value(text(iv), Span.of(iv), INDEX, "induction_variable", arg_number=index)
        for index, iv in enumerate(
            c for c in (ivs.named_children if ivs else []) if c.type == "value_def"
        )
    ]
    for name in ("lower", "upper", "steps"):
        op.operands += [builder.use(n) for n in _value_uses(body.child_by_field_id(FIELD[name]))]
    outs, inits = _iter_arg_definitions(
        builder, body.children_by_field_id(_F_SHARED_OUT), "argument", len(arguments)
    )
    op.result_types = types_from_list(body.child_by_field_id(_F_RESULT_TYPES))
    for index, value in enumerate(outs):
        value.type = op.result_types[index] if index < len(op.result_types) else None
    op.operands += inits
    builder.region(body.child_by_field_id(_F_BODY), op, arguments + outs)
    return op


def _build_gpu_launch(builder: _ItemBuilder, body: Node) -> Operation:
    """gpu.launch: the ids and sizes of its clusters, blocks and threads and its
    workgroup and private attributions are region arguments."""
    op = _base(builder, body)
    arguments: list[Value] = []
    for clause in body.children_by_field_id(_F_CLAUSE):
        if clause.type == "launch_dimensions":
            for iv in clause.children_by_field_id(_F_ID):
                if not iv.is_missing:
                    arguments.append(
                        Value(text(iv), Span.of(iv), INDEX, "argument", arg_number=len(arguments))
                    )
            sizes, uses = _iter_arg_definitions(
                builder, clause.children_by_field_id(_F_SIZE), "argument", len(arguments)
            )
            for size in sizes:
                size.type = INDEX
            arguments += sizes
            op.operands += uses
        elif clause.type == "launch_attribution":
            for argument in clause.children_by_field_id(_F_ARGUMENT):
                name = argument.child_by_field_id(_F_NAME)
                if name is None or name.is_missing:
                    continue
                declared = type_from_node(argument.child_by_field_id(_F_TYPE))
                arguments.append(
                    Value(
                        text(name), Span.of(name), declared, "argument", arg_number=len(arguments)
                    )
                )
    op.operands += [builder.use(n) for n in _value_uses(body.child_by_field_id(_F_DEPENDENCIES))]
    size = body.child_by_field_id(_F_SHARED_MEMORY_SIZE)
    if size is not None and not size.is_missing:
        op.operands.append(builder.use(size))
    if body.child_by_field_id(_F_ASYNC) is not None:
        op.result_types = [OpaqueType("!gpu.async.token")]
    builder.region(body.child_by_field_id(_F_BODY), op, arguments)
    return op


_FACTORIES: dict[str, Callable[[_ItemBuilder, Node], Operation]] = {
    "generic_operation": _build_generic,
    "func_func": _build_func,
    "func_call": _build_call,
    "func_return": _build_return,
    "affine_yield": _build_return,
    "terminator_with_values": _build_return,
    "arith_constant": _build_arith,
    "arith_binary": _build_arith,
    "arith_unary": _build_arith,
    "arith_cmp": _build_arith,
    "arith_cast": _build_arith,
    "arith_select": _build_arith,
    "affine_apply": _build_apply,
    "affine_min_max": _build_apply,
    "affine_delinearize_index": _build_basis,
    "affine_linearize_index": _build_basis,
    "affine_for": _build_for,
    "affine_if": _build_if,
    "affine_parallel": _build_parallel,
    "affine_load": _build_access,
    "affine_store": _build_access,
    "affine_vector_load": _build_access,
    "affine_vector_store": _build_access,
    "affine_prefetch": _build_access,
    "affine_dma_start": _build_dma,
    "affine_dma_wait": _build_dma,
    "memref_alloc": _build_alloc,
    "memref_load": _build_memref_access,
    "memref_store": _build_memref_access,
    "memref_dim": _build_dim,
    "builtin_module": _build_builtin_module,
    "scf_for": _build_scf_for,
    "scf_while": _build_scf_while,
    "scf_parallel": _build_scf_parallel,
    "scf_forall": _build_scf_forall,
    "gpu_launch": _build_gpu_launch,
}


# -- items and modules -----------------------------------------------------------------------


def build_alias(node: Node) -> AliasDef:
    """An `attribute_alias_def` or `type_alias_def` node as an AliasDef."""
    name = node.child_by_field_id(_F_NAME)
    value = node.child_by_field_id(_F_VALUE)
    alias = AliasDef(
        text(name),
        Span.of(node),
        Span.of(name) if name is not None else Span.of(node),
        "attribute",
        Span.of(value) if value is not None else Span.of(node),
        node=node,
    )
    if node.type == "type_alias_def":
        alias.kind = "type"
        alias.type = type_from_node(value)
    elif value is not None:
        if value.type in ("affine_map", "legacy_affine_map"):
            alias.kind = "map" if value.type == "affine_map" else "legacy_map"
            alias.map = map_from_node(value)
        elif value.type in ("integer_set", "legacy_integer_set"):
            alias.kind = "set" if value.type == "integer_set" else "legacy_set"
            alias.set = set_from_node(value)
    return alias


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a model is built.

    Building allocates many small objects that all stay alive (the model is full of
    parent links); the collector would traverse them again and again for nothing.
    Nested use is fine."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def build_operation_item(
    op_node: Node,
    module_scope: NameScope | None = None,
    aliases: Mapping[str, AliasDef] | None = None,
    dialects: Dialects = UPSTREAM,
) -> TopLevelItem:
    """Model one top-level `operation` node.

    `aliases` (the document's alias table) is read only by generic-form affine ops
    whose map is an alias: it says how their operands split into dimensions and
    symbols (see `affine_lsp.ir.generic`). An item built without it leaves that
    split empty; rebuild items whose `used_aliases` changed meaning. `dialects`:
    which ops' regions are isolated from above or SSA CFG regions (a project's)."""
    with _collector_paused():
        return _build_operation_item(op_node, module_scope, aliases, dialects)


def _build_operation_item(
    op_node: Node,
    module_scope: NameScope | None,
    aliases: Mapping[str, AliasDef] | None = None,
    dialects: Dialects = UPSTREAM,
) -> TopLevelItem:
    item = TopLevelItem(Span.of(op_node))
    builder = _ItemBuilder(aliases, op_node)
    root = builder.operation(op_node)
    if root is None:
        return item
    item.operation = root
    for child_node, block in builder.fill_regions():
        child = builder.operation(child_node)
        if child is not None:
            child.parent_block = block
            block.operations.append(child)
    builder.finish()
    item.used_aliases = builder.used_aliases
    resolve_names(item, root, module_scope or NameScope(None, False, None, False), dialects)
    return item


def build_module(root: Node, dialects: Dialects = UPSTREAM) -> ModuleModel:
    """Model every top-level item under a `source_file` node."""
    with _collector_paused():
        return _build_module(root, dialects)


def _build_module(root: Node, dialects: Dialects) -> ModuleModel:
    model = ModuleModel(dialects=dialects)
    op_nodes: list[tuple[int, Node]] = []
    for child in root.named_children:
        if child.type in ("attribute_alias_def", "type_alias_def"):
            alias = build_alias(child)
            model.items.append(TopLevelItem(Span.of(child), alias=alias))
        elif child.type == "operation":
            op_nodes.append((len(model.items), child))
            model.items.append(TopLevelItem(Span.of(child)))
    # Top-level values are visible to the regions of other top-level ops: declare
    # the results of every top-level op first, then build and resolve each item.
    shells = {index: _shallow_results(node) for index, node in op_nodes}
    scope = NameScope(None, False, None, False)
    holder = TopLevelItem(Span(0, 0))
    for values in shells.values():
        for value in values:
            declare(scope, value, holder)
    aliases = model.alias_table()
    adopted: dict[int, Value] = {}
    for index, node in op_nodes:
        item = _build_operation_item(node, scope, aliases, dialects)
        if item.operation is not None:
            _adopt_results(scope, shells[index], item.operation.results)
            adopted.update(
                (id(placeholder), value)
                for placeholder, value in zip(shells[index], item.operation.results, strict=False)
            )
        model.items[index] = item
    model.redefinitions = [
        (adopted.get(id(new), new), adopted.get(id(earlier), earlier))
        for new, earlier in holder.redefinitions
    ]
    return model


def _shallow_results(op_node: Node) -> list[Value]:
    """Placeholder values for the results of a top-level op (resolved before building)."""
    results = op_node.child_by_field_id(_F_RESULTS)
    values = []
    for result in results.named_children if results is not None else []:
        name = result.child_by_field_id(_F_VALUE)
        if name is None or name.is_missing:
            continue
        count_node = result.child_by_field_id(_F_COUNT)
        count = max(1, min(parse_integer(count_node) or 1, 4096)) if count_node is not None else 1
        for index in range(count):
            values.append(
                Value(text(name), Span.of(name), None, "result", index=index, group_size=count)
            )
    return values


def _adopt_results(scope: NameScope, placeholders: list[Value], real: list[Value]) -> None:
    """Replace placeholder top-level values by the real ones, keeping their uses."""
    for placeholder, value in zip(placeholders, real, strict=False):
        value.uses = placeholder.uses + value.uses
        for use in placeholder.uses:
            use.value = value
        group = scope.values.get(placeholder.name, [])
        for i, candidate in enumerate(group):
            if candidate is placeholder:
                group[i] = value


def memref_type_of(value: Value | None) -> MemRefType | None:
    if value is not None and isinstance(value.type, MemRefType):
        return value.type
    return None
