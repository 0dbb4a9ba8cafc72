"""How long `affine-lsp fuse --all` takes per PolyBench kernel, as written and after its
recipe: wall and CPU seconds of each run, and the largest.

    python benchmarks/fuse_time.py [--kernels gemm,2mm] [--repeat 1] [--recipes DIR]
        [--limit 3.0] [--checkout DIR ...]

The recipes' outputs are made first (the kernel's steps, as `benchmarks/polybench.py` runs
them); `--recipes DIR` keeps them there and reuses the files already in it. `fuse --all` runs
with time limits off (`AFFINE_LSP_TIME_LIMITS=off`), as the recipes do, so that only isl's
operation caps decide what it does, and with Python's bytecode cached (in a scratch
folder, filled by a first run that is not timed), as an installed package has it: a
setting that forbids the cache (`PYTHONDONTWRITEBYTECODE`) would add the compilation
of every module to each run. CPU seconds are what `fuse --all` itself costs, wall
seconds what a user waits for on a machine that may be shared. Exit status 1 when a run
fails or takes more CPU seconds than `--limit`. With `--checkout DIR` (repeatable), the
`fuse --all` of each of those checkouts runs instead, interleaved run by run (before and
after a change, on one machine at one time).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import timed_child  # noqa: E402

from affine_lsp.poly import budgets  # noqa: E402
from affine_lsp.testing import polybench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300.0


def _recipe_text(kernel: polybench.Kernel, folder: Path | None) -> str:
    kept = folder / f"{kernel.name}.recipe.mlir" if folder is not None else None
    if kept is not None and kept.exists():
        return kept.read_text(encoding="utf-8")
    text = polybench.run_steps(kernel.text(), kernel.recipe).text
    if kept is not None:
        kept.write_text(text, encoding="utf-8")
    return text


def _environment(checkout: Path, scratch: Path) -> dict[str, str]:
    environment = {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "PYTHONPYCACHEPREFIX": str(scratch / "bytecode" / checkout.name),
        budgets.ENVIRONMENT_VARIABLE: "off",
    }
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


def _fuse_all(path: Path, checkout: Path = ROOT) -> tuple[float, float, str]:
    """Wall and CPU seconds of one `fuse --all` (of `checkout`), and what it did."""
    environment = _environment(checkout, path.parent)
    argv = [sys.executable, "-m", "affine_lsp", "fuse", str(path), "--all"]
    wall, cpu, done = timed_child(argv, environment, TIMEOUT, path.parent)
    if done.returncode != 0:
        return wall, cpu, f"failed ({done.returncode}): {done.stderr.strip()[-200:]}"
    fused = sum(" fused " in line for line in done.stderr.splitlines())
    removed = sum(" removed " in line for line in done.stderr.splitlines())
    return wall, cpu, f"{fused} fused, {removed} removed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", help="comma-separated kernel names (default: all)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--recipes", type=Path, help="keep (and reuse) the recipes' outputs here")
    parser.add_argument("--limit", type=float, default=3.0, help="CPU seconds allowed per run")
    parser.add_argument(
        "--checkout",
        type=Path,
        action="append",
        help="time the fuse --all of this checkout (repeatable; default: this one)",
    )
    ns = parser.parse_args(argv)
    checkouts: list[Path] = [c.resolve() for c in ns.checkout or [ROOT]]
    labels = {c: c.name if len(checkouts) > 1 else "" for c in checkouts}
    names = ns.kernels.split(",") if ns.kernels else None
    if ns.recipes is not None:
        ns.recipes.mkdir(parents=True, exist_ok=True)
    worst = {(form, c): 0.0 for form in ("as written", "recipe") for c in checkouts}
    failed = False
    width = max(len(label) for label in labels.values())
    print(f"{'kernel':14} {'form':10} {'':{width}} {'wall s':>7} {'CPU s':>7}  result", flush=True)
    with tempfile.TemporaryDirectory(prefix="affine-lsp-fuse-time-") as scratch:
        for checkout in checkouts:  # (the bytecode cache filled, untimed)
            subprocess.run(
                [sys.executable, "-m", "affine_lsp", "fuse", "--help"],
                capture_output=True,
                env=_environment(checkout, Path(scratch)),
                check=False,
                cwd=scratch,
                timeout=TIMEOUT,
            )
        for kernel in polybench.kernels(names=names):
            forms = {"as written": kernel.text(), "recipe": _recipe_text(kernel, ns.recipes)}
            for form, text in forms.items():
                path = Path(scratch) / f"{kernel.name}.mlir"
                path.write_text(text, encoding="utf-8")
                for _ in range(ns.repeat):
                    for checkout in checkouts:
                        wall, cpu, result = _fuse_all(path, checkout)
                        worst[form, checkout] = max(worst[form, checkout], cpu)
                        slow = cpu > ns.limit
                        failed |= slow or result.startswith("failed")
                        mark = "  (over the limit)" if slow else ""
                        print(
                            f"{kernel.name:14} {form:10} {labels[checkout]:{width}} {wall:7.2f} "
                            f"{cpu:7.2f}  {result}{mark}",
                            flush=True,
                        )
    print()
    for checkout in checkouts:
        print(
            f"largest CPU time{' of ' + labels[checkout] if labels[checkout] else ''}: "
            f"{worst['as written', checkout]:.2f} s as written, "
            f"{worst['recipe', checkout]:.2f} s after the recipe (limit {ns.limit:.1f} s)"
        )
    print(f"load now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
