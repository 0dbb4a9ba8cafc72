"""The rule modules. Importing this package registers every rule and code."""

from affine_lsp.checks.rules import (  # noqa: F401  (imported for their registrations)
    aliases,
    arity,
    constants,
    dims_symbols,
    legacy,
    lint,
    maps,
    memref,
    memref_alloc,
    memref_atomic,
    memref_dma,
    memref_globals,
    memref_reshape,
    memref_types,
    memref_views,
    ssa,
    structure,
    type_kinds,
    types,
    vector_transfer,
)
from affine_lsp.checks.rules.base import (
    EVERY_OP_RULES,
    GENERIC_OP_RULES,
    ITEM_RULES,
    MODULE_RULES,
    OP_RULES,
)

__all__ = ["EVERY_OP_RULES", "GENERIC_OP_RULES", "ITEM_RULES", "MODULE_RULES", "OP_RULES"]
