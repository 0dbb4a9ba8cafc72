"""Seeded random loop nests full of dependences, for checking pictures against the
brute-force oracle: 1 to 3 loops (constant, triangular or stepped bounds), reads and
writes of two small arrays with random affine subscripts, sometimes under an
affine.if, sometimes between the loops."""

from __future__ import annotations

import random

SIZE = 24


def _subscript(rng: random.Random, ivs: list[str]) -> str:
    terms = []
    for iv in ivs:
        coefficient = rng.choice([0, 0, 1, 1, 1, -1, 2])
        if coefficient == 1:
            terms.append(iv)
        elif coefficient:
            terms.append(f"{iv} * {coefficient}")
    offset = rng.randint(0, 6)
    return " + ".join(terms + [str(offset)]) if terms else str(offset)


def _access(rng: random.Random, ivs: list[str], indent: str, counter: list[int]) -> list[str]:
    array = rng.choice(["%A", "%B"])
    index = _subscript(rng, ivs)
    if array == "%A":
        subscript, kind = f"[{index}]", "memref<64xf32>"
    else:
        subscript, kind = f"[{index}, {_subscript(rng, ivs)}]", "memref<64x64xf32>"
    counter[0] += 1
    if rng.random() < 0.5:
        return [f"{indent}%v{counter[0]} = affine.load {array}{subscript} : {kind}"]
    return [f"{indent}affine.store %x, {array}{subscript} : {kind}"]


def random_nest(seed: int) -> str:
    rng = random.Random(seed)
    depth = rng.randint(1, 3)
    ivs = [f"%i{d}" for d in range(depth)]
    lines = ["func.func @f(%A: memref<64xf32>, %B: memref<64x64xf32>, %x: f32) {"]
    counter = [0]
    for d, iv in enumerate(ivs):
        indent = "  " * (d + 1)
        if d and rng.random() < 0.3:
            upper = f"affine_map<(d0) -> (d0 + 1)>({ivs[d - 1]})"
        else:
            upper = str(rng.randint(2, 5))
        step = " step 2" if rng.random() < 0.15 else ""
        lines.append(f"{indent}affine.for {iv} = 0 to {upper}{step} {{")
        if d < depth - 1 and rng.random() < 0.25:
            lines += _access(rng, ivs[: d + 1], indent + "  ", counter)
    inner = "  " * (depth + 1)
    body: list[str] = []
    for _ in range(rng.randint(2, 4)):
        body += _access(rng, ivs, inner, counter)
    if rng.random() < 0.3:
        condition = f"affine_set<(d0) : (d0 - {rng.randint(0, 2)} >= 0)>({ivs[-1]})"
        guarded = [f"  {line}" for line in _access(rng, ivs, inner, counter)]
        body += [f"{inner}affine.if {condition} {{", *guarded, f"{inner}}}"]
    lines += body
    for d in reversed(range(depth)):
        lines.append("  " * (d + 1) + "}")
    lines += ["  return", "}"]
    return "\n".join(lines) + "\n"
