"""Property tests: random chains of layout rewrites (transforms, pads, crops) fold (with
fold-layout-rewrites, and with stock canonicalize) into modules with equal results, and random layout transforms flowed through random
elementwise / broadcast / reduction generics keep the results."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
import pytest
from graph_harness import apply, count_ops, parse
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass

from physlayout.indexing.index_map import IndexMap
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.flow_layout_rewrites import FlowLayoutRewritesPass
from physlayout.transforms.fold_layout_rewrites import FoldLayoutRewritesPass

SETTINGS = settings(
    max_examples=int(os.environ.get("PHYSLAYOUT_HYPOTHESIS_EXAMPLES", "60")),
    deadline=None,
    derandomize=os.environ.get("PHYSLAYOUT_HYPOTHESIS_RANDOM") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PAD_VALUES = (0.0, 1.0)
FOLDERS: dict[str, type[ModulePass]] = {
    "fold": FoldLayoutRewritesPass,
    "canonicalize": CanonicalizePass,
}
"""The passes that fold layout rewrites: physlayout's pass, and stock canonicalize with the
layout dialect's canonicalization patterns."""


def _tensor(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{e}x" for e in shape) + "f32>"


def _array(values: tuple[int, ...]) -> str:
    return "array<i64: " + ", ".join(map(str, values)) + ">"


def random_map(draw: st.DrawFn, shape: tuple[int, ...]) -> IndexMap:
    """A random injective map on `shape`: a permutation, a split (may pad), a fusion or a
    reversal of one axis."""
    names = tuple(f"x{k}" for k in range(len(shape)))
    dims: list[Expr] = [Dim(n) for n in names]
    kind = draw(st.sampled_from(["permute", "split", "fuse", "reverse"]))
    if kind == "permute":
        order = draw(st.permutations(range(len(shape))))
        return IndexMap(names, tuple(dims[k] for k in order))
    k = draw(st.integers(0, len(shape) - 1))
    if kind == "split":
        factor = draw(st.integers(2, 4))
        outer, inner = dims[k] // factor, dims[k] % factor
        where = draw(st.sampled_from(["inner-last", "in-place"]))
        if where == "inner-last":
            return IndexMap(names, (*dims[:k], outer, *dims[k + 1 :], inner))
        return IndexMap(names, (*dims[:k], outer, inner, *dims[k + 1 :]))
    if kind == "fuse" and k + 1 < len(shape):
        fused = dims[k] * shape[k + 1] + dims[k + 1]
        return IndexMap(names, (*dims[:k], fused, *dims[k + 2 :]))
    return IndexMap(names, (*dims[:k], (shape[k] - 1) - dims[k], *dims[k + 1 :]))


@dataclass
class Chain:
    """A chain of layout rewrites applied to one argument, with its reference values."""

    shape: tuple[int, ...]
    value: np.ndarray
    lines: list[str] = field(default_factory=list[str])
    last_transform: tuple[IndexMap, tuple[int, ...], float | None] | None = None

    def add(self, text: str, shape: tuple[int, ...], value: np.ndarray) -> None:
        name = f"%v{len(self.lines)}"
        source = "%x" if not self.lines else f"%v{len(self.lines) - 1}"
        self.lines.append(
            f"  {name} = {text.format(src=source, out=_tensor(shape), src_t=_tensor(self.shape))}"
        )
        self.shape = shape
        self.value = value

    def text(self, arg_shape: tuple[int, ...]) -> str:
        result = f"%v{len(self.lines) - 1}" if self.lines else "%x"
        return (
            f"func.func @chain(%x: {_tensor(arg_shape)}) -> {_tensor(self.shape)} {{\n"
            + "\n".join(self.lines)
            + f"\n  func.return {result} : {_tensor(self.shape)}\n}}\n"
        )


def _transform(chain: Chain, imap: IndexMap, pad: float | None) -> None:
    shape = tuple(imap.map_shape(chain.shape))
    padding = imap.padding_predicate(chain.shape)
    pad = pad if padding is not None else None
    pad_text = "" if pad is None else f", pad_value = {pad} : f32"
    value = imap.map_ndarray(chain.value, pad_value=pad)
    chain.last_transform = (imap, chain.shape, pad)
    chain.add(
        f"layout.transform {{src}} {{{{index_map = #layout.index_map<{imap}>{pad_text}}}}} : {{src_t}} -> {{out}}",
        shape,
        value,
    )


def _inverse_step(chain: Chain) -> bool:
    """The inverse of the last transform (then a crop back when it padded)."""
    if chain.last_transform is None:
        return False
    imap, source_shape, _ = chain.last_transform
    inverse, _ = imap.non_surjective_inverse(source_shape)
    try:
        if not inverse.is_injective(chain.shape):
            return False
        big = tuple(inverse.map_shape(chain.shape))
    except ValueError:
        return False
    if len(big) != len(source_shape) or any(b < s for b, s in zip(big, source_shape, strict=True)):
        return False
    _transform(chain, inverse, 0.0)
    if big != source_shape:
        _crop(chain, (0,) * len(big), source_shape, hint=True)
    return True


def _crop(chain: Chain, start: tuple[int, ...], sizes: tuple[int, ...], hint: bool) -> None:
    window = tuple(slice(s, s + n) for s, n in zip(start, sizes, strict=True))
    keep = np.zeros(chain.shape, dtype=bool)
    keep[window] = True
    dropped = chain.value[~keep]
    hint_text = ""
    if (
        hint
        and dropped.size
        and np.all(dropped == dropped.flat[0])
        and dropped.flat[0] in PAD_VALUES
    ):
        hint_text = f", cropped_value = {float(dropped.flat[0])} : f32"
    chain.last_transform = None
    chain.add(
        f"layout.crop {{src}} {{{{start = {_array(start)}, sizes = {_array(sizes)}{hint_text}}}}} : {{src_t}} -> {{out}}",
        sizes,
        np.array(chain.value[window]),
    )


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, np.ndarray]:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    seed = draw(st.integers(0, 2**16))
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    chain = Chain(shape, x)
    for _ in range(draw(st.integers(1, 6))):
        if len(chain.shape) > 4 or int(np.prod(chain.shape)) > 400:
            break
        step = draw(st.sampled_from(["transform", "transform", "inverse", "pad", "crop"]))
        if step == "inverse" and _inverse_step(chain):
            continue
        if step in ("transform", "inverse"):
            _transform(chain, random_map(draw, chain.shape), draw(st.sampled_from(PAD_VALUES)))
        elif step == "pad":
            low = tuple(
                draw(
                    st.lists(
                        st.integers(0, 2), min_size=len(chain.shape), max_size=len(chain.shape)
                    )
                )
            )
            high = tuple(
                draw(
                    st.lists(
                        st.integers(0, 2), min_size=len(chain.shape), max_size=len(chain.shape)
                    )
                )
            )
            value = draw(st.sampled_from(PAD_VALUES))
            widths = list(zip(low, high, strict=True))
            out = tuple(lo + e + hi for lo, e, hi in zip(low, chain.shape, high, strict=True))
            chain.last_transform = None
            chain.add(
                f"layout.pad {{src}} {{{{low = {_array(low)}, high = {_array(high)}, pad_value = {value} : f32}}}} : {{src_t}} -> {{out}}",
                out,
                np.pad(chain.value, widths, constant_values=value),
            )
        else:
            start = tuple(draw(st.integers(0, e - 1)) for e in chain.shape)
            sizes = tuple(
                draw(st.integers(1, e - s)) for e, s in zip(chain.shape, start, strict=True)
            )
            _crop(chain, start, sizes, hint=draw(st.booleans()))
    return chain.text(shape), x


@pytest.mark.parametrize("folder", sorted(FOLDERS))
@SETTINGS
@given(case=chains())
def test_random_chains_fold_to_equal_results(folder: str, case: tuple[str, np.ndarray]) -> None:
    text, x = case
    before = parse(text)
    expected = run_graph(before, "chain", [x])[0]
    after = apply(parse(text), [FOLDERS[folder]()])
    result = run_graph(after, "chain", [x])[0]
    np.testing.assert_array_equal(result, expected)
    layout_ops = ("layout.transform", "layout.pad", "layout.crop")
    assert sum(count_ops(after, n) for n in layout_ops) <= sum(
        count_ops(before, n) for n in layout_ops
    )


@st.composite
def bijections(draw: st.DrawFn) -> tuple[tuple[int, ...], IndexMap]:
    """A random composition of up to three maps that pad nothing."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8]), min_size=rank, max_size=rank)))
    imap = IndexMap.identity(rank)
    current = shape
    for _ in range(draw(st.integers(1, 3))):
        step = random_map(draw, current)
        if step.padding_predicate(current) is not None or step.final_ndim > 4:
            continue
        imap = imap.compose(step, shape=shape)
        current = tuple(step.map_shape(current))
    return shape, imap


@pytest.mark.parametrize("folder", sorted(FOLDERS))
@SETTINGS
@given(case=bijections())
def test_transform_then_inverse_folds_away(
    folder: str, case: tuple[tuple[int, ...], IndexMap]
) -> None:
    shape, imap = case
    mid = tuple(imap.map_shape(shape))
    try:
        # Some bijections have only a piecewise inverse (refused by the engine), and
        # interval analysis may overestimate the range of the inverse's outputs.
        inverse = imap.inverse(shape)
        assume(tuple(inverse.map_shape(mid)) == shape)
    except ValueError:
        assume(False)
    text = (
        f"func.func @chain(%x: {_tensor(shape)}) -> {_tensor(shape)} {{\n"
        f"  %a = layout.transform %x {{index_map = #layout.index_map<{imap}>}} : {_tensor(shape)} -> {_tensor(mid)}\n"
        f"  %b = layout.transform %a {{index_map = #layout.index_map<{inverse}>}} : {_tensor(mid)} -> {_tensor(shape)}\n"
        f"  func.return %b : {_tensor(shape)}\n}}\n"
    )
    after = apply(parse(text), [FOLDERS[folder]()])
    assert count_ops(after, "layout.transform") == 0


# Flow through random generics -------------------------------------------------------------

BODIES = {
    "relu": ("%r = arith.maximumf %a, %zero : f32", 1),
    "add": ("%r = arith.addf %a, %b : f32", 2),
    "mul": ("%r = arith.mulf %a, %b : f32", 2),
    "exp": ("%r = math.exp %a : f32", 1),
    "sub_one": ("%r = arith.subf %a, %one : f32", 1),
}


@st.composite
def flows(draw: st.DrawFn) -> tuple[str, list[np.ndarray]]:
    """A generic (elementwise, broadcast of the last operand along the leading axis, or a sum
    over the last axis) whose result is transformed by a random map."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    kind = draw(st.sampled_from(["elementwise", "broadcast", "reduction"]))
    body = draw(st.sampled_from(sorted(BODIES)))
    line, arity = BODIES[body]
    loops = [f"d{k}" for k in range(rank)]
    ident = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops)})>"
    kinds = ", ".join(['"parallel"'] * rank)
    ins_shapes = [shape] * arity
    ins_maps = [ident] * arity
    out_shape = shape
    out_map = ident
    if kind == "broadcast" and arity == 2 and rank > 1:
        ins_shapes[1] = shape[1:]
        ins_maps[1] = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops[1:])})>"
    if kind == "reduction" and rank > 1:
        out_shape = shape[:-1]
        out_map = f"affine_map<({', '.join(loops)}) -> ({', '.join(loops[:-1])})>"
        kinds = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
        line = line + "\n    %r2 = arith.addf %r, %o : f32"
    result = "%r2" if kind == "reduction" and rank > 1 else "%r"
    imap = random_map(draw, out_shape)
    pad = draw(st.sampled_from(PAD_VALUES))
    padded = imap.padding_predicate(out_shape) is not None
    pad_text = f", pad_value = {pad} : f32" if padded else ""
    new_shape = tuple(imap.map_shape(out_shape))
    args = ", ".join(f"%in{k}: {_tensor(s)}" for k, s in enumerate(ins_shapes))
    ins = ", ".join(f"%in{k}" for k in range(arity))
    ins_types = ", ".join(_tensor(s) for s in ins_shapes)
    block = ", ".join([*["%a: f32", "%b: f32"][:arity], "%o: f32"])
    text = f"""func.func @flow({args}) -> {_tensor(new_shape)} {{
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %init = arith.constant dense<0.0> : {_tensor(out_shape)}
  %g = linalg.generic {{indexing_maps = [{", ".join([*ins_maps, out_map])}], iterator_types = [{kinds}]}} ins({ins} : {ins_types}) outs(%init : {_tensor(out_shape)}) {{
  ^bb0({block}):
    {line}
    linalg.yield {result} : f32
  }} -> {_tensor(out_shape)}
  %t = layout.transform %g {{index_map = #layout.index_map<{imap}>{pad_text}}} : {_tensor(out_shape)} -> {_tensor(new_shape)}
  func.return %t : {_tensor(new_shape)}
}}
"""
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ins_shapes]
    return text, inputs


@SETTINGS
@given(flows())
def test_random_flows_keep_results(case: tuple[str, list[np.ndarray]]) -> None:
    text, inputs = case
    expected = run_graph(parse(text), "flow", inputs)[0]
    after = apply(parse(text), [FlowLayoutRewritesPass(), FoldLayoutRewritesPass()])
    result = run_graph(after, "flow", inputs)[0]
    np.testing.assert_array_equal(result, expected)
