"""Our `fuse --all` against MLIR's `affine-loop-fusion`, program by program.

For a generated program (`progen`): fuse it with `fuse_all`, run it with
mlir-runner against the original; run MLIR's pass on it and judge its output the
same way; count the top-level nests of `@kernel` each leaves. Where MLIR's output
is correct and leaves fewer nests than ours, `classify` says why:

* `mlir-hidden-error`: MLIR's fusion is wrong, but the program's values hide it
  (a result nobody reads afterwards, `x - x`, a `max` that saturates, data that
  repeats). The same program with every arithmetic op of the kernel replaced by
  an addition and less repetitive data (`strict_variant`) is fused by MLIR into
  the same loop structure, and that output computes something else;
* `independent`: the nests we leave share no memref with each other, so no fusion
  links them (MLIR's do, through a nest we found dead and removed);
* `cost`: we reach MLIR's count when any extra computation is accepted (our cost
  model puts a fusion MLIR makes above the tolerance);
* `search`: we reach it with a much larger budget for the order search;
* `unexplained`: none of these (to be looked at).

Used by `benchmarks/fusion_differential.py` and the suite's seeded slices.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from affine_lsp.checks import Severity, check_document
from affine_lsp.ir import build_module
from affine_lsp.syntax import SourceDocument
from affine_lsp.testing import oracle, progen
from affine_lsp.transforms.fusion import (
    FusionOptions,
    functions,
    fuse_all,
    loops_in,
    memrefs_touched,
)

HAZARD_PATTERNS = (
    "in_place",
    "waw",
    "war",
    "live_out",
    "partial_init",
    "producer_consumer_arg",
    "transposed",
    "sibling",
)

PROFILES: dict[str, progen.GenConfig] = {
    "default": progen.GenConfig(),
    "hazards": progen.GenConfig.only(*HAZARD_PATTERNS, min_nests=3, max_nests=6),
}
"""Program distributions: the generator's default, and programs made of the patterns
that order nests by hazards (in-place updates, WAR/WAW, live-out and partially
initialised outputs, transposes, shared inputs), where fusion order and placement
matter most."""

EXCEPTION_CLASSES = ("mlir-hidden-error", "independent", "cost", "search", "unexplained")

SEARCH_ORDERS = 64
SEARCH_EVALUATIONS = 4000


@dataclass
class Comparison:
    """One program: what we and MLIR left, whether each is right."""

    seed: int
    profile: str
    features: list[str]
    nests: int
    ours: str  # same | different | unchanged | invalid | run-failure | original-failed | crash
    ours_after: int
    ours_fusions: int
    ours_removed: int
    ours_seconds: float
    mlir: str = "skipped"  # correct | miscompile | crash | invalid-ir | run-failure | timeout
    mlir_after: int | None = None
    exception: str | None = None  # a class of EXCEPTION_CLASSES where MLIR leaves fewer
    detail: str = ""
    texts: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def mlir_correct(self) -> bool:
        return self.mlir == "correct" and self.mlir_after is not None

    @property
    def fewer_than_mlir(self) -> bool:
        """MLIR is correct and leaves fewer nests than we do."""
        return self.mlir_correct and self.ours_after > (self.mlir_after or 0)


# --------------------------------------------------------------------------- variants

_KERNEL = re.compile(r"func\.func @kernel\(.*?\n\}\n", re.DOTALL)
_FLOAT_OPS = re.compile(r"\barith\.(?:subf|mulf|maximumf|minimumf|maxnumf|minnumf)\b")
_INT_OPS = re.compile(r"\barith\.(?:subi|muli|maxsi|minsi|maxui|minui)\b")
_FILL_MODULUS = "%c13 = arith.constant 13 : index"


def strict_variant(text: str) -> str:
    """`text` with every binary arithmetic op of `@kernel` an addition (no value can
    cancel or saturate) and the input data of `@main` less repetitive."""
    match = _KERNEL.search(text)
    if match is None:
        return text
    kernel = _INT_OPS.sub("arith.addi", _FLOAT_OPS.sub("arith.addf", match.group(0)))
    text = text[: match.start()] + kernel + text[match.end() :]
    return text.replace(_FILL_MODULUS, "%c13 = arith.constant 1000003 : index")


_SSA = re.compile(r"%[\w$.#-]+")
_ARITH = re.compile(r"\barith\.\w+")


def loop_structure(text: str, function: str = "kernel") -> list[str]:
    """The `affine.*` lines of `function` with value names and arithmetic erased: what
    a fusion decided, independent of the values computed."""
    start = text.find(f"func.func @{function}(")
    if start < 0:
        return []
    lines = []
    depth = 0
    for line in text[start:].splitlines()[1:]:
        depth += line.count("{") - line.count("}")
        if depth < 0:
            break
        stripped = line.strip()
        if stripped.startswith("affine.") or "= affine." in stripped or stripped == "}":
            lines.append(_ARITH.sub("arith", _SSA.sub("%", stripped)))
    return lines


def memref_groups(text: str, function: str = "kernel") -> int:
    """How many groups the top-level nests of `function` form when nests that touch a
    memref in common (directly or through others) are grouped together."""
    model = build_module(SourceDocument(text).tree.root_node)
    found = next((f for f in functions(model) if f.symbol == f"@{function}"), None)
    if found is None or found.body is None or found.body.entry is None:
        return 0
    nests = loops_in(found.body.entry)
    touched = [set().union(*memrefs_touched(nest)) for nest in nests]
    groups: list[set[int]] = []
    for memrefs in touched:
        merged = set(memrefs)
        for group in [g for g in groups if g & merged]:
            merged |= group
            groups.remove(group)
        groups.append(merged)
    return len(groups)


# --------------------------------------------------------------------------- one program


def _outcome(verdict: oracle.Verdict, same: str, different: str) -> str:
    return {oracle.Outcome.SAME: same, oracle.Outcome.DIFFERENT: different}.get(
        verdict.outcome, "run-failure"
    )


def compare_program(
    seed: int,
    profile: str = "default",
    with_mlir: bool = True,
    classify_exceptions: bool = True,
    timeout: float = 60.0,
) -> Comparison:
    """Fuse the program of `seed` (from `PROFILES[profile]`) with us and with MLIR."""
    program = progen.generate(seed, PROFILES[profile])
    before = oracle.count_top_level_loops(program.text, program.kernel) or 0
    started = time.perf_counter()
    try:
        fused = fuse_all(program.text.encode())
    except Exception as error:  # noqa: BLE001 - a crash is a finding, report it
        return Comparison(
            seed,
            profile,
            sorted(program.features),
            before,
            "crash",
            before,
            0,
            0,
            0.0,
            detail=f"{type(error).__name__}: {error}",
        )
    seconds = time.perf_counter() - started
    text = fused.text.decode()
    result = Comparison(
        seed,
        profile,
        sorted(program.features),
        before,
        "unchanged",
        oracle.count_top_level_loops(text, program.kernel) or 0,
        len(fused.fusions),
        len(fused.removed),
        seconds,
    )
    result.texts["ours"] = text
    original = oracle.lower_and_run(program.text, timeout=timeout)
    if not original.ok:
        result.ours, result.detail = "original-failed", original.describe()
        return result
    if fused.steps:
        errors = [
            d.message for d in check_document(SourceDocument(text)) if d.severity == Severity.ERROR
        ]
        if errors:
            result.ours, result.detail = "invalid", errors[0]
        else:
            verdict = oracle.equivalent(
                program.text, text, timeout=timeout, original_result=original
            )
            result.ours = _outcome(verdict, "same", "different")
            result.detail = verdict.detail[:2000]
    if not with_mlir:
        return result
    theirs = oracle.run_mlir_fusion(program.text, timeout=timeout)
    if theirs.timed_out:
        result.mlir = "timeout"
    elif theirs.crashed:
        result.mlir = "crash"
    elif theirs.text is None:
        result.mlir = "invalid-ir"
    else:
        result.texts["mlir"] = theirs.text
        result.mlir_after = oracle.count_top_level_loops(theirs.text, program.kernel)
        verdict = oracle.equivalent(
            program.text, theirs.text, timeout=timeout, original_result=original
        )
        result.mlir = _outcome(verdict, "correct", "miscompile")
    if classify_exceptions and result.fewer_than_mlir:
        result.exception, result.detail = classify(program, result, timeout)
    return result


def classify(program: progen.Program, result: Comparison, timeout: float = 60.0) -> tuple[str, str]:
    """Why MLIR's correct output leaves fewer nests than ours (see the module doc)."""
    target = result.mlir_after or 0
    strict = strict_variant(program.text)
    theirs = oracle.run_mlir_fusion(strict, timeout=timeout)
    if theirs.text is not None and loop_structure(theirs.text) == loop_structure(
        result.texts.get("mlir", "")
    ):
        verdict = oracle.equivalent(strict, theirs.text, timeout=timeout)
        if verdict.outcome is oracle.Outcome.DIFFERENT:
            return "mlir-hidden-error", (
                "MLIR's fusion of the same program with additions only computes something "
                "else:\n" + verdict.detail[:1500]
            )
    groups = memref_groups(result.texts.get("ours", program.text), program.kernel)
    if groups == result.ours_after:
        return "independent", (
            f"the {result.ours_after} nests we leave share no memref with each other "
            f"(MLIR leaves {target})"
        )
    data = program.text.encode()
    generous = fuse_all(data, FusionOptions(tolerance=float("inf")))
    generous_after = oracle.count_top_level_loops(generous.text.decode(), program.kernel) or 0
    if generous_after <= target:
        return "cost", (
            f"with any extra computation accepted we leave {generous_after} nests "
            f"(MLIR {target}): our cost model puts a fusion MLIR makes above the tolerance"
        )
    searched = fuse_all(data, orders=SEARCH_ORDERS, evaluations=SEARCH_EVALUATIONS)
    searched_after = oracle.count_top_level_loops(searched.text.decode(), program.kernel) or 0
    if searched_after <= target:
        return "search", (
            f"with {SEARCH_ORDERS} orders and {SEARCH_EVALUATIONS} questions we leave "
            f"{searched_after} nests (MLIR {target})"
        )
    return "unexplained", f"we leave {result.ours_after} nests, MLIR {target}"
