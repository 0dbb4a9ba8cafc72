"""The sweeps of a stencil's time step fused into one perfect band, as isl's
schedule fuses them: the loops of each sweep (siblings under the time loop)
become one loop per level, each statement's iterations shifted by the constant
isl's band gives it (jacobi-2d: S1 at (t, i + 1, j + 1)), written by the code
generator with the loops atomic (a statement's first or last iterations guarded
by an `affine.if` inside, not peeled) so that the band stays perfect and can be
skewed and tiled. Checked against the dependences, then proven like every loop
transformation (`transforms.loops.run_planned`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import islpy as isl

from affine_lsp.ir import AffineForOp
from affine_lsp.transforms.loops import (
    Context,
    Refused,
    Spec,
    iv_name,
    schedule_rewrite,
    schedule_statements,
    schedule_violation,
)
from affine_lsp.transforms.optimize.nest import Nest
from affine_lsp.transforms.optimize.scheduler import Band
from affine_lsp.transforms.schedule import Dimension, Scheduled, Statement

FUSE_STEP = "fuse-time-step"


def step_shifts(nest: Nest, band: Band) -> dict[int, tuple[int, ...]] | None:
    """Per innermost loop (by id) of each statement, the shift of each band member
    (its constant less the smallest one); None when the statements are not each in
    a chain of at most `band.members` loops of their own under one time loop, or
    the time loop is shifted. A statement with fewer loops (fdtd-2d's row
    `ey[0, j]`) has its loops matched to the band's innermost ones and its
    constant in the others: where it runs along them."""
    depth = band.members
    constants: dict[int, tuple[int, ...]] = {}
    root = nest.root
    for statement in nest.statements:
        loops = statement.loops
        if not 2 <= len(loops) <= depth or loops[0] is not root:
            return None
        if statement.name not in band.statements:
            return None
        rows = band.rows_of(statement.name)
        if len(rows) != depth:
            return None
        key = id(loops[-1])
        found = tuple(row.constant for row in rows)
        if constants.setdefault(key, found) != found:
            return None
    if len(constants) < 2:
        return None
    lowest = [min(c[k] for c in constants.values()) for k in range(depth)]
    shifts = {key: tuple(c[k] - lowest[k] for k in range(depth)) for key, c in constants.items()}
    if any(shift[0] for shift in shifts.values()):
        return None
    return shifts


@dataclass
class TimeStepFusion:
    """The planner `run_planned` calls: `shifts` per innermost loop (by id)."""

    shifts: dict[int, tuple[int, ...]]

    def plan(self, context: Context, spec: Spec, check: bool = True) -> Scheduled:
        root = context.loop
        found = schedule_statements(context)
        depth = len(next(iter(self.shifts.values())))
        times: dict[str, list[str]] = {}
        lifted: dict[str, dict[int, int]] = {}
        names: list[str] = []
        for index, statement in enumerate(found):
            loops = statement.loops
            shift = self.shifts.get(id(loops[-1])) if loops else None
            if shift is None or not 2 <= len(loops) <= depth or loops[0] is not root:
                raise Refused("the time step's statements are not each in loops of their own")
            dims = [statement.dim_of(loop) or "" for loop in loops]
            missing = depth - len(dims)
            time = [str(statement.path[0])]
            for k in range(depth):
                if 0 < k <= missing:  # (a loop it lacks: it runs where its shift says)
                    lifted.setdefault(statement.name, {})[len(time)] = shift[k]
                    time += [str(shift[k]), "0"]
                    continue
                dim = dims[k - missing if k else 0]
                time += [f"{dim} + {shift[k]}" if shift[k] else dim, "0"]
            time[-1] = str(index)
            times[statement.name] = time
            if not names and not missing:
                names = [iv_name(loop) for loop in loops]
        extents = _extents(found, self.shifts, depth)
        dimensions = [Dimension()]
        for k, name in enumerate(names):
            kept: dict[str, AffineForOp] = {"*": root} if k == 0 else {}
            dimensions += [Dimension(name, separate=False, loops=kept), Dimension()]
        scheduled = Scheduled(found, times, dimensions, extents=extents, lifted=lifted)
        if check:
            broken = schedule_violation(context, scheduled, f"fusing the loops of {iv_name(root)}")
            if broken is not None:
                raise Refused(broken)
        return scheduled

    def rewrite(self, context: Context, plan: Scheduled) -> Any:  # (a loops Rewrite)
        return schedule_rewrite(context, plan)


def _extents(
    found: list[Statement], shifts: dict[int, tuple[int, ...]], depth: int
) -> dict[str, isl.Set]:
    """Per statement, the smallest box of the fused loops that holds every
    statement's shifted iterations, in the statement's own dims (shifted back; a
    statement with fewer loops: its dims, then one per loop it lacks): the fused
    loops run over it at every outer iteration, so that isl writes one loop per
    level and each statement is guarded inside, rather than other loops for the
    rows only one statement runs. None of them where a domain is not a plain set
    of the band's loops."""
    moved: list[tuple[Statement, isl.Map]] = []
    union: isl.Set | None = None
    for statement in found:
        domain = statement.domain.set
        shift = shifts.get(id(statement.loops[-1])) if statement.loops else None
        if domain is None or shift is None or not 2 <= domain.dim(isl.dim_type.set) <= depth:
            return {}
        placed = _placement(domain, shift)
        image = statement.instances.reset_tuple_id().apply(placed)
        union = image if union is None else union.union(image)
        moved.append((statement, _back(domain, shift)))
    if union is None:
        return {}
    box = isl.Set.from_basic_set(union.simple_hull())
    extents = {}
    for statement, back in moved:
        extents[statement.name] = box.apply(back).set_tuple_name(statement.name)
    return extents


def _placement(like: isl.Set, shift: tuple[int, ...]) -> isl.Map:
    """A statement's iterations as points of the fused loops: its first loop first,
    its others the innermost ones, each moved by its shift, and the shift in the
    loops it lacks."""
    own = like.dim(isl.dim_type.set)
    missing = len(shift) - own
    names = [f"x{k}" for k in range(own)]
    image = []
    for k, amount in enumerate(shift):
        if 0 < k <= missing:
            image.append(str(amount))
            continue
        name = names[k - missing if k else 0]
        image.append(f"{name} + {amount}" if amount else name)
    return _map(like, names, image)


def _back(like: isl.Set, shift: tuple[int, ...]) -> isl.Map:
    """The fused loops' points as the statement's dims (moved back by its shift),
    then the loops it lacks (as they are: lifted)."""
    own = like.dim(isl.dim_type.set)
    missing = len(shift) - own
    names = [f"y{k}" for k in range(len(shift))]
    kept = [0, *range(missing + 1, len(shift))]
    image = [f"{names[k]} - {shift[k]}" if shift[k] else names[k] for k in kept]
    image += [names[k] for k in range(1, missing + 1)]
    return _map(like, names, image)


def _map(like: isl.Set, names: list[str], image: list[str]) -> isl.Map:
    text = f"{{ [{', '.join(names)}] -> [{', '.join(image)}] }}"
    return isl.Map.read_from_str(like.get_ctx(), text).align_params(like.get_space())
