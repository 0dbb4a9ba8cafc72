"""Shrink an intermediate buffer to what one iteration of the fused loops uses.

A local allocation written by the first nest and used only by the two nests (and
deallocs) does not outlive the fused code. After fusion at depth `d`, each
iteration `c` of the outer `d` loops touches a box of it starting at `lo(c)`;
the buffer becomes that box (`memref<1xf32>` for an element-wise chain) and
every access `T[e]` becomes `T[e - lo(c)]`. The allocation keeps its name and
place; only its type changes. The result is checked like any fused code.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.checks.diagnostics import TextEdit
from affine_lsp.ir.model import AffineAccessOp, FuncOp, MemRefAllocOp, Operation, Value
from affine_lsp.ir.types import MemRefType
from affine_lsp.poly.forms import AffineForm, form_of_aff, render_mlir
from affine_lsp.poly.program import Statement, Window
from affine_lsp.poly.session import IslSession, NotAffine
from affine_lsp.syntax.nodes import Span
from affine_lsp.transforms.edits import EditMap, apply_edits


def _under(op: Operation, root: Operation) -> bool:
    current: Operation | None = op
    while current is not None:
        if current is root:
            return True
        current = current.parent_op
    return False


def candidates(window: Window, first: Operation, second: Operation) -> list[Value]:
    """Buffers the first nest writes that only the two nests use (static local allocs)."""
    found = []
    for statement in window.statements:
        memref = statement.memref
        if not statement.is_write or not _under(statement.op, first) or memref in found:
            continue
        alloc = memref.defining_op
        if not isinstance(alloc, MemRefAllocOp) or alloc.operands:
            continue
        declared = alloc.memref_type
        if not isinstance(declared, MemRefType) or declared.shape is None:
            continue
        if declared.layout is not None or any(d is None for d in declared.shape):
            continue
        if not isinstance(alloc.parent_op, FuncOp) and alloc.parent_block is not first.parent_block:
            continue
        usable = True
        for use in memref.uses:
            user = use.user
            if user is None:
                usable = False
            elif user.name == "memref.dealloc":
                continue
            elif not (_under(user, first) or _under(user, second)):
                usable = False
            elif not isinstance(user, AffineAccessOp) or user.vector_type is not None:
                usable = False
            elif use.role != "memref":
                usable = False  # stored as a value, passed on...
        if usable:
            found.append(memref)
    return found


def _dealloc_type_span(op: Operation) -> Span | None:
    body = op.node.child_by_field_name("body") if op.node is not None else None
    node = body.child_by_field_name("type") if body is not None else None
    return Span(node.start_byte, node.end_byte) if node is not None else None


def _single_aff(piecewise: isl.PwAff) -> isl.Aff | None:
    pieces: list[isl.Aff] = []
    piecewise.coalesce().foreach_piece(lambda _s, aff: pieces.append(aff))
    return pieces[0] if len(pieces) == 1 else None


def private_edits(
    session: IslSession,
    fused: Window,
    memref: Value,
    depth: int,
    edits: list[TextEdit],
    data: bytes,
) -> list[TextEdit] | None:
    """The fused edits with `memref` made private to one iteration (None if not possible)."""
    alloc = memref.defining_op
    assert isinstance(alloc, MemRefAllocOp) and isinstance(alloc.memref_type, MemRefType)
    name = memref.display_name
    accesses = [s for s in fused.statements if s.memref.display_name == name]
    if not accesses:
        return None

    def footprint() -> isl.Map | None:
        union = None
        for statement in accesses:
            count = statement.access.dim(isl.dim_type.in_)
            if count < depth:
                return None
            part = statement.access.project_out(isl.dim_type.in_, depth, count - depth)
            part = part.reset_tuple_id(isl.dim_type.in_)
            union = part if union is None else union.union(part)
        return union

    cells = session.run(footprint, "a footprint")
    if cells is None:
        return None
    for position in range(depth):
        cells = cells.set_dim_name(isl.dim_type.in_, position, f"_d{position}")
    offsets: list[AffineForm] = []
    shape: list[int] = []
    for position in range(cells.dim(isl.dim_type.out)):
        low = session.run(lambda p=position: _single_aff(cells.dim_min(p)))
        high = cells.dim_max(position)
        if low is None:
            return None
        extent = session.run(lambda h=high, lo=low: h.sub(isl.PwAff.from_aff(lo)).max_val())
        if not extent.is_int():
            return None
        form = form_of_aff(low)
        if form is None:
            return None
        offsets.append(form)
        shape.append(int(extent.to_python()) + 1)
    declared = alloc.memref_type
    if tuple(shape) == declared.shape:
        return None
    new_type = str(MemRefType(tuple(shape), declared.element, None, declared.memory_space))
    mapping = EditMap(edits)
    document_edits: list[TextEdit] = []
    inserted: dict[int, list[TextEdit]] = {}
    for statement in accesses:
        op = statement.op
        assert isinstance(op, AffineAccessOp)
        if op.subscripts is None or op.memref_type_span is None:
            return None
        subscripts = _subscripts(session, statement, offsets, fused)
        if subscripts is None:
            return None
        for span, text in (
            (op.subscripts.span, f"[{subscripts}]"),
            (op.memref_type_span, new_type),
        ):
            found = mapping.inserted_at(span.start_byte)
            if found is not None:
                edit, relative = found
                inserted.setdefault(id(edit), []).append(
                    TextEdit(Span(relative, relative + span.end_byte - span.start_byte), text)
                )
                continue
            start, _ = mapping.to_old(span.start_byte)
            end, _ = mapping.to_old(span.end_byte)
            if start is None or end is None:
                return None
            document_edits.append(TextEdit(Span(start, end), text))
    assert alloc.type_span is not None
    document_edits.append(TextEdit(alloc.type_span, new_type))
    for use in memref.uses:
        if use.user is not None and use.user.name == "memref.dealloc":
            span = _dealloc_type_span(use.user)
            if span is not None:
                document_edits.append(TextEdit(span, new_type))
    result = []
    for edit in edits:
        local = inserted.get(id(edit))
        if local:
            text = apply_edits(edit.new_text.encode("utf-8"), local).decode("utf-8")
            edit = TextEdit(edit.span, text)
        result.append(edit)
    return result + document_edits


def _subscripts(
    session: IslSession, statement: Statement, offsets: list[AffineForm], fused: Window
) -> str | None:
    pieces: list[isl.MultiAff] = []
    session.run(
        lambda: statement.access.as_pw_multi_aff().foreach_piece(lambda _s, m: pieces.append(m))
    )
    if len(pieces) != 1:
        return None
    multi = pieces[0]
    names = {f"_d{k}": iv.display_name for k, iv in enumerate(statement.domain.ivs)}

    def ssa(name: str) -> str:
        if name in names:
            return names[name]
        value = fused.names.value(name)
        if value is None:
            raise NotAffine(f"unknown name {name}")
        return value.display_name

    texts = []
    for position, offset in enumerate(offsets):
        form = form_of_aff(multi.get_aff(position))
        if form is None:
            return None
        texts.append(render_mlir(form.minus(offset), ssa))
    return ", ".join(texts)
