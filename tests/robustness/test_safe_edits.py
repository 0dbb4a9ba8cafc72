"""No edit ever loses text: fusion is offered only on functions without errors, its
output is verified before it is offered, and `affine-lsp fuse --in-place` replaces a
file atomically or not at all. (Versioned edits in the server: tests/server.)"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading

import pytest

from affine_lsp.checks import Severity, check_document
from affine_lsp.checks.diagnostics import TextEdit
from affine_lsp.cli import main
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument, Span
from affine_lsp.transforms.edits import apply_edits
from affine_lsp.transforms.fusion import actions as fusion_actions_module
from affine_lsp.transforms.fusion import engine, greedy
from affine_lsp.transforms.fusion.actions import fusion_actions

PRODUCER_CONSUMER = """func.func @good(%in: memref<16xf32>, %out: memref<16xf32>) {
  %t = memref.alloc() : memref<16xf32>
  affine.for %i = 0 to 16 {
    %x = affine.load %in[%i] : memref<16xf32>
    affine.store %x, %t[%i] : memref<16xf32>
  }
  affine.for %j = 0 to 16 {
    %x = affine.load %t[%j] : memref<16xf32>
    affine.store %x, %out[%j] : memref<16xf32>
  }
  return
}
"""

OTHER_WITH_ERROR = """func.func @other(%a: memref<4xf32>) {
  %v = affine.load %a[%undefined] : memref<4xf32>
  return
}
"""


@pytest.fixture(autouse=True)
def _uncached():
    """Every test plans afresh (the actions of a text are cached)."""
    fusion_actions_module._CACHE.clear()
    yield
    fusion_actions_module._CACHE.clear()


def _actions(text: str, needle: str = "affine.for %i"):
    document = SourceDocument(text)
    model = build_module(document.tree.root_node)
    offset = text.index(needle) + 2
    return document, fusion_actions(document, model, offset, offset)


def _errors(data: bytes) -> list[str]:
    return [d.message for d in check_document(SourceDocument(data)) if d.severity == Severity.ERROR]


def _enabled(actions):
    return [a for a in actions if a.disabled_reason is None and a.edits]


# -- fusion only on functions without errors ------------------------------------------------


def test_fusion_is_offered_on_a_function_without_errors():
    document, actions = _actions(PRODUCER_CONSUMER)
    (best, *_) = _enabled(actions)
    assert best.preferred and not _errors(apply_edits(document.source, best.edits))


@pytest.mark.parametrize(
    ("broken", "replacement"),
    [
        ("%x = affine.load %t[%j]", "%x = affine.load %t[%k]"),  # an undefined value
        ("affine.store %x, %out[%j]", "affine.store %x, %out[%j"),  # a syntax error
        ("affine.store %x, %out[%j]", "affine.store %x, %out[%j, %j]"),  # wrong arity
    ],
)
def test_no_fusion_in_a_function_with_errors(broken, replacement):
    text = PRODUCER_CONSUMER.replace(broken, replacement)
    assert _errors(text.encode())
    _, actions = _actions(text)
    assert actions == []


def test_errors_in_another_function_do_not_block_fusion_and_stay_as_they_are():
    text = OTHER_WITH_ERROR + PRODUCER_CONSUMER
    document, actions = _actions(text)
    (best, *_) = _enabled(actions)
    fused = apply_edits(document.source, best.edits)
    assert fused.startswith(OTHER_WITH_ERROR.encode())  # the other function untouched
    assert _errors(fused) == _errors(text.encode())  # no new error


# -- the output is verified before it is offered ----------------------------------------------


def test_a_candidate_whose_text_does_not_verify_is_not_offered(monkeypatch):
    original = engine.PairFusion.candidate

    def corrupted(self, depth):
        candidate = original(self, depth)
        if candidate.legal and not getattr(candidate, "corrupted", False):
            candidate.corrupted = True  # type: ignore[attr-defined]
            # The engine proposes text that does not verify: a use of an undefined value.
            anchor = self.data.rindex(b"}")
            candidate.edits = [
                *candidate.edits,
                TextEdit(Span(anchor, anchor), "%z = arith.addi %nope, %nope : index\n  "),
            ]
        return candidate

    monkeypatch.setattr(engine.PairFusion, "candidate", corrupted)
    _, actions = _actions(PRODUCER_CONSUMER)
    pair_actions = [a for a in actions if a.title.startswith("Fuse with")]
    assert pair_actions and not _enabled(pair_actions)
    assert all(
        "does not verify" in (a.disabled_reason or "") for a in pair_actions if "+" in a.title
    )


def test_overlapping_edits_from_the_engine_are_refused(monkeypatch):
    original = engine.PairFusion.candidate

    def overlapping(self, depth):
        candidate = original(self, depth)
        if candidate.legal and candidate.edits:
            first = candidate.edits[0]
            candidate.edits = [first, TextEdit(first.span, "x")]
        return candidate

    monkeypatch.setattr(engine.PairFusion, "candidate", overlapping)
    _, actions = _actions(PRODUCER_CONSUMER)
    pair_actions = [a for a in actions if a.title.startswith("Fuse with")]
    assert pair_actions and not _enabled(pair_actions)


def test_every_offered_fusion_went_through_the_verifier(monkeypatch):
    checked = []
    verify = fusion_actions_module.verify_edits

    def spy(data, edits, model, function):
        checked.append(list(edits))
        return verify(data, edits, model, function)

    monkeypatch.setattr(fusion_actions_module, "verify_edits", spy)
    _, actions = _actions(PRODUCER_CONSUMER)
    offered = _enabled(actions)
    assert offered and all(a.edits in checked for a in offered)
    everything = next(a for a in actions if a.title.startswith("Fuse all"))
    edits = everything.resolve()
    assert edits and edits in checked


def test_fuse_all_whose_text_does_not_verify_is_refused(monkeypatch):
    original = greedy.fuse_all

    def broken(data, *args, **kwargs):
        result = original(data, *args, **kwargs)
        result.text = result.text.replace(
            b"return", b"%z = arith.addi %nope, %nope : index\n  return"
        )
        return result

    monkeypatch.setattr(fusion_actions_module, "fuse_all", broken)
    _, actions = _actions(PRODUCER_CONSUMER)
    everything = next(a for a in actions if a.title.startswith("Fuse all"))
    assert everything.resolve() == []
    assert "does not verify" in (everything.disabled_reason or "")


# -- fuse --in-place: atomic or nothing ---------------------------------------------------------


def _input(tmp_path, text: str = PRODUCER_CONSUMER):
    folder = tmp_path / "work"
    folder.mkdir()
    path = folder / "in.mlir"
    path.write_bytes(text.encode())
    return folder, path


def _only_the_input_is_there(folder) -> bool:
    return sorted(p.name for p in folder.iterdir()) == ["in.mlir"]


def test_in_place_fuses_and_leaves_no_temporary_file(tmp_path):
    folder, path = _input(tmp_path)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 0
    assert path.read_bytes() != PRODUCER_CONSUMER.encode() and not _errors(path.read_bytes())
    assert _only_the_input_is_there(folder)


@pytest.mark.parametrize("text", [OTHER_WITH_ERROR + PRODUCER_CONSUMER, "func.func @f( {\n"])
def test_in_place_refuses_files_with_errors(tmp_path, capsys, text):
    folder, path = _input(tmp_path, text)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 1
    assert path.read_bytes() == text.encode() and _only_the_input_is_there(folder)
    assert "nothing was fused" in capsys.readouterr().err


def _fails_writing(monkeypatch):
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            self.handle.write(data[: len(data) // 2])  # half written, then the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode)))


def _fails_renaming(monkeypatch):
    def rename(source, target):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    monkeypatch.setattr(os, "replace", rename)


def _fails_syncing(monkeypatch):
    def fsync(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", fsync)


def _read_only_directory(monkeypatch):
    """What a read-only directory does to mkstemp (tests run as root, who may write
    anywhere: the real thing is in the next test when not root)."""

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)


def _interrupted(monkeypatch):
    def interrupt(source, target):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)


@pytest.mark.parametrize(
    "failure", [_fails_writing, _fails_renaming, _fails_syncing, _read_only_directory]
)
def test_in_place_leaves_the_file_untouched_on_any_failure(tmp_path, monkeypatch, capsys, failure):
    folder, path = _input(tmp_path)
    before = path.read_bytes()
    failure(monkeypatch)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 2
    assert path.read_bytes() == before
    assert _only_the_input_is_there(folder)
    assert "it was left untouched" in capsys.readouterr().err


def test_an_interrupted_write_leaves_the_file_and_no_temporary_file(tmp_path, monkeypatch):
    folder, path = _input(tmp_path)
    before = path.read_bytes()
    _interrupted(monkeypatch)
    assert main(["fuse", str(path), "--all", "--in-place"]) == 130
    assert path.read_bytes() == before and _only_the_input_is_there(folder)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into read-only directories")
def test_in_place_in_a_read_only_directory(tmp_path, capsys):
    folder, path = _input(tmp_path)
    before = path.read_bytes()
    folder.chmod(0o555)
    try:
        assert main(["fuse", str(path), "--all", "--in-place"]) == 2
    finally:
        folder.chmod(0o755)
    assert path.read_bytes() == before and _only_the_input_is_there(folder)


def test_in_place_through_a_link_rewrites_the_target_and_keeps_the_link(tmp_path):
    folder, path = _input(tmp_path)
    link = tmp_path / "link.mlir"
    link.symlink_to(path)
    assert main(["fuse", str(link), "--all", "--in-place"]) == 0
    assert link.is_symlink() and path.read_bytes() != PRODUCER_CONSUMER.encode()
    assert _only_the_input_is_there(folder)


def test_output_file_is_written_atomically_too(tmp_path, monkeypatch):
    folder, path = _input(tmp_path)
    out = folder / "out.mlir"
    out.write_bytes(b"previous contents")
    _fails_renaming(monkeypatch)
    assert main(["fuse", str(path), "--all", "-o", str(out)]) == 2
    assert out.read_bytes() == b"previous contents"
    assert sorted(p.name for p in folder.iterdir()) == ["in.mlir", "out.mlir"]


def test_an_output_that_is_no_regular_file_is_written_into_not_replaced(tmp_path):
    # `-o /dev/null` must not turn the device into a file: a pipe stands for it here.
    folder, path = _input(tmp_path)
    pipe = folder / "pipe"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()
    assert main(["fuse", str(path), "--all", "-o", str(pipe)]) == 0
    reader.join(timeout=60)
    assert read and read[0].startswith(b"func.func @good")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert sorted(p.name for p in folder.iterdir()) == ["in.mlir", "pipe"]
