"""Security rules, checked on the source: nothing in a document is ever executed,
every external program is started from an argument list (never a shell) with a
timeout, and the analysis and the server read files in one place only (Check
Workspace, which stays inside the workspace folders: see test_safe_edits)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYTHON_TREES = ["affine_lsp", "benchmarks", "tests"]

RUN_LIKE = {"run", "call", "check_call", "check_output"}
FORBIDDEN_CALLS = {
    ("os", "system"),
    ("os", "popen"),
    ("os", "execv"),
    ("os", "execvp"),
    ("os", "execl"),
    ("os", "spawnv"),
    ("os", "startfile"),
    ("subprocess", "getoutput"),
    ("subprocess", "getstatusoutput"),
    ("pickle", "loads"),
    ("pickle", "load"),
    ("marshal", "loads"),
}
FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}
# Long-running children (a server under test, the benchmark's servers, code-server for
# the VS Code end-to-end test): they are stopped and waited for by their owners rather
# than given a timeout.
POPEN_ALLOWED = {
    "affine_lsp/testing/lsp_client.py",
    "tests/editors/code_server.py",
    "tests/server/test_serve_cli.py",
}


def _sources() -> list[Path]:
    return sorted(p for tree in PYTHON_TREES for p in (ROOT / tree).rglob("*.py"))


def _calls(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield node


def _dotted(func: ast.expr) -> tuple[str, str] | None:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.value.id, func.attr
    return None


def _where(path: Path, node: ast.expr) -> str:
    return f"{path.relative_to(ROOT)}:{node.lineno}"


def test_no_shell_no_eval_no_unpickling():
    found = []
    for path in _sources():
        for call in _calls(path):
            dotted = _dotted(call.func)
            if dotted in FORBIDDEN_CALLS:
                found.append(f"{_where(path, call)}: {'.'.join(dotted)}")
            if isinstance(call.func, ast.Name) and call.func.id in FORBIDDEN_BUILTINS:
                found.append(f"{_where(path, call)}: {call.func.id}()")
            for keyword in call.keywords:
                if keyword.arg == "shell" and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                ):
                    found.append(f"{_where(path, call)}: shell=")
    assert not found, found


def test_external_programs_get_an_argument_list_and_a_timeout():
    found = []
    seen = 0
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        for call in _calls(path):
            dotted = _dotted(call.func)
            if dotted is None or dotted[0] != "subprocess":
                continue
            seen += 1
            if call.args and isinstance(call.args[0], ast.Constant | ast.JoinedStr | ast.BinOp):
                found.append(f"{_where(path, call)}: a command string, not a list")
            keywords = {k.arg for k in call.keywords}
            if dotted[1] in RUN_LIKE and "timeout" not in keywords:
                found.append(f"{_where(path, call)}: subprocess.{dotted[1]} without a timeout")
            if dotted[1] == "Popen" and relative not in POPEN_ALLOWED:
                found.append(f"{_where(path, call)}: a long-running child outside {POPEN_ALLOWED}")
    assert seen >= 5 and not found, found


def test_only_check_workspace_reads_files_in_the_analysis_and_the_server():
    readers = []
    for tree in (
        "affine_lsp/ide",
        "affine_lsp/server",
        "affine_lsp/checks",
        "affine_lsp/ir",
        "affine_lsp/poly",
        "affine_lsp/transforms",
        "affine_lsp/syntax",
    ):
        for path in sorted((ROOT / tree).rglob("*.py")):
            for call in _calls(path):
                func = call.func
                reads = (isinstance(func, ast.Name) and func.id == "open") or (
                    isinstance(func, ast.Attribute)
                    and (
                        func.attr in {"read_text", "read_bytes", "fdopen", "urlopen"}
                        or _dotted(func) in {("os", "open"), ("io", "open")}
                    )
                )
                if reads:
                    readers.append(path.relative_to(ROOT).as_posix())
    # The optimizer reads the machine's cache sizes and CPU flags from /sys and
    # /proc (never a document or a workspace file).
    allowed = {"affine_lsp/ide/workspace.py", "affine_lsp/transforms/performance/machine.py"}
    assert set(readers) <= allowed, readers


@pytest.mark.parametrize(
    "text",
    [
        '"os.system"("touch /tmp/affine-lsp-pwned") : () -> ()',
        "func.func @f() {\n"
        "  %0 = \"py.eval\"() {code = \"__import__('os').system('x')\"} : () -> i32\n"
        "  return\n}\n",
    ],
)
def test_document_text_is_only_data(text, tmp_path):
    """Ops named like programs are diagnosed or hovered, never run."""
    from affine_lsp.checks import check_document
    from affine_lsp.syntax import SourceDocument

    marker = Path("/tmp/affine-lsp-pwned")
    marker.unlink(missing_ok=True)
    check_document(SourceDocument(text))
    assert not marker.exists()
