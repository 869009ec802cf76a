"""Exact decisions about an `IndexMap` on a box, proven with isl.

`isl_map` builds the map on the box ``0 <= x_k < shape_k``; `is_injective`,
`find_collision` (the lexicographically smallest colliding pair) and `equivalent` decide on
it exactly (`IndexMap.require_injective` turns a collision into an error). Results are
cached per map and shape (`physlayout.indexing.index_map.clear_caches` forgets them).
`is_injective` first tries `structural.is_injective_structurally` (no isl); islpy is
imported only when isl has to decide.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from physlayout.indexing.bridges import isl as bridge
from physlayout.indexing.structural import fits_box_structurally, is_injective_structurally

if TYPE_CHECKING:
    import islpy as isl

    from physlayout.indexing.index_map import IndexMap


@lru_cache(maxsize=1024)
def isl_map(imap: IndexMap, dims: tuple[int, ...]) -> isl.Map:
    """`imap` as the isl map ``{ [x...] -> [i...] }`` on the box ``0 <= x_k < dims_k``."""
    return bridge.build_map(imap.initial_indices, imap.final_indices, dims)


@lru_cache(maxsize=4096)
def is_injective(imap: IndexMap, dims: tuple[int, ...]) -> bool:
    """Whether distinct indices of the box map to distinct outputs."""
    if is_injective_structurally(imap, dims):
        return True
    with bridge.isl_errors(f"checking injectivity of {imap}"):
        return bool(isl_map(imap, dims).is_injective())


@lru_cache(maxsize=1024)
def find_collision(imap: IndexMap, dims: tuple[int, ...]) -> tuple[list[int], list[int]] | None:
    """The lexicographically smallest pair of distinct in-box indices with the same image,
    or None when `imap` is injective on the box."""
    if is_injective(imap, dims):
        return None
    import islpy as isl

    relation = isl_map(imap, dims)
    with bridge.isl_errors(f"searching a collision of {imap}"):
        same_image = relation.apply_range(relation.reverse())
        identity = isl.Map.identity(same_image.get_space())
        pairs = same_image.subtract(identity).wrap().lexmin()
        point = pairs.sample_point()
    coords = bridge.point_coordinates(point, 2 * imap.ndim)
    return coords[: imap.ndim], coords[imap.ndim :]


@lru_cache(maxsize=1024)
def equivalent(a: IndexMap, b: IndexMap, dims: tuple[int, ...] | None) -> bool:
    """Whether `a` and `b` give the same outputs on the box `dims` (on Z^n when None)."""
    first = bridge.build_map(a.initial_indices, a.final_indices, dims)
    second = bridge.build_map(b.initial_indices, b.final_indices, dims)
    with bridge.isl_errors(f"comparing {a} and {b}"):
        return bool(first.is_equal(second))


@lru_cache(maxsize=4096)
def image_within(imap: IndexMap, dims: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether `imap` maps every point of the box `dims` into the box `shape` (exact:
    interval analysis first, `structural.fits_box_structurally`, then isl). An isl failure
    is raised as `isl.Error` (the caller says what it was proving)."""
    if fits_box_structurally(imap, dims, shape):
        return True
    image = bridge.build_map(imap.initial_indices, imap.final_indices, dims).range()
    return bool(image.is_subset(bridge.build_box(shape)))
