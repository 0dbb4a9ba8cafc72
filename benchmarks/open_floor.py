"""The least opening a file can cost here, next to mlir-lsp-server's whole open.

    python benchmarks/open_floor.py [--sizes 1000 20000 200000] [--repeat 3]

Any analysis of a file first parses it with tree-sitter (C, in py-tree-sitter),
then reads the tree from Python: a model needs at least the kind and the byte
range of every named node. This times those two steps alone, with nothing built
from them, in runs alternated with mlir-lsp-server's open -> diagnostics (parse
and verify; `../shared/tools/lspbench.py`), and prints them as ratios of it.

On two cores a second process can read half of the nodes, but it must parse the
whole text as well (a tree cannot be shared between processes), so the floor
with two processes is parse + read / 2. Issue 17 asks for the complete set of
diagnostics within 2x mlir-lsp-server's time at 1k and 20k lines and 1.5x at
200k: where the floor alone is above that, no model built from Python calls on
py-tree-sitter's nodes can meet it; elsewhere the last column is the CPU time
left (both processes together) for building the model and checking it.
The garbage collector is paused while the nodes are read, as it is while a
model is built.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

from _common import generated_file
from lsp_latency import MLIR_LSP_SERVER, run_lspbench

from affine_lsp.syntax import Node, new_parser

GOALS = {1000: 2.0, 20000: 2.0, 200000: 1.5}


def read_named_nodes(root: Node) -> int:
    """Visit every named node once and read its kind and byte range; the sum of
    those, so that nothing is optimised away."""
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        total += node.kind_id + node.start_byte + node.end_byte
        stack.extend(node.named_children)
    return total


def mlir_open_seconds(path: Path) -> float:
    """mlir-lsp-server's open -> diagnostics for `path`, one fresh session."""
    only_open = argparse.Namespace(
        edits=0, hovers=0, symbols=0, repeat=1, timeout=120.0, edit_pause=0.0
    )
    found = run_lspbench(str(MLIR_LSP_SERVER), path, only_open)
    if "error" in found:
        sys.exit(f"mlir-lsp-server's open could not be measured: {found['error']}")
    return found["open"] / 1000


def measure(lines: int, repeat: int) -> dict[str, float]:
    """Medians over `repeat` alternated runs: parse, read, mlir-lsp-server's open."""
    path = generated_file(lines)
    data = path.read_bytes()
    parser = new_parser()
    samples: dict[str, list[float]] = {"parse": [], "read": [], "mlir": []}
    for _ in range(repeat):
        started = time.perf_counter()
        tree = parser.parse(data)
        parsed = time.perf_counter()
        gc.disable()
        try:
            read_named_nodes(tree.root_node)
        finally:
            gc.enable()
        samples["parse"].append(parsed - started)
        samples["read"].append(time.perf_counter() - parsed)
        del tree
        gc.collect()
        samples["mlir"].append(mlir_open_seconds(path))
    return {key: statistics.median(values) for key, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 20000, 200000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not MLIR_LSP_SERVER.exists():
        sys.exit(f"needs {MLIR_LSP_SERVER} (apt-get install -y mlir-22-tools)")
    print("lines   mlir-lsp open   parse            read nodes       floor, 2 processes  goal")
    for lines in args.sizes:
        found = measure(lines, args.repeat)
        mlir = found["mlir"]
        floor = found["parse"] + found["read"] / 2
        cells = [
            f"{s * 1000:7.1f} ms {s / mlir:5.2f}x" for s in (found["parse"], found["read"], floor)
        ]
        goal = GOALS.get(lines)
        verdict = ""
        if goal is not None:
            left = (goal * mlir - found["parse"]) * 2 - found["read"]
            verdict = f"{goal:.1f}x: " + (
                f"{left * 1000:.0f} ms left" if left > 0 else "out of reach"
            )
        print(f"{lines:>6}   {mlir * 1000:7.1f} ms   " + "  ".join(cells) + f"   {verdict}")


if __name__ == "__main__":
    main()
