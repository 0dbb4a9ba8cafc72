"""The C driver of a PolyBench kernel, generated from the kernel's signature.

The kernel is called through MLIR's default memref calling convention (each memref
argument expanded to allocated and aligned pointers, offset, sizes and strides), so the
kernel's text needs no attribute. The driver includes the kernel's `.c` file (its `init` and
`reference`, with the sizes as macros), allocates every array 64-byte aligned and zeroed,
initialises them, times the calls only, and prints:

    time 0.412345678
    checksum C 8f3a0c1d2e3f4a5b

one checksum (FNV-1a over the bytes) per array argument. Compiled with `-DREFERENCE` it calls
the C reference instead of the kernel.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_SIGNATURE = re.compile(r"func\.func\s+@([\w$.]+)\s*\((.*?)\)\s*(?:attributes\b|\{)", re.DOTALL)
_ARGUMENT = re.compile(r"^%([\w$.-]+)\s*:\s*(?:f64|memref<((?:\d+x)+)f64>)$")

_PRELUDE = """\
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
"""

_HELPERS = """\
static double *alloc_array(size_t count) {
  size_t bytes = (count * sizeof(double) + 63) / 64 * 64;
  double *data = aligned_alloc(64, bytes);
  if (!data) {
    fprintf(stderr, "out of memory\\n");
    exit(2);
  }
  memset(data, 0, bytes);
  return data;
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = data;
  uint64_t hash = 1469598103934665603ULL;
  for (size_t k = 0; k < bytes; k++) {
    hash ^= p[k];
    hash *= 1099511628211ULL;
  }
  return hash;
}
"""


class SignatureError(ValueError):
    """A kernel whose arguments the driver cannot pass (the reason in words)."""


@dataclass(frozen=True)
class Argument:
    """An argument of the kernel: an f64 scalar (`shape` None) or a static f64 memref."""

    name: str
    shape: tuple[int, ...] | None

    @property
    def count(self) -> str:
        """The number of elements, as a C expression."""
        assert self.shape is not None
        return " * ".join(f"(size_t){d}" for d in self.shape)


def signature(text: str, function: str) -> list[Argument]:
    """The arguments of `@function` in `text`."""
    for match in _SIGNATURE.finditer(text):
        if match.group(1) != function:
            continue
        arguments = []
        for item in (a.strip() for a in match.group(2).split(",")):
            if not item:
                continue
            found = _ARGUMENT.match(item)
            if found is None:
                raise SignatureError(
                    f"@{function}: argument {item!r} is neither f64 nor a static f64 memref"
                )
            dims = found.group(2)
            shape = tuple(int(d) for d in dims.split("x") if d) if dims else None
            arguments.append(Argument(found.group(1), shape))
        return arguments
    raise SignatureError(f"no func.func @{function} in the kernel")


def _strides(shape: tuple[int, ...]) -> list[int]:
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return strides


def driver_source(
    function: str,
    arguments: list[Argument],
    sizes: dict[str, int],
    c_file: Path,
    calls: int = 1,
) -> str:
    """The driver's C source (see the module's docstring)."""
    prototype: list[str] = []
    kernel_args: list[str] = []
    reference_args: list[str] = []
    init_args: list[str] = []
    declarations: list[str] = []
    checksums: list[str] = []
    for index, argument in enumerate(arguments):
        name = f"arg{index}"
        if argument.shape is None:
            declarations.append(f"  double {name} = 0.0;")
            prototype.append("double")
            kernel_args.append(name)
            reference_args.append(name)
            init_args.append(f"&{name}")
            continue
        declarations.append(f"  double *{name} = alloc_array({argument.count});")
        rank = len(argument.shape)
        prototype += ["double *", "double *", *["int64_t"] * (1 + 2 * rank)]
        shape = [str(d) for d in argument.shape]
        strides = [str(s) for s in _strides(argument.shape)]
        kernel_args += [name, name, "0", *shape, *strides]
        reference_args.append(f"(void *){name}")
        init_args.append(f"(void *){name}")
        checksums.append(
            f'  printf("checksum {argument.name} %016llx\\n", '
            f"(unsigned long long)fnv1a({name}, sizeof(double) * {argument.count}));"
        )
    macros = "".join(f"#define {name} {value}\n" for name, value in sizes.items())
    body = [
        "int main(void) {",
        *declarations,
        f"  init({', '.join(init_args)});",
        "  struct timespec start, stop;",
        "  clock_gettime(CLOCK_MONOTONIC, &start);",
        f"  for (int call = 0; call < {calls}; call++) {{",
        "#ifdef REFERENCE",
        f"    reference({', '.join(reference_args)});",
        "#else",
        f"    {function}({', '.join(kernel_args)});",
        "#endif",
        "  }",
        "  clock_gettime(CLOCK_MONOTONIC, &stop);",
        '  printf("time %.9f\\n", (double)(stop.tv_sec - start.tv_sec) +',
        "                         1e-9 * (double)(stop.tv_nsec - start.tv_nsec));",
        *checksums,
        "  return 0;",
        "}",
    ]
    return (
        _PRELUDE
        + macros
        + f"#include {json.dumps(str(c_file))}\n\n"
        + f"void {function}({', '.join(prototype)});\n\n"
        + _HELPERS
        + "\n"
        + "\n".join(body)
        + "\n"
    )
