"""The text of the first nest's copy placed inside the second nest.

The copy is the first nest's own source text, edited: every value it defines
gets a fresh name, sliced loops get new bounds, loops that run exactly once
lose their header and closing brace (their iv becomes a consumer iv or an
`affine.apply` of them), and every line is re-indented for its new place.
Comments and layout inside the nest are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineAccessOp, AffineForOp, AffineYieldOp, Operation, Value
from affine_lsp.syntax import Span, decode
from affine_lsp.transforms.edits import (
    apply_edits,
    indentation,
    line_start,
    next_line_start,
    only_whitespace,
    rest_of_line_is_blank,
)
from affine_lsp.transforms.fusion.render import BoundRenderer
from affine_lsp.transforms.fusion.slicing import SlicePlan, producer_loops
from affine_lsp.transforms.naming import FreshNames


class CannotEdit(ValueError):
    """The source layout does not allow a clean text edit here."""


@dataclass
class Copy:
    text: str
    start: int  # first byte of the moved lines in the original (comments included)
    end: int  # end of the nest's last line
    iv_names: dict[int, str] = field(default_factory=dict)  # loop id -> fresh iv name
    promoted: dict[int, str] = field(default_factory=dict)  # loop id -> isl value text
    renames: dict[int, str] = field(default_factory=dict)  # value id -> new name


def nest_lines(data: bytes, op: Operation, with_comments: bool) -> tuple[int, int]:
    """The whole lines of `op` (and the comment lines right above it)."""
    start = line_start(data, op.span.start_byte)
    if not only_whitespace(data, start, op.span.start_byte):
        raise CannotEdit("the nest does not start its line")
    if not rest_of_line_is_blank(data, op.span.end_byte):
        raise CannotEdit("the nest does not end its line")
    end = next_line_start(data, op.span.end_byte)
    while with_comments and start > 0:
        previous = line_start(data, start - 1)
        if not data[previous:start].strip().startswith(b"//"):
            break
        start = previous
    return start, end


def _only_in_subscripts(value: Value) -> bool:
    """Whether every use of `value` is a subscript of an affine load/store (where an
    integer can stand for it)."""
    return bool(value.uses) and all(
        isinstance(use.user, AffineAccessOp) and use.role == "dim" and not use.in_symbol_call
        for use in value.uses
    )


def _width(text: str) -> int:
    return len(text)


class CopyBuilder:
    def __init__(
        self,
        data: bytes,
        producer: AffineForOp,
        plan: SlicePlan,
        renderer: BoundRenderer,
        fresh: FreshNames,
    ) -> None:
        self.data = data
        self.producer = producer
        self.plan = plan
        self.renderer = renderer
        self.fresh = fresh
        self.edits: list[TextEdit] = []
        self.covered: list[Span] = []  # spans replaced wholesale (no edits inside)
        self.dedent: list[tuple[int, int, int]] = []  # (start, end, width) of promoted bodies
        self.apply_lines: list[tuple[int, int, str]] = []  # (edit index, header width, text)
        self.newline = "\r\n" if b"\r\n" in data else "\n"

    def _covered(self, span: Span) -> bool:
        return any(
            c.start_byte <= span.start_byte and span.end_byte <= c.end_byte for c in self.covered
        )

    def _replace(self, span: Span, text: str) -> None:
        self.edits.append(TextEdit(span, text))
        self.covered.append(span)

    def build(self, target_indent: str, move_comments: bool) -> Copy:
        start, end = nest_lines(self.data, self.producer, move_comments)
        copy = Copy("", start, end)
        names = self.renderer.ssa_names
        renames: dict[int, str] = {}
        for loop in producer_loops(self.producer):
            loop_plan = self.plan.plan_of(loop)
            iv = loop.induction_variable
            assert iv is not None
            if loop_plan.promoted is not None:
                (form,) = self.renderer.forms(loop_plan.context, [loop_plan.promoted])
                direct = self.renderer.single_ssa(form)
                if form.is_constant and _only_in_subscripts(iv):
                    direct = str(form.constant)
                name = direct or self.fresh.reuse(iv.name)
                apply_line = None
                if direct is None:
                    apply_line = f"{name} = affine.apply {self.renderer.map_text([form])}"
                if self._promote(loop, apply_line):
                    copy.promoted[id(loop)] = loop_plan.promoted
                    renames[id(iv)] = name
                    continue
                loop_plan.lowers = [loop_plan.promoted]
                loop_plan.uppers = [f"({loop_plan.promoted}) + 1"]
                loop_plan.promoted = None
            name = self.fresh.reuse(iv.name)
            names[loop_plan.name] = name
            copy.iv_names[id(loop)] = name
            renames[id(iv)] = name
            if loop_plan.lowers is not None and loop_plan.uppers is not None:
                assert loop.lower is not None and loop.upper is not None
                lowers = self.renderer.forms(loop_plan.context, loop_plan.lowers)
                uppers = self.renderer.forms(loop_plan.context, loop_plan.uppers)
                self._replace(loop.lower.span, self.renderer.bound(lowers, True))
                self._replace(loop.upper.span, self.renderer.bound(uppers, False))
        self._rename(renames)
        copy.renames = renames
        base = _width(indentation(self.data, self.producer.span.start_byte))
        self._reindent(start, end, _width(target_indent) - base, target_indent[:1] or " ")
        copy.text = self._text(start, end, self.edits)
        return copy

    def _text(self, start: int, end: int, edits: list[TextEdit]) -> str:
        local = [
            TextEdit(Span(e.span.start_byte - start, e.span.end_byte - start), e.new_text)
            for e in edits
        ]
        return decode(apply_edits(self.data[start:end], local))

    def with_replacements(self, copy: Copy, extra: list[TextEdit]) -> Copy:
        """The copy with some source spans replaced (edits inside them are dropped)."""
        inside = [
            e
            for e in self.edits
            if not any(
                x.span.start_byte <= e.span.start_byte and e.span.end_byte <= x.span.end_byte
                for x in extra
            )
        ]
        return replace(copy, text=self._text(copy.start, copy.end, inside + extra))

    def _promote(self, loop: AffineForOp, apply_line: str | None) -> bool:
        """Delete the loop's header and closing lines (the body stays); False if the
        layout does not allow it or the loop carries values."""
        data = self.data
        region = loop.body
        if region is None or loop.iter_args or loop.results:
            return False
        header_start = line_start(data, loop.span.start_byte)
        brace = region.span.start_byte
        closing = region.span.end_byte - 1
        if not only_whitespace(data, header_start, loop.span.start_byte):
            return False
        if not rest_of_line_is_blank(data, brace + 1):
            return False
        closing_start = line_start(data, closing)
        if not only_whitespace(data, closing_start, closing) or not rest_of_line_is_blank(
            data, closing + 1
        ):
            return False
        yields = [op for op in region.operations() if isinstance(op, AffineYieldOp)]
        yield_spans = []
        for op in yields:
            if op.operands:
                return False
            span = Span(
                line_start(data, op.span.start_byte), next_line_start(data, op.span.end_byte)
            )
            if not only_whitespace(data, span.start_byte, op.span.start_byte):
                return False
            yield_spans.append(span)
        header = Span(header_start, next_line_start(data, brace))
        body_ops = [op for op in region.operations() if not isinstance(op, AffineYieldOp)]
        header_indent = indentation(data, loop.span.start_byte)
        inner = indentation(data, body_ops[0].span.start_byte) if body_ops else header_indent
        self.dedent.append((header.end_byte, closing_start, _width(inner) - _width(header_indent)))
        self._replace(header, "")
        if apply_line is not None:
            self.apply_lines.append((len(self.edits) - 1, _width(header_indent), apply_line))
        self._replace(Span(closing_start, next_line_start(data, closing)), "")
        for span in yield_spans:
            self._replace(span, "")
        return True

    def _rename(self, renames: dict[int, str]) -> None:
        seen_spans: set[tuple[int, int]] = set()
        for op in self.producer.walk():
            defined: list[Value] = list(op.results)
            for region in op.regions:
                for block in region.blocks:
                    defined += block.arguments
            for value in defined:
                if id(value) not in renames:
                    renames[id(value)] = self.fresh.reuse(value.name)
                key = (value.span.start_byte, value.span.end_byte)
                if key in seen_spans or self._covered(value.span):
                    continue
                seen_spans.add(key)
                self.edits.append(TextEdit(value.span, renames[id(value)]))
        for op in self.producer.walk():
            for use in op.operands:
                if use.value is None or id(use.value) not in renames:
                    continue
                if self._covered(use.span):
                    continue
                suffix = use.name[use.name.index("#") :] if "#" in use.name else ""
                self.edits.append(TextEdit(use.span, renames[id(use.value)] + suffix))

    def _dedent_at(self, position: int) -> int:
        return sum(width for start, end, width in self.dedent if start <= position < end)

    def _reindent(self, start: int, end: int, shift: int, char: str) -> None:
        data = self.data
        position = start
        while position < end:
            line_end = next_line_start(data, position)
            first = position
            while first < line_end and data[first : first + 1] in (b" ", b"\t"):
                first += 1
            blank = first >= line_end or data[first : first + 1] in (b"\n", b"\r")
            inside_edit = any(c.start_byte <= position < c.end_byte for c in self.covered)
            if not blank and not inside_edit:
                width = max(0, first - position + shift - self._dedent_at(position))
                self.edits.append(TextEdit(Span(position, first), char * width))
            position = line_end
        # An apply line replaces its loop's header, at the indentation the header had.
        for index, header_width, text in self.apply_lines:
            header = self.edits[index].span
            width = max(0, header_width + shift - self._dedent_at(header.start_byte))
            self.edits[index] = TextEdit(header, f"{char * width}{text}{self.newline}")
