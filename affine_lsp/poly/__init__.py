"""The polyhedral core (islpy): iteration domains, access relations, dependences.

Every question runs with a bounded amount of isl work (`Budget`; every budget
is defined in `budgets`) and answers `Unknown(reason)` instead of failing or
hanging. What other layers use (nothing else of this package):

Hover data for the language server (`describe`):
  describe_loop(op, model, budget=None)       -> LoopDescription | Unknown
  describe_access(op, model, budget=None)     -> AccessDescription | Unknown
  describe_condition(op, model, budget=None)  -> ConditionDescription | Unknown
Dependences (`dependence`):
  dependences(first, second, model, budget=None) -> list[Dependence] | Unknown
Pictures (`space`, `points`): iteration_space, IterationSpace, LOOPS, Point, chain_of
Transformed nests in pictures (`transformed`): group_tiles, mark_moved
Budgets (`budgets`, also as a module): Budget, PictureLimits, deadline_after,
  seconds_left, past, time_limits_enabled, INLAY_TRIP_COUNT_SECONDS
The machinery transformations prove their rewrites with:
  isl sessions (`session`): IslSession, Unknown, PolyError, NotAffine, BudgetExceeded
  windows of a block as statements (`program`): Window, Statement, window_ops,
    is_under, is_pure, is_function_argument, array_name
  exact dataflow comparison (`equivalence`): compare, Mismatch, original_flow,
    keeps_every_dependence (the cheap sufficient condition for reorderings), on isl's dataflow
    checked exactly (`dataflow`): Dataflow, WrongDataflow, last_images, answers_kept
  iteration domains (`domain`): Domain, DomainBuilder, Level, enclosing_levels
  SSA values as isl terms (`exprs`): Scope, Term, minmax, integer_constant
  isl affine functions as text (`forms`): AffineForm, form_of_aff, fraction,
    render_math, render_isl, render_mlir
  isl names (`names`): exact_to_source, pretty_identifier
  isl helpers (`isl_util`): pieces, single_aff, maps_of, union_of_maps, union_of_sets
"""

from affine_lsp.poly import budgets
from affine_lsp.poly.budgets import (
    INLAY_TRIP_COUNT_SECONDS,
    Budget,
    PictureLimits,
    deadline_after,
    past,
    seconds_left,
    time_limits_enabled,
)
from affine_lsp.poly.dataflow import answers_kept
from affine_lsp.poly.dependence import Dependence, dependences
from affine_lsp.poly.describe import (
    AccessDescription,
    ConditionDescription,
    LoopDescription,
    describe_access,
    describe_condition,
    describe_loop,
)
from affine_lsp.poly.domain import Domain, DomainBuilder, Level, enclosing_levels
from affine_lsp.poly.equivalence import (
    Mismatch,
    compare,
    keeps_every_dependence,
    original_flow,
)
from affine_lsp.poly.exprs import Scope, Term, integer_constant, minmax
from affine_lsp.poly.forms import (
    AffineForm,
    form_of_aff,
    fraction,
    render_isl,
    render_math,
    render_mlir,
)
from affine_lsp.poly.isl_util import maps_of, pieces, single_aff, union_of_maps, union_of_sets
from affine_lsp.poly.names import exact_to_source, pretty_identifier
from affine_lsp.poly.points import Point
from affine_lsp.poly.program import (
    Statement,
    Window,
    array_name,
    is_function_argument,
    is_pure,
    is_under,
    window_ops,
)
from affine_lsp.poly.session import BudgetExceeded, IslSession, NotAffine, PolyError, Unknown
from affine_lsp.poly.space import LOOPS, IterationSpace, chain_of, iteration_space
from affine_lsp.poly.transformed import group_tiles, mark_moved

__all__ = [
    "INLAY_TRIP_COUNT_SECONDS",
    "LOOPS",
    "AccessDescription",
    "AffineForm",
    "Budget",
    "BudgetExceeded",
    "ConditionDescription",
    "Dependence",
    "Domain",
    "DomainBuilder",
    "IslSession",
    "IterationSpace",
    "Level",
    "LoopDescription",
    "Mismatch",
    "NotAffine",
    "PictureLimits",
    "Point",
    "PolyError",
    "Scope",
    "Statement",
    "Term",
    "Unknown",
    "Window",
    "array_name",
    "budgets",
    "chain_of",
    "answers_kept",
    "compare",
    "deadline_after",
    "dependences",
    "describe_access",
    "describe_condition",
    "describe_loop",
    "enclosing_levels",
    "exact_to_source",
    "form_of_aff",
    "fraction",
    "group_tiles",
    "integer_constant",
    "is_function_argument",
    "is_pure",
    "is_under",
    "iteration_space",
    "keeps_every_dependence",
    "maps_of",
    "original_flow",
    "mark_moved",
    "minmax",
    "past",
    "pieces",
    "pretty_identifier",
    "render_isl",
    "render_math",
    "render_mlir",
    "seconds_left",
    "single_aff",
    "time_limits_enabled",
    "union_of_maps",
    "union_of_sets",
    "window_ops",
]
