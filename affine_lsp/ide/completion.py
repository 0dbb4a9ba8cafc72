"""Completion: op names with snippets, SSA values in scope (in a subscript or a
dim/symbol list, only those valid there), aliases, blocks, symbols, types and
keywords. The context is read from the text before the cursor, which is
usually being typed and so often not yet a valid tree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from affine_lsp.ide.analysis import DocumentAnalysis, ItemView
from affine_lsp.ide.describe import validity, value_origin
from affine_lsp.ide.locate import enclosing_op
from affine_lsp.ide.op_docs import KEYWORDS, OP_DOCS
from affine_lsp.ir import ISOLATED_FROM_ABOVE, Operation, Value
from affine_lsp.syntax import Span

_WORD = re.compile(r"[%#!^@]?[\w$.\-]*$")
_TYPE_POSITION = re.compile(r"(:|->|,\s*\(?|\()\s*$")
_OP_POSITION = re.compile(r"^\s*((%[\w$.\-]+(:\d+)?\s*,\s*)*%[\w$.\-]+(:\d+)?\s*=\s*)?$")

EXTRA_OPS = [
    "arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi", "arith.addf",
    "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf", "arith.cmpi",
    "arith.cmpf", "arith.select", "arith.index_cast", "arith.sitofp", "arith.negf",
    "memref.copy", "memref.subview", "memref.cast", "memref.global", "memref.get_global",
    "scf.yield", "cf.br", "cf.cond_br",
]  # fmt: skip
TYPES = ["index", "i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"]
TYPE_SNIPPETS = {
    "memref": "memref<${1:?x}${2:f32}>",
    "vector": "vector<${1:4x}${2:f32}>",
    "tensor": "tensor<${1:?x}${2:f32}>",
}
_CONTEXT_KEYWORDS = {
    "loop": ["to", "step", "iter_args", "max", "min"],
    "subscript": ["symbol"],
    "map": ["floordiv", "ceildiv", "mod", "symbol"],
    "if": ["else"],
}


@dataclass(frozen=True)
class CompletionItem:
    label: str
    kind: str  # operation | value | alias | block | symbol | type | keyword
    detail: str = ""
    documentation: str = ""
    insert_text: str | None = None
    snippet: bool = False
    replace: Span | None = None


def completions(analysis: DocumentAnalysis, offset: int) -> list[CompletionItem]:
    document = analysis.document
    offset = max(0, min(offset, len(document.data)))
    line_start = document.lines.line_start(document.lines.line_of(offset))
    before = document.slice(line_start, offset)
    found = _WORD.search(before)
    word = found.group(0) if found else ""
    replace = Span(offset - len(word.encode("utf-8")), offset)
    head = before[: len(before) - len(word)]
    sigil = word[:1]
    if sigil == "%":
        items = _values(analysis, offset, head)
    elif sigil in "#!" and sigil:
        items = _aliases(analysis, offset, sigil)
    elif sigil == "^":
        items = _blocks(analysis, offset)
    elif sigil == "@":
        items = _symbols(analysis, offset)
    elif _OP_POSITION.match(head):
        items = _operations()
    elif _TYPE_POSITION.search(head) and not _open_bracket(head):
        items = _types()
    else:
        items = _keywords(_keyword_context(head))
    return [
        CompletionItem(
            i.label, i.kind, i.detail, i.documentation, i.insert_text, i.snippet, replace
        )
        for i in items
    ]


# -- operations, types, keywords -----------------------------------------------------------------


def _operations() -> list[CompletionItem]:
    items = []
    for name, doc in OP_DOCS.items():
        insert = name + doc.snippet if doc.snippet else name
        items.append(
            CompletionItem(
                name, "operation", doc.summary.split(".")[0], doc.summary, insert, bool(doc.snippet)
            )
        )
    items += [CompletionItem(name, "operation") for name in EXTRA_OPS if name not in OP_DOCS]
    return items


def _types() -> list[CompletionItem]:
    items = [CompletionItem(name, "type", "builtin type") for name in TYPES]
    items += [
        CompletionItem(name, "type", f"{name} type", insert_text=snippet, snippet=True)
        for name, snippet in TYPE_SNIPPETS.items()
    ]
    return items


def _keyword_context(head: str) -> str | None:
    opener = _open_bracket(head)
    if opener == "[" or head.rstrip().endswith("symbol("):
        return "subscript"
    if "affine_map<" in head or "affine_set<" in head:
        return "map"
    if re.search(r"\baffine\.(for|parallel)\b", head):
        return "loop"
    if head.strip().startswith("}"):
        return "if"
    return None


def _keywords(context: str | None) -> list[CompletionItem]:
    names = _CONTEXT_KEYWORDS.get(context or "", []) if context else list(KEYWORDS)
    return [CompletionItem(name, "keyword", KEYWORDS.get(name, "")) for name in names]


def _open_bracket(head: str) -> str | None:
    """The innermost bracket of `head` that is still open."""
    closing = {")": "(", "]": "[", ">": "<", "}": "{"}
    stack: list[str] = []
    for character in head:
        if character in "([<{":
            stack.append(character)
        elif character in closing and stack and stack[-1] == closing[character]:
            stack.pop()
    return stack[-1] if stack else None


# -- names ------------------------------------------------------------------------------------


def _binding_kind(head: str) -> str | None:
    """ "dim" / "symbol" when the cursor is where an operand binds to a map input."""
    stripped = head.rstrip()
    if stripped.endswith("symbol("):
        return "symbol"
    opener = _open_bracket(head)
    if opener == "[":
        text_before = head[: head.rfind("[")].rstrip()
        if text_before.endswith(")"):
            return "symbol"  # `#map(%d)[` : the symbol list
        if re.search(r"%[\w$.\-]+$", text_before):
            return "dim"  # `%A[` : affine subscripts
    if opener == "(":
        text_before = head[: head.rfind("(")].rstrip()
        if re.search(r"(#[\w$.\-]+|>)$", text_before):
            return "dim"  # `#map(` / `affine_map<...>(` : the dim list
    if re.search(r"\baffine\.for\b.*(=|\bto)\s*$", stripped + " "):
        return "symbol"  # a shorthand bound
    return None


def _values(analysis: DocumentAnalysis, offset: int, head: str) -> list[CompletionItem]:
    view = analysis.view_at(offset)
    visible = _visible_values(view, offset) if view is not None else []
    kind = _binding_kind(head)
    user = enclosing_op(view.index, offset) if view is not None else None
    items = []
    for value in visible:
        origin = value_origin(analysis.document, value)
        detail = f"{value.type or '?'} — {origin}"
        if kind is not None and user is not None:
            valid, why = validity(value, kind, user, analysis.options.dialects)
            if not valid:
                continue
            detail += f" (valid {'dimension' if kind == 'dim' else 'symbol'}: {why})"
        items.append(CompletionItem(value.display_name, "value", detail))
    return items


def _visible_values(view: ItemView, offset: int) -> list[Value]:
    """Values defined before `offset` in the regions around it (innermost first)."""
    seen: dict[str, Value] = {}
    containers = sorted(
        (
            (op, region)
            for op in view.index.ops
            for region in op.regions
            if region.span.start_byte < offset <= region.span.end_byte
        ),
        key=lambda pair: -pair[1].span.start_byte,
    )
    for op, region in containers:
        block = next(
            (
                b
                for b in reversed(region.blocks)
                if b.span.start_byte <= offset or b is region.blocks[0]
            ),
            None,
        )
        if block is None:
            continue
        for argument in block.arguments:
            seen.setdefault(argument.name, argument)
        for nested in block.operations:
            if nested.span.end_byte <= offset:
                for result in nested.results:
                    seen.setdefault(result.display_name, result)
        if _isolated(op):
            break
    return list(seen.values())


def _isolated(op: Operation) -> bool:
    return op.name in ISOLATED_FROM_ABOVE


def _aliases(analysis: DocumentAnalysis, offset: int, sigil: str) -> list[CompletionItem]:
    chunk = analysis.chunk_at(offset)
    items = []
    for item in chunk.alias_items:
        alias = item.alias
        if alias is None or not alias.name.startswith(sigil):
            continue
        value = analysis.document.slice(alias.value_span.start_byte, alias.value_span.end_byte)
        items.append(CompletionItem(alias.name, "alias", " ".join(value.split())[:100]))
    return items


def _blocks(analysis: DocumentAnalysis, offset: int) -> list[CompletionItem]:
    view = analysis.view_at(offset)
    if view is None:
        return []
    labels = {
        block.label: op.name
        for op in view.index.ops
        for region in op.regions
        if region.span.start_byte <= offset <= region.span.end_byte
        for block in region.blocks
        if block.label
    }
    return [CompletionItem(label, "block", f"block of {owner}") for label, owner in labels.items()]


def _symbols(analysis: DocumentAnalysis, offset: int) -> list[CompletionItem]:
    chunk = analysis.chunk_at(offset).index
    return [
        CompletionItem(r.symbol, "symbol", "function")
        for r in analysis.records
        if r.symbol and r.chunk == chunk
    ]


_PLACEHOLDER = re.compile(r"\$\{\d+:((?:[^}\\]|\\.)*)\}|\$\{\d+\}|\$\d+")


def snippet_to_text(snippet: str) -> str:
    """Plain text of a snippet, for clients without snippet support: placeholders
    keep their default text, tab stops disappear, escapes are resolved."""
    text = _PLACEHOLDER.sub(lambda m: m.group(1) or "", snippet)
    return re.sub(r"\\([$}\\])", r"\1", text)
