"""Seeded random view-like memref ops (subview, reinterpret_cast, cast, transpose,
expand_shape, collapse_shape) for differential testing against mlir-opt: random
source layouts (none, strided, linear maps) and result types that are right,
slightly wrong, or unrelated. Which of them MLIR accepts decides the verdicts."""

from __future__ import annotations

import random
from collections.abc import Sequence

from affine_lsp.checks.layouts import canonical_strides, saturated_add, saturated_mul

Shape = list[int | None]


def _dim(value: int | None) -> str:
    return "?" if value is None else str(value)


def _shape(shape: Shape) -> str:
    return "".join(_dim(d) + "x" for d in shape)


def _strided(strides: list[int | None], offset: int | None) -> str:
    listed = ", ".join(_dim(s) for s in strides)
    return f"strided<[{listed}]" + ("" if offset == 0 else f", offset: {_dim(offset)}") + ">"


def memref(shape: Shape, layout: str | None = None, element: str = "f32") -> str:
    return f"memref<{_shape(shape)}{element}" + (f", {layout}" if layout else "") + ">"


class Cases:
    """Generates test functions; `chunks` is the list of their texts."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.chunks: list[str] = []

    def size(self, dynamic: float = 0.2) -> int | None:
        return None if self.rng.random() < dynamic else self.rng.randint(1, 6)

    def source_layout(self, shape: Shape) -> tuple[str | None, list[int | None], int | None]:
        """(layout spelling, strides, offset) of a random source layout."""
        kind = self.rng.choice(["none", "none", "strided", "map"])
        if kind == "none":
            return None, list(canonical_strides(tuple(shape))), 0
        strides = [self.rng.choice([None, 1, 2, 3, 8, 24]) for _ in shape]
        offset = self.rng.choice([0, 0, 5, None])
        if kind == "strided":
            return _strided(strides, offset), strides, offset
        dims = ", ".join(f"d{i}" for i in range(len(shape)))
        symbols: list[str] = []
        terms: list[str] = []
        for i, stride in enumerate(strides):
            if stride is None:
                symbols.append(f"s{len(symbols)}")
                terms.append(f"d{i} * {symbols[-1]}")
            else:
                terms.append(f"d{i} * {stride}")
        if offset is None:
            symbols.append(f"s{len(symbols)}")
            terms.append(symbols[-1])
        elif offset:
            terms.append(str(offset))
        header = f"({dims})" + (f"[{', '.join(symbols)}]" if symbols else "")
        return f"affine_map<{header} -> ({' + '.join(terms)})>", strides, offset

    def perturbed(self, strides: list[int | None], offset: int | None) -> str | None:
        """A result layout: the computed one, a slightly wrong one, or none."""
        choice = self.rng.random()
        if choice < 0.35:
            return _strided(strides, offset)
        if choice < 0.7 and strides:
            changed = list(strides)
            index = self.rng.randrange(len(changed))
            changed[index] = self.rng.choice([None, 1, 7, (changed[index] or 2) * 2])
            return _strided(changed, offset if self.rng.random() < 0.5 else 3)
        return None

    def add(self, signature: str, body: str) -> None:
        self.chunks.append(f"func.func @case({signature}) {{\n  {body}\n  return\n}}\n")

    def subview(self) -> None:
        rank = self.rng.randint(1, 3)
        shape = [self.size() for _ in range(rank)]
        layout, strides, offset = self.source_layout(shape)
        offsets, sizes, steps = [], [], []
        result_offset = offset
        result_strides = []
        for dim, stride in zip(shape, strides, strict=True):
            start = self.rng.choice([0, 0, 1, None])
            size = self.rng.choice([1, 1, 2, None]) if dim is None or dim > 1 else 1
            step = self.rng.choice([1, 1, 2])
            offsets.append(start)
            sizes.append(size)
            steps.append(step)
            result_offset = saturated_add(result_offset, saturated_mul(start, stride))
            result_strides.append(saturated_mul(stride, step))
        result_shape = list(sizes)
        result_layout = self.perturbed(result_strides, result_offset)
        if self.rng.random() < 0.3 and 1 in result_shape:  # drop a unit dimension
            drop = result_shape.index(1)
            del result_shape[drop]
            if result_layout is not None and result_layout.startswith("strided"):
                kept = [s for i, s in enumerate(result_strides) if i != drop]
                result_layout = _strided(kept, result_offset)

        def listed(values: Sequence[int | None]) -> str:
            return "[" + ", ".join("%i" if v is None else str(v) for v in values) + "]"

        source = memref(shape, layout)
        result = memref(result_shape, result_layout)
        self.add(
            f"%m: {source}, %i: index",
            f"%r = memref.subview %m{listed(offsets)}{listed(sizes)}{listed(steps)} : "
            f"{source} to {result}",
        )

    def cast(self) -> None:
        rank = self.rng.randint(1, 3)
        shape = [self.size() for _ in range(rank)]
        layout, strides, offset = self.source_layout(shape)
        target = [d if self.rng.random() < 0.7 else self.size(0.5) for d in shape]
        target_layout = self.perturbed(strides, offset) if layout else None
        if self.rng.random() < 0.15:
            target_layout = None
        source = memref(shape, layout)
        result = memref(target, target_layout)
        self.add(f"%m: {source}", f"%r = memref.cast %m : {source} to {result}")

    def reinterpret_cast(self) -> None:
        rank = self.rng.randint(1, 3)
        sizes = [self.rng.choice([1, 4, None]) for _ in range(rank)]
        strides = [self.rng.choice([1, 4, None]) for _ in range(rank)]
        offset = self.rng.choice([0, 2, None])
        shape = [s if self.rng.random() < 0.8 else self.size(0.3) for s in sizes]
        layout = self.perturbed(strides, offset)

        def listed(values: Sequence[int | None]) -> str:
            return "[" + ", ".join("%i" if v is None else str(v) for v in values) + "]"

        self.add(
            "%m: memref<*xf32>, %i: index",
            f"%r = memref.reinterpret_cast %m to offset: {listed([offset])}, sizes: "
            f"{listed(sizes)}, strides: {listed(strides)} : memref<*xf32> to "
            f"{memref(shape, layout)}",
        )

    def transpose(self) -> None:
        shape = [self.size(), self.size()]
        layout, strides, offset = self.source_layout(shape)
        swapped = self.rng.random() < 0.8
        order = [1, 0] if swapped else [0, 1]
        result_shape = [shape[i] for i in order]
        result_layout = self.perturbed([strides[i] for i in order], offset)
        source = memref(shape, layout)
        permutation = "(d0, d1) -> (d1, d0)" if swapped else "(d0, d1) -> (d0, d1)"
        self.add(
            f"%m: {source}",
            f"%r = memref.transpose %m {permutation} : {source} to "
            f"{memref(result_shape, result_layout)}",
        )

    def collapse_and_expand(self) -> None:
        shape = [self.size(0.2) for _ in range(3)]
        layout, strides, offset = self.source_layout(shape)
        source = memref(shape, layout)
        collapsed: Shape = [
            None if shape[0] is None or shape[1] is None else shape[0] * shape[1],
            shape[2],
        ]
        if self.rng.random() < 0.2 and collapsed[0] is not None:
            collapsed[0] += 1
        result_layout = None if layout is None else self.perturbed([strides[1], strides[2]], offset)
        result = memref(collapsed, result_layout)
        self.add(
            f"%m: {source}",
            f"%r = memref.collapse_shape %m [[0, 1], [2]] : {source} into {result}",
        )
        inner = self.rng.choice([2, 3])
        expanded: Shape = [2, inner, shape[2]]
        base: Shape = [2 * inner, shape[2]]
        base_layout, base_strides, base_offset = self.source_layout(base)
        outer_stride = base_strides[0]
        wanted = [
            None if outer_stride is None else outer_stride * inner,
            base_strides[0],
            base_strides[1],
        ]
        expanded_layout = None if base_layout is None else self.perturbed(wanted, base_offset)
        output = ", ".join("%i" if d is None else str(d) for d in expanded)
        source = memref(base, base_layout)
        self.add(
            f"%m: {source}, %i: index",
            f"%r = memref.expand_shape %m [[0, 1], [2]] output_shape [{output}] : {source} "
            f"into {memref(expanded, expanded_layout)}",
        )


def generate(seed: int, count: int) -> list[str]:
    cases = Cases(seed)
    makers = [
        cases.subview,
        cases.subview,
        cases.cast,
        cases.reinterpret_cast,
        cases.transpose,
        cases.collapse_and_expand,
    ]
    while len(cases.chunks) < count:
        cases.rng.choice(makers)()
    return cases.chunks
