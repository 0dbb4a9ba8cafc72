"""The kinds of isl's AST nodes and expressions, by name (islpy's type stubs give
`get_type()` as an int and cannot name the members `for_` and `if_`)."""

from __future__ import annotations

from typing import Any

import islpy as isl


def _member(enum: Any, name: str) -> Any:
    return getattr(enum, name)


FOR = _member(isl.ast_node_type, "for_")
IF = _member(isl.ast_node_type, "if_")
BLOCK = _member(isl.ast_node_type, "block")
USER = _member(isl.ast_node_type, "user")
MARK = _member(isl.ast_node_type, "mark")

EXPR_OP = _member(isl.ast_expr_type, "op")
EXPR_ID = _member(isl.ast_expr_type, "id")
EXPR_INT = _member(isl.ast_expr_type, "int")


def op(name: str) -> Any:
    """An operator of isl's AST expressions (`add`, `fdiv_q`, `and_`, ...)."""
    return _member(isl.ast_expr_op_type, name)


def children(node: isl.AstNode) -> list[isl.AstNode]:
    """The nodes of a block, in order."""
    found = node.block_get_children()
    return [found.get_at(k) for k in range(found.n_ast_node())]


def called(node: isl.AstNode) -> str:
    """The name of the statement a user node calls."""
    return str(node.user_get_expr().op_get_arg(0).get_id().get_name())
