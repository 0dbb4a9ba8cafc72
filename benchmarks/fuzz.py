"""Long fuzzing run of the analysis (the suite runs a short seeded slice).

    python benchmarks/fuzz.py [--cases 20000] [--seed 1]

Prints documents tried, crashes (with the failing input saved), the slowest
case, and how many documents of at most 100 KB took longer than 1 s to analyse
(every stage but resolving a chosen fusion, which has a time limit of its own;
such documents are saved too).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from pathlib import Path

from _common import ROOT, SHARED, generated_file

from affine_lsp.poly.budgets import FUZZ_ANALYSIS_SECONDS as ANALYSIS_BUDGET
from affine_lsp.testing.fuzz import analyze
from affine_lsp.testing.mutate import PATHOLOGICAL_KINDS, mutate, pathological
from affine_lsp.testing.upstream import chunk_texts


def seeds() -> list[bytes]:
    corpus = SHARED / "corpus"
    texts = [p.read_bytes() for p in sorted(corpus.glob("*/*.mlir"))]
    texts.append(generated_file(2000, seed=3).read_bytes())
    for seed_file in sorted((SHARED / "seeds").glob("*")):
        texts.append(seed_file.read_bytes())
    # Split the corpus files into chunks, as mlir-opt --split-input-file would.
    chunks = []
    for text in texts:
        chunks += [c for c in text.split(b"// -----") if c.strip()]
    upstream = SHARED / "upstream"
    if (upstream / "chunks.tsv").is_file():  # every dialect's custom syntax
        chunks += chunk_texts(upstream, every=3)
    return chunks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", type=Path, default=ROOT / "benchmarks" / "results" / "fuzz")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    corpus = seeds()
    crashes = 0
    over_budget = 0
    slowest = (0.0, "")
    slowest_command = (0.0, "")
    started = time.perf_counter()
    inputs = [(f"pathological:{k}", pathological(k)) for k in PATHOLOGICAL_KINDS]
    for index in range(args.cases):
        data = mutate(rng.choice(corpus), rng)[:100_000]
        inputs.append((f"case {index}", data))
    for label, data in inputs:
        try:
            result = analyze(data, rng)
        except Exception:  # noqa: BLE001 - a fuzzer reports every failure
            crashes += 1
            args.save.mkdir(parents=True, exist_ok=True)
            path = args.save / f"crash-{crashes}.mlir"
            path.write_bytes(data)
            print(f"CRASH on {label} (saved to {path}):\n{traceback.format_exc()}", file=sys.stderr)
            continue
        if result.analysis_seconds > slowest[0]:
            slowest = (result.analysis_seconds, label)
        commands = result.seconds - result.analysis_seconds
        if commands > slowest_command[0]:
            slowest_command = (commands, label)
        if len(data) <= 100_000 and result.analysis_seconds > ANALYSIS_BUDGET:
            over_budget += 1
            args.save.mkdir(parents=True, exist_ok=True)
            path = args.save / f"slow-{over_budget}.mlir"
            path.write_bytes(data)
            stages = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in result.stage_seconds.items())
            print(f"over the budget: {label} ({len(data)} bytes, saved to {path}): {stages}")
    elapsed = time.perf_counter() - started
    print(f"documents tried: {len(inputs)} ({elapsed:.0f} s)")
    print(f"crashes: {crashes}")
    print(f"slowest analysis: {slowest[0] * 1000:.0f} ms ({slowest[1]})")
    print(f"slowest resolved fusion: {slowest_command[0] * 1000:.0f} ms ({slowest_command[1]})")
    print(f"documents <= 100 KB analysed in over {ANALYSIS_BUDGET:g} s: {over_budget}")
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
