"""Statement instances of strided loops counted without existential variables.

A loop with a step (a tile loop, an unrolled loop) gives its statements' instances
existentially quantified variables (`i mod 60 = 0`), and isl's last-write search
(`compute_flow`, a parametric optimum) slows down with each of them. The same
instances counted by the loops' iteration numbers (`i = 60 * i'`) need none. A
`compression` is a bijection from such a set onto the instances, checked to be one, so
that a question asked of the compressed instances and mapped back through it has the
same answer.
"""

from __future__ import annotations

import islpy as isl

from affine_lsp.poly.isl_util import sets_of, union_of_maps


def has_existentials(instances: isl.Set) -> bool:
    return any(piece.dim(isl.dim_type.div) for piece in instances.get_basic_sets())


def compression(instances: isl.Set) -> isl.Map | None:
    """A bijection onto `instances` (one statement's) from a set of the same name with
    no existential variables: each one made a dimension (isl's `lift`), then each
    original dimension those fix dropped. None when `instances` has none, or when the
    result keeps some or is not a bijection onto `instances`."""
    if not has_existentials(instances):
        return None
    name = instances.get_tuple_name()
    count = instances.dim(isl.dim_type.set)
    lifted = instances.lift().flatten().set_tuple_name(name)
    bijection = isl.Map.from_domain_and_range(lifted, instances)
    local = isl.LocalSpace.from_space(bijection.get_space())
    for k in range(count):
        equal = isl.Constraint.equality_alloc(local)
        equal = equal.set_coefficient_val(isl.dim_type.in_, k, 1)
        equal = equal.set_coefficient_val(isl.dim_type.out, k, -1)
        bijection = bijection.add_constraint(equal)
    for k in reversed(range(count)):
        fewer = bijection.project_out(isl.dim_type.in_, k, 1)
        if fewer.is_single_valued():
            bijection = fewer
    bijection = bijection.set_tuple_name(isl.dim_type.in_, name)
    if has_existentials(bijection.domain()):
        return None
    if not (
        bijection.is_single_valued()
        and bijection.is_injective()
        and bijection.range().is_equal(instances)
    ):
        return None
    return bijection


def compressions(instances: isl.UnionSet) -> isl.UnionMap | None:
    """Compressed instances -> instances, for every statement of `instances` (the
    identity where nothing is gained); None when no statement's are compressed."""
    maps: list[isl.Map] = []
    compressed = False
    for piece in sets_of(instances):
        found = compression(piece)
        compressed |= found is not None
        maps.append(found if found is not None else piece.identity())
    if not compressed:
        return None
    return union_of_maps(maps, instances.get_ctx())
