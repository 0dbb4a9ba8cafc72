"""Values carried by `iter_args`, modelled as memory so that the exact dataflow
comparison covers them too.

Each `iter_args` entry of an `affine.for` becomes a scalar array `V_...` that
the loop writes before it starts (the init), reads at the start of every
iteration (the block argument), writes at its `affine.yield`, and reads after
the loop (its result). Two loops share an array when they stand for the same
original loop (a loop and its unrolled main and remainder loops), so the
dataflow analysis follows a value from one to the other. An init that is the
result of a loop on the same array is not a write: the array already holds it.

Schedules are those of `Window` with block positions doubled (`2p + 1`), so
that the init write (`2p`) comes before the loop's iterations and the result
read (`2p + 2`) after them, and the read at the start of an iteration (`0`)
before the body's first op.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from affine_lsp.ir import AffineForOp, Operation, Use, Value
from affine_lsp.poly import (
    Domain,
    Level,
    NotAffine,
    Statement,
    Window,
    enclosing_levels,
    window_ops,
)

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


class ScalarWindow(Window):
    """A `Window` whose loops' iter_args are scalar arrays. `array_of(loop)` names
    the array family of a loop (None: the loop's own)."""

    def __init__(
        self,
        *args: Any,
        array_of: Callable[[AffineForOp], str | None] | None = None,
        **kw: Any,
    ) -> None:
        self._array_of = array_of or (lambda loop: None)
        self.carried: list[Carried] = []
        super().__init__(*args, **kw)

    def _build(self) -> None:
        super()._build()
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
        for position, (argument, init) in enumerate(loop.iter_args):
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
            and len(source.iter_args) > value.index
            and self.array(source, value.index) == self.array(loop, position)
        )

    def _loops_in_window(self) -> list[AffineForOp]:
        cached = self.__dict__.get("_window_loops")
        if cached is None:
            cached = [op for top in self.ops for op in top.walk() if isinstance(op, AffineForOp)]
            self.__dict__["_window_loops"] = cached
        return cached

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
    ) -> None:
        assert domain.set is not None
        name = f"C{len(self.carried)}"
        instances = domain.set.set_tuple_name(name)
        access = self.session.map(domain.text(f" -> {array}[]", name))
        access = self.session.run(lambda: access.intersect_domain(instances))
        statement = Carried(
            name,
            loop,
            domain,
            0,
            is_write,
            value,  # type: ignore[arg-type]
            array,
            instances,
            access,
            path,
            None,
            loop,
            kind,
            position,
        )
        self.carried.append(statement)


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
