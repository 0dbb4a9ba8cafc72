"""Checker benchmark: parse + semantic model + every check of a gen_affine.py file.

    python benchmarks/check.py [--lines 20000] [--repeat 5]

Goal (issue 3): checking a 20k-line file takes under 1 s in total.
"""

from __future__ import annotations

import argparse
import time

from _common import generated_file

from affine_lsp.checks import CheckOptions, ModuleContext, check_item, check_module
from affine_lsp.checks.runner import syntax_diagnostics
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument


def measure(data: bytes) -> dict[str, float]:
    """Seconds spent in each stage of one full check."""
    start, cpu_start = time.perf_counter(), time.process_time()
    document = SourceDocument(data)
    parsed = time.perf_counter()
    model = build_module(document.tree.root_node)
    built = time.perf_counter()
    context = ModuleContext.from_model(model)
    options = CheckOptions()
    found = syntax_diagnostics(document) + check_module(model, context, options)
    for item in model.items:
        found += check_item(item, context, options)
    checked = time.perf_counter()
    return {
        "parse": parsed - start,
        "ir": built - parsed,
        "checks": checked - built,
        "total": checked - start,
        "cpu": time.process_time() - cpu_start,
        "diagnostics": len(found),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = generated_file(args.lines)
    data = path.read_bytes()
    runs = [measure(data) for _ in range(args.repeat)]
    best = {key: min(run[key] for run in runs) for key in ("parse", "ir", "checks", "total")}
    median_total = sorted(run["total"] for run in runs)[len(runs) // 2]
    median_cpu = sorted(run["cpu"] for run in runs)[len(runs) // 2]
    print(
        f"check {args.lines} lines ({len(data) / 1e6:.2f} MB), best of {args.repeat}: "
        f"parse {best['parse'] * 1000:.0f} ms, IR {best['ir'] * 1000:.0f} ms, "
        f"checks {best['checks'] * 1000:.0f} ms, total {best['total'] * 1000:.0f} ms "
        f"(median total {median_total * 1000:.0f} ms, of which CPU {median_cpu * 1000:.0f} ms; "
        f"{runs[0]['diagnostics']} diagnostics)"
    )
    verdict = "meets" if median_total < 1.0 else "misses"
    print(f"{verdict} the goal: under 1 s for a {args.lines}-line file")


if __name__ == "__main__":
    main()
