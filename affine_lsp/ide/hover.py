"""Hover: what the name or operation under the cursor is, as Markdown.

- loops (`affine.for`, `affine.parallel`, their induction variables): the
  iteration domain of the enclosing nest as an isl set, trip count, step;
- affine accesses: the access relation and the region of the memref touched;
- `affine.if`: the condition and where in the domain it holds;
- maps and sets (aliases, inline, their identifiers): dims, symbols, results;
- SSA values: type, definition, and validity as a dimension / symbol at a use;
- op names: a description and the syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from itertools import islice

from affine_lsp.ide.analysis import DocumentAnalysis, ItemView
from affine_lsp.ide.describe import (
    input_names,
    line_of,
    loop_header,
    map_bindings,
    map_summary,
    use_role,
    validity,
    value_origin,
)
from affine_lsp.ide.locate import (
    ALIAS,
    BLOCK,
    MAP_ID,
    OP_NAME,
    SYMBOL,
    VALUE,
    Target,
    enclosing_map,
    locate,
)
from affine_lsp.ide.navigation import symbol_definition
from affine_lsp.ide.op_docs import op_doc
from affine_lsp.ide.picture import DEFAULT_KINDS, SMALL, draw, markdown_image
from affine_lsp.ir import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineMap,
    AffineParallelOp,
    Dialects,
    FuncOp,
    IndexType,
    IntegerSet,
    Operation,
    Use,
    Value,
    map_from_node,
    set_from_node,
)
from affine_lsp.poly import (
    LoopDescription,
    Unknown,
    budgets,
    chain_of,
    describe_access,
    describe_condition,
    describe_loop,
)
from affine_lsp.syntax import Node, Span

HOVER_STYLE = replace(SMALL, plot=112, panel=48)
"""Pictures in hovers: VS Code's are about 250 pixels high (and scroll); the loop's
lines of text come first."""

HOVER_PICTURE_HEIGHT = 150
"""The most a hover's picture is shown high, below the loop's three lines of text,
so that the whole picture shows in a hover of 250 pixels (larger ones scale down)."""

_SVG_SIZE = re.compile(r'<svg [^>]*?width="(\d+)" height="(\d+)"')

MAX_NEST_DEPTH = 48
"""Deeper nests get no polyhedral description: modelling them costs more than a
keystroke's worth of time, before isl's budget even applies."""


def too_deep(op: Operation) -> Unknown | None:
    nest = (a for a in op.ancestors() if isinstance(a, AffineForOp | AffineParallelOp | AffineIfOp))
    depth = sum(1 for _ in islice(nest, MAX_NEST_DEPTH))  # counting further costs the depth
    if depth >= MAX_NEST_DEPTH:
        return Unknown(f"the nest is more than {MAX_NEST_DEPTH} levels deep")
    return None


def describe_loop_at(op: Operation, view: ItemView) -> LoopDescription | Unknown:
    return too_deep(op) or describe_loop(op, view.model, budgets.HOVER)


@dataclass(frozen=True)
class HoverResult:
    span: Span
    markdown: str


def _code(content: str, language: str = "mlir") -> str:
    return f"```{language}\n{content}\n```"


def hover(analysis: DocumentAnalysis, offset: int, *, pictures: bool = False) -> HoverResult | None:
    """The hover at a byte offset (None where there is nothing to say). With
    `pictures`, the hover of a loop also shows its nest's iteration space as an image
    (for clients whose Markdown shows images: see `settings.hover_pictures`)."""
    view = analysis.view_at(offset)
    if view is None:
        return None
    target = locate(view.node, view.index, offset)
    sections: list[str] | None = None
    if target is not None:
        if target.kind == OP_NAME:
            sections = _op_sections(analysis, view, target, pictures)
        elif target.kind == VALUE:
            sections = _value_sections(analysis, view, target)
        elif target.kind == ALIAS:
            sections = _alias_sections(analysis, view, target)
        elif target.kind == MAP_ID:
            sections = _map_id_sections(view, target)
        elif target.kind == SYMBOL:
            sections = _symbol_sections(analysis, target)
        elif target.kind == BLOCK:
            sections = _block_sections(view, target)
        span = target.span
    if sections is None:
        map_node = enclosing_map(view.node, offset)
        if map_node is None:
            return None
        sections = _inline_map_sections(view, map_node)
        span = Span.of(map_node)
    sections = [s for s in sections if s]
    return HoverResult(span, "\n\n---\n\n".join(sections)) if sections else None


# -- operations ---------------------------------------------------------------------------


def _op_sections(
    analysis: DocumentAnalysis, view: ItemView, target: Target, pictures: bool = False
) -> list[str]:
    op = target.op
    sections = []
    if op is not None:
        sections.append(_polyhedral(analysis, view, op, pictures))
    doc = op_doc(op.name if op is not None else target.name)
    name = op.name if op is not None else target.name
    if doc is not None:
        sections.append(f"**{name}** — {doc.summary}\n\n{_code(doc.syntax, 'text')}")
    else:
        sections.append(f"**{name}**" + (f" ({_signature(op)})" if op is not None else ""))
    return sections


def _signature(op: Operation) -> str:
    operands = len(op.operands)
    results = ", ".join(str(t) for t in op.result_types) or "no results"
    return f"{operands} operand{'' if operands == 1 else 's'} → {results}"


def _polyhedral(
    analysis: DocumentAnalysis, view: ItemView, op: Operation, pictures: bool = False
) -> str:
    """Domain / access / condition facts from the polyhedral core ('' if not affine)."""
    model = view.model
    if isinstance(op, AffineForOp | AffineParallelOp):
        section = _loop_section(analysis, view, op) + _nest_section(view, op)
        if pictures:
            section += _picture_section(analysis, view, op)
        return section
    if isinstance(op, AffineAccessOp):
        answer = too_deep(op) or describe_access(op, model, budgets.HOVER)
        if isinstance(answer, Unknown):
            return f"Access relation unavailable: {answer.reason}"
        return (
            f"**Access relation**\n{_code(answer.relation, 'text')}\n"
            f"**Region touched over the whole domain**\n{_code(answer.footprint, 'text')}"
        )
    if isinstance(op, AffineIfOp):
        answer = too_deep(op) or describe_condition(op, model, budgets.HOVER)
        if isinstance(answer, Unknown):
            return f"Condition unavailable: {answer.reason}"
        return (
            f"**Condition**\n{_code(answer.condition, 'text')}\n"
            f"**Holds on** (the part of the domain running the `then` region)\n"
            f"{_code(answer.holds_on, 'text')}"
        )
    return ""


def _ivs(op: Operation) -> str:
    """The induction variables of a loop, as its hover names them: `%i`, `(%i, %j)`."""
    if isinstance(op, AffineForOp):
        ivs = [op.induction_variable] if op.induction_variable is not None else []
    elif isinstance(op, AffineParallelOp):
        ivs = list(op.induction_variables)
    else:
        ivs = []
    names = ", ".join(iv.display_name for iv in ivs)
    return f"`{names}`" if len(ivs) == 1 else f"`({names})`"


def _loop_section(analysis: DocumentAnalysis, view: ItemView, op: Operation) -> str:
    """The loop's own domain (with the loops around it), trip count and step: a line
    each (a hover's picture comes below them, and hovers are short)."""
    answer = describe_loop_at(op, view)
    header = f"`{loop_header(analysis.document, op)}`"
    if isinstance(answer, Unknown):
        return f"{header}\n\nIteration domain unavailable: {answer.reason}"
    return (
        f"{header}\n\n**Iteration domain** of {_ivs(op)}: `{answer.domain}` · "
        f"**Trip count** `{answer.trip_count}` · **step** `{answer.step}`"
    )


def _nest_section(view: ItemView, op: Operation) -> str:
    """Below a loop with loops in it, the domain of the whole nest it heads (down
    through bodies that hold one loop each, as its picture draws it), for every
    client; '' for a loop with no single loop in it."""
    chain, _folded = chain_of(op)
    if len(chain) == 1:
        return ""
    answer = describe_loop_at(chain[-1], view)
    if isinstance(answer, Unknown):
        return f"\n\nIteration domain of the whole nest unavailable: {answer.reason}"
    return f"\n\n**Iteration domain of the whole nest**: `{answer.domain}`"


def _picture_section(analysis: DocumentAnalysis, view: ItemView, op: Operation) -> str:
    """The nest's iteration space as an image, below the domain text ('' when the nest is
    too deep for hovers; a sentence when it cannot be drawn within the budget)."""
    if too_deep(op) is not None:
        return ""
    drawn = draw(
        op,
        view.model,
        analysis.document,
        style=HOVER_STYLE,
        limits=budgets.HOVER_PICTURE_LIMITS,
        budget=budgets.HOVER_PICTURE,
        kinds=DEFAULT_KINDS,
    )
    if isinstance(drawn, Unknown):
        return f"\n\nPicture unavailable: {drawn.reason}"
    space, svg = drawn
    return f"\n\n{markdown_image(space, fitted(svg, HOVER_PICTURE_HEIGHT))}"


def fitted(svg: str, height: int) -> str:
    """The picture shown at most `height` pixels high, its width in proportion (it
    scales: its `viewBox` keeps its own coordinates)."""
    size = _SVG_SIZE.search(svg)
    if size is None or int(size.group(2)) <= height:
        return svg
    width = round(int(size.group(1)) * height / int(size.group(2)))
    return f'{svg[: size.start(1)]}{width}" height="{height}{svg[size.end(2) :]}'


def iteration_domain(analysis: DocumentAnalysis, offset: int) -> tuple[str | None, str]:
    """The iteration domain of the innermost affine loop around `offset`, or why none."""
    view = analysis.view_at(offset)
    if view is None or view.item.operation is None:
        return None, "No affine loop nest encloses the cursor."
    loops = [
        op
        for op in view.index.ops
        if isinstance(op, AffineForOp | AffineParallelOp)
        and op.span.start_byte <= offset <= op.span.end_byte
    ]
    if not loops:
        return None, "No affine loop nest encloses the cursor."
    loop = max(loops, key=lambda op: op.span.start_byte)
    answer = describe_loop_at(loop, view)
    header = loop_header(analysis.document, loop)
    if isinstance(answer, Unknown):
        return None, f"{header}: {answer.reason}"
    return answer.domain, f"{header} (line {line_of(analysis.document, loop.span.start_byte)})"


# -- values -------------------------------------------------------------------------------


def _value_sections(analysis: DocumentAnalysis, view: ItemView, target: Target) -> list[str]:
    value = target.value
    if value is None:
        return [f"`{target.name}`: not defined here (no value of this name is visible)"]
    type_text = str(value.type) if value.type is not None else "unknown type"
    uses = len(value.uses)
    lines = [
        _code(f"{value.display_name} : {type_text}"),
        f"{_sentence(value_origin(analysis.document, value))}; "
        f"{uses} use{'' if uses == 1 else 's'}.",
    ]
    sections = ["\n\n".join(lines)]
    if target.use is not None and target.use.user is not None:
        sections.append(_validity_section(value, target.use, analysis.options.dialects))
    owner = value.owner_block.parent_op if value.owner_block is not None else None
    if value.role == "induction_variable" and owner is not None:
        sections.append(_loop_section(analysis, view, owner))
    return sections


def _sentence(words: str) -> str:
    return words[:1].upper() + words[1:]


def _validity_section(value: Value, use: Use, dialects: Dialects) -> str:
    assert use.user is not None
    role = use_role(use)
    if role is not None:
        valid, why = validity(value, role, use.user, dialects)
        word = "dimension" if role == "dim" else "symbol"
        mark = "✓ valid" if valid else "✗ not valid"
        return f"Bound as a **{word}** of `{use.user.name}` here: {mark} — {why}."
    if value.type is not None and not isinstance(value.type, IndexType):
        return ""
    parts = []
    for role, word in (("dim", "dimension"), ("symbol", "symbol")):
        valid, why = validity(value, role, use.user, dialects)
        parts.append(f"- as a {word}: {'✓ valid' if valid else '✗ not valid'} — {why}")
    return "Could be bound here\n" + "\n".join(parts)


# -- maps, sets and aliases ------------------------------------------------------------------


def _alias_sections(analysis: DocumentAnalysis, view: ItemView, target: Target) -> list[str]:
    alias = view.context.aliases.get(target.name)
    if alias is None:
        return [f"`{target.name}`: no alias of this name is defined in this file (or chunk)"]
    definition = analysis.document.slice(alias.span.start_byte, alias.span.end_byte)
    sections = [_code(_short(" ".join(definition.split())))]
    value = alias.map or alias.set
    if value is not None:
        kind = "Affine map" if isinstance(value, AffineMap) else "Integer set"
        sections.append(f"{kind}: {map_summary(value)}.")
    elif alias.type is not None:
        sections.append(f"Type alias for `{alias.type}`.")
    if not target.definition:
        sections.append(f"Defined at line {line_of(analysis.document, alias.span.start_byte)}.")
        binding = _binding(view, target.span.start_byte, value)
        if binding:
            sections.append(binding)
    return sections


def _inline_map_sections(view: ItemView, map_node: Node) -> list[str]:
    value = _map_value(view, map_node)
    kind = "Affine map" if isinstance(value, AffineMap) else "Integer set"
    sections = [_code(_short(str(value))), f"{kind}: {map_summary(value)}."]
    binding = _binding(view, map_node.start_byte, value)
    if binding:
        sections.append(binding)
    return sections


def _map_value(view: ItemView, map_node: Node) -> AffineMap | IntegerSet:
    """The IR of a map or set node: the alias's or the op's, built only if neither has it."""
    span = Span.of(map_node)
    alias = view.item.alias
    if alias is not None and alias.value_span == span and (alias.map or alias.set):
        return alias.map or alias.set  # type: ignore[return-value]
    for op in view.index.ops:
        for ref, _dims, _symbols in map_bindings(op):
            if ref.span == span and ref.inline is not None:
                return ref.inline
    return map_from_node(map_node) if "map" in map_node.type else set_from_node(map_node)


def _short(text: str, limit: int = 400) -> str:
    """Text for a hover, cut if it is too long to read there."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _binding(view: ItemView, start: int, value: AffineMap | IntegerSet | None) -> str:
    """How an op binds the map referenced at `start` to its operands."""
    if value is None:
        return ""
    for op in view.index.ops:
        for ref, dims, symbols in map_bindings(op):
            if ref.span.start_byte != start:
                continue
            dim_names, symbol_names = input_names(value)
            names = dim_names + symbol_names
            uses = [*dims, *symbols]
            pairs = [f"`{n}` ← `{u.name}`" for n, u in zip(names, uses, strict=False)]
            return "Operands: " + ", ".join(pairs) if pairs else ""
    return ""


def _map_id_sections(view: ItemView, target: Target) -> list[str]:
    map_node = enclosing_map(view.node, target.span.start_byte)
    if map_node is None:
        return []
    value = _map_value(view, map_node)
    name = target.name
    if name in value.dim_names:
        position, word = value.dim_names.index(name), "dimension"
    elif name in value.symbol_names:
        position, word = value.symbol_names.index(name), "symbol"
    else:
        return [f"`{name}` is neither a dimension nor a symbol of this map"]
    section = f"`{name}`: {word} {position} of `{_short(str(value))}`"
    parent = map_node.parent
    if parent is not None and parent.type in ("attribute_alias_def",):
        return [section]
    return [section, _binding(view, map_node.start_byte, value)]


# -- symbols and blocks ----------------------------------------------------------------------


def _symbol_sections(analysis: DocumentAnalysis, target: Target) -> list[str] | None:
    found = symbol_definition(analysis, target.name)
    if found is None:
        return [f"`{target.name}`: no symbol of this name is defined in this file"]
    view, op = found
    if isinstance(op, FuncOp):
        header = loop_header(analysis.document, op)
        where = f"Defined at line {line_of(analysis.document, op.span.start_byte)}."
        return [_code(header), where]
    return [_code(loop_header(analysis.document, op))]


def _block_sections(view: ItemView, target: Target) -> list[str]:
    for op in reversed(view.index.ops):  # innermost first
        for region in op.regions:
            if target.node.start_byte < region.span.start_byte:
                continue
            if target.node.end_byte > region.span.end_byte:
                continue
            for block in region.blocks:
                if block.label == target.name:
                    arguments = ", ".join(f"{a.name}: {a.type}" for a in block.arguments)
                    label = f"{block.label}({arguments})" if arguments else f"{block.label}"
                    count = len(block.operations)
                    return [
                        _code(label),
                        f"Block of `{op.name}` with {count} op{'' if count == 1 else 's'}.",
                    ]
    return [f"`{target.name}`: no block of this name in the enclosing region"]
