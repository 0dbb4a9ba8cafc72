"""The semantic model: operations, SSA values and their uses, regions and blocks.

Objects here are plain Python data built from one syntax tree by
`affine_lsp.ir.build`; they hold spans (byte ranges and points) of that tree
and, for convenience, the syntax node they came from. A model describes one
version of a document; an edit produces a new model for what it touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from affine_lsp.ir.affine import AffineConst, AffineMap, AffineSymbol, IntegerSet
from affine_lsp.ir.registry import UPSTREAM, Dialects
from affine_lsp.ir.types import Type
from affine_lsp.syntax import FIELD, Node, Span

_F_BODY = FIELD["body"]
_F_ATTRIBUTES = FIELD["attributes"]

# -- values and uses --------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Value:
    """An SSA value: an operation result or a block argument."""

    name: str  # "%x" — the name of its result group
    span: Span  # where it is defined (the name token)
    type: Type | None = None
    role: str = "result"  # result | argument | induction_variable | iter_arg
    defining_op: Operation | None = None
    owner_block: Block | None = None
    index: int = 0  # position in its result group (0 for block arguments)
    group_size: int = 1
    arg_number: int = 0  # position among its block's arguments
    uses: list[Use] = field(default_factory=list)

    @property
    def display_name(self) -> str:
        return self.name if self.group_size == 1 else f"{self.name}#{self.index}"

    @property
    def is_block_argument(self) -> bool:
        return self.owner_block is not None

    @property
    def parent_op(self) -> Operation | None:
        """The op owning the region this value is defined in (for block args: the region's op)."""
        if self.owner_block is not None:
            return self.owner_block.parent_op
        block = self.defining_op.parent_block if self.defining_op else None
        return block.parent_op if block else None

    def __repr__(self) -> str:
        return f"Value({self.display_name}, {self.role})"


@dataclass(eq=False, slots=True)
class Use:
    """One use of an SSA value by an operation."""

    name: str  # as written: "%x" or "%x#1"
    span: Span
    role: str = "operand"  # operand | dim | symbol | memref | value | index | size | ...
    value: Value | None = None  # None when the name does not resolve
    user: Operation | None = None
    in_symbol_call: bool = False  # written as `symbol(%v)` in a subscript

    def __repr__(self) -> str:
        return f"Use({self.name}, {self.role})"


# -- structure ------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class Block:
    label: str | None  # "^bb0" or None for an unlabelled entry block
    span: Span
    arguments: list[Value] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    parent_region: Region | None = None

    @property
    def parent_op(self) -> Operation | None:
        return self.parent_region.parent_op if self.parent_region else None


@dataclass(eq=False, slots=True)
class Region:
    span: Span
    blocks: list[Block] = field(default_factory=list)
    parent_op: Operation | None = None

    @property
    def entry(self) -> Block | None:
        return self.blocks[0] if self.blocks else None

    def operations(self) -> Iterator[Operation]:
        for block in self.blocks:
            yield from block.operations


@dataclass(eq=False, slots=True)
class Operation:
    """Any operation. Affine and other modelled ops use the subclasses below."""

    name: str  # canonical name, e.g. "affine.for", "func.return", "foo.bar"
    kind: str  # syntax node type, e.g. "affine_for", "generic_operation"
    span: Span  # the whole operation, results included
    name_span: Span
    node: Node | None = field(default=None, repr=False)
    results: list[Value] = field(default_factory=list)
    operands: list[Use] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    result_types: list[Type] = field(default_factory=list)  # as declared in the syntax
    # Operand types as the generic form declares them (its function type's inputs);
    # empty for the custom forms, whose operands take the types of their values.
    operand_types: list[Type] = field(default_factory=list)
    parent_block: Block | None = None
    legacy: bool = False  # spelled in the 2019 syntax

    @property
    def parent_op(self) -> Operation | None:
        return self.parent_block.parent_op if self.parent_block else None

    @property
    def attributes_node(self) -> Node | None:
        """The attribute dictionary written in the op's syntax (`{...}`), if any."""
        body = self.node.child_by_field_id(_F_BODY) if self.node is not None else None
        return body.child_by_field_id(_F_ATTRIBUTES) if body is not None else None

    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0] if "." in self.name else ""

    def ancestors(self) -> Iterator[Operation]:
        current = self.parent_op
        while current is not None:
            yield current
            current = current.parent_op

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in its regions, in document order (iterative)."""
        stack: list[Operation] = [self]
        while stack:
            op = stack.pop()
            yield op
            if op.regions:  # (most ops have none)
                nested = [o for region in op.regions for b in region.blocks for o in b.operations]
                stack.extend(reversed(nested))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name})"


# -- affine maps as referenced by ops -----------------------------------------------


@dataclass(eq=False, slots=True)
class MapRef:
    """A map or set as an op refers to it: an alias (`#map`) or an inline one."""

    span: Span
    alias: str | None = None
    inline: AffineMap | IntegerSet | None = None
    node: Node | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"MapRef({self.alias or self.inline})"


@dataclass(eq=False, slots=True)
class AffineBound:
    """A lower or upper bound of affine.for: a map applied to dims and symbols,
    or the shorthand `%N` / `42`."""

    span: Span
    map_ref: MapRef | None = None
    dims: list[Use] = field(default_factory=list)
    symbols: list[Use] = field(default_factory=list)
    minmax: bool = False  # written with `max` / `min`
    shorthand_value: Use | None = None
    shorthand_constant: int | None = None

    @property
    def operands(self) -> list[Use]:
        if self.shorthand_value is not None:
            return [self.shorthand_value]
        return self.dims + self.symbols

    def shorthand_map(self) -> AffineMap | None:
        """The map MLIR builds for a shorthand bound: ()[s0] -> (s0) or () -> (c)."""
        if self.shorthand_value is not None:
            return AffineMap(0, 1, (AffineSymbol(0),))
        if self.shorthand_constant is not None:
            return AffineMap(0, 0, (AffineConst(self.shorthand_constant),))
        return None


@dataclass(eq=False, slots=True)
class Subscripts:
    """Affine subscripts (`%A[%i + symbol(%n), 3]`) as the map MLIR builds from them:
    every distinct SSA value becomes a dimension, or a symbol when wrapped in
    `symbol(...)`, in order of first appearance."""

    span: Span
    map: AffineMap
    dims: list[Use] = field(default_factory=list)
    symbols: list[Use] = field(default_factory=list)
    result_spans: list[Span] = field(default_factory=list)

    @property
    def operands(self) -> list[Use]:
        return self.dims + self.symbols


# -- modelled operations -----------------------------------------------------------


@dataclass(eq=False, repr=False, slots=True)
class FuncOp(Operation):
    symbol: str = ""
    symbol_span: Span | None = None
    visibility: str | None = None
    argument_types: list[Type] = field(default_factory=list)
    declared_result_types: list[Type] = field(default_factory=list)

    @property
    def body(self) -> Region | None:
        return self.regions[0] if self.regions else None


def function_of(op: Operation) -> FuncOp | None:
    """The function `op` is in (itself if it is one), if any."""
    current: Operation | None = op
    while current is not None:
        if isinstance(current, FuncOp):
            return current
        current = current.parent_op
    return None


@dataclass(eq=False, repr=False, slots=True)
class AffineForOp(Operation):
    induction_variable: Value | None = None
    lower: AffineBound | None = None
    upper: AffineBound | None = None
    step: int | None = 1
    step_span: Span | None = None
    iter_args: list[tuple[Value, Use]] = field(default_factory=list)

    @property
    def body(self) -> Region | None:
        return self.regions[0] if self.regions else None


@dataclass(eq=False, repr=False, slots=True)
class AffineIfOp(Operation):
    condition: MapRef | None = None
    dims: list[Use] = field(default_factory=list)
    symbols: list[Use] = field(default_factory=list)

    @property
    def then_region(self) -> Region | None:
        return self.regions[0] if self.regions else None

    @property
    def else_region(self) -> Region | None:
        return self.regions[1] if len(self.regions) > 1 else None


@dataclass(eq=False, slots=True)
class ParallelBound:
    """One entry of an affine.parallel bound list: an expression, or `max(...)`/`min(...)`."""

    span: Span
    exprs: list[Subscripts] = field(default_factory=list)
    kind: str | None = None  # "max" | "min" | None


@dataclass(eq=False, repr=False, slots=True)
class AffineParallelOp(Operation):
    induction_variables: list[Value] = field(default_factory=list)
    lower: list[ParallelBound] = field(default_factory=list)
    upper: list[ParallelBound] = field(default_factory=list)
    lower_span: Span | None = None
    upper_span: Span | None = None
    steps: list[int] = field(default_factory=list)
    steps_span: Span | None = None
    reductions: list[str] = field(default_factory=list)
    reductions_span: Span | None = None

    @property
    def body(self) -> Region | None:
        return self.regions[0] if self.regions else None


@dataclass(eq=False, repr=False, slots=True)
class AffineApplyOp(Operation):
    """affine.apply, affine.min and affine.max."""

    map_ref: MapRef | None = None
    dims: list[Use] = field(default_factory=list)
    symbols: list[Use] = field(default_factory=list)


@dataclass(eq=False, repr=False, slots=True)
class AffineAccessOp(Operation):
    """affine.load/store/vector_load/vector_store/prefetch."""

    memref: Use | None = None
    stored_value: Use | None = None
    subscripts: Subscripts | None = None
    memref_type: Type | None = None
    memref_type_span: Span | None = None
    vector_type: Type | None = None
    is_write: bool = False
    map_ref: MapRef | None = None  # the `map` attribute of the generic form


@dataclass(eq=False, repr=False, slots=True)
class AffineDmaOp(Operation):
    """affine.dma_start and affine.dma_wait: several affine accesses."""

    accesses: list[tuple[Use, Subscripts, str]] = field(
        default_factory=list
    )  # (memref, subs, role)
    memref_types: list[Type] = field(default_factory=list)
    types_span: Span | None = None
    num_elements: Use | None = None


@dataclass(eq=False, repr=False, slots=True)
class AffineYieldOp(Operation):
    pass


@dataclass(eq=False, repr=False, slots=True)
class IndexBasisOp(Operation):
    """affine.delinearize_index / affine.linearize_index."""

    indices: list[Use] = field(default_factory=list)
    basis: list[Use | int] = field(default_factory=list)
    basis_span: Span | None = None
    disjoint: bool = False


@dataclass(eq=False, repr=False, slots=True)
class MemRefAllocOp(Operation):
    dynamic_sizes: list[Use] = field(default_factory=list)
    symbol_operands: list[Use] = field(default_factory=list)
    memref_type: Type | None = None
    type_span: Span | None = None


@dataclass(eq=False, repr=False, slots=True)
class MemRefAccessOp(Operation):
    """memref.load / memref.store (indices are plain SSA values)."""

    memref: Use | None = None
    stored_value: Use | None = None
    index_nodes: list[Node] = field(default_factory=list, repr=False)
    indices: list[Use] = field(default_factory=list)
    indices_span: Span | None = None
    memref_type: Type | None = None
    is_write: bool = False


@dataclass(eq=False, repr=False, slots=True)
class MemRefDimOp(Operation):
    source: Use | None = None
    index: Use | int | None = None
    source_type: Type | None = None


# -- documents ------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class AliasDef:
    """`#name = ...` or `!name = ...` at the top level."""

    name: str
    span: Span
    name_span: Span
    kind: str  # map | set | legacy_map | legacy_set | attribute | type
    value_span: Span
    node: Node | None = field(default=None, repr=False)
    map: AffineMap | None = None
    set: IntegerSet | None = None
    type: Type | None = None


@dataclass(eq=False, slots=True)
class TopLevelItem:
    """One top-level item of a document: an operation or an alias definition."""

    span: Span
    operation: Operation | None = None
    alias: AliasDef | None = None
    used_aliases: set[str] = field(default_factory=set)
    unresolved: list[Use] = field(default_factory=list)
    redefinitions: list[tuple[Value, Value]] = field(default_factory=list)  # (new, earlier)
    dominance_violations: list[Use] = field(default_factory=list)
    # The `#`/`!` names the item's syntax refers to, once looked up (None: not yet);
    # see `affine_lsp.checks.rules.aliases.referenced_aliases`.
    referenced_aliases: frozenset[str] | None = None


@dataclass(eq=False, slots=True)
class ModuleModel:
    """All top-level items of one document (or one `// -----` chunk), and the
    dialects they were modelled with (what re-models or checks their text uses)."""

    items: list[TopLevelItem] = field(default_factory=list)
    # (new, earlier) for results of top-level operations whose name is already taken
    # by an earlier top-level result; redefinitions inside an item are on the item.
    redefinitions: list[tuple[Value, Value]] = field(default_factory=list)
    dialects: Dialects = UPSTREAM

    def aliases(self) -> Iterator[AliasDef]:
        for item in self.items:
            if item.alias is not None:
                yield item.alias

    def alias_table(self) -> dict[str, AliasDef]:
        """First definition of each alias name."""
        table: dict[str, AliasDef] = {}
        for alias in self.aliases():
            table.setdefault(alias.name, alias)
        return table

    def operations(self) -> Iterator[Operation]:
        for item in self.items:
            if item.operation is not None:
                yield item.operation

    def walk(self) -> Iterator[Operation]:
        for op in self.operations():
            yield from op.walk()
