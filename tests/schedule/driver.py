"""Programs around a kernel, to run it with mlir-runner: every memref argument of
`@kernel` allocated, filled with a deterministic pattern, the kernel called and
every memref printed bit for bit (each f64 as the i64 of its bits)."""

from __future__ import annotations

import re

_ARGUMENT = re.compile(r"(%\w+): (memref<([0-9x]+)xf64>|f64|index)")


def with_main(kernel: str) -> str:
    """`kernel` (a module text whose `@kernel` takes f64 memrefs) with a `@main`."""
    header = kernel[kernel.index("func.func @kernel(") :].split("{", 1)[0]
    arguments = _ARGUMENT.findall(header)
    shapes = [[int(d) for d in dims.split("x")] for _, _, dims in arguments if dims]
    lines = ["func.func @main() {"]
    lines += [
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %c7 = arith.constant 7 : index",
        "  %c11 = arith.constant 11 : index",
    ]
    names = []
    for k, shape in enumerate(shapes):
        kind = f"memref<{'x'.join(map(str, shape))}xf64>"
        name = f"%buf{k}"
        names.append((name, kind))
        lines.append(f"  {name} = memref.alloc() : {kind}")
        ivs = [f"%x{k}_{d}" for d in range(len(shape))]
        indent = "  "
        for d, extent in enumerate(shape):
            lines.append(f"{indent}%n{k}_{d} = arith.constant {extent} : index")
        for d in range(len(shape)):
            lines.append(f"{indent}scf.for {ivs[d]} = %c0 to %n{k}_{d} step %c1 {{")
            indent += "  "
        terms = ivs[0]
        for d in range(1, len(shape)):
            lines.append(f"{indent}%m{k}_{d} = arith.muli {terms}, %c11 : index")
            lines.append(f"{indent}%a{k}_{d} = arith.addi %m{k}_{d}, {ivs[d]} : index")
            terms = f"%a{k}_{d}"
        lines.append(f"{indent}%s{k} = arith.addi {terms}, %c{[7, 11][k % 2]} : index")
        lines.append(f"{indent}%r{k} = arith.remui %s{k}, %c{[11, 7][k % 2]} : index")
        lines.append(f"{indent}%i{k} = arith.index_cast %r{k} : index to i64")
        lines.append(f"{indent}%f{k} = arith.sitofp %i{k} : i64 to f64")
        lines.append(f"{indent}memref.store %f{k}, {name}[{', '.join(ivs)}] : {kind}")
        for _ in shape:
            indent = indent[:-2]
            lines.append(f"{indent}}}")
    operands, types = [], []
    buffers = iter(names)
    for position, (_, kind, dims) in enumerate(arguments):
        if dims:
            name, kind = next(buffers)
        elif kind == "f64":
            name = f"%scalar{position}"
            lines.append(f"  {name} = arith.constant {1.5 + position / 4} : f64")
        else:
            name = f"%size{position}"
            lines.append(f"  {name} = arith.constant {5 + position} : index")
        operands.append(name)
        types.append(kind)
    lines.append(f"  call @kernel({', '.join(operands)}) : ({', '.join(types)}) -> ()")
    for k, ((name, kind), shape) in enumerate(zip(names, shapes, strict=True)):
        bits = kind.replace("xf64>", "xi64>")
        lines.append(f"  %bits{k} = memref.alloc() : {bits}")
        ivs = [f"%y{k}_{d}" for d in range(len(shape))]
        indent = "  "
        for d in range(len(shape)):
            lines.append(f"{indent}scf.for {ivs[d]} = %c0 to %n{k}_{d} step %c1 {{")
            indent += "  "
        lines.append(f"{indent}%v{k} = memref.load {name}[{', '.join(ivs)}] : {kind}")
        lines.append(f"{indent}%b{k} = arith.bitcast %v{k} : f64 to i64")
        lines.append(f"{indent}memref.store %b{k}, %bits{k}[{', '.join(ivs)}] : {bits}")
        for _ in shape:
            indent = indent[:-2]
            lines.append(f"{indent}}}")
        lines.append(f"  %u{k} = memref.cast %bits{k} : {bits} to memref<*xi64>")
        lines.append(f"  call @printMemrefI64(%u{k}) : (memref<*xi64>) -> ()")
    lines += ["  return", "}"]
    return (
        "func.func private @printMemrefI64(memref<*xi64>)\n\n"
        + kernel
        + "\n"
        + "\n".join(lines)
        + "\n"
    )
