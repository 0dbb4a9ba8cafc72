"""A nest shown alive before the proof (`dead._observed`) is one the exact comparison
of its removal refuses too: the quick check never changes a verdict (fuse --all's
fixtures and the PolyBench kernels, in their suite sizes)."""

from __future__ import annotations

from affine_lsp.checks import TextEdit
from affine_lsp.poly import Budget, IslSession, PolyError, Window
from affine_lsp.syntax import Span
from affine_lsp.testing import polybench
from affine_lsp.transforms.fusion.copy import CannotEdit, nest_lines
from affine_lsp.transforms.fusion.dead import _may_be_dead, _observed
from affine_lsp.transforms.fusion.nests import functions, loops_in, memrefs_touched
from affine_lsp.transforms.fusion.verify import check_removal
from tests.fusion.helpers import model_of
from tests.fusion.test_fixtures import cases

UNBOUNDED = Budget(max_operations=None, time_limit=None)


def test_a_nest_shown_alive_is_never_removed():
    shown = removable = 0
    texts = [case.text for case in cases()]
    texts += [kernel.text(kernel.tiny) for kernel in polybench.kernels()]
    for text in texts:
        data = text.encode()
        model = model_of(data)
        for function in functions(model):
            assert function.body is not None and function.body.entry is not None
            block = function.body.entry
            for nest in loops_in(block):
                index = block.operations.index(nest)
                later = block.operations[index + 1 :]
                if not _may_be_dead(nest, later):
                    continue
                writes = memrefs_touched(nest)[1]
                last = max(
                    k
                    for k, op in enumerate(later, index + 1)
                    if any(writes & touched for touched in memrefs_touched(op))
                )
                try:
                    start, end = nest_lines(data, nest, True)
                    session = IslSession(UNBOUNDED)
                    window = Window(session, block, index, last, model.alias_table())
                    alive = _observed(window, nest)
                    edits = [TextEdit(Span(start, end), "")]
                    legal = check_removal(session, window, data, model, function, edits).legal
                except (CannotEdit, PolyError):
                    continue
                shown += alive
                removable += legal
                assert not (alive and legal), (function.symbol, nest.span.start_byte)
    assert shown >= 3 and removable >= 1
