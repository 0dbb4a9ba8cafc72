"""Text a client may send that is not plain Unicode: a lone surrogate (JSON `"\\ud800"`)
is kept in the document (`syntax.encode`), and the refactorings keep it in what they
write instead of failing to decode the lines they copy."""

from __future__ import annotations

from affine_lsp.ide.code_actions import prepare_fusion, prepare_loop_transforms
from affine_lsp.syntax import decode
from affine_lsp.transforms import apply_edits, minimal_edits
from affine_lsp.transforms.loops import LoopOptions
from tests.ide.helpers import analysed, offset_of

LONE = "\ud800"

TWO_NESTS = f"""func.func @g(%A: memref<8xf32>, %B: memref<8xf32>) {{
  affine.for %i = 0 to 8 {{
    // before {LONE}
    %x = affine.load %A[%i] : memref<8xf32>  // after {LONE}
    affine.store %x, %B[%i] : memref<8xf32>
  }}
  affine.for %j = 0 to 8 {{
    %y = affine.load %B[%j] : memref<8xf32>  // {LONE}
    affine.store %y, %A[%j] : memref<8xf32>
  }}
  return
}}
"""


def _applied(analysis, edits) -> str:
    return decode(apply_edits(analysis.document.source, edits))


def test_loop_transformations_and_fusion_keep_a_lone_surrogate():
    analysis = analysed(TWO_NESTS)
    assert analysis.diagnostics() == []
    at = offset_of(analysis, "affine.for %i")
    actions = prepare_loop_transforms(analysis, at, at, LoopOptions(tile_sizes=(4,)))()
    actions += prepare_fusion(analysis, at, at, 0.3)()
    enabled = [a for a in actions if a.disabled_reason is None]
    assert {"Tile 4", "Parallelize %i", "Unroll %i fully"} <= {a.title for a in enabled}
    assert any(a.title.startswith("Fuse") for a in enabled)
    for action in enabled:
        edits = action.resolve()
        assert action.disabled_reason is None and edits, action.title
        after = _applied(analysis, edits)
        assert LONE in after and "\ufffd" not in after, action.title
        assert not analysed(after).diagnostics(), action.title


def test_minimal_edits_of_bytes_that_are_not_utf8_do_not_fail():
    """Bytes from a file need not be UTF-8 (MLIR reads comments as bytes): where a
    changed line holds such bytes, the edit carries U+FFFD for them."""
    edits = minimal_edits(b"a\n// \xdd\nb\n", b"a\n// \xdd!\nb\n")
    assert [(e.span.start_byte, e.span.end_byte, e.new_text) for e in edits] == [
        (2, 7, "// \ufffd!\n")
    ]
