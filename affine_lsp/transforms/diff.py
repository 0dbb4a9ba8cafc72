"""The smallest line-based edits that turn one text into another."""

from __future__ import annotations

import difflib

from affine_lsp.checks import TextEdit
from affine_lsp.syntax import Span, decode


def minimal_edits(old: bytes, new: bytes) -> list[TextEdit]:
    """Edits replacing only the lines that differ (byte spans of `old`)."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        text = decode(b"".join(new_lines[j1:j2]))
        edits.append(TextEdit(Span(starts[i1], starts[i2]), text))
    return edits
