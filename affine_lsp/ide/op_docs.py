"""Short descriptions and the custom syntax of the operations we know, for hovers
and completion. The descriptions are ours; the syntax is the dialects' grammar."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpDoc:
    summary: str
    syntax: str
    snippet: str = ""  # completion snippet after the op name (LSP snippet syntax)


_DIM_SYMBOL_USES = "dim-and-symbol-use-list ::= `(` ssa-use-list? `)` (`[` ssa-use-list? `]`)?"

OP_DOCS: dict[str, OpDoc] = {
    "affine.apply": OpDoc(
        "Evaluates a single-result affine map on index operands bound to its dimensions "
        "and symbols; the result is an index.",
        "operation ::= ssa-id `=` `affine.apply` affine-map-attribute dim-and-symbol-use-list\n"
        + _DIM_SYMBOL_USES,
        " ${1:#map}(${2:%d})[${3:%s}]",
    ),
    "affine.min": OpDoc(
        "The smallest of the results of an affine map applied to its operands.",
        "operation ::= ssa-id `=` `affine.min` affine-map-attribute dim-and-symbol-use-list",
        " ${1:#map}(${2:%d})[${3:%s}]",
    ),
    "affine.max": OpDoc(
        "The largest of the results of an affine map applied to its operands.",
        "operation ::= ssa-id `=` `affine.max` affine-map-attribute dim-and-symbol-use-list",
        " ${1:#map}(${2:%d})[${3:%s}]",
    ),
    "affine.for": OpDoc(
        "A loop whose bounds are affine maps of dimensions and symbols and whose step is a "
        "positive constant. The induction variable runs from the lower bound (included) to "
        "the upper bound (excluded); `max` lower bounds and `min` upper bounds combine "
        "several results. Loop-carried values go through `iter_args` and `affine.yield`.",
        "operation ::= `affine.for` ssa-id `=` lower-bound `to` upper-bound\n"
        "              (`step` integer-literal)? `{` op* `}`\n"
        "lower-bound ::= `max`? affine-map-attribute dim-and-symbol-use-list | shorthand-bound\n"
        "upper-bound ::= `min`? affine-map-attribute dim-and-symbol-use-list | shorthand-bound\n"
        "shorthand-bound ::= ssa-id | `-`? integer-literal",
        " %${1:i} = ${2:0} to ${3:%N} {\n\t$0\n}",
    ),
    "affine.parallel": OpDoc(
        "A multi-dimensional parallel loop nest: one induction variable per dimension, "
        "bounds as affine expressions (`max`/`min` of several), optional steps and "
        "reductions of the values yielded by the body.",
        "operation ::= `affine.parallel` `(` ssa-ids `)` `=` `(` lower-bounds `)` `to`\n"
        "              `(` upper-bounds `)` (`step` `(` integer-literals `)`)?\n"
        '              (`reduce` `(` "kinds" `)` `->` `(` types `)`)? region',
        " (%${1:i}, %${2:j}) = (${3:0}, ${4:0}) to (${5:%N}, ${6:%M}) {\n\t$0\n}",
    ),
    "affine.if": OpDoc(
        "Runs its `then` region when the operands satisfy every constraint of an integer "
        "set, and its optional `else` region otherwise. With results, both regions yield.",
        "operation ::= `affine.if` if-op-cond `{` op* `}` (`else` `{` op* `}`)?\n"
        "if-op-cond ::= integer-set-attr dim-and-symbol-use-list",
        " ${1:#set}(${2:%i})[${3:%N}] {\n\t$0\n}",
    ),
    "affine.load": OpDoc(
        "Reads one element of a memref at subscripts that are affine expressions of "
        "dimensions (loop induction variables, ...) and `symbol(...)` operands.",
        "operation ::= ssa-id `=` `affine.load` ssa-use `[` multi-dim-affine-map-of-ssa-ids `]`\n"
        "              `:` memref-type",
        " ${1:%A}[${2:%i}] : ${3:memref<?xf32>}",
    ),
    "affine.store": OpDoc(
        "Writes a value to one element of a memref at affine subscripts.",
        "operation ::= `affine.store` ssa-use, ssa-use `[` multi-dim-affine-map-of-ssa-ids `]`\n"
        "              `:` memref-type",
        " ${1:%v}, ${2:%A}[${3:%i}] : ${4:memref<?xf32>}",
    ),
    "affine.vector_load": OpDoc(
        "Reads a vector of consecutive elements of a memref starting at affine subscripts.",
        "operation ::= ssa-id `=` `affine.vector_load` ssa-use `[` multi-dim-affine-map-of-ssa-ids"
        " `]`\n              `:` memref-type `,` vector-type",
        " ${1:%A}[${2:%i}] : ${3:memref<?xf32>}, ${4:vector<4xf32>}",
    ),
    "affine.vector_store": OpDoc(
        "Writes a vector to consecutive elements of a memref starting at affine subscripts.",
        "operation ::= `affine.vector_store` ssa-use, ssa-use `[` multi-dim-affine-map-of-ssa-ids"
        " `]`\n              `:` memref-type `,` vector-type",
        " ${1:%v}, ${2:%A}[${3:%i}] : ${4:memref<?xf32>}, ${5:vector<4xf32>}",
    ),
    "affine.prefetch": OpDoc(
        "A hint to fetch the element at affine subscripts into the cache, for reading or "
        "writing, with a locality level (0-3) and a data or instruction cache.",
        "operation ::= `affine.prefetch` ssa-use `[` multi-dim-affine-map-of-ssa-ids `]` `,`\n"
        "              (`read` | `write`) `,` `locality` `<` integer `>` `,` (`data` | `instr`)"
        " `:` memref-type",
        " ${1:%A}[${2:%i}], ${3|read,write|}, locality<${4:3}>, data : ${5:memref<?xf32>}",
    ),
    "affine.yield": OpDoc(
        "Ends the body of affine.for, affine.if and affine.parallel, yielding the values "
        "the parent op returns (or carries to the next iteration).",
        "operation ::= `affine.yield` attr-dict ($operands^ `:` type($operands))?",
    ),
    "affine.dma_start": OpDoc(
        "Starts a copy of a number of elements between memrefs (usually different memory "
        "spaces) at affine subscripts; completion is signalled on a tag memref.",
        "operation ::= `affine.dma_start` ssa-use `[` multi-dim-affine-map-of-ssa-ids `]`,\n"
        "              `[` multi-dim-affine-map-of-ssa-ids `]`, `[` multi-dim-affine-map-of-"
        "ssa-ids `]`, ssa-use `:` memref-type",
    ),
    "affine.dma_wait": OpDoc(
        "Waits for the copy started by affine.dma_start with the same tag element.",
        "operation ::= `affine.dma_wait` ssa-use `[` multi-dim-affine-map-of-ssa-ids `]`,"
        " ssa-use `:` memref-type",
    ),
    "affine.delinearize_index": OpDoc(
        "Splits a linear index into a multi-index for a basis of sizes (the outermost size "
        "may be left out).",
        "operation ::= `affine.delinearize_index` $linear_index `into` `(` basis `)` attr-dict "
        "`:` type($multi_index)",
    ),
    "affine.linearize_index": OpDoc(
        "Combines a multi-index into one linear index for a basis of sizes; `disjoint` "
        "promises every index is within its size.",
        "operation ::= `affine.linearize_index` (`disjoint`)? `[` indices `]` `by` `(` basis `)`"
        " attr-dict `:` type($linear_index)",
    ),
    "memref.alloc": OpDoc(
        "Allocates a memref on the heap; `(...)` gives one size per `?` dimension and `[...]` "
        "the symbols of its layout map.",
        "operation ::= `memref.alloc` `(` dynamic-sizes `)` (`[` symbols `]`)? attr-dict "
        "`:` memref-type",
        "(${1}) : ${2:memref<?xf32>}",
    ),
    "memref.alloca": OpDoc(
        "Allocates a memref on the stack of the enclosing allocation scope.",
        "operation ::= `memref.alloca` `(` dynamic-sizes `)` (`[` symbols `]`)? attr-dict "
        "`:` memref-type",
        "(${1}) : ${2:memref<?xf32>}",
    ),
    "memref.dealloc": OpDoc(
        "Frees a memref allocated with memref.alloc.",
        "operation ::= `memref.dealloc` $memref attr-dict `:` type($memref)",
    ),
    "memref.load": OpDoc(
        "Reads one element of a memref at index operands (not analysable as affine: "
        "prefer affine.load when the indices are affine).",
        "operation ::= ssa-id `=` `memref.load` ssa-use `[` ssa-use-list `]` `:` memref-type",
    ),
    "memref.store": OpDoc(
        "Writes one element of a memref at index operands.",
        "operation ::= `memref.store` ssa-use, ssa-use `[` ssa-use-list `]` `:` memref-type",
    ),
    "memref.dim": OpDoc(
        "The size of one dimension of a memref, as an index. A valid symbol when the memref "
        "is an argument of the enclosing function (or the dimension is static).",
        "operation ::= ssa-id `=` `memref.dim` ssa-use `,` ssa-use `:` memref-type",
    ),
    "func.func": OpDoc(
        "A function: a symbol with a signature and a body region. Its arguments and the "
        "values defined at its top level are valid affine symbols inside it.",
        "operation ::= `func.func` visibility? symbol-ref-id `(` argument-list `)`"
        " (`->` function-result-list)? attr-dict region?",
    ),
    "func.return": OpDoc(
        "Returns from a function with the given values.",
        "operation ::= `func.return` attr-dict ($operands^ `:` type($operands))?",
    ),
    "func.call": OpDoc(
        "Calls a function by symbol.",
        "operation ::= ssa-id `=` `func.call` symbol-ref-id `(` ssa-use-list `)` attr-dict "
        "`:` function-type",
    ),
    "arith.constant": OpDoc(
        "A constant value; constants are valid affine symbols.",
        "operation ::= ssa-id `=` `arith.constant` attribute-value `:` type",
    ),
    "builtin.module": OpDoc(
        "A container of top-level operations; an affine scope.",
        "operation ::= `module` symbol-ref-id? (`attributes` attr-dict)? region",
    ),
    "scf.for": OpDoc(
        "A loop with SSA-value bounds and step (no affine restrictions).",
        "operation ::= `scf.for` ssa-id `=` ssa-use `to` ssa-use `step` ssa-use region",
    ),
    "scf.if": OpDoc(
        "Runs its `then` region if an i1 condition holds, its `else` region otherwise.",
        "operation ::= `scf.if` ssa-use region (`else` region)?",
    ),
}

KEYWORDS = {
    "to": "separates the lower and upper bounds of affine.for / affine.parallel",
    "step": "the loop step (a positive integer constant)",
    "iter_args": "values carried from one iteration of affine.for to the next",
    "symbol": "binds an operand as a symbol in affine subscripts: `symbol(%n)`",
    "max": "a lower bound that is the maximum of several map results",
    "min": "an upper bound that is the minimum of several map results",
    "else": "the region of affine.if run when the condition does not hold",
    "reduce": "the reductions of affine.parallel",
    "floordiv": "division rounding towards negative infinity (by a positive constant)",
    "ceildiv": "division rounding towards positive infinity (by a positive constant)",
    "mod": "remainder of a division by a positive constant (never negative)",
}


def op_doc(name: str) -> OpDoc | None:
    return OP_DOCS.get(name)
