"""Definition, references and rename for `%values`, `^blocks`, `#`/`!` aliases,
`@symbols` and the identifiers of maps and sets.

Values and blocks are found in the IR / syntax of their item; aliases and
symbols in every item of their `// -----` chunk whose text mentions the name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.checks import TextEdit
from affine_lsp.ide.analysis import DocumentAnalysis, ItemView
from affine_lsp.ide.describe import defined_inside
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
from affine_lsp.ide.records import ItemRecord
from affine_lsp.ir import ISOLATED_FROM_ABOVE, Operation, Value
from affine_lsp.syntax import Node, Span, mlir_query, text

_VALUE_NAME = re.compile(r"%([A-Za-z_$.\-][\w$.\-]*|\d+)")
_BLOCK_NAME = re.compile(r"\^[\w$.\-]+")
_ALIAS_NAME = re.compile(r"[#!][A-Za-z_][\w$.\-]*")
_SYMBOL_NAME = re.compile(r'@([A-Za-z_][\w$.\-]*|"([^"\\\n]|\\.)*")')
_MAP_ID = re.compile(r"[A-Za-z_][\w$]*")
_MAP_KEYWORDS = frozenset({"floordiv", "ceildiv", "mod", "symbol", "max", "min"})
_SYMBOL_DEFINERS = frozenset({"func_func", "builtin_module", "memref_global"})
_SIGILS = {VALUE: "%", BLOCK: "^", SYMBOL: "@"}


class RenameError(Exception):
    """A rename that cannot be done; the message says why."""


@dataclass(frozen=True)
class Occurrences:
    """Where a name is defined and used (spans of the name itself)."""

    definitions: list[Span]
    references: list[Span]


@cache
def _query(*kinds: str) -> tree_sitter.Query:
    return mlir_query("[" + " ".join(f"({k})" for k in kinds) + "] @n")


def _nodes(node: Node, kinds: tuple[str, ...], name: str) -> list[Node]:
    captured = tree_sitter.QueryCursor(_query(*kinds)).captures(node).get("n", [])
    return sorted((n for n in captured if text(n) == name), key=lambda n: n.start_byte)


def _target(analysis: DocumentAnalysis, offset: int) -> tuple[ItemView, Target] | None:
    view = analysis.view_at(offset)
    if view is None:
        return None
    target = locate(view.node, view.index, offset)
    return (view, target) if target is not None else None


def _chunk_records(analysis: DocumentAnalysis, view: ItemView, name: str) -> list[ItemRecord]:
    """Records of the item's chunk whose text contains `name`."""
    needle = name.encode("utf-8")
    data = analysis.document.data
    return [
        r
        for r in analysis.records
        if r.chunk == view.record.chunk and data.find(needle, r.start, r.end) >= 0
    ]


# -- occurrences per kind ----------------------------------------------------------------------


def _group(value: Value) -> list[Value]:
    """The values named together: a result group `%r:2` or a single value."""
    if value.defining_op is not None and value.group_size > 1:
        return [v for v in value.defining_op.results if v.name == value.name]
    return [value]


def _value_occurrences(target: Target, with_references: bool = True) -> Occurrences | None:
    if target.value is None:
        return None
    size = len(target.value.name.encode("utf-8"))
    group = _group(target.value)
    definitions = _unique([v.span for v in group])  # a group's members share one name
    references = []
    if with_references:
        references = [
            Span(use.span.start_byte, use.span.start_byte + size)
            for value in group
            for use in value.uses
        ]
        references.sort(key=_key)
    return Occurrences(definitions, references)


def _block_occurrences(target: Target) -> Occurrences | None:
    region = target.node.parent
    while region is not None and region.type != "region":
        region = region.parent
    if region is None:
        return None
    definitions: list[Span] = []
    references: list[Span] = []
    stack = list(region.named_children)
    while stack:
        node = stack.pop()
        if node.type == "region":
            continue  # nested regions have their own blocks
        if node.type == "block_id" and text(node) == target.name:
            parent = node.parent
            if parent is not None and parent.type == "block_label":
                definitions.append(Span.of(node))
            else:
                references.append(Span.of(node))
            continue
        stack.extend(node.named_children)
    return Occurrences(sorted(definitions, key=_key), sorted(references, key=_key))


def _alias_occurrences(analysis: DocumentAnalysis, view: ItemView, name: str) -> Occurrences:
    definitions: list[Span] = []
    references: list[Span] = []
    for record in _chunk_records(analysis, view, name):
        top = analysis.node_of(record)
        # Aliases are defined at the top level only: the item's own name, if any
        # (asking each node for its parent would cost the depth of the tree).
        defined = (
            top.child_by_field_name("name")
            if top.type in ("attribute_alias_def", "type_alias_def")
            else None
        )
        for node in _nodes(top, ("attribute_alias", "type_alias"), name):
            defining = defined is not None and node.start_byte == defined.start_byte
            (definitions if defining else references).append(Span.of(node))
    return Occurrences(definitions, references)


def _is_symbol_definition(node: Node) -> bool:
    parent = node.parent
    return (
        parent is not None
        and parent.type in _SYMBOL_DEFINERS
        and parent.child_by_field_name("symbol") == node
    )


def _symbol_occurrences(analysis: DocumentAnalysis, view: ItemView, name: str) -> Occurrences:
    definitions: list[Span] = []
    references: list[Span] = []
    for record in _chunk_records(analysis, view, name):
        for node in _nodes(analysis.node_of(record), ("symbol_ref",), name):
            (definitions if _is_symbol_definition(node) else references).append(Span.of(node))
    return Occurrences(definitions, references)


def _map_id_occurrences(root: Node, target: Target) -> Occurrences | None:
    map_node = enclosing_map(root, target.span.start_byte)
    if map_node is None:
        return None
    definitions: list[Span] = []
    references: list[Span] = []
    for node in _nodes(map_node, ("dim_id", "symbol_id", "affine_id"), target.name):
        (references if node.type == "affine_id" else definitions).append(Span.of(node))
    return Occurrences(definitions, references)


def _occurrences(
    analysis: DocumentAnalysis, view: ItemView, target: Target, with_references: bool = True
) -> Occurrences | None:
    if target.kind == VALUE:
        return _value_occurrences(target, with_references)
    if target.kind == BLOCK:
        return _block_occurrences(target)
    if target.kind == ALIAS:
        return _alias_occurrences(analysis, view, target.name)
    if target.kind == SYMBOL:
        return _symbol_occurrences(analysis, view, target.name)
    if target.kind == MAP_ID:
        return _map_id_occurrences(view.node, target)
    return None


def _key(span: Span) -> int:
    return span.start_byte


def _unique(spans: list[Span]) -> list[Span]:
    return sorted(set(spans), key=_key)


# -- public entry points ------------------------------------------------------------------------


def definition(analysis: DocumentAnalysis, offset: int) -> list[Span]:
    """Where the name at `offset` is defined (empty if nowhere / not a name)."""
    found = _target(analysis, offset)
    if found is None:
        return []
    occurrences = _occurrences(analysis, *found, with_references=False)
    return occurrences.definitions if occurrences is not None else []


def references(analysis: DocumentAnalysis, offset: int, include_declaration: bool) -> list[Span]:
    """Every use of the name at `offset` (and its definitions if asked)."""
    found = _target(analysis, offset)
    if found is None:
        return []
    occurrences = _occurrences(analysis, *found)
    if occurrences is None:
        return []
    spans = occurrences.references
    if include_declaration:
        spans = occurrences.definitions + spans
    return _unique(spans)


def symbol_definition(analysis: DocumentAnalysis, name: str) -> tuple[ItemView, Operation] | None:
    """The view and op defining an `@symbol` (searching every chunk)."""
    needle = name.encode("utf-8")
    data = analysis.document.data
    for record in analysis.records:
        if data.find(needle, record.start, record.end) < 0:
            continue
        for node in _nodes(analysis.node_of(record), ("symbol_ref",), name):
            if not _is_symbol_definition(node):
                continue
            view = analysis.view_of(record)
            body = node.parent
            if view is None or body is None:
                continue
            for op in view.index.ops:
                op_name = body.child_by_field_name("name")
                if (
                    op_name is not None
                    and op.span.start_byte <= body.start_byte <= op.span.end_byte
                    and op.name_span.start_byte == op_name.start_byte
                ):
                    return view, op
    return None


def prepare_rename(analysis: DocumentAnalysis, offset: int) -> tuple[Span, str]:
    """The span to rename and its current text; RenameError if nothing renamable is here."""
    found = _target(analysis, offset)
    if found is None:
        raise RenameError(
            "No renamable name here: place the cursor on a %value, ^block, "
            "#alias, !alias, @symbol or map identifier."
        )
    view, target = found
    if target.kind == OP_NAME:
        raise RenameError("Operation names cannot be renamed.")
    occurrences = _occurrences(analysis, view, target, with_references=False)
    if occurrences is None or not occurrences.definitions:
        raise RenameError(f"{target.name} is not defined here, so it cannot be renamed.")
    size = len(_base_name(target).encode("utf-8"))
    span = Span(target.span.start_byte, target.span.start_byte + size)
    return span, _base_name(target)


def _base_name(target: Target) -> str:
    if target.kind == VALUE and target.value is not None:
        return target.value.name
    return target.name


def rename(analysis: DocumentAnalysis, offset: int, new_name: str) -> list[TextEdit]:
    """The edits renaming the name at `offset`; RenameError if invalid or clashing."""
    prepare_rename(analysis, offset)
    found = _target(analysis, offset)
    assert found is not None
    view, target = found
    new_name = _normalize(target, new_name.strip())
    old_name = _base_name(target)
    if new_name == old_name:
        return []
    _check_clash(analysis, view, target, new_name)
    occurrences = _occurrences(analysis, view, target)
    assert occurrences is not None
    return [
        TextEdit(span, new_name)
        for span in _unique(occurrences.definitions + occurrences.references)
    ]


def _normalize(target: Target, new_name: str) -> str:
    """The new name with the sigil of its kind, or RenameError if it is not valid."""
    if target.kind in _SIGILS and not new_name.startswith(_SIGILS[target.kind]):
        new_name = _SIGILS[target.kind] + new_name
    if target.kind == ALIAS and new_name[:1] not in "#!":
        new_name = target.name[0] + new_name
    pattern = {
        VALUE: _VALUE_NAME,
        BLOCK: _BLOCK_NAME,
        ALIAS: _ALIAS_NAME,
        SYMBOL: _SYMBOL_NAME,
        MAP_ID: _MAP_ID,
    }[target.kind]
    if not pattern.fullmatch(new_name):
        raise RenameError(f"'{new_name}' is not a valid name for this {_noun(target)}.")
    if target.kind == ALIAS and new_name[0] != target.name[0]:
        raise RenameError(f"'{new_name}' would turn a {target.name[0]} alias into another kind.")
    if target.kind == MAP_ID and new_name in _MAP_KEYWORDS:
        raise RenameError(f"'{new_name}' is a keyword of affine expressions.")
    return new_name


def _noun(target: Target) -> str:
    return {
        VALUE: "SSA value",
        BLOCK: "block",
        ALIAS: "alias",
        SYMBOL: "symbol",
        MAP_ID: "map identifier",
    }[target.kind]


def _check_clash(analysis: DocumentAnalysis, view: ItemView, target: Target, new: str) -> None:
    clash = False
    if target.kind == VALUE:
        assert target.value is not None
        scope = _isolated_scope(target.value)
        values = view.index.values.values()
        clash = any(
            v.name == new and (scope is None or defined_inside(v, scope)) for v in values
        ) or any(v.name == new for _, v in view.chunk.values)
    elif target.kind == BLOCK:
        blocks = _block_occurrences(Target(BLOCK, new, target.span, target.node))
        clash = blocks is not None and bool(blocks.definitions)
    elif target.kind == ALIAS:
        clash = new in view.chunk.alias_keys
    elif target.kind == SYMBOL:
        clash = bool(_symbol_occurrences(analysis, view, new).definitions)
    elif target.kind == MAP_ID:
        renamed = Target(MAP_ID, new, target.span, target.node)
        identifiers = _map_id_occurrences(view.node, renamed)
        clash = identifiers is not None and bool(identifiers.definitions)
    if clash:
        raise RenameError(f"'{new}' is already defined here: renaming would clash with it.")


def _isolated_scope(value: Value) -> Operation | None:
    op = value.parent_op
    while op is not None:
        if op.name in ISOLATED_FROM_ABOVE:
            return op
        op = op.parent_op
    return None
