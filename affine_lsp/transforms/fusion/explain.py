"""Why a fusion is illegal, in words: the dependence the fused code would break.

A mismatch of the dataflow check names transformed read instances that would
see another write than in the original. Mapped back to the original ops, it
becomes a sentence such as "iteration i of the second nest writes %a[i + 1],
which iteration i + 1 of the first nest reads" (a write moved before a read),
"iteration i of the second nest would read %t[i - 1] before iteration i - 1 of
the first nest writes it" (a read moved before its producer), or a statement
about the final contents of a memref. Iterations are given as expressions of
the other iteration when the relation is a function, as examples otherwise.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.ir import Operation
from affine_lsp.poly import (
    Mismatch,
    Statement,
    Window,
    exact_to_source,
    form_of_aff,
    fraction,
    maps_of,
    pretty_identifier,
    render_math,
)


class Explainer:
    def __init__(
        self,
        original: Window,
        transformed: Window,
        origin: isl.UnionMap,
        first: Operation,
        second: Operation,
        data: bytes,
    ) -> None:
        self.original = original
        self.transformed = transformed
        self.origin = origin
        self.first = first
        self.second = second
        self.data = data
        self.by_name = {s.name: s for s in original.statements}

    # -- words ------------------------------------------------------------------------

    def _where(self, op: Operation) -> str:
        current: Operation | None = op
        while current is not None:
            if current is self.first:
                return "the first nest"
            if current is self.second:
                return "the second nest"
            current = current.parent_op
        line = self.data.count(b"\n", 0, op.span.start_byte) + 1
        return f"the {op.name} on line {line}"

    @staticmethod
    def _names(statement: Statement) -> list[str]:
        names = [pretty_identifier(iv.display_name) for iv in statement.domain.ivs]
        return names + [f"lane{k}" for k in range(statement.lanes)]

    @staticmethod
    def _tuple(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else f"({', '.join(parts)})"

    def _render(self, function: isl.Map, source: Statement) -> list[str] | None:
        """The outputs of a single-piece affine function of `source`'s dims, or None."""
        count = len(source.domain.ivs)
        for position in range(function.dim(isl.dim_type.in_)):
            name = f"_d{position}" if position < count else f"_l{position - count}"
            function = function.set_dim_name(isl.dim_type.in_, position, name)
        try:
            pieces: list[isl.MultiAff] = []
            function.as_pw_multi_aff().foreach_piece(lambda _s, ma: pieces.append(ma))
        except isl.Error:
            return None
        if len(pieces) != 1:
            return None
        affine = pieces[0]
        names = dict(zip((f"_d{k}" for k in range(99)), self._names(source), strict=False))
        names.update({f"_l{k}": f"lane{k}" for k in range(source.lanes)})
        outputs = []
        for position in range(affine.dim(isl.dim_type.out)):
            form = form_of_aff(affine.get_aff(position))
            if form is None:
                return None
            outputs.append(render_math(form, lambda n: names.get(n, exact_to_source(n))))
        return outputs

    def _cells(self, statement: Statement) -> str:
        rendered = self._render(statement.access, statement)
        memref = statement.memref.display_name
        return f"{memref}[{', '.join(rendered)}]" if rendered is not None else memref

    def _iteration(self, statement: Statement) -> str:
        names = self._names(statement)
        return (
            f"iteration {self._tuple(names)} of {self._where(statement.op)}"
            if names
            else (self._where(statement.op))
        )

    # -- sentences ------------------------------------------------------------------------

    def _relation(self, instances: isl.Set, targets: isl.UnionMap) -> list[isl.Map]:
        """Original read instance -> original writer, for the mismatching instances."""
        mine = self.origin.intersect_domain(isl.UnionSet.from_set(instances))
        return maps_of(mine.reverse().apply_range(targets))

    def _later(self, a: Statement, b: Statement, relation: isl.Map) -> bool:
        """Whether instances of `b` run after the related instances of `a` in the original."""
        assert a.schedule is not None and b.schedule is not None
        before = a.schedule.lex_lt_map(b.schedule)
        return not relation.intersect(before).is_empty()

    def _sentence(self, subject: Statement, other: Statement, relation: isl.Map, verb: str) -> str:
        """`relation` maps subject instances to other instances."""
        rendered = self._render(relation, subject)
        if rendered is not None and subject.domain.ivs:
            target = f"iteration {self._tuple(rendered)} of {self._where(other.op)}"
            subject_text = self._iteration(subject)
        else:
            point = relation.wrap().sample_point()
            if point.is_void():
                return "the fused code would compute something else"
            count = relation.dim(isl.dim_type.in_)
            values = [
                int(fraction(point.get_coordinate_val(isl.dim_type.set, k)))
                for k in range(relation.dim(isl.dim_type.in_) + relation.dim(isl.dim_type.out))
            ]
            subject_text = self._concrete(subject, values[:count])
            target = self._concrete(other, values[count:])
        return verb.format(subject=subject_text, other=target)

    def _concrete(self, statement: Statement, values: list[int]) -> str:
        names = self._names(statement)
        if not names:
            return self._where(statement.op)
        pairs = [f"{n} = {v}" for n, v in zip(names, values, strict=False)]
        return f"iteration {self._tuple(pairs)} of {self._where(statement.op)}"

    def explain(self, mismatch: Mismatch) -> str:
        if mismatch.kind == "outside":
            return "the copy of the first nest would run iterations the first nest never runs"
        if mismatch.kind == "cells":
            return "the copy would touch other elements than the first nest does"
        if mismatch.kind == "bounds":
            return "a shrunk buffer would be accessed out of its bounds"
        if mismatch.seen is None or mismatch.expected is None:
            return "the fused code would compute something else"
        if mismatch.kind == "final":
            return self._final(mismatch)
        for relation in self._relation(mismatch.instances, mismatch.seen):
            reader = self.by_name.get(relation.get_tuple_name(isl.dim_type.in_))
            writer = self.by_name.get(relation.get_tuple_name(isl.dim_type.out))
            if reader is None or writer is None:
                continue
            if self._later(reader, writer, relation):
                # The read now sees a write that, originally, came after it (WAR).
                if self._where(reader.op) == self._where(writer.op) == "the first nest":
                    return self._sentence(
                        writer,
                        reader,
                        relation.reverse(),
                        "the copy would repeat iterations of the first nest, which updates "
                        f"{writer.memref.display_name} in place: {{subject}} writes "
                        f"{self._cells(writer)}, which a repeated {{other}} reads",
                    )
                return self._sentence(
                    writer,
                    reader,
                    relation.reverse(),
                    f"{{subject}} writes {self._cells(writer)}, which {{other}} reads",
                )
        overwritten = {
            relation.get_tuple_name(isl.dim_type.in_): relation
            for relation in self._relation(mismatch.instances, mismatch.seen)
        }
        for relation in self._relation(mismatch.instances, mismatch.expected):
            reader = self.by_name.get(relation.get_tuple_name(isl.dim_type.in_))
            writer = self.by_name.get(relation.get_tuple_name(isl.dim_type.out))
            if reader is None or writer is None:
                continue
            same = reader.op is writer.op or (
                self._where(reader.op) == self._where(writer.op) == "the first nest"
            )
            if same:
                return self._sentence(
                    reader,
                    writer,
                    relation,
                    f"{{subject}} reads {self._cells(reader)}, which {{other}} writes before it: "
                    "repeating the first nest's iterations would read their own results",
                )
            other = overwritten.get(reader.name)
            instead = self.by_name.get(other.get_tuple_name(isl.dim_type.out)) if other else None
            if other is not None and instead is not None:
                # Another, earlier write now comes last (WAW order broken on the way).
                written = self._sentence(
                    reader,
                    instead,
                    other,
                    f"{{subject}} would read {self._cells(reader)} as written by {{other}}",
                )
                expected = self._sentence(reader, writer, relation, "{other}")
                return f"{written} instead of {expected}"
            # The read no longer sees the write it depends on (RAW).
            return self._sentence(
                reader,
                writer,
                relation,
                f"{{subject}} would read {self._cells(reader)} before {{other}} writes it",
            )
        return "a read would see a value the original never gave it"

    def _final(self, mismatch: Mismatch) -> str:
        assert mismatch.seen is not None and mismatch.expected is not None
        memref = next(
            (
                s.memref.display_name
                for s in self.original.statements
                if "F_" + s.array[2:] == mismatch.statement
            ),
            "a memref",
        )
        written = maps_of(mismatch.seen)
        expected = maps_of(mismatch.expected)
        if expected:
            writer = self.by_name.get(expected[0].get_tuple_name(isl.dim_type.out))
            if not written and writer is not None:
                return (
                    f"part of {memref} written by {self._where(writer.op)} would no longer be "
                    "written (the slice does not cover every iteration)"
                )
            late = (
                self.by_name.get(written[0].get_tuple_name(isl.dim_type.out)) if written else None
            )
            if writer is not None and late is not None:
                return (
                    f"{self._where(late.op)} would write {memref} after {self._where(writer.op)}, "
                    f"whose values must be the final ones"
                )
        return f"the final contents of {memref} would change"
