"""Incremental analysis of one document.

`DocumentAnalysis` owns a `SourceDocument` and one `ItemRecord` per top-level
item. An edit re-parses once (tree-sitter reuses what it can), shifts the
records after it and marks the region it touched; `analyse()` then re-models and
re-checks only the items in that region, plus those whose module facts (the
aliases they mention, the top-level values of their chunk) changed, and the
module-wide rules of a chunk when what they look at changed.

`// -----` markers split the document into chunks, checked independently as
`mlir-opt --split-input-file` does: each chunk has its own aliases and
top-level values.

Syntax errors are collected from the whole tree once per version (the walk
only enters subtrees that contain errors): a message names the tokens expected
after the leaf before the error, which may lie in a neighbouring item.

The IR of a whole large document is never kept: requests that need the IR of
an item get it from `view_at`, which rebuilds that one item. Syntax nodes are
never kept across edits either (an edited tree's nodes have stale text); alias
definitions, which the module context holds, are rebuilt once per version
before they are used.
"""

from __future__ import annotations

import gc
import itertools
import logging
import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields, replace

from tree_sitter import Tree

from affine_lsp.checks import SPLIT_MARKER as SPLIT_TEXT
from affine_lsp.checks import (
    CheckOptions,
    Diagnostic,
    ModuleContext,
    Severity,
    check_item,
    check_module,
    ends_chunk,
    referenced_aliases,
    syntax_diagnostics,
)
from affine_lsp.ide.locate import ItemIndex
from affine_lsp.ide.records import (
    ALIAS_KINDS,
    OPERATION,
    SPLIT_MARKER,
    ItemRecord,
    TopLevelValue,
    shift_diagnostics,
    shift_offset,
)
from affine_lsp.ide.separate_chunks import SeparateChunk, SeparateChunks, within
from affine_lsp.ir import (
    UPSTREAM,
    Dialects,
    ModuleModel,
    NameScope,
    Operation,
    TopLevelItem,
    Value,
    build_alias,
    build_operation_item,
    canonical_name,
    module_scope_of,
    parse_integer,
)
from affine_lsp.syntax import FIELD, ByteEdit, ContentChange, Node, SourceDocument, Span, text
from affine_lsp.transforms.performance import performance_hints

logger = logging.getLogger("affine_lsp.ide")
_MENTION = re.compile(rb"[#!][A-Za-z_$.\-][\w$.\-]*")
_COMMENT = "comment"
_GLOBAL = b"memref.global"
_MARKER_TOKENS = (SPLIT_MARKER, _COMMENT)
_FEW_TOP_LEVEL_NODES = 16
INTERNAL_ERROR = "internal-error"


@dataclass(eq=False)
class ChunkFacts:
    """Module facts of one `// -----` chunk (where chunks end: `checks.chunks`)."""

    index: int
    alias_records: list[ItemRecord] = field(default_factory=list)
    alias_keys: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    values: list[tuple[ItemRecord, TopLevelValue]] = field(default_factory=list)
    global_records: list[ItemRecord] = field(default_factory=list)  # top-level memref.globals
    context: ModuleContext = field(default_factory=ModuleContext)
    extra_key: tuple = ()
    diagnostics: list[Diagnostic] = field(default_factory=list)  # from check_module
    signature: tuple | None = None  # what `diagnostics` were computed from
    module_stale: bool = True

    @property
    def alias_items(self) -> list[TopLevelItem]:
        return [r.alias_item for r in self.alias_records if r.alias_item is not None]

    @property
    def values_key(self) -> tuple:
        return tuple((v.name, v.group_size, v.types) for _, v in self.values)

    def redefinitions(self) -> list[tuple[Value, Value]]:
        """(new, earlier) for the top-level results whose name an earlier result of the
        chunk took: what `build_module` finds in the chunk (`ModuleModel.redefinitions`,
        which a module rule reports)."""
        first: dict[str, Value] = {}
        found = []
        for record, value in self.values:
            span = Span(record.start + value.start, record.start + value.end)
            new = Value(value.name, span, None, "result")
            earlier = first.setdefault(value.name, new)
            if earlier is not new:
                found.append((new, earlier))
        return found

    def scope(self) -> NameScope | None:
        """A module scope with the chunk's top-level values (None if it has none)."""
        if not self.values:
            return None
        shells = []
        for record, value in self.values:
            span = Span(record.start + value.start, record.start + value.end)
            op = Operation(record.op_name, "", record.span, span)
            op.results = [
                Value(
                    value.name,
                    span,
                    value.types[i] if i < len(value.types) else None,
                    "result",
                    defining_op=op,
                    index=i,
                    group_size=value.group_size,
                )
                for i in range(value.group_size)
            ]
            shells.append(TopLevelItem(record.span, operation=op))
        return module_scope_of(shells)


@dataclass(eq=False)
class ItemView:
    """One top-level item with its IR, built on demand for a request."""

    record: ItemRecord
    node: Node
    item: TopLevelItem
    chunk: ChunkFacts
    _index: ItemIndex | None = None
    anchors: tuple | None = None  # the refactoring anchors (`ide.planning.anchors_of`)
    dialects: Dialects = UPSTREAM  # the document's (its project file's)

    @property
    def index(self) -> ItemIndex:
        """The item's values, uses and ops by position (built on first use)."""
        if self._index is None:
            self._index = ItemIndex.of(self.item.operation)
        return self._index

    @property
    def model(self) -> ModuleModel:
        """The chunk's aliases and this item: enough to resolve what the item refers to."""
        return ModuleModel(items=[*self.chunk.alias_items, self.item], dialects=self.dialects)

    @property
    def context(self) -> ModuleContext:
        return self.chunk.context


class DocumentAnalysis:
    """A document, its records and the incremental analysis that keeps them current."""

    def __init__(
        self,
        document: SourceDocument,
        options: CheckOptions | None = None,
        *,
        check_definitions: bool = True,
    ) -> None:
        self.document = document
        self.options = options or CheckOptions()
        # Whether alias definitions are checked: an analysis made to check a few
        # operation items (`remote_checks`) reads them as facts only.
        self.check_definitions = check_definitions
        self.edit_count = 0
        self.records: list[ItemRecord] = []
        self.chunks: list[ChunkFacts] = []
        self._pending: list[tuple[int, int]] = []
        self._queue: deque[ItemRecord] = deque()
        # Records handed to another process to check (`claim`), by id: (record, token).
        self._claims: dict[int, tuple[ItemRecord, int]] = {}
        self._structure_stale = True
        self._aliases_at = -1  # edit_count when alias definitions were last rebuilt
        self._view_cache: tuple[int, int, ItemView] | None = None
        self._syntax: tuple[int, list[Diagnostic]] | None = None
        self._separate = SeparateChunks()
        self._separate_at: tuple[int, list[SeparateChunk]] | None = None
        # The lists `diagnostics()` last merged (held, so compared by identity) and
        # their merge.
        self._merged: tuple[tuple[list, ...], list[Diagnostic]] | None = None
        self._rebuild_all()

    @classmethod
    def from_text(
        cls, text: str | bytes, *, encoding: str = "utf-16", options: CheckOptions | None = None
    ) -> DocumentAnalysis:
        return cls(SourceDocument(text, encoding=encoding), options)

    # -- edits ----------------------------------------------------------------------

    def apply_changes(self, changes: Iterable[ContentChange]) -> None:
        """Apply LSP content changes; the analysis catches up in `analyse()`."""
        changes = list(changes)
        old_tree = self.document.tree
        edits = self.document.apply_changes(changes)
        self.edit_count += 1
        self._view_cache = None
        self.release_claims()  # what comes back was checked on the text before
        for chunk in self.chunks:  # syntax nodes would pin the old tree
            for record in chunk.alias_records:
                if record.alias_item is not None and record.alias_item.alias is not None:
                    record.alias_item.alias.node = None
        if any(change.range is None for change in changes):
            self._rebuild_all()
            return
        for edit in edits:
            self._pending = [
                (shift_offset(a, edit), shift_offset(b, edit, is_end=True))
                for a, b in self._pending
            ]
            self._pending.append((edit.start, edit.new_end))
            self._shift_records(edit)
        if not edits:
            return
        if self.document.tree.root_node.child_count <= _FEW_TOP_LEVEL_NODES:
            self._pending += self._untouched_items_changed(old_tree)
        else:
            for changed in old_tree.changed_ranges(self.document.tree):
                self._pending.append((changed.start_byte, changed.end_byte))
            # (`changed_ranges` does not report an empty node away from the edits:
            # a name error recovery inserted, say; only a tree with errors has them)
            if self.document.tree.root_node.has_error:
                self._pending += self._items_without_record(empty_only=True)

    def _items_without_record(self, empty_only: bool = False) -> list[tuple[int, int]]:
        """The top-level items of the tree that no record holds (with `empty_only`,
        only the zero-width ones)."""
        records = self.records
        if empty_only:
            records = [r for r in records if r.start == r.end]
        items = {(r.start, r.end, r.kind) for r in records}
        return [
            (node.start_byte, node.end_byte)
            for node in self.document.tree.root_node.named_children
            if (node.start_byte == node.end_byte or not empty_only)
            and _is_item(node)
            and (node.start_byte, node.end_byte, node.type) not in items
        ]

    def _untouched_items_changed(self, old_tree: Tree) -> list[tuple[int, int]]:
        """The items away from the edits whose syntax changed, in a document of a few
        top-level nodes.

        What tree-sitter's `changed_ranges` decides for them, at the top level: an item
        is unchanged if its node in the edited old tree and in the new tree have the
        same kind, extent and parse state, no errors, and the edits did not reach it;
        a node of the new tree that is no item (text between items, such as a comment,
        may have become code) has changed. (`changed_ranges` costs the square of the
        tree's depth: a quarter of a second for 3000 nested loops.) Items the edits
        touch are analysed again anyway."""
        regions = _merge(self._pending)
        old_root, new_root = old_tree.root_node, self.document.tree.root_node
        changed = self._items_without_record()
        for record in self.records:
            if any(lo <= record.end and record.start <= hi for lo, hi in regions):
                continue
            before = _node_at(old_root, record)
            after = _node_at(new_root, record)
            if (
                before is None
                or after is None
                or before.end_byte != record.end
                or after.end_byte != record.end
                or before.has_changes
                or before.has_error
                or after.has_error
                or before.parse_state != after.parse_state
            ):
                changed.append((record.start, record.end))
        return changed

    def _shift_records(self, edit: ByteEdit) -> None:
        records = self.records
        first = bisect_left(records, edit.start, key=lambda r: r.end)
        for record in records[:first]:
            if record.diagnostics:
                record.diagnostics = shift_diagnostics(record.diagnostics, edit)
        old_end, delta = edit.old_end, edit.delta
        for record in records[first:]:
            if record.start >= old_end:
                record.start += delta
                record.end += delta
            else:
                record.start = shift_offset(record.start, edit)
                record.end = shift_offset(record.end, edit, is_end=True)
            if record.diagnostics:
                record.diagnostics = shift_diagnostics(record.diagnostics, edit)
        for chunk in self.chunks:
            chunk.diagnostics = shift_diagnostics(chunk.diagnostics, edit)
            chunk.signature = _shift_signature(chunk.signature, edit)

    def set_options(self, options: CheckOptions) -> None:
        """New check options: everything is re-checked."""
        if options != self.options:
            self.options = options
            self._rebuild_all()

    def _rebuild_all(self) -> None:
        for record in self.records:
            record.removed = True
        self.records = [
            self._new_record(node)
            for node in self.document.tree.root_node.named_children
            if _is_item(node)
        ]
        self.chunks = []
        self._pending = []
        self._claims = {}
        self._queue = deque(r for r in self.records if r.kind == OPERATION)
        self._structure_stale = True
        self._aliases_at = -1
        self._view_cache = None
        self._syntax = None
        self._separate_at = None

    # -- bringing records up to date -----------------------------------------------

    def sync(self) -> None:
        """Make records, chunks and alias definitions match the current tree (the
        diagnostics of items may still lag behind)."""
        self._reconcile()
        if self._structure_stale:
            self._refresh_structure()
        self._refresh_aliases()

    def analyse(self) -> Iterator[tuple[int, int]]:
        """Bring every diagnostic up to date, yielding (done, total) after each item.

        Stopping the iteration early (a newer edit arrived) leaves a consistent
        state: what was not analysed stays marked for the next call.
        """
        done = 0
        while True:
            self.sync()
            record = self._next_dirty()
            if record is None:
                break
            self._analyse_operation(record)
            done += 1
            yield done, done + len(self._queue) + len(self._claims)
        for chunk in self.chunks:
            if chunk.module_stale:
                self._check_chunk(chunk)
        self.syntax_diagnostics()
        self.separate_chunks()

    def prioritise(self, start: int, end: int) -> None:
        """Analyse the items overlapping [start, end] (what the editor shows) before
        the others still to analyse."""
        self.sync()
        first = bisect_left(self.records, start, key=lambda r: r.end)
        last = bisect_right(self.records, end, key=lambda r: r.start)
        wanted = [
            r for r in self.records[first:last] if r.dirty and not r.removed and r.kind == OPERATION
        ]
        if wanted:
            ids = {id(r) for r in wanted}
            self._queue = deque(wanted + [r for r in self._queue if id(r) not in ids])

    def settled(self, start: int, end: int) -> bool:
        """Whether every item overlapping [start, end] has current diagnostics."""
        self.sync()
        first = bisect_left(self.records, start, key=lambda r: r.end)
        last = bisect_right(self.records, end, key=lambda r: r.start)
        return not any(r.dirty for r in self.records[first:last])

    def unsettled_bytes(self) -> int:
        """The size of the items whose diagnostics are not current (what `analyse()`
        still has to do, roughly)."""
        self.sync()
        return sum(r.end - r.start for r in self._queue if r.dirty and not r.removed)

    @property
    def complete(self) -> bool:
        """Whether every diagnostic is current (`analyse()` has nothing left to do)."""
        self.sync()
        if self._claims:
            return False
        return not any(r.dirty and not r.removed for r in self._queue) and not any(
            chunk.module_stale for chunk in self.chunks
        )

    # -- checking elsewhere ------------------------------------------------------------

    def claim(
        self, most_bytes: int, leave_bytes: int, unsettled: int | None = None
    ) -> list[tuple[ItemRecord, int]]:
        """Take items still to analyse from the back of the queue (the front is what
        the editor shows, checked here first) to be checked in another process: at
        most `most_bytes` of them, and only while more than `leave_bytes` would be
        left here. `unsettled`: `unsettled_bytes()` if the caller has just asked
        (it sums the queue). Returns (record, token) pairs; `settle_claimed` takes
        the outcome back. An edit voids every claim (the records go back into the
        queue)."""
        self.sync()
        left = self.unsettled_bytes() if unsettled is None else unsettled
        taken: list[tuple[ItemRecord, int]] = []
        kept: list[ItemRecord] = []
        size = 0
        while self._queue and left > leave_bytes and size < most_bytes:
            record = self._queue.pop()
            if not record.dirty or record.removed:
                continue
            length = record.end - record.start
            left -= length
            if record.splits:  # a `// -----` inside: its chunk facts are its own
                kept.append(record)
                continue
            size += length
            token = next(_CLAIM_TOKENS)
            self._claims[id(record)] = (record, token)
            taken.append((record, token))
        self._queue.extend(reversed(kept))
        return taken

    @property
    def claimed(self) -> int:
        """How many claimed items have not come back yet."""
        return len(self._claims)

    def settle_claimed(
        self,
        token: int,
        record: ItemRecord,
        diagnostics: Iterable[Diagnostic] | None,
        used_aliases: frozenset[str],
        symbol: str | None,
    ) -> bool:
        """Take back what another process found for a claimed record (None: it could
        not check it; the record goes back into the queue). False when the claim is
        void (an edit came since): the outcome is dropped."""
        claim = self._claims.get(id(record))
        if claim is None or claim[1] != token:
            return False
        del self._claims[id(record)]
        if record.removed or not record.dirty:
            return False
        if diagnostics is None:
            self._queue.append(record)
            return False
        self._settle(record, list(diagnostics), used_aliases, symbol)
        return True

    def release_claims(self) -> None:
        """Give every claimed item back to the queue (an edit voided the claims, or the
        other process failed)."""
        records = [record for record, _ in self._claims.values()]
        self._claims = {}
        self._queue.extend(r for r in records if r.dirty and not r.removed)

    def analyse_all(self) -> None:
        """Run `analyse()` to the end."""
        for _ in self.analyse():
            pass

    def _next_dirty(self) -> ItemRecord | None:
        while self._queue:
            record = self._queue.popleft()
            if record.dirty and not record.removed:
                return record
        return None

    def _new_record(self, node: Node) -> ItemRecord:
        """A dirty record for a top-level node, with the facts that shape its chunk."""
        record = ItemRecord(node.start_byte, node.end_byte, node.type)
        source = self.document.data[record.start : record.end]
        record.marker_text = SPLIT_TEXT in source
        if record.kind == OPERATION:
            record.values, record.op_name = _top_level_values(node)
            if record.values:
                record.values = _typed(record.values, node)
            record.splits = SPLIT_TEXT in source and _has_inner_split(node)
            if _GLOBAL in source:
                _read_global(record, node, source)
        elif record.kind in (SPLIT_MARKER, _COMMENT):
            record.splits = ends_chunk(source)
        return record

    def _reconcile(self) -> None:
        """Replace the records of every region an edit touched by the tree's items there."""
        if not self._pending:
            return
        root = self.document.tree.root_node
        for lo, hi in _merge(self._pending):
            # Grow the region until it covers whole records and whole nodes.
            while True:
                first = bisect_left(self.records, lo, key=lambda r: r.end)
                last = bisect_right(self.records, hi, key=lambda r: r.start)
                nodes = children_overlapping(root, lo, hi)
                new_lo, new_hi = lo, hi
                if first < last:
                    new_lo = min(new_lo, self.records[first].start)
                    new_hi = max(new_hi, self.records[last - 1].end)
                if nodes:
                    new_lo = min(new_lo, nodes[0].start_byte)
                    new_hi = max(new_hi, nodes[-1].end_byte)
                if (new_lo, new_hi) == (lo, hi):
                    break
                lo, hi = new_lo, new_hi
            old = self.records[first:last]
            new = [self._new_record(node) for node in nodes]
            same_shape = len(old) == len(new) and all(
                a.kind == b.kind == OPERATION and _same_facts(a, b)
                for a, b in zip(old, new, strict=True)
            )
            for record in old:
                record.removed = True
            if same_shape:  # the chunk layout stands: keep what the chunk knows
                for before, after in zip(old, new, strict=True):
                    after.chunk = before.chunk
                    after.used_aliases = before.used_aliases
                    self._replace_in_chunk(before, after)
            else:
                self._structure_stale = True
            self.records[first:last] = new
            # What was edited goes first (before the rest of a long analysis under way).
            self._queue.extendleft(reversed([r for r in new if r.kind == OPERATION]))
        self._pending = []

    def _replace_in_chunk(self, before: ItemRecord, after: ItemRecord) -> None:
        """The chunk's facts name the new record of an item in place of the old one."""
        if not (before.values or before.global_entry) or before.chunk >= len(self.chunks):
            return
        chunk = self.chunks[before.chunk]
        chunk.values = [(after if r is before else r, v) for r, v in chunk.values]
        chunk.global_records = [after if r is before else r for r in chunk.global_records]

    def node_of(self, record: ItemRecord) -> Node:
        """The syntax node of a (current) record."""
        node = _node_at(self.document.tree.root_node, record)
        if node is None:
            raise LookupError(f"no {record.kind} node at byte {record.start}")
        return node

    def _refresh_structure(self) -> None:
        """Chunks, aliases and module contexts; re-check what depends on changed facts."""
        self._structure_stale = False
        previous = self.chunks
        chunks = [ChunkFacts(0)]
        for record in self.records:
            if record.dirty and record.kind != OPERATION:
                self._analyse_simple(record)
            record.chunk = len(chunks) - 1
            chunk = chunks[-1]
            if record.alias_key is not None and record.kind in ALIAS_KINDS:
                chunk.alias_records.append(record)
                name, kind, definition = record.alias_key
                chunk.alias_keys.setdefault(name, (kind, definition))
            for value in record.values:
                chunk.values.append((record, value))
            if record.global_entry is not None:
                chunk.global_records.append(record)
            if record.splits:
                chunks.append(ChunkFacts(len(chunks)))
        for chunk in chunks:
            if chunk.index < len(previous):  # module diagnostics hold while their facts do
                chunk.diagnostics = previous[chunk.index].diagnostics
                chunk.signature = previous[chunk.index].signature
        self.chunks = chunks
        self._refresh_aliases(every_chunk=True)
        for record in self.records:
            if record.kind in ALIAS_KINDS and record.alias_item is not None:
                key = self._key(record)
                if record.checked_key != key and self.check_definitions:
                    self._check_alias(record, key)
            elif record.kind == OPERATION and not record.dirty:
                if record.checked_key != self._key(record):
                    record.dirty = True
                    self._queue.append(record)

    def _refresh_aliases(self, *, every_chunk: bool = False) -> None:
        """Keep the module contexts' alias definitions at their current positions.

        Once per version: alias definitions an edit moved are rebuilt (their spans
        appear in related information), and the contexts that hold them.
        """
        if self._aliases_at == self.edit_count and not every_chunk:
            return
        self._aliases_at = self.edit_count
        for chunk in self.chunks:
            moved = [
                r
                for r in chunk.alias_records
                if r.alias_item is not None and r.alias_item.span != r.span and not r.removed
            ]
            for record in moved:
                self._build_alias(record)
            if moved or every_chunk:
                self._set_context(chunk)

    def _set_context(self, chunk: ChunkFacts) -> None:
        chunk.context = ModuleContext.from_model(ModuleModel(items=chunk.alias_items))
        for record in chunk.global_records:  # (the first of each name, as `from_model`)
            assert record.global_entry is not None
            chunk.context.globals.setdefault(*record.global_entry)
        chunk.extra_key = tuple(
            (f.name, getattr(chunk.context, f.name))
            for f in fields(chunk.context)
            if f.name != "aliases"
        )

    def facts_key(self, record: ItemRecord) -> tuple:
        """The module facts an (analysed) item's diagnostics and IR depend on: the
        aliases it mentions, the top-level values of its chunk, the chunk's other
        facts."""
        return self._key(record)

    def _key(self, record: ItemRecord) -> tuple:
        """The module facts an item's diagnostics depend on."""
        chunk = self.chunks[record.chunk]
        aliases = chunk.alias_keys
        if record.kind in ALIAS_KINDS:
            mentioned: tuple = tuple(sorted(aliases.items()))
        else:
            mentioned = tuple((name, aliases.get(name)) for name in sorted(record.mentions))
        return (mentioned, chunk.values_key, chunk.extra_key)

    def _analyse_simple(self, record: ItemRecord) -> None:
        """Alias definitions, markers and top-level errors (cheap, done eagerly)."""
        record.dirty = False
        record.diagnostics = []
        record.checked_key = None
        if record.kind in ALIAS_KINDS:
            self._build_alias(record)

    def _build_alias(self, record: ItemRecord) -> None:
        """Build an alias definition from the current tree (once per version: its
        syntax node is dropped at the next edit, as a node would pin the old tree)."""
        if record.built_at == self.edit_count and record.alias_item is not None:
            return
        alias = build_alias(self.node_of(record))
        record.alias_item = TopLevelItem(record.span, alias=alias)
        record.built_at = self.edit_count
        value = self.document.data[alias.value_span.start_byte : alias.value_span.end_byte]
        record.alias_key = (alias.name, alias.kind, bytes(value))
        record.used_aliases = referenced_aliases(record.alias_item)

    def _check_alias(self, record: ItemRecord, key: tuple) -> None:
        self._build_alias(record)  # the rules read its syntax node: it must be current
        assert record.alias_item is not None
        context = self.chunks[record.chunk].context
        try:
            found = check_item(record.alias_item, context, self.options)
        except Exception:  # a bug in one item's checks must not stop the others
            logger.exception("checking the alias at byte %d failed", record.start)
            found = [_internal_error(record)]
        record.diagnostics = sorted(found, key=Diagnostic.sort_key)
        record.checked_key = key

    def check_record(self, record: ItemRecord) -> None:
        """Check one (operation) record now, whatever the queue says."""
        self.sync()
        self._analyse_operation(record)

    def _analyse_operation(self, record: ItemRecord) -> None:
        # The item's IR is cyclic garbage once checked: collect it young, in one
        # pass, instead of letting the collector scan it while it is being built.
        # Its view is kept for requests only if it is the first item analysed since
        # the last edit (the one edited: analysed first); a view kept before it
        # survived its young collection, and is freed now, rather than piling up with
        # others for one long collection of an older generation.
        cached = self._view_cache
        keep_view = cached is None or cached[0] != self.edit_count
        if cached is not None and keep_view:
            self._view_cache = cached = None
            gc.collect(1)
        gc.disable()
        try:
            self._check_operation(record, keep_view)
        except Exception:  # a bug in one item's checks must not stop the others
            logger.exception("checking the item at byte %d failed", record.start)
            record.diagnostics = [_internal_error(record)]
            record.dirty = False
            record.checked_key = self._key(record)
        finally:
            gc.enable()
        gc.collect(0)

    def _check_operation(self, record: ItemRecord, keep_view: bool = False) -> None:
        node = self.node_of(record)
        chunk = self.chunks[record.chunk]
        item = build_operation_item(
            node, chunk.scope(), chunk.context.aliases, dialects=self.options.dialects
        )
        found = check_item(item, chunk.context, self.options)
        if self.options.performance_hints and item.operation is not None:
            if not any(d.severity == Severity.ERROR for d in found):
                found += performance_hints(item.operation, self.document.data)
        if keep_view:
            # The item requests will ask for first is the one just edited: its view is
            # this model (`view_of` would build the same from the same node and scope).
            view = ItemView(record, node, item, chunk, dialects=self.options.dialects)
            self._view_cache = (self.edit_count, record.start, view)
        used = referenced_aliases(item)  # (the checks have looked them up)
        self._settle(record, found, used, getattr(item.operation, "symbol", None) or None)

    def _settle(
        self,
        record: ItemRecord,
        found: list[Diagnostic],
        used: frozenset[str],
        symbol: str | None,
    ) -> None:
        """Record what checking an operation item found."""
        record.diagnostics = sorted(found, key=Diagnostic.sort_key)
        record.dirty = False
        source = self.document.data[record.start : record.end]
        record.mentions = frozenset(m.decode("utf-8", "replace") for m in _MENTION.findall(source))
        record.symbol = symbol
        if used != record.used_aliases:
            self.chunks[record.chunk].module_stale = True
        record.used_aliases = used
        record.checked_key = self._key(record)

    def _check_chunk(self, chunk: ChunkFacts) -> None:
        """Module-wide rules of a chunk, if the facts they look at changed.

        The view given to `check_module` has the chunk's alias items and, for each
        operation, an item whose `operation` is a shell: its span and syntax node,
        without regions (rules look at it through the node).
        """
        chunk.module_stale = False
        records = [r for r in self.records if r.chunk == chunk.index]
        # Where the alias definitions are, not only what they say: the diagnostics are
        # at them, and edits move both alike (`_shift_signature`); a chunk's diagnostics
        # are never taken for another's, nor kept for a definition typed again.
        redefinitions = chunk.redefinitions()
        signature = (
            tuple((r.alias_key, r.start, r.end) for r in records if r.alias_item is not None),
            frozenset().union(*(r.used_aliases for r in records)),
            tuple(
                (value.name, value.span.start_byte, value.span.end_byte)
                for pair in redefinitions
                for value in pair
            ),
        )
        if signature == chunk.signature:
            return
        items = []
        for record in records:
            if record.alias_item is not None:
                self._build_alias(record)  # the rules read its syntax node: it must be current
                items.append(record.alias_item)
            elif record.kind == OPERATION:
                shell = Operation(
                    "", OPERATION, record.span, record.span, node=self.node_of(record)
                )
                items.append(
                    TopLevelItem(
                        record.span,
                        operation=shell,
                        used_aliases=set(record.used_aliases),
                        # what its check found (looked up again if the check failed)
                        referenced_aliases=None if _failed(record) else record.used_aliases,
                    )
                )
        try:
            model = ModuleModel(items=items, redefinitions=redefinitions)
            found = check_module(model, chunk.context, self.options)
        except Exception:  # module rules failing leave the item diagnostics standing
            logger.exception("the module rules of chunk %d failed", chunk.index)
            found = []
        chunk.diagnostics = sorted(found, key=Diagnostic.sort_key)
        chunk.signature = signature

    # -- results ----------------------------------------------------------------------

    def syntax_diagnostics(self) -> list[Diagnostic]:
        """The syntax errors of the current tree (computed once per version)."""
        if self._syntax is None or self._syntax[0] != self.edit_count:
            self._syntax = (self.edit_count, syntax_diagnostics(self.document))
        return self._syntax[1]

    def separate_chunks(self) -> list[SeparateChunk]:
        """The chunks checked on their own text, as `check` checks them, since the
        document's tree does not parse them as they parse alone (computed once per
        version; see `ide.separate_chunks`)."""
        if self._separate_at is None or self._separate_at[0] != self.edit_count:
            # (a marker is written inside a top-level item, a comment being one then:
            # the text is searched only when one is)
            marked = any(record.marker_text for record in self.records)
            syntax = self.syntax_diagnostics() if marked else []
            found = self._separate.of(self.document, self.options, syntax) if marked else []
            self._separate_at = (self.edit_count, found)
        return self._separate_at[1]

    def _with_separate_chunks(self, found: list[Diagnostic]) -> list[Diagnostic]:
        """`found` with the diagnostics in the zones of separate chunks replaced by
        theirs, sorted."""
        separate = self.separate_chunks()
        if separate:
            found = [d for d in found if not within(d, separate)]
            found += [d for chunk in separate for d in chunk.diagnostics]
        found.sort(key=Diagnostic.sort_key)
        return found

    def diagnostics(self) -> list[Diagnostic]:
        """Every current diagnostic of the document, in document order (merged again
        only when a list of them was replaced: requests ask on every keystroke)."""
        parts: tuple[list, ...] = (
            self.syntax_diagnostics(),
            *(record.diagnostics for record in self.records),
            *(chunk.diagnostics for chunk in self.chunks),
        )
        separate = self.separate_chunks()
        merged = self._merged
        if (
            merged is None
            or len(merged[0]) != len(parts) + 1
            or any(a is not b for a, b in zip(merged[0], (*parts, separate), strict=True))
        ):
            found = self._with_separate_chunks([d for part in parts for d in part])
            merged = self._merged = ((*parts, separate), found)
        return list(merged[1])

    def settled_diagnostics(self) -> list[Diagnostic]:
        """The diagnostics computed for the current version so far, while `analyse()`
        is under way: syntax errors, those of the items already analysed, and the
        module-wide ones of chunks with nothing left to analyse. (Items not analysed
        yet may hold diagnostics of an earlier version: they are left out.)"""
        self.sync()
        found = list(self.syntax_diagnostics())
        unsettled_chunks = {r.chunk for r in self.records if r.dirty}
        found += [d for record in self.records if not record.dirty for d in record.diagnostics]
        for chunk in self.chunks:
            if not chunk.module_stale and chunk.index not in unsettled_chunks:
                found += chunk.diagnostics
        return self._with_separate_chunks(found)

    def record_at(self, offset: int) -> ItemRecord | None:
        """The record whose item contains `offset` (its end included)."""
        self.sync()
        index = bisect_right(self.records, offset, key=lambda r: r.start) - 1
        if index >= 0 and self.records[index].end >= offset:
            return self.records[index]
        return None

    def chunk_at(self, offset: int) -> ChunkFacts:
        """The chunk `offset` is in (also between items)."""
        self.sync()
        index = bisect_right(self.records, offset, key=lambda r: r.start) - 1
        if not self.chunks:
            return ChunkFacts(0)
        if index < 0:
            return self.chunks[0]
        record = self.records[index]
        if record.end < offset and record.splits:
            return self.chunks[min(record.chunk + 1, len(self.chunks) - 1)]
        return self.chunks[record.chunk]

    def view_at(self, offset: int) -> ItemView | None:
        """The item containing `offset` with its IR (built now, cached for this version)."""
        record = self.record_at(offset)
        return self.view_of(record) if record is not None else None

    def view_of(self, record: ItemRecord) -> ItemView | None:
        self.sync()
        cached = self._view_cache
        if cached is not None and cached[:2] == (self.edit_count, record.start):
            return cached[2]
        chunk = self.chunks[record.chunk]
        if record.kind == OPERATION:
            node = self.node_of(record)
            item = build_operation_item(
                node, chunk.scope(), chunk.context.aliases, dialects=self.options.dialects
            )
        elif record.kind in ALIAS_KINDS and record.alias_item is not None:
            node = self.node_of(record)
            item = record.alias_item
        else:
            return None
        view = ItemView(record, node, item, chunk, dialects=self.options.dialects)
        self._view_cache = (self.edit_count, record.start, view)
        return view

    def views(self, records: Iterable[ItemRecord] | None = None) -> Iterator[ItemView]:
        """Views of several items (all by default), built one at a time."""
        for record in list(self.records if records is None else records):
            view = self.view_of(record)
            if view is not None:
                yield view


def _internal_error(record: ItemRecord) -> Diagnostic:
    end = min(record.end, record.start + 1)
    return Diagnostic(
        Span(record.start, end),
        Severity.INFORMATION,
        INTERNAL_ERROR,
        "affine-lsp could not check this item (an internal error, see the server log); "
        "the rest of the file is checked",
    )


_CLAIM_TOKENS = itertools.count(1)
"""Tokens of claims, never reused: an outcome for an earlier claim of the same
record is told apart."""


def _failed(record: ItemRecord) -> bool:
    """Whether checking the item raised (its facts may be out of date)."""
    return any(d.code == INTERNAL_ERROR for d in record.diagnostics)


def _same_facts(a: ItemRecord, b: ItemRecord) -> bool:
    return (a.values, a.op_name, a.splits, a.global_entry) == (
        b.values,
        b.op_name,
        b.splits,
        b.global_entry,
    )


def _read_global(record: ItemRecord, node: Node, source: bytes | bytearray) -> None:
    """If the item is a memref.global: its entry in the module context (read by the
    checks' own `ModuleContext.from_model`) and a declaration of it for extracts
    (its initial value left out, the type as MLIR prints it)."""
    body = node.child_by_field_id(FIELD["body"])
    name = body.child_by_field_id(FIELD["name"]) if body is not None else None
    if body is None or name is None or canonical_name(text(name).strip('"'))[0] != "memref.global":
        return
    shell = Operation("memref.global", body.type, record.span, record.span, node=node)
    table = ModuleContext.from_model(
        ModuleModel(items=[TopLevelItem(record.span, operation=shell)])
    )
    for symbol, type_ in table.globals.items():
        record.global_entry = (symbol, type_)
        record.global_declaration = (
            f"memref.global {symbol} : {type_}".encode() if type_ is not None else bytes(source)
        )


def _top_level_values(node: Node) -> tuple[tuple[TopLevelValue, ...], str]:
    """The values a top-level operation node defines, and its op name if it has any."""
    results = node.child_by_field_id(FIELD["results"])
    if results is None:
        return (), ""
    values = []
    for result in results.named_children:
        name = result.child_by_field_id(FIELD["value"])
        if result.type != "op_result" or name is None or name.is_missing:
            continue
        count_node = result.child_by_field_id(FIELD["count"])
        count = parse_integer(count_node) if count_node is not None else 1
        values.append(
            TopLevelValue(
                text(name),
                name.start_byte - node.start_byte,
                name.end_byte - node.start_byte,
                max(1, min(count or 1, 4096)),
            )
        )
    body = node.child_by_field_id(FIELD["body"])
    name_node = body.child_by_field_id(FIELD["name"]) if body is not None else None
    spelling = text(name_node).strip('"') if name_node is not None else ""
    return tuple(values), canonical_name(spelling)[0] if values else ""


def _typed(values: tuple[TopLevelValue, ...], node: Node) -> tuple[TopLevelValue, ...]:
    """Top-level values with the types of their results, as the item declares them
    (other items see them through the chunk's scope, as in a whole module)."""
    operation = build_operation_item(node).operation
    results = iter(operation.results if operation is not None else ())
    typed = []
    for value in values:
        types = tuple(getattr(next(results, None), "type", None) for _ in range(value.group_size))
        typed.append(replace(value, types=types))
    return tuple(typed)


def _has_inner_split(node: Node) -> bool:
    """Whether a split marker or comment that ends a chunk lies inside `node`."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in _MARKER_TOKENS and ends_chunk(current.text or b""):
            return True
        stack.extend(c for c in current.children if c.child_count or c.type in _MARKER_TOKENS)
    return False


def _shift_signature(signature: tuple | None, edit: ByteEdit) -> tuple | None:
    """A chunk signature (see `_check_chunk`) with its positions moved by `edit`."""
    if signature is None:
        return None
    definitions, used, redefinitions = signature
    moved, moved_redefinitions = (
        tuple(
            (key, shift_offset(start, edit), shift_offset(end, edit, is_end=True))
            for key, start, end in positions
        )
        for positions in (definitions, redefinitions)
    )
    return moved, used, moved_redefinitions


def _is_item(node: Node) -> bool:
    """Whether a named top-level node gets a record: all but comments, unless a
    comment holds a split marker (`// note // -----`)."""
    return node.type != _COMMENT or ends_chunk(node.text or b"")


def _node_at(root: Node, record: ItemRecord) -> Node | None:
    """The top-level node of the record's kind starting where it starts, if any."""
    for node in children_overlapping(root, record.start, record.start):
        if node.start_byte == record.start and node.type == record.kind:
            return node
    return None


def _merge(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(regions):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def children_overlapping(root: Node, lo: int, hi: int) -> list[Node]:
    """Top-level items (named children but comments, unless they end a chunk)
    overlapping or touching [lo, hi].

    Navigates by child index: sibling pointers are avoided, as walking
    backwards over zero-width nodes is not reliable in every tree-sitter version.
    """
    count = root.child_count
    index = root.walk().goto_first_child_for_byte(lo)
    index = count if index is None else index
    while index > 0 and root.child(index - 1).end_byte >= lo:
        index -= 1
    found = []
    while index < count:
        node = root.child(index)
        if node.start_byte > hi:
            break
        if node.is_named and node.end_byte >= lo and _is_item(node):
            found.append(node)
        index += 1
    return found
