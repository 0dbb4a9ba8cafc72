"""The live server under a storm (`affine_lsp.testing.storm`): seeded random
incremental edits (ranges inside, at and past the ends of lines and of the
document), requests at random and out-of-range positions, cancellations, bursts
and reopened documents. The server must stay alive, answer every request, and end
with the diagnostics (and semantic tokens) a fresh analysis of the final text gives.
`benchmarks/storm.py` runs longer storms."""

from __future__ import annotations

from pathlib import Path

import pytest

from affine_lsp.testing.progen import GenConfig, generate
from affine_lsp.testing.storm import run_storm
from tests.server.conftest import ENV

STEPS = 3000  # per seed; about 10 s each
ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "checks" / "fixtures" / "mlir"


def storm_texts() -> list[str]:
    """The three documents opened (a valid program, a fixture of many `// -----`
    chunks, a generated program with fusable nests), then one full of mistakes
    that whole-text replacements may bring in."""
    fixture = max(sorted(FIXTURES.glob("*.mlir")), key=lambda p: p.stat().st_size)
    return [
        (ROOT / "examples" / "producer_consumer.mlir").read_text(),
        fixture.read_text(),
        generate(3, GenConfig()).text,
        (ROOT / "examples" / "mistakes.mlir").read_text(),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_storm(seed, tmp_path):
    report = run_storm(
        seed,
        steps=STEPS,
        texts=storm_texts(),
        time_limit=240,
        env=ENV,
        log=tmp_path / "server.log",
    )
    print("\n" + report.summary())
    assert report.alive and report.exit_code == 0, report.summary()
    assert report.requests > 500 and report.answered == report.requests, report.summary()
    assert report.edits > 500 and report.cancellations > 20, report.summary()
    assert report.documents_checked == 3, report.summary()
    assert report.diagnostics_equal and report.tokens_equal, report.mismatches
    assert report.outcomes["result"] > report.requests / 2, report.summary()
    # Error answers are answers; an exception inside the server is logged with its
    # traceback (and answered with an empty result), which must never happen.
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and " ERROR " not in log, log[-3000:]
