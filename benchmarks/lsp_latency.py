"""Language-server latency: affine-lsp vs mlir-lsp-server on the same files, same run.

    python benchmarks/lsp_latency.py [--sizes 1000 20000 200000] [--edits 40]
                                     [--hovers 40] [--repeat 1] [--json out.json]

Drives `../shared/tools/lspbench.py` (JSON-RPC over stdio) against each server
on `gen_affine.py` files and prints, per size: open -> diagnostics, edit ->
diagnostics p50/p95, hover p95, peak RSS, and our figures as a ratio of
mlir-lsp-server's (below 1 means faster / smaller).

Goals (issue: the language server): edit -> diagnostics p50 <= 15 ms at 20k and
200k lines and <= 3x mlir-lsp-server at 1k; open -> diagnostics <= 1 s at 20k;
hover p95 <= 20 ms; peak RSS <= 300 MB at 200k.

`--syntax-error` runs on copies of the files with one broken line a third of the
way in (an `affine.load` whose `]` is missing), so that every edit is made to a
document with syntax errors (where a re-parse also parses the items with errors
once more without re-use, see `SourceDocument`); `--edit-pause MS` waits that
long after each edit's diagnostics, as a typist does.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import LSPBENCH, ROOT, generated_file

MLIR_LSP_SERVER = Path("/usr/lib/llvm-22/bin/mlir-lsp-server")
OURS = f"{shlex.quote(sys.executable)} -m affine_lsp serve"

GOALS = {  # (size or None for any size, metric) -> limit, checked when printing
    (20000, "edit_p50"): 15.0,
    (200000, "edit_p50"): 15.0,
    (20000, "open"): 1000.0,
    (None, "hover_p95"): 20.0,
    (200000, "rss"): 300.0,
}


def run_lspbench(server: str, path: Path, args: argparse.Namespace) -> dict:
    """One lspbench run; returns its summary (or {"error": ...})."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    command = [
        sys.executable,
        str(LSPBENCH),
        "--server",
        server,
        "--file",
        str(path),
        "--edits",
        str(args.edits),
        "--hovers",
        str(args.hovers),
        "--symbols",
        str(args.symbols),
        "--repeat",
        str(args.repeat),
        "--timeout",
        str(args.timeout),
        "--edit-pause",
        str(args.edit_pause),
        "--json",
        str(out),
        "--quiet",
    ]
    try:
        subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout * 20, check=False
        )
        data = json.loads(out.read_text())
    except (OSError, ValueError, subprocess.TimeoutExpired) as error:
        return {"error": str(error)}
    finally:
        out.unlink(missing_ok=True)
    summary = data["summary"]
    return {
        "open": summary["open_ms"].get("p50"),
        "edit_p50": summary["edits"].get("p50"),
        "edit_p95": summary["edits"].get("p95"),
        "hover_p95": summary["hover_all"].get("p95"),
        "symbols_p50": summary["symbols"].get("p50"),
        "rss": summary["vmhwm_mib"].get("max"),
        "errors": data["info"]["errors"],
        "hover_nonnull": f"{data['info']['hover_nonnull']}/{data['info']['hover_total']}",
        "open_diagnostics": data["info"]["open_diag_count"],
    }


def with_syntax_error(path: Path) -> Path:
    """A copy of `path` whose first `affine.load` after a third of it lacks its `]`."""
    lines = path.read_text().splitlines(keepends=True)
    index = next(
        i
        for i in range(len(lines) // 3, len(lines))
        if "affine.load" in lines[i] and "]" in lines[i]
    )
    lines[index] = lines[index].replace("]", "", 1)
    broken = path.with_name(path.stem + "_broken.mlir")
    broken.write_text("".join(lines))
    return broken


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:9.1f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or theirs is None or theirs <= 0:
        return "-"
    return f"{ours / theirs:6.2f}x"


ROWS = [
    ("open -> diagnostics (ms)", "open"),
    ("edit -> diagnostics p50 (ms)", "edit_p50"),
    ("edit -> diagnostics p95 (ms)", "edit_p95"),
    ("hover p95 (ms)", "hover_p95"),
    ("documentSymbol p50 (ms)", "symbols_p50"),
    ("peak RSS (MiB)", "rss"),
]


def _goal(size: int, metric: str) -> float | None:
    return GOALS.get((size, metric), GOALS.get((None, metric)))


def report(size: int, ours: dict, theirs: dict, syntax_error: bool = False) -> list[str]:
    lines = [
        f"\n## {size} lines{' (with a syntax error)' if syntax_error else ''}",
        f"{'metric':<30}{'affine-lsp':>11}{'mlir-lsp':>11}{'ratio':>9}  goal",
    ]
    for label, key in ROWS:
        goal = _goal(size, key)
        note = ""
        if goal is not None and ours.get(key) is not None:
            note = f"<= {goal:g}: {'met' if ours[key] <= goal else 'MISSED'}"
        if size == 1000 and key == "edit_p50" and ours.get(key) and theirs.get(key):
            note = f"<= 3x: {'met' if ours[key] <= 3 * theirs[key] else 'MISSED'}"
        lines.append(
            f"{label:<30}{_cell(ours.get(key)):>11}{_cell(theirs.get(key)):>11}"
            f"{_ratio(ours.get(key), theirs.get(key)):>9}  {note}"
        )
    lines.append(
        f"(affine-lsp: {ours.get('open_diagnostics')} diagnostics on open, hovers answered "
        f"{ours.get('hover_nonnull')}, errors {ours.get('errors')}; mlir-lsp-server: "
        f"hovers {theirs.get('hover_nonnull')}, errors {theirs.get('errors')})"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 20000, 200000])
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--hovers", type=int, default=40)
    parser.add_argument("--symbols", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--no-mlir", action="store_true", help="skip mlir-lsp-server")
    parser.add_argument(
        "--syntax-error", action="store_true", help="edit documents that have a syntax error"
    )
    parser.add_argument(
        "--edit-pause", type=float, default=0.0, help="ms to wait after each edit's diagnostics"
    )
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    if not LSPBENCH.exists():
        print(f"lspbench not found at {LSPBENCH}", file=sys.stderr)
        return 2
    use_mlir = not args.no_mlir and MLIR_LSP_SERVER.exists()
    results = {}
    for size in args.sizes:
        path = generated_file(size)
        if args.syntax_error:
            path = with_syntax_error(path)
        print(f"# {size} lines: affine-lsp ...", file=sys.stderr, flush=True)
        ours = run_lspbench(OURS, path, args)
        theirs: dict = {}
        if use_mlir:
            print(f"# {size} lines: mlir-lsp-server ...", file=sys.stderr, flush=True)
            theirs = run_lspbench(str(MLIR_LSP_SERVER), path, args)
        results[size] = {"affine-lsp": ours, "mlir-lsp-server": theirs}
        print("\n".join(report(size, ours, theirs, args.syntax_error)), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
