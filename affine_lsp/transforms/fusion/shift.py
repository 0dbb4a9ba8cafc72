"""Fusion with a shift: the second nest's iterations moved by a constant per loop.

(With no shift needed, the same code aligns nests whose bounds differ: the loops
matched one for one, the iterations only one nest runs peeled. It is tried one
loop less deep than a shift that would make the nests' innermost loops one.)

The two sweeps of a stencil step (`B[i]` from `A[i-1..i+1]`, then `A[i]` from
`B[i-1..i+1]`) cannot fuse iteration for iteration: iteration `i` of the second
reads `B[i + 1]`, which iteration `i + 1` of the first writes. Shifted by one,
they fuse: the fused loop runs the first nest's iteration `i` and then the
second nest's iteration `i - 1`.

For a depth `d`, the shift of each of the `d` fused loops is the smallest
amount that puts every dependence between the nests at a non-negative distance
in every fused loop (`s_k = max(0, max(x_k - y_k))` over the dependent instance
pairs `x` of the first nest, `y` of the second; isl gives the maximum). The
fused loops then keep every dependence between the nests (and stay a
permutable band, which time tiling needs), and each nest keeps its own order.

The fused code (`ShiftWriter`) is ordinary affine MLIR: per loop level, the
iterations where only one nest runs (the first nest's first iterations, the
second nest's last ones) are peeled off before and after one loop that runs
both bodies; a peeled piece of one iteration is written without its loop (its
induction variable replaced by the value in subscripts) where that is clean.
No `affine.if` is written. The result is proven like every fusion
(`verify.check_copies`: exact dataflow comparison).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import islpy as isl

from affine_lsp.checks import TextEdit
from affine_lsp.ir import (
    AffineAccessOp,
    AffineBinary,
    AffineConst,
    AffineDim,
    AffineExpr,
    AffineForOp,
    AffineNeg,
    AffineSymbol,
    AffineYieldOp,
    FuncOp,
    Operation,
    Value,
)
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    PolyError,
    Scope,
    Statement,
    Window,
    is_under,
    render_mlir,
)
from affine_lsp.syntax import Span, decode, encode
from affine_lsp.transforms.bounds import forms_of, operand_namer, render_bound
from affine_lsp.transforms.edits import (
    apply_edits,
    indentation,
    line_start,
    next_line_start,
)
from affine_lsp.transforms.fusion.copy import CannotEdit, nest_lines
from affine_lsp.transforms.fusion.verify import CopiedOp, check_copies
from affine_lsp.transforms.naming import FreshNames, names_in

FIRST, SECOND = 0, 1


@dataclass(frozen=True)
class FusedLoop:
    """Marks, among the written items, where a loop that runs both nests starts."""

    level: int
    indent: int  # bytes of indentation before `affine.for`


class NoShift(PolyError):
    """Shifted fusion does not apply to the pair at this depth (`reason` says why)."""


@dataclass
class Shifted:
    """A proven shifted fusion: the shift per fused loop and the rewrite."""

    depth: int
    amounts: tuple[int, ...]
    edits: list[TextEdit]
    new_text: bytes
    function: FuncOp
    host_offset: int
    loop_origins: dict[int, int] = field(default_factory=dict)  # new loop -> loop it repeats
    innermost_together: bool = False
    """Both nests' innermost loops became one whose shift is not zero (a dependence
    between the nests carried by it: the fused loop vectorizes less well)."""


def shift_text(amounts: tuple[int, ...]) -> str:
    """How a fusion places the second nest, for messages: `shifted by 1`, `shifted by
    (1, 0)`, or `aligned` (no shift: the loops matched one for one, the iterations
    only one nest runs peeled)."""
    if not any(amounts):
        return "aligned"
    if len(amounts) == 1:
        return f"shifted by {amounts[0]}"
    return "shifted by (" + ", ".join(str(a) for a in amounts) + ")"


# -- linear expressions over SSA names ---------------------------------------------------


def _sum(parts: list[tuple[AffineForm, int]]) -> AffineForm:
    """Σ coefficient * form, like terms merged (forms without floors)."""
    merged: dict[str, int] = {}
    constant = 0
    for form, coefficient in parts:
        for name, c in form.terms:
            merged[name] = merged.get(name, 0) + c * coefficient
        constant += form.constant * coefficient
    return AffineForm(tuple((n, c) for n, c in merged.items() if c), (), constant)


def _constant(value: int) -> AffineForm:
    return AffineForm((), (), value)


def _name(name: str) -> AffineForm:
    return AffineForm(((name, 1),), (), 0)


def _linear(expr: AffineExpr, names: list[str], symbols: list[str]) -> AffineForm | None:
    """A subscript expression as a linear form over the SSA names of its dims and
    `symbol(...)`s (None if it is not linear: mod, floordiv, products of names)."""
    if isinstance(expr, AffineConst):
        return _constant(expr.value)
    if isinstance(expr, AffineDim):
        return _name(names[expr.position]) if expr.position < len(names) else None
    if isinstance(expr, AffineSymbol):
        if expr.position >= len(symbols):
            return None
        return _name(f"symbol({symbols[expr.position]})")
    if isinstance(expr, AffineNeg):
        inner = _linear(expr.operand, names, symbols)
        return None if inner is None else _sum([(inner, -1)])
    if isinstance(expr, AffineBinary):
        lhs = _linear(expr.lhs, names, symbols)
        rhs = _linear(expr.rhs, names, symbols)
        if lhs is None or rhs is None:
            return None
        if expr.op == "+":
            return _sum([(lhs, 1), (rhs, 1)])
        if expr.op == "-":
            return _sum([(lhs, 1), (rhs, -1)])
        if expr.op == "*":
            if lhs.is_constant:
                return _sum([(rhs, lhs.constant)])
            if rhs.is_constant:
                return _sum([(lhs, rhs.constant)])
    return None


def _substitute(form: AffineForm, values: dict[str, AffineForm]) -> AffineForm:
    parts: list[tuple[AffineForm, int]] = [(_constant(form.constant), 1)]
    for name, coefficient in form.terms:
        parts.append((values.get(name, _name(name)), coefficient))
    return _sum(parts)


def _render(form: AffineForm) -> str:
    return render_mlir(form, lambda name: name)


# -- the plan ----------------------------------------------------------------------------


@dataclass
class Range:
    """Bounds of one fused loop for one nest, in fused coordinates (upper exclusive)."""

    lower: AffineForm
    upper: AffineForm


@dataclass
class Piece:
    """Iterations of one fused loop level: both nests (`nests` = (0, 1)) or one."""

    nests: tuple[int, ...]
    lowers: list[AffineForm]  # max of these (fused coordinates)
    uppers: list[AffineForm]  # min of these


def _difference(a: AffineForm, b: AffineForm) -> int | None:
    """`a - b` when it is a constant."""
    delta = a.minus(b)
    return delta.constant if delta.is_constant else None


def _simplified(forms: list[AffineForm], lower: bool) -> list[AffineForm]:
    """A max (lower) or min (upper) list without entries another entry decides."""
    kept: list[AffineForm] = []
    for form in forms:
        dominated = False
        for other in list(kept):
            delta = _difference(form, other)
            if delta is None:
                continue
            if (delta <= 0) if lower else (delta >= 0):
                dominated = True
                break
            kept.remove(other)
        if not dominated:
            kept.append(form)
    return kept


def _size(piece: Piece) -> int | None:
    """The piece's number of iterations when it is a constant."""
    if len(piece.lowers) != 1 or len(piece.uppers) != 1:
        return None
    return _difference(piece.uppers[0], piece.lowers[0])


def level_pieces(first: Range, second: Range) -> list[Piece]:
    """The pieces of one fused loop level in execution order: the iterations before
    both nests run (one nest alone), those where both run, those after."""
    a, b, c, e = first.lower, first.upper, second.lower, second.upper
    lowers = _difference(a, c)
    uppers = _difference(b, e)
    if lowers is None or uppers is None:
        raise NoShift("the two loops' bounds differ by amounts that are not constant")
    start = a if lowers >= 0 else c  # P: where both may run
    end = b if uppers <= 0 else e  # Q
    pieces: list[Piece] = []
    if lowers != 0:
        alone, own = (FIRST, b) if lowers < 0 else (SECOND, e)
        low = a if alone == FIRST else c
        pieces.append(Piece((alone,), [low], _simplified([start, own], False)))
    pieces.append(Piece((FIRST, SECOND), [start], [end]))
    if uppers != 0:
        alone, own = (FIRST, b) if uppers > 0 else (SECOND, e)
        pieces.append(Piece((alone,), _simplified([start, end], True), [own]))
    kept = []
    for piece in pieces:
        size = _size(piece)
        if size is not None and size <= 0 and len(piece.nests) == 1:
            continue
        kept.append(piece)
    both = next(p for p in kept if len(p.nests) == 2)
    size = _size(both)
    if size is not None and size <= 0:
        raise NoShift("shifted, the two nests would have no iteration in common")
    for low, high in ((a, b), (c, e)):
        trip = _difference(high, low)
        together = size if size is not None else _difference(end, start)
        if trip is not None and together is not None and 4 * together < 3 * trip:
            raise NoShift(
                f"shifted, the nests would run together for only {together} of {trip} iterations"
            )
    return kept


# -- analysis ------------------------------------------------------------------------------


def perfect_band(root: AffineForOp, depth: int) -> list[AffineForOp]:
    """The `depth` outer loops of `root` if each of the first `depth - 1` holds only the
    next one (the last may hold anything)."""
    band = [root]
    while len(band) < depth:
        body = band[-1].body
        ops = [op for op in body.operations() if not isinstance(op, AffineYieldOp)] if body else []
        if len(ops) != 1 or not isinstance(ops[0], AffineForOp):
            return band
        band.append(ops[0])
    return band


class ShiftPlanner:
    """The shift of a pair of nests at each depth, from the dependences between them."""

    def __init__(
        self,
        session: IslSession,
        window: Window,
        first: AffineForOp,
        second: AffineForOp,
    ) -> None:
        self.session = session
        self.window = window
        self.first = first
        self.second = second
        self.firsts = [s for s in window.statements if is_under(s.op, first)]
        self.seconds = [s for s in window.statements if is_under(s.op, second)]

    def bands(self, depth: int) -> tuple[list[AffineForOp], list[AffineForOp]]:
        bands = (perfect_band(self.first, depth), perfect_band(self.second, depth))
        if any(len(band) < depth for band in bands):
            raise NoShift(f"the nests do not both have {depth} perfectly nested loops")
        for loop in bands[0] + bands[1]:
            if (loop.step or 1) != 1:
                raise NoShift("a loop to fuse has a step other than 1")
            if loop.iter_args or loop.results:
                raise NoShift("a loop to fuse carries values (iter_args)")
        return bands

    def amounts(self, depth: int) -> tuple[int, ...]:
        """The smallest shift of each of the `depth` fused loops (see the module
        docstring); NoShift when no constant shift does it."""
        relation = None
        for a in self.firsts:
            for b in self.seconds:
                if a.array != b.array or not (a.is_write or b.is_write):
                    continue
                pairs = self._band_pairs(a, b, depth)
                relation = pairs if relation is None else relation.union(pairs)
        if relation is None:
            raise NoShift("the nests touch no memref in common")
        deltas = self.session.run(lambda r=relation: r.deltas(), "the dependence distances")
        found = []
        for k in range(depth):
            low = self.session.run(lambda k=k: _minimum(deltas, k), "a dependence distance")
            if low is None:
                raise NoShift("the dependence distances between the nests are not bounded")
            found.append(max(0, -low))
        return tuple(found)

    def _band_pairs(self, a: Statement, b: Statement, depth: int) -> isl.Map:
        """{ x[band of a] -> y[band of b] : x and y touch the same element }."""

        def run() -> isl.Map:
            same = a.access.apply_range(b.access.reverse())
            same = same.project_out(isl.dim_type.in_, depth, same.dim(isl.dim_type.in_) - depth)
            same = same.project_out(isl.dim_type.out, depth, same.dim(isl.dim_type.out) - depth)
            same = same.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
            return same.intersect_params(self.window.context)

        return self.session.run(run, "the dependences between the nests")

    def ranges(self, band: list[AffineForOp], amounts: tuple[int, ...]) -> list[Range]:
        """Each band loop's bounds, shifted by `amounts`, as forms over parameters;
        NoShift when a bound is not one affine expression of values fixed over the nest."""
        builder = self.window.builder
        inside = frozenset(id(loop) for loop in band)
        params = sorted(
            {
                self.window.context.get_dim_name(isl.dim_type.param, k) or ""
                for k in range(self.window.context.dim(isl.dim_type.param))
            }
        )
        found = []
        for loop, amount in zip(band, amounts, strict=True):
            forms = []
            for bound in (loop.lower, loop.upper):
                try:
                    terms = builder.bound_terms(bound, Scope(inside=inside))
                except NotAffine as error:
                    raise NoShift(error.reason) from None
                if len(terms) != 1:
                    raise NoShift("a loop to fuse has a max/min bound")
                term = terms[0]
                names = sorted(set(params) | term.params)
                (form,) = forms_of(self.session, names, [], [term.text])
                if form.floors:
                    raise NoShift("a loop to fuse has a bound with floordiv")
                forms.append(_sum([(form, 1), (_constant(amount), 1)]))
            found.append(Range(forms[0], forms[1]))
        return found


def _minimum(deltas: isl.Set, k: int) -> int | None:
    """The smallest value of coordinate `k` of a (parametric) set, over every value
    of the parameters (None if unbounded)."""
    flat = deltas.move_dims(
        isl.dim_type.set,
        deltas.dim(isl.dim_type.set),
        isl.dim_type.param,
        0,
        deltas.dim(isl.dim_type.param),
    )
    if flat.is_empty():
        return 0
    value = flat.dim_min_val(k)
    if not value.is_int():
        return None
    return int(value.to_str())


# -- writing -----------------------------------------------------------------------------


@dataclass
class Chunk:
    """One copy of original code in the fused text: the ops copied (`ops`, from one
    block; or a loop when `root` is a loop copied with new bounds), and the value of
    each band iv above the copy as a form over new SSA names."""

    nest: int
    ops: list[Operation]
    above: dict[int, AffineForm]  # id(old iv) -> its value in the new code
    above_ivs: list[Value]  # the old band ivs above the copy, outermost first
    indent: str
    loop_bounds: tuple[str, str] | None = None  # a loop copied with new bounds
    iv_name: str | None = None  # the new name of that loop's iv
    text: str = ""
    start: int = 0  # offset of the chunk's text in the fused nest's text
    prelude: int = 0  # bytes of value definitions written before the copied lines
    together: bool = False  # a body in the loop that runs both nests
    level: int = 0  # how many fused loops are around it


class ShiftWriter:
    """Writes the fused nest of two nests at `depth` with `amounts`."""

    def __init__(
        self,
        data: bytes,
        window: Window,
        function: FuncOp,
        bands: tuple[list[AffineForOp], list[AffineForOp]],
        ranges: tuple[list[Range], list[Range]],
        amounts: tuple[int, ...],
    ) -> None:
        self.data = data
        self.window = window
        self.bands = bands
        self.ranges = ranges
        self.amounts = amounts
        self.depth = len(amounts)
        first, second = bands[0][0], bands[1][0]
        ours = _defined(first) | _defined(second)
        self.fresh = FreshNames({n for n in names_in(function) if n not in ours})
        outer = indentation(data, second.span.start_byte)
        self.base = outer
        inner = first.body.entry.operations[0] if first.body and first.body.entry else None
        delta = len(indentation(data, inner.span.start_byte)) - len(outer) if inner else 2
        self.step = " " * (delta if delta > 0 else 2)
        self.items: list[object] = []
        self.fused_names: list[str] = []

    # -- structure -------------------------------------------------------------------

    def write(self) -> tuple[str, list[Chunk], list[int]]:
        """The fused code, its chunks and where its loops that run both nests start,
        outermost first (offsets relative to the text's start)."""
        self.fused_names = [
            self.fresh.reuse(loop.induction_variable.name)  # type: ignore[union-attr]
            for loop in self.bands[FIRST]
        ]
        self._level(0, self.base, {FIRST: {}, SECOND: {}})
        chunks = [item for item in self.items if isinstance(item, Chunk)]
        self._name_chunks(chunks)
        text: list[str] = []
        length = 0
        fused: list[int] = []
        for item in self.items:
            if isinstance(item, FusedLoop):
                if item.level == len(fused):
                    fused.append(length + item.indent)
                continue
            if isinstance(item, Chunk):
                piece = item.text = self._chunk_text(item)
                item.start = length
            else:
                assert isinstance(item, str)
                piece = item
            text.append(piece)
            length += len(encode(piece))
        return "".join(text), chunks, fused

    def _level(self, k: int, indent: str, above: dict[int, dict[int, AffineForm]]) -> None:
        pieces = level_pieces(self.ranges[FIRST][k], self.ranges[SECOND][k])
        for piece in pieces:
            if len(piece.nests) == 2:
                self._both(k, piece, indent, above)
            else:
                self._alone(k, piece, indent, above)

    def _both(
        self, k: int, piece: Piece, indent: str, above: dict[int, dict[int, AffineForm]]
    ) -> None:
        name = self.fused_names[k]
        lower = self._bound(piece.lowers, True)
        upper = self._bound(piece.uppers, False)
        self.items.append(FusedLoop(k, len(encode(indent))))
        self.items.append(f"{indent}affine.for {name} = {lower} to {upper} {{\n")
        inner = {nest: dict(values) for nest, values in above.items()}
        for nest in (FIRST, SECOND):
            iv = self.bands[nest][k].induction_variable
            assert iv is not None
            inner[nest][id(iv)] = _sum([(_name(name), 1), (_constant(-self.amounts[k]), 1)])
            if nest == FIRST:
                inner[nest][id(iv)] = _name(name)
        if k + 1 < self.depth:
            self._level(k + 1, indent + self.step, inner)
        else:
            for nest in (FIRST, SECOND):
                body = self._body(self.bands[nest][k])
                if body:
                    chunk = self._chunk(nest, body, inner[nest], indent + self.step)
                    chunk.together = True
                    chunk.level = self.depth
                    self.items.append(chunk)
        self.items.append(f"{indent}}}\n")

    def _alone(
        self, k: int, piece: Piece, indent: str, above: dict[int, dict[int, AffineForm]]
    ) -> None:
        (nest,) = piece.nests
        loop = self.bands[nest][k]
        shift = _constant(-self.amounts[k] if nest == SECOND else 0)
        lowers = [_sum([(f, 1), (shift, 1)]) for f in piece.lowers]
        uppers = [_sum([(f, 1), (shift, 1)]) for f in piece.uppers]
        if _size(piece) == 1 and self._promotable(loop):
            # One iteration: the loop's body, its iv replaced by that iteration's value.
            values = dict(above[nest])
            assert loop.induction_variable is not None
            values[id(loop.induction_variable)] = lowers[0]
            body = self._body(loop)
            if body:
                chunk = self._chunk(nest, body, values, indent)
                chunk.level = k
                self.items.append(chunk)
            return
        chunk = self._chunk(nest, [loop], above[nest], indent)
        chunk.level = k
        chunk.loop_bounds = (self._bound(lowers, True), self._bound(uppers, False))
        self.items.append(chunk)

    def _ssa(self, form: AffineForm) -> AffineForm:
        """A form over fused ivs (`%i`) and isl parameters as one over SSA names."""
        namer = operand_namer(self.window, {})
        return AffineForm(
            tuple((n if n.startswith("%") else namer(n)[0], c) for n, c in form.terms),
            (),
            form.constant,
        )

    def _bound(self, forms: list[AffineForm], lower: bool) -> str:
        return render_bound(forms, lower, operand_namer(self.window, {}))

    def _promotable(self, loop: AffineForOp) -> bool:
        body = loop.body
        return body is not None and not loop.iter_args and not loop.results

    def _body(self, loop: AffineForOp) -> list[Operation]:
        body = loop.body.entry if loop.body is not None else None
        ops = body.operations if body is not None else []
        return [op for op in ops if not isinstance(op, AffineYieldOp)]

    def _chunk(
        self, nest: int, ops: list[Operation], above: dict[int, AffineForm], indent: str
    ) -> Chunk:
        ivs = [
            loop.induction_variable
            for loop in self.bands[nest]
            if loop.induction_variable is not None and id(loop.induction_variable) in above
        ]
        return Chunk(nest, ops, dict(above), ivs, indent)

    # -- names -----------------------------------------------------------------------------

    def _name_chunks(self, chunks: list[Chunk]) -> None:
        """Names for the values each copy defines. Values at a copy's top level share
        the block with other copies (or are seen from the copies nested in it): each
        gets a name of its own, the copies in the loop that runs both nests first, so
        that they keep the original names where they can. Values inside a copied loop
        are seen by nothing else: they keep their names unless those are taken."""
        together = [c for c in chunks if c.together]
        self.renames: dict[int, dict[int, str]] = {}
        for chunk in together + [c for c in chunks if not c.together]:
            names: dict[int, str] = {}
            for op in chunk.ops:
                for value in _values_defined(op) if not op.regions else op.results:
                    names[id(value)] = self.fresh.reuse(value.name)
            self.renames[id(chunk)] = names
        for chunk in chunks:
            names = self.renames[id(chunk)]
            local = FreshNames(self.fresh.taken - set(self.fused_names[chunk.level :]))
            for root in chunk.ops:
                for op in root.walk():
                    for value in _values_defined(op):
                        if id(value) not in names:
                            names[id(value)] = local.reuse(value.name)

    # -- text of a copy --------------------------------------------------------------------

    def _chunk_text(self, chunk: Chunk) -> str:
        data = self.data
        start = line_start(data, chunk.ops[0].span.start_byte)
        end = next_line_start(data, chunk.ops[-1].span.end_byte)
        names = self.renames[id(chunk)]
        edits: list[TextEdit] = []
        covered: list[Span] = []
        prelude: list[str] = []
        values = {iv_id: self._ssa(form) for iv_id, form in chunk.above.items()}
        ivs = {id(iv): iv for iv in chunk.above_ivs}
        # Uses of a band iv outside subscripts: a value defined before the copy.
        defined: dict[int, str] = {}

        def value_name(iv: Value) -> str:
            if id(iv) not in defined:
                form = values[id(iv)]
                single = form.single_name()
                if single is not None:
                    defined[id(iv)] = single
                else:
                    name = FreshNames(self.fresh.taken | set(names.values())).fresh(iv.name)
                    self.fresh.taken.add(name)
                    prelude.append(f"{name} = {_value_text(form)}")
                    defined[id(iv)] = name
            return defined[id(iv)]

        if chunk.loop_bounds is not None:
            (loop,) = chunk.ops
            assert isinstance(loop, AffineForOp) and loop.lower and loop.upper
            edits.append(TextEdit(loop.lower.span, chunk.loop_bounds[0]))
            edits.append(TextEdit(loop.upper.span, chunk.loop_bounds[1]))
            covered += [loop.lower.span, loop.upper.span]
        for root in chunk.ops:
            for op in root.walk():
                if isinstance(op, AffineAccessOp) and op.subscripts is not None:
                    edits += self._subscripts(op, values, names, covered)
        for root in chunk.ops:
            for op in root.walk():
                for value in _values_defined(op):
                    new = names.get(id(value), value.name)
                    if new != value.name and not _inside(value.span, covered):
                        edits.append(TextEdit(_name_span(value), new))
                for use in op.operands:
                    if use.value is None or _inside(use.span, covered):
                        continue
                    if id(use.value) in ivs:
                        new = value_name(use.value)
                    elif id(use.value) in names:
                        new = names[id(use.value)]
                    else:
                        continue
                    base = use.name.split("#")[0]
                    if new != base:
                        edits.append(
                            TextEdit(
                                Span(use.span.start_byte, use.span.start_byte + len(encode(base))),
                                new,
                            )
                        )
        # Re-indent every line of the copy.
        target = len(chunk.indent)
        source = len(indentation(data, chunk.ops[0].span.start_byte))
        edits += _indent_edits(data, start, end, target - source, covered)
        local = [
            TextEdit(Span(e.span.start_byte - start, e.span.end_byte - start), e.new_text)
            for e in edits
        ]
        text = decode(apply_edits(data[start:end], local))
        head = "".join(f"{chunk.indent}{line}\n" for line in prelude)
        chunk.prelude = len(encode(head))
        return head + text

    def _subscripts(
        self,
        op: AffineAccessOp,
        values: dict[int, AffineForm],
        names: dict[int, str],
        covered: list[Span],
    ) -> list[TextEdit]:
        """The subscripts of `op` that use a band iv, rewritten as linear expressions of
        the new names (those that are not linear keep the iv, renamed by the caller)."""
        subscripts = op.subscripts
        assert subscripts is not None
        dim_names = [use.name for use in subscripts.dims]
        symbol_names = [use.name for use in subscripts.symbols]
        substitution: dict[str, AffineForm] = {}
        for use in subscripts.dims:
            if use.value is not None and id(use.value) in values:
                substitution[use.name] = values[id(use.value)]
            elif use.value is not None and id(use.value) in names:
                substitution[use.name] = _name(names[id(use.value)])
        if not any(id(u.value) in values for u in subscripts.dims if u.value is not None):
            return []
        edits = []
        for expr, span in zip(subscripts.map.results, subscripts.result_spans, strict=False):
            form = _linear(expr, dim_names, symbol_names)
            if form is None:
                continue
            if not any(name in substitution for name, _ in form.terms):
                continue
            rewritten = _substitute(form, substitution)
            edits.append(TextEdit(span, _render(rewritten)))
            covered.append(span)
        return edits


def _value_text(form: AffineForm) -> str:
    """An op defining an index equal to `form` (over SSA names)."""
    if form.is_constant:
        return f"arith.constant {form.constant} : index"
    dims = [name for name, _ in form.terms]
    positions = {name: f"d{k}" for k, name in enumerate(dims)}
    body = render_mlir(form, positions.__getitem__)
    header = ", ".join(positions.values())
    return f"affine.apply affine_map<({header}) -> ({body})>({', '.join(dims)})"


def _defined(root: Operation) -> set[str]:
    return {value.name for op in root.walk() for value in _values_defined(op)}


def _values_defined(op: Operation) -> list[Value]:
    values = [v for v in op.results if v.index == 0]
    for region in op.regions:
        for block in region.blocks:
            values += block.arguments
    return values


def _name_span(value: Value) -> Span:
    return Span(value.span.start_byte, value.span.start_byte + len(encode(value.name)))


def _inside(span: Span, covered: list[Span]) -> bool:
    return any(c.start_byte <= span.start_byte and span.end_byte <= c.end_byte for c in covered)


def _indent_edits(
    data: bytes, start: int, end: int, delta: int, covered: list[Span]
) -> list[TextEdit]:
    edits = []
    position = start
    while position < end:
        if not any(c.start_byte < position < c.end_byte for c in covered):
            if delta > 0 and data[position : position + 1] not in (b"\n", b"\r", b""):
                edits.append(TextEdit(Span(position, position), " " * delta))
            elif delta < 0:
                strip = 0
                while strip < -delta and data[position + strip : position + strip + 1] == b" ":
                    strip += 1
                if strip:
                    edits.append(TextEdit(Span(position, position + strip), ""))
        position = next_line_start(data, position)
    return edits


# -- the rewrite ---------------------------------------------------------------------------


def shifted_fusion(
    session: IslSession,
    window: Window,
    data: bytes,
    model,
    function: FuncOp,
    first: AffineForOp,
    second: AffineForOp,
    depth: int,
    aligned: bool = False,
) -> Shifted:
    """The proven fusion of `first` into `second` at `depth` with the smallest shift
    (with `aligned`, also when that shift is zero); NoShift (or a PolyError) when it
    does not apply or is not proven."""
    planner = ShiftPlanner(session, window, first, second)
    bands = planner.bands(depth)
    zero = (0,) * depth
    unshifted = (planner.ranges(bands[FIRST], zero), planner.ranges(bands[SECOND], zero))
    amounts = planner.amounts(depth)
    if not any(amounts) and not aligned:
        raise NoShift("the nests fuse without a shift")
    ranges = (
        unshifted[FIRST],
        [
            Range(_sum([(r.lower, 1), (_constant(a), 1)]), _sum([(r.upper, 1), (_constant(a), 1)]))
            for r, a in zip(unshifted[SECOND], amounts, strict=True)
        ],
    )
    between = window.ops[window.ops.index(first) + 1 : window.ops.index(second)]
    if any(isinstance(op, AffineForOp) or _touches_memory(op, window) for op in between):
        raise NoShift("code between the nests touches memory")
    writer = ShiftWriter(data, window, function, bands, ranges, amounts)
    text, chunks, fused = writer.write()
    host = fused[0]
    try:
        first_start, first_end = nest_lines(data, first, True)
        second_start, second_end = nest_lines(data, second, False)
    except CannotEdit as error:
        raise NoShift(str(error)) from None
    edits = [
        TextEdit(Span(first_start, first_end), ""),
        TextEdit(Span(second_start, second_end), text),
    ]
    start = second_start - (first_end - first_start)
    copies = [
        CopiedOp(
            start + chunk.start + chunk.prelude,
            start + chunk.start + len(encode(chunk.text)),
            [op for root in chunk.ops for op in root.walk() if isinstance(op, AffineAccessOp)],
            [(iv, chunk.above[id(iv)]) for iv in chunk.above_ivs],
        )
        for chunk in chunks
    ]
    span = Span(start, start + len(encode(text)))
    checked = check_copies(
        session, window, data, model, function, edits, copies, (first, second), span, start + host
    )
    if not checked.legal:
        raise NoShift("the shifted fusion is not equivalent (the proof found a difference)")
    origins = _loop_origins(checked.function, chunks, start, fused, bands[SECOND])
    innermost = all(
        not any(isinstance(op, AffineForOp) for op in band[-1].walk() if op is not band[-1])
        for band in bands
    )
    return Shifted(
        depth,
        amounts,
        edits,
        checked.new_text,
        checked.function,
        start + host,
        origins,
        innermost and amounts[-1] != 0,
    )


def _loop_origins(
    function: FuncOp, chunks: list[Chunk], start: int, fused: list[int], band: list[AffineForOp]
) -> dict[int, int]:
    """The fused code's loops (new offsets) and the loops they repeat (old offsets): the
    loops that run both nests repeat the second nest's band, the loops of each copy
    the copied ones."""
    starts = {op.span.start_byte for op in function.walk() if isinstance(op, AffineForOp)}
    found = {
        start + offset: loop.span.start_byte
        for offset, loop in zip(fused, band, strict=False)
        if start + offset in starts
    }
    for chunk in chunks:
        low = start + chunk.start + chunk.prelude
        high = start + chunk.start + len(encode(chunk.text))
        new = sorted(offset for offset in starts if low <= offset < high)
        old = [
            op.span.start_byte
            for root in chunk.ops
            for op in root.walk()
            if isinstance(op, AffineForOp)
        ]
        if len(new) == len(old):
            found.update(zip(new, old, strict=True))
    return found


def _touches_memory(op: Operation, window: Window) -> bool:
    return any(is_under(s.op, op) for s in window.statements)
