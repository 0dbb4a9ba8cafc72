"""Every pair of nests in MLIR's own tests, in both modes, and hovers on every op:
answers (legal, illegal, unknown), never exceptions or hangs."""

from __future__ import annotations

from affine_lsp.ir import build_module
from affine_lsp.ir.model import (
    AffineAccessOp,
    AffineForOp,
    AffineIfOp,
    AffineParallelOp,
    MemRefAccessOp,
)
from affine_lsp.poly import Budget, describe_access, describe_condition, describe_loop
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.fusion import PRODUCER_CONSUMER, SIBLING, FusionOptions, PairFusion
from affine_lsp.transforms.fusion.nests import functions, loops_in, nest_blocks
from tests.corpus_data import chunks, require_shared

OPTIONS = FusionOptions(budget=Budget(max_operations=5_000_000, time_limit=2.0))


def _models():
    require_shared()
    for chunk in chunks():
        data = chunk.text.encode()
        yield chunk, data, build_module(SourceDocument(data).tree.root_node)


def test_hovers_on_every_op_of_the_corpus():
    for _, _, model in _models():
        for op in model.walk():
            if isinstance(op, AffineForOp | AffineParallelOp):
                describe_loop(op, model)
            elif isinstance(op, AffineAccessOp | MemRefAccessOp):
                describe_access(op, model)
            elif isinstance(op, AffineIfOp):
                describe_condition(op, model)


def test_fusion_of_corpus_pairs():
    pairs = 0
    for index, (chunk, data, model) in enumerate(_models()):
        if not chunk.verifies or index % 3:
            continue
        for function in functions(model):
            for block in nest_blocks(function):
                loops = loops_in(block)
                for first, second in zip(loops, loops[1:], strict=False):
                    for mode in (PRODUCER_CONSUMER, SIBLING):
                        fusion = PairFusion(data, model, function, first, second, mode, OPTIONS)
                        for depth in fusion.depths():
                            candidate = fusion.candidate(depth)
                            assert candidate.legal or candidate.reason
                            assert "internal error" not in (candidate.reason or "")
                        assert "internal error" not in (fusion.failure or "")
                        pairs += 1
    assert pairs > 50
