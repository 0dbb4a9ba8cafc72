"""One instance of a statement in generated code: a copy of its ops whose original
ivs are replaced by affine expressions of the new loops' ivs.

The copy keeps the original lines (comments included), re-indented. An iv that
is exactly one new iv (or a value from outside) is renamed; otherwise it is
substituted into the affine maps that use it — `affine.load %A[%i - 1]` becomes
`affine.load %A[%i_skew - %t - 1]`, and an `affine.apply`, `affine.min` or
`affine.max` gets its map composed — and only the remaining uses (an
`arith.index_cast %i`) get an `affine.apply` named after the iv at the top of
the copy. Each copied op records the op it repeats, its renaming and the
substitution (old iv -> affine form over the new SSA names), which is what the
proof reads back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from affine_lsp.checks import TextEdit
from affine_lsp.ir import AffineAccessOp, AffineApplyOp, Operation, Use, Value
from affine_lsp.poly import AffineForm, IslSession, NotAffine, Scope, Term, Window, render_mlir
from affine_lsp.syntax import Span, decode, encode
from affine_lsp.transforms.bounds import forms_of, map_text
from affine_lsp.transforms.edits import (
    apply_edits,
    indent_edits,
    indentation,
    line_start,
    next_line_start,
    shifted_offset,
)
from affine_lsp.transforms.schedule.expressions import name_form, ordered, substituted
from affine_lsp.transforms.schedule.statements import Statement, Unschedulable

Operand = Callable[[str], tuple[str, bool]]
"""isl name -> (SSA name, is a valid symbol)."""

_INDEX_OPS = ("affine.apply", "affine.min", "affine.max")


@dataclass(frozen=True)
class Copy:
    """The op a generated op repeats; `renames`: new names of original values (by
    id) in this copy; `substitution`: each original iv (by id) as an affine form
    over SSA names of the generated text."""

    op: Operation
    renames: dict[int, str] = field(default_factory=dict)
    substitution: dict[int, AffineForm] = field(default_factory=dict)
    copy: int = 0


@dataclass
class Written:
    """The text of one instance and the ops it repeats (offsets in `text`)."""

    text: str
    copies: dict[int, Copy]
    defined: list[str] = field(default_factory=list)  # names it defines besides the ops'


class InstanceWriter:
    """Writes instances of statements of one window."""

    def __init__(self, session: IslSession, data: bytes, window: Window) -> None:
        self.session = session
        self.data = data
        self.window = window

    def write(
        self,
        statement: Statement,
        values: list[AffineForm],
        operand: Operand,
        indent: str,
        taken: Callable[[str], bool],
        fresh: Callable[[str], str],
        result_names: dict[int, str],
        copy: int,
        rank: Callable[[str], int] = lambda name: 0,
    ) -> Written:
        """`values[m]`: the statement's m-th dim as a form over isl names that
        `operand` turns into SSA names; `taken(name)`: the name is visible here
        already; `result_names`: new names of the statement's results; `rank`:
        the order of SSA names in the expressions written (outer loops first)."""
        self.rank = rank
        domain = statement.domain
        by_dim = dict(zip(domain.dims, values, strict=True))
        ssa_forms = {
            id(iv): _renamed(form, operand) for iv, form in zip(domain.ivs, values, strict=True)
        }
        plain: dict[int, str] = {}
        for iv, form in zip(domain.ivs, values, strict=True):
            name = form.single_name()
            if name is not None:
                plain[id(iv)] = operand(name)[0]
        renames: dict[int, str] = dict(result_names)
        renames.update(plain)
        edits: list[TextEdit] = []
        introduced: set[int] = set()
        recompute: list[Value] = []
        start = _with_comments_above(self.data, statement.ops[0].span.start_byte)
        end = next_line_start(self.data, statement.ops[-1].span.end_byte)

        def rename(span: Span, new: str, old: str) -> None:
            if new != old:
                local = Span(span.start_byte - start, span.start_byte - start + len(encode(old)))
                edits.append(TextEdit(local, new))

        defined: list[str] = []
        constants = ""
        constant_offsets: list[tuple[int, Operation]] = []
        for op in statement.constants:  # constants of another statement, copied first
            value = op.results[0]
            name = value.name if not (taken(value.name) or value.name in defined) else None
            name = name or fresh(value.name)
            renames[id(value)] = name
            defined.append(name)
            own = decode(self.data[op.span.start_byte : op.span.end_byte])
            constant_offsets.append((len(encode(constants)) + len(encode(indent)), op))
            constants += f"{indent}{name}{own[len(value.name) :]}\n"
        substituted_ivs = {id(iv): ssa_forms[id(iv)] for iv in domain.ivs if id(iv) not in plain}
        for op in statement.ops:
            for value in op.results:
                if value.index == 0 and id(value) in result_names:
                    rename(value.span, result_names[id(value)], value.name)
            uses = _map_uses(op)
            if any(
                u.value is not None and id(u.value) in substituted_ivs for u in uses
            ) or _merged_by_renames(uses, renames):
                rewritten = self._rewritten(op, uses, substituted_ivs, renames, start)
                edits.append(rewritten)
                if isinstance(op, AffineApplyOp):
                    introduced.add(id(op))
                skipped = {id(u) for u in uses}
                low, high = rewritten.span.start_byte + start, rewritten.span.end_byte + start
                for use in op.operands:
                    inside = low <= use.span.start_byte < high
                    if id(use) not in skipped and not inside:  # (an iv used twice in the map)
                        self._rename_use(use, renames, plain, recompute, domain.ivs, rename)
                continue
            for use in op.operands:
                self._rename_use(use, renames, plain, recompute, domain.ivs, rename)
        header = ""
        for iv in recompute:
            name = iv.name if not (taken(iv.name) or iv.name in defined) else fresh(iv.name)
            renames[id(iv)] = name
            defined.append(name)
            form = ordered(by_dim[domain.dims[domain.ivs.index(iv)]], self._isl_rank(operand))
            header += f"{indent}{name} = affine.apply {map_text([form], operand)}\n"
        if recompute:  # the remaining uses of those ivs: their recomputed values
            for op in statement.ops:
                for use in op.operands:
                    if (
                        use.value is not None
                        and use.value in recompute
                        and id(use) not in {id(u) for u in _map_uses(op)}
                    ):
                        rename(use.span, renames[id(use.value)], use.value.name)
        delta = len(indent) - len(indentation(self.data, statement.ops[0].span.start_byte))
        edits += indent_edits(self.data, start, end, delta)
        text = apply_edits(self.data[start:end], edits)
        copies: dict[int, Copy] = {}
        base = len(encode(header))
        for offset, op in constant_offsets:
            copies[base + offset] = Copy(op, renames, ssa_forms, copy)
        base += len(encode(constants))
        for op in statement.ops:
            if id(op) in introduced:
                continue
            offset = base + shifted_offset(edits, op.span.start_byte - start)
            copies[offset] = Copy(op, renames, ssa_forms, copy)
        return Written(header + constants + decode(text), copies, defined)

    def _isl_rank(self, operand: Operand) -> Callable[[str], int]:
        return lambda name: self.rank(operand(name)[0])

    # -- affine maps ---------------------------------------------------------------

    def _rewritten(
        self,
        op: Operation,
        uses: list[Use],
        substituted_ivs: dict[int, AffineForm],
        renames: dict[int, str],
        start: int,
    ) -> TextEdit:
        """The op's affine map with the substituted ivs' values composed in (its other
        operands kept, renamed as in this copy)."""
        scope = Scope()
        placeholders: list[str] = []
        values: dict[str, AffineForm] = {}
        symbols: set[str] = set()
        for position, use in enumerate(uses):
            value = use.value
            if value is None:
                raise Unschedulable(f"{op.name} uses an undefined value")
            placeholder = f"_o{position}"
            placeholders.append(placeholder)
            scope.bind(value, Term.name(placeholder))
            found = substituted_ivs.get(id(value))
            if found is None:
                name = renames.get(id(value), value.name)
                found = name_form(name)
                if use.role == "symbol":
                    symbols.add(name)
            values[placeholder] = found
        resolver = self.window.resolver
        try:
            if isinstance(op, AffineAccessOp):
                subscripts = op.subscripts
                assert subscripts is not None
                if op.map_ref is not None or not subscripts.result_spans:
                    raise Unschedulable(f"{op.name} in the generic form uses a loop iv")
                affine_map = subscripts.map
                dims, symbol_uses = subscripts.dims, subscripts.symbols
            else:
                assert isinstance(op, AffineApplyOp)
                affine_map = resolver.affine_map(op.map_ref)
                dims, symbol_uses = op.dims, op.symbols
            terms = resolver.map_results(affine_map, dims, symbol_uses, scope)
            forms = forms_of(
                self.session, [], placeholders, [t.text for t in terms], f"{op.name}'s map"
            )
        except NotAffine as error:
            raise Unschedulable(error.reason) from None
        forms = [ordered(substituted(form, values), self.rank) for form in forms]
        if isinstance(op, AffineAccessOp):
            assert op.subscripts is not None
            first = op.subscripts.result_spans[0].start_byte
            last = op.subscripts.result_spans[-1].end_byte
            text = ", ".join(render_mlir(form, str) for form in forms)
            return TextEdit(Span(first - start, last - start), text)
        span = Span(op.name_span.start_byte - start, op.span.end_byte - start)
        text = map_text(forms, lambda name: (name, name in symbols))
        return TextEdit(span, f"{op.name} {text}")

    def _rename_use(
        self,
        use: Use,
        renames: dict[int, str],
        plain: dict[int, str],
        recompute: list[Value],
        ivs: list[Value],
        rename: Callable[[Span, str, str], None],
    ) -> None:
        value = use.value
        if value is None:
            return
        if any(value is iv for iv in ivs):
            if id(value) in plain:
                rename(use.span, plain[id(value)], value.name)
            elif value not in recompute:
                recompute.append(value)
            return
        new = renames.get(id(value))
        if new is not None and not use.name.startswith(new):
            base = use.name.split("#")[0]
            if self.data[use.span.start_byte : use.span.end_byte].startswith(encode(base)):
                rename(use.span, new, base)


def _with_comments_above(data: bytes, offset: int) -> int:
    """The start of the line holding `offset`, or of the comment lines right above it."""
    start = line_start(data, offset)
    while start > 0:
        above = line_start(data, start - 1)
        if not data[above:start].strip().startswith(b"//"):
            break
        start = above
    return start


def _merged_by_renames(uses: list[Use], renames: dict[int, str]) -> bool:
    """Two operands of one affine map get the same name in this copy (an iv equal to
    an outer loop's: `%i_skew` is `%t` in a peeled row): the map is rewritten, its
    terms added up (`%t - %t` would be written otherwise)."""
    values = {id(u.value): u.value for u in uses if u.value is not None}
    names = {renames.get(key, value.name) for key, value in values.items()}
    return len(names) < len(values)


def _map_uses(op: Operation) -> list[Use]:
    """The operands of an op's affine map (subscripts, or an apply/min/max's)."""
    if isinstance(op, AffineAccessOp) and op.subscripts is not None:
        return list(op.subscripts.operands)
    if isinstance(op, AffineApplyOp) and op.name in _INDEX_OPS:
        return list(op.operands)
    return []


def _renamed(form: AffineForm, operand: Operand) -> AffineForm:
    """`form` over SSA names instead of isl names."""
    return AffineForm(
        tuple((operand(n)[0], c) for n, c in form.terms),
        tuple((_renamed(inner, operand), d, c) for inner, d, c in form.floors),
        form.constant,
    )
