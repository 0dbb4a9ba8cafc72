"""Types of the C extension built from grammar/src (see setup.py)."""

from typing import Any

def language() -> Any:
    """The tree-sitter Language for MLIR, as a capsule for `tree_sitter.Language`."""
