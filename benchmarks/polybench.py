"""PolyBench 4.2 kernels in affine MLIR, timed in variants against LLVM's Polly.

Each kernel of benchmarks/polybench/ is built from the same lowered IR as: `original`
(clang -O3 -march=native), `polly`, `polly-best` (Polly's flags, and the kernel's own),
`mlir-passes` (MLIR 22's affine passes before lowering), `recipe` (the kernel's chain of
affine-lsp steps), `optimize` and `optimize-tune` (affine-lsp optimize --all [--tune], when
this checkout has it), and on request `c-reference` (the C reference at -O2). The variants
run interleaved, pinned to one core; every run's checksums must equal the original's.

    python benchmarks/polybench.py [--kernels gemm,2mm] [--variants original,recipe]
        [--repeat 3] [--json OUT] [--keep DIR] [--tiny] [--jobs 2] [--cpu N]

Exit status: 0, 1 if a variant built from our transformations computes something else,
2 if the tools are missing or the arguments are wrong.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.testing import polybench, polybench_build  # noqa: E402
from affine_lsp.testing.polybench_build import (  # noqa: E402
    Build,
    Builder,
    Cache,
    Measurement,
    geometric_mean,
)

OURS = ("recipe", "optimize", "optimize-tune")
"""Variants made by our own transformations: one computing something else fails the run."""


def main(argv: list[str] | None = None) -> int:
    ns = _arguments(argv)
    tools = polybench_build.find_tools()
    if isinstance(tools, str):
        print(f"cannot run the PolyBench benchmark: {tools}", file=sys.stderr)
        return 2
    try:
        kernels = polybench.kernels(names=ns.kernels)
    except polybench.KernelError as error:
        print(f"polybench: {error}", file=sys.stderr)
        return 2
    unknown = [v for v in ns.variants if v not in polybench_build.VARIANTS]
    if unknown:
        known = ", ".join(polybench_build.VARIANTS)
        print(f"polybench: unknown variant {', '.join(unknown)} (known: {known})", file=sys.stderr)
        return 2
    variants = ns.variants if "original" in ns.variants else ["original", *ns.variants]
    builder = Builder(tools, Cache(ns.cache) if ns.cache else None)
    started = time.perf_counter()
    builds = _build_all(builder, kernels, variants, ns.tiny, ns.jobs)
    print(f"built {len(builds)} variants in {time.perf_counter() - started:.0f} s", flush=True)
    if ns.keep:
        _keep(builds, ns.keep)
    cpu = ns.cpu if ns.cpu is not None else max(os.sched_getaffinity(0))
    if tools.taskset is None:
        print("taskset not found: runs are not pinned to a core", file=sys.stderr)
    results: dict[str, dict[str, Measurement]] = {}
    for kernel in kernels:
        kernel_builds = [builds[(kernel.name, v)] for v in variants]
        results[kernel.name] = polybench_build.measure_interleaved(
            kernel_builds, tools, ns.repeat, cpu, progress=_progress
        )
    _progress("")
    _print_table(kernels, variants, results, ns.tiny, ns.repeat, cpu)
    wrong_ours = _print_wrong(results)
    _print_steps(kernels, results)
    if ns.json:
        _write_json(ns.json, kernels, variants, results, ns)
    return 1 if wrong_ours else 0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=_names, help="comma-separated kernels (default: all)")
    parser.add_argument(
        "--variants",
        type=_names,
        default=list(polybench_build.DEFAULT_VARIANTS),
        help="comma-separated variants (default: all but c-reference; original is always run)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="rounds of runs (default 3)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--keep", type=Path, help="copy the built files into this folder")
    parser.add_argument("--tiny", action="store_true", help="the suite's sizes (correctness)")
    parser.add_argument("--jobs", type=int, default=2, help="builds at once (default 2)")
    parser.add_argument("--cpu", type=int, help="the core to pin runs to (default: the last)")
    parser.add_argument("--cache", type=Path, help=f"cache folder ({polybench_build.CACHE_DIR})")
    ns = parser.parse_args(argv)
    if ns.repeat < 1 or ns.jobs < 1:
        parser.error("--repeat and --jobs take a positive number")
    return ns


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _progress(message: str) -> None:
    if sys.stdout.isatty():
        print(f"{message[:68]:70}", end="\r", flush=True)


def _seconds(value: float) -> str:
    if value >= 1:
        return f"{value:.3f}s"
    if value >= 1e-3:
        return f"{value * 1e3:.1f}ms"
    return f"{value * 1e6:.0f}us"


def _build_all(
    builder: Builder,
    kernels: list[polybench.Kernel],
    variants: list[str],
    tiny: bool,
    jobs: int,
) -> dict[tuple[str, str], Build]:
    pairs = [(k, v) for k in kernels for v in variants]

    def one(pair: tuple[polybench.Kernel, str]) -> Build:
        kernel, variant = pair
        _progress(f"building {kernel.name} {variant}")
        return builder.build(kernel, variant, dict(kernel.tiny) if tiny else None)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        built = list(pool.map(one, pairs))
    return {(b.kernel, b.variant): b for b in built}


def _keep(builds: dict[tuple[str, str], Build], folder: Path) -> None:
    for (kernel, variant), build in builds.items():
        target = folder / kernel
        target.mkdir(parents=True, exist_ok=True)
        for label, path in build.files.items():
            name = "driver.c" if label == "driver.c" else f"{variant}.{label.split('.')[-1]}"
            shutil.copy2(path, target / name)
        log = [f"{build.status} {build.message}".strip()]
        log += [f"{o.status}: {o.step}: {o.message}" for o in build.outcomes]
        (target / f"{variant}.log").write_text("\n".join(log) + "\n", encoding="utf-8")
    print(f"built files kept in {folder}")


def _cell(measurement: Measurement, original: float | None) -> str:
    build = measurement.build
    if build.status == "unavailable":
        return "n/a"
    if build.status != "ok":
        return "BUILD FAILED"
    if measurement.error:
        return "RUN FAILED"
    if measurement.wrong:
        return "WRONG"
    median = measurement.median
    if median is None:
        return "-"
    if original is None or build.variant == "original":
        return _seconds(median)
    return f"{_seconds(median)} {original / median:5.2f}x"


def _ratio(measurement: Measurement, original: Measurement) -> float | None:
    mine, base = measurement.median, original.median
    if not (measurement.valid and original.valid) or mine is None or base is None or mine <= 0:
        return None
    return base / mine


def _print_table(
    kernels: list[polybench.Kernel],
    variants: list[str],
    results: dict[str, dict[str, Measurement]],
    tiny: bool,
    repeat: int,
    cpu: int,
) -> None:
    sizes = "tiny sizes" if tiny else "benchmark sizes"
    print(
        f"\nmedian of {repeat} interleaved runs on core {cpu}, {sizes}; ratio = original / variant"
    )
    width = 15
    print(f"{'kernel':12}" + "".join(f"{v:>{width}}" for v in variants))
    for kernel in kernels:
        row = results[kernel.name]
        base = row["original"].median
        print(f"{kernel.name:12}" + "".join(f"{_cell(row[v], base):>{width}}" for v in variants))
    means = []
    for variant in variants:
        ratios = [_ratio(results[k.name][variant], results[k.name]["original"]) for k in kernels]
        found = [r for r in ratios if r is not None]
        mean = geometric_mean(found)
        means.append("-" if mean is None else f"{mean:.2f}x ({len(found)})")
    print(f"{'geomean':12}" + "".join(f"{m:>{width}}" for m in means))


def _print_wrong(results: dict[str, dict[str, Measurement]]) -> bool:
    wrong_ours = False
    for kernel, row in results.items():
        for variant, measurement in row.items():
            build = measurement.build
            if measurement.wrong:
                wrong_ours |= variant in OURS
                print(f"\n!!! WRONG: {kernel} {variant}: {'; '.join(measurement.wrong)}")
            elif build.status == "failed":
                print(f"\nbuild failed: {kernel} {variant}: {build.message}")
            elif measurement.error:
                print(f"\nrun failed: {kernel} {variant}: {measurement.error}")
    return wrong_ours


def _print_steps(
    kernels: list[polybench.Kernel], results: dict[str, dict[str, Measurement]]
) -> None:
    lines = []
    for kernel in kernels:
        for variant, measurement in results[kernel.name].items():
            for outcome in measurement.build.outcomes:
                if outcome.status != "applied":
                    lines.append(
                        f"  {kernel.name} {variant}: {outcome.status}: {outcome.step}: "
                        f"{outcome.message}"
                    )
    applied = sum(
        o.status == "applied"
        for row in results.values()
        for m in row.values()
        for o in m.build.outcomes
    )
    print(f"\nsteps applied: {applied}; not applied: {len(lines)}")
    for line in lines:
        print(line)
    unavailable = {
        m.build.message
        for row in results.values()
        for m in row.values()
        if m.build.status == "unavailable"
    }
    for message in sorted(unavailable):
        print(f"n/a: {message}")


def _write_json(
    path: Path,
    kernels: list[polybench.Kernel],
    variants: list[str],
    results: dict[str, dict[str, Measurement]],
    ns: argparse.Namespace,
) -> None:
    data: dict[str, object] = {
        "repeat": ns.repeat,
        "tiny": ns.tiny,
        "kernels": {},
        "geomean": {},
    }
    table: dict[str, object] = {}
    for kernel in kernels:
        row = results[kernel.name]
        table[kernel.name] = {
            "sizes": dict(kernel.tiny if ns.tiny else kernel.sizes),
            "calls": kernel.calls,
            "variants": {
                variant: {
                    "status": m.build.status,
                    "message": m.build.message,
                    "times": m.times,
                    "median": m.median,
                    "ratio": _ratio(m, row["original"]),
                    "checksums": m.checksums,
                    "wrong": m.wrong,
                    "run_error": m.error,
                    "steps": [dataclasses.asdict(o) for o in m.build.outcomes],
                }
                for variant, m in row.items()
            },
        }
    data["kernels"] = table
    data["geomean"] = {
        variant: geometric_mean(
            [
                r
                for k in kernels
                if (r := _ratio(results[k.name][variant], results[k.name]["original"])) is not None
            ]
        )
        for variant in variants
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {path}")


if __name__ == "__main__":
    raise SystemExit(main())
