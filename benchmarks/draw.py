"""Pictures of iteration spaces: the hover's picture of a 32×32 nest (target p95 <=
30 ms: the whole loop hover with its picture, in process, as the server computes it)
and `affine-lsp draw` on larger nests.

    python benchmarks/draw.py [--repeat N]

Exit status 1 if the hover target is missed or a picture is not what it should be.
"""

from __future__ import annotations

import argparse
import base64
import re
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from affine_lsp.ide.analysis import DocumentAnalysis  # noqa: E402
from affine_lsp.ide.hover import hover  # noqa: E402
from affine_lsp.ide.picture import draw  # noqa: E402
from affine_lsp.ir.model import AffineForOp  # noqa: E402
from affine_lsp.poly.session import Unknown  # noqa: E402

HOVER_TARGET = 0.030
SVG = "{http://www.w3.org/2000/svg}"


def stencil(size: int) -> str:
    """A `size`×`size` nest with two uniform dependences (RAW (1, 0) and (0, 1))."""
    return f"""func.func @stencil(%A: memref<{size + 1}x{size + 1}xf32>) {{
  affine.for %i = 1 to {size + 1} {{
    affine.for %j = 1 to {size + 1} {{
      %a = affine.load %A[%i - 1, %j] : memref<{size + 1}x{size + 1}xf32>
      %b = affine.load %A[%i, %j - 1] : memref<{size + 1}x{size + 1}xf32>
      %c = arith.addf %a, %b : f32
      affine.store %c, %A[%i, %j] : memref<{size + 1}x{size + 1}xf32>
    }}
  }}
  return
}}
"""


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def hover_picture(repeat: int) -> bool:
    analysis = DocumentAnalysis.from_text(stencil(32))
    analysis.analyse_all()
    offset = bytes(analysis.document.data).index(b"affine.for") + 1
    found = hover(analysis, offset, pictures=True)  # warm up
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        found = hover(analysis, offset, pictures=True)
        samples.append(time.perf_counter() - started)
    assert found is not None
    match = re.search(r"base64,([A-Za-z0-9+/=]+)[|)]", found.markdown)
    root = ET.fromstring(base64.b64decode(match.group(1))) if match else None
    circles = len(list(root.iter(f"{SVG}circle"))) if root is not None else 0
    p50, p95 = statistics.median(samples), percentile(samples, 0.95)
    good = circles == 1024 and p95 <= HOVER_TARGET
    print(
        f"hover picture, 32x32 nest: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
        f"(target p95 {HOVER_TARGET * 1000:.0f} ms), {circles} points, "
        f"{len(found.markdown) / 1024:.0f} KiB of Markdown {'ok' if good else 'FAILED'}"
    )
    return good


def cli_picture(size: int) -> bool:
    analysis = DocumentAnalysis.from_text(stencil(size))
    analysis.analyse_all()
    view = analysis.view_at(bytes(analysis.document.data).index(b"affine.for") + 1)
    assert view is not None
    loop = next(op for op in view.index.ops if isinstance(op, AffineForOp))
    started = time.perf_counter()
    result = draw(loop, view.model, analysis.document)
    seconds = time.perf_counter() - started
    if isinstance(result, Unknown):
        print(f"draw, {size}x{size} nest: {result.reason} FAILED")
        return False
    space, svg = result
    print(
        f"draw, {size}x{size} nest: {seconds * 1000:.0f} ms, {len(space.points):,} of "
        f"{space.total:,} points, {len(space.arrows):,} arrows, {len(svg) / 1024:.0f} KiB"
    )
    return space.total == size * size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    ns = parser.parse_args(argv)
    ok = hover_picture(ns.repeat)
    for size in (64, 256, 1024):
        ok &= cli_picture(size)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
