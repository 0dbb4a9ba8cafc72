"""A project file's dialects reach everything that reads MLIR, not only `check`:
`fuse`, `transform`, `draw` and `optimize` (their input's error check, the model they build and
the proofs' re-parse of the rewritten text), and in the editor the refactorings,
their planning on extracts, their previews and hovers.

The nests below are in an `air.herd`-like op whose region arguments (the tile
indices, the size passed in) are used as symbols: valid where the project file
declares the op an `AffineScope`, errors (as mlir-opt says) without one."""

from __future__ import annotations

from pathlib import Path

import pytest

from affine_lsp.checks import CheckOptions
from affine_lsp.cli import main
from affine_lsp.cli.output import DONE, INPUT_ERRORS, USAGE
from affine_lsp.ide import extracts, planning
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.ide.code_actions import prepare_fusion, prepare_loop_transforms
from affine_lsp.ide.hover import hover
from affine_lsp.ide.records import OPERATION
from affine_lsp.ide.settings import Settings
from affine_lsp.ir import PROJECT_FILE, AffineForOp, build_module, parse_project
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.loops import TILE, Spec, transform
from tests.ide.helpers import apply_text_edits, offset_of

# Two nests over buffers of the herd's own, bounded by a size given to the herd and
# offset by its tile indices: fusable, tileable, drawable once the herd is a scope.
HERD = """func.func @tile_sum(%size: index) {
  %c4 = arith.constant 4 : index
  air.herd tile (%tx, %ty) in (%sx=%c4, %sy=%c4) args(%n=%size) : index {
    %one = arith.constant 1.0 : f32
    %acc = memref.alloc() : memref<64x64xf32>
    %res = memref.alloc() : memref<64x64xf32>
    affine.for %i = 0 to %n {
      affine.for %j = 0 to 64 {
        affine.store %one, %acc[%i + symbol(%tx), %j] : memref<64x64xf32>
      }
    }
    affine.for %i2 = 0 to %n {
      affine.for %j2 = 0 to 64 {
        %v = affine.load %acc[%i2 + symbol(%tx), %j2] : memref<64x64xf32>
        %w = arith.addf %v, %v : f32
        affine.store %w, %res[%i2, %j2 + symbol(%ty)] : memref<64x64xf32>
      }
    }
    air.herd_terminator
  }
  return
}
"""
FIRST_NEST = 7  # (1-based line)
PROJECT = """[dialects]
registered = ["air"]

[ops."air.herd"]
traits = ["AffineScope", "IsolatedFromAbove"]

[ops."air.herd_terminator"]
traits = ["Terminator", "Pure"]
"""
DIALECTS = parse_project(PROJECT.encode()).dialects
SYMBOL_ERROR = "[affine-symbol-invalid]"


def _write(folder: Path, project: bool) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    if project:
        (folder / PROJECT_FILE).write_text(PROJECT)
    path = folder / "herd.mlir"
    path.write_text(HERD)
    return str(path)


COMMANDS = {
    "fuse": ["--line", str(FIRST_NEST)],
    "transform": ["--line", str(FIRST_NEST), "--tile", "8,8"],
    "draw": ["--line", str(FIRST_NEST), "--param", "n=6", "--param", "tx=0"],
    "optimize": ["--all"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_commands_read_the_project_file_of_the_file(name, tmp_path, capsysbinary):
    path = _write(tmp_path / "project" / "kernels", project=False)
    (tmp_path / "project" / PROJECT_FILE).write_text(PROJECT)  # (a folder above)
    assert main([name, path, *COMMANDS[name]]) == DONE
    captured = capsysbinary.readouterr()
    assert SYMBOL_ERROR.encode() not in captured.err
    if name == "fuse":
        assert b"fused the nest on line 7 into the nest on line 12" in captured.err
        assert captured.out.count(b"affine.for") == 2
    elif name == "transform":
        assert b"tiled by 8\xc3\x978" in captured.err
        assert b"affine.for %i_tile = 0 to %n step 8 {" in captured.out
    elif name == "draw":
        assert captured.out.startswith(b"<svg")
    else:
        assert b"air.herd tile (%tx, %ty)" in captured.out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_without_a_project_file_the_input_has_errors_as_before(name, tmp_path, capsys):
    path = _write(tmp_path, project=False)
    assert main([name, path, *COMMANDS[name]]) == INPUT_ERRORS
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path}:7:26: error: operand cannot be used as a symbol" in captured.err
    assert "%tx is a region argument of `air.herd`" in captured.err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_config_names_the_project_file(name, tmp_path, capsys):
    path = _write(tmp_path / "kernels", project=False)
    elsewhere = tmp_path / "settings" / "air.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(PROJECT)
    assert main([name, path, *COMMANDS[name], "--config", str(elsewhere)]) == DONE
    # --config wins over the file's own project file.
    (tmp_path / "kernels" / PROJECT_FILE).write_text(PROJECT)
    empty = tmp_path / "settings" / "upstream.toml"
    empty.write_text("")
    capsys.readouterr()
    assert main([name, path, *COMMANDS[name], "--config", str(empty)]) == INPUT_ERRORS
    assert SYMBOL_ERROR in capsys.readouterr().err
    missing = tmp_path / "settings" / "missing.toml"
    assert main([name, path, *COMMANDS[name], "--config", str(missing)]) == USAGE
    assert capsys.readouterr().err == f"affine-lsp {name}: cannot read {missing}: not a file\n"


def test_what_a_project_file_leaves_out_is_a_warning_on_stderr(tmp_path, capsys):
    path = _write(tmp_path, project=False)
    project = tmp_path / PROJECT_FILE
    project.write_text(PROJECT.replace('"Pure"]', '"Pure", "Speculatable"]'))
    assert main(["transform", path, *COMMANDS["transform"]]) == DONE
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith(f"{project}:8:33: warning: unknown trait 'Speculatable'")
    assert first.endswith("[project-file]")


def test_the_transformation_is_proven_with_the_models_dialects():
    data = HERD.encode()
    document = SourceDocument(data)
    for dialects, proven in ((DIALECTS, True), (None, False)):
        if dialects is None:
            model = build_module(document.tree.root_node)
        else:
            model = build_module(document.tree.root_node, dialects)
        assert model.dialects is (dialects or model.dialects)
        loop = next(op for op in model.walk() if isinstance(op, AffineForOp))
        result = transform(data, model, loop, Spec(TILE, sizes=(8, 8)))
        assert result.applied == proven, result.reason
        if not proven:
            # (the rewritten text is re-parsed with upstream MLIR's traits: it does
            # not verify there, so nothing is offered)
            assert "cannot be used as a symbol" in (result.reason or "")


def _analysed(dialects=None) -> DocumentAnalysis:
    options = CheckOptions(dialects=dialects) if dialects is not None else None
    analysis = DocumentAnalysis.from_text(HERD, options=options)
    analysis.analyse_all()
    return analysis


def _titles(actions) -> dict[str, str | None]:
    return {a.title: a.disabled_reason for a in actions}


def test_code_actions_with_the_documents_dialects():
    analysis = _analysed(DIALECTS)
    assert analysis.diagnostics() == []
    at = offset_of(analysis, "affine.for %i ")
    actions = prepare_loop_transforms(analysis, at, at)()
    tile = next(a for a in actions if a.title == "Tile 32×32")
    assert tile.disabled_reason is None
    text = apply_text_edits(analysis, tile.resolve())
    assert "affine.for %i_tile = 0 to %n step 32 {" in text
    assert _analysed_text(text).diagnostics() == []
    fusions = prepare_fusion(analysis, at, at, 0.3)()
    fuse = next(a for a in fusions if a.title.startswith("Fuse") and a.disabled_reason is None)
    fused = apply_text_edits(analysis, fuse.resolve())
    assert fused.count("affine.for") == 2 and _analysed_text(fused).diagnostics() == []


def _analysed_text(text: str) -> DocumentAnalysis:
    analysis = DocumentAnalysis.from_text(text, options=CheckOptions(dialects=DIALECTS))
    analysis.analyse_all()
    return analysis


def test_no_code_actions_where_upstream_mlir_finds_errors():
    analysis = _analysed()
    assert SYMBOL_ERROR.strip("[]") in {d.code for d in analysis.diagnostics()}
    at = offset_of(analysis, "affine.for %i ")
    assert prepare_loop_transforms(analysis, at, at)() == []
    assert prepare_fusion(analysis, at, at, 0.3)() == []


def test_planning_on_extracts_keeps_the_dialects():
    analysis = _analysed(DIALECTS)
    (record,) = [r for r in analysis.records if r.kind == OPERATION]
    extract = extracts.extract_of(analysis, record)
    assert extract.dialects == DIALECTS
    worker = planning.Planning()
    anchors, _ = worker.anchors(extract)
    plans = worker.plan(extract, anchors, Settings())
    titles = {a.title: a.disabled_reason for plan in plans.values() for a in plan.actions}
    assert "Tile 32×32" in titles and titles["Tile 32×32"] is None
    relative = offset_of(analysis, "affine.for %i ") - record.start
    preview = worker.preview(extract, "loops", relative, relative, "Tile 32×32", Settings())
    assert preview.after and preview.reason is None


def test_hover_judges_symbols_with_the_documents_dialects():
    for dialects, mark in ((DIALECTS, "✓ valid"), (None, "✗ not valid")):
        analysis = _analysed(dialects)
        found = hover(analysis, offset_of(analysis, "%tx), %j]", shift=1))
        assert found is not None and mark in found.markdown, found
