"""Differential test of the view-like memref rules against mlir-opt: seeded random
subviews, casts, reinterpret_casts, transposes and reshapes (`memref_cases.py`),
judged by MLIR. We must never report an error MLIR does not; we may accept what
MLIR rejects only where MLIR compares layout maps by their spelling: a transposed
type with dynamic strides is rejected unless written exactly as MLIR builds it,
which we do not emulate."""

from __future__ import annotations

import re

import pytest

from tests.checks.memref_cases import generate
from tests.checks.test_conformance import _errors
from tests.oracle_tools import mlir_opt_path, run_tool

CASES = 400


@pytest.mark.oracle
def test_view_like_memref_ops_agree_with_mlir():
    chunks = generate(seed=11, count=CASES)
    result = run_tool(
        [mlir_opt_path(), "--allow-unregistered-dialect", "--split-input-file", "-o", "-", "-"],
        stdin="// -----\n".join(chunks),
        check=False,
        timeout=300,
    )
    first_lines, line = [], 1
    for chunk in chunks:
        first_lines.append(line)
        line += chunk.count("\n") + 1
    rejected = set()
    for match in re.finditer(r"<stdin>:(\d+):\d+: error:", result.stderr):
        number = int(match.group(1))
        rejected.add(max(i for i, first in enumerate(first_lines) if first <= number))
    false_errors, misses = [], []
    for index, chunk in enumerate(chunks):
        ours = [d.message for _, d in _errors(chunk)]
        if ours and index not in rejected:
            false_errors.append((chunk, ours))
        elif not ours and index in rejected:
            misses.append(chunk)
    print(f"\ncases: {CASES}, MLIR rejects {len(rejected)}, we miss {len(misses)}")
    assert not false_errors, false_errors[:3]
    assert all("memref.transpose" in chunk for chunk in misses), misses[:3]
    assert len(rejected) > CASES // 4
