"""A seeded generator of single loop nests to transform, runnable with mlir-runner.

Each program has a `@kernel` holding one nest, 1 to 3 deep, over memref arguments
(filled with integer data and printed by `@main`, as `progen` does): perfect or
imperfect, constant, symbolic (`%n`) or triangular bounds, steps of 1 or 2,
shifted, strided and transposed accesses, in-place updates (which create
dependences in every direction), memory reductions and `iter_args` reductions.
The generator runs every candidate nest on concrete indices and keeps only those
whose accesses stay in bounds. Values stay exact: f32 data are small integers,
and the arithmetic (add, sub, max, min, multiplication by 2) keeps them exact
unless a transformation reorders what it must not.

``python -m affine_lsp.testing.nestgen --seed 3`` prints one program.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from affine_lsp.testing.progen import Buffer, render_main

SIZE = 8
SYMBOL = "%n"
SYMBOL_VALUE = 7

FEATURES = (
    "perfect",
    "imperfect",
    "symbolic",
    "triangular",
    "step",
    "shifted",
    "strided",
    "transposed",
    "in_place",
    "memory_reduction",
    "iter_args",
)


@dataclass(frozen=True)
class Nest:
    """A generated program and what its nest has."""

    text: str
    seed: int
    depth: int
    features: frozenset[str]
    elem: str


@dataclass
class _Bound:
    """A loop bound: its text, and its value (`outer`'s value plus `value`, or `value`)."""

    text: str
    value: int = 0
    outer: str | None = None

    def evaluate(self, env: dict[str, int]) -> int:
        return self.value + (env[self.outer] if self.outer is not None else 0)


@dataclass
class _Loop:
    iv: str
    lower: _Bound
    upper: _Bound
    step: int
    pre: list[list[str]] = field(default_factory=list)  # statements before the inner loop
    post: list[list[str]] = field(default_factory=list)
    inner: _Loop | None = None
    body: list[list[str]] = field(default_factory=list)  # innermost statements
    accesses: list[tuple[str, list[tuple[str, int, int]], bool, int]] = field(
        default_factory=list
    )  # (buffer, [(iv or "", coefficient, offset)], is_write, place) for the simulation
    parent: _Loop | None = None  # for an iter_args reduction loop: the loop it is in


class _Generator:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.elem = self.rng.choice(("f32", "f32", "i32"))
        self.features: set[str] = set()
        self.counter = 0
        self.depth = self.rng.choice((1, 2, 2, 2, 3, 3))
        self.rank = max(1, min(self.depth, 2))
        self.buffers = [f"%B{k}" for k in range(self.rng.choice((2, 3)))]

    # -- names ---------------------------------------------------------------------

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    @property
    def type(self) -> str:
        return "memref<" + "x".join([str(SIZE)] * self.rank) + f"x{self.elem}>"

    # -- loops --------------------------------------------------------------------------

    def bounds(self, ivs: list[str], level: int) -> tuple[_Bound, _Bound, int]:
        rng = self.rng
        low = rng.choice((0, 0, 1, 2))
        step = 2 if rng.random() < 0.15 else 1
        if step > 1:
            self.features.add("step")
        kind = rng.random()
        if kind < 0.15:
            self.features.add("symbolic")
            upper = _Bound(SYMBOL, SYMBOL_VALUE)
        elif kind < 0.3 and ivs:
            self.features.add("triangular")
            outer = rng.choice(ivs)
            shift = rng.choice((1, 2))
            upper = _Bound(f"affine_map<(d0) -> (d0 + {shift})>({outer})", shift, outer)
        elif kind < 0.4 and ivs:
            self.features.add("triangular")
            outer = rng.choice(ivs)
            lower = _Bound(f"affine_map<(d0) -> (d0)>({outer})", 0, outer)
            high = rng.choice((SIZE - 1, SIZE))
            return lower, _Bound(str(high), high), step
        else:
            high = rng.choice((SIZE - 2, SIZE - 1, SIZE))
            upper = _Bound(str(high), high)
        return _Bound(str(low), low), upper, step

    def subscript(self, ivs: list[str], transposed: bool) -> list[tuple[str, int, int]]:
        rng = self.rng
        chosen = list(ivs[-self.rank :]) if len(ivs) >= self.rank else list(ivs)
        while len(chosen) < self.rank:
            chosen.insert(0, "")
        if transposed and self.rank == 2:
            chosen.reverse()
            self.features.add("transposed")
        parts = []
        for iv in chosen:
            if not iv:
                parts.append(("", 0, rng.randrange(SIZE)))
                continue
            coefficient = 2 if rng.random() < 0.1 else 1
            if coefficient == 2:
                self.features.add("strided")
            offset = rng.choice((0, 0, 0, -1, 1, -2, 2))
            if offset:
                self.features.add("shifted")
            parts.append((iv, coefficient, offset))
        return parts

    @staticmethod
    def render_subscript(parts: list[tuple[str, int, int]]) -> str:
        out = []
        for iv, coefficient, offset in parts:
            if not iv:
                out.append(str(offset))
                continue
            text = iv if coefficient == 1 else f"{iv} * {coefficient}"
            if offset > 0:
                text += f" + {offset}"
            elif offset < 0:
                text += f" - {-offset}"
            out.append(text)
        return ", ".join(out)

    def combine(self, left: str, right: str) -> tuple[list[str], str]:
        rng = self.rng
        name = self.fresh("v")
        if self.elem == "f32":
            op = rng.choice(("arith.addf", "arith.subf", "arith.maximumf", "arith.minimumf"))
        else:
            op = rng.choice(("arith.addi", "arith.subi", "arith.maxsi", "arith.minsi"))
        return [f"{name} = {op} {left}, {right} : {self.elem}"], name

    def statement(self, ivs: list[str], loop: _Loop, place: int) -> list[str]:
        """`target[...] = f(source[...], other[...])`, possibly in place."""
        rng = self.rng
        lines: list[str] = []
        target = rng.choice(self.buffers)
        sources = [rng.choice(self.buffers) for _ in range(rng.choice((1, 2)))]
        in_place = rng.random() < 0.45
        if in_place:
            sources[0] = target
            self.features.add("in_place")
        values = []
        for source in sources:
            parts = self.subscript(ivs, rng.random() < 0.2)
            name = self.fresh("x")
            lines.append(
                f"{name} = affine.load {source}[{self.render_subscript(parts)}] : {self.type}"
            )
            loop.accesses.append((source, parts, False, place))
            values.append(name)
        value = values[0]
        for other in values[1:]:
            more, value = self.combine(value, other)
            lines += more
        if rng.random() < 0.4:
            constant = self.fresh("c")
            literal = "2.0" if self.elem == "f32" else "2"
            lines.append(f"{constant} = arith.constant {literal} : {self.elem}")
            more, value = self.combine(value, constant)
            lines += more
        parts = self.subscript(ivs, False)
        lines.append(
            f"affine.store {value}, {target}[{self.render_subscript(parts)}] : {self.type}"
        )
        loop.accesses.append((target, parts, True, place))
        return lines

    def memory_reduction(self, ivs: list[str], loop: _Loop) -> list[str]:
        """`acc[outer] = acc[outer] + x[..., iv]` (the accumulator ignores the innermost iv)."""
        self.features.add("memory_reduction")
        target, source = self.rng.sample(self.buffers, 2)
        outer = ivs[:-1]
        acc_parts = self.subscript(outer, False) if outer else [("", 0, 0)] * self.rank
        src_parts = self.subscript(ivs, False)
        x = self.fresh("x")
        a = self.fresh("a")
        lines = [
            f"{x} = affine.load {source}[{self.render_subscript(src_parts)}] : {self.type}",
            f"{a} = affine.load {target}[{self.render_subscript(acc_parts)}] : {self.type}",
        ]
        more, value = self.combine(a, x)
        lines += more
        lines.append(
            f"affine.store {value}, {target}[{self.render_subscript(acc_parts)}] : {self.type}"
        )
        loop.accesses.append((source, src_parts, False, 0))
        loop.accesses.append((target, acc_parts, False, 0))
        loop.accesses.append((target, acc_parts, True, 0))
        return lines

    def build(self) -> _Loop:
        ivs: list[str] = []
        loops: list[_Loop] = []
        names = ("%i", "%j", "%k")
        for level in range(self.depth):
            lower, upper, step = self.bounds(ivs, level)
            loops.append(_Loop(names[level], lower, upper, step))
            ivs.append(names[level])
        for outer, inner in zip(loops, loops[1:], strict=False):
            outer.inner = inner
        innermost = loops[-1]
        count = self.rng.choice((1, 1, 2, 3))
        for _ in range(count):
            if self.depth > 1 and self.rng.random() < 0.2:
                innermost.body.append(self.memory_reduction(ivs, innermost))
            else:
                innermost.body.append(self.statement(ivs, innermost, 0))
        if self.depth > 1 and self.rng.random() < 0.35:
            self.features.add("imperfect")
            middle = loops[-2]
            middle_ivs = ivs[:-1]
            if self.rng.random() < 0.5:
                middle.pre.append(self.statement(middle_ivs, middle, -1))
            else:
                middle.post.append(self.statement(middle_ivs, middle, 1))
        else:
            self.features.add("perfect")
        return loops[0]

    # -- iter_args reductions ------------------------------------------------------------

    def iter_reduction(self, ivs: list[str], loop: _Loop) -> list[str]:
        """A reduction loop with iter_args inside `loop`'s body, stored after it."""
        self.features.add("iter_args")
        target, source = self.rng.sample(self.buffers, 2)
        iv = "%r" + str(self.counter)
        self.counter += 1
        high = self.rng.choice((SIZE - 1, SIZE))
        parts = self.subscript([*ivs, iv], False)
        zero = self.fresh("z")
        acc = self.fresh("acc")
        x = self.fresh("x")
        result = self.fresh("sum")
        literal = "0.0" if self.elem == "f32" else "0"
        op = "arith.addf" if self.elem == "f32" else self.rng.choice(("arith.addi", "arith.maxsi"))
        s = self.fresh("s")
        inner_loop = _Loop(iv, _Bound("0"), _Bound(str(high), high), 1)
        self._reduction_loops.append((inner_loop, parts, source))
        store = self.subscript(ivs, False)
        loop.accesses.append((target, store, True, 0))
        return [
            f"{zero} = arith.constant {literal} : {self.elem}",
            f"{result} = affine.for {iv} = 0 to {high} iter_args({acc} = {zero}) "
            f"-> ({self.elem}) {{",
            f"  {x} = affine.load {source}[{self.render_subscript(parts)}] : {self.type}",
            f"  {s} = {op} {acc}, {x} : {self.elem}",
            f"  affine.yield {s} : {self.elem}",
            "}",
            f"affine.store {result}, {target}[{self.render_subscript(store)}] : {self.type}",
        ]

    # -- output ---------------------------------------------------------------------------

    def render(self, root: _Loop) -> list[str]:
        lines: list[str] = []
        stack: list[tuple[_Loop, int]] = [(root, 0)]
        chain = []
        loop: _Loop | None = root
        while loop is not None:
            chain.append(loop)
            loop = loop.inner
        del stack

        def emit(indent: int, statements: list[list[str]]) -> None:
            for statement in statements:
                lines.extend("  " * indent + line for line in statement)

        for depth, loop in enumerate(chain):
            step = f" step {loop.step}" if loop.step != 1 else ""
            lines.append(
                "  " * (depth + 1)
                + f"affine.for {loop.iv} = {loop.lower.text} to {loop.upper.text}{step} {{"
            )
            emit(depth + 2, loop.pre)
            if loop.inner is None:
                emit(depth + 2, loop.body)
        for depth in reversed(range(len(chain))):
            loop = chain[depth]
            if loop.inner is not None:
                emit(depth + 2, loop.post)
            lines.append("  " * (depth + 1) + "}")
        return lines

    def simulate(self, root: _Loop) -> bool:
        """Whether every access of the nest stays in bounds (and the nest runs)."""
        chain = []
        loop: _Loop | None = root
        while loop is not None:
            chain.append(loop)
            loop = loop.inner
        ran = [False]

        def check(loop: _Loop, env: dict[str, int]) -> bool:
            for _buffer, parts, _, _ in loop.accesses:
                for iv, coefficient, offset in parts:
                    value = offset + (coefficient * env[iv] if iv else 0)
                    if not 0 <= value < SIZE:
                        return False
            return True

        def run(level: int, env: dict[str, int]) -> bool:
            loop = chain[level]
            low = loop.lower.evaluate(env)
            high = loop.upper.evaluate(env)
            for value in range(low, high, loop.step):
                inner_env = {**env, loop.iv: value}
                ran[0] = True
                if level + 1 < len(chain):
                    if not run(level + 1, inner_env):
                        return False
                for reduction, parts, _ in self._reduction_loops:
                    if reduction.parent is loop:
                        for r in range(
                            reduction.lower.evaluate(inner_env), reduction.upper.evaluate(inner_env)
                        ):
                            full = {**inner_env, reduction.iv: r}
                            for iv, coefficient, offset in parts:
                                v = offset + (coefficient * full[iv] if iv else 0)
                                if not 0 <= v < SIZE:
                                    return False
                if not check(loop, inner_env):
                    return False
            return True

        return run(0, {}) and ran[0]

    def generate(self) -> Nest | None:
        self._reduction_loops: list = []
        root = self.build()
        chain = []
        loop: _Loop | None = root
        while loop is not None:
            chain.append(loop)
            loop = loop.inner
        if self.rng.random() < 0.25:
            host = self.rng.choice(chain)
            level = chain.index(host)
            statement = self.iter_reduction([c.iv for c in chain[: level + 1]], host)
            self._reduction_loops[-1][0].parent = host
            if host.inner is None:
                host.body.append(statement)
            else:
                host.post.append(statement)
        if not self.simulate(root):
            return None
        arguments = ", ".join(f"{b}: {self.type}" for b in self.buffers)
        lines = [
            f"// Generated by affine_lsp.testing.nestgen (seed {self.seed}, {self.elem}).",
            f"func.func private @printMemref{self.elem.upper()}(memref<*x{self.elem}>)",
        ]
        if self.elem == "f32":
            lines.append("func.func private @printMemrefI32(memref<*xi32>)")
        lines += [
            "",
            f"func.func @kernel({arguments}, {SYMBOL}: index) {{",
            *self.render(root),
            "  return",
            "}",
            "",
        ]
        buffers = [Buffer(b, self.rank, SIZE, self.elem, True) for b in self.buffers]
        lines += render_main(buffers, {"%n0": SYMBOL_VALUE}, self.elem, self.seed)
        return Nest(
            "\n".join(lines) + "\n", self.seed, self.depth, frozenset(self.features), self.elem
        )


def generate(seed: int) -> Nest:
    """The program for `seed` (deterministic); retries derived seeds until a nest
    stays in bounds."""
    for attempt in range(500):
        nest = _Generator(seed * 7919 + attempt if attempt else seed).generate()
        if nest is not None:
            return Nest(nest.text, seed, nest.depth, nest.features, nest.elem)
    raise ValueError(f"no in-bounds nest for seed {seed}")


def generate_many(count: int, seed: int = 0) -> list[Nest]:
    return [generate(seed + n) for n in range(count)]


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args(argv)
    nest = generate(ns.seed)
    print(f"// features: {', '.join(sorted(nest.features))}")
    print(nest.text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
