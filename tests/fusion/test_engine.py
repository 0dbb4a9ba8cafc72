"""Fusion of a pair of nests: legality, depths, slices, private buffers, messages."""

from __future__ import annotations

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.poly import Budget
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import SIBLING, FusionOptions
from tests.corpus_data import require_shared, seed_examples
from tests.cost import count_calls
from tests.fusion.helpers import function_text, pair, structure


def _verifies(text: bytes) -> bool:
    return not [d for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR]


def seed_program() -> str:
    require_shared()
    example = next(e for e in seed_examples() if e.label == "affine-loop-fusion-tutorial.txt:46")
    return example.text


def test_seed_example_fuses_at_the_depth_without_recomputation():
    fusion = pair(seed_program(), "@main")
    best = fusion.best()
    assert best is not None and best.depth == 2 and best.extra == 0.0
    assert not best.producer_kept and best.new_text is not None and _verifies(best.new_text)
    assert structure(best.new_text, "@main") == [
        [
            "for 8",
            [
                [
                    "for 128",
                    [
                        [
                            "for 512",
                            [
                                [
                                    "for 384",
                                    [
                                        "load memref<8x128x384xf32>",
                                        "load memref<8x384x512xf32>",
                                        "load memref<8x128x512xf32>",
                                        "store memref<8x128x512xf32>",
                                    ],
                                ]
                            ],
                        ],
                        [
                            "for 64",
                            [
                                [
                                    "for 512",
                                    [
                                        "load memref<8x128x512xf32>",
                                        "load memref<8x512x64xf32>",
                                        "load memref<8x128x64xf32>",
                                        "store memref<8x128x64xf32>",
                                    ],
                                ]
                            ],
                        ],
                    ],
                ]
            ],
        ]
    ]


def test_seed_example_in_place_producer_is_never_recomputed():
    fusion = pair(seed_program(), "@main")
    assert [fusion.candidate(d).legal for d in fusion.depths()] == [True, True, False, False]
    reason = fusion.candidate(3).reason or ""
    assert "updates %arg2 in place" in reason


WAR = """
func.func @war(%a: memref<10xf32>, %b: memref<10xf32>) {
  affine.for %i = 0 to 9 {
    %v = affine.load %a[%i] : memref<10xf32>
    affine.store %v, %b[%i] : memref<10xf32>
  }
  affine.for %i = 0 to 9 {
    %v = affine.load %b[%i] : memref<10xf32>
    affine.store %v, %a[%i + 1] : memref<10xf32>
  }
  return
}
"""


# No shift helps: the second nest overwrites %a backwards.
REVERSED_WAR = WAR.replace("%a[%i + 1]", "%a[8 - %i]")


def test_a_write_moved_before_a_read_is_named():
    candidate = pair(WAR, "@war").candidate(1)
    assert not candidate.legal
    assert candidate.reason == (
        "iteration i of the second nest writes %a[i + 1], which iteration i + 1 of the "
        "first nest reads"
    )


SHIFTED = """
func.func @shifted(%out: memref<9x9xf32>) {
  %a = memref.alloc() : memref<10x10xf32>
  %seven = arith.constant 7.0 : f32
  affine.for %i0 = 0 to 9 {
    affine.for %i1 = 0 to 9 {
      affine.store %seven, %a[%i0 + 1, %i1 + 1] : memref<10x10xf32>
    }
  }
  affine.for %i2 = 1 to 10 {
    affine.for %i3 = 1 to 10 {
      %v = affine.load %a[%i2, %i3] : memref<10x10xf32>
      affine.store %v, %out[%i2 - 1, %i3 - 1] : memref<9x9xf32>
    }
  }
  memref.dealloc %a : memref<10x10xf32>
  return
}
"""


def test_shifted_slices_and_a_private_buffer():
    best = pair(SHIFTED, "@shifted").best()
    assert best is not None and best.depth == 2 and best.extra == 0.0
    assert best.new_text is not None and _verifies(best.new_text)
    fused = function_text(best.new_text, "@shifted")
    assert "%a = memref.alloc() : memref<1x1xf32>" in fused
    assert "affine.store %seven, %a[0, 0] : memref<1x1xf32>" in fused
    assert "%v = affine.load %a[0, 0] : memref<1x1xf32>" in fused
    assert "memref.dealloc %a : memref<1x1xf32>" in fused
    assert "affine.apply affine_map<(d0) -> (d0 - 1)>(%i2)" in fused


LIVE_OUT = """
func.func @live(%in: memref<10xf32>, %out: memref<10xf32>, %res: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %v = affine.load %in[%i] : memref<10xf32>
    affine.store %v, %out[%i] : memref<10xf32>
  }
  affine.for %j = 0 to 5 {
    %v = affine.load %out[%j] : memref<10xf32>
    affine.store %v, %res[%j] : memref<10xf32>
  }
  return
}
"""


def test_function_argument_outputs_are_never_dropped():
    fusion = pair(LIVE_OUT, "@live")
    candidate = fusion.candidate(1)
    # Removing the first nest would leave %out[5..9] unwritten: only a copy that keeps
    # the first nest is legal, and it recomputes.
    assert candidate.legal and candidate.producer_kept and (candidate.extra or 0) > 0
    assert fusion.best() is None


WAW = """
func.func @waw(%a: memref<11xf32>, %b: memref<11xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  affine.for %i = 0 to 10 {
    affine.store %one, %a[%i] : memref<11xf32>
    affine.store %one, %b[%i] : memref<11xf32>
  }
  affine.for %i = 0 to 10 {
    %v = affine.load %b[%i] : memref<11xf32>
    affine.store %two, %a[%i + 1] : memref<11xf32>
  }
  return
}
"""


def test_writes_in_the_wrong_final_order_are_refused():
    candidate = pair(WAW, "@waw").candidate(1)
    assert not candidate.legal
    assert "%a" in (candidate.reason or "")


CALL_BETWEEN = """
func.func private @touch(memref<10xf32>)
func.func @call(%a: memref<10xf32>, %b: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %v = affine.load %a[%i] : memref<10xf32>
    affine.store %v, %b[%i] : memref<10xf32>
  }
  func.call @touch(%b) : (memref<10xf32>) -> ()
  affine.for %i = 0 to 10 {
    %v = affine.load %b[%i] : memref<10xf32>
    affine.store %v, %a[%i] : memref<10xf32>
  }
  return
}
"""


def test_unknown_ops_between_the_nests_block_fusion():
    fusion = pair(CALL_BETWEEN, "@call")
    assert fusion.failure is not None and "func.call" in fusion.failure
    assert fusion.best() is None


INDIRECT = """
func.func @indirect(%idx: memref<10xindex>, %a: memref<10xf32>, %b: memref<10xf32>) {
  affine.for %i = 0 to 10 {
    %k = affine.load %idx[%i] : memref<10xindex>
    %v = memref.load %a[%k] : memref<10xf32>
    affine.store %v, %b[%i] : memref<10xf32>
  }
  affine.for %i = 0 to 10 {
    %v = affine.load %b[%i] : memref<10xf32>
    affine.store %v, %a[%i] : memref<10xf32>
  }
  return
}
"""


def test_non_affine_accesses_block_fusion():
    fusion = pair(INDIRECT, "@indirect")
    assert fusion.failure is not None and "not affine" in fusion.failure


NAMES_AND_COMMENTS = """
func.func @names(%in: memref<16xf32>, %out: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  %i_1 = arith.constant 3 : index
  // Scale the input.
  affine.for %i = 0 to 16 {
    %x = affine.load %in[%i] : memref<16xf32>  // read
    affine.store %x, %t[%i] : memref<16xf32>
  }
  // Consume it.
  affine.for %j = 0 to 16 {
    %x = affine.load %t[%j] : memref<16xf32>
    affine.store %x, %out[%j] : memref<16xf32>
  }
  return
}
"""


def test_names_comments_and_layout():
    best = pair(NAMES_AND_COMMENTS, "@names").best()
    assert best is not None and best.new_text is not None and _verifies(best.new_text)
    fused = function_text(best.new_text, "@names")
    # The moved nest's comments come along; the second nest's header line and comment stay.
    assert fused.index("// Consume it.") < fused.index("// Scale the input.")
    assert "  affine.for %j = 0 to 16 {\n    // Scale the input.\n" in fused
    assert "affine.load %in[%j] : memref<16xf32>  // read" in fused
    # %x is taken by the second nest: the copy's %x gets a fresh name; nothing else changes.
    assert "%x_1 = affine.load %in[%j]" in fused
    assert "%i_1 = arith.constant 3 : index" in fused
    assert fused.count("%i_1") == 1


SIBLINGS = """
func.func @sib(%in: memref<10x10xf32>, %o1: memref<10x10xf32>, %o2: memref<10xf32>) {
  %one = arith.constant 1.0 : f32
  affine.for %i = 0 to 10 {
    affine.for %j = 0 to 10 {
      %v = affine.load %in[%i, %j] : memref<10x10xf32>
      %w = arith.addf %v, %one : f32
      affine.store %w, %o1[%i, %j] : memref<10x10xf32>
    }
  }
  affine.for %k = 0 to 10 {
    affine.for %l = 0 to 10 {
      %v = affine.load %in[%k, %l] : memref<10x10xf32>
      affine.store %v, %o2[%k] : memref<10xf32>
    }
  }
  return
}
"""


def test_sibling_fusion_of_nests_reading_the_same_input():
    best = pair(SIBLINGS, "@sib", mode=SIBLING).best()
    assert best is not None and best.depth == 2 and best.extra == 0.0
    assert structure(best.new_text or b"", "@sib") == [
        [
            "for 10",
            [
                [
                    "for 10",
                    [
                        "load memref<10x10xf32>",
                        "store memref<10x10xf32>",
                        "load memref<10x10xf32>",
                        "store memref<10xf32>",
                    ],
                ]
            ],
        ]
    ]


REDUCTION = """
func.func @reduce(%a: memref<8x8xf32>, %out: memref<8xf32>) {
  %s = memref.alloc() : memref<8xf32>
  %zero = arith.constant 0.0 : f32
  affine.for %i = 0 to 8 {
    %r = affine.for %k = 0 to 8 iter_args(%acc = %zero) -> (f32) {
      %v = affine.load %a[%i, %k] : memref<8x8xf32>
      %n = arith.addf %acc, %v : f32
      affine.yield %n : f32
    }
    affine.store %r, %s[%i] : memref<8xf32>
  }
  affine.for %j = 0 to 8 {
    %v = affine.load %s[%j] : memref<8xf32>
    affine.store %v, %out[%j] : memref<8xf32>
  }
  return
}
"""


def test_reductions_with_iter_args_move_whole():
    best = pair(REDUCTION, "@reduce").best()
    assert best is not None and best.depth == 1 and best.extra == 0.0
    fused = function_text(best.new_text or b"", "@reduce")
    assert "%r = affine.for %k = 0 to 8 iter_args(%acc = %zero) -> (f32) {" in fused
    assert "%s = memref.alloc() : memref<1xf32>" in fused


SYMBOLIC_TRANSPOSED = """
func.func @sym(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %n: index) {
  %t = memref.alloc(%n, %n) : memref<?x?xf32>
  affine.for %i = 0 to %n {
    affine.for %j = 0 to %n {
      %v = affine.load %a[%i, %j] : memref<?x?xf32>
      affine.store %v, %t[%j, %i] : memref<?x?xf32>
    }
  }
  affine.for %x = 0 to %n {
    affine.for %y = 0 to %n step 2 {
      %v = affine.load %t[%x, %y] : memref<?x?xf32>
      affine.store %v, %b[%x, %y] : memref<?x?xf32>
    }
  }
  return
}
"""


def test_symbolic_bounds_transposed_and_strided_accesses():
    fusion = pair(SYMBOLIC_TRANSPOSED, "@sym")
    best = fusion.best()
    assert best is not None and best.depth == 2 and _verifies(best.new_text or b"")
    fused = function_text(best.new_text or b"", "@sym")
    # The copy runs one iteration per consumer iteration: i = y, j = x (transposed), the
    # odd columns the strided consumer never reads are not computed, and the dynamically
    # sized buffer becomes one element.
    assert "%v_1 = affine.load %a[%y, %x] : memref<?x?xf32>" in fused
    assert "%t = memref.alloc() : memref<1x1xf32>" in fused
    assert "affine.store %v_1, %t[0, 0] : memref<1x1xf32>" in fused


def test_exhausted_budgets_refuse_quickly():
    options = FusionOptions(budget=Budget(max_operations=200, time_limit=None))

    def refuse():
        fusion = pair(seed_program(), "@main", options=options)
        assert fusion.best() is None
        return [fusion.candidate(d).reason or "" for d in fusion.depths()] + [fusion.failure or ""]

    reasons, calls = count_calls(refuse)
    assert any("budget" in reason for reason in reasons)
    assert calls < 2_000_000, f"{calls} calls before refusing"


@pytest.mark.parametrize("depth", [12, 40])
def test_deep_nests(depth):
    lines = ["func.func @deep(%a: memref<4xf32>, %b: memref<4xf32>) {"]
    for nest, (src, dst) in enumerate((("%a", "%b"), ("%b", "%a"))):
        for level in range(depth):
            lines.append("  " * (level + 1) + f"affine.for %n{nest}_{level} = 0 to 2 {{")
        lines.append(
            "  " * (depth + 1) + f"%v{nest} = affine.load {src}[%n{nest}_0] : memref<4xf32>"
        )
        lines.append(
            "  " * (depth + 1) + f"affine.store %v{nest}, {dst}[%n{nest}_0] : memref<4xf32>"
        )
        for level in reversed(range(depth)):
            lines.append("  " * (level + 1) + "}")
    lines += ["  return", "}"]
    fusion = pair("\n".join(lines) + "\n", "@deep")
    for d in fusion.depths()[:2]:
        fusion.candidate(d)  # answers, legal or not, without recursing or hanging
