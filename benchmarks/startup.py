"""Start-up of the language server, measured in one run against its floor.

    python benchmarks/startup.py [--repeat 5] [--pause 2.0] [--json out.json]

Per round (the rounds interleave the measurements, so that the machine's load
weighs on them alike), three wall-clock times:

- the floor: `python -c "import pygls.lsp.server, lsprotocol.types"`, what any
  pygls server pays before it can read a message;
- `initialize`: from starting `affine-lsp serve` to its answer to `initialize`
  (sent at once, as editors do);
- the first code action at a loop: `initialized`, a small file opened
  (`examples/producer_consumer.mlir`), its diagnostics, then the request at the
  first `affine.for` — its answer's time, and how many refactorings it lists:
  asked once the server has warmed up (`--pause` seconds after the diagnostics,
  as a person reads the file first), and, with another server, at once (it then
  waits for the rest of the server to load: the warm-up that follows `initialize`).

Prints the medians, the ratio initialize / floor (goal: at most 1.5) and the
first code action (goal: at most 100 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _common import ROOT

from affine_lsp.testing.lsp_client import LspClient

FLOOR = [sys.executable, "-c", "import pygls.lsp.server, lsprotocol.types"]
SERVER = [sys.executable, "-m", "affine_lsp", "serve"]
EXAMPLE = ROOT / "examples" / "producer_consumer.mlir"


def floor_seconds() -> float:
    started = time.perf_counter()
    subprocess.run(FLOOR, check=True, timeout=120)
    return time.perf_counter() - started


def server_round(env: dict[str, str], pause: float) -> tuple[float, float, int]:
    """(initialize seconds, first code action seconds, refactorings it listed)."""
    text = EXAMPLE.read_text()
    uri = EXAMPLE.as_uri()
    line = next(n for n, t in enumerate(text.splitlines()) if "affine.for" in t)
    started = time.perf_counter()
    with LspClient(SERVER, env=env) as client:
        answer = client.call(
            "initialize", {"processId": None, "rootUri": None, "capabilities": {}}, timeout=120
        )
        initialize = time.perf_counter() - started
        assert "result" in answer, answer
        client.notify("initialized", {})
        item = {"uri": uri, "languageId": "mlir", "version": 1, "text": text}
        client.notify("textDocument/didOpen", {"textDocument": item})
        client.diagnostics(uri, 1, timeout=120)
        time.sleep(pause)
        at = {"line": line, "character": text.splitlines()[line].index("affine.for") + 2}
        params = {
            "textDocument": {"uri": uri},
            "range": {"start": at, "end": at},
            "context": {"diagnostics": [], "triggerKind": 1},
        }
        asked = time.perf_counter()
        actions = client.call("textDocument/codeAction", params, timeout=120)
        first_action = time.perf_counter() - asked
        refactorings = [a for a in actions.get("result") or [] if a.get("kind") != "quickfix"]
        client.stop()
    return initialize, first_action, len(refactorings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pause", type=float, default=2.0, help="seconds (default: 2)")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    rounds: dict[str, list[float]] = {"floor": [], "initialize": [], "warm": [], "at_once": []}
    listed: list[int] = []
    for _ in range(args.repeat):
        rounds["floor"].append(floor_seconds())
        initialize, warm, count = server_round(env, args.pause)
        rounds["initialize"].append(initialize)
        rounds["warm"].append(warm)
        listed.append(count)
        initialize, at_once, count = server_round(env, 0.0)
        rounds["initialize"].append(initialize)
        rounds["at_once"].append(at_once)
        listed.append(count)
    median = {name: statistics.median(values) * 1000 for name, values in rounds.items()}
    ratio = median["initialize"] / median["floor"]
    print(f"floor (import pygls, lsprotocol)    {median['floor']:7.0f} ms")
    print(
        f"initialize answered                 {median['initialize']:7.0f} ms   ({ratio:.2f}x floor)"
    )
    print(
        f"first code action at a loop         {median['warm']:7.0f} ms   "
        f"({min(listed)} refactorings; asked {args.pause:g} s after the diagnostics)"
    )
    print(f"  asked as soon as diagnostics came {median['at_once']:7.0f} ms")
    print(f"(medians of {args.repeat} rounds; goals: at most 1.5x, at most 100 ms)")
    if args.json:
        figures = {"median_ms": median, "ratio": ratio, "refactorings": min(listed)}
        with open(args.json, "w") as handle:
            json.dump({**figures, "rounds_s": rounds}, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
