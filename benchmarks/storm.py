"""Long storms against the live language server (the suite runs two short ones).

    python benchmarks/storm.py [--seeds 10] [--steps 10000] [--big 5000]

Each storm opens three documents — the suite's storm documents, or with `--big N`
a gen_affine.py file of N lines in place of the first — and sends random
incremental edits, requests at random and out-of-range positions, cancellations
and bursts (`affine_lsp.testing.storm`). Prints, per seed and in total, the
requests sent and answered, and whether the final diagnostics and semantic tokens
equal a fresh analysis; a storm also fails if the server logged an exception.
A failing storm's server log and notifications are saved under
benchmarks/results/storm/.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import ROOT, generated_file

sys.path.insert(0, str(ROOT))

from affine_lsp.testing.storm import run_storm  # noqa: E402
from tests.robustness.test_server_storm import storm_texts  # noqa: E402
from tests.server.conftest import ENV  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=0, help="lines of a generated first document")
    parser.add_argument("--save", type=Path, default=ROOT / "benchmarks" / "results" / "storm")
    args = parser.parse_args()
    texts = storm_texts()
    if args.big:
        texts[0] = generated_file(args.big).read_text()
    sent = answered = failures = 0
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        args.save.mkdir(parents=True, exist_ok=True)
        log = args.save / f"seed-{seed}.log"
        report = run_storm(seed, args.steps, texts, time_limit=1800, env=ENV, log=log)
        print(f"seed {seed}: {report.summary()}", flush=True)
        sent += report.requests
        answered += report.answered
        quiet = log.exists() and "Traceback" not in log.read_text(errors="replace")
        ok = (
            quiet
            and report.alive
            and report.exit_code == 0
            and report.answered == report.requests
            and report.diagnostics_equal
            and report.tokens_equal
        )
        if ok:
            log.unlink(missing_ok=True)
            log.with_suffix(".notifications.jsonl").unlink(missing_ok=True)
        else:
            failures += 1
            print(f"  FAILED (server log and notifications in {log.parent}): {report.mismatches}")
    print(f"storms: {args.seeds}, requests sent {sent}, answered {answered}, failed: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
