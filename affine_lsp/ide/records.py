"""Per-item bookkeeping of an analysed document, and moving it through edits.

A record stands for one top-level child of the syntax tree (an operation, an
alias definition, a `// -----` marker, a top-level ERROR node). It keeps what
the rest of the document needs to know about the item — its diagnostics, the
aliases it mentions, the values it defines at the top level — but not its IR,
which is rebuilt on demand. Offsets are bytes of the current text: an edit
shifts the records after it (`shift_offset`), so that a record stays valid
until the item itself changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from affine_lsp.checks import Diagnostic
from affine_lsp.ir import AliasDef, TopLevelItem, Type
from affine_lsp.syntax import ByteEdit, Span

ALIAS_KINDS = frozenset({"attribute_alias_def", "type_alias_def"})
OPERATION = "operation"
SPLIT_MARKER = "split_marker"


@dataclass(frozen=True, slots=True)
class TopLevelValue:
    """A value defined by a top-level operation, relative to its record's start."""

    name: str
    start: int
    end: int
    group_size: int
    types: tuple[Type | None, ...] = ()  # of each result of the group, as the item declares


@dataclass(eq=False, slots=True)
class ItemRecord:
    """What the analysis keeps about one top-level item."""

    start: int
    end: int
    kind: str  # the syntax node type: operation, attribute_alias_def, split_marker, ERROR...
    dirty: bool = True
    removed: bool = False
    chunk: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    mentions: frozenset[str] = frozenset()  # `#`/`!` names written in the item
    used_aliases: frozenset[str] = frozenset()  # aliases the item uses (by the syntax)
    values: tuple[TopLevelValue, ...] = ()
    symbol: str | None = None  # `@name` a top-level op defines
    op_name: str = ""  # the top-level op's name, when it defines values
    splits: bool = False  # a `// -----` (the item, or one inside it) ends its chunk
    marker_text: bool = False  # `// -----` is written in the item (anywhere: `check` splits)
    # A top-level memref.global: its symbol and declared type, a fact of its chunk
    # (`ModuleContext.globals`), and a declaration of it for extracts.
    global_entry: tuple[str, Type | None] | None = None
    global_declaration: bytes = b""
    alias: AliasDef | None = None
    alias_key: tuple[str, str, bytes] | None = None  # (name, kind, text) of an alias definition
    checked_key: tuple | None = None  # the chunk facts the diagnostics were computed with
    alias_item: TopLevelItem | None = None  # the item of an alias definition
    built_at: int = -1  # the document version `alias_item` was built from

    @property
    def span(self) -> Span:
        return Span(self.start, self.end)


def shift_offset(offset: int, edit: ByteEdit, *, is_end: bool = False) -> int:
    """Where `offset` of the text before `edit` is in the text after it.

    Text inserted exactly at an offset goes before a start and after an end (a
    range does not grow by what is typed at its edges). Offsets inside the
    replaced range collapse to its start (or, for an end, to the end of the new
    text).
    """
    if offset < edit.start or (is_end and offset == edit.start):
        return offset
    if offset >= edit.old_end:
        return offset + edit.delta
    return edit.new_end if is_end else edit.start


def _shift_span(span: Span, edit: ByteEdit) -> Span:
    start = shift_offset(span.start_byte, edit)
    end = max(start, shift_offset(span.end_byte, edit, is_end=True))
    if start == span.start_byte and end == span.end_byte:
        return span
    return Span(start, end)


def _reaches(diagnostic: Diagnostic, offset: int) -> bool:
    """Whether any span of the diagnostic ends at or after `offset`."""
    if diagnostic.span.end_byte >= offset:
        return True
    if any(r.span.end_byte >= offset for r in diagnostic.related):
        return True
    return any(e.span.end_byte >= offset for fix in diagnostic.fixes for e in fix.edits)


def shift_diagnostics(diagnostics: list[Diagnostic], edit: ByteEdit) -> list[Diagnostic]:
    """Move the diagnostics that reach past the start of `edit`; the rest stay as they are."""
    if not diagnostics:
        return diagnostics
    move = partial(_shift_span, edit=edit)
    return [d.map_spans(move) if _reaches(d, edit.start) else d for d in diagnostics]
