"""The generators' switches for features that hit known bugs (`Features`).

Each switch turns on one kind of program that hit a bug being fixed on another branch: one
switch per item of issue 12, and one per new bug this checker found. The buffer-level
generator (`fuzz.programs`, its layouts in `fuzz.layouts`) and the graph-level one
(`fuzz.graphs`) consult them and record in `used` the switches a program actually
exercised. `Features()` turns them all on (`make fuzz`), `Features.safe()` all off
(`make test`); `Features.parse` reads the campaign's `--features` list.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Features:
    """Program features that hit bugs being fixed on other branches, one switch per item of
    issue 12. `make test` runs with all of them off, `make fuzz` with all of them on."""

    item1_loop_dependences: bool = True
    """Memory- or iter_args-carried dependences in nests that store to a transformed
    buffer (`apply-layout{rewrite-loops=true}` re-iterates them)."""
    item2_physical_views: bool = True
    """A second `layout.decl_buffer` that views transformed storage in its physical shape."""
    item3_small_padded_tiles: bool = True
    """Padded splits of an axis smaller than one tile (`i mod 4` on [3])."""
    item4_padded_texels: bool = True
    """Texture channel counts that are not a multiple of 4 (padding lanes)."""
    item5_invariant_loads: bool = True
    """A scalar load before a loop nest whose value the nest uses."""
    item6_offset_alias_calls: bool = True
    """A `layout.decl_buffer` at an element offset passed to a `func.call`."""
    item8_nhwc_rank3_textures: bool = True
    """A rank-3 `global.texture-nhwc` buffer without explicit separators."""
    item9_dead_invalid_aliases: bool = True
    """A dead `layout.decl_buffer` that does not fit in its storage (an invalid program
    that every pass must refuse or keep invalid)."""
    item9a_unnormalizable_memrefs: bool = True
    """In memref-typed programs, a memref whose layout map cannot be normalized (a result
    with a negative minimum), beside others that can."""
    found_rank0_graph_transform: bool = True
    """Not an item of issue 12, found by this checker
    (`regressions/map-ndarray-rank0-result.mlir`): graph-level generics on one-element
    tensors, which `flow-layout-rewrites` may give a rank-0 operand transform."""
    found_piecewise_padding_fill: bool = True
    """Not an item of issue 12, found by this checker
    (`regressions/apply-layout-padding-fill-piecewise-inverse.mlir`): `ceildiv` splits of a
    compound expression, in the second map of a transform list, or followed by other
    steps, whose padded maps may only have a piecewise inverse."""

    @staticmethod
    def safe() -> Features:
        return Features(**{f.name: False for f in fields(Features)})

    @staticmethod
    def names() -> list[str]:
        return [f.name for f in fields(Features)]

    @staticmethod
    def parse(text: str) -> Features:
        """`all`, `none`, or a comma-separated list of the switches to turn on."""
        if text.strip() in ("", "all"):
            return Features()
        if text.strip() == "none":
            return Features.safe()
        wanted = {w.strip() for w in text.split(",") if w.strip()}
        unknown = wanted - set(Features.names())
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)}; known: {Features.names()}")
        return Features(**{n: n in wanted for n in Features.names()})

    def enabled(self) -> list[str]:
        return [n for n in Features.names() if getattr(self, n)]
