"""Which SSA values may be bound to affine dimensions and symbols, at a given use.

The rules are the affine dialect's (seed `affine-dialect.txt`, "Restrictions on
Dimensions and Symbols"). A value's use can be bound to a *symbol* if the value
is
  1. a region argument of an op with the AffineScope trait,
  2. defined at the top level of an AffineScope op,
  3. defined outside (so dominating) the AffineScope op enclosing the use,
  4. the result of a constant op,
  5. the result of `affine.apply` whose operands are all valid symbols,
  6. the result of a `dim` op on a memref that is an argument of an AffineScope
     op, or whose dimension is static, or dynamic with a size bound to a valid
     symbol,
  7. (MLIR 22, not in the document) the result of a pure op (no memory effects,
     always speculatable: `arith.addi`, `affine.min`, `gpu.thread_id`, ...) whose
     operands are all valid symbols. An op of a registered dialect whose purity
     we do not know gets the benefit of the doubt; unregistered ops (and the ops
     of the test dialect, which accepts any name) are not pure.
The top level of a file is an implicit `builtin.module`, which MLIR 22 treats
as an AffineScope like an explicit one, so every use has an enclosing scope
(`None` stands for the implicit module). A *dimension*
may be bound to any valid symbol, an induction variable of an enclosing
`affine.for`/`affine.parallel`, or the result of `affine.apply` (and, as MLIR
22 also accepts, `affine.delinearize_index`/`linearize_index`) whose operands
are all valid dimensions. Other results are dimensions only where they are
symbols (`affine.min` of symbols is one, of induction variables is not).
Values of a known type other than `index` are neither.

Evaluation is iterative and memoised per (kind, value, scope); cycles (only
possible in broken input) count as invalid.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import (
    DYNAMIC_INDEX,
    PURE_WITH_CONSTANT_DIVISOR,
    UPSTREAM,
    Dialects,
    IndexType,
    MemRefAllocOp,
    MemRefDimOp,
    MemRefType,
    Operation,
    Use,
    Value,
    attribute_entries,
    integer_array,
    integer_value,
)
from affine_lsp.syntax import FIELD

SYMBOL = "symbol"
DIM = "dim"

_IV_OWNERS = frozenset({"affine.for", "affine.parallel"})
_DIM_OPS = frozenset({"memref.dim", "tensor.dim"})
_INDEX_OPS = frozenset({"affine.delinearize_index", "affine.linearize_index"})


@dataclass(frozen=True)
class Verdict:
    valid: bool
    reason: str = ""  # why not, in plain words ("%m is defined inside ...")
    culprit: Value | None = None  # the value whose definition makes it invalid


@dataclass(frozen=True)
class _Pending:
    """Valid iff every value of `values` is valid as `kind`; `why` explains a failure."""

    kind: str
    values: tuple[Value, ...]
    why: str


VALID = Verdict(True)


def affine_scope(op: Operation, dialects: Dialects = UPSTREAM) -> Operation | None:
    """The nearest op with the AffineScope trait strictly enclosing `op` (None: the
    file's implicit module)."""
    for ancestor in op.ancestors():
        if ancestor.name in dialects.affine_scope:
            return ancestor
    return None


def describe_op(op: Operation | None) -> str:
    """`affine.for %i`, `affine.if`, `"unknown"`: how messages name an op."""
    if op is None:
        return "the module"
    if op.name == "affine.for":
        iv = getattr(op, "induction_variable", None)
        return f"`affine.for {iv.name}`" if iv is not None else "`affine.for`"
    if op.name == "affine.parallel":
        ivs = getattr(op, "induction_variables", [])
        names = ", ".join(v.name for v in ivs)
        return f"`affine.parallel ({names})`"
    if op.name == "func.func":
        return f"`func.func {getattr(op, 'symbol', '')}`".replace(" `", "`")
    return f"`{op.name}`"


def _region_owner(value: Value) -> Operation | None:
    """The op whose region defines `value` (for block arguments: the region's op)."""
    return value.parent_op


def _defined_inside(value: Value, op: Operation) -> bool:
    owner = _region_owner(value)
    while owner is not None:
        if owner is op:
            return True
        owner = owner.parent_op
    return False


def _is_index_or_unknown(value: Value) -> bool:
    return value.type is None or isinstance(value.type, IndexType)


class Validity:
    """Memoised dim/symbol validity of values at uses, with the traits of `dialects`."""

    def __init__(self, dialects: Dialects = UPSTREAM) -> None:
        self.dialects = dialects
        self._memo: dict[tuple[str, int, int], Verdict] = {}
        self._scopes: dict[int, Operation | None] = {}  # id(parent op) -> its AffineScope

    def symbol(self, value: Value, user: Operation) -> Verdict:
        return self._evaluate(SYMBOL, value, self._scope(user))

    def dim(self, value: Value, user: Operation) -> Verdict:
        return self._evaluate(DIM, value, self._scope(user))

    def _scope(self, user: Operation) -> Operation | None:
        """affine_scope(user), memoised per parent op (siblings share it); the walk up
        stops at the first ancestor already known, so a deep nest costs its depth once."""
        chain: list[Operation] = []
        current = user.parent_op
        found: Operation | None = None
        scopes = self.dialects.affine_scope
        while current is not None:
            key = id(current)
            if key in self._scopes:
                found = self._scopes[key]
                break
            if current.name in scopes:
                found = current
                break
            chain.append(current)
            current = current.parent_op
        for op in chain:
            self._scopes[id(op)] = found
        if current is not None:
            self._scopes.setdefault(id(current), found)
        return found

    # -- evaluation ---------------------------------------------------------------

    def _evaluate(self, kind: str, value: Value, scope: Operation | None) -> Verdict:
        scope_id = id(scope)
        root = (kind, id(value), scope_id)
        known = self._memo.get(root)
        if known is not None:
            return known
        local = self._local(kind, value, scope)
        if isinstance(local, Verdict):  # decided by the definition alone: most values
            self._memo[root] = local
            return local
        stack: list[tuple[str, Value]] = [(kind, value)]
        expanded: set[tuple[str, int, int]] = set()
        while stack:
            current_kind, current = stack[-1]
            key = (current_kind, id(current), scope_id)
            if key in self._memo:
                stack.pop()
                continue
            local = self._local(current_kind, current, scope)
            if isinstance(local, Verdict):
                self._memo[key] = local
                stack.pop()
                continue
            missing = [
                (local.kind, v)
                for v in local.values
                if (local.kind, id(v), scope_id) not in self._memo
            ]
            if missing and key not in expanded:
                expanded.add(key)
                stack.extend(missing)
                continue
            self._memo[key] = self._combine(local, scope_id)
            stack.pop()
        return self._memo[root]

    def _combine(self, pending: _Pending, scope_id: int) -> Verdict:
        for operand in pending.values:
            verdict = self._memo.get((pending.kind, id(operand), scope_id))
            if verdict is None:  # a cycle through broken input
                return Verdict(
                    False, f"{pending.why} {operand.display_name}, which depends on itself", operand
                )
            if not verdict.valid:
                reason = f"{pending.why} {operand.display_name}"
                if verdict.reason:
                    reason += f" ({verdict.reason})"
                return Verdict(False, reason, verdict.culprit or operand)
        return VALID

    def _local(self, kind: str, value: Value, scope: Operation | None) -> Verdict | _Pending:
        """A verdict from the value's own definition, or what it depends on."""
        if not _is_index_or_unknown(value):
            return Verdict(False, f"{value.display_name} has type {value.type}, not index", value)
        if kind == DIM and value.role == "induction_variable" and value.owner_block is not None:
            owner = value.owner_block.parent_op
            if owner is not None and owner.name in _IV_OWNERS:
                return VALID  # a dimension, whatever it is as a symbol
        symbol = self._local_symbol(value, scope)
        if kind == SYMBOL or (isinstance(symbol, Verdict) and symbol.valid):
            return symbol
        # Dimensions: anything a symbol may be, plus IVs (above) and affine.apply of dims.
        name = value.display_name
        if value.is_block_argument:
            owner = value.owner_block.parent_op if value.owner_block else None
            return Verdict(False, _argument_reason(value, owner), value)
        op = value.defining_op
        if op is None:
            return Verdict(False, f"{name} has no known definition", value)
        if op.name == "affine.apply" or op.name in _INDEX_OPS:
            return _Pending(DIM, tuple(_operand_values(op)), f"{name} is an {op.name} of")
        if isinstance(symbol, _Pending):
            return symbol
        return symbol if not symbol.valid else VALID

    def _local_symbol(self, value: Value, scope: Operation | None) -> Verdict | _Pending:
        dialects = self.dialects
        if _top_level_or_outside(value, scope, dialects):
            return VALID  # rules 1 to 3
        name = value.display_name
        owner = _region_owner(value)
        op = value.defining_op
        if op is not None:
            if op.name in dialects.constant:
                return VALID  # rule 4
            if op.name == "affine.apply":  # rule 5
                return _Pending(SYMBOL, tuple(_operand_values(op)), f"{name} is an affine.apply of")
            if op.name in _DIM_OPS:  # rule 6
                return _dim_op_symbol(op, value, scope, dialects)
            if _may_be_pure(op, dialects):  # rule 7
                return _Pending(SYMBOL, tuple(_operand_values(op)), f"{name} is an {op.name} of")
        if value.is_block_argument:
            return Verdict(False, _argument_reason(value, owner), value)
        return Verdict(
            False,
            f"{name} is defined inside {describe_op(owner)}, not at the top level of "
            f"{describe_op(scope)}",
            value,
        )


def _may_be_pure(op: Operation, dialects: Dialects) -> bool:
    """Whether `op` is pure as MLIR 22 sees it, or may be (a registered dialect's op
    we know nothing about): False only where MLIR would not call it pure."""
    if op.name in dialects.pure:
        return True
    if op.name in dialects.impure or op.dialect not in dialects.registered or op.dialect == "test":
        return False  # unregistered ops (and the test dialect's stand-ins) are not pure
    excluded = PURE_WITH_CONSTANT_DIVISOR.get(op.name)
    if excluded is not None:
        divisor = op.operands[1].value if len(op.operands) > 1 else None
        constant = _constant_int(divisor.defining_op, dialects) if divisor is not None else None
        return constant is not None and constant not in excluded
    return True


def _top_level_or_outside(value: Value, scope: Operation | None, dialects: Dialects) -> bool:
    """Rules 1-3: an argument or top-level value of an AffineScope op (or of the file's
    implicit module), or a value defined outside the scope enclosing the use."""
    owner = _region_owner(value)
    if owner is None or owner.name in dialects.affine_scope:
        return True
    return scope is not None and not _defined_inside(value, scope)


def _operand_values(op: Operation) -> list[Value]:
    return [u.value for u in op.operands if u.value is not None]


def _argument_reason(value: Value, owner: Operation | None) -> str:
    name = value.display_name
    if value.role == "induction_variable":
        return f"{name} is the induction variable of {describe_op(owner)}"
    if value.role == "iter_arg":
        return f"{name} is a loop-carried value (iter_args) of {describe_op(owner)}"
    return f"{name} is a region argument of {describe_op(owner)}"


def _dim_op_symbol(
    op: Operation, value: Value, scope: Operation | None, dialects: Dialects
) -> Verdict | _Pending:
    """Rule 6 for the result of a memref.dim/tensor.dim."""
    name = value.display_name
    if isinstance(op, MemRefDimOp):
        source = op.source.value if op.source is not None else None
        index: int | Use | None = op.index
        declared = op.source_type
    else:  # tensor.dim and the generic form: (source, index) operands
        values = [u.value for u in op.operands]
        source = values[0] if values else None
        index = op.operands[1] if len(op.operands) > 1 else None
        declared = None
    if source is None:
        return Verdict(False, f"{name} is a dim of an unknown value", value)
    if _top_level_or_outside(source, scope, dialects):
        return VALID
    if not isinstance(index, int):
        constant = index.value.defining_op if index is not None and index.value else None
        index = _constant_int(constant, dialects)
    memref_type = source.type if isinstance(source.type, MemRefType) else declared
    if not isinstance(memref_type, MemRefType) or memref_type.shape is None or index is None:
        return Verdict(False, f"{name} is a dim whose dimension cannot be determined", value)
    if not 0 <= index < len(memref_type.shape):
        return Verdict(False, f"{name} is a dim of a dimension the memref does not have", value)
    if memref_type.shape[index] is not None:
        return VALID
    size = _dynamic_size(source, memref_type, index)
    if size is not None:
        return _Pending(
            SYMBOL,
            (size,),
            f"{name} is the dynamic size {index} of {source.display_name}, bound to",
        )
    return Verdict(
        False,
        f"{name} is dimension {index} of {source.display_name}, which is dynamic and not bound "
        "to a valid symbol",
        value,
    )


def _dynamic_size(source: Value, memref_type: MemRefType, index: int) -> Value | None:
    """The SSA value giving dynamic dimension `index` of `source` where its defining
    op says so (memref.alloc/alloca sizes, memref.view sizes, memref.subview sizes),
    in the custom or the generic form."""
    op = source.defining_op
    if op is None:
        return None
    position = sum(1 for d in (memref_type.shape or ())[:index] if d is None)
    if op.kind == "generic_operation":
        sizes = _generic_sizes(op, index)
        if op.name == "memref.subview":
            return sizes[0] if sizes else None
    elif isinstance(op, MemRefAllocOp):
        sizes = [u.value for u in op.dynamic_sizes]
    elif op.name in ("memref.view", "memref.subview") and op.node is not None:
        body = op.node.child_by_field_id(FIELD["body"])
        sizes_node = body.child_by_field_id(FIELD["sizes"]) if body is not None else None
        if sizes_node is None:
            return None
        inside = [
            u
            for u in op.operands
            if sizes_node.start_byte <= u.span.start_byte < sizes_node.end_byte
        ]
        if op.name == "memref.view":
            sizes = [u.value for u in inside]
        else:  # subview: sizes are a mixed list; take the entry of this dimension
            entries = [c for c in sizes_node.named_children if c.type != "comment"]
            if index >= len(entries) or entries[index].type != "value_use":
                return None
            start = entries[index].start_byte
            return next((u.value for u in inside if u.span.start_byte == start), None)
    else:
        return None
    return sizes[position] if position < len(sizes) else None


def _generic_sizes(op: Operation, index: int) -> list[Value | None]:
    """Dynamic size operands of the generic form: all of them for memref.alloc/alloca
    and memref.view, the one of dimension `index` (or none) for memref.subview."""
    attributes = attribute_entries(op.node.child_by_field_id(FIELD["body"]) if op.node else None)
    values = [u.value for u in op.operands]
    segments = integer_array(attributes.get("operandSegmentSizes"))
    if op.name in ("memref.alloc", "memref.alloca"):
        return values[: segments[0]] if segments else values
    if op.name == "memref.view":
        return values[2:]
    if op.name == "memref.subview" and segments and len(segments) == 4:
        static = integer_array(attributes.get("static_sizes")) or []
        if index >= len(static) or static[index] != DYNAMIC_INDEX:
            return []
        before = sum(1 for v in static[:index] if v == DYNAMIC_INDEX)
        position = segments[0] + segments[1] + before
        return values[position : position + 1]
    return []


def _constant_int(op: Operation | None, dialects: Dialects) -> int | None:
    """The value of an `arith.constant N : index`-like op, in either form (None
    otherwise)."""
    if op is None or op.name not in dialects.constant or op.node is None:
        return None
    body = op.node.child_by_field_id(FIELD["body"])
    if body is None:
        return None
    literal = body.child_by_field_id(FIELD["value"]) or attribute_entries(body).get("value")
    return integer_value(literal)
