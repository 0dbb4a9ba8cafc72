"""Writing transformed loops: literal lines and renamed, re-indented copies of the
original text, with a record of which original op every copied op repeats.

A `Builder` produces the text that replaces one range of the document. Copies keep
the original text byte for byte (comments and layout included) except for the SSA
names given in a `Renames` table and the indentation of each line. For every op
in a copy, `origins` holds where the copy starts in the new document and which op
(and renaming) it came from: the proof reads it back (`proof.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import Operation, Value, split_use_name
from affine_lsp.poly import AffineForm
from affine_lsp.syntax import Span, decode, encode
from affine_lsp.transforms.edits import (
    apply_edits,
    indent_edits,
    indentation,
    line_start,
    next_line_start,
    shifted_offset,
)


@dataclass
class Renames:
    """New names for old values (by identity) inside one copy."""

    names: dict[int, str] = field(default_factory=dict)

    def set(self, value: Value, name: str) -> None:
        self.names[id(value)] = name

    def get(self, value: Value) -> str:
        return self.names.get(id(value), value.name)

    def copy(self) -> Renames:
        return Renames(dict(self.names))


@dataclass(frozen=True)
class Origin:
    """The original op a new op copies, and the renaming of that copy."""

    op: Operation
    renames: Renames
    copy: int  # which copy (unroll index, component...), for messages and chains
    substitution: dict[int, AffineForm] | None = None
    """Generated code (`transforms.schedule`): each original iv (by id) as an affine
    form over SSA names of the new text, substituted into the op's affine maps."""


def _ops_in(start: int, end: int, roots: list[Operation]) -> list[Operation]:
    return [
        op
        for root in roots
        for op in root.walk()
        if start <= op.span.start_byte and op.span.end_byte <= end
    ]


def _name_edits(data: bytes, start: int, ops: list[Operation], renames: Renames) -> list[TextEdit]:
    """Edits (relative to `start`) renaming every def and use in `ops`."""
    edits: dict[int, TextEdit] = {}

    def rename(span: Span, old: str, new: str) -> None:
        if new == old:
            return
        local = Span(span.start_byte - start, span.start_byte - start + len(old.encode()))
        edits[local.start_byte] = TextEdit(local, new)

    for op in ops:
        for value in op.results:
            if value.index == 0:
                rename(value.span, value.name, renames.get(value))
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    rename(argument.span, argument.name, renames.get(argument))
        for use in op.operands:
            if use.value is None:
                continue
            base, _ = split_use_name(use.name)
            new = renames.get(use.value)
            if new != use.value.name and data[use.span.start_byte : use.span.end_byte].startswith(
                base.encode()
            ):
                # a member of a group renamed to a member of another (`%r#1` -> `%s#3`)
                whole = "#" in new and use.name != base
                rename(use.span, use.name if whole else base, new)
    return list(edits.values())


class Builder:
    """The new text of the document range starting at `base` (an offset that stays
    the same in the new document: nothing before it changes)."""

    def __init__(self, data: bytes, base: int) -> None:
        self.data = data
        self.base = base
        self.parts: list[bytes] = []
        self.length = 0
        self.origins: dict[int, Origin] = {}

    def raw(self, text: str) -> None:
        encoded = encode(text)
        self.parts.append(encoded)
        self.length += len(encoded)

    def line(
        self,
        indent: str,
        text: str,
        origin: Operation | None = None,
        renames: Renames | None = None,
    ) -> None:
        """A written line; `origin`: the op it stands for (a rewritten loop header)."""
        if origin is not None:
            self.origins[self.base + self.length + len(indent.encode())] = Origin(
                origin, renames or Renames(), 0
            )
        self.raw(f"{indent}{text}\n")

    def copy(
        self,
        start: int,
        end: int,
        roots: list[Operation],
        renames: Renames,
        indent_delta: int = 0,
        copy: int = 0,
    ) -> None:
        """Copy the original bytes [start, end) (whole lines holding the ops `roots`
        and what lies between them), renamed and re-indented."""
        ops = _ops_in(start, end, roots)
        edits = _name_edits(self.data, start, ops, renames)
        edits += indent_edits(self.data, start, end, indent_delta)
        edits.sort(key=lambda e: (e.span.start_byte, e.span.end_byte))
        text = apply_edits(self.data[start:end], edits)
        for op in ops:
            relative = shifted_offset(edits, op.span.start_byte - start)
            self.origins[self.base + self.length + relative] = Origin(op, renames, copy)
        self.parts.append(text)
        self.length += len(text)

    def copy_lines(
        self,
        ops: list[Operation],
        renames: Renames,
        indent_delta: int = 0,
        copy: int = 0,
    ) -> None:
        """Copy the lines from the first of `ops` to the last (consecutive ops of one
        block, with the comments between them)."""
        if not ops:
            return
        start = line_start(self.data, ops[0].span.start_byte)
        end = next_line_start(self.data, ops[-1].span.end_byte)
        self.copy(start, end, ops, renames, indent_delta, copy)

    def text(self) -> str:
        return decode(b"".join(self.parts))


def loop_rewrite(data: bytes, loop: Operation) -> tuple[int, int, Builder]:
    """What a rewrite of `loop` replaces, [start, end): its whole lines (the loop has
    them to itself: `core.check_layout`), and a Builder of the new text."""
    start = line_start(data, loop.span.start_byte)
    return start, next_line_start(data, loop.span.end_byte), Builder(data, start)


def indent_of(data: bytes, op: Operation) -> str:
    return indentation(data, op.span.start_byte)


def step_indent(data: bytes, outer: Operation, inner: Operation) -> int:
    """How many spaces deeper `inner` is indented than `outer` (2 if they are not)."""
    delta = len(indent_of(data, inner)) - len(indent_of(data, outer))
    return delta if delta > 0 else 2
