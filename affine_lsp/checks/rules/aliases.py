"""`#name` / `!name` aliases: uses of undefined aliases (per item), duplicate
and unused definitions (per document)."""

from __future__ import annotations

import re
from functools import cache

import tree_sitter

from affine_lsp.checks.context import CheckContext
from affine_lsp.checks.diagnostics import Fix, Related, Severity, TextEdit
from affine_lsp.checks.registry import register
from affine_lsp.checks.rules.base import few_lookups, item_node, item_rule, module_rule
from affine_lsp.ir import (
    AffineApplyOp,
    AffineForOp,
    AffineIfOp,
    AffineMap,
    IntegerSet,
    MapRef,
    ModuleModel,
    TopLevelItem,
    Use,
)
from affine_lsp.syntax import FIELD, Node, Span, mlir_query, text

UNDEFINED = register("alias-undefined", "use of an alias that no definition declares", "aliases")
DUPLICATE = register("alias-duplicate", "an alias name is defined twice", "aliases")
# Advice, not an error MLIR reports: in the lint group (off with --no-lints).
UNUSED = register(
    "alias-unused",
    "an alias is defined but never used",
    "lint",
    Severity.HINT,
    mlir_checks=False,
)

# `#name` / `!name` inside the opaque body of a dialect type or attribute
# (`!llvm.ptr<#addrspace>`, `#gpu.object<#nvvm.target, "">`).
_NESTED_ALIAS = re.compile(rb"(?<![\w$.])[#!][A-Za-z_][\w$.\-]*")


@cache
def _alias_query() -> tree_sitter.Query:
    return mlir_query("[(attribute_alias) (type_alias)] @alias (dialect_body) @body")


@cache
def _dialect_query() -> tree_sitter.Query:
    # (apart: the patterns with a field make a query over every item half as fast
    # again, and only items with an undefined alias need it)
    return mlir_query("(dialect_type name: (_) @dialect) (dialect_attribute name: (_) @dialect)")


# Where an alias reference can be: every `#name`/`!name` token of an item is a match
# of this pattern (the token's own pattern, without the look-behind of `_NESTED_ALIAS`),
# and so is any such text in comments, strings and the opaque bodies of dialect types
# and attributes.
_ALIAS_SHAPED = re.compile(rb"[#!][A-Za-z_][\w$.\-]*")
# Leaf nodes in which alias-shaped text is no reference.
_NO_REFERENCES = frozenset({"comment", "string", "symbol_ref"})


def _alias_captures(item: TopLevelItem) -> tuple[list[Node], list[Node]]:
    """The alias references of an item (not the name it defines), sorted, and the
    opaque bodies of its dialect types and attributes that may mention aliases.

    Each is found from a match of `_ALIAS_SHAPED` in the item's text: the smallest node
    around it is the reference, a dialect body, or a comment, string or symbol. A
    tree with errors, or any other node there, is searched by a query instead."""
    node = item_node(item)
    if node is None:
        return [], []
    # (an alias definition: the name it defines is no reference)
    defined = node.child_by_field_id(FIELD["name"]) if item.alias is not None else None
    if not node.has_error:
        found = _references_in(node, node.text or b"", defined)
        if found is not None:
            return found
    return queried_references(node, defined)


def queried_references(node: Node, defined: Node | None) -> tuple[list[Node], list[Node]]:
    """`_alias_captures` by a query over every node under `node`: the alias references
    but `defined`, sorted, and every dialect body."""
    captures = tree_sitter.QueryCursor(_alias_query()).captures(node)
    uses = captures.get("alias", [])
    if defined is not None:
        uses = [n for n in uses if n.start_byte != defined.start_byte]
    return sorted(uses, key=lambda n: n.start_byte), captures.get("body", [])


def _references_in(
    node: Node, source: bytes, defined: Node | None
) -> tuple[list[Node], list[Node]] | None:
    """`_alias_captures` read from the matches of `_ALIAS_SHAPED` in `source` (the
    text of `node`); None where a match is in a node of another kind, or where the
    lookups would cost more than a query (`few_lookups`)."""
    matches = list(_ALIAS_SHAPED.finditer(source))
    if not few_lookups(source, len(matches)):
        return None
    base = node.start_byte
    skip = defined.start_byte if defined is not None else -1
    uses: list[Node] = []
    bodies: list[Node] = []
    for match in matches:
        start, end = base + match.start(), base + match.end()
        if start == skip:
            continue
        found = node.descendant_for_byte_range(start, end)
        if found is None:
            return None
        kind = found.type
        if kind in ("attribute_alias", "type_alias"):
            if found.start_byte != start or found.end_byte != end:
                return None
            uses.append(found)
        elif kind == "dialect_body":
            if not bodies or bodies[-1].start_byte != found.start_byte:
                bodies.append(found)
        elif kind not in _NO_REFERENCES:
            return None
    return uses, bodies


def alias_uses(item: TopLevelItem) -> list[Node]:
    """Every `#name`/`!name` reference in an item (not the name it defines)."""
    return _alias_captures(item)[0]


def referenced_aliases(
    item: TopLevelItem, captures: tuple[list[Node], list[Node]] | None = None
) -> frozenset[str]:
    """The names of `alias_uses(item)`, and the aliases mentioned inside the opaque
    bodies of dialect types and attributes, looked up once per item (the search goes
    through the whole item; the item rule, the module rule and the language server
    all ask)."""
    if item.referenced_aliases is None:
        uses, bodies = _alias_captures(item) if captures is None else captures
        names = {text(n) for n in uses}
        for body in bodies:
            raw = body.text or b""
            names.update(m.decode("utf-8", "replace") for m in _NESTED_ALIAS.findall(raw))
        item.referenced_aliases = frozenset(names)
    return item.referenced_aliases


def _map_refs(item: TopLevelItem) -> dict[int, tuple[MapRef, list[Use], list[Use], str]]:
    """Map/set references of ops by start byte, with their operands (for fixes)."""
    refs: dict[int, tuple[MapRef, list[Use], list[Use], str]] = {}
    if item.operation is None:
        return refs
    for op in item.operation.walk():
        if isinstance(op, AffineApplyOp) and op.map_ref is not None:
            refs[op.map_ref.span.start_byte] = (op.map_ref, op.dims, op.symbols, "map")
        elif isinstance(op, AffineIfOp) and op.condition is not None:
            refs[op.condition.span.start_byte] = (op.condition, op.dims, op.symbols, "set")
        elif isinstance(op, AffineForOp):
            for bound in (op.lower, op.upper):
                if bound is not None and bound.map_ref is not None:
                    refs[bound.map_ref.span.start_byte] = (
                        bound.map_ref,
                        bound.dims,
                        bound.symbols,
                        "map",
                    )
    return refs


def _placeholder(kind: str, dims: int, symbols: int) -> str:
    dim_names = ", ".join(f"d{i}" for i in range(dims))
    symbol_names = f"[{', '.join(f's{i}' for i in range(symbols))}]" if symbols else ""
    if kind == "set":
        first = "d0" if dims else ("s0" if symbols else "0")
        return f"affine_set<({dim_names}){symbol_names} : ({first} >= 0)>"
    first = "d0" if dims else ("s0" if symbols else "0")
    return f"affine_map<({dim_names}){symbol_names} -> ({first})>"


def _dialect_names(item: TopLevelItem) -> set[int]:
    """Start bytes of the names of dialect types and attributes (`#foo<...>`,
    `!foo<...>`): they are no aliases. (Found by query: asking each name for its
    parent costs the depth of the tree.)"""
    node = item_node(item)
    if node is None:
        return set()
    captures = tree_sitter.QueryCursor(_dialect_query()).captures(node)
    return {n.start_byte for n in captures.get("dialect", [])}


@item_rule
def undefined_aliases(item: TopLevelItem, ctx: CheckContext) -> None:
    known = ctx.module.aliases
    # (one search of the item: the uses to report are those of the names looked up)
    captures = None if item.referenced_aliases is not None else _alias_captures(item)
    if all(name in known for name in referenced_aliases(item, captures)):
        return
    if captures is None:
        captures = _alias_captures(item)
    named = [(n, text(n)) for n in captures[0]]
    unknown = [(n, name) for n, name in named if name not in known and "." not in name]
    dialect = _dialect_names(item) if unknown else set()
    uses = [(n, name) for n, name in unknown if n.start_byte not in dialect]
    if not uses:
        return
    refs = _map_refs(item) if item.operation is not None else {}
    at = Span(item.span.start_byte, item.span.start_byte)
    # One message and one fix per name and arity (a name is often used many times).
    messages: dict[str, str] = {}
    fixes_for: dict[tuple[str, str, int, int], tuple[Fix, ...]] = {}
    for node, name in uses:
        message = messages.get(name)
        if message is None:
            kind = "type" if name.startswith("!") else "attribute"
            message = messages[name] = (
                f"undefined symbol alias id '{name[1:]}': no {kind} alias {name} is defined "
                "in this file"
            )
        fixes: tuple[Fix, ...] = ()
        ref = refs.get(node.start_byte)
        if ref is not None:
            _, dims, symbols, what = ref
            key = (name, what, len(dims), len(symbols))
            fixes = fixes_for.get(key, ())
            if not fixes:
                definition = f"{name} = {_placeholder(what, len(dims), len(symbols))}\n"
                fixes = fixes_for[key] = (
                    Fix(
                        f"Declare {name} (a placeholder {what} with the arity of this use)",
                        (TextEdit(at, definition),),
                    ),
                )
        ctx.report(UNDEFINED, Span.of(node), message, fixes=fixes)


@module_rule
def duplicate_and_unused(model: ModuleModel, ctx: CheckContext) -> None:
    """Duplicates are errors; unused aliases are advice (off without lints)."""
    first: dict[str, Span] = {}
    used: set[str] = set()
    for item in model.items:
        used.update(referenced_aliases(item))
    for alias in model.aliases():
        kind = "type" if alias.name.startswith("!") else "attribute"
        earlier = first.get(alias.name)
        if earlier is not None:
            ctx.report(
                DUPLICATE,
                alias.name_span,
                f"redefinition of {kind} alias id '{alias.name[1:]}'",
                related=(Related(earlier, "first defined here"),),
            )
            continue
        first[alias.name] = alias.name_span
        if alias.name not in used and ctx.options.lints:
            what = (
                "affine map"
                if isinstance(alias.map, AffineMap)
                else "integer set"
                if isinstance(alias.set, IntegerSet)
                else kind
            )
            ctx.report(
                UNUSED,
                alias.name_span,
                f"{what} alias {alias.name} is never used",
                tags=("unnecessary",),
                fixes=(Fix(f"Remove {alias.name}", (TextEdit(alias.span, ""),)),),
            )
