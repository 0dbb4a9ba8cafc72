"""What the model knows about operations by name: traits that change how names
resolve and which verifier rules apply. Unknown operations get no traits, so
nothing is ever reported about what we do not model."""

from __future__ import annotations

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


def knows_scoping(name: str) -> bool:
    """Whether the model knows if the regions of op `name` see the values above it."""
    if name in ISOLATED_FROM_ABOVE or name in NOT_ISOLATED:
        return True
    return "." not in name or name.split(".", 1)[0] not in MLIR_DIALECTS


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
