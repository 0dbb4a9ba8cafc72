"""Distribute (fission) a loop: one loop per strongly connected component of its
body's dependence graph, in an order that keeps every dependence.

Nodes are the ops of the body that write memory or hold regions; loads and pure
ops go with every node that uses them (they are written again in each loop
that needs them). An edge runs from node X to node Y when an access of X and a
later access of Y (same or later iteration) touch one element, one writing, or
when Y uses a value X defines. Components come out in a topological order that
keeps the original order where it can; a body whose nodes all lie on one cycle
is refused, naming a dependence of that cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from affine_lsp.ir import AffineAccessOp, AffineForOp, Operation
from affine_lsp.transforms.edits import line_start, next_line_start
from affine_lsp.transforms.loops.core import Context, Refused, Spec, check_layout
from affine_lsp.transforms.loops.hoist import is_pure
from affine_lsp.transforms.loops.legality import Dependence
from affine_lsp.transforms.loops.nest import body_ops, header_span, iv_name
from affine_lsp.transforms.loops.proof import Rewrite
from affine_lsp.transforms.loops.text import Renames, indent_of, loop_rewrite


@dataclass
class DistributePlan:
    loop: AffineForOp
    components: list[list[Operation]]  # ops of each new loop, in body order


def title(spec: Spec, loop: AffineForOp) -> str:
    return f"Distribute {iv_name(loop)}"


def _duplicable(op: Operation) -> bool:
    return (isinstance(op, AffineAccessOp) and op.name == "affine.load") or (
        op.name == "memref.load" or is_pure(op)
    )


def _slices(ops: list[Operation]) -> tuple[list[Operation], dict[int, set[int]]]:
    """(nodes, for every op: the nodes it belongs to)."""
    position = {id(op): k for k, op in enumerate(ops)}
    nodes = [op for op in ops if not _duplicable(op)]
    member: dict[int, set[int]] = {id(op): set() for op in ops}
    for index, node in enumerate(nodes):
        member[id(node)].add(index)
        stack = [node]
        while stack:
            current = stack.pop()
            for nested in current.walk():
                for use in nested.operands:
                    value = use.value
                    definer = value.defining_op if value is not None else None
                    if definer is None or id(definer) not in position:
                        continue
                    if _duplicable(definer) and index not in member[id(definer)]:
                        member[id(definer)].add(index)
                        stack.append(definer)
    for op in ops:  # dead loads and pure ops stay with the first node after them
        if not member[id(op)] and nodes:
            later = [k for k, n in enumerate(nodes) if position[id(n)] > position[id(op)]]
            member[id(op)].add(later[0] if later else len(nodes) - 1)
    return nodes, member


def _top_op(op: Operation, ops: list[Operation]) -> Operation | None:
    ids = {id(o) for o in ops}
    current: Operation | None = op
    while current is not None and id(current) not in ids:
        current = current.parent_op
    return current


def _components(count: int, edges: dict[int, set[int]]) -> list[list[int]]:
    """Strongly connected components (Tarjan, iterative)."""
    index_of: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    found: list[list[int]] = []
    counter = 0
    for root in range(count):
        if root in index_of:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index_of[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index_of:
                    index_of[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index_of[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def _order(components: list[list[int]], edges: dict[int, set[int]]) -> list[list[int]]:
    """Topological order of the components, earliest original node first."""
    owner = {node: k for k, component in enumerate(components) for node in component}
    after: dict[int, set[int]] = {k: set() for k in range(len(components))}
    before_count = [0] * len(components)
    for source, targets in edges.items():
        for target in targets:
            a, b = owner[source], owner[target]
            if a != b and b not in after[a]:
                after[a].add(b)
                before_count[b] += 1
    ready = sorted(k for k in range(len(components)) if before_count[k] == 0)
    ordered = []
    while ready:
        ready.sort(key=lambda k: components[k][0])
        current = ready.pop(0)
        ordered.append(components[current])
        for nxt in after[current]:
            before_count[nxt] -= 1
            if before_count[nxt] == 0:
                ready.append(nxt)
    return ordered


def plan(context: Context, spec: Spec, check: bool = True) -> DistributePlan:
    loop = context.loop
    check_layout(context, loop)
    if loop.iter_args:
        raise Refused(f"{iv_name(loop)} carries values through iter_args")
    ops = body_ops(loop)
    nodes, member = _slices(ops)
    if len(nodes) < 2:
        raise Refused(f"nothing to distribute: the body of {iv_name(loop)} has one statement")
    edges: dict[int, set[int]] = {k: set() for k in range(len(nodes))}
    for index, node in enumerate(nodes):  # values flowing between nodes keep them together
        slice_ops = [op for op in ops if index in member[id(op)]]  # through loads, pure ops
        for nested in (n for op in slice_ops for n in op.walk()):
            for use in nested.operands:
                definer = use.value.defining_op if use.value is not None else None
                top = _top_op(definer, ops) if definer is not None else None
                if top is not None and not _duplicable(top) and top is not node:
                    other = nodes.index(top)
                    edges[index].add(other)
                    edges[other].add(index)
    witness: dict[tuple[int, int], Dependence] = {}
    analysis = context.analysis(loop)
    if check:
        for dependence in analysis.dependences():
            source = _top_op(dependence.source.op, ops)
            target = _top_op(dependence.target.op, ops)
            if source is None or target is None:
                continue
            for a in member[id(source)]:
                for b in member[id(target)]:
                    if a != b:
                        edges[a].add(b)
                        witness.setdefault((a, b), dependence)
    components = _components(len(nodes), edges)
    if len(components) == 1:
        reason = f"one cycle of dependences holds the whole body of {iv_name(loop)}"
        backward = next(
            (d for (a, b), d in witness.items() if a > b),
            next(iter(witness.values()), None),
        )
        if backward is not None:
            reason += f": {analysis.describe(backward, backward.relation)}"
        raise Refused(reason)
    ordered = _order(components, edges)
    groups = []
    for component in ordered:
        chosen = set(component)
        groups.append([op for op in ops if member[id(op)] & chosen])
    return DistributePlan(loop, groups)


def _lines_with_comments(data: bytes, op: Operation, floor: int) -> tuple[int, int]:
    """The lines of `op`, with the comment lines directly above it (not above `floor`)."""
    start = line_start(data, op.span.start_byte)
    while start > floor:
        previous = line_start(data, start - 1)
        if not data[previous:start].strip().startswith(b"//"):
            break
        start = previous
    return start, next_line_start(data, op.span.end_byte)


def rewrite(context: Context, plan: DistributePlan) -> Rewrite:
    data = context.data
    loop = plan.loop
    start, end, builder = loop_rewrite(data, loop)
    indent = indent_of(data, loop)
    span = header_span(loop)
    header = data[span.start_byte : span.end_byte].decode().rstrip()
    body_start = next_line_start(data, loop.body.span.start_byte)  # type: ignore[union-attr]
    for group in plan.components:
        builder.line(indent, f"{header} {{")
        for op in group:
            first, last = _lines_with_comments(data, op, body_start)
            builder.copy(first, last, [op], Renames())
        builder.line(indent, "}")
    return Rewrite(start, end, builder.text(), builder.origins)


def summary(context: Context, plan: DistributePlan) -> str:
    return f"distributed {iv_name(plan.loop)} into {len(plan.components)} loops"
