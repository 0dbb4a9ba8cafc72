"""Types of the C extension built from grammar/src (see setup.py)."""

from typing import Any

def language() -> Any:
    """The tree-sitter Language for MLIR, as a capsule for `tree_sitter.Language`."""

class Span:
    """A byte range [start_byte, end_byte) of a document (immutable; equal and
    hashed by value)."""

    @property
    def start_byte(self) -> int: ...
    @property
    def end_byte(self) -> int: ...
    def __init__(self, start_byte: int, end_byte: int) -> None: ...
    @classmethod
    def of(cls, node: Any) -> Span:
        """The span of a syntax node."""
    @classmethod
    def between(cls, first: Any, last: Any) -> Span:
        """From the start of `first` to the end of `last`."""
    def contains(self, offset: int) -> bool:
        """Whether start_byte <= offset <= end_byte."""
    def overlaps(self, start: int, end: int) -> bool:
        """Whether the span overlaps [start, end)."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
