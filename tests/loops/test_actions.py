"""The loop transformations as code actions: titles, reasons, lazy proven edits."""

from __future__ import annotations

from affine_lsp.ide.code_actions import code_actions, prepare_loop_transforms
from affine_lsp.ide.settings import Settings, parse_settings
from affine_lsp.transforms.loops.actions import LoopOptions
from tests.ide.helpers import analysed, apply_text_edits, offset_of
from tests.loops.fixtures import MATMUL, STENCIL


def _titles(actions) -> dict[str, str | None]:
    return {a.title: a.disabled_reason for a in actions}


def test_actions_at_the_stencil():
    analysis = analysed(STENCIL)
    at = offset_of(analysis, "affine.for %i")
    actions = prepare_loop_transforms(analysis, at, at)()
    titles = _titles(actions)
    assert titles["Interchange %i and %j"] == (
        "iteration (i, j) reads %A[i - 1, j + 1], written by iteration (i - 1, j + 1); "
        "after interchange it would run first; skew %j by 1 first"
    )
    assert titles["Skew %j by 1 and interchange %i and %j"] is None
    assert not any(t.startswith("Tile") for t in titles)  # 32 ≥ 9: one tile is no tiling
    assert "a dependence carried by %i" in (titles["Parallelize %i"] or "")
    assert titles["Hoist invariant code out of %i"] == "nothing in %i is loop-invariant"
    assert all(a.kind == "refactor.rewrite" for a in actions)
    # enabled actions get their edits when chosen, proven
    skew = next(a for a in actions if a.title.startswith("Skew"))
    assert skew.edits is None
    text = apply_text_edits(analysis, skew.resolve())
    assert "affine.for %j_skew = 1 to 18 {" in text and not analysed(text).diagnostics()


def test_actions_follow_the_settings_and_the_cursor():
    analysis = analysed(MATMUL)
    at = offset_of(analysis, "%b = affine.load")  # inside %k: the innermost loop around
    options = LoopOptions(tile_sizes=(8,), unroll_factor=8, unroll_jam_factor=3)
    titles = _titles(prepare_loop_transforms(analysis, at, at, options)())
    assert "Tile 8" in titles and "Unroll %k by 8" in titles
    assert "Interchange %k and" not in " ".join(titles)
    at = offset_of(analysis, "affine.for %j")
    titles = _titles(prepare_loop_transforms(analysis, at, at, options)())
    assert {"Interchange %j and %k", "Tile 8×8", "Unroll and jam %j by 3"} <= set(titles)


def test_code_actions_include_the_transforms_only_when_rewrites_are_asked_for():
    analysis = analysed(MATMUL)
    at = offset_of(analysis, "affine.for %j")
    rewrites = code_actions(analysis, at, at, only=["refactor.rewrite"])
    assert any(a.title == "Parallelize %j" for a in rewrites)
    assert code_actions(analysis, at, at) == []


def test_nothing_in_a_function_with_errors():
    text = STENCIL.replace("%c3, %v", "%c3, %undefined")
    analysis = analysed(text)
    at = offset_of(analysis, "affine.for %i")
    assert prepare_loop_transforms(analysis, at, at)() == []


def test_transform_settings():
    settings, problems = parse_settings(
        {"transforms": {"tileSizes": [16, 8], "unrollFactor": 8, "unrollJamFactor": 4}}
    )
    assert problems == []
    assert settings.loop_options() == LoopOptions((16, 8), 8, 4)
    single, _ = parse_settings({"affineLsp.transforms.tileSizes": 64})
    assert single.tile_sizes == (64,)
    base = Settings()
    bad, problems = parse_settings(
        {"transforms": {"tileSizes": [0], "unrollFactor": 1, "unrollJamFactor": True}}, base
    )
    assert bad == base and len(problems) == 3


def test_tile_sizes_offered_make_more_than_one_tile():
    """A size at or above a loop's trip count tiles nothing: the band is tiled as far
    as its loops are split, and not at all if the first is not."""
    nest = """func.func @f(%A: memref<24x64xf32>, %n: index) {
  affine.for %i = 0 to 24 {
    affine.for %j = 0 to 64 {
      affine.for %k = 0 to %n {
        %v = affine.load %A[%i, %j] : memref<24x64xf32>
        affine.store %v, %A[%i, %j] : memref<24x64xf32>
      }
    }
  }
  return
}
"""
    analysis = analysed(nest)

    def tiles(needle: str, sizes: tuple[int, ...]) -> list[str]:
        at = offset_of(analysis, needle)
        found = prepare_loop_transforms(analysis, at, at, LoopOptions(tile_sizes=sizes))()
        return [a.title for a in found if a.title.startswith("Tile")]

    assert tiles("affine.for %i", (32,)) == []  # 24 ≤ 32
    assert tiles("affine.for %i", (16,)) == ["Tile 16×16×16"]  # (%n: unknown, maybe more)
    assert tiles("affine.for %i", (8, 64, 4)) == ["Tile 8"]  # 64 ≤ 64: %i alone
    assert tiles("affine.for %j", (32,)) == ["Tile 32×32"]
    assert tiles("affine.for %j", (64,)) == []


def test_tiles_in_wavefront_only_where_the_sizes_split_two_loops():
    """A wavefront of tiles needs two loops of more than one tile each."""
    nest = """func.func @f(%A: memref<12x40xf32>) {
  affine.for %i = 1 to 11 {
    affine.for %j = 1 to 39 {
      %up = affine.load %A[%i - 1, %j + 1] : memref<12x40xf32>
      %left = affine.load %A[%i, %j - 1] : memref<12x40xf32>
      %sum = arith.addf %up, %left : f32
      affine.store %sum, %A[%i, %j] : memref<12x40xf32>
    }
  }
  return
}
"""
    analysis = analysed(nest)
    at = offset_of(analysis, "affine.for %i")

    def tiled_wavefronts(sizes: tuple[int, ...]) -> list[str]:
        found = prepare_loop_transforms(analysis, at, at, LoopOptions(tile_sizes=sizes))()
        return [a.title for a in found if "wavefront" in a.title and "×" in a.title]

    offered = tiled_wavefronts((4,))  # (the tiles of the skewed band, as the hint)
    assert offered and all("tile 4×4 and run the tiles in wavefront" in t.lower() for t in offered)
    assert tiled_wavefronts((16,)) == []  # 10 ≤ 16: one row of tiles
    assert tiled_wavefronts((4, 38)) == []  # 38 ≤ 38


def test_scalar_replacement_is_offered_at_a_loop_whose_body_accesses_memory():
    analysis = analysed(MATMUL)
    at = offset_of(analysis, "%b = affine.load")
    actions = prepare_loop_transforms(analysis, at, at)()
    replace = next(a for a in actions if a.title == "Scalar replacement in %k")
    assert replace.disabled_reason is None
    text = apply_text_edits(analysis, replace.resolve())
    assert "%c_final = affine.for %k = 0 to 32 iter_args(%c = %c_init) -> (f32) {" in text
    assert not analysed(text).diagnostics()
    at = offset_of(analysis, "affine.for %i")  # its body holds only a loop: not offered
    titles = _titles(prepare_loop_transforms(analysis, at, at)())
    assert not any(title.startswith("Scalar replacement") for title in titles)
