"""The cost model's view of a nest read from the IR alone (what fusion's choices
and the hints use), against the optimizer's isl-based reading."""

from __future__ import annotations

from affine_lsp.transforms.performance import body_of, lines_per_iteration
from tests.optimize.helpers import loop_on_line
from tests.optimize.kernels import MVT


def test_a_perfect_band_and_its_references():
    data, _, loop = loop_on_line(MVT, 13)  # x2[i] += A[j, i] * y2[j]
    body = body_of(loop, data)
    assert body is not None
    assert [(loop.name, loop.trip) for loop in body.band] == [("%i", 64), ("%j", 64)]
    strides = {(ref.array, ref.writes): (ref.stride(0), ref.stride(1)) for ref in body.refs}
    assert strides == {
        ("%x2", False): (1, 0),
        ("%x2", True): (1, 0),
        ("%A", False): (1, 64),
        ("%y2", False): (0, 1),
    }
    # j innermost: A jumps a row per iteration; i innermost: everything consecutive
    assert lines_per_iteration(body, 1, 64) > lines_per_iteration(body, 0, 64)


def test_an_access_it_cannot_read_gives_no_body():
    text = MVT.replace(
        "      %a = affine.load %A[%j, %i] : memref<64x64xf64>",
        "      %jj = affine.apply affine_map<(d0) -> (d0)>(%j)\n"
        "      %a = affine.load %A[%jj, %i] : memref<64x64xf64>",
    )
    data, _, loop = loop_on_line(text, 13)
    assert body_of(loop, data) is None
