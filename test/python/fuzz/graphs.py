"""Random GRAPH-LEVEL programs (MLIR text): chains of `layout.transform` / `layout.pad` /
`layout.crop` and `linalg.generic` ops on static f32 tensors.

`generate_graph(chooser)` builds one function `@g` that starts from a tensor argument and
applies two to eight steps:

- `layout.transform` with a random map (the buffer-level generator's map steps:
  permutations, splits, ceildiv, fusions, shears, reversals, strides, unit axes), with a
  `pad_value` where it pads;
- the inverse of the previous transform (from the engine), then a crop back to the
  original box when the inverse pads;
- `layout.pad` (random low/high widths and pad value), `layout.crop` (a random window, or
  the box of the elements that are not known constants, which removes what pads added; a
  `cropped_value` promise only when every cropped element is known to be that constant);
- `linalg.generic`: elementwise (relu, add, mul, max, exp, sub one) with a new argument,
  a dense constant or the value itself; broadcast of a new argument along the leading
  axis; a sum over the last axis; sometimes `layout.frozen`.

Which elements are known constants (padding, and what generics compute from it) is
tracked exactly, so every `cropped_value` promise is true for all inputs. The function
returns the last value (and sometimes an earlier one too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

import numpy as np
from hypothesis import strategies as st

from fuzz.choices import Chooser, DrawChooser
from fuzz.features import Features
from fuzz.layouts import DIM_NAMES, PAD_VALUES, _MapBuilder

MAX_GRAPH_ELEMENTS = 512


def tensor(shape: Sequence[int]) -> str:
    return "tensor<" + "".join(f"{e}x" for e in shape) + "f32>"


def _array(values: Sequence[int]) -> str:
    return "array<i64: " + ", ".join(map(str, values)) + ">"


def _f(value: float) -> str:
    """`value` (an f32) exactly: the shortest double that rounds back to it."""
    text = repr(float(np.float32(value)))
    return text if "e" in text or "." in text else text + ".0"


@dataclass
class Graph:
    """A generated graph-level module."""

    text: str
    choices: list[int] = field(default_factory=list[int])
    features_used: set[str] = field(default_factory=set[str])
    spans: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


@dataclass
class _Builder:
    c: Chooser
    features: Features
    shape: tuple[int, ...]
    known: np.ndarray
    """Per element: its value when it is the same constant for every input, else NaN."""
    args: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    lines: list[str] = field(default_factory=list[str])
    value: str = "%x"
    counter: int = 0
    last_transform: tuple[object, tuple[int, ...]] | None = None
    extra_results: list[tuple[str, tuple[int, ...]]] = field(
        default_factory=list[tuple[str, tuple[int, ...]]]
    )
    used: set[str] = field(default_factory=set[str])

    def fresh(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def new_arg(self, shape: Sequence[int]) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append((name, tensor(shape)))
        return name

    def emit(self, text: str, shape: tuple[int, ...], known: np.ndarray) -> None:
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        self.value, self.shape, self.known = name, shape, known

    # Layout rewrites ----------------------------------------------------------------------

    def transform(self) -> None:
        from physlayout.indexing.index_map import IndexMap

        builder = _MapBuilder.start(
            DIM_NAMES[: len(self.shape)], self.shape, self.features, self.used
        )
        for _ in self.c.repeat(1, 2, 50):
            builder.random_step(self.c)
        if len(builder.exprs) > 5 or prod(builder.extents) > MAX_GRAPH_ELEMENTS:
            return
        text = builder.text()
        try:
            index_map = IndexMap.parse(text)
            shape = tuple(index_map.map_shape(list(self.shape)))
            pads = index_map.padding_predicate(list(self.shape)) is not None
        except ValueError:
            return  # the engine rejects it (a refusal every pass would repeat)
        if shape != tuple(builder.extents) or (pads and not builder.pads):
            return
        pad = self.c.choice(PAD_VALUES) if pads or self.c.flag(15) else None
        pad_text = "" if pad is None else f", pad_value = {_f(pad)} : f32"
        known = index_map.map_ndarray(
            self.known, pad_value=np.float32(pad if pad is not None else 0)
        )
        self.last_transform = (index_map, self.shape)
        self.emit(
            f"layout.transform {self.value} {{index_map = #layout.index_map<{text}>{pad_text}}} "
            f": {tensor(self.shape)} -> {tensor(shape)}",
            shape,
            known.astype(np.float32),
        )
        self.last_transform = (index_map, self.shape[:0] + tuple(self.known.shape))

    def inverse(self) -> bool:
        if self.last_transform is None:
            return False
        index_map, source_shape = self.last_transform
        try:
            inverse, _ = index_map.non_surjective_inverse(list(source_shape))  # type: ignore[attr-defined]
            if not inverse.is_injective(list(self.shape)):
                return False
            big = tuple(inverse.map_shape(list(self.shape)))
            pads = inverse.padding_predicate(list(self.shape)) is not None
        except ValueError:
            return False
        if len(big) != len(source_shape) or any(
            b < s for b, s in zip(big, source_shape, strict=True)
        ):
            return False
        pad = self.c.choice(PAD_VALUES)
        pad_text = f", pad_value = {_f(pad)} : f32" if pads or self.c.flag(30) else ""
        known = inverse.map_ndarray(self.known, pad_value=np.float32(pad))
        self.emit(
            f"layout.transform {self.value} {{index_map = #layout.index_map<{inverse}>{pad_text}}} "
            f": {tensor(self.shape)} -> {tensor(big)}",
            big,
            known.astype(np.float32),
        )
        self.last_transform = None
        if big != tuple(source_shape):
            self.crop((0,) * len(big), tuple(source_shape))
        return True

    def pad(self) -> None:
        rank = len(self.shape)
        low = tuple(self.c.integer(0, 2) for _ in range(rank))
        high = tuple(self.c.integer(0, 2) for _ in range(rank))
        out = tuple(lo + e + hi for lo, e, hi in zip(low, self.shape, high, strict=True))
        if prod(out) > MAX_GRAPH_ELEMENTS:
            return
        value = self.c.choice(PAD_VALUES)
        known = np.pad(self.known, list(zip(low, high, strict=True)), constant_values=value)
        self.last_transform = None
        self.emit(
            f"layout.pad {self.value} {{low = {_array(low)}, high = {_array(high)}, "
            f"pad_value = {_f(value)} : f32}} : {tensor(self.shape)} -> {tensor(out)}",
            out,
            known.astype(np.float32),
        )

    def random_crop(self) -> None:
        start = tuple(self.c.integer(0, e - 1) for e in self.shape)
        sizes = tuple(self.c.integer(1, e - s) for e, s in zip(self.shape, start, strict=True))
        self.crop(start, sizes)

    def crop_known(self) -> bool:
        """Crop to the box of the elements that are not known constants (what a pad or a
        padded transform added lies outside it): a crop whose promise can hold."""
        unknown = np.argwhere(np.isnan(self.known))
        if not unknown.size:
            return False
        low = tuple(int(v) for v in unknown.min(axis=0))
        high = tuple(int(v) + 1 for v in unknown.max(axis=0))
        if low == (0,) * len(self.shape) and high == self.shape:
            return False
        self.crop(low, tuple(h - lo for lo, h in zip(low, high, strict=True)))
        return True

    def crop(self, start: tuple[int, ...], sizes: tuple[int, ...]) -> None:
        window = tuple(slice(s, s + n) for s, n in zip(start, sizes, strict=True))
        keep = np.zeros(self.shape, dtype=bool)
        keep[window] = True
        dropped = self.known[~keep]
        hint = ""
        constant = (
            dropped.size and np.isfinite(dropped).all() and np.all(dropped == dropped.flat[0])
        )
        if constant and self.c.flag(70):
            hint = f", cropped_value = {_f(float(dropped.flat[0]))} : f32"
        self.last_transform = None
        self.emit(
            f"layout.crop {self.value} {{start = {_array(start)}, sizes = {_array(sizes)}{hint}}} "
            f": {tensor(self.shape)} -> {tensor(sizes)}",
            sizes,
            np.array(self.known[window]),
        )

    # Generics -------------------------------------------------------------------------------

    def generic(self) -> None:
        if prod(self.shape) == 1:
            if not self.features.found_rank0_graph_transform:
                return
            self.used.add("found_rank0_graph_transform")
        rank = len(self.shape)
        loops = [f"d{k}" for k in range(rank)]
        ident = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops)})>"
        kind = self.c.choice(["elementwise", "elementwise", "broadcast", "reduction"])
        body = self.c.choice(["relu", "add", "mul", "max", "exp", "sub_one"])
        binary = body in ("add", "mul", "max")
        operands = [self.value]
        operand_types = [tensor(self.shape)]
        maps = [ident]
        other_known: np.ndarray | float = float("nan")
        if binary:
            source = self.c.choice(["arg", "constant", "self"])
            other_shape = self.shape
            other_map = ident
            if kind == "broadcast" and rank > 1:
                other_shape = self.shape[1:]
                other_map = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops[1:])})>"
            if source == "self" and other_shape == self.shape:
                operands.append(self.value)
                other_known = self.known
            elif source == "constant":
                name = self.fresh()
                values = np.round(
                    np.random.default_rng(self.c.integer(0, 1000)).standard_normal(other_shape), 2
                ).astype(np.float32)
                dense = np.array2string(
                    values, separator=", ", threshold=10**6, floatmode="unique"
                ).replace("\n", "")
                if not other_shape:
                    dense = str(float(values))
                self.lines.append(
                    f"  {name} = arith.constant dense<{dense}> : {tensor(other_shape)}"
                )
                operands.append(name)
                other_known = values if other_shape == self.shape else float("nan")
            else:
                operands.append(self.new_arg(other_shape))
            operand_types.append(tensor(other_shape))
            maps.append(other_map)
        out_shape = self.shape
        out_map = ident
        kinds = ['"parallel"'] * rank
        reduction = kind == "reduction" and rank > 1
        if reduction:
            out_shape = self.shape[:-1]
            out_map = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops[:-1])})>"
            kinds[-1] = '"reduction"'
        lines, known = self.body(body, other_known)
        init = self.fresh()
        init_value = 0.0
        self.lines.append(
            f"  {init} = arith.constant dense<{_f(init_value)}> : {tensor(out_shape)}"
        )
        if reduction:
            lines.append("%r2 = arith.addf %r, %o : f32")
            known = (
                np.nansum(known, axis=-1)
                if not np.isnan(known).any()
                else np.full(out_shape, np.nan, np.float32)
            )
            known = np.asarray(known, dtype=np.float32).reshape(out_shape)
        result = "%r2" if reduction else "%r"
        block_args = ", ".join([*[f"%{n}: f32" for n in ("a", "b")[: len(operands)]], "%o: f32"])
        frozen = " attrs = {layout.frozen}" if self.c.flag(10) else ""
        body_text = "\n".join(f"    {line}" for line in lines)
        self.emit(
            f"linalg.generic {{indexing_maps = [{', '.join([*maps, out_map])}], "
            f"iterator_types = [{', '.join(kinds)}]}} ins({', '.join(operands)} : "
            f"{', '.join(operand_types)}) outs({init} : {tensor(out_shape)}){frozen} {{\n"
            f"  ^bb0({block_args}):\n"
            f"    %zero = arith.constant 0.0 : f32\n"
            f"    %one = arith.constant 1.0 : f32\n"
            f"{body_text}\n"
            f"    linalg.yield {result} : f32\n"
            f"  }} -> {tensor(out_shape)}",
            out_shape,
            known,
        )
        self.last_transform = None

    def body(self, kind: str, other: np.ndarray | float) -> tuple[list[str], np.ndarray]:
        a = self.known
        with np.errstate(all="ignore"):
            if kind == "relu":
                return ["%r = arith.maximumf %a, %zero : f32"], np.maximum(a, np.float32(0))
            if kind == "exp":
                return ["%r = math.exp %a : f32"], np.exp(a).astype(np.float32)
            if kind == "sub_one":
                return ["%r = arith.subf %a, %one : f32"], (a - np.float32(1)).astype(np.float32)
            b = np.broadcast_to(np.asarray(other, dtype=np.float32), a.shape)
            if kind == "add":
                return ["%r = arith.addf %a, %b : f32"], (a + b).astype(np.float32)
            if kind == "mul":
                return ["%r = arith.mulf %a, %b : f32"], (a * b).astype(np.float32)
            return ["%r = arith.maximumf %a, %b : f32"], np.maximum(a, b)

    # Assembly -----------------------------------------------------------------------------

    def text(self, arg_shape: tuple[int, ...]) -> str:
        results = [*self.extra_results, (self.value, self.shape)]
        types = ", ".join(tensor(s) for _, s in results)
        values = ", ".join(v for v, _ in results)
        signature = ", ".join(f"{n}: {t}" for n, t in [("%x", tensor(arg_shape)), *self.args])
        return (
            f"func.func @g({signature}) -> ({types}) {{\n"
            + "\n".join(self.lines)
            + f"\n  func.return {values} : {types}\n}}\n"
        )


def generate_graph(c: Chooser, features: Features | None = None) -> Graph:
    """A random graph-level module (see the module docstring)."""
    features = features or Features()
    rank = c.integer(1, 3)
    shape = tuple(c.choice((1, 2, 3, 4, 5, 6, 8)) for _ in range(rank))
    builder = _Builder(c, features, shape, np.full(shape, np.nan, dtype=np.float32))
    for _ in c.repeat(2, 8, 75):
        if len(builder.shape) > 4 or prod(builder.shape) > MAX_GRAPH_ELEMENTS:
            break
        if not builder.shape:
            break
        _step(c, builder)
    return Graph(builder.text(shape), list(c.choices), builder.used, list(c.spans))


def _step(c: Chooser, builder: _Builder) -> None:
    step = c.choice(
        ["transform", "generic", "transform", "inverse", "pad", "crop", "generic", "unpad"]
    )
    if step == "inverse" and builder.inverse():
        return
    if step == "unpad" and builder.crop_known():
        return
    if step in ("transform", "inverse"):
        builder.transform()
    elif step == "generic":
        builder.generic()
    elif step in ("pad", "unpad"):
        builder.pad()
    else:
        builder.random_crop()
    if c.flag(5) and builder.value != "%x":
        builder.extra_results.append((builder.value, builder.shape))


@st.composite
def graphs(draw: st.DrawFn, features: Features | None = None) -> Graph:
    """Hypothesis strategy: random graph-level programs (see `generate_graph`)."""
    return generate_graph(DrawChooser(draw), features)
