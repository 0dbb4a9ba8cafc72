"""What the model knows about operations by name: traits that change how names
resolve and which verifier rules apply. Unknown operations get no traits, so
nothing is ever reported about what we do not model.

The module's sets are MLIR 22's (`UPSTREAM`); a project file
(`affine_lsp.ir.project`) adds its own dialects and ops' traits to them, giving
another `Dialects`, which the model builder and the checks are handed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

# Ops whose regions cannot see values defined outside them.
ISOLATED_FROM_ABOVE = frozenset(
    {"builtin.module", "func.func", "gpu.module", "gpu.func", "llvm.func", "spirv.func"}
)

# Ops with the AffineScope trait: their region arguments and top-level values
# are valid symbols for affine ops nested in them.
# (MLIR 22: builtin.module, func.func, llvm.func, gpu.func and gpu.launch;
# test.affine_scope is the test dialect's.) The implicit top-level module of a file is
# one too.
AFFINE_SCOPE = frozenset(
    {"builtin.module", "func.func", "llvm.func", "gpu.func", "gpu.launch", "test.affine_scope"}
)

# Ops whose regions are SSA CFG regions in which dominance applies. Regions of
# ops we do not know may be graph regions: no use-before-definition checks there.
SSACFG_REGIONS = frozenset(
    {
        "func.func",
        "affine.for",
        "affine.if",
        "affine.parallel",
        "memref.alloca_scope",
        "memref.generic_atomic_rmw",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.parallel",
        "scf.execute_region",
        "scf.forall",
        "scf.index_switch",
        "scf.reduce",
        "gpu.launch",
        "linalg.generic",
    }
)

# Ops with the AutomaticAllocationScope trait (memref.alloca needs one around it), and
# ops known to lack it (MLIR 22; the module does not have it either).
AUTOMATIC_ALLOCATION_SCOPE = frozenset(
    {
        "func.func",
        "affine.for",
        "affine.parallel",
        "scf.for",
        "scf.forall",
        "scf.parallel",
        "memref.alloca_scope",
        "gpu.func",
        "gpu.launch",
        "llvm.func",
        "spirv.func",
        "async.execute",
        "async.func",
    }
)
NO_ALLOCATION_SCOPE = frozenset(
    {
        "builtin.module",
        "affine.if",
        "scf.if",
        "scf.execute_region",
        "scf.index_switch",
        "scf.while",
        "memref.generic_atomic_rmw",
    }
)

# Dialects mlir-opt 22 registers. An op of another dialect (or without one) is an
# unregistered op: it has no traits at all.
MLIR_DIALECTS = frozenset(
    "acc affine amdgpu amx arith arm_neon arm_sme arm_sve async bufferization builtin cf "
    "complex dlti emitc func gpu index irdl linalg llvm math memref ml_program mpi nvgpu nvvm "
    "omp pdl pdl_interp ptr quant rocdl scf shape shard smt sparse_tensor spirv tensor test "
    "test_dyn test_irdl_to_cpp tosa transform ub vector wasmssa x86vector xegpu xevm".split()
)

# Ops with regions that are not isolated from above (MLIR 22). With the isolated
# ones above, the ops whose scoping the model knows; any other op of a dialect
# mlir-opt registers may be isolated from above (a name used outside may be
# defined again inside it). Unregistered ops never are.
NOT_ISOLATED = frozenset(
    {
        "affine.for",
        "affine.if",
        "affine.parallel",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.parallel",
        "scf.forall",
        "scf.reduce",
        "scf.execute_region",
        "scf.index_switch",
        "memref.alloca_scope",
        "memref.generic_atomic_rmw",
        "linalg.generic",
        "linalg.map",
        "linalg.reduce",
        "tensor.generate",
        "tensor.pad",
        "vector.mask",
        "gpu.launch",
        "transform.sequence",
        "transform.named_sequence",
    }
)


# Pure ops (no memory effects, always speculatable) that can produce an index
# (MLIR 22). The result of a pure op whose operands are all valid symbols is a
# valid symbol (MLIR 22's isValidSymbol; the affine dialect's document does not
# list this rule).
PURE_OPS = frozenset(
    [
        f"arith.{n}"
        for n in (
            "addi subi muli andi ori xori shli shrsi shrui maxsi maxui minsi minui remsi remui "
            "floordivsi index_cast index_castui select constant"
        ).split()
    ]
    + [
        f"index.{n}"
        for n in (
            "add sub mul maxs maxu mins minu shl shrs shru and or xor casts castu constant sizeof"
        ).split()
    ]
    + [f"math.{n}" for n in "absi ctlz cttz ctpop ipowi".split()]
    + [f"affine.{n}" for n in "apply min max linearize_index delinearize_index".split()]
    + [
        f"gpu.{n}"
        for n in (
            "thread_id block_id block_dim grid_dim lane_id subgroup_id num_subgroups subgroup_size "
            "global_id cluster_id cluster_dim cluster_block_id cluster_dim_blocks"
        ).split()
    ]
    + ["vector.vscale", "ub.poison"]
)
# Divisions that are speculatable (hence pure) only by a constant divisor that is
# not 0 (nor -1 for the signed ones).
PURE_WITH_CONSTANT_DIVISOR = {
    "arith.divsi": (0, -1),
    "arith.ceildivsi": (0, -1),
    "arith.divui": (0,),
    "arith.ceildivui": (0,),
}
# Ops known to have memory effects or not to be speculatable.
IMPURE_OPS = frozenset(
    {
        "memref.load",
        "affine.load",
        "memref.atomic_rmw",
        "memref.generic_atomic_rmw",
        "func.call",
        "func.call_indirect",
        "index.divs",
        "index.divu",
        "index.ceildivs",
        "index.ceildivu",
        "index.floordivs",
        "index.rems",
        "index.remu",
    }
)


# Ops whose results are valid symbols when built from constants.
CONSTANT_OPS = frozenset({"arith.constant", "index.constant", "llvm.mlir.constant", "tosa.const"})

# Spellings of the 2019 syntax (and of the std dialect) and their current names.
LEGACY_NAMES = {
    "func": "func.func",
    "alloc": "memref.alloc",
    "alloca": "memref.alloca",
    "dealloc": "memref.dealloc",
    "load": "memref.load",
    "store": "memref.store",
    "dim": "memref.dim",
}

# Bare names resolved in the default dialect of a func.func body.
FUNC_DEFAULT_DIALECT = {"return": "func.return", "call": "func.call", "constant": "func.constant"}


def canonical_name(spelling: str) -> tuple[str, bool]:
    """(canonical op name, spelled in legacy syntax) for an op name as written."""
    if spelling in LEGACY_NAMES:
        return LEGACY_NAMES[spelling], True
    if spelling in FUNC_DEFAULT_DIALECT:
        return FUNC_DEFAULT_DIALECT[spelling], False
    return spelling, False


# Ops with the Terminator trait (MLIR 22): each must be the last op of its block.
TERMINATORS = frozenset(
    {
        "affine.yield",
        "func.return",
        "scf.yield",
        "scf.condition",
        "scf.reduce",
        "scf.reduce.return",
        "scf.forall.in_parallel",
        "cf.br",
        "cf.cond_br",
        "cf.switch",
        "memref.alloca_scope.return",
        "memref.atomic_yield",
        "linalg.yield",
        "tensor.yield",
        "gpu.terminator",
        "gpu.return",
        "gpu.yield",
        "llvm.return",
        "llvm.br",
        "llvm.cond_br",
        "llvm.unreachable",
        "transform.yield",
        "vector.yield",
        "async.yield",
    }
)

# Ops with the SymbolTable trait whose symbols the model reads (memref.globals).
SYMBOL_TABLES = frozenset({"builtin.module"})

# The traits a project file may give an op (`[ops."NAME"] traits = [...]`).
AFFINE_SCOPE_TRAIT = "AffineScope"
ISOLATED_TRAIT = "IsolatedFromAbove"
PURE_TRAIT = "Pure"
CONSTANT_TRAIT = "ConstantLike"
TERMINATOR_TRAIT = "Terminator"
SYMBOL_TABLE_TRAIT = "SymbolTable"
ALLOCATION_SCOPE_TRAIT = "AutomaticAllocationScope"
TRAITS = (
    AFFINE_SCOPE_TRAIT,
    ISOLATED_TRAIT,
    PURE_TRAIT,
    CONSTANT_TRAIT,
    TERMINATOR_TRAIT,
    SYMBOL_TABLE_TRAIT,
    ALLOCATION_SCOPE_TRAIT,
)


@dataclass(frozen=True)
class Dialects:
    """The dialects a document's tool registers and the traits of their ops, as far
    as the model and the checks use them. `UPSTREAM` is mlir-opt 22's; a project
    file extends it (`with_project`)."""

    isolated_from_above: frozenset[str] = ISOLATED_FROM_ABOVE
    not_isolated: frozenset[str] = NOT_ISOLATED
    affine_scope: frozenset[str] = AFFINE_SCOPE
    ssacfg_regions: frozenset[str] = SSACFG_REGIONS
    allocation_scope: frozenset[str] = AUTOMATIC_ALLOCATION_SCOPE
    no_allocation_scope: frozenset[str] = NO_ALLOCATION_SCOPE
    pure: frozenset[str] = PURE_OPS
    impure: frozenset[str] = IMPURE_OPS
    constant: frozenset[str] = CONSTANT_OPS
    terminators: frozenset[str] = TERMINATORS
    symbol_tables: frozenset[str] = SYMBOL_TABLES
    registered: frozenset[str] = MLIR_DIALECTS
    # Dialects whose types may be memref elements, besides MLIR's own; None: a memref
    # of another dialect's type is not checked (no project file says which exist).
    element_dialects: frozenset[str] | None = field(default=None)

    def knows_scoping(self, name: str) -> bool:
        """Whether the model knows if the regions of op `name` see the values above it:
        ops of the tables, and unregistered ops (never isolated); any other op of a
        registered dialect may be isolated from above."""
        if name in self.isolated_from_above or name in self.not_isolated:
            return True
        return "." not in name or name.split(".", 1)[0] not in self.registered

    def is_registered(self, name: str) -> bool:
        """Whether op `name` belongs to a registered dialect."""
        return "." in name and name.split(".", 1)[0] in self.registered

    def with_project(
        self,
        ops: Mapping[str, Iterable[str]],
        registered: Iterable[str] = (),
        element_dialects: Iterable[str] | None = None,
    ) -> Dialects:
        """These dialects, plus a project's: `ops` gives each op's traits (those of
        `TRAITS`; an op named there has exactly those), `registered` the project's
        dialects, `element_dialects` (None: not said) those whose types may be memref
        elements."""
        tables = {
            AFFINE_SCOPE_TRAIT: set(self.affine_scope),
            ISOLATED_TRAIT: set(self.isolated_from_above),
            PURE_TRAIT: set(self.pure),
            CONSTANT_TRAIT: set(self.constant),
            TERMINATOR_TRAIT: set(self.terminators),
            SYMBOL_TABLE_TRAIT: set(self.symbol_tables),
            ALLOCATION_SCOPE_TRAIT: set(self.allocation_scope),
        }
        not_isolated, impure = set(self.not_isolated), set(self.impure)
        no_allocation_scope = set(self.no_allocation_scope)
        for name, traits in ops.items():
            given = set(traits)
            for trait, table in tables.items():
                if trait in given:
                    table.add(name)
                else:
                    table.discard(name)
            # What the op lacks is known too: it is not isolated, not an allocation
            # scope. (Not so for purity: an op's memory effects may be computed by
            # its own code, so without Pure it may still be pure.)
            if ISOLATED_TRAIT in given:
                not_isolated.discard(name)
            else:
                not_isolated.add(name)
            if PURE_TRAIT in given or CONSTANT_TRAIT in given:
                impure.discard(name)
            if ALLOCATION_SCOPE_TRAIT in given:
                no_allocation_scope.discard(name)
            else:
                no_allocation_scope.add(name)
        elements = self.element_dialects
        if element_dialects is not None:
            elements = frozenset(elements or ()) | frozenset(element_dialects)
        return replace(
            self,
            affine_scope=frozenset(tables[AFFINE_SCOPE_TRAIT]),
            isolated_from_above=frozenset(tables[ISOLATED_TRAIT]),
            not_isolated=frozenset(not_isolated),
            pure=frozenset(tables[PURE_TRAIT]),
            impure=frozenset(impure),
            constant=frozenset(tables[CONSTANT_TRAIT]),
            terminators=frozenset(tables[TERMINATOR_TRAIT]),
            symbol_tables=frozenset(tables[SYMBOL_TABLE_TRAIT]),
            allocation_scope=frozenset(tables[ALLOCATION_SCOPE_TRAIT]),
            no_allocation_scope=frozenset(no_allocation_scope),
            # (an op with traits is a registered op: its dialect is registered too)
            registered=self.registered
            | frozenset(registered)
            | frozenset(name.split(".", 1)[0] for name in ops if "." in name),
            element_dialects=elements,
        )


UPSTREAM = Dialects()
"""What mlir-opt 22 registers, and nothing else."""
