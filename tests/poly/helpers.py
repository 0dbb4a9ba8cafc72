"""Small helpers for the polyhedral tests: parse text, find ops."""

from __future__ import annotations

from affine_lsp.ir import build_module
from affine_lsp.ir.model import ModuleModel, Operation
from affine_lsp.syntax import SourceDocument


def model_of(text: str) -> ModuleModel:
    return build_module(SourceDocument(text).tree.root_node)


def ops_named(model: ModuleModel, name: str) -> list[Operation]:
    return [op for op in model.walk() if op.name == name]
