"""The same text gets the same diagnostics in the editor as from `affine-lsp check`:
the editor's analysis (one tree for the whole document, checked item by item, with
facts per `// -----` chunk) against the CLI's (each chunk parsed and checked on its
own), on broken text above all: mutations and edits of this project's own MLIR
files, and of the real-world corpus in `../shared` when it is there."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from affine_lsp.checks import CheckOptions, Diagnostic
from affine_lsp.cli.check import check_bytes
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.syntax import ContentChange, SourceDocument
from affine_lsp.testing.mutate import mutate
from tests.corpus_data import SHARED

ROOT = Path(__file__).resolve().parents[2]
SEEDS = sorted(
    path
    for path in [*ROOT.glob("examples/*.mlir"), *ROOT.glob("tests/**/*.mlir")]
    if path.stat().st_size < 40_000
)
FRAGMENTS = [
    "\n",
    "}",
    "{",
    "// -----\n",
    " // -----",
    '"',
    "%v = arith.constant 0 : index\n",
    'memref.global "private" @g : memref<4xf32> = dense<0.0>\n',
    "%x = memref.get_global @g : memref<4xf32>\n",
    "#m = affine_map<(d0) -> (d0)>\n",
    "affine.for %k = 0 to 4 {\n",
]


def _same(analysis: DocumentAnalysis) -> None:
    data = bytes(analysis.document.data)
    expected = check_bytes(data, CheckOptions())
    found = analysis.diagnostics()
    key = Diagnostic.sort_key
    assert sorted(found, key=key) == sorted(expected, key=key), data[:3000]


def _checked(text: str | bytes) -> DocumentAnalysis:
    analysis = DocumentAnalysis.from_text(text)
    analysis.analyse_all()
    _same(analysis)
    return analysis


def test_top_level_values_defined_twice():
    _checked("%v = arith.constant 0 : index\n%v = arith.constant 1 : index\n")


def test_a_top_level_global_is_known_to_get_global():
    analysis = _checked(
        'memref.global "private" constant @c : memref<4xf32> = dense<1.0>\n'
        "func.func @f() {\n"
        "  %0 = memref.get_global @c : memref<4xf32>\n"
        "  %1 = memref.get_global @c : memref<8xf32>\n"
        "  return\n"
        "}\n"
    )
    assert [d.code for d in analysis.diagnostics()] == ["memref-global-reference"]


def test_a_global_edited_in_place_is_seen_by_its_users():
    analysis = _checked(
        'memref.global "private" @c : memref<4xf32>\n'
        "func.func @f() {\n  %0 = memref.get_global @c : memref<4xf32>\n  return\n}\n"
    )
    at = analysis.document.position(analysis.document.source.index(b"4xf32>\n"))
    analysis.apply_changes([ContentChange("8", (at, (at[0], at[1] + 1)))])
    analysis.analyse_all()
    _same(analysis)
    assert [d.code for d in analysis.diagnostics()] == ["memref-global-reference"]


def test_generic_affine_ops_read_their_alias_maps():
    """A generic-form loop whose bound map is an alias splits its operands by it."""
    analysis = _checked(
        "#upper = affine_map<()[s0] -> (s0)>\n"
        "func.func @f(%n: index) {\n"
        "  affine.for %i = 0 to 8 {\n"
        "    %m = arith.addi %i, %n : index\n"
        '    "affine.for"(%m) <{lowerBoundMap = affine_map<() -> (0)>, operandSegmentSizes ='
        " array<i32: 0, 1, 0>, step = 1 : index, upperBoundMap = #upper}> ({\n"
        "    ^bb0(%j: index):\n"
        '      "affine.yield"() : () -> ()\n'
        "    }) : (index) -> ()\n"
        "  }\n"
        "  return\n"
        "}\n"
    )
    assert [d.code for d in analysis.diagnostics()] == ["affine-symbol-invalid"]


def test_top_level_values_have_their_types():
    analysis = _checked(
        'memref.global "private" @g : memref<4xf32>\n'
        "%x = memref.get_global @g : memref<4xf32>\n"
        '"test.region"() ({\n'
        "  affine.for %i = 0 to 8 {\n"
        "    %y = arith.addi %x, %x : index\n"
        "    affine.parallel (%k) = (0) to (symbol(%y)) {\n"
        "    }\n"
        "  }\n"
        "}) : () -> ()\n"
    )
    assert "has type memref<4xf32>" in " ".join(d.message for d in analysis.diagnostics())


@pytest.mark.parametrize(
    "text",
    [
        # An op left open before a marker: the chunk ends there all the same.
        "func.func @f() {\n  %a = arith.constant 0 : index\n// -----\n%a = arith.addi %a, %a\n",
        # A marker at the end of a comment, and one in a string.
        "// note // -----\n%v = arith.constant 0 : index // ----- %w\n",
        '%s = "t.op"() {note = "a // ----- b"} : () -> index\n',
        # A chunk starting with a blank line, with an error (the message reads its text).
        "func.func @f() {\n  return\n}\n// -----\n\nreturn0>(\n",
        # Binary bytes in one chunk: the errors of the next are reported all the same.
        "func.func @f() {\n  %x = \x01\x02\x03\x04 junk\n}\n// -----\nfunc.func @g() {\n  }}\n",
    ],
)
def test_chunks_parse_as_they_do_alone(text):
    _checked(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    index=st.integers(0, len(SEEDS) - 1),
    edits=st.integers(0, 6),
)
def test_mutated_files_get_the_diagnostics_check_gives(seed, index, edits):
    """A mutation of one of the project's own files (bytes deleted, duplicated,
    swapped, random tokens, markers, invalid UTF-8, ...), analysed fresh, then edited
    (incrementally) a few times: after each, what the editor shows is what `check`
    prints."""
    rng = random.Random(seed)
    analysis = _checked(mutate(SEEDS[index].read_bytes(), rng))
    for _ in range(edits):
        document: SourceDocument = analysis.document
        start = rng.randint(0, len(document.data))
        end = min(len(document.data), start + rng.choice([0, 0, 1, 3, 30]))
        text = rng.choice(FRAGMENTS) if rng.random() < 0.8 else ""
        change = ContentChange(text, (document.position(start), document.position(end)))
        analysis.apply_changes([change])
        analysis.analyse_all()
        _same(analysis)


REALWORLD = SHARED / "realworld"


@pytest.mark.skipif(not REALWORLD.is_dir(), reason="../shared/realworld is not there")
@pytest.mark.parametrize("seed", range(3))
def test_mutated_real_world_files_get_the_diagnostics_check_gives(seed):
    rng = random.Random(seed)
    files = sorted(p for p in REALWORLD.glob("*/*.mlir") if p.stat().st_size < 30_000)
    for path in rng.sample(files, 10):
        _checked(mutate(path.read_bytes(), rng))


BROKEN = (
    "// A file as one is typed: top-level values, a global, an op left open before\n"
    "// a marker, a marker in a comment.\n"
    'memref.global "private" constant @c : memref<4xf32> = dense<1.0>\n'
    "%v = arith.constant 0 : index\n"
    "%v = arith.constant 1 : index\n"
    "func.func @f() {\n"
    "  %0 = memref.get_global @c : memref<4xf32>\n"
    "// -----\n"
    "func.func @g() { // ----- }\n"
    "  %1 = arith.addi %w, %w : index\n"
    "  return\n"
    "}\n"
)


def test_the_server_publishes_what_check_prints(tmp_path):
    """Through the real server and the real CLI: the same ranges, codes and words."""
    import json
    import subprocess
    import sys

    from affine_lsp.testing.lsp_client import LspClient
    from tests.server.conftest import ENV, SERVER

    path = tmp_path / "broken.mlir"
    path.write_text(BROKEN)
    printed = subprocess.run(
        [sys.executable, "-m", "affine_lsp", "check", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
        check=False,
    )
    expected = [(d["range"], d["code"], d["message"]) for d in json.loads(printed.stdout)]
    assert {code for _, code, _ in expected} >= {"ssa-redefinition", "syntax", "ssa-undefined"}
    with LspClient(SERVER, env=ENV) as client:
        client.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        client.notify("initialized", {})
        uri = path.as_uri()
        item = {"uri": uri, "languageId": "mlir", "version": 1, "text": BROKEN}
        client.notify("textDocument/didOpen", {"textDocument": item})
        published = client.diagnostics(uri, 1, timeout=60)
        client.stop()
    found = [(d["range"], d["code"], d["message"]) for d in published]
    assert found == expected
