"""A seeded generator of small, runnable, deterministic affine programs.

Each program is a complete MLIR file: a ``@kernel`` made of a few top-level ``affine.for`` nests
over memref arguments (live-out) and local temporaries, and a ``@main`` driver that fills the
arguments with integer-valued data, calls the kernel and prints every argument.  The generator
simulates every nest it emits on concrete indices, so each program it returns stays in bounds,
never reads memory it has not written, and keeps float values exact.

``python -m affine_lsp.testing.progen --seed 3`` prints one program.
"""

from __future__ import annotations

import argparse
import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

Choice = TypeVar("Choice")

FEATURES: tuple[str, ...] = (
    "producer_consumer_temp",
    "producer_consumer_arg",
    "chain",
    "shifted",
    "strided",
    "transposed",
    "in_place",
    "reduction",
    "war",
    "waw",
    "live_out",
    "symbolic_bounds",
    "sibling",
    "partial_init",
    "affine_if",
    "max_min_bounds",
    "affine_apply",
    "imperfect",
    "alloca",
)
"""Pattern names: each is a generator choice (weighted by ``GenConfig.weights``) and a feature
that ``Program.features`` reports when it is detected in the emitted program."""

KERNEL = "kernel"
VALUE_LIMIT = 1 << 20
"""Largest magnitude a stored value may reach, so that f32 arithmetic stays exact."""


# =========================================================================== configuration


@dataclass(frozen=True)
class GenConfig:
    """Knobs for ``generate``.

    ``weights`` scales how often each pattern in ``FEATURES`` is chosen (0 disables the
    deliberate use of a pattern; it may still arise incidentally). ``require`` names features the
    program must exhibit: ``generate`` derives new attempts from the seed until it does.
    ``fill_temps`` (for testing the generator) fills every local buffer with that value before
    the kernel's nests run, so two fills giving the same output prove no uninitialised reads.
    """

    min_nests: int = 2
    max_nests: int = 5
    max_depth: int = 3
    sizes: tuple[int, ...] = (6, 8)
    elem_types: tuple[str, ...] = ("f32", "i32")
    weights: Mapping[str, float] = field(default_factory=dict)
    require: frozenset[str] = frozenset()
    fill_temps: int | None = None

    @classmethod
    def only(cls, *patterns: str, **kwargs: object) -> GenConfig:
        """A config that deliberately uses only ``patterns`` (and requires none of them)."""
        unknown = set(patterns) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown patterns: {sorted(unknown)}")
        weights = {name: (1.0 if name in patterns else 0.0) for name in FEATURES}
        return cls(weights=weights, **kwargs)  # type: ignore[arg-type]

    def weight(self, pattern: str) -> float:
        return float(self.weights.get(pattern, 1.0))


@dataclass(frozen=True)
class Program:
    """A generated program and what it contains."""

    text: str
    kernel: str
    features: frozenset[str]
    seed: int
    nests: int
    elem: str
    outputs: tuple[str, ...]


# =========================================================================== affine expressions


@dataclass(frozen=True)
class Aff:
    """``(sum coef*var + const) [floordiv div] [mod mod]`` over SSA names (ivs and symbols)."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0
    div: int = 1
    mod: int = 0

    @staticmethod
    def var(name: str, coef: int = 1, const: int = 0) -> Aff:
        return Aff(((name, coef),), const)

    @staticmethod
    def num(value: int) -> Aff:
        return Aff((), value)

    def names(self) -> list[str]:
        return [name for name, _ in self.terms]

    def plus(self, const: int) -> Aff:
        assert self.div == 1 and self.mod == 0
        return replace(self, const=self.const + const)

    def eval(self, env: Mapping[str, int]) -> int:
        value = sum(coef * env[name] for name, coef in self.terms) + self.const
        if self.div != 1:
            value //= self.div
        if self.mod:
            value %= self.mod
        return value

    def render(self, rename: Mapping[str, str] | None = None) -> str:
        """Print the expression, with names mapped through ``rename`` (e.g. to ``d0``)."""
        parts: list[str] = []
        for name, coef in self.terms:
            shown = rename[name] if rename else name
            mag = abs(coef)
            text = shown if mag == 1 else f"{shown} * {mag}"
            if not parts:
                parts.append(text if coef > 0 else f"-{text}" if mag == 1 else f"{shown} * {coef}")
            else:
                parts.append(("+ " if coef > 0 else "- ") + text)
        if self.const or not parts:
            if not parts:
                parts.append(str(self.const))
            else:
                parts.append(("+ " if self.const > 0 else "- ") + str(abs(self.const)))
        out = " ".join(parts)
        if self.div != 1 or self.mod:
            if len(parts) > 1:
                out = f"({out})"
            if self.div != 1:
                out = f"{out} floordiv {self.div}"
            if self.mod:
                out = f"({out}) mod {self.mod}" if self.div != 1 else f"{out} mod {self.mod}"
        return out


def _map_operands(exprs: Sequence[Aff], symbols: set[str]) -> tuple[list[str], list[str]]:
    names: list[str] = []
    for expr in exprs:
        for name in expr.names():
            if name not in names:
                names.append(name)
    dims = [n for n in names if n not in symbols]
    syms = [n for n in names if n in symbols]
    return dims, syms


def _render_map_like(exprs: Sequence[Aff], symbols: set[str]) -> tuple[str, str, str]:
    """Return ``(header, body, operands)`` for an inline affine map or set over ``exprs``."""
    dims, syms = _map_operands(exprs, symbols)
    rename = {n: f"d{i}" for i, n in enumerate(dims)} | {n: f"s{i}" for i, n in enumerate(syms)}
    header = "(" + ", ".join(rename[d] for d in dims) + ")"
    if syms:
        header += "[" + ", ".join(rename[s] for s in syms) + "]"
    body = ", ".join(e.render(rename) for e in exprs)
    operands = "(" + ", ".join(dims) + ")" + ("[" + ", ".join(syms) + "]" if syms else "")
    return header, body, operands


# =========================================================================== program IR


@dataclass
class Buffer:
    """A memref: a kernel argument (live-out) or a local temporary."""

    name: str
    rank: int
    size: int
    elem: str
    is_arg: bool
    alloca: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.size,) * self.rank

    @property
    def type(self) -> str:
        return "memref<" + "x".join(map(str, self.shape)) + f"x{self.elem}>"

    def cells(self) -> int:
        return int(self.size**self.rank)


@dataclass(frozen=True)
class Access:
    buf: Buffer
    index: tuple[Aff, ...]

    def render(self) -> str:
        return f"{self.buf.name}[" + ", ".join(e.render() for e in self.index) + "]"


class Recorder:
    """Collects the memory events of a simulated nest and checks them."""

    def __init__(self, written: dict[str, set[tuple[int, ...]]]) -> None:
        self.written = written
        self.reads: dict[str, set[tuple[int, ...]]] = {}
        self.writes: dict[str, set[tuple[int, ...]]] = {}
        self.error: str | None = None

    def touch(self, access: Access, env: Mapping[str, int], store: bool) -> None:
        idx = tuple(e.eval(env) for e in access.index)
        buf = access.buf
        if any(not 0 <= i < buf.size for i in idx):
            raise _Reject(f"out of bounds: {buf.name}{list(idx)}")
        if store:
            self.writes.setdefault(buf.name, set()).add(idx)
            if not buf.is_arg:
                self.written.setdefault(buf.name, set()).add(idx)
        else:
            if not buf.is_arg and idx not in self.written.get(buf.name, set()):
                raise _Reject(f"uninitialised read: {buf.name}{list(idx)}")
            self.reads.setdefault(buf.name, set()).add(idx)


class _Reject(Exception):
    """A candidate nest breaks a program invariant; the generator tries another."""


class Stmt:
    """An operation in a kernel body."""

    def lines(self, ctx: _Render) -> list[str]:
        raise NotImplementedError

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        """Simulate the statement's memory accesses (values are not computed)."""

    def children(self) -> Iterable[Stmt]:
        return ()


@dataclass
class _Render:
    elem: str
    symbols: set[str]


@dataclass
class Load(Stmt):
    name: str
    access: Access

    def lines(self, ctx: _Render) -> list[str]:
        return [f"{self.name} = affine.load {self.access.render()} : {self.access.buf.type}"]

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        rec.touch(self.access, env, store=False)


@dataclass
class Store(Stmt):
    value: str
    access: Access

    def lines(self, ctx: _Render) -> list[str]:
        return [f"affine.store {self.value}, {self.access.render()} : {self.access.buf.type}"]

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        rec.touch(self.access, env, store=True)


@dataclass
class Const(Stmt):
    name: str
    value: int

    def lines(self, ctx: _Render) -> list[str]:
        literal = f"{self.value}.0" if ctx.elem == "f32" else str(self.value)
        return [f"{self.name} = arith.constant {literal} : {ctx.elem}"]


_OPS = {
    "f32": {"add": "addf", "sub": "subf", "mul": "mulf", "max": "maximumf", "min": "minimumf"},
    "i32": {"add": "addi", "sub": "subi", "mul": "muli", "max": "maxsi", "min": "minsi"},
}


@dataclass
class BinOp(Stmt):
    name: str
    op: str
    lhs: str
    rhs: str

    def lines(self, ctx: _Render) -> list[str]:
        opname = _OPS[ctx.elem][self.op]
        return [f"{self.name} = arith.{opname} {self.lhs}, {self.rhs} : {ctx.elem}"]


@dataclass
class Apply(Stmt):
    name: str
    expr: Aff

    def lines(self, ctx: _Render) -> list[str]:
        header, body, operands = _render_map_like([self.expr], ctx.symbols)
        return [f"{self.name} = affine.apply affine_map<{header} -> ({body})>{operands}"]

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        env[self.name] = self.expr.eval(env)


@dataclass
class If(Stmt):
    """``affine.if`` on constraints ``expr >= 0`` (or ``== 0`` when flagged)."""

    conds: tuple[tuple[Aff, bool], ...]
    then: list[Stmt]
    orelse: list[Stmt] | None = None

    def lines(self, ctx: _Render) -> list[str]:
        header, _, operands = _render_map_like([c for c, _ in self.conds], ctx.symbols)
        dims, syms = _map_operands([c for c, _ in self.conds], ctx.symbols)
        rename = {n: f"d{i}" for i, n in enumerate(dims)} | {n: f"s{i}" for i, n in enumerate(syms)}
        body = ", ".join(f"{c.render(rename)} {'==' if eq else '>='} 0" for c, eq in self.conds)
        out = [f"affine.if affine_set<{header} : ({body})>{operands} {{"]
        out += _indent(self.then, ctx)
        if self.orelse:
            out.append("} else {")
            out += _indent(self.orelse, ctx)
        out.append("}")
        return out

    def holds(self, env: Mapping[str, int]) -> bool:
        return all((c.eval(env) == 0) if eq else (c.eval(env) >= 0) for c, eq in self.conds)

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        branch = self.then if self.holds(env) else (self.orelse or [])
        for stmt in branch:
            stmt.run(env, rec)

    def children(self) -> Iterable[Stmt]:
        return [*self.then, *(self.orelse or [])]


@dataclass(frozen=True)
class Bound:
    """A loop bound: the max (lower) or min (upper) of affine expressions."""

    exprs: tuple[Aff, ...]

    def eval(self, env: Mapping[str, int], lower: bool) -> int:
        values = [e.eval(env) for e in self.exprs]
        return max(values) if lower else min(values)

    def render(self, lower: bool, symbols: set[str]) -> str:
        if len(self.exprs) == 1:
            only = self.exprs[0]
            if not only.terms:
                return str(only.const)
            if (
                len(only.terms) == 1
                and only.terms[0][1] == 1
                and only.const == 0
                and only.div == 1
                and not only.mod
                and only.terms[0][0] in symbols
            ):
                return only.terms[0][0]
        header, body, operands = _render_map_like(self.exprs, symbols)
        keyword = ("max " if lower else "min ") if len(self.exprs) > 1 else ""
        return f"{keyword}affine_map<{header} -> ({body})>{operands}"

    def symbolic(self, symbols: set[str]) -> bool:
        return any(name in symbols for e in self.exprs for name in e.names())


def const_bound(value: int) -> Bound:
    return Bound((Aff.num(value),))


@dataclass
class IterArg:
    """A single ``iter_args`` carried value of an ``affine.for``."""

    acc: str
    init: str
    yielded: str
    result: str


@dataclass
class For(Stmt):
    iv: str
    lower: Bound
    upper: Bound
    body: list[Stmt]
    step: int = 1
    iter: IterArg | None = None

    def lines(self, ctx: _Render) -> list[str]:
        lb = self.lower.render(True, ctx.symbols)
        ub = self.upper.render(False, ctx.symbols)
        head = f"affine.for {self.iv} = {lb} to {ub}"
        if self.step != 1:
            head += f" step {self.step}"
        if self.iter:
            head = f"{self.iter.result} = {head} iter_args({self.iter.acc} = {self.iter.init})"
            head += f" -> ({ctx.elem})"
        out = [head + " {"] + _indent(self.body, ctx)
        if self.iter:
            out.append(f"  affine.yield {self.iter.yielded} : {ctx.elem}")
        out.append("}")
        return out

    def run(self, env: dict[str, int], rec: Recorder) -> None:
        lo, hi = self.lower.eval(env, True), self.upper.eval(env, False)
        for value in range(lo, hi, self.step):
            env[self.iv] = value
            for stmt in self.body:
                stmt.run(env, rec)
        env.pop(self.iv, None)

    def children(self) -> Iterable[Stmt]:
        return self.body


def _indent(stmts: Iterable[Stmt], ctx: _Render) -> list[str]:
    return ["  " + line for stmt in stmts for line in stmt.lines(ctx)]


def walk(stmts: Iterable[Stmt]) -> Iterator[Stmt]:
    """Every statement in ``stmts``, nested ones included, in textual order."""
    for stmt in stmts:
        yield stmt
        yield from walk(stmt.children())


@dataclass
class Nest:
    """A top-level group of kernel statements holding exactly one ``affine.for``."""

    stmts: list[Stmt]
    reads: dict[str, set[tuple[int, ...]]] = field(default_factory=dict)
    writes: dict[str, set[tuple[int, ...]]] = field(default_factory=dict)


# =========================================================================== the generator


@dataclass
class _Value:
    name: str
    bound: int


class _Generator:
    """Builds one program from a seeded random stream."""

    def __init__(self, seed: int, config: GenConfig) -> None:
        self.seed = seed
        self.cfg = config
        self.rng = random.Random(seed)
        self.elem = self.rng.choice(config.elem_types)
        self.size = self.rng.choice(config.sizes)
        self.counter = itertools.count()
        self.symbols: dict[str, int] = {}
        self.args: list[Buffer] = []
        self.temps: list[Buffer] = []
        self.new_temps: list[Buffer] = []
        self.nests: list[Nest] = []
        self.written: dict[str, set[tuple[int, ...]]] = {}
        self.bounds: dict[str, int] = {}
        self.partial_todo: tuple[Buffer, int, int, int] | None = None
        """A partially written buffer, the range still to write, and the nest that started it."""
        self.rejections: list[str] = []
        # Program-wide style: most buffers share one rank, symbols appear in some programs only,
        # and the share of decorated (shifted, strided, ...) accesses varies, so that the mix
        # holds both clean producer-consumer chains and irregular, hazardous programs.
        self.main_rank = self.pick([(0.45, 1), (0.45, 2), (0.1, 3)])
        self.main_rank = min(self.main_rank, config.max_depth)
        self.use_symbols = self.want("symbolic_bounds", 0.35)
        self.hazard_rate = self.pick([(0.4, 0.1), (0.6, 1.0)])
        self.readonly: set[str] = set()
        """Arguments no nest writes (pure inputs: what MLIR's sibling fusion looks for)."""
        self.decor_rate = self.pick([(0.35, 0.0), (0.4, 0.2), (0.25, 0.45)])

    # ----------------------------------------------------------------- random helpers

    def want(self, pattern: str, p: float) -> bool:
        return self.rng.random() < min(1.0, p * self.cfg.weight(pattern))

    def fresh(self, prefix: str) -> str:
        return f"%{prefix}{next(self.counter)}"

    def pick(self, weighted: Sequence[tuple[float, Choice]]) -> Choice:
        total = sum(w for w, _ in weighted)
        if total <= 0:
            return weighted[0][1]
        x = self.rng.random() * total
        for w, item in weighted:
            x -= w
            if x < 0:
                return item
        return weighted[-1][1]

    def symbol(self, value: int) -> str:
        """The ``index`` kernel argument that carries ``value`` (created on first use)."""
        for name, v in self.symbols.items():
            if v == value:
                return name
        name = f"%n{len(self.symbols)}"
        self.symbols[name] = value
        return name

    # ----------------------------------------------------------------- buffers

    def all_buffers(self) -> list[Buffer]:
        return self.args + self.temps + self.new_temps

    def writable(self) -> list[Buffer]:
        return [b for b in self.all_buffers() if b.name not in self.readonly]

    def make_args(self) -> None:
        count = self.rng.randint(2, 4)
        for i in range(count):
            rank = self.rank_choice()
            self.args.append(Buffer(f"%arg{i}", rank, self.size, self.elem, True))
            self.bounds[f"%arg{i}"] = 6
        if self.want("sibling", 0.6):
            self.readonly.add(self.args[0].name)

    def rank_choice(self) -> int:
        """The program's main rank most of the time, another rank now and then."""
        if self.rng.random() < 0.75:
            return self.main_rank
        ranks: list[tuple[float, int]] = [(3.0, 1)]
        if self.cfg.max_depth >= 2:
            ranks.append((3.0, 2))
        if self.cfg.max_depth >= 3:
            ranks.append((0.6, 3))
        return self.pick(ranks)

    def new_temp(self, rank: int) -> Buffer:
        alloca = self.want("alloca", 0.3)
        buf = Buffer(self.fresh("t"), rank, self.size, self.elem, False, alloca)
        self.new_temps.append(buf)
        self.bounds[buf.name] = 0
        return buf

    def nest_index_reading(self, buf: Buffer) -> list[int]:
        return [i for i, n in enumerate(self.nests) if buf.name in n.reads]

    def nest_index_writing(self, buf: Buffer) -> list[int]:
        return [i for i, n in enumerate(self.nests) if buf.name in n.writes]

    def initialised(self, buf: Buffer) -> bool:
        return buf.is_arg or bool(self.written.get(buf.name))

    def last_written(self) -> Buffer | None:
        for nest in reversed(self.nests):
            for buf in self.all_buffers():
                if buf.name in nest.writes:
                    return buf
        return None

    def pick_dest(self, rank: int, last: bool) -> Buffer:
        """Choose the buffer a nest writes: a new temp, an argument, or a hazard target."""
        same = [b for b in self.writable() if b.rank == rank]
        options: list[tuple[float, object]] = []
        unwritten_args = [b for b in same if b.is_arg and not self.nest_index_writing(b)]
        read_before = [b for b in same if self.nest_index_reading(b)]
        written_before = [b for b in same if self.nest_index_writing(b)]
        if last:
            options.append((4.0 * self.hazard_rate, "arg"))
        else:
            options.append((2.2 * self.cfg.weight("producer_consumer_temp"), "temp"))
            options.append((1.0 * self.cfg.weight("live_out"), "arg"))
        if read_before:
            options.append((0.5 * self.hazard_rate * self.cfg.weight("war"), "war"))
        if written_before:
            options.append((0.35 * self.hazard_rate * self.cfg.weight("waw"), "waw"))
        if unwritten_args:
            options.append((0.8 * self.cfg.weight("producer_consumer_arg"), "fresh_arg"))
        if last:
            read_before = [b for b in read_before if b.is_arg]
            written_before = [b for b in written_before if b.is_arg]
        choice = self.pick(options)
        if choice == "war" and read_before:
            return self.rng.choice(read_before)
        if choice == "waw" and written_before:
            return self.rng.choice(written_before)
        if choice == "fresh_arg" and unwritten_args:
            return self.rng.choice(unwritten_args)
        args = [b for b in same if b.is_arg]
        if choice in ("arg", "fresh_arg") and args:
            return self.rng.choice(args)
        temps = [b for b in same if not b.is_arg and b not in self.new_temps]
        if temps and self.rng.random() < 0.25:
            return self.rng.choice(temps)
        return self.new_temp(rank)

    def pick_source(self, avoid: Sequence[Buffer], args_only: bool, last: bool) -> Buffer:
        """Choose a buffer to read, favouring producer-consumer and sibling relations."""
        pool = [b for b in self.all_buffers() if b not in avoid and self.initialised(b)]
        if args_only:
            pool = [b for b in pool if b.is_arg]
        if not pool:
            pool = [b for b in self.args if b not in avoid] or list(self.args)
        options: list[tuple[float, object]] = [(1.0, b) for b in pool]
        producer = self.last_written()
        for i, (_, b) in enumerate(options):
            buf = b
            assert isinstance(buf, Buffer)
            weight = 1.0
            if buf is producer:
                weight += 3.0 * self.cfg.weight("chain")
            if not buf.is_arg and not self.nest_index_reading(buf):
                weight += (5.0 if last else 2.5) * self.cfg.weight("producer_consumer_temp")
            if buf.is_arg and self.nest_index_writing(buf):
                weight += 1.5 * self.cfg.weight("producer_consumer_arg")
            if self.nest_index_reading(buf) and not self.nest_index_writing(buf):
                weight += 1.2 * self.cfg.weight("sibling")
            if buf.name in self.readonly:
                weight += 1.5 * self.cfg.weight("sibling")
            options[i] = (weight, buf)
        chosen = self.pick(options)
        assert isinstance(chosen, Buffer)
        return chosen

    # ----------------------------------------------------------------- accesses

    def access(
        self,
        buf: Buffer,
        ivs: Sequence[str],
        ranges: dict[str, list[int]],
        must_use: Sequence[str] = (),
        decorate: bool = True,
    ) -> tuple[Access, list[Stmt]]:
        """Index ``buf`` with the loop ivs (outermost first), narrowing ``ranges`` as needed.

        Returns the access and any ``affine.apply`` statements it relies on.
        """
        rank = buf.rank
        chosen: list[str | None]
        if len(ivs) >= rank:
            keep = list(must_use)
            rest = [v for v in ivs if v not in keep]
            while len(keep) < rank:
                keep.append(rest.pop() if self.rng.random() < 0.7 else rest.pop(0))
            order = {v: i for i, v in enumerate(ivs)}
            ordered: list[str] = sorted(keep, key=order.__getitem__)
            chosen = list(ordered)
            if rank >= 2 and decorate and self.want("transposed", 0.18 + self.decor_rate / 2):
                before = list(chosen)
                while chosen == before:
                    self.rng.shuffle(chosen)
        else:
            chosen = list(ivs) + [None] * (rank - len(ivs))
            if self.rng.random() < 0.3:
                self.rng.shuffle(chosen)
        dims = [d for d, iv in enumerate(chosen) if iv is not None]
        fancy = -1
        if decorate and dims and self.rng.random() < self.decor_rate:
            fancy = self.rng.choice(dims)
        index: list[Aff] = []
        prelude: list[Stmt] = []
        for d, iv in enumerate(chosen):
            if iv is None:
                index.append(Aff.num(self.rng.randrange(self.size)))
                continue
            expr = self.decorate(iv, ranges) if d == fancy else Aff.var(iv)
            if decorate and self.want("affine_apply", 0.25 if d == fancy else 0.04):
                name = self.fresh("a")
                prelude.append(Apply(name, expr))
                expr = Aff.var(name)
            index.append(expr)
        return Access(buf, tuple(index)), prelude

    def decorate(self, iv: str, ranges: dict[str, list[int]]) -> Aff:
        """Turn ``iv`` into a shifted, strided, divided or rotated index."""
        size = self.size
        kind = self.pick(
            [
                (0.5 * self.cfg.weight("shifted"), "shift"),
                (0.25 * self.cfg.weight("strided"), "stride"),
                (0.12 * self.cfg.weight("affine_apply"), "div"),
                (0.1 * self.cfg.weight("shifted"), "rotate"),
            ]
        )
        if (
            self.cfg.weight("shifted")
            + self.cfg.weight("strided")
            + self.cfg.weight("affine_apply")
            <= 0
        ):
            return Aff.var(iv)
        if kind == "shift":
            shift = self.rng.choice([-2, -1, -1, 1, 1, 2])
            self.narrow(ranges, iv, max(0, -shift), size - max(0, shift))
            return Aff.var(iv, 1, shift)
        if kind == "stride":
            offset = self.rng.choice([0, 0, 1])
            self.narrow(ranges, iv, 0, (size - 1 - offset) // 2 + 1)
            return Aff.var(iv, 2, offset)
        if kind == "div":
            return Aff(((iv, 1),), 0, div=2)
        return Aff(((iv, 1),), self.rng.randint(1, size - 1), mod=size)

    @staticmethod
    def narrow(ranges: dict[str, list[int]], iv: str, lo: int, hi: int) -> None:
        span = ranges[iv]
        span[0], span[1] = max(span[0], lo), min(span[1], hi)
        if span[0] >= span[1]:
            raise _Reject(f"empty range for {iv}")

    # ----------------------------------------------------------------- values

    def combine(self, values: list[_Value], body: list[Stmt]) -> _Value:
        """Fold loaded values (plus maybe a constant) into one, keeping magnitudes bounded."""
        acc = values[0]
        for other in values[1:]:
            op = self.rng.choice(["add", "add", "sub", "max", "min", "mul"])
            bound = self.op_bound(op, acc.bound, other.bound)
            if bound > VALUE_LIMIT:
                op, bound = "max", max(acc.bound, other.bound)
            name = self.fresh("v")
            body.append(BinOp(name, op, acc.name, other.name))
            acc = _Value(name, bound)
        if len(values) == 1 or self.rng.random() < 0.4:
            c = self.rng.choice([-3, -1, 1, 2, 3, 5])
            cname = self.fresh("c")
            body.append(Const(cname, c))
            op = self.rng.choice(["add", "add", "mul", "sub", "max"])
            bound = self.op_bound(op, acc.bound, abs(c))
            if bound > VALUE_LIMIT:
                op, bound = "max", max(acc.bound, abs(c))
            name = self.fresh("v")
            body.append(BinOp(name, op, acc.name, cname))
            acc = _Value(name, bound)
        return acc

    @staticmethod
    def op_bound(op: str, a: int, b: int) -> int:
        return a * b if op == "mul" else a + b if op in ("add", "sub") else max(a, b)

    def load(self, access: Access, body: list[Stmt]) -> _Value:
        name = self.fresh("v")
        body.append(Load(name, access))
        return _Value(name, self.bounds.get(access.buf.name, 0))

    # ----------------------------------------------------------------- loops

    def loops(
        self,
        ivs: Sequence[str],
        ranges: Mapping[str, Sequence[int]],
        body: list[Stmt],
        steps: Mapping[str, int] | None = None,
    ) -> For:
        """Wrap ``body`` in loops over ``ivs`` (outermost first) with the given concrete ranges."""
        inner: list[Stmt] = body
        loop: For | None = None
        for iv in reversed(ivs):
            lo, hi = ranges[iv]
            lower, upper = self.bounds_for(lo, hi)
            loop = For(iv, lower, upper, inner, (steps or {}).get(iv, 1))
            inner = [loop]
        assert loop is not None
        return loop

    def bounds_for(self, lo: int, hi: int) -> tuple[Bound, Bound]:
        """Concrete ``[lo, hi)`` spelled plainly, through ``%n`` symbols, or with max/min."""
        lower, upper = const_bound(lo), const_bound(hi)
        if self.use_symbols and self.rng.random() < 0.5:
            if hi == self.size or self.rng.random() < 0.5:
                upper = Bound((Aff.var(self.symbol(hi)),))
            else:
                sym = self.symbol(self.size)
                upper = Bound((Aff.var(sym, 1, hi - self.size), Aff.num(self.size)))
            if lo > 0 and self.rng.random() < 0.5:
                sym = self.symbol(self.size)
                lower = Bound((Aff.num(lo), Aff.var(sym, 1, lo - self.size - 1)))
        elif self.want("max_min_bounds", 0.06):
            upper = Bound((Aff.num(hi), Aff.num(hi + self.rng.randint(0, 3))))
        return lower, upper

    # ----------------------------------------------------------------- nest kinds

    def kind_map(self, last: bool, args_only: bool) -> list[Stmt]:
        """``dest[ivs] = f(src1[...], src2[...])`` over a rectangular nest."""
        rank = self.rank_choice()
        if last:
            rank = self.rng.choice([b.rank for b in self.args if b.name not in self.readonly])
        dest = self.pick_dest(rank, last)
        ivs = [self.fresh("i") for _ in range(rank)]
        ranges = {iv: [0, self.size] for iv in ivs}
        if self.partial_todo and not args_only and self.rng.random() < 0.7:
            todo_buf, lo, hi, _ = self.partial_todo
            if todo_buf.rank == rank:
                dest = todo_buf
                ranges[ivs[0]] = [lo, hi]
        elif self.want("partial_init", 0.18):
            cut = self.rng.randint(1, self.size - 1)
            if self.rng.random() < 0.5:
                ranges[ivs[0]] = [0, cut]
                self.partial_todo = (dest, cut, self.size, len(self.nests))
            else:
                ranges[ivs[0]] = [cut, self.size]
                self.partial_todo = (dest, 0, cut, len(self.nests))
        count = 1 if self.rng.random() < 0.45 else 2
        sources = [self.pick_source([dest], args_only, last) for _ in range(count)]
        # Sibling candidates: plain reads of a shared read-only input over the full space.
        shared = [b for b in self.args if b.name in self.readonly and b.rank == rank]
        plain_first = bool(shared) and self.want("sibling", 0.35)
        if plain_first:
            sources[0] = shared[0]
        guard = self.want("affine_if", 0.22)
        body: list[Stmt] = []
        values: list[_Value] = []
        loads: list[Stmt] = []
        guarded_ranges = {iv: list(span) for iv, span in ranges.items()}
        for n, src in enumerate(sources):
            plain = plain_first and n == 0
            acc, pre = self.access(
                src, ivs, guarded_ranges if guard else ranges, decorate=not plain
            )
            body += pre
            values.append(self.load(acc, loads))
        result_stmts: list[Stmt] = list(loads)
        value = self.combine(values, result_stmts)
        dest_acc, pre = self.access(dest, ivs, ranges, decorate=self.rng.random() < 0.25)
        body += pre
        store = Store(value.name, dest_acc)
        if guard:
            conds = self.range_conds(ivs, guarded_ranges, ranges)
            if not conds:
                conds = self.random_cond(ivs)
            fallback: list[Stmt] | None = None
            if self.rng.random() < 0.6:
                fb_value = self.fresh("c")
                fallback = [
                    Const(fb_value, self.rng.choice([0, 1, -1, 7])),
                    Store(fb_value, dest_acc),
                ]
            body.append(If(tuple(conds), [*result_stmts, store], fallback))
        else:
            body += [*result_stmts, store]
        steps: dict[str, int] = {}
        if self.want("strided", 0.07):
            steps[ivs[-1]] = 2
        self.bounds[dest.name] = max(self.bounds[dest.name], value.bound, 7)
        return [self.loops(ivs, ranges, body, steps)]

    def range_conds(
        self,
        ivs: Sequence[str],
        inner: Mapping[str, Sequence[int]],
        outer: Mapping[str, Sequence[int]],
    ) -> list[tuple[Aff, bool]]:
        """Constraints restricting each iv from its ``outer`` range to its ``inner`` range."""
        conds: list[tuple[Aff, bool]] = []
        for iv in ivs:
            (lo, hi), (olo, ohi) = inner[iv], outer[iv]
            if lo > olo:
                conds.append((Aff.var(iv, 1, -lo), False))
            if hi < ohi:
                if self.symbols and self.rng.random() < 0.4:
                    sym = self.symbol(self.size)
                    expr = Aff(((sym, 1), (iv, -1)), hi - self.size - 1)
                else:
                    expr = Aff(((iv, -1),), hi - 1)
                conds.append((expr, False))
        return conds

    def random_cond(self, ivs: Sequence[str]) -> list[tuple[Aff, bool]]:
        iv = self.rng.choice(list(ivs))
        if self.rng.random() < 0.5:
            return [(Aff(((iv, 1),), self.rng.randint(0, 1), mod=2), True)]
        return [(Aff.var(iv, 1, -self.rng.randint(1, self.size - 2)), False)]

    def kind_in_place(self, last: bool, args_only: bool) -> list[Stmt]:
        """``B[i] = B[i] op x``: update an already produced buffer in place."""
        producer = self.last_written()
        candidates = [b for b in self.writable() if self.initialised(b)]
        if args_only:
            candidates = [b for b in candidates if b.is_arg]
        dest = producer if producer in candidates and self.rng.random() < 0.6 else None
        dest = dest or self.rng.choice(candidates)
        ivs = [self.fresh("i") for _ in range(dest.rank)]
        ranges = {iv: [0, self.size] for iv in ivs}
        body: list[Stmt] = []
        here = Access(dest, tuple(Aff.var(iv) for iv in ivs))
        values = [self.load(here, body)]
        if self.rng.random() < 0.25:
            # A loop-carried recurrence along the innermost dimension (a running sum).
            shifted = list(here.index)
            shifted[-1] = Aff.var(ivs[-1], 1, -1)
            ranges[ivs[-1]][0] = 1
            previous = self.load(Access(dest, tuple(shifted)), body)
            total = self.size * values[0].bound
            op = "add" if total <= VALUE_LIMIT else "max"
            name = self.fresh("v")
            body.append(BinOp(name, op, previous.name, values[0].name))
            value = _Value(name, total if op == "add" else values[0].bound)
        else:
            if self.rng.random() < 0.5:
                src = self.pick_source([dest], args_only, last)
                acc, pre = self.access(src, ivs, ranges)
                body[:0] = pre
                values.append(self.load(acc, body))
            value = self.combine(values, body)
        body.append(Store(value.name, here))
        self.bounds[dest.name] = max(self.bounds[dest.name], value.bound)
        if self.want("affine_if", 0.2):
            body = [If(tuple(self.random_cond(ivs)), body)]
        return [self.loops(ivs, ranges, body)]

    def kind_reduce(self, last: bool, args_only: bool) -> list[Stmt]:
        """``dest[ivs] = sum_k src[ivs, k]`` with ``iter_args`` (or a windowed sum)."""
        rank = 1 if self.cfg.max_depth < 3 or self.rng.random() < 0.6 else 2
        dest = self.pick_dest(rank, last)
        ivs = [self.fresh("i") for _ in range(rank)]
        k = self.fresh("k")
        ranges = {iv: [0, self.size] for iv in [*ivs, k]}
        window = self.want("max_min_bounds", 0.3)
        src = self.pick_source([dest], args_only, last)
        inner: list[Stmt] = []
        acc, pre = self.access(src, [*ivs, k], ranges, must_use=[k], decorate=not window)
        inner += pre
        loaded = self.load(acc, inner)
        values = [loaded]
        if self.rng.random() < 0.35:
            other = self.pick_source([dest], args_only, last)
            acc2, pre2 = self.access(other, [*ivs, k], ranges, must_use=[k], decorate=False)
            inner[:0] = pre2
            values.append(self.load(acc2, inner))
        term = self.combine(values, inner) if len(values) > 1 else loaded
        trips = 3 if window else self.size
        acc_name, result = self.fresh("acc"), self.fresh("r")
        init = self.fresh("c")
        init_stmt: Stmt = Const(init, 0)
        dest_acc = Access(dest, tuple(Aff.var(iv) for iv in ivs))
        start_bound = 0
        if self.initialised(dest) and self.rng.random() < 0.3:
            init_stmt = Load(init, dest_acc)
            start_bound = self.bounds[dest.name]
        op = "add" if start_bound + term.bound * trips <= VALUE_LIMIT else "max"
        op = "max" if self.rng.random() < 0.15 else op
        summed = self.fresh("v")
        inner.append(BinOp(summed, op, acc_name, term.name))
        if window:
            lo = Aff.var(ivs[-1], 1, -1)
            hi = Aff.var(ivs[-1], 1, 2)
            kloop = For(
                k,
                Bound((Aff.num(0), lo)),
                Bound((Aff.num(self.size), hi)),
                inner,
                iter=IterArg(acc_name, init, summed, result),
            )
        else:
            klo, khi = ranges[k]
            kl, ku = self.bounds_for(klo, khi)
            kloop = For(k, kl, ku, inner, iter=IterArg(acc_name, init, summed, result))
        bound = start_bound + trips * term.bound if op == "add" else max(start_bound, term.bound)
        outer = [init_stmt, kloop, Store(result, dest_acc)]
        self.bounds[dest.name] = max(self.bounds[dest.name], bound)
        return [self.loops(ivs, {iv: ranges[iv] for iv in ivs}, outer)]

    def kind_scalar_reduce(self, last: bool, args_only: bool) -> list[Stmt]:
        """A top-level ``iter_args`` loop folding a buffer into one element of another."""
        src = self.pick_source([], args_only, last)
        dest = self.pick_dest(self.rank_choice(), last)
        i = self.fresh("i")
        ranges = {i: [0, self.size]}
        body: list[Stmt] = []
        acc, pre = self.access(src, [i], ranges)
        body += pre
        loaded = self.load(acc, body)
        acc_name, result, init, summed = (self.fresh(p) for p in ("acc", "r", "c", "v"))
        op = "add" if loaded.bound * self.size <= VALUE_LIMIT else "max"
        body.append(BinOp(summed, op, acc_name, loaded.name))
        lower, upper = self.bounds_for(*ranges[i])
        loop = For(i, lower, upper, body, iter=IterArg(acc_name, init, summed, result))
        spot = tuple(Aff.num(self.rng.randrange(self.size)) for _ in range(dest.rank))
        bound = loaded.bound * self.size if op == "add" else loaded.bound
        self.bounds[dest.name] = max(self.bounds[dest.name], bound)
        return [Const(init, 0), loop, Store(result, Access(dest, spot))]

    def kind_imperfect(self, last: bool, args_only: bool) -> list[Stmt]:
        """An outer loop with work both before and inside its inner loop."""
        dest = self.pick_dest(2, last)
        i, j = self.fresh("i"), self.fresh("j")
        ranges = {i: [0, self.size], j: [0, self.size]}
        src_a = self.pick_source([dest], args_only, last)
        outer: list[Stmt] = []
        acc_a, pre = self.access(src_a, [i], ranges, decorate=src_a.rank == 1)
        outer += pre
        a = self.load(acc_a, outer)
        side = [b for b in self.writable() if b.rank == 1 and b not in (dest, src_a)]
        if side and self.rng.random() < 0.4:
            target = self.rng.choice(side)
            doubled = self.combine([a], outer)
            outer.append(Store(doubled.name, Access(target, (Aff.var(i),))))
            self.bounds[target.name] = max(self.bounds[target.name], doubled.bound)
        src_b = self.pick_source([dest], args_only, last)
        inner: list[Stmt] = []
        acc_b, pre = self.access(src_b, [i, j], ranges)
        inner += pre
        b = self.load(acc_b, inner)
        value = self.combine([a, b], inner)
        inner.append(Store(value.name, Access(dest, (Aff.var(i), Aff.var(j)))))
        self.bounds[dest.name] = max(self.bounds[dest.name], value.bound)
        jlo, jhi = ranges[j]
        triangular = self.want("max_min_bounds", 0.25)
        if triangular:
            jl = Bound((Aff.num(jlo), Aff.var(i, 1, -2)))
            ju = Bound((Aff.num(jhi), Aff.var(i, 1, 3)))
        else:
            jl, ju = self.bounds_for(jlo, jhi)
        outer.append(For(j, jl, ju, inner))
        return [self.loops([i], {i: ranges[i]}, outer)]

    def kind_interleave(self, last: bool, args_only: bool) -> list[Stmt]:
        """``step 2`` loop writing even and odd elements of a 1-d buffer."""
        dest = self.pick_dest(1, last)
        i = self.fresh("i")
        src = self.pick_source([dest], args_only, last)
        body: list[Stmt] = []
        ranges = {i: [0, self.size]}
        acc, pre = self.access(src, [i], ranges, decorate=False)
        body += pre
        even = self.combine([self.load(acc, body)], body)
        body.append(Store(even.name, Access(dest, (Aff.var(i),))))
        other = list(acc.index)
        pos = next(n for n, e in enumerate(other) if e.terms)
        other[pos] = Aff.var(i, 1, 1)
        odd = self.combine([self.load(Access(src, tuple(other)), body)], body)
        body.append(Store(odd.name, Access(dest, (Aff.var(i, 1, 1),))))
        self.bounds[dest.name] = max(self.bounds[dest.name], even.bound, odd.bound)
        hi = self.size - (self.size % 2)
        lower, upper = self.bounds_for(0, hi)
        return [For(i, lower, upper, body, step=2)]

    def kind_fallback(self) -> list[Stmt]:
        """A plain copy between arguments; always valid."""
        src, dest = self.args[0], self.args[-1]
        ivs = [self.fresh("i") for _ in range(dest.rank)]
        body: list[Stmt] = []
        index = [Aff.var(ivs[d]) if d < len(ivs) else Aff.num(0) for d in range(src.rank)]
        value = self.load(Access(src, tuple(index)), body)
        body.append(Store(value.name, Access(dest, tuple(Aff.var(iv) for iv in ivs))))
        self.bounds[dest.name] = max(self.bounds[dest.name], value.bound)
        return [self.loops(ivs, {iv: [0, self.size] for iv in ivs}, body)]

    # ----------------------------------------------------------------- assembly

    KINDS: tuple[tuple[str, float, str], ...] = (
        ("map", 3.0, ""),
        ("in_place", 1.0, "in_place"),
        ("reduce", 1.1, "reduction"),
        ("scalar_reduce", 0.25, "reduction"),
        ("imperfect", 0.8, "imperfect"),
        ("interleave", 0.45, "strided"),
    )

    def build_nest(self, last: bool) -> None:
        """Add one validated nest, retrying with other choices when one breaks an invariant."""
        for attempt in range(12):
            state = (dict(self.bounds), self.partial_todo, dict(self.symbols))
            self.new_temps = []
            args_only = attempt >= 6
            kinds = [(w * (self.cfg.weight(p) if p else 1.0), k) for k, w, p in self.KINDS]
            if self.cfg.max_depth < 2:
                kinds = [(w, k) for w, k in kinds if k not in ("imperfect", "reduce")]
            kind = str(self.pick(kinds))
            try:
                stmts = getattr(self, f"kind_{kind}")(last, args_only)
                if self.depth(stmts) > self.cfg.max_depth:
                    raise _Reject("too deep")
                self.commit(Nest(stmts), need_arg_write=last)
                return
            except _Reject as why:
                self.rejections.append(str(why))
                self.bounds, self.partial_todo, self.symbols = state
        self.new_temps = []
        self.commit(Nest(self.kind_fallback()))

    def depth(self, stmts: Sequence[Stmt]) -> int:
        best = 0
        for stmt in stmts:
            if isinstance(stmt, For):
                best = max(best, 1 + self.depth(list(stmt.body)))
            else:
                best = max(best, self.depth(list(stmt.children())))
        return best

    def commit(self, nest: Nest, need_arg_write: bool = False) -> None:
        """Simulate ``nest``; on success make its effects and new temps part of the program."""
        written = {k: set(v) for k, v in self.written.items()}
        rec = Recorder(written)
        env = dict(self.symbols)
        for stmt in nest.stmts:
            stmt.run(env, rec)
        if not rec.writes:
            raise _Reject("nest writes nothing")
        if need_arg_write and not any(b.name in rec.writes for b in self.args):
            raise _Reject("the last nest must write an argument")
        nest.reads, nest.writes = rec.reads, rec.writes
        todo = self.partial_todo
        if todo and todo[0].name in rec.writes and len(self.nests) > todo[3]:
            self.partial_todo = None
        self.written = written
        self.temps += self.new_temps
        self.new_temps = []
        self.nests.append(nest)

    def generate(self) -> Program:
        self.make_args()
        count = self.rng.randint(self.cfg.min_nests, max(self.cfg.min_nests, self.cfg.max_nests))
        for n in range(count):
            self.build_nest(last=n == count - 1)
        self.ensure_live_out()
        text = self.render()
        return Program(
            text=text,
            kernel=KERNEL,
            features=frozenset(self.detect()),
            seed=self.seed,
            nests=len(self.nests),
            elem=self.elem,
            outputs=tuple(b.name for b in self.args),
        )

    def ensure_live_out(self) -> None:
        """Make sure every temporary's last value flows somewhere observable."""
        unread = [t for t in self.temps if not self.nest_index_reading(t)]
        if not unread or len(self.nests) >= self.cfg.max_nests:
            return
        self.build_nest(last=True)

    # ----------------------------------------------------------------- detection

    def detect(self) -> set[str]:
        """Name the patterns the finished kernel actually contains."""
        found: set[str] = set()
        syms = set(self.symbols)
        stmts = [s for nest in self.nests for s in walk(nest.stmts)]
        loop_order: dict[str, int] = {}
        for nest in self.nests:
            self._loop_depths(nest.stmts, 0, loop_order)
        for stmt in stmts:
            if isinstance(stmt, If):
                found.add("affine_if")
            if isinstance(stmt, Apply):
                found.add("affine_apply")
            if isinstance(stmt, For):
                if stmt.iter:
                    found.add("reduction")
                if stmt.step > 1:
                    found.add("strided")
                if len(stmt.lower.exprs) > 1 or len(stmt.upper.exprs) > 1:
                    found.add("max_min_bounds")
                if stmt.lower.symbolic(syms) or stmt.upper.symbolic(syms):
                    found.add("symbolic_bounds")
                kinds = {isinstance(s, For) for s in stmt.body}
                if kinds == {True, False}:
                    found.add("imperfect")
            if isinstance(stmt, (Load, Store)):
                found |= self._access_features(stmt.access, loop_order)
        found |= self._dataflow_features()
        if any(t.alloca for t in self.temps):
            found.add("alloca")
        return found

    def _loop_depths(self, stmts: Sequence[Stmt], depth: int, out: dict[str, int]) -> None:
        for stmt in stmts:
            if isinstance(stmt, For):
                out[stmt.iv] = depth
                self._loop_depths(stmt.body, depth + 1, out)
            else:
                self._loop_depths(list(stmt.children()), depth, out)

    @staticmethod
    def _access_features(access: Access, loop_order: Mapping[str, int]) -> set[str]:
        found: set[str] = set()
        depths = []
        for expr in access.index:
            if expr.terms and (expr.const or expr.mod) and expr.div == 1:
                found.add("shifted")
            if any(abs(coef) > 1 for _, coef in expr.terms):
                found.add("strided")
            depths += [loop_order[name] for name, _ in expr.terms if name in loop_order]
        if any(a > b for a, b in itertools.pairwise(depths)):
            found.add("transposed")
        return found

    def _dataflow_features(self) -> set[str]:
        found: set[str] = set()
        kind = {b.name: b for b in self.args + self.temps}
        nests = self.nests
        for a, first in enumerate(nests):
            for name in first.writes:
                if kind[name].is_arg:
                    found.add("live_out")
                if name in first.reads and first.reads[name] & first.writes[name]:
                    found.add("in_place")
            for b in range(a + 1, len(nests)):
                later = nests[b]
                for name in first.writes:
                    if name in later.reads:
                        found.add(
                            "producer_consumer_arg"
                            if kind[name].is_arg
                            else "producer_consumer_temp"
                        )
                        if self._feeds_onward(b, set(later.writes) - {name}):
                            found.add("chain")
                    if name in later.writes:
                        found.add("waw")
                for name in first.reads:
                    if name in later.writes:
                        found.add("war")
                    if (
                        name in later.reads
                        and name not in first.writes
                        and name not in later.writes
                    ):
                        found.add("sibling")
        for buf in self.args + self.temps:
            written = set().union(*(n.writes.get(buf.name, set()) for n in nests))
            if written and len(written) < buf.cells():
                found.add("partial_init")
            firsts = [n for n in nests if buf.name in n.writes]
            if not buf.is_arg and firsts and len(firsts[0].writes[buf.name]) < buf.cells():
                found.add("partial_init")
        return found

    def _feeds_onward(self, index: int, names: set[str]) -> bool:
        return any(name in later.reads for later in self.nests[index + 1 :] for name in names)

    # ----------------------------------------------------------------- rendering

    def render(self) -> str:
        ctx = _Render(self.elem, set(self.symbols))
        lines = [
            "// Generated by affine_lsp.testing.progen "
            f"(seed {self.seed}, {len(self.nests)} nests, {self.elem}).",
            f"func.func private @printMemref{self.elem.upper()}(memref<*x{self.elem}>)",
        ]
        if self.elem != "i32":
            lines.append("func.func private @printMemrefI32(memref<*xi32>)")
        lines.append("")
        params = [f"{b.name}: {b.type}" for b in self.args]
        params += [f"{name}: index" for name in self.symbols]
        lines.append(f"func.func @{KERNEL}(" + ", ".join(params) + ") {")
        body: list[str] = []
        for temp in self.temps:
            op = "alloca" if temp.alloca else "alloc"
            body.append(f"{temp.name} = memref.{op}() : {temp.type}")
        if self.cfg.fill_temps is not None:
            body += self.render_fill(self.cfg.fill_temps)
        for nest in self.nests:
            for stmt in nest.stmts:
                body += stmt.lines(ctx)
        for temp in self.temps:
            if not temp.alloca:
                body.append(f"memref.dealloc {temp.name} : {temp.type}")
        body.append("return")
        lines += ["  " + line for line in body]
        lines.append("}")
        lines.append("")
        lines += render_main(self.args, self.symbols, self.elem, self.seed)
        return "\n".join(lines) + "\n"

    def render_fill(self, value: int) -> list[str]:
        """``scf.for`` loops storing ``value`` into every temporary (for generator self-tests)."""
        out = [
            "%fill_c0 = arith.constant 0 : index",
            "%fill_c1 = arith.constant 1 : index",
            f"%fill_n = arith.constant {self.size} : index",
        ]
        literal = f"{value}.0" if self.elem == "f32" else str(value)
        out.append(f"%fill_v = arith.constant {literal} : {self.elem}")
        for t, temp in enumerate(self.temps):
            ivs = [f"%fill{t}_{d}" for d in range(temp.rank)]
            out += _scf_nest(
                ivs,
                "%fill_c0",
                "%fill_n",
                "%fill_c1",
                [f"memref.store %fill_v, {temp.name}[{', '.join(ivs)}] : {temp.type}"],
            )
        return out


def _scf_nest(ivs: Sequence[str], lo: str, hi: str, step: str, body: list[str]) -> list[str]:
    lines = list(body)
    for iv in reversed(ivs):
        lines = [f"scf.for {iv} = {lo} to {hi} step {step} {{"] + ["  " + ln for ln in lines]
        lines.append("}")
    return lines


def render_main(
    args: Sequence[Buffer], symbols: Mapping[str, int], elem: str, seed: int
) -> list[str]:
    """The ``@main`` driver: fill arguments with integer data, call the kernel, print them."""
    size = args[0].size
    body = [
        "%c0 = arith.constant 0 : index",
        "%c1 = arith.constant 1 : index",
        f"%csize = arith.constant {size} : index",
        "%c13 = arith.constant 13 : index",
        "%half = arith.constant 6 : i32",
    ]
    names = []
    for n, buf in enumerate(args):
        name = f"%buf{n}"
        names.append(name)
        body.append(f"{name} = memref.alloc() : {buf.type}")
        ivs = [f"%x{n}_{d}" for d in range(buf.rank)]
        inner: list[str] = []
        terms = []
        for d, iv in enumerate(ivs):
            mult = 1 + (seed + 3 * n + 5 * d) % 11
            inner.append(f"%m{n}_{d} = arith.constant {mult} : index")
            inner.append(f"%p{n}_{d} = arith.muli {iv}, %m{n}_{d} : index")
            terms.append(f"%p{n}_{d}")
        acc = f"%k{n}"
        inner.append(f"{acc} = arith.constant {(seed * 7 + n * 5) % 13} : index")
        for d, term in enumerate(terms):
            inner.append(f"%s{n}_{d} = arith.addi {acc}, {term} : index")
            acc = f"%s{n}_{d}"
        inner += [
            f"%r{n} = arith.remui {acc}, %c13 : index",
            f"%w{n} = arith.index_cast %r{n} : index to i32",
            f"%z{n} = arith.subi %w{n}, %half : i32",
        ]
        value = f"%z{n}"
        if elem == "f32":
            inner.append(f"%f{n} = arith.sitofp %z{n} : i32 to f32")
            value = f"%f{n}"
        inner.append(f"memref.store {value}, {name}[{', '.join(ivs)}] : {buf.type}")
        body += _scf_nest(ivs, "%c0", "%csize", "%c1", inner)
    call_args = list(names)
    types = [b.type for b in args]
    for sym, value in symbols.items():
        body.append(f"%sym{sym[2:]} = arith.constant {value} : index")
        call_args.append(f"%sym{sym[2:]}")
        types.append("index")
    body.append(f"call @{KERNEL}({', '.join(call_args)}) : ({', '.join(types)}) -> ()")
    for n, buf in enumerate(args):
        body += _render_print(f"%buf{n}", buf, n)
    for n, buf in enumerate(args):
        body.append(f"memref.dealloc %buf{n} : {buf.type}")
    body.append("return")
    return ["func.func @main() {"] + ["  " + ln for ln in body] + ["}"]


def _render_print(name: str, buf: Buffer, n: int) -> list[str]:
    """Print ``buf``; f32 data is printed both as values and as raw bits (bit-exact check)."""
    unranked = f"memref<*x{buf.elem}>"
    out = [
        f"%u{n} = memref.cast {name} : {buf.type} to {unranked}",
        f"call @printMemref{buf.elem.upper()}(%u{n}) : ({unranked}) -> ()",
    ]
    if buf.elem == "f32":
        bits_type = buf.type.replace("xf32>", "xi32>")
        ivs = [f"%y{n}_{d}" for d in range(buf.rank)]
        index = ", ".join(ivs)
        out.append(f"%bits{n} = memref.alloc() : {bits_type}")
        out += _scf_nest(
            ivs,
            "%c0",
            "%csize",
            "%c1",
            [
                f"%e{n} = memref.load {name}[{index}] : {buf.type}",
                f"%b{n} = arith.bitcast %e{n} : f32 to i32",
                f"memref.store %b{n}, %bits{n}[{index}] : {bits_type}",
            ],
        )
        out += [
            f"%ub{n} = memref.cast %bits{n} : {bits_type} to memref<*xi32>",
            f"call @printMemrefI32(%ub{n}) : (memref<*xi32>) -> ()",
            f"memref.dealloc %bits{n} : {bits_type}",
        ]
    return out


# =========================================================================== public API


def generate(seed: int, config: GenConfig | None = None) -> Program:
    """Generate the program for ``seed`` (deterministic for a given seed and config)."""
    config = config or GenConfig()
    unknown = (set(config.weights) | set(config.require)) - set(FEATURES)
    if unknown:
        raise ValueError(f"unknown patterns: {sorted(unknown)}")
    if config.min_nests < 1 or config.max_nests < config.min_nests or config.max_depth < 1:
        raise ValueError("need 1 <= min_nests <= max_nests and max_depth >= 1")
    if not config.sizes or min(config.sizes) < 3:
        raise ValueError("buffer sizes must be at least 3")
    if not config.elem_types or set(config.elem_types) - set(_OPS):
        raise ValueError(f"element types must be among {sorted(_OPS)}")
    last: Program | None = None
    for attempt in range(200):
        sub_seed = seed if attempt == 0 else seed * 1_000_003 + attempt
        program = _Generator(sub_seed, config).generate()
        program = replace(program, seed=seed)
        if config.require <= program.features:
            return program
        last = program
    assert last is not None
    missing = sorted(config.require - last.features)
    raise ValueError(f"no program with features {missing} after 200 attempts (seed {seed})")


def generate_many(count: int, seed: int = 0, config: GenConfig | None = None) -> list[Program]:
    """``count`` programs from consecutive seeds starting at ``seed``."""
    return [generate(seed + n, config) for n in range(count)]


def _main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--require", default="", help="comma-separated features to insist on")
    parser.add_argument("--only", default="", help="comma-separated patterns to use exclusively")
    parser.add_argument("--features", action="store_true", help="print the feature list too")
    ns = parser.parse_args(argv)
    require = frozenset(x for x in ns.require.split(",") if x)
    config = (
        GenConfig.only(*ns.only.split(","), require=require)
        if ns.only
        else GenConfig(require=require)
    )
    program = generate(ns.seed, config)
    if ns.features:
        out("// features: " + ", ".join(sorted(program.features)))
    out(program.text.rstrip("\n"))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
