"""Binary input (an object file, random bytes, UTF-16 text) gets one clear syntax error
where it stops being text, not a cascade of them: in `check`, `parse`, the editor's
analysis and the server alike; one stray byte in a text stays an ordinary error."""

from __future__ import annotations

import random
import sys

import pytest

from affine_lsp.checks import Diagnostic, check_document
from affine_lsp.cli import main
from affine_lsp.ide.analysis import DocumentAnalysis
from affine_lsp.syntax import SourceDocument

VALID = b"func.func @f(%n: index) {\n  %x = arith.addi %n, %n : index\n  return\n}\n"


def _elf_header() -> bytes:
    """The first 4 KiB of an executable as an ELF file begins: a header, then tables."""
    rng = random.Random(7)
    header = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x02\x00>\x00\x01\x00\x00\x00"
    tables = bytes(rng.choice(b"\0\0\0\0\x01\x02@\x08 8\x10\xff") for _ in range(4096))
    return (header + tables)[:4096]


def _random(seed: int) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(4096))


def _interpreter() -> bytes:
    """A piece of this machine's Python executable, from its middle."""
    with open(sys.executable, "rb") as handle:
        handle.seek(8192)
        return handle.read(4096)


BINARIES = {
    "elf header": _elf_header(),
    "random 1": _random(1),
    "random 2": _random(2),
    "utf-16 text": VALID.decode().encode("utf-16"),
    "not utf-8": b"\xc3\x28\xa0\xa1\xe2\x28\xa1" * 64,
    "text then binary": VALID + _random(3),
    "interpreter": _interpreter(),
}


def _checked(data: bytes) -> list[Diagnostic]:
    return check_document(SourceDocument(data))


@pytest.mark.parametrize("name", sorted(BINARIES))
def test_binary_input_gets_one_error(name):
    data = BINARIES[name]
    found = _checked(data)
    assert len(found) == 1, [d.message for d in found]
    assert found[0].code == "syntax"
    assert found[0].message.startswith("not MLIR text: ")
    assert found[0].message.endswith("(a binary file?); no syntax error after it is reported")
    if name == "text then binary":
        assert found[0].span.start_byte >= len(VALID)


@pytest.mark.parametrize("name", sorted(BINARIES))
def test_the_editor_and_check_agree_on_binary_input(name):
    data = BINARIES[name]
    analysis = DocumentAnalysis.from_text(data)
    analysis.analyse_all()
    assert analysis.diagnostics() == _checked(data)


def test_errors_before_the_binary_part_are_kept():
    broken = VALID.replace(b"%n, %n", b"%n, %m")
    found = _checked(broken + _random(4))
    assert [d.message for d in found][:1] == ["use of undeclared SSA value name '%m'"]
    assert len(found) == 2 and found[1].message.startswith("not MLIR text: ")


def test_the_messages_name_the_byte():
    def message(data: bytes) -> str:
        (found,) = _checked(data)
        return found.message.split(" (")[0]

    # (bytes written as \xNN, never raw)
    assert message(b"\x7fELF\x02\x01") == "not MLIR text: \\x7f, a control character"
    assert message(b"func.func @f() {\n  %x = \0\x01 : i32\n}\n") == (
        "not MLIR text: \\x00, a NUL byte"
    )
    assert message(b"\xff\xfe\xfd\xfc") == "not MLIR text: \\xff, not UTF-8"
    # as an editor shows bytes that are not UTF-8
    assert message("\ufffd\ufffd\ufffd".encode()) == (
        "not MLIR text: U+FFFD, the character put for bytes that are not UTF-8"
    )


@pytest.mark.parametrize(
    "text",
    [
        b"func.func @f() {\n  // caf\xe9 \xff\xfe \0 \x01\n  return\n}\n",  # in a comment
        b'func.func @f() attributes {s = "\xe9\xff \0 \x01"} {\n  return\n}\n',  # a string
        b"func.func @f() {\n  \0\0 return\n}\n",  # NULs, which MLIR skips as blanks
    ],
)
def test_what_mlir_reads_as_text_is_text(text):
    """Comments and strings hold any byte; NULs are blanks: mlir-opt accepts these
    texts (MLIR's own tests hold a NUL, in test/IR/zero_whitespace.mlir)."""
    assert _checked(text) == []


def test_one_stray_byte_is_an_ordinary_error_and_the_rest_is_reported():
    text = b"func.func @f() {\n  %x = caf\xe9 : i32\n  %y = arith.addi %q, %q : i32\n  return\n}\n"
    assert [d.message for d in _checked(text)] == [
        "unexpected '\\xe9'",
        "use of undeclared SSA value name '%q'",
        "use of undeclared SSA value name '%q'",
    ]


@pytest.mark.parametrize("command", ["check", "parse"])
def test_the_commands_print_one_line(command, tmp_path, capsys):
    path = tmp_path / "a.out"
    path.write_bytes(_elf_header())
    assert main([command, str(path)]) == 1
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert out.startswith(f"{path}:1:1: error: not MLIR text: \\x7f, a control character")
