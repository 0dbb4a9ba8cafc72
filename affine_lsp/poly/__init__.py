"""The polyhedral core (islpy): iteration domains, access relations, dependences.

Hover data for the language server:
  describe_loop(op, model, budget=None)       -> LoopDescription | Unknown
  describe_access(op, model, budget=None)     -> AccessDescription | Unknown
  describe_condition(op, model, budget=None)  -> ConditionDescription | Unknown

Dependences:
  dependences(first, second, model, budget=None) -> list[Dependence] | Unknown

Every question runs with a bounded amount of isl work (`Budget`; every budget
is defined in `budgets`) and answers
`Unknown(reason)` instead of failing or hanging. `program.Window` and
`equivalence.compare` are the machinery fusion proves its rewrites with.
"""

from affine_lsp.poly import budgets
from affine_lsp.poly.budgets import Budget
from affine_lsp.poly.dependence import Dependence, dependences
from affine_lsp.poly.describe import (
    AccessDescription,
    ConditionDescription,
    LoopDescription,
    describe_access,
    describe_condition,
    describe_loop,
)
from affine_lsp.poly.session import Unknown

__all__ = [
    "AccessDescription",
    "Budget",
    "budgets",
    "ConditionDescription",
    "Dependence",
    "LoopDescription",
    "Unknown",
    "describe_access",
    "describe_condition",
    "dependences",
    "describe_loop",
]
