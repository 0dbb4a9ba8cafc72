"""Syntax errors of a tree: one per ERROR or MISSING node, with a readable
message and a tight range (the unexpected token, or the point where a token
is missing); binary input gets one error where it stops being text (`binary`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import tree_sitter

from affine_lsp.syntax.binary import binary_message, binary_start
from affine_lsp.syntax.language import mlir_language, new_parser
from affine_lsp.syntax.nodes import Span, first_leaf, walk

# How expected tokens read in a message.
_TOKEN_NAMES = {
    "ssa_value": "an SSA value",
    "value_use": "an SSA value",
    "value_def": "an SSA value",
    "bare_id": "an identifier",
    "integer": "an integer",
    "float": "a float",
    "string": "a string",
    "symbol_ref": "a symbol (@name)",
    "block_id": "a block label (^bb)",
    "attribute_alias": "an attribute alias (#name)",
    "type_alias": "a type alias (!name)",
    "integer_type": "a type",
    "float_type": "a type",
    "shape": "a shape",
}

_MAX_EXPECTED = 6


@dataclass(frozen=True)
class SyntaxProblem:
    """One syntax error."""

    message: str
    span: Span


def _describe(token: str) -> str:
    if token in _TOKEN_NAMES:
        return _TOKEN_NAMES[token]
    return f"'{token}'"


def _lookahead(state: int) -> dict[str, int] | None:
    """Visible tokens valid in parse `state`, by name (None if unknown)."""
    if state <= 0:
        return None
    iterator = mlir_language().lookahead_iterator(state)
    if iterator is None:
        return None
    language = mlir_language()
    return {
        name: symbol
        for symbol, name in iterator
        if language.node_kind_is_visible(symbol)
        and name not in ("ERROR", "comment", "split_marker", "end")
    }


def _expected_names(tokens: dict[str, int] | None) -> list[str]:
    """Readable names of expected tokens (empty if too many to be useful)."""
    if not tokens:
        return []
    names: list[str] = []
    for name in tokens:
        described = _describe(name)
        if described not in names:
            names.append(described)
    return names if len(names) <= _MAX_EXPECTED else []


_TOKEN_CLASSES = [
    (re.compile(r"%[\w$.\-]+(#\d+)?"), "ssa_value"),
    (re.compile(r"\^[\w$.\-]+"), "block_id"),
    (re.compile(r"@.+"), "symbol_ref"),
    (re.compile(r"#[A-Za-z_][\w$.\-]*"), "attribute_alias"),
    (re.compile(r"![A-Za-z_][\w$.\-]*"), "type_alias"),
    (re.compile(r"(0x[0-9a-fA-F]+|[0-9]+)"), "integer"),
    (re.compile(r"[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?"), "float"),
    (re.compile(r'".*"', re.S), "string"),
    (re.compile(r"[su]?i[0-9]+"), "integer_type"),
    (re.compile(r"f[0-9]+\w*|bf16|tf32"), "float_type"),
    (re.compile(r"[A-Za-z_][\w$.]*"), "bare_id"),
]

# Probing re-parses prefixes of the broken operation; these bound the work.
_MAX_PROBE_TOKENS = 48
_MAX_PROBE_BYTES = 4096


# Names the grammar gives a token class where it is aliased.
_ALIASES = {
    "ssa_value": {"value_def", "value_use"},
    "bare_id": {"dim_id", "symbol_id", "affine_id", "legacy_keyword"},
    "integer": {"dimension"},
}


def _token_names(spelling: str) -> set[str]:
    """Grammar symbols (and their aliases) a token with this spelling could be."""
    names = {spelling}
    for pattern, name in _TOKEN_CLASSES:
        if pattern.fullmatch(spelling):
            names.add(name)
            names |= _ALIASES.get(name, set())
    if spelling in ("mod", "floordiv", "ceildiv"):
        names |= {"dim_id", "symbol_id", "affine_id"}
    return names


_EXTRAS = ("comment", "split_marker")


def _leaves(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [
        n for n in walk(node) if n.child_count == 0 and not n.is_missing and n.type not in _EXTRAS
    ]


def _probe_start(node: tree_sitter.Node, path: list[tree_sitter.Node]) -> int:
    """Where the broken operation starts: the innermost operation around the error.

    `path` holds the ancestors of `node` (root first), as the walk that found it
    went down: a node's `parent` is searched from the root each time it is
    asked for, which made errors inside deep expressions quadratic."""
    for ancestor in reversed(path):
        if ancestor.type == "operation":
            return ancestor.start_byte
        if ancestor.type in ("region", "source_file"):
            break
    return node.start_byte


def _state_after(
    parser: tree_sitter.Parser, prefix: bytes, token_start: int | None = None
) -> int | None:
    """The parse state after `prefix`: the state in which its next token is read.

    A comment is appended and the prefix parsed on its own. Comments are extras:
    they are valid in every state and never trigger error recovery, so the
    comment's `parse_state` is the state the parser reached at the end of the
    prefix, whose lookahead set is what the grammar accepts next. With
    `token_start` (where the prefix's last token starts), None also when the text
    before that token did not parse: error recovery then reached a state anyway.
    """
    probe = prefix + b" //\n"
    tree = parser.parse(probe)
    at = len(prefix) + 1
    node = tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type != "comment":
        node = node.parent
    if node is None or node.start_byte != at:
        return None
    if token_start is not None and _error_before(tree.root_node, token_start):
        return None
    return node.parse_state if node.parse_state > 0 else None


def _error_before(root: tree_sitter.Node, at: int) -> bool:
    """Whether an ERROR node ends at or before byte `at`: the prefix did not parse
    (error recovery may still reach a state for what follows it)."""
    stack = [root] if root.has_error else []
    while stack:
        node = stack.pop()
        if node.type == "ERROR" and node.end_byte <= at:
            return True
        stack.extend(c for c in node.children if c.has_error and c.start_byte < at)
    return False


# A spelling of each token class, to try it after a prefix.
_SAMPLES = {
    "ssa_value": "%x",
    "value_def": "%x",
    "value_use": "%x",
    "bare_id": "x",
    "dim_id": "d0",
    "symbol_id": "s0",
    "affine_id": "d0",
    "integer": "0",
    "float": "0.0",
    "string": '""',
    "attribute_alias": "#a",
    "type_alias": "!a",
    "symbol_ref": "@a",
    "block_id": "^bb0",
    "integer_type": "i32",
    "float_type": "f32",
    "shape": "4x",
}
_WORD = re.compile(rb"[\w$.]")
_MAX_TRIED = 48


def _viable(parser: tree_sitter.Parser, prefix: bytes, token: bytes) -> bool:
    """Whether the grammar accepts `token` after `prefix` (the op's text before it)."""
    text = _join_token(prefix, token.decode("utf-8", errors="replace"))
    return _state_after(parser, text, len(text) - len(token)) is not None


def _join_token(prefix: bytes, token: str) -> bytes:
    data = token.encode()
    if prefix and data and _WORD.match(prefix[-1:]) and _WORD.match(data[:1]):
        return prefix + b" " + data
    return prefix + data


def _failure_point(
    node: tree_sitter.Node, source: bytes, path: list[tree_sitter.Node]
) -> tuple[tree_sitter.Node | None, list[str]]:
    """The token where parsing failed, and what the grammar expected there.

    Tokens inside an ERROR node carry parse states from error recovery, so the
    broken operation is re-parsed prefix by prefix: the first token that the
    grammar does not accept after the prefix before it is the culprit. Parser
    states can be shared between contexts, so acceptance is confirmed by
    parsing the prefix with the token, and each candidate of the expected list
    is tried the same way.
    """
    start = _probe_start(node, path)
    candidates = _leaves(node)
    after = node.next_sibling
    while after is not None and after.child_count:
        after = after.children[0]
    if after is not None and not after.is_missing and after.type not in _EXTRAS:
        candidates.append(after)  # (a comment is never unexpected)
    if (
        not candidates
        or len(candidates) > _MAX_PROBE_TOKENS
        or candidates[-1].end_byte - start > _MAX_PROBE_BYTES
    ):
        return None, []
    parser = new_parser()
    for leaf in candidates:
        if leaf.start_byte < start:
            continue
        prefix = source[start : leaf.start_byte]
        state = _state_after(parser, prefix)
        tokens = _lookahead(state) if state is not None else None
        if tokens is None:
            return None, []
        spelling = source[leaf.start_byte : leaf.end_byte].decode("utf-8", errors="replace")
        if _token_names(spelling) & tokens.keys() and _viable(parser, prefix, spelling.encode()):
            continue
        expected = []
        if len(tokens) <= _MAX_TRIED:
            expected = [
                name
                for name in tokens
                if (name in _SAMPLES or not _is_named(name))
                and _viable(parser, prefix, _SAMPLES.get(name, name).encode())
            ]
        return leaf, _expected_names(dict.fromkeys(expected, 0))
    return None, []


@cache
def _anonymous_names() -> frozenset[str]:
    """Spellings of the grammar's keywords and punctuation."""
    language = mlir_language()
    names = (
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if not language.node_kind_is_named(i) and language.node_kind_is_visible(i)
    )
    return frozenset(name for name in names if name is not None)


def _is_named(name: str) -> bool:
    """A named grammar symbol (a token class or a rule), not a keyword."""
    return name not in _anonymous_names()


def _join(words: list[str]) -> str:
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _missing_message(node: tree_sitter.Node) -> str:
    return f"expected {_describe(node.type)}"


def _error_message(
    node: tree_sitter.Node, source: bytes, path: list[tree_sitter.Node]
) -> tuple[str, tree_sitter.Node]:
    """The message of an ERROR node (whose ancestors are `path`) and its leaf."""
    leaf, expected = _failure_point(node, source, path)
    if leaf is None:
        leaf = first_leaf(node)
        expected = []
    if leaf.start_byte >= leaf.end_byte:
        what = "end of input"
    else:
        raw = leaf.text.decode("utf-8", errors="backslashreplace") if leaf.text else ""
        what = f"'{raw[:40]}'"
    message = f"unexpected {what}"
    if expected:
        message += f"; expected {_join(expected)}"
    return message, leaf


def syntax_problems(
    tree: tree_sitter.Tree, source: bytes | bytearray | None = None
) -> list[SyntaxProblem]:
    """Every syntax error in `tree`, outermost ERROR nodes only, in document order;
    for binary input, those before it stops being text and one error there.

    `source` is the text the tree was parsed from (defaults to the tree's own).
    """
    root = tree.root_node
    unclosed = _unclosed_region(root)
    if not root.has_error:
        return [unclosed] if unclosed else []  # before `root.text`, which copies the source
    if source is None:  # (the root starts at the first token: what precedes is blank)
        source = b" " * root.start_byte + (root.text or b"")
    problems: list[SyntaxProblem] = [unclosed] if unclosed else []
    errors: list[tuple[int, int]] = []  # the outermost ERROR nodes
    problems += _error_problems(root, bytes(source), errors)
    problems.sort(key=lambda p: p.span.start_byte)
    binary = binary_start(root, source, errors)
    if binary is None:
        return problems
    at, cut = binary
    message, length = binary_message(source, at)
    before = [p for p in problems if p.span.start_byte < cut]
    return [*before, SyntaxProblem(message, Span(at, at + length))]


def _unclosed_region(root: tree_sitter.Node) -> SyntaxProblem | None:
    """One "expected '}'" for the regions still open at the end of the input (the
    grammar closes them with an empty `unclosed_region`), placed after the last
    token of the innermost one. They lie on the tree's rightmost path."""
    node, at = root, None
    while node.child_count:
        last = node.child(node.child_count - 1)
        if last.type != "unclosed_region":
            node = last
            continue
        if node.child_count < 2:
            at = last.start_byte
            break
        node = node.child(node.child_count - 2)  # `{` or the region's last operation
        at = node.end_byte
    return None if at is None else SyntaxProblem("expected '}'", Span(at, at))


def _error_problems(
    root: tree_sitter.Node, source: bytes, errors: list[tuple[int, int]]
) -> list[SyntaxProblem]:
    """One problem per outermost ERROR node and per MISSING node; the byte range of
    each outermost ERROR node is added to `errors`."""
    problems: list[SyntaxProblem] = []
    cursor = root.walk()
    path: list[tree_sitter.Node] = []  # the ancestors of cursor.node
    while True:
        node = cursor.node
        if node is None:  # never, for a cursor on a node
            return problems
        descend = True
        if node.is_missing:
            problem = SyntaxProblem(_missing_message(node), Span.of(node))
            if not problems or problems[-1] != problem:  # nested `}` missing at one place
                problems.append(problem)
            descend = False
        elif node.type == "ERROR":
            errors.append((node.start_byte, node.end_byte))
            message, leaf = _error_message(node, source, path)
            problems.append(SyntaxProblem(message, Span.of(leaf)))
            descend = False
        elif not node.has_error:
            descend = False
        if descend and cursor.goto_first_child():
            path.append(node)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return problems
            path.pop()


__all__ = ["SyntaxProblem", "syntax_problems", "walk"]
