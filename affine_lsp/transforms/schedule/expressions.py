"""isl AST expressions read as affine forms: loop bounds (max/min lists), guards
(conjunctions of `e >= 0` / `e == 0`) and the arguments of statement calls.

Names in the forms are the AST's iterator ids and the parameters' isl names;
`env` binds iterators that isl left as plain values (a degenerate loop) to
their forms. Floors are normalised (`floor((x + 9)/8)` is `floor((x + 1)/8) + 1`)
so that isl's remainders (`x + 1 - (x + 9) % 8`) print as `((x + 1) floordiv 8) * 8`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import islpy as isl

from affine_lsp.poly import AffineForm, NotAffine
from affine_lsp.transforms.schedule import isl_ast

Env = dict[str, AffineForm]


_op = isl_ast.op


def constant(value: int) -> AffineForm:
    return AffineForm((), (), value)


def name_form(name: str) -> AffineForm:
    return AffineForm(((name, 1),), (), 0)


def plus(a: AffineForm, b: AffineForm) -> AffineForm:
    return merged(AffineForm(a.terms + b.terms, a.floors + b.floors, a.constant + b.constant))


def scaled(form: AffineForm, factor: int) -> AffineForm:
    if factor == 0:
        return constant(0)
    return AffineForm(
        tuple((n, c * factor) for n, c in form.terms),
        tuple((inner, d, c * factor) for inner, d, c in form.floors),
        form.constant * factor,
    )


def minus(a: AffineForm, b: AffineForm) -> AffineForm:
    return plus(a, scaled(b, -1))


def merged(form: AffineForm) -> AffineForm:
    """Like terms and like floors added up, zero coefficients dropped, positive terms
    first."""
    terms: dict[str, int] = {}
    for name, coefficient in form.terms:
        terms[name] = terms.get(name, 0) + coefficient
    floors: dict[tuple[AffineForm, int], int] = {}
    for inner, divisor, coefficient in form.floors:
        floors[(inner, divisor)] = floors.get((inner, divisor), 0) + coefficient
    kept = [(n, c) for n, c in terms.items() if c]
    # Positive terms first, for reading: `%i_skew - %t - 1`, not `-%t + %i_skew - 1`.
    ordered = [t for t in kept if t[1] > 0] + [t for t in kept if t[1] < 0]
    return AffineForm(
        tuple(ordered),
        tuple((inner, d, c) for (inner, d), c in floors.items() if c),
        form.constant,
    )


def ordered(form: AffineForm, rank: Callable[[str], int]) -> AffineForm:
    """`form` with its positive terms first, each group by `rank` (outer loops first)."""
    terms = sorted(form.terms, key=lambda t: (t[1] < 0, rank(t[0])))
    floors = tuple((ordered(inner, rank), d, c) for inner, d, c in form.floors)
    return AffineForm(tuple(terms), floors, form.constant)


def floor_of(inner: AffineForm, divisor: int) -> AffineForm:
    """`floor(inner / divisor)`, with what divides exactly taken out of the floor."""
    if divisor <= 0:
        raise NotAffine("division by a non-positive constant")
    if divisor == 1:
        return inner
    if inner.floors:  # floor(floor(x / a) / b) is floor(x / (a * b)) only for a lone floor
        if len(inner.floors) == 1 and not inner.terms and inner.constant == 0:
            nested, first, coefficient = inner.floors[0]
            if coefficient == 1:
                return floor_of(nested, first * divisor)
        return AffineForm((), ((inner, divisor, 1),), 0)
    outside = [(n, c // divisor) for n, c in inner.terms if c % divisor == 0]
    rest = tuple((n, c) for n, c in inner.terms if c % divisor != 0)
    quotient, remainder = divmod(inner.constant, divisor)
    result = AffineForm(tuple(outside), (), quotient)
    if rest:
        result = plus(result, AffineForm((), ((AffineForm(rest, (), remainder), divisor, 1),), 0))
    return merged(result)


def substituted(form: AffineForm, values: Env) -> AffineForm:
    """`form` with each name bound in `values` replaced by its form."""
    result = constant(form.constant)
    for name, coefficient in form.terms:
        found = values.get(name)
        result = plus(result, scaled(found if found is not None else name_form(name), coefficient))
    for inner, divisor, coefficient in form.floors:
        result = plus(result, scaled(floor_of(substituted(inner, values), divisor), coefficient))
    return result


def _int(expr: isl.AstExpr) -> int:
    return int(expr.int_get_val().to_str())


def _args(expr: isl.AstExpr) -> list[isl.AstExpr]:
    return [expr.op_get_arg(k) for k in range(expr.op_get_n_arg())]


def form_of(expr: isl.AstExpr, env: Env) -> AffineForm:
    """An AST expression without min/max as an affine form."""
    kind = expr.get_type()
    if kind == isl_ast.EXPR_INT:
        return constant(_int(expr))
    if kind == isl_ast.EXPR_ID:
        name = expr.get_id().get_name()
        return env.get(name, name_form(name))
    op = expr.op_get_type()
    args = _args(expr)
    if op == _op("add"):
        return plus(form_of(args[0], env), form_of(args[1], env))
    if op == _op("sub"):
        return minus(form_of(args[0], env), form_of(args[1], env))
    if op == _op("minus"):
        return scaled(form_of(args[0], env), -1)
    if op == _op("mul"):
        left, right = form_of(args[0], env), form_of(args[1], env)
        if left.is_constant:
            return scaled(right, left.constant)
        if right.is_constant:
            return scaled(left, right.constant)
        raise NotAffine("a product of two loop variables")
    if op in (_op("fdiv_q"), _op("pdiv_q"), _op("div")):
        divisor = form_of(args[1], env)
        if not divisor.is_constant:
            raise NotAffine("a division by a variable")
        return floor_of(form_of(args[0], env), divisor.constant)
    if op in (_op("pdiv_r"), _op("zdiv_r")):
        divisor = form_of(args[1], env)
        if not divisor.is_constant:
            raise NotAffine("a remainder by a variable")
        dividend = form_of(args[0], env)
        return minus(dividend, scaled(floor_of(dividend, divisor.constant), divisor.constant))
    raise NotAffine(f"an expression isl wrote with '{op}'")


def bound_forms(expr: isl.AstExpr, env: Env, keyword: str) -> list[AffineForm]:
    """The operands of a (nested) `max` (keyword "max") or `min`, as forms."""
    wanted = _op("max") if keyword == "max" else _op("min")
    found: list[AffineForm] = []
    stack = [expr]
    while stack:
        current = stack.pop()
        if current.get_type() == isl_ast.EXPR_OP and current.op_get_type() == wanted:
            stack.extend(reversed(_args(current)))
        else:
            form = form_of(current, env)
            if form not in found:
                found.append(form)
    return found


@dataclass(frozen=True)
class Constraint:
    """`form >= 0`, or `form == 0` when `equality`."""

    form: AffineForm
    equality: bool = False


def conditions(expr: isl.AstExpr, env: Env) -> list[Constraint]:
    """A guard (a conjunction of comparisons) as constraints; a disjunction is not
    affine.if material (NotAffine)."""
    found: list[Constraint] = []
    stack = [expr]
    while stack:
        current = stack.pop()
        if current.get_type() != isl_ast.EXPR_OP:
            raise NotAffine("a guard that is not a comparison")
        op = current.op_get_type()
        args = _args(current)
        if op in (_op("and_"), _op("and_then")):
            stack.extend(reversed(args))
            continue
        if op in (_op("or_"), _op("or_else")):
            raise NotAffine("a guard with a disjunction")
        left_forms = _sides(args[0], env, op, left=True)
        right_forms = _sides(args[1], env, op, left=False)
        for left in left_forms:
            for right in right_forms:
                found.append(_compare(op, left, right))
    return found


def _sides(expr: isl.AstExpr, env: Env, op: object, left: bool) -> list[AffineForm]:
    """A side of a comparison: a min on the small side of `<=` (or a max on the big
    side) is several conditions at once."""
    if expr.get_type() == isl_ast.EXPR_OP and expr.op_get_type() in (_op("min"), _op("max")):
        small = op in (_op("le"), _op("lt"))
        keyword = "max" if (left == small) else "min"
        if expr.op_get_type() == (_op("max") if keyword == "max" else _op("min")):
            return bound_forms(expr, env, keyword)
        raise NotAffine("a guard comparing with min/max the wrong way")
    return [form_of(expr, env)]


def _compare(op: object, left: AffineForm, right: AffineForm) -> Constraint:
    if op == _op("eq"):
        return Constraint(minus(left, right), True)
    if op == _op("ge"):
        return Constraint(minus(left, right))
    if op == _op("gt"):
        return Constraint(plus(minus(left, right), constant(-1)))
    if op == _op("le"):
        return Constraint(minus(right, left))
    if op == _op("lt"):
        return Constraint(plus(minus(right, left), constant(-1)))
    raise NotAffine(f"a guard with '{op}'")
