"""Helpers for the fusion tests: run a pair fusion, read loop structures."""

from __future__ import annotations

import re

from affine_lsp.ir import build_module
from affine_lsp.ir.model import AffineAccessOp, AffineForOp, FuncOp, ModuleModel, Operation
from affine_lsp.poly import LoopDescription, describe_loop
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import PRODUCER_CONSUMER, FusionOptions, PairFusion
from affine_lsp.transforms.fusion.nests import functions, loops_in


def model_of(text: str | bytes) -> ModuleModel:
    return build_module(SourceDocument(text).tree.root_node)


def function_named(model: ModuleModel, name: str) -> FuncOp:
    return next(f for f in functions(model) if f.symbol == name)


def pair(
    text: str,
    name: str,
    index: int = 0,
    mode: str = PRODUCER_CONSUMER,
    options: FusionOptions | None = None,
) -> PairFusion:
    """The fusion of the `index`-th top-level nest of `@name` with the next one."""
    data = text.encode()
    model = model_of(data)
    function = function_named(model, name)
    assert function.body is not None and function.body.entry is not None
    loops = loops_in(function.body.entry)
    return PairFusion(data, model, function, loops[index], loops[index + 1], mode, options)


def structure(text: str | bytes, name: str) -> list:
    """The loop tree of `@name`: ["for N" (trip count), [children...]] and access ops
    as "load"/"store" with their memref type; other ops are left out."""
    model = model_of(text)
    function = function_named(model, name)

    def describe(op: Operation) -> object:
        if isinstance(op, AffineForOp):
            loop = describe_loop(op, model)
            trip = loop.trip_count if isinstance(loop, LoopDescription) else "?"
            body = op.body.entry.operations if op.body and op.body.entry else []
            return [f"for {trip}", [d for d in map(describe, body) if d is not None]]
        if isinstance(op, AffineAccessOp):
            kind = "store" if op.is_write else "load"
            return f"{kind} {op.memref_type}"
        return None

    assert function.body is not None and function.body.entry is not None
    return [d for d in map(describe, function.body.entry.operations) if d is not None]


def function_text(text: str | bytes, name: str) -> str:
    source = text.decode() if isinstance(text, bytes) else text
    start = source.index(f"func.func {name}(")
    match = re.compile(r"^\}", re.MULTILINE).search(source, start)
    end = match.end() if match else len(source)
    return source[start:end]
