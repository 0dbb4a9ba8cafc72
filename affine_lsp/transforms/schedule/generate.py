"""Affine MLIR from per-statement schedules, by isl's AST generator.

Every statement gets a time vector (isl expressions of its dims) in one common
time space; `Dimension`s say how each time dimension is written: the SSA name
of its loops, `affine.parallel` or not, and whether isl separates its loops
(peeling, so that no guard is left in the loops inside) or keeps them atomic.
isl's AST (`AstBuild.node_from_schedule_map`) becomes text:

- a `for` is an `affine.for` (or `affine.parallel`) whose bounds are isl's,
  `max`/`min` only where isl needs several; a loop whose bounds and step equal
  those of the original loop it stands for keeps its header text;
- an `if` is an `affine.if` over an `affine_set`;
- a statement call is an instance of the statement (`instances.py`).

The text keeps a record of the op each generated op repeats (`Copy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import islpy as isl

from affine_lsp.ir import AffineForOp
from affine_lsp.poly import (
    AffineForm,
    IslSession,
    NotAffine,
    Scope,
    Term,
    Window,
    render_mlir,
    union_of_maps,
)
from affine_lsp.syntax import decode, encode
from affine_lsp.transforms.bounds import forms_of, operand_namer, render_bound
from affine_lsp.transforms.naming import FreshNames
from affine_lsp.transforms.schedule import isl_ast
from affine_lsp.transforms.schedule.expressions import (
    Constraint,
    Env,
    bound_forms,
    conditions,
    constant,
    floor_of,
    form_of,
    name_form,
    ordered,
    plus,
    scaled,
)
from affine_lsp.transforms.schedule.instances import Copy, InstanceWriter
from affine_lsp.transforms.schedule.statements import Statement, Unschedulable

_ITERATOR = "_c"


@dataclass
class Dimension:
    """One dimension of the time space, as the loops written for it.

    `loops`: per statement name (or "*" for all), the original loop whose iv this
    dimension is for that statement: a loop over statements that all repeat one
    original loop is named after it (unless `name` is given) and keeps its header
    text when its bounds and step are the original's."""

    name: str = ""  # the SSA name of its loops
    parallel: bool = False  # written as affine.parallel
    separate: bool = True  # isl's `separate` (peeled, no guards inside), else `atomic`
    loops: dict[str, AffineForOp] = field(default_factory=dict)

    def loop_for(self, statements: list[str]) -> AffineForOp | None:
        """The one original loop the statements repeat on this dimension, if any."""
        if "*" in self.loops:
            return self.loops["*"]
        found = {id(self.loops[s]): self.loops[s] for s in statements if s in self.loops}
        if len(found) != 1 or any(s not in self.loops for s in statements):
            return None
        return next(iter(found.values()))


@dataclass
class Scheduled:
    """Statements, their time vectors (isl expressions of each one's dims, by
    statement name) and how each time dimension is written."""

    statements: list[Statement]
    times: dict[str, list[str]]
    dims: list[Dimension]
    relation: isl.UnionMap | None = None
    """The schedule as an isl union map (instances -> time), in place of `times`:
    what isl's scheduler gives, for instance."""
    extents: dict[str, isl.Set] = field(default_factory=dict)
    """Per statement, a box of its dims that holds its instances: its loops are
    generated over the box, and each instance is guarded by an `affine.if` (so that
    statements that start or end at other places share one loop per level)."""
    lifted: dict[str, dict[int, int]] = field(default_factory=dict)
    """Per statement, time positions where its time is one value (the loop of a
    band it lacks: a row of a sweep): it is generated at every iteration of the
    loop there and guarded inside (to that value), so that the loop is shared
    with the other statements. Its extent, if any, has one more dim per position
    (after its own, in order)."""


@dataclass
class Generated:
    """The generated text and the op each op of it repeats (byte offsets in `text`)."""

    text: str
    copies: dict[int, Copy] = field(default_factory=dict)


def schedule_map(session: IslSession, scheduled: Scheduled) -> isl.UnionMap:
    """The time vectors as one union map (statements' instances -> time)."""
    if scheduled.relation is not None:
        given: isl.UnionMap = scheduled.relation
        domains = [s.instances.identity() for s in scheduled.statements]
        instances = union_of_maps(domains, session.ctx).domain()
        return session.run(lambda: given.intersect_domain(instances), "the new schedule")
    maps = []
    width = len(scheduled.dims)
    # A time may name a parameter its statement's domain does not (see `violation`).
    params = frozenset().union(*(s.domain.params for s in scheduled.statements))
    for statement in scheduled.statements:
        time = list(scheduled.times[statement.name])
        if len(time) > width:
            raise Unschedulable("a time vector is longer than the time space")
        time += ["0"] * (width - len(time))
        lifts = sorted(scheduled.lifted.get(statement.name, {}))
        for position in lifts:
            time[position] = f"{_LIFTED}{position}"
        extra = [f"{_LIFTED}{position}" for position in lifts]
        text = statement.domain.text(f" -> [{', '.join(time)}]", statement.name, extra, params)
        relation = session.map(text)
        extent = scheduled.extents.get(statement.name)
        instances = lifted_instances(scheduled, statement) if extent is None else extent
        maps.append(session.run(lambda r=relation, i=instances: r.intersect_domain(i)))
    return session.run(lambda: union_of_maps(maps, session.ctx), "the new schedule")


_LIFTED = "_lift"


def lifted_instances(scheduled: Scheduled, statement: Statement) -> isl.Set:
    """The statement's instances, with a dim per lifted position fixed to its value."""
    lifts = scheduled.lifted.get(statement.name, {})
    instances = statement.instances
    if not lifts:
        return instances
    own = instances.dim(isl.dim_type.set)
    found = instances.add_dims(isl.dim_type.set, len(lifts))
    for k, position in enumerate(sorted(lifts)):
        found = found.fix_val(
            isl.dim_type.set, own + k, isl.Val.int_from_si(found.get_ctx(), lifts[position])
        )
    return found.set_tuple_name(statement.name)


def generate(
    session: IslSession,
    data: bytes,
    window: Window,
    scheduled: Scheduled,
    indent: str,
    unit: int,
    names: FreshNames,
) -> Generated:
    """The code of `scheduled`, indented from `indent` by `unit` spaces a level. Loops
    that atomic dimensions would bound by a `min` of lower bounds (not an
    affine.for) are separated instead."""
    try:
        return _Writer(session, data, window, scheduled, indent, unit, names).run()
    except NotAffine as error:
        if all(dim.separate for dim in scheduled.dims):
            raise Unschedulable(f"cannot write the new loops: {error.reason}") from None
    separated = [replace(dim, separate=True) for dim in scheduled.dims]
    retry = replace(scheduled, dims=separated)
    try:
        return _Writer(session, data, window, retry, indent, unit, names).run()
    except NotAffine as error:
        raise Unschedulable(f"cannot write the new loops: {error.reason}") from None


@dataclass
class _Frame:
    """What one level of the generated code can see: the names defined there, and for
    a loop its iterator and the original loop it repeats."""

    defined: set[str]
    iterator: str = ""
    loop: AffineForOp | None = None


class _Writer:
    """Writes the AST isl generates for one schedule (iteratively, in order)."""

    def __init__(
        self,
        session: IslSession,
        data: bytes,
        window: Window,
        scheduled: Scheduled,
        indent: str,
        unit: int,
        names: FreshNames,
    ) -> None:
        self.session = session
        self.data = data
        self.window = window
        self.scheduled = scheduled
        self.indent = indent
        self.unit = unit
        self.names = names
        self.statements = {s.name: s for s in scheduled.statements}
        self.ssa: dict[str, str] = {}  # iterator -> SSA name of the loop around
        self.operand = operand_namer(window, self.ssa, "a generated bound")
        self.instances = InstanceWriter(session, data, window)
        self.parts: list[bytes] = []
        self.length = 0
        self.copies: dict[int, Copy] = {}
        self.emitted: dict[str, int] = {}
        self.frames: list[_Frame] = [_Frame(set())]
        self.outer = _outer_ivs(window)

    # -- isl ---------------------------------------------------------------------------

    def _ast(self) -> isl.AstNode:
        session = self.session
        schedule = schedule_map(session, self.scheduled)
        width = len(self.scheduled.dims)
        ctx = session.ctx

        def build() -> isl.AstNode:
            ctx.set_ast_build_allow_or(0)
            ctx.set_ast_build_detect_min_max(1)
            ast_build = isl.AstBuild.from_context(self.window.context)
            iterators = isl.IdList.alloc(ctx, width)
            for k in range(width):
                iterators = iterators.add(isl.Id(f"{_ITERATOR}{k}", context=ctx))
            ast_build = ast_build.set_iterators(iterators)
            time = ", ".join(f"t{k}" for k in range(width))
            options = []
            for k, dim in enumerate(self.scheduled.dims):
                kind = "separate" if dim.separate else "atomic"
                options.append(f"{{ [{time}] -> {kind}[{k}] }}")
            if options:
                union = isl.UnionMap.read_from_str(ctx, options[0])
                for text in options[1:]:
                    union = union.union(isl.UnionMap.read_from_str(ctx, text))
                ast_build = ast_build.set_options(union)
            return ast_build.node_from_schedule_map(schedule)

        return session.run(build, "the generated code")

    # -- text ----------------------------------------------------------------------------

    def run(self) -> Generated:
        root = self._ast()
        self.main = _main_copies(root)
        # Work items: ("node", node, depth, env), ("line", text), ("push",) and ("pop",)
        # (a scope of names opened and closed).
        work: list[tuple] = [("node", root, 0, {})]
        while work:
            item = work.pop()
            if item[0] == "line":
                self._raw(item[1])
            elif item[0] == "pop":
                self.frames.pop()
            elif item[0] == "push":
                self._frame()
            else:
                work.extend(reversed(self._visit(item[1], item[2], item[3])))
        return Generated(decode(b"".join(self.parts)), self.copies)

    def _raw(self, text: str) -> None:
        encoded = encode(text)
        self.parts.append(encoded)
        self.length += len(encoded)

    def _pad(self, depth: int) -> str:
        return self.indent + " " * (self.unit * depth)

    def _visit(self, node: isl.AstNode, depth: int, env: Env) -> list[tuple]:
        """Writes what comes first at `node`; returns the work that follows, in order."""
        kind = node.get_type()
        if kind == isl_ast.BLOCK:
            return [("node", child, depth, env) for child in isl_ast.children(node)]
        if kind == isl_ast.MARK:
            return [("node", node.mark_get_node(), depth, env)]
        if kind == isl_ast.USER:
            self._instance(node.user_get_expr(), depth, env)
            return []
        if kind == isl_ast.IF:
            return self._if(node, depth, env)
        if kind == isl_ast.FOR:
            return self._for(node, depth, env)
        raise NotAffine("isl generated code we cannot write")

    def _rank(self, ssa_name: str) -> int:
        """Outer loops first (those around the window too), then anything else."""
        loops = self.outer + [self.ssa.get(f.iterator) for f in self.frames if f.iterator]
        return loops.index(ssa_name) if ssa_name in loops else len(loops)

    def _iterator_rank(self, name: str) -> int:
        """`_rank` of an isl name (an iterator or a parameter)."""
        return self._rank(self.operand(name)[0])

    def _frame(self) -> None:
        self.frames.append(_Frame(set()))

    def _taken(self, name: str) -> bool:
        return any(name in frame.defined for frame in self.frames)

    def _define(self, name: str) -> None:
        self.frames[-1].defined.add(name)

    # -- loops ----------------------------------------------------------------------------

    def _for(self, node: isl.AstNode, depth: int, env: Env) -> list[tuple]:
        iterator = node.for_get_iterator().get_id().get_name()
        position = int(iterator[len(_ITERATOR) :])
        dim = self.scheduled.dims[position]
        init = node.for_get_init()
        if node.for_is_degenerate():
            if init.get_type() == isl_ast.EXPR_OP and init.op_get_type() == isl_ast.op("select"):
                return self._selected(node, iterator, init, depth, env)
            lowers = bound_forms(init, env, "max")
            if len(lowers) == 1:
                inner = dict(env)
                inner[iterator] = lowers[0]
                return [("node", node.for_get_body(), depth, inner)]
        loop = dim.loop_for(_statements_under(node))
        name = dim.name or (
            loop.induction_variable.name if loop and loop.induction_variable else ""
        )
        if not name:
            raise NotAffine("a time dimension without a name needs a loop")
        lowers = [ordered(f, self._iterator_rank) for f in bound_forms(init, env, "max")]
        uppers = [
            ordered(f, self._iterator_rank) for f in _uppers(node.for_get_cond(), iterator, env)
        ]
        stride = form_of(node.for_get_inc(), env)
        if not stride.is_constant or stride.constant < 1:
            raise NotAffine("a loop whose step is not a positive constant")
        step = stride.constant
        pad = self._pad(depth)
        if dim.parallel:
            header = self._parallel_header(name, lowers, uppers, step)
        else:
            header = self._for_header(loop, name, lowers, uppers, step)
        self._raw(f"{pad}{header} {{\n")
        self.frames.append(_Frame({name}, iterator, loop))
        self.ssa[iterator] = name
        return [("node", node.for_get_body(), depth + 1, env), ("pop",), ("line", f"{pad}}}\n")]

    def _selected(
        self, node: isl.AstNode, iterator: str, init: isl.AstExpr, depth: int, env: Env
    ) -> list[tuple]:
        """A loop that runs once, at `condition ? a : b`: an affine.if whose branches
        run the body with the iterator at `a` and at `b`."""
        condition, first, second = (init.op_get_arg(k) for k in range(3))
        constraints = [
            Constraint(ordered(c.form, self._iterator_rank), c.equality)
            for c in conditions(condition, env)
        ]
        pad = self._pad(depth)
        self._raw(f"{pad}affine.if {_set_text(constraints, self.operand)} {{\n")
        self._frame()
        body = node.for_get_body()
        then_env = {**env, iterator: form_of(first, env)}
        else_env = {**env, iterator: form_of(second, env)}
        return [
            ("node", body, depth + 1, then_env),
            ("pop",),
            ("line", f"{pad}}} else {{\n"),
            ("push",),
            ("node", body, depth + 1, else_env),
            ("pop",),
            ("line", f"{pad}}}\n"),
        ]

    def _for_header(
        self,
        loop: AffineForOp | None,
        name: str,
        lowers: list[AffineForm],
        uppers: list[AffineForm],
        step: int,
    ) -> str:
        kept = self._original_header(loop, name, lowers, uppers, step)
        if kept is not None:
            return kept
        lower = render_bound(lowers, True, self.operand)
        upper = render_bound(uppers, False, self.operand)
        suffix = f" step {step}" if step != 1 else ""
        return f"affine.for {name} = {lower} to {upper}{suffix}"

    def _parallel_header(
        self, name: str, lowers: list[AffineForm], uppers: list[AffineForm], step: int
    ) -> str:
        def side(forms: list[AffineForm], keyword: str) -> str:
            texts = [render_mlir(f, lambda n: self.operand(n)[0]) for f in forms]
            return texts[0] if len(texts) == 1 else f"{keyword}({', '.join(texts)})"

        suffix = f" step ({step})" if step != 1 else ""
        return (
            f"affine.parallel ({name}) = ({side(lowers, 'max')}) to ({side(uppers, 'min')}){suffix}"
        )

    def _original_header(
        self,
        loop: AffineForOp | None,
        name: str,
        lowers: list[AffineForm],
        uppers: list[AffineForm],
        step: int,
    ) -> str | None:
        """The original loop's header when the new loop has its bounds and step (and the
        loops its bounds use keep their names)."""
        if loop is None or loop.induction_variable is None or loop.body is None:
            return None
        if name != loop.induction_variable.name or (loop.step or 1) != step:
            return None
        scope = Scope(inside=frozenset(id(op) for op in self.window.ops))
        iterators: list[str] = []
        for frame in self.frames:
            outer = frame.loop
            if outer is None or outer.induction_variable is None or not frame.iterator:
                continue
            if outer.induction_variable.name != self.ssa.get(frame.iterator):
                continue
            scope.bind(outer.induction_variable, Term.name(frame.iterator))
            iterators.append(frame.iterator)
        builder = self.window.builder
        try:
            low_terms = builder.bound_terms(loop.lower, scope)
            high_terms = builder.bound_terms(loop.upper, scope)
            params = sorted(set().union(*(t.params for t in low_terms + high_terms)))
            old_lowers = forms_of(self.session, params, iterators, [t.text for t in low_terms])
            old_uppers = forms_of(self.session, params, iterators, [t.text for t in high_terms])
        except NotAffine:
            return None
        if set(old_lowers) != set(lowers) or set(old_uppers) != set(uppers):
            return None
        for bound in (loop.lower, loop.upper):
            assert bound is not None
            for use in [*bound.dims, *bound.symbols]:
                value = use.value
                if value is None:
                    return None
                owner = (
                    value.owner_block.parent_op
                    if value.owner_block is not None
                    else value.defining_op
                )
                if owner is not None and self.window.contains(owner):
                    if value.role != "induction_variable" or not self._taken(value.name):
                        return None
        start = loop.name_span.start_byte
        return decode(self.data[start : loop.body.span.start_byte]).rstrip()

    # -- conditions ------------------------------------------------------------------------

    def _if(self, node: isl.AstNode, depth: int, env: Env) -> list[tuple]:
        constraints = [
            Constraint(ordered(c.form, self._iterator_rank), c.equality)
            for c in conditions(node.if_get_cond(), env)
        ]
        pad = self._pad(depth)
        self._raw(f"{pad}affine.if {_set_text(constraints, self.operand)} {{\n")
        self._frame()
        work: list[tuple] = [("node", node.if_get_then_node(), depth + 1, env), ("pop",)]
        if node.if_has_else_node():
            work += [
                ("line", f"{pad}}} else {{\n"),
                ("push",),
                ("node", node.if_get_else_node(), depth + 1, env),
                ("pop",),
            ]
        work.append(("line", f"{pad}}}\n"))
        return work

    # -- statements ----------------------------------------------------------------------------

    def _instance(self, call: isl.AstExpr, depth: int, env: Env) -> None:
        name = call.op_get_arg(0).get_id().get_name()
        statement = self.statements.get(name)
        if statement is None:
            raise NotAffine(f"isl called an unknown statement {name}")
        values = [form_of(call.op_get_arg(k), env) for k in range(1, call.op_get_n_arg())]
        copy = self.emitted.get(name, 0)
        self.emitted[name] = copy + 1
        main = self.main.get(name, 0) == copy  # the copy that keeps the source names
        result_names: dict[int, str] = {}
        for op in statement.ops:
            for value in op.results:
                if value.index != 0:
                    continue
                new = value.name
                if not main or self._taken(new):
                    new = self.names.fresh(value.name)
                result_names[id(value)] = new
                self._define(new)
        guard = self._guard(statement, values)
        if guard:
            self._raw(f"{self._pad(depth)}affine.if {_set_text(guard, self.operand)} {{\n")
            self._frame()
            depth += 1
        written = self.instances.write(
            statement,
            values[: len(statement.dims)],  # (not the lifted dims)
            self.operand,
            self._pad(depth),
            self._taken,
            self.names.fresh,
            {k: v for k, v in result_names.items() if v != _value_name(statement, k)},
            copy,
            self._rank,
        )
        for name in written.defined:
            self._define(name)
        for offset, origin in written.copies.items():
            self.copies[self.length + offset] = origin
        self._raw(written.text)
        if guard:
            self.frames.pop()
            self._raw(f"{self._pad(depth - 1)}}}\n")

    def _guard(self, statement: Statement, values: list[AffineForm]) -> list[Constraint]:
        """The conditions of the statement's domain its extent does not imply, over
        the forms of its dims at this instance (none without an extent)."""
        extent = self.scheduled.extents.get(statement.name)
        if extent is None:
            return []
        own = lifted_instances(self.scheduled, statement).gist(extent).coalesce()
        pieces = own.get_basic_sets()
        if len(pieces) != 1:
            raise NotAffine("a statement's guard is not one conjunction")
        found = []
        for constraint in pieces[0].get_constraints():
            form = constant(int(constraint.get_constant_val().to_python()))
            for k, value in enumerate(values):
                factor = int(constraint.get_coefficient_val(isl.dim_type.set, k).to_python())
                if factor:
                    form = plus(form, scaled(value, factor))
            for k in range(pieces[0].dim(isl.dim_type.param)):
                factor = int(constraint.get_coefficient_val(isl.dim_type.param, k).to_python())
                if factor:
                    name = pieces[0].get_dim_name(isl.dim_type.param, k) or ""
                    form = plus(form, scaled(name_form(name), factor))
            ordered_form = ordered(form, self._iterator_rank)
            found.append(Constraint(ordered_form, constraint.is_equality()))
        return found


def _outer_ivs(window: Window) -> list[str | None]:
    """The names of the ivs of the loops around the window, outermost first."""
    names: list[str | None] = []
    op = window.block.parent_op
    while op is not None:
        if isinstance(op, AffineForOp) and op.induction_variable is not None:
            names.append(op.induction_variable.name)
        op = op.parent_op
    return names[::-1]


def _main_copies(root: isl.AstNode) -> dict[str, int]:
    """Per statement, which of its copies (in the order they are written) is the most
    deeply nested one, the first of them: the steady state, which keeps the source
    names (peeled copies get fresh ones)."""
    best: dict[str, tuple[int, int]] = {}  # name -> (depth, copy)
    counts: dict[str, int] = {}
    stack: list[tuple[isl.AstNode, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        kind = node.get_type()
        if kind == isl_ast.USER:
            name = isl_ast.called(node)
            copy = counts.get(name, 0)
            counts[name] = copy + 1
            if name not in best or depth > best[name][0]:
                best[name] = (depth, copy)
        elif kind == isl_ast.BLOCK:
            children = node.block_get_children()
            stack.extend(
                (children.get_at(k), depth) for k in reversed(range(children.n_ast_node()))
            )
        elif kind == isl_ast.FOR:
            stack.append((node.for_get_body(), depth + 1))
        elif kind == isl_ast.IF:
            if node.if_has_else_node():
                stack.append((node.if_get_else_node(), depth))
            stack.append((node.if_get_then_node(), depth))
        elif kind == isl_ast.MARK:
            stack.append((node.mark_get_node(), depth))
    return {name: copy for name, (_, copy) in best.items()}


def _statements_under(node: isl.AstNode) -> list[str]:
    """The names of the statements called under an AST node."""
    found: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current.get_type()
        if kind == isl_ast.USER:
            name = isl_ast.called(current)
            if name not in found:
                found.append(name)
        elif kind == isl_ast.BLOCK:
            stack.extend(isl_ast.children(current))
        elif kind == isl_ast.FOR:
            stack.append(current.for_get_body())
        elif kind == isl_ast.IF:
            stack.append(current.if_get_then_node())
            if current.if_has_else_node():
                stack.append(current.if_get_else_node())
        elif kind == isl_ast.MARK:
            stack.append(current.mark_get_node())
    return found


def _value_name(statement: Statement, key: int) -> str:
    for op in statement.ops:
        for value in op.results:
            if id(value) == key:
                return value.name
    return ""


def _uppers(cond: isl.AstExpr, iterator: str, env: Env) -> list[AffineForm]:
    """Exclusive upper bounds of `iterator` from a loop condition."""
    found: list[AffineForm] = []
    for constraint in conditions(cond, env):
        form = constraint.form
        own = dict(form.terms).get(iterator, 0)
        if (
            own >= 0
            or constraint.equality
            or any(iterator in inner.names() for inner, _, _ in form.floors)
        ):
            raise NotAffine("a loop condition that is not an upper bound")
        rest = AffineForm(tuple((n, c) for n, c in form.terms if n != iterator), form.floors, 0)
        rest = plus(rest, constant(form.constant))
        bound = plus(floor_of(rest, -own), constant(1))
        if bound not in found:
            found.append(bound)
    return found


def _set_text(constraints: list[Constraint], operand: Callable[[str], tuple[str, bool]]) -> str:
    """`affine_set<(d..)[s..] : (e >= 0, ...)>(dims)[symbols]`."""
    dims: list[str] = []
    symbols: list[str] = []
    positions: dict[str, str] = {}
    for constraint in constraints:
        for name in constraint.form.names():
            if name in positions:
                continue
            ssa, symbol = operand(name)
            group = symbols if symbol else dims
            positions[name] = f"{'s' if symbol else 'd'}{len(group)}"
            group.append(ssa)
    parts = [
        f"{render_mlir(c.form, positions.__getitem__)} {'==' if c.equality else '>='} 0"
        for c in constraints
    ]
    header = f"({', '.join(f'd{k}' for k in range(len(dims)))})"
    if symbols:
        header += f"[{', '.join(f's{k}' for k in range(len(symbols)))}]"
    operands = f"({', '.join(dims)})" + (f"[{', '.join(symbols)}]" if symbols else "")
    return f"affine_set<{header} : ({', '.join(parts)})>{operands}"
