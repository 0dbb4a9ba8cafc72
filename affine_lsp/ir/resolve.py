"""Name resolution: the second pass of building an item's model.

Every use is resolved against the scopes it can see (`NameScope`: one per region,
isolated regions seeing nothing above), in document order, recording
redefinitions, unresolved names and uses before their definition (dominance, not
checked in unreachable blocks: `_Reachability`). An op parsed by the fallback rule
is *skimmed*: the unresolved names of its header become arguments of the region
after them, and unresolved names under it are not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from affine_lsp.ir.model import Block, Operation, Region, TopLevelItem, Use, Value
from affine_lsp.ir.registry import Dialects
from affine_lsp.syntax import Span, text

_GROUP_INDEX = re.compile(r"^(%[^#]+)#(\d+)$")


def split_use_name(name: str) -> tuple[str, int | None]:
    """`%x#1` -> ("%x", 1); `%x` -> ("%x", None)."""
    match = _GROUP_INDEX.match(name)
    if match:
        return match.group(1), int(match.group(2))
    return name, None


class NameScope:
    __slots__ = (
        "values",
        "parent",
        "isolated",
        "region",
        "checks_dominance",
        "depth",
        "floor",
        "skimmed",
        "boundary",
    )

    def __init__(
        self,
        parent: NameScope | None,
        isolated: bool,
        region: Region | None,
        checks_dominance: bool,
        *,
        skimmed: bool = False,
        opaque: bool = False,
    ):
        self.values: dict[str, list[Value]] = {}
        self.parent = parent
        self.isolated = isolated
        self.region = region
        self.checks_dominance = checks_dominance
        self.depth: int = 0 if parent is None else parent.depth + 1
        # The shallowest scope whose values this one sees: isolated regions see
        # their own values and nothing above.
        self.floor: int = self.depth if isolated or parent is None else parent.floor
        # Inside the region of an op whose custom syntax is only skimmed: it may
        # define names the model cannot see, so an unknown name is no error here.
        self.skimmed: bool = skimmed or (parent is not None and parent.skimmed)
        # The depth of the innermost scope of an op whose scoping we do not know
        # (it may be isolated from above): a name defined outside it may be
        # defined again inside it.
        self.boundary: int = self.depth if opaque else (parent.boundary if parent else -1)


class _Path:
    """The scopes from an item's root down to the one being resolved, indexed by
    name, so that finding what a name means costs the same at any nesting depth
    (walking up scope by scope made deep nests quadratic)."""

    __slots__ = ("root", "by_name")

    def __init__(self, root: NameScope) -> None:
        self.root = root  # the module's scope: looked up directly, never entered
        self.by_name: dict[str, list[NameScope]] = {}

    def enter(self, scope: NameScope) -> None:
        for name in scope.values:
            self.by_name.setdefault(name, []).append(scope)

    def leave(self, scope: NameScope) -> None:
        for name in scope.values:
            holders = self.by_name[name]
            holders.pop()
            if not holders:
                del self.by_name[name]

    def holders(self, name: str, scope: NameScope) -> Iterator[NameScope]:
        """The scopes on the path that declare `name` and that `scope` sees,
        innermost first."""
        for holder in reversed(self.by_name.get(name, ())):
            if holder.depth < scope.floor:
                return
            yield holder
        if scope.floor == 0 and name in self.root.values:
            yield self.root


def declare(scope: NameScope, value: Value, item: TopLevelItem, path: _Path | None = None) -> None:
    """Add `value` to `scope` (not yet on `path`), recording it as a redefinition
    when a value of its name is already visible there."""
    name = value.name
    holders: Iterator[NameScope] = iter(())
    if path is not None:
        holders = path.holders(name, scope)
    elif scope.parent is not None:
        raise ValueError("scopes below the root are declared along a path")
    for visible in (scope, *holders):
        earlier = visible.values.get(name)
        if (
            earlier
            and earlier[0] is not value
            and earlier[0].span.start_byte < value.span.start_byte
        ):
            if visible is not scope and _may_shadow(earlier[0], scope, visible):
                break
            if earlier[0].index == 0 and value.index == 0:
                item.redefinitions.append((value, earlier[0]))
            return
    group = scope.values.get(name)
    if group is None:
        scope.values[name] = [value]
    elif value not in group:
        group.append(value)


def _defined_in(block: Block) -> Iterator[Value]:
    """The arguments of a block, then the results of its operations, in order."""
    yield from block.arguments
    for op in block.operations:
        yield from op.results


def _may_shadow(earlier: Value, scope: NameScope, holder: NameScope) -> bool:
    """Whether a name of `holder` (an outer scope) may be defined again in `scope`:
    across an op whose scoping we do not know, or when `earlier` is a result of an
    op whose region `scope` is in (MLIR defines an op's results after its regions,
    so `%0 = linalg.generic ... { %0 = arith.addf ... }` is valid)."""
    if holder.depth < scope.boundary:
        return True
    owner = earlier.defining_op
    if owner is None or not owner.regions:
        return False
    current: NameScope | None = scope
    while current is not None and current is not holder:
        if current.region is not None and current.region.parent_op is owner:
            return True
        current = current.parent
    return False


def _lookup(path: _Path, scope: NameScope, name: str) -> tuple[Value | None, NameScope | None]:
    """The value `name` means in `scope` and the scope holding it (the innermost of
    `path.holders`)."""
    base, index = split_use_name(name) if "#" in name else (name, None)
    holders = path.by_name.get(base)
    if holders:
        visible = holders[-1]
        if visible.depth < scope.floor:
            return None, None
    elif scope.floor == 0 and base in path.root.values:
        visible = path.root
    else:
        return None, None
    wanted = index or 0
    for value in visible.values[base]:
        if value.index == wanted:
            return value, visible
    return None, visible


class _Positions:
    """Positions of operations in their blocks, indexed once per block."""

    __slots__ = ("_tables",)

    def __init__(self) -> None:
        self._tables: dict[int, tuple[Block, dict[int, int]]] = {}

    def of(self, block: Block, op: Operation) -> int:
        """Index of `op` in `block` (-1 if it is not there)."""
        entry = self._tables.get(id(block))
        if entry is None:
            table: dict[int, int] = {}
            for position, candidate in enumerate(block.operations):
                table.setdefault(id(candidate), position)
            entry = self._tables[id(block)] = (block, table)
        return entry[1].get(id(op), -1)

    def within(self, block: Block, op: Operation) -> int:
        """Index in `block` of `op` or of its ancestor that lives in `block` (-1 if none)."""
        current: Operation | None = op
        while current is not None:
            if current.parent_block is block:
                return self.of(block, current)
            current = current.parent_op
        return -1


_OPERATION, _ENTER, _LEAVE = 0, 1, 2


def resolve_names(
    item: TopLevelItem, root: Operation, module_scope: NameScope, dialects: Dialects
) -> None:
    """Resolve every use under `root`, in document order (`dialects` says which ops
    are isolated from above and which have SSA CFG regions)."""
    isolated_ops, ssacfg_ops = dialects.isolated_from_above, dialects.ssacfg_regions
    positions = _Positions()
    reachability = _Reachability()
    path = _Path(module_scope)
    # A depth-first walk with an explicit stack of steps: resolve an operation's
    # operands in its scope, enter a region's scope (declaring what it defines), or
    # leave it once everything in it is resolved.
    work: list[tuple[int, Operation | None, NameScope]] = [(_OPERATION, root, module_scope)]
    while work:
        step, op, scope = work.pop()
        if step == _LEAVE:
            path.leave(scope)
            continue
        if step == _ENTER:
            region = scope.region
            assert region is not None
            # A name seen nowhere yet (most names) is simply added; `_declare` compares
            # the others with what is visible.
            values, seen, root = scope.values, path.by_name, path.root.values
            outermost = scope.floor == 0
            for block in region.blocks:
                for value in _defined_in(block):
                    name = value.name
                    if name in values or name in seen or (outermost and name in root):
                        declare(scope, value, item, path)
                    else:
                        values[name] = [value]
            path.enter(scope)
            work.append((_LEAVE, None, scope))
            children = [(_OPERATION, o, scope) for b in region.blocks for o in b.operations]
            work.extend(reversed(children))
            continue
        assert op is not None
        skimmed = op.kind == "custom_operation"
        by_name = path.by_name
        for use in op.operands:
            # `_lookup`, inlined for the common case (a plain name visible in an
            # entered scope): a model has uses by the ten thousand.
            name = use.name
            holders = by_name.get(name) if "#" not in name else None
            if holders and holders[-1].depth >= scope.floor:
                found_in = holders[-1]
                group = found_in.values[name]
                value = group[0]
                if value.index:
                    value = next((v for v in group if not v.index), None)
            else:
                value, found_in = _lookup(path, scope, name)
            if value is None:
                if skimmed and op.regions:
                    # An op we do not model may define region arguments in its own
                    # syntax (`test.polyfor %i, %j {`, `gpu.launch blocks(%bx) ...`).
                    _implicit_argument(op, use)
                elif not skimmed and not scope.skimmed:
                    item.unresolved.append(use)
                continue
            use.value = value
            value.uses.append(use)
            defining_op = value.defining_op
            if found_in is not None and found_in.checks_dominance and defining_op is not None:
                block = defining_op.parent_block
                if (
                    block is not None
                    and _defined_after(defining_op, block, op, positions)
                    and reachability.reachable(block)
                ):
                    item.dominance_violations.append(use)
        if op.regions:
            isolated = op.name in isolated_ops
            checks_dominance = op.name in ssacfg_ops
            opaque = skimmed or not dialects.knows_scoping(op.name)
            for region in reversed(op.regions):
                inner = NameScope(
                    scope, isolated, region, checks_dominance, skimmed=skimmed, opaque=opaque
                )
                work.append((_ENTER, None, inner))


class _Reachability:
    """Which blocks of a region control can reach from its entry block. MLIR does
    not check dominance in unreachable blocks (`%a = arith.addi %a, %c` is valid
    there)."""

    __slots__ = ("_reached",)

    def __init__(self) -> None:
        self._reached: dict[int, set[int]] = {}

    def reachable(self, block: Block) -> bool:
        region = block.parent_region
        if region is None or len(region.blocks) < 2 or block is region.blocks[0]:
            return True
        reached = self._reached.get(id(region))
        if reached is None:
            reached = self._reached[id(region)] = _reached_blocks(region)
        return id(block) in reached


def _reached_blocks(region: Region) -> set[int]:
    """ids of the blocks reached from the entry through the block names their
    operations mention (successors, in any syntax)."""
    by_label = {b.label: b for b in region.blocks if b.label is not None}
    reached = {id(region.blocks[0])}
    pending = [region.blocks[0]]
    while pending:
        block = pending.pop()
        for op in block.operations:
            for label in _mentioned_blocks(op):
                target = by_label.get(label)
                if target is not None and id(target) not in reached:
                    reached.add(id(target))
                    pending.append(target)
    return reached


def _mentioned_blocks(op: Operation) -> list[str]:
    """`^name`s written in an op's own syntax (not in its regions)."""
    if op.node is None:
        return []
    found = []
    stack = [op.node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "block_id":
            found.append(text(node))
        elif kind not in ("region", "block", "region_list"):
            stack.extend(node.named_children)
    return found


def _implicit_argument(op: Operation, use: Use) -> None:
    """Turn an unresolved name in a skimmed op's header into an argument of the
    region that follows it (`case %it, _ {`: the region after the name); a name
    given again for the same region means that argument."""
    region = next((r for r in op.regions if r.span.start_byte > use.span.start_byte), None)
    if region is None or not region.blocks:
        return
    entry = region.blocks[0]
    op.operands = [u for u in op.operands if u is not use]
    for argument in entry.arguments:
        if argument.name == use.name:
            use.value = argument
            argument.uses.append(use)
            return
    entry.arguments.append(
        Value(
            use.name, use.span, None, "argument", owner_block=entry, arg_number=len(entry.arguments)
        )
    )


def _defined_after(
    defining_op: Operation, block: Block, user: Operation, positions: _Positions
) -> bool:
    """Whether `defining_op` comes at or after the user (or its ancestor) in `block`."""
    if user.parent_block is block and user.span.start_byte != defining_op.span.start_byte:
        # Both in `block`, whose operations are in document order.
        return defining_op.span.start_byte > user.span.start_byte
    region = block.parent_region
    if region is not None and len(region.blocks) == 1:
        # The user is in the region (it sees the value), so under an op A of its only
        # block; the definition is A itself or comes after A exactly when it does not
        # end before the user starts (ops of a block do not overlap).
        return defining_op.span.end_byte > user.span.start_byte
    user_position = positions.within(block, user)
    if user_position < 0:
        return False
    def_position = positions.of(block, defining_op)
    if def_position < 0:
        return False
    return def_position >= user_position


def module_scope_of(items: list[TopLevelItem]) -> NameScope:
    """The implicit module's scope: values defined by top-level operations."""
    scope = NameScope(None, False, None, False)
    holder = TopLevelItem(Span(0, 0))
    for item in items:
        if item.operation is not None:
            for result in item.operation.results:
                declare(scope, result, holder)
    return scope
