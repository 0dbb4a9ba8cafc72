"""Where the points of a transformed nest came from, read from memory: generated
code (a skew, a time tile) substitutes the old ivs into the subscripts, so no value
of the new nest holds them. The write of the new nest's innermost loop that
repeats a write of the original nest (same op, same memref, in the same place
among the writes of that loop) touches the element its origin touched: the
origin of a point is the original iteration writing that element (with the old
ivs that the new nest still names taken from it), when that is one iteration.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.ir import ModuleModel, Operation
from affine_lsp.poly.domain import Domain
from affine_lsp.poly.forms import form_of_aff, render_isl
from affine_lsp.poly.isl_util import pieces
from affine_lsp.poly.program import Statement, Window, is_under
from affine_lsp.poly.session import IslSession, PolyError


def _writes_in(statements: list[Statement], innermost: Operation) -> list[Statement]:
    return [s for s in statements if s.is_write and is_under(s.op, innermost)]


def origins_from_writes(
    session: IslSession,
    domain: Domain,
    innermost: Operation,
    statements: list[Statement],
    nest: tuple[Operation, Operation, ModuleModel],
    known: dict[int, str],
) -> list[str]:
    """The old ivs of `nest` (its root, its innermost drawn loop, its model) as isl
    texts over `domain`'s dims, for the points of the new nest whose innermost drawn
    loop is `innermost` and whose accesses are `statements`; `known[k]`: the text of
    the k-th old iv where the new nest still names it. PolyError when not one
    iteration."""
    root, old_innermost, model = nest
    block = root.parent_block
    if block is None:
        raise PolyError("the original nest is not in a block")
    position = block.operations.index(root)
    old = Window(session, block, position, position, model.alias_table(), allow_parallel=True)
    new_writes = _writes_in(statements, innermost)
    old_writes = _writes_in(old.statements, old_innermost)
    pairs = [
        (n, o)
        for n, o in zip(new_writes, old_writes, strict=False)
        if n.op.name == o.op.name and n.memref.display_name == o.memref.display_name
    ]
    if not pairs:
        raise PolyError("no write of the new nest repeats one of the original")
    new, original = pairs[0]
    count = len(domain.dims)
    old_count = sum(1 for _ in old_innermost_ivs(original, old_innermost))
    relation = session.run(
        lambda: new.access.apply_range(original.access.reverse()), "the points' origins"
    )
    relation = relation.project_out(
        isl.dim_type.in_, count, relation.dim(isl.dim_type.in_) - count
    ).project_out(isl.dim_type.out, old_count, relation.dim(isl.dim_type.out) - old_count)
    relation = relation.set_tuple_name(isl.dim_type.in_, "N")
    relation = relation.set_tuple_name(isl.dim_type.out, "O")
    outputs = ", ".join(f"_o{m}" for m in range(old_count))
    for k, text in known.items():
        params = ", ".join(sorted(domain.params | _params(relation)))
        fixed = session.map(
            f"[{params}] -> {{ N[{', '.join(domain.dims)}] -> O[{outputs}] : _o{k} = {text} }}"
        )
        relation = session.run(lambda r=relation, f=fixed: r.intersect(f), "the points' origins")
    function = session.run(lambda: relation.coalesce(), "the points' origins")
    if not function.is_single_valued():
        raise PolyError("a point repeats more than one original iteration")
    found = pieces(function.as_pw_multi_aff())
    if len(found) != 1:
        raise PolyError("the points' origins are piecewise")
    texts = []
    for k in range(old_count):
        aff = found[0].get_aff(k)
        for position, name in enumerate(domain.dims):
            aff = aff.set_dim_name(isl.dim_type.in_, position, name)
        form = form_of_aff(aff)
        if form is None:
            raise PolyError("an origin is not integral")
        texts.append(render_isl(form))
    return texts


def old_innermost_ivs(statement: Statement, innermost: Operation) -> list[object]:
    """The ivs of `statement`'s loops up to `innermost` (included)."""
    found: list[object] = []
    for level in statement.domain.levels:
        found += level.ivs
        if level.op is innermost:
            break
    return found


def _params(relation: isl.Map) -> set[str]:
    return {
        relation.get_dim_name(isl.dim_type.param, k) or ""
        for k in range(relation.dim(isl.dim_type.param))
    }
