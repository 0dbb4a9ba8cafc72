"""A seeded generator of two stencil sweeps to fuse, runnable with mlir-runner.

Each program has a `@kernel` holding two sibling nests of equal depth (1 to 3),
often inside a time loop: the first sweep reads neighbours of one array and writes
another, the second reads neighbours of what the first wrote and writes the first
array back (a jacobi step) or a third. Neighbour offsets, bounds that differ by a
constant between the sweeps, a symbolic upper bound (`%n`), a sweep that runs over
an array backwards (a dependence at unbounded distance), an update in place and an
iv used outside subscripts (`arith.index_cast`) vary with the seed, so that fusion
is legal iteration for iteration, only with a shift or an alignment, or not at all.
Data are small i32 values filled and printed by `@main` (as `progen` does).

``python -m affine_lsp.testing.sweepgen --seed 3`` prints one program.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from dataclasses import dataclass

from affine_lsp.testing.progen import Buffer, render_main

SIZES = {1: 40, 2: 16, 3: 10}
"""Extent of every dimension, per depth."""
SYMBOL = "%n"
ELEM = "i32"


@dataclass(frozen=True)
class Sweeps:
    """A generated program and what its sweeps have."""

    text: str
    seed: int
    depth: int
    features: frozenset[str]


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.depth = self.rng.choice((1, 2, 2, 3))
        self.size = SIZES[self.depth]
        self.features: set[str] = set()
        self.counter = 0

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    @property
    def type(self) -> str:
        return "memref<" + "x".join([str(self.size)] * self.depth) + f"x{ELEM}>"

    def bounds(self, symbolic: bool) -> list[tuple[str, str]]:
        """Per loop (lower, upper): at least 2 from either edge (offsets reach 2)."""
        found = []
        for level in range(self.depth):
            lower = str(self.rng.choice((2, 2, 3)))
            if symbolic and level == 0:
                upper = SYMBOL
            else:
                upper = str(self.size - self.rng.choice((2, 2, 3)))
            found.append((lower, upper))
        return found

    def offsets(self) -> list[int]:
        return [self.rng.choice((-1, -1, 0, 0, 1, 1, 2, -2)) for _ in range(self.depth)]

    def subscript(self, ivs: list[str], offsets: list[int], backwards: bool = False) -> str:
        parts = []
        for level, (iv, offset) in enumerate(zip(ivs, offsets, strict=True)):
            if backwards and level == 0:
                parts.append(f"{self.size - 1} - {iv}")
            elif offset:
                parts.append(f"{iv} {'+' if offset > 0 else '-'} {abs(offset)}")
            else:
                parts.append(iv)
        return ", ".join(parts)

    def sweep(
        self,
        ivs: list[str],
        bounds: list[tuple[str, str]],
        reads: list[tuple[str, list[int], bool]],
        write: tuple[str, list[int]],
        index_use: bool,
    ) -> list[str]:
        """One nest: loads of `reads` summed, plus an iv's value, stored to `write`."""
        lines = []
        indent = "  "
        for iv, (lower, upper) in zip(ivs, bounds, strict=True):
            lines.append(f"{indent}affine.for {iv} = {lower} to {upper} {{")
            indent += "  "
        total = None
        for memref, offsets, backwards in reads:
            value = self.fresh("v")
            subscript = self.subscript(ivs, offsets, backwards)
            lines.append(f"{indent}{value} = affine.load {memref}[{subscript}] : {self.type}")
            if total is None:
                total = value
            else:
                combined = self.fresh("s")
                op = self.rng.choice(("addi", "addi", "subi", "maxsi"))
                lines.append(f"{indent}{combined} = arith.{op} {total}, {value} : {ELEM}")
                total = combined
        if index_use:
            cast = self.fresh("x")
            lines.append(f"{indent}{cast} = arith.index_cast {ivs[-1]} : index to {ELEM}")
            combined = self.fresh("s")
            lines.append(f"{indent}{combined} = arith.addi {total}, {cast} : {ELEM}")
            total = combined
        memref, offsets = write
        lines.append(
            f"{indent}affine.store {total}, {memref}[{self.subscript(ivs, offsets)}] : {self.type}"
        )
        for _ in ivs:
            indent = indent[:-2]
            lines.append(f"{indent}}}")
        return lines

    def generate(self) -> Sweeps:
        rng = self.rng
        symbolic = rng.random() < 0.2
        timed = rng.random() < 0.6
        third = rng.random() < 0.3  # the second sweep writes a third array
        backwards = rng.random() < 0.1
        in_place = rng.random() < 0.15  # the first sweep reads what it writes
        index_use = rng.random() < 0.2
        same_names = rng.random() < 0.5
        for name, present in (
            ("symbolic", symbolic),
            ("time_loop", timed),
            ("third_array", third),
            ("backwards", backwards),
            ("in_place", in_place),
            ("index_use", index_use),
        ):
            if present:
                self.features.add(name)
        names = ["%i", "%j", "%k"][: self.depth]
        second_names = names if same_names else [f"{iv}2" for iv in names]
        first_bounds = self.bounds(symbolic)
        second_bounds = first_bounds if rng.random() < 0.5 else self.bounds(symbolic)
        if second_bounds != first_bounds:
            self.features.add("bounds_differ")
        source = "%B" if in_place else "%A"
        first_reads = [("%A", [0] * self.depth, False)] + [
            (source if k == 0 else "%A", self.offsets(), False)
            for k in range(rng.choice((1, 2, 3)))
        ]
        second_reads = [("%B", [0] * self.depth, False)] + [
            ("%B", self.offsets(), backwards and k == 0) for k in range(rng.choice((1, 2, 3)))
        ]
        if rng.random() < 0.3:
            second_reads.append(("%A", self.offsets(), False))
        write_offsets = [0] * self.depth
        if rng.random() < 0.2:
            write_offsets = [rng.choice((0, 1, -1)) for _ in range(self.depth)]
            self.features.add("shifted_write")
        body = self.sweep(names, first_bounds, first_reads, ("%B", write_offsets), False)
        body += self.sweep(
            second_names,
            second_bounds,
            second_reads,
            ("%C" if third else "%A", [0] * self.depth),
            index_use,
        )
        if timed:
            steps = rng.choice((2, 3))
            body = [f"  affine.for %t = 0 to {steps} {{"] + ["  " + ln for ln in body] + ["  }"]
        arrays = ["%A", "%B", "%C"]
        arguments = ", ".join(f"{a}: {self.type}" for a in arrays)
        lines = [
            f"// Generated by affine_lsp.testing.sweepgen (seed {self.seed}).",
            "func.func private @printMemrefI32(memref<*xi32>)",
            "",
            f"func.func @kernel({arguments}, {SYMBOL}: index) {{",
            *body,
            "  return",
            "}",
            "",
        ]
        buffers = [Buffer(a, self.depth, self.size, ELEM, True) for a in arrays]
        symbol_value = self.size - 2
        lines += render_main(buffers, {"%n0": symbol_value}, ELEM, self.seed)
        return Sweeps("\n".join(lines) + "\n", self.seed, self.depth, frozenset(self.features))


def generate(seed: int) -> Sweeps:
    """The program for `seed` (deterministic; every access stays in bounds: bounds keep
    2 from either edge, the symbol's value is the extent less 2)."""
    return _Generator(seed).generate()


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args(argv)
    sweeps = generate(ns.seed)
    print(f"// features: {', '.join(sorted(sweeps.features))}")
    print(sweeps.text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
