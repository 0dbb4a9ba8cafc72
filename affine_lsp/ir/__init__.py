"""The semantic model built from syntax trees: operations, values, regions,
affine maps and sets as expression trees."""

from affine_lsp.ir.build import build_alias, build_module, build_operation_item
from affine_lsp.ir.model import ModuleModel, Operation, TopLevelItem, Use, Value

__all__ = [
    "ModuleModel",
    "Operation",
    "TopLevelItem",
    "Use",
    "Value",
    "build_alias",
    "build_module",
    "build_operation_item",
]
