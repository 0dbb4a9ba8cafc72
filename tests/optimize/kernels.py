"""Small kernels in the shapes of PolyBench's, for the optimizer's tests, and a
`@main` that runs one with mlir-runner and prints every array bit for bit."""

from __future__ import annotations

from pathlib import Path

from affine_lsp.ir import FuncOp, build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.transforms.performance import Machine

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture(name: str) -> str:
    return (FIXTURES / f"{name}.mlir").read_text()


SMALL_MACHINE = Machine(
    caches=(2 * 1024, 16 * 1024, 256 * 1024),
    line_bytes=64,
    vector_bytes=32,
    registers=16,
    source="tests",
)
"""Caches small enough that the kernels below are worth tiling."""

GEMM = _fixture("gemm")

JACOBI_2D = _fixture("jacobi_2d")

JACOBI_1D = _fixture("jacobi_1d")

SEIDEL_2D = _fixture("seidel_2d")

MVT = _fixture("mvt")

GESUMMV = _fixture("gesummv")

HEAT_3D = _fixture("heat_3d")

FDTD_2D = _fixture("fdtd_2d")

SYRK = _fixture("syrk")

SYMM = _fixture("symm")

SYR2K = _fixture("syr2k")


def runnable(text: str) -> str:
    """`text` (one function over static memrefs and floats) with a `@main` that fills
    the arrays, calls it and prints every element's bits."""
    from affine_lsp.transforms.optimize.tune import harness

    model = build_module(SourceDocument(text).tree.root_node)
    function = next(op for op in model.walk() if isinstance(op, FuncOp))
    pieces = [text, harness(function), "func.func private @printMemrefI64(memref<*xi64>)"]
    main = ["func.func @main() {", "  call @affine_lsp_init() : () -> ()"]
    main.append("  call @affine_lsp_run() : () -> ()")
    body = function.body
    assert body is not None and body.entry is not None
    for position, argument in enumerate(body.entry.arguments):
        type_ = str(argument.type)
        if not type_.startswith("memref<"):
            continue
        shape = type_[len("memref<") : type_.rindex("x")]
        bits = f"memref<{shape}xi64>"
        dims = shape.split("x")
        ivs = [f"%q{position}_{d}" for d in range(len(dims))]
        main.append(f"  %m{position} = memref.get_global @affine_lsp_g{position} : {type_}")
        main.append(f"  %b{position} = memref.alloc() : {bits}")
        for depth, (iv, size) in enumerate(zip(ivs, dims, strict=True)):
            main.append(f"  {'  ' * depth}affine.for {iv} = 0 to {size} {{")
        indent = "  " * (len(dims) + 1)
        index = ", ".join(ivs)
        main.append(f"{indent}%e{position} = affine.load %m{position}[{index}] : {type_}")
        main.append(f"{indent}%i{position} = arith.bitcast %e{position} : f64 to i64")
        main.append(f"{indent}affine.store %i{position}, %b{position}[{index}] : {bits}")
        for depth in reversed(range(len(dims))):
            main.append(f"  {'  ' * depth}}}")
        main.append(f"  %u{position} = memref.cast %b{position} : {bits} to memref<*xi64>")
        main.append(f"  call @printMemrefI64(%u{position}) : (memref<*xi64>) -> ()")
    main.append("  return\n}")
    pieces.append("\n".join(main))
    return "\n".join(pieces) + "\n"
