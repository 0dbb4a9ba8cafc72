"""Read and update grammar/test/corpus/*.txt (tree-sitter's test-corpus format).

Each case is a header (a line of `=`, the name, a line of `=`), the input, a
line of `-`, and the expected S-expression. `python tests/grammar_corpus.py
--update` rewrites the expected trees from the current parser, like
`tree-sitter test --update`; review the diff before committing it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "grammar" / "test" / "corpus"
_HEADER = re.compile(r"^={3,}\n(?P<name>.*?)\n={3,}\n", re.MULTILINE)
_DIVIDER = re.compile(r"^-{3,}$", re.MULTILINE)


@dataclass
class CorpusCase:
    file: Path
    name: str
    source: str
    expected: str


def read_cases(path: Path) -> list[CorpusCase]:
    text = path.read_text()
    headers = list(_HEADER.finditer(text))
    cases = []
    for index, header in enumerate(headers):
        end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
        body = text[header.end() : end]
        divider = _DIVIDER.search(body)
        if divider is None:
            raise ValueError(f"{path}: case {header['name']!r} has no '---' divider")
        source = body[: divider.start()].strip("\n") + "\n"
        expected = body[divider.end() :].strip()
        cases.append(CorpusCase(path, header["name"].strip(), source, expected))
    return cases


def all_cases() -> list[CorpusCase]:
    return [case for path in sorted(CORPUS.glob("*.txt")) for case in read_cases(path)]


def render(cases: list[CorpusCase]) -> str:
    rule = "=" * 80
    dashes = "-" * 80
    parts = []
    for case in cases:
        parts.append(
            f"{rule}\n{case.name}\n{rule}\n\n{case.source.rstrip()}\n\n{dashes}\n\n{case.expected}\n"
        )
    return "\n".join(parts)


def update() -> None:
    sys.path.insert(0, str(CORPUS.parent.parent.parent))
    from affine_lsp.syntax import SourceDocument, pretty_sexp

    for path in sorted(CORPUS.glob("*.txt")):
        cases = read_cases(path)
        for case in cases:
            case.expected = pretty_sexp(SourceDocument(case.source).tree.root_node)
        path.write_text(render(cases))
        print(f"updated {path.name}: {len(cases)} cases")


if __name__ == "__main__":
    if sys.argv[1:] == ["--update"]:
        update()
    else:
        print(__doc__)
