"""Values carried by `iter_args`, modelled as memory so that the exact dataflow
comparison covers them too.

Each `iter_args` entry of an `affine.for` becomes a scalar array `V_...` that
the loop writes before it starts (the init), reads at the start of every
iteration (the block argument), writes at its `affine.yield`, and reads after
the loop (its result). Two loops share an array when they stand for the same
original loop (a loop and its unrolled main and remainder loops), so the
dataflow analysis follows a value from one to the other. An init that is the
result of a loop on the same array is not a write: the array already holds it.

A *promoted* entry (`Promotion`: scalar replacement) stands for one memory
element instead: its iterations read that element (the block argument) and write
it (the yield), the load before the loop that gives its init is an ordinary read,
and neither the init nor the store of its result after the loop is an access (the
element already holds those values). `check_promotions` makes sure that this is
what the code does: the init comes from a load of the element just before the
loop, the result goes only to a store of the same element just after it, and no
other access in the loop touches the element.

A *rotating* entry (`Rotation`: scalar replacement of an element reused by the next
iterations, `%A[%i - 1]` after `%A[%i]`) stands for a moving element: its block
argument at each iteration is a read of the element it holds there, which the new
text itself defines: at the loop's first iteration the element its init's load read
before the loop, at every later one the element its yield operand held one step
earlier (a load in the body, or the block argument of the next entry). Nothing else
of it is an access. `check_rotations` makes sure that the block argument does hold
that element's value: the init is a load just before the loop (loads and index
arithmetic between), every yield operand a load in the body or another rotating
block argument of the loop, the loop's results unused, and no write in the loop may
touch an element a rotating entry holds (memory does not change while it is held).

Schedules are those of `Window` with block positions doubled (`2p + 1`), so
that the init write (`2p`) comes before the loop's iterations and the result
read (`2p + 2`) after them, and the read at the start of an iteration (`0`)
before the body's first op; a last entry, the iter_args position, keeps the
schedule injective (the dataflow analysis needs it) where a loop carries several.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import islpy as isl

from affine_lsp.ir import AffineAccessOp, AffineForOp, Operation, Use, Value
from affine_lsp.poly import (
    Domain,
    IslSession,
    Level,
    NotAffine,
    PolyError,
    Statement,
    Window,
    enclosing_levels,
    is_under,
    window_ops,
)
from affine_lsp.transforms.loops.nest import ops_by_start
from affine_lsp.transforms.loops.text import Origin

INIT = "init"
ITERATION = "iteration"
YIELD = "yield"
RESULT = "result"


@dataclass
class Carried(Statement):
    """A virtual access of a carried value: `kind` (INIT, ITERATION, YIELD, RESULT)
    of entry `position` of `loop`'s iter_args."""

    loop: Operation | None = None
    kind: str = ""
    position: int = 0


@dataclass(frozen=True)
class Promotion:
    """Entry `position` of the iter_args of the new loop starting at `loop_at` holds the
    element that the load starting at `load_at` reads before the loop and the store
    at `store_at` writes after it (offsets in the new document). Each iteration's
    block argument repeats the original load `load`, its yield the original store
    `store` (in the same iteration); the load before the loop repeats the original
    load's first iteration (`Rewrite.first_iteration`)."""

    loop_at: int
    position: int
    load_at: int
    store_at: int
    load: Origin
    store: Origin


@dataclass(frozen=True)
class Rotation:
    """Entry `position` of the iter_args of the new loop starting at `loop_at` holds, at
    each iteration, what the original load `load` reads in that iteration; its init
    is the result of the load starting at `load_at` (offsets in the new document),
    which repeats `load` at the loop's first iteration."""

    loop_at: int
    position: int
    load_at: int
    load: Origin


@dataclass(frozen=True)
class Rotated:
    """A rotation found in the new text: the loop, the load of its init, what the
    rewrite declared."""

    loop: AffineForOp
    load: Operation
    rotation: Rotation


def find_rotations(function: Operation, rotations: list[Rotation]) -> dict[tuple, Rotated]:
    """(id of a new loop, position) -> what `rotations` declare, found in the new
    `function` by their offsets (PolyError if one is not there)."""
    if not rotations:
        return {}
    by_start = ops_by_start(function)
    found: dict[tuple, Rotated] = {}
    for rotation in rotations:
        loop = by_start.get(rotation.loop_at)
        load = by_start.get(rotation.load_at)
        if not isinstance(loop, AffineForOp) or load is None:
            raise PolyError("the rewritten code could not be found")
        if rotation.position >= len(loop.iter_args):
            raise PolyError("the rewritten loop carries fewer values than declared")
        found[(id(loop), rotation.position)] = Rotated(loop, load, rotation)
    return found


@dataclass(frozen=True)
class Promoted:
    """A promotion found in the new text: the loop, its load and store, and what the
    rewrite declared."""

    loop: AffineForOp
    load: Operation
    store: Operation
    promotion: Promotion


def find_promotions(function: Operation, promotions: list[Promotion]) -> dict[tuple, Promoted]:
    """(id of a new loop, position) -> what `promotions` declare, found in the new
    `function` by their offsets (PolyError if one is not there)."""
    if not promotions:
        return {}
    by_start = ops_by_start(function)
    found: dict[tuple, Promoted] = {}
    for promotion in promotions:
        loop = by_start.get(promotion.loop_at)
        load = by_start.get(promotion.load_at)
        store = by_start.get(promotion.store_at)
        if not isinstance(loop, AffineForOp) or load is None or store is None:
            raise PolyError("the rewritten code could not be found")
        if promotion.position >= len(loop.iter_args):
            raise PolyError("the rewritten loop carries fewer values than declared")
        found[(id(loop), promotion.position)] = Promoted(loop, load, store, promotion)
    return found


class ScalarWindow(Window):
    """A `Window` whose loops' iter_args are scalar arrays. `array_of(loop)` names
    the array family of a loop (None: the loop's own); `promoted` entries are
    memory elements."""

    def __init__(
        self,
        *args: Any,
        array_of: Callable[[AffineForOp], str | None] | None = None,
        promoted: dict[tuple, Promoted] | None = None,
        rotated: dict[tuple, Rotated] | None = None,
        **kw: Any,
    ) -> None:
        self._array_of = array_of or (lambda loop: None)
        self.promoted: dict[tuple, Promoted] = promoted or {}
        self.rotated: dict[tuple, Rotated] = rotated or {}
        self.carried: list[Carried] = []
        super().__init__(*args, **kw)

    def _build(self) -> None:
        super()._build()
        stores = {id(found.store) for found in self.promoted.values()}
        self.statements = [s for s in self.statements if id(s.op) not in stores]
        paths: dict[int, list[object]] = {}
        loops: list[AffineForOp] = []
        for op, path in window_ops(self.ops):
            paths[id(op)] = path
            if isinstance(op, AffineForOp) and op.iter_args:
                loops.append(op)
        for loop in loops:
            self._carried(loop, paths)
        self.statements += self.carried
        depth = max((len(_doubled(s.path)) for s in self.statements), default=1)
        lanes = max((s.lanes for s in self.statements), default=0)
        for statement in self.statements:
            statement.schedule = self._schedule(statement, _doubled(statement.path), depth, lanes)

    def array(self, loop: AffineForOp, position: int) -> str:
        family = self._array_of(loop) or f"L{loop.span.start_byte}"
        return f"V_{family}_{position}"

    def _carried(self, loop: AffineForOp, paths: dict[int, list[object]]) -> None:
        iv = loop.induction_variable
        body = loop.body.entry if loop.body is not None else None
        if iv is None or body is None:
            raise NotAffine("affine.for without a body")
        levels, blocker = enclosing_levels(loop, self.block)
        if blocker is not None:
            raise NotAffine(f"'{blocker.name}' around a loop is not affine")
        outside = self.builder.build(levels)
        inside = self.builder.build([*levels, Level(loop)])
        path = paths[id(loop)]
        yield_op = body.operations[-1] if body.operations else None
        if yield_op is None or yield_op.name != "affine.yield":
            raise NotAffine("a loop with iter_args has no affine.yield")
        yield_path = paths.get(id(yield_op))
        if yield_path is None:
            raise NotAffine("the loop's affine.yield is not modelled")
        held = self._rotating(loop, inside, yield_op) if self.rotated else {}
        for position, (argument, init) in enumerate(loop.iter_args):
            if position in held:  # a moving element, read at the start of each iteration
                where = [*path, iv, "start"]
                element = held[position]
                self._add(loop, ITERATION, position, inside, "", False, where, argument, element)
                continue
            promoted = self.promoted.get((id(loop), position))
            if promoted is not None:
                element = self._element(promoted.load)
                for kind, where, value in (
                    (ITERATION, [*path, iv, "start"], argument),
                    (YIELD, list(yield_path), argument),
                ):
                    write = kind == YIELD
                    self._add(loop, kind, position, inside, "", write, where, value, element)
                continue
            array = self.array(loop, position)
            result = loop.results[position] if position < len(loop.results) else None
            if not self.passes_through(loop, position, init.value):
                self._add(loop, INIT, position, outside, array, True, [*path, "init"], init.value)
            self._add(
                loop, ITERATION, position, inside, array, False, [*path, iv, "start"], argument
            )
            self._add(loop, YIELD, position, inside, array, True, list(yield_path), argument)
            if result is not None and self._read_after(loop, position, result):
                self._add(loop, RESULT, position, outside, array, False, [*path, "after"], result)

    def _rotating(
        self, loop: AffineForOp, inside: Domain, yield_op: Operation
    ) -> dict[int, tuple[Statement, isl.Map]]:
        """The rotating entries of `loop`: position -> (its init's load, the element it
        holds at each iteration, { [loop dims] -> array[...] }), from the init at the
        first iteration and the yield operand one step before at the others."""
        positions = sorted(p for (key, p) in self.rotated if key == id(loop))
        if not positions:
            return {}
        step = loop.step
        if step is None or step < 1:
            raise NotAffine("a rotating loop has no constant step")
        assert inside.set is not None
        dims = inside.set.dim(isl.dim_type.set)
        space = inside.set.set_tuple_name("R")
        names = [f"_r{k}" for k in range(dims)]
        shifted = [*names[:-1], f"{names[-1]} + {step}"]
        forward = (
            self.session.map(f"{{ R[{', '.join(names)}] -> R[{', '.join(shifted)}] }}")
            .intersect_domain(space)
            .intersect_range(space)
        )
        later = forward.range()
        first = space.subtract(later)
        back = forward.reverse()
        held: dict[int, tuple[Statement, isl.Map]] = {}
        for position in reversed(positions):  # an entry yields a later one's value
            init_load = self._element(self.rotated[(id(loop), position)].load)
            start = init_load.access.add_dims(isl.dim_type.in_, 1)
            start = start.set_tuple_name(isl.dim_type.in_, "R").intersect_domain(first)
            operand = (
                yield_op.operands[position].value if position < len(yield_op.operands) else None
            )
            before = self._yielded(loop, operand, held)
            if before is None:
                raise NotAffine("a rotating value is not a load or another rotating value")
            held[position] = (init_load, _one_piece(start, back.apply_range(before), space))
        return held

    def _yielded(
        self, loop: AffineForOp, value: Value | None, held: dict[int, tuple[Statement, isl.Map]]
    ) -> isl.Map | None:
        """The element a yield operand holds at each iteration: a load's directly in the
        body, or another rotating entry's (None: neither)."""
        if value is None:
            return None
        if value.owner_block is not None:
            if value.owner_block.parent_op is not loop or value.role != "iter_arg":
                return None
            found = held.get(value.arg_number - 1)
            return found[1] if found is not None else None
        load = value.defining_op
        if load is None or load.parent_op is not loop or not _is_load(load):
            return None
        statement = next((s for s in self.statements if s.op is load), None)
        if statement is None or statement.lanes:
            return None
        return statement.access.set_tuple_name(isl.dim_type.in_, "R")

    def _read_after(self, loop: AffineForOp, position: int, result: Value) -> bool:
        """Whether the result is used other than as the init of a loop on the same
        array (which reads nothing: the array holds the value already)."""
        for use in result.uses:
            user = use.user
            if not (
                isinstance(user, AffineForOp)
                and use.role == "init"
                and self.passes_through(user, _init_position(user, use), result)
            ):
                return True
        return False

    def passes_through(self, loop: AffineForOp, position: int, value: Value | None) -> bool:
        """An init that is the result of a loop on the same array."""
        if value is None or value.defining_op is None:
            return False
        source = value.defining_op
        return (
            isinstance(source, AffineForOp)
            and source in self._loops_in_window()
            and len(source.iter_args) > _result_position(value)
            and self.array(source, _result_position(value)) == self.array(loop, position)
        )

    def _loops_in_window(self) -> list[AffineForOp]:
        cached = self.__dict__.get("_window_loops")
        if cached is None:
            cached = [op for top in self.ops for op in top.walk() if isinstance(op, AffineForOp)]
            self.__dict__["_window_loops"] = cached
        return cached

    def _element(self, load: Operation) -> Statement:
        """The statement of a promoted entry's load (its element)."""
        found = next((s for s in self.statements if s.op is load), None)
        if found is None or found.lanes:
            raise NotAffine("a promoted value's load is not modelled")
        return found

    def _add(
        self,
        loop: AffineForOp,
        kind: str,
        position: int,
        domain: Domain,
        array: str,
        is_write: bool,
        path: list[object],
        value: Value | None,
        element: Statement | tuple[Statement, isl.Map] | None = None,
    ) -> None:
        assert domain.set is not None
        path = [*path, position]  # entries of one loop at one time: ordered by position
        name = f"C{len(self.carried)}"
        instances = domain.set.set_tuple_name(name)
        if element is None:
            access = self.session.map(domain.text(f" -> {array}[]", name))
        elif isinstance(element, tuple):  # a rotating entry: the element it holds here
            element, held = element
            array = element.array
            access = held.set_tuple_name(isl.dim_type.in_, name)
        else:  # the element the load before the loop reads, in every iteration
            array = element.array
            extra = domain.set.dim(isl.dim_type.set) - element.access.dim(isl.dim_type.in_)
            access = element.access.add_dims(isl.dim_type.in_, extra)
            access = access.set_tuple_name(isl.dim_type.in_, name)
        access = self.session.run(lambda: access.intersect_domain(instances))
        statement = Carried(
            name,
            loop,
            domain,
            0,
            is_write,
            value if element is None else element.memref,  # type: ignore[arg-type]
            array,
            instances,
            access,
            path,
            None,
            loop=loop,
            kind=kind,
            position=position,
        )
        self.carried.append(statement)


def check_promotions(window: ScalarWindow, session: IslSession) -> None:
    """PolyError unless every promoted entry of `window` holds its element: its init is
    the result of its load, with only loads between it and the loop; its result is
    used only by its store, with only other promoted stores between the loop and it;
    the load and the store access one element; no other access in the loop touches
    that element, nor does another promoted entry of the loop hold it."""
    by_loop: dict[int, list[Statement]] = {}
    stores = {id(found.store) for found in window.promoted.values()}
    for (loop_id, position), found in window.promoted.items():
        loop, load, store = found.loop, found.load, found.store
        if not isinstance(load, AffineAccessOp):
            raise PolyError("a promoted value has no load")
        if not isinstance(store, AffineAccessOp) or not store.is_write or load.is_write:
            raise PolyError("a promoted value is not loaded and stored")
        init = loop.iter_args[position][1].value
        if init is None or init.defining_op is not load:
            raise PolyError("a promoted value does not start as its element's value")
        result = loop.results[position] if position < len(loop.results) else None
        users = [u for u in result.uses] if result is not None else []
        if len(users) != 1 or users[0].user is not store or store.stored_value is not users[0]:
            raise PolyError("a promoted value is used other than by its element's store")
        _check_between(load, loop, lambda op: _is_load(op) or _pure(op))
        _check_between(loop, store, lambda op: id(op) in stores or _pure(op))
        if not _same_element(load, store):
            raise PolyError("a promoted value is loaded and stored at different elements")
        element = window._element(load)
        for other in window.statements:
            if isinstance(other, Carried) or other.op is load or not is_under(other.op, loop):
                continue
            if other.array == element.array and session.run(
                lambda o=other, e=element: _touches(o, e, window.context), "a promoted element"
            ):
                raise PolyError("another access in the loop may touch a promoted element")
        for earlier in by_loop.get(loop_id, []):
            if earlier.array == element.array and session.run(
                lambda e=earlier, m=element: _touches(e, m, window.context), "a promoted element"
            ):
                raise PolyError("two promoted values of a loop hold the same element")
        by_loop.setdefault(loop_id, []).append(element)


def _one_piece(first: isl.Map, later: isl.Map, space: isl.Set) -> isl.Map:
    """`first` (at the first iterations) and `later` (at the others) as one access,
    with one affine function where both are that function (a load's own shape: isl's
    dataflow fails on some unions of pieces)."""
    whole = first.union(later)
    hull = isl.Map.from_basic_map(whole.affine_hull()).intersect_domain(space)
    if hull.is_single_valued() and whole.is_subset(hull) and hull.is_subset(whole):
        return hull
    return whole.coalesce()


def check_rotations(window: ScalarWindow, session: IslSession) -> None:
    """PolyError unless every rotating entry of `window` holds its element's value: its
    init is the result of its load, with only loads and index arithmetic between it and
    the loop; its result is unused; no write in the loop may touch an element it holds
    (its yield operand is checked when its element is built: a load in the body or
    another rotating entry)."""
    held: dict[int, list[Carried]] = {}
    for statement in window.carried:
        key = (id(statement.loop), statement.position)
        if key in window.rotated and statement.kind == ITERATION:
            held.setdefault(id(statement.loop), []).append(statement)
    for (loop_id, position), found in window.rotated.items():
        loop, load = found.loop, found.load
        if not _is_load(load):
            raise PolyError("a rotating value does not start as a loaded value")
        init = loop.iter_args[position][1].value
        if init is None or init.defining_op is not load:
            raise PolyError("a rotating value does not start as its element's value")
        result = loop.results[position] if position < len(loop.results) else None
        if result is not None and result.uses:
            raise PolyError("a rotating value is used after its loop")
        _check_between(load, loop, lambda op: _is_load(op) or _pure(op))
        if not any(c.position == position for c in held.get(loop_id, [])):
            raise PolyError("a rotating value is not modelled")
    for statements in held.values():
        loop = statements[0].loop
        assert loop is not None
        for other in window.statements:
            if isinstance(other, Carried) or not other.is_write or not is_under(other.op, loop):
                continue
            for mine in statements:
                if other.array == mine.array and session.run(
                    lambda o=other, m=mine: _meets(o, m, window.context), "a rotating element"
                ):
                    raise PolyError("a write in the loop may touch a rotating element")


def _meets(other: Statement, held: Statement, context: isl.Set) -> bool:
    """Whether `other` may touch an element `held` holds in some iteration (of the
    same iterations of the loops around `held`'s loop)."""
    same = other.access.apply_range(held.access.reverse()).intersect_params(context)
    outer = held.access.dim(isl.dim_type.in_) - 1
    for k in range(outer):
        same = same.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    return not same.is_empty()


def _result_position(value: Value) -> int:
    """The position of a result among its op's results (not in its name's group)."""
    op = value.defining_op
    if op is not None:
        for position, result in enumerate(op.results):
            if result is value:
                return position
    return value.index


def _is_load(op: Operation) -> bool:
    return isinstance(op, AffineAccessOp) and not op.is_write and op.name == "affine.load"


def _pure(op: Operation) -> bool:
    return not op.regions and op.name.startswith(("arith.", "affine.apply"))


def _check_between(first: Operation, last: Operation, allowed: Callable[[Operation], bool]) -> None:
    block = first.parent_block
    if block is None or last.parent_block is not block:
        raise PolyError("a promoted value's load or store is not next to its loop")
    ops = block.operations
    start, end = ops.index(first), ops.index(last)
    if start >= end or not all(allowed(op) for op in ops[start + 1 : end]):
        raise PolyError("a promoted value's load or store is not next to its loop")


def _same_element(load: AffineAccessOp, store: AffineAccessOp) -> bool:
    a, b = load.subscripts, store.subscripts
    if a is None or b is None or load.memref is None or store.memref is None:
        return False
    if load.memref.value is None or load.memref.value is not store.memref.value:
        return False
    if [u.value for u in a.operands] != [u.value for u in b.operands]:
        return False
    return a.map == b.map


def _touches(other: Statement, element: Statement, context: isl.Set) -> bool:
    """Whether an instance of `other` (nested in the loops of `element`'s statement)
    touches the element in the same iteration of those loops, for the values the
    loops around the window take (`context`)."""
    same = other.access.apply_range(element.access.reverse()).intersect_params(context)
    outer = element.access.dim(isl.dim_type.in_)
    for k in range(outer):
        same = same.equate(isl.dim_type.in_, k, isl.dim_type.out, k)
    return not same.is_empty()


def _doubled(path: list[object]) -> list[object]:
    """Block positions `p` -> `2p + 1`; the markers of carried accesses -> the
    positions between (`init` 2p, `after` 2p + 2, `start` 0)."""
    out: list[object] = []
    for index, entry in enumerate(path):
        if entry == "init":
            out[-1] = out[-1] - 1  # type: ignore[operator]
        elif entry == "after":
            out[-1] = out[-1] + 1  # type: ignore[operator]
        elif entry == "start":
            out.append(0)
        elif isinstance(entry, int):
            out.append(2 * entry + 1)
        else:
            out.append(entry)
        del index
    return out


def _init_position(loop: AffineForOp, use: Use) -> int:
    for position, (_, init) in enumerate(loop.iter_args):
        if init is use:
            return position
    return -1
