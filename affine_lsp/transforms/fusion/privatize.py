"""Shrink an intermediate buffer to what one iteration of the fused loops uses.

A local allocation written by the first nest and used only by the two nests (and
deallocs) does not outlive the fused code. After fusion at depth `d`, each
iteration `c` of the outer `d` loops touches a box of it starting at `lo(c)`;
the buffer becomes that box (`memref<1xf32>` for an element-wise chain) and
every access `T[e]` becomes `T[e - lo(c)]`. The allocation keeps its name and
place; only its type changes. The box is computed from the slice plan (what
the copy will run) and the second nest's accesses; the rewritten text is then
checked like any fused code, bounds included.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    FuncOp,
    MemRefAllocOp,
    MemRefType,
    Operation,
    Value,
)
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    Statement,
    Window,
    form_of_aff,
    is_under,
    pieces,
    render_isl,
    render_mlir,
    single_aff,
)
from affine_lsp.syntax import Span
from affine_lsp.transforms.fusion.copy import Copy
from affine_lsp.transforms.fusion.slicing import SlicePlan

_CONTEXT = "_c"  # prefix of the renamed context dims while composing


def candidates(window: Window, first: Operation, second: Operation) -> list[Value]:
    """Buffers the first nest writes that only the two nests use (static local allocs)."""
    found: list[Value] = []
    for statement in window.statements:
        memref = statement.memref
        if not statement.is_write or not is_under(statement.op, first) or memref in found:
            continue
        alloc = memref.defining_op
        if not isinstance(alloc, MemRefAllocOp) or alloc.symbol_operands:
            continue
        declared = alloc.memref_type
        if not isinstance(declared, MemRefType) or declared.shape is None:
            continue
        if declared.layout is not None or alloc.type_span is None:
            continue
        if all(d == 1 for d in declared.shape):
            continue  # as small as it gets
        if not isinstance(alloc.parent_op, FuncOp) and alloc.parent_block is not first.parent_block:
            continue
        if all(_usable(use, first, second) for use in memref.uses):
            found.append(memref)
    return found


def _usable(use, first: Operation, second: Operation) -> bool:
    user = use.user
    if user is None:
        return False
    if user.name == "memref.dealloc":
        return True
    if not (is_under(user, first) or is_under(user, second)):
        return False
    return isinstance(user, AffineAccessOp) and user.vector_type is None and use.role == "memref"


@dataclass
class Private:
    """The edits that make one buffer private: in the copy and in the document."""

    memref: Value
    shape: tuple[int, ...]
    copy_edits: list[TextEdit] = field(default_factory=list)
    document_edits: list[TextEdit] = field(default_factory=list)


class Privatizer:
    def __init__(
        self,
        session: IslSession,
        window: Window,
        plan: SlicePlan,
        copy: Copy,
        first: AffineForOp,
        second: AffineForOp,
    ) -> None:
        self.session = session
        self.window = window
        self.plan = plan
        self.copy = copy
        self.first = first
        self.second = second
        self.depth = plan.depth
        assert plan.prefix is not None
        self.prefix = plan.prefix

    def _copy_cells(self, statement: Statement) -> tuple[isl.Map, list[str]]:
        """Context of the copy (c dims, then its loops) -> elements `statement` touches."""
        loops = [lv.op for lv in statement.domain.levels if isinstance(lv.op, AffineForOp)]
        innermost = self.plan.plan_of(loops[-1])
        dims, constraints = innermost.inner
        values = []
        for loop in loops:
            loop_plan = self.plan.plan_of(loop)
            single = loop_plan.value
            values.append(f"({single})" if single is not None else loop_plan.name)
        text = " and ".join(self.prefix.constraints + constraints) or "true"
        params = ", ".join(self.plan.params)
        source = self.session.map(
            f"[{params}] -> {{ [{', '.join(dims)}] -> {statement.name}[{', '.join(values)}]"
            f" : {text} }}"
        )
        cells = self.session.run(lambda: source.apply_range(statement.access))
        return cells, dims

    def privatize(self, memref: Value) -> Private | None:
        alloc = memref.defining_op
        assert isinstance(alloc, MemRefAllocOp) and isinstance(alloc.memref_type, MemRefType)
        statements = [s for s in self.window.statements if s.memref is memref]
        footprint = None
        renders: list[tuple[Statement, isl.Map, list[str]]] = []
        for statement in statements:
            if is_under(statement.op, self.first):
                cells, dims = self._copy_cells(statement)
            elif is_under(statement.op, self.second):
                cells, dims = statement.access, list(statement.domain.dims)
                if len(dims) < self.depth or statement.lanes:
                    return None
            else:
                return None
            renders.append((statement, cells, dims))
            count = cells.dim(isl.dim_type.in_)
            part = cells.project_out(isl.dim_type.in_, self.depth, count - self.depth)
            part = part.reset_tuple_id(isl.dim_type.in_)
            for position in range(self.depth):
                part = part.set_dim_name(isl.dim_type.in_, position, f"_d{position}")
            footprint = part if footprint is None else footprint.union(part)
        if footprint is None:
            return None
        offsets: list[AffineForm] = []
        shape: list[int] = []
        for position in range(footprint.dim(isl.dim_type.out)):
            low = self.session.run(lambda p=position: single_aff(footprint.dim_min(p)))
            if low is None:
                return None
            high = footprint.dim_max(position)
            extent = self.session.run(
                lambda h=high, lo=low: h.sub(isl.PwAff.from_aff(lo)).max_val()
            )
            form = form_of_aff(low)
            if not extent.is_int() or form is None:
                return None
            offsets.append(form)
            shape.append(int(extent.to_python()) + 1)
        declared = alloc.memref_type
        if tuple(shape) == declared.shape:
            return None
        new_type = str(MemRefType(tuple(shape), declared.element, None, declared.memory_space))
        private = Private(memref, tuple(shape))
        for statement, cells, dims in renders:
            op = statement.op
            assert isinstance(op, AffineAccessOp)
            if op.subscripts is None or op.memref_type_span is None:
                return None
            subscripts = self._subscripts(statement, cells, dims, offsets)
            if subscripts is None:
                return None
            edits = private.copy_edits if is_under(op, self.first) else private.document_edits
            edits.append(TextEdit(op.subscripts.span, f"[{subscripts}]"))
            edits.append(TextEdit(op.memref_type_span, new_type))
        assert alloc.type_span is not None
        # `memref.alloc(%n) : memref<?xf32>` loses its sizes with its dynamic shape.
        spelled = "memref.alloca" if alloc.name == "memref.alloca" else "memref.alloc"
        whole = Span(alloc.name_span.start_byte, alloc.type_span.end_byte)
        private.document_edits.append(TextEdit(whole, f"{spelled}() : {new_type}"))
        for use in memref.uses:
            if use.user is not None and use.user.name == "memref.dealloc":
                span = _dealloc_type_span(use.user)
                if span is not None:
                    private.document_edits.append(TextEdit(span, new_type))
        return private

    def _subscripts(
        self, statement: Statement, cells: isl.Map, dims: list[str], offsets: list[AffineForm]
    ) -> str | None:
        for position, name in enumerate(dims):
            cells = cells.set_dim_name(isl.dim_type.in_, position, name)
        found = self.session.run(lambda: pieces(cells.as_pw_multi_aff()))
        if len(found) != 1:
            return None
        multi = found[0]
        in_copy = is_under(statement.op, self.first)
        names: dict[str, str] = {}
        for k, loop in enumerate(self.plan.consumer_loops):
            assert loop.induction_variable is not None
            names[f"_d{k}"] = loop.induction_variable.name
        if in_copy:
            for loop_id, name in self.copy.iv_names.items():
                names[self.plan.loops[loop_id].name] = name
        else:
            for k, iv in enumerate(statement.domain.ivs):
                names[f"_d{k}"] = iv.display_name

        def ssa(name: str) -> str:
            if name in names:
                return names[name]
            value = self.window.names.value(name)
            if value is None:
                raise NotAffine(f"unknown name {name} in a private subscript")
            return value.display_name

        # Simplify each subscript on the iterations that run it (strides make some
        # differences constant: `y - 2 * floor(y / 2)` is 0 for even y).
        domain = cells.domain().reset_tuple_id()
        params = ", ".join(self.plan.params)
        texts = []
        for position, offset in enumerate(offsets):
            form = form_of_aff(multi.get_aff(position))
            if form is None:
                return None
            difference = render_isl(form.minus(offset))
            source = f"[{params}] -> {{ [{', '.join(dims)}] -> [({difference})] }}"
            piecewise = self.session.run(
                lambda s=source: isl.PwAff.read_from_str(self.session.ctx, s).gist(domain)
            )
            simplified = single_aff(piecewise)
            simple_form = form_of_aff(simplified) if simplified is not None else None
            texts.append(render_mlir(simple_form or form.minus(offset), ssa))
        return ", ".join(texts)


def _dealloc_type_span(op: Operation) -> Span | None:
    body = op.node.child_by_field_name("body") if op.node is not None else None
    node = body.child_by_field_name("type") if body is not None else None
    return Span(node.start_byte, node.end_byte) if node is not None else None
