"""Small conveniences over islpy: the parts of union objects and piecewise functions,
and unions built from lists."""

from __future__ import annotations

import islpy as isl


def sets_of(union: isl.UnionSet) -> list[isl.Set]:
    found: list[isl.Set] = []
    union.foreach_set(found.append)
    return found


def maps_of(union: isl.UnionMap) -> list[isl.Map]:
    found: list[isl.Map] = []
    union.foreach_map(found.append)
    return [m for m in found if not m.is_empty()]


def union_of_maps(maps: list[isl.Map], ctx: isl.Context) -> isl.UnionMap:
    result = isl.UnionMap.empty(isl.Space.params_alloc(ctx, 0))
    for item in maps:
        result = result.union(isl.UnionMap.from_map(item))
    return result


def union_of_sets(sets: list[isl.Set], ctx: isl.Context) -> isl.UnionSet:
    result = isl.UnionSet.empty(isl.Space.params_alloc(ctx, 0))
    for item in sets:
        result = result.union(isl.UnionSet.from_set(item))
    return result


def pieces(function: isl.PwAff | isl.PwMultiAff) -> list:
    """The affine functions of a piecewise function (their domains dropped)."""
    found: list = []
    function.foreach_piece(lambda _domain, piece: found.append(piece))
    return found


def single_aff(function: isl.PwAff) -> isl.Aff | None:
    """The only piece of a (coalesced) piecewise affine function, or None."""
    found = pieces(function.coalesce())
    return found[0] if len(found) == 1 else None
