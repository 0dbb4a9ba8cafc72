"""Acceptance gates of the grammar: zero syntax errors on every valid input we
know of, and errors that stay local on invalid input. Each gate prints its
counts (run with `-s` to see them)."""

from __future__ import annotations

import re

import pytest

from affine_lsp.syntax import SourceDocument, syntax_problems
from tests.corpus_data import TOOLS, chunks, require_shared, seed_examples
from tests.oracle_tools import mlir_opt_path, run_tool

# Code examples in the seeds that are not valid MLIR: documentation typos and
# pseudo-code. MLIR's own parser rejects each of them for the reason given.
INVALID_SEED_EXAMPLES = {
    "affine-dialect.txt:450": "pad_edges: `(memref<12x12xf32)` lacks '>', `alloc memref<...>` "
    "has no ':' and `(%i, %j)` trails the set definition",
    "affine-dialect.txt:943": "the types are elided as `: ...`",
    "memref-dialect.txt:143": "`memspace0` is a placeholder, not an attribute",
    "memref-dialect.txt:962": "`memspace0` is a placeholder, not an attribute",
    "memref-dialect.txt:277": "memref.alloca_scope.return with a value needs `: type`",
    "memref-dialect.txt:306": "memref.alloca_scope.return with a value needs `: type`",
    "memref-dialect.txt:385": "`stride_spec` is a placeholder, not an attribute",
    "memref-dialect.txt:422": "the memory space `1` is written inside the affine_map's brackets",
    "memref-dialect.txt:617": "extract_strided_metadata's result types lack `-> memref<f32>`, "
    "and reinterpret_cast uses the removed `offset: ?, strides: [...]` layout",
    "memref-dialect.txt:826": "memref.load without its `: type`",
    "memref-dialect.txt:866": "memref.reinterpret_cast without its `: type to type`",
    "memref-dialect.txt:872": "pseudo-code assigning to `%dst.base`",
    "memref-dialect.txt:915": "memref.reshape's functional type is written with `to`, not `->`",
    "memref-dialect.txt:924": "memref.reshape's functional type is written with `to`, not `->`",
    "memref-dialect.txt:1105": "`:` is written twice before the subview's types",
}


def _error_count(text: str) -> int:
    return len(syntax_problems(SourceDocument(text).tree))


def test_verifying_corpus_chunks_parse_without_errors():
    require_shared()
    valid = [c for c in chunks() if c.verifies]
    failing = [c.label for c in valid if _error_count(c.text)]
    print(
        f"\ncorpus chunks that verify with mlir-opt: {len(valid)}, "
        f"with syntax errors: {len(failing)}"
    )
    assert valid and not failing


def test_seed_examples_parse_without_errors():
    require_shared()
    examples = seed_examples()
    checked = [e for e in examples if e.label not in INVALID_SEED_EXAMPLES]
    failing = [e.label for e in checked if _error_count(e.text)]
    print(
        f"\nseed code examples: {len(examples)}; valid MLIR: {len(checked)}, "
        f"with syntax errors: {len(failing)}; documentation typos/pseudo-code: "
        f"{len(examples) - len(checked)}"
    )
    assert len(examples) > 60 and not failing


def test_invalid_seed_examples_are_still_invalid():
    """Keeps the exclusion list honest: each excluded example really fails to parse."""
    require_shared()
    labels = {e.label: e for e in seed_examples()}
    assert set(INVALID_SEED_EXAMPLES) <= set(labels)
    parsing = [label for label in INVALID_SEED_EXAMPLES if not _error_count(labels[label].text)]
    assert not parsing


@pytest.mark.parametrize("lines,seed", [(200, 1), (2000, 7), (20000, 11)])
def test_generated_files_parse_without_errors(tmp_path, lines, seed):
    require_shared()
    out = tmp_path / "gen.mlir"
    run_tool(
        ["python3", str(TOOLS / "gen_affine.py"), str(lines), "-o", str(out), "--seed", str(seed)]
    )
    text = out.read_text()
    assert _error_count(text) == 0
    print(f"\ngen_affine.py {lines} lines (seed {seed}): 0 syntax errors")


_TOPLEVEL_START = re.compile(
    r"^(func\.func|func @|module|builtin\.module|#[\w$.]+\s*=|![\w$.]+\s*="
    r'|"[\w.]+"\(|%[\w$.#:,% -]*=)'
)


def test_errors_stay_local_on_invalid_chunks():
    """Every top-level item of an invalid chunk is still a node of its own, unless
    the syntax error is inside that very item."""
    require_shared()
    invalid = [c for c in chunks() if not c.verifies]
    items = swallowed = 0
    for chunk in invalid:
        document = SourceDocument(chunk.text)
        starts = {n.start_point[0] for n in document.tree.root_node.children if n.type != "ERROR"}
        error_rows = {document.point(p.span.start_byte)[0] for p in syntax_problems(document.tree)}
        for row, line in enumerate(chunk.text.split("\n")):
            if _TOPLEVEL_START.match(line):
                items += 1
                if row not in starts and row not in error_rows:
                    swallowed += 1
                    print(f"swallowed: {chunk.file}:{chunk.first_line + row}: {line}")
    print(
        f"\ninvalid chunks: {len(invalid)}, top-level items: {items}, "
        f"swallowed by errors: {swallowed}"
    )
    assert items > 300 and swallowed == 0


@pytest.mark.oracle
def test_mlir_opt_printed_output_parses_without_errors(tmp_path):
    """mlir-opt's canonical printing (custom and generic forms) of every verifying chunk."""
    require_shared()
    opt = mlir_opt_path()
    by_file: dict[str, list] = {}
    for chunk in chunks():
        if chunk.verifies:
            by_file.setdefault(chunk.file, []).append(chunk)
    printed = failing = 0
    for file, file_chunks in sorted(by_file.items()):
        source = "\n// -----\n".join(c.text for c in file_chunks)
        path = tmp_path / file.replace("/", "_")
        path.write_text(source)
        for extra in ([], ["--mlir-print-op-generic"]):
            result = run_tool(
                [opt, "--allow-unregistered-dialect", "--split-input-file", *extra, str(path)],
                check=False,
            )
            assert result.returncode == 0, f"mlir-opt failed on {file}: {result.stderr[:500]}"
            for part in result.stdout.split("// -----"):
                printed += 1
                if _error_count(part):
                    failing += 1
                    print(f"syntax errors in mlir-opt output of {file} {extra}")
    print(f"\nmlir-opt printed chunks (custom + generic): {printed}, with syntax errors: {failing}")
    assert printed > 900 and failing == 0


@pytest.mark.slow
@pytest.mark.oracle
def test_mlir_opt_printed_generated_and_seed_files_parse(tmp_path):
    require_shared()
    opt = mlir_opt_path()
    out = tmp_path / "gen.mlir"
    run_tool(["python3", str(TOOLS / "gen_affine.py"), "3000", "-o", str(out), "--seed", "5"])
    sources = {"gen_affine": out.read_text()}
    for example in seed_examples():
        if example.label not in INVALID_SEED_EXAMPLES:
            sources[example.label] = example.text
    printed = failing = 0
    for label, text in sources.items():
        path = tmp_path / "in.mlir"
        path.write_text(text)
        for extra in ([], ["--mlir-print-op-generic"]):
            result = run_tool([opt, "--allow-unregistered-dialect", *extra, str(path)], check=False)
            if result.returncode != 0:
                continue  # the example does not verify on its own (undefined values, ...)
            printed += 1
            if _error_count(result.stdout):
                failing += 1
                print(f"syntax errors in mlir-opt output of {label} {extra}")
    print(f"\nmlir-opt printed generated/seed files: {printed}, with syntax errors: {failing}")
    assert printed >= 2 and failing == 0
