"""Mutations of MLIR text for fuzzing: what a user can type, and worse.

`mutate(data, rng)` applies one to three random mutations (deleted, inserted,
duplicated and swapped spans, random tokens, truncation, random bytes,
invalid UTF-8, CRLF line ends, tabs, a BOM). `pathological(kind)` builds the
inputs that stress depth and size: 3000-deep nesting, megabyte lines, maps with
tens of thousands of terms.
"""

from __future__ import annotations

import random
from collections.abc import Callable

TOKENS = [
    b"%",
    b"%x",
    b"%0",
    b"#map",
    b"!t",
    b"@f",
    b"^bb0",
    b"{",
    b"}",
    b"(",
    b")",
    b"[",
    b"]",
    b"<",
    b">",
    b",",
    b":",
    b"=",
    b"->",
    b"+",
    b"-",
    b"*",
    b"floordiv",
    b"ceildiv",
    b"mod",
    b"symbol(",
    b"affine.for",
    b"affine.if",
    b"affine.load",
    b"affine.store",
    b"affine.apply",
    b"affine.parallel",
    b"affine.yield",
    b"affine_map<",
    b"affine_set<",
    b"memref<",
    b"?x",
    b"to",
    b"step",
    b"iter_args",
    b"max",
    b"min",
    b"else",
    b"index",
    b"f32",
    b"i32",
    b"0",
    b"-1",
    b"999999999999999999999",
    b'"',
    b'"str"',
    b"//",
    b"// -----\n",
    b"\n",
    b"\t",
    b" ",
    b"func.func",
    b"return",
    b"dense<",
    b"loc(",
    b"{-#",
    b"#-}",
    b"\\",
    b"\x00",
]


def _span(rng: random.Random, data: bytes) -> tuple[int, int]:
    if not data:
        return 0, 0
    start = rng.randrange(len(data) + 1)
    return start, min(len(data), start + rng.choice([1, 2, 5, 20, 100, 1000]))


def delete_span(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    return data[:a] + data[b:]


def insert_span(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    at = rng.randrange(len(data) + 1)
    return data[:at] + data[a:b] + data[at:]


def duplicate_span(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    return data[:b] + data[a:b] * rng.choice([2, 3, 10]) + data[b:]


def swap_spans(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    c, d = _span(rng, data)
    if c < b and a < d:
        return data
    if c < a:
        a, b, c, d = c, d, a, b
    return data[:a] + data[c:d] + data[b:c] + data[a:b] + data[d:]


def random_tokens(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    tokens = b" ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 6)))
    return data[:at] + tokens + data[at:]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def random_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[at:]


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return (
        data[:at]
        + rng.choice([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88"])
        + data[at:]
    )


def crlf(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r"]))


def tabs(rng: random.Random, data: bytes) -> bytes:
    return data.replace(b"  ", b"\t")


def bom(rng: random.Random, data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    delete_span,
    insert_span,
    duplicate_span,
    swap_spans,
    random_tokens,
    random_tokens,
    truncate,
    random_bytes,
    invalid_utf8,
    crlf,
    tabs,
    bom,
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to three random mutations of `data`."""
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(MUTATIONS)(rng, data)
    return data


def pathological(kind: str) -> bytes:
    """Inputs that stress depth and size."""
    if kind == "deep_regions":
        depth = 3000
        return (
            b"func.func @deep() {\n"
            + b"affine.for %i = 0 to 10 {\n" * depth
            + b"}\n" * depth
            + b"return\n}\n"
        )
    if kind == "deep_parens":
        return b"#m = affine_map<(d0) -> (" + b"(" * 3000 + b"d0" + b")" * 3000 + b")>\n"
    if kind == "deep_negation":
        return b"#m = affine_map<(d0) -> (" + b"-" * 3000 + b"d0)>\n"
    if kind == "deep_unclosed":
        return b"func.func @f() {\n" + b"affine.if #s(%i) {\n" * 3000
    if kind == "megabyte_line":
        return b"// " + b"x" * 1_000_000 + b"\nfunc.func @f() {\n  return\n}\n"
    if kind == "megabyte_op_line":
        uses = b", ".join(b"%a" for _ in range(150_000))
        return b'func.func @f(%a: index) {\n  "d.op"(' + uses + b") : () -> ()\n  return\n}\n"
    if kind == "huge_map":
        terms = b" + ".join(b"d0" if i % 2 else b"s0" for i in range(50_000))
        return b"#m = affine_map<(d0)[s0] -> (" + terms + b")>\n"
    if kind == "huge_subscript":
        terms = b" + ".join(b"%i" for _ in range(50_000))
        return (
            b"func.func @f(%A: memref<?xf32>, %n: index) {\n  affine.for %i = 0 to %n {\n"
            b"    %v = affine.load %A[" + terms + b"] : memref<?xf32>\n  }\n  return\n}\n"
        )
    if kind == "many_functions":
        body = b"func.func @f%d(%%a: index) {\n  return\n}\n"
        return b"".join(body % i for i in range(3000))
    raise ValueError(kind)


PATHOLOGICAL_KINDS = [
    "deep_regions",
    "deep_parens",
    "deep_negation",
    "deep_unclosed",
    "megabyte_line",
    "megabyte_op_line",
    "huge_map",
    "huge_subscript",
    "many_functions",
]
