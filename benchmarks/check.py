"""Checker benchmark: parse + semantic model + every check of a gen_affine.py file.

    python benchmarks/check.py [--lines 20000] [--repeat 5]

The stages are those of `check_document` (what `affine-lsp check` runs), with the
garbage collector paused while the model is built and checked, as there; the
collection that frees the model afterwards is timed apart ("then freed in").
Wall and CPU times are printed: the machine is shared, compare CPU.

Goal (issue 17): checking a 20k-line file takes at most 300 ms in total.
"""

from __future__ import annotations

import argparse
import gc
import time

from _common import generated_file

from affine_lsp.checks import CheckOptions, ModuleContext, check_item, check_module
from affine_lsp.checks.runner import syntax_diagnostics
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument

GOAL_SECONDS = 0.3
STAGES = ("parse", "ir", "checks", "total")


def measure(data: bytes) -> dict[str, float]:
    """Seconds (wall and CPU) spent in each stage of one full check."""
    clocks = [(time.perf_counter(), time.process_time())]
    enabled = gc.isenabled()
    gc.disable()
    try:
        document = SourceDocument(data)
        clocks.append((time.perf_counter(), time.process_time()))
        model = build_module(document.tree.root_node)
        clocks.append((time.perf_counter(), time.process_time()))
        context = ModuleContext.from_model(model)
        options = CheckOptions()
        found = syntax_diagnostics(document) + check_module(model, context, options)
        for item in model.items:
            found += check_item(item, context, options)
        clocks.append((time.perf_counter(), time.process_time()))
    finally:
        if enabled:
            gc.enable()
    del model, context, document
    freeing = time.perf_counter()
    gc.collect()
    result = {"diagnostics": len(found), "freed": time.perf_counter() - freeing}
    for index, stage in enumerate(STAGES[:3]):
        result[stage] = clocks[index + 1][0] - clocks[index][0]
        result[stage + "_cpu"] = clocks[index + 1][1] - clocks[index][1]
    result["total"] = clocks[-1][0] - clocks[0][0]
    result["total_cpu"] = clocks[-1][1] - clocks[0][1]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = generated_file(args.lines)
    data = path.read_bytes()
    runs = [measure(data) for _ in range(args.repeat)]
    best = {key: min(run[key] for run in runs) for key in runs[0] if key != "diagnostics"}

    def ms(stage: str) -> str:
        return f"{best[stage] * 1000:.0f} ms (CPU {best[stage + '_cpu'] * 1000:.0f})"

    median_total = sorted(run["total"] for run in runs)[len(runs) // 2]
    print(
        f"check {args.lines} lines ({len(data) / 1e6:.2f} MB), best of {args.repeat}: "
        f"parse {ms('parse')}, IR {ms('ir')}, checks {ms('checks')}, total {ms('total')}; "
        f"median total {median_total * 1000:.0f} ms; then freed in "
        f"{best['freed'] * 1000:.0f} ms; {runs[0]['diagnostics']} diagnostics"
    )
    verdict = "meets" if best["total"] <= GOAL_SECONDS else "misses"
    print(f"{verdict} the goal: at most {GOAL_SECONDS * 1000:.0f} ms for a {args.lines}-line file")


if __name__ == "__main__":
    main()
