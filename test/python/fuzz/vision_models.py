"""The vision families of `fuzz.models` (issue 41): upsampling, transposed convolutions,
adaptive pools and pixel shuffle, printed as torch-mlir 20261001 prints what torch 2.15
exports (copied from the second set of `examples/models`: fpn_tiny, autoencoder_transpose,
adaptive_pools_net, espcn_pixelshuffle, lraspp_mobilenet_v3_large; see their README). Each
family is a function of the `_Model` being built that replaces its value; every one takes
any batch (`N` = 1 or 3: the gathers' batch index is an index tensor, or `linalg.index 0`).

- `upsample_nearest` (`F.interpolate(mode='nearest')`, scale 2 or 3 or a size): a generic
  with only an output whose body computes each source index from `linalg.index` (`index_cast`,
  `sitofp`, `divf` by the scale (the size ratio folded to an f32 when a size is given),
  `math.floor`, clamps with `maximumf`/`minimumf` to [0, in - 1], `fptosi`) and reads it
  with `tensor.extract`; the index of an axis of extent 1 is the constant `%c0`;
- `upsample_bilinear` (align_corners true or false; variant `bilinear_align_corners`): PyTorch's
  decomposition: per axis an i64 `arange` of the output, `sitofp`, the source coordinate
  (`* (in-1)/(out-1)`, or `(i + 0.5) * scale - 0.5`; a scale that is not an f32 is an f64
  constant `truncf`'d in the body), clamped at 0; the rows' as `Hx1`; `fptosi`, `+ 1`,
  `minsi in - 1`; four gathers (`tensor.extract` at i64 indices with negative-index
  wraparound, batch and channel index tensors `Nx1x1x1`, `Cx1x1`, a unit one a generic
  yielding `%c0_i64`), then the lerp along the columns, then along the rows, with weights
  `coord - floor` clamped to [0, 1];
- `conv_transpose` (`nn.ConvTranspose2d`, kernel 1-4, stride 1-3, padding, output_padding,
  per axis): the weight flipped and transposed by a gather generic with only an output
  (`subi k-1, linalg.index`), the input spread into a zero fill by a strided
  `tensor.insert_slice` (low `k-1-p`, high `k-1-p+output_padding`; none when that is the
  identity), then a stride-1 `linalg.conv_2d_nchw_fchw` from the bias's `linalg.broadcast`;
- `adaptive_avg_pool` (output sizes whose windows are all of one length, PyTorch's
  non-adaptive case: uneven and overlapping windows such as 7 -> 3): i64 window starts
  `(arange * in) divsi out` (the divisor a 0-d `dense<out> : tensor<i64>`), `+ arange` of the
  window length, a 6-D gather generic and a 6-D reduction, the divide by the window size;
  when both axes divide evenly, `avg_pool2d`'s `linalg.pooling_nchw_sum` and divide;
- `adaptive_max_pool` (`in mod out` of 0 or 1 per axis): `linalg.pooling_nchw_max` with
  stride `in div out` and window `in - (out - 1) * stride`, no padding;
- `pixel_shuffle` (upscale 2 or 3; a conv to a multiple of r*r channels first when the
  channels do not divide): `expand_shape` to 6-D, `linalg.transpose [0, 1, 4, 2, 5, 3]`,
  `collapse_shape`.

Ops that torch-mlir's CSE would merge (the same `arange`, the rows' and columns' chains of a
square resize, the fills and empties) are printed once (`_generic` and the printer's shared
ops). Not generated (no export to copy): adaptive pools whose window lengths vary (PyTorch's
masked form), grouped or dilated transposed convolutions, bilinear resizes of an output of
1. The order of the hoisted constants follows the printer's rule (i64 first, then 0, 1,
-inf, the eps, then first use), not always torch-mlir's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from typing import TYPE_CHECKING

import numpy as np

from fuzz.models import (
    MAX_CHANNELS,
    NEG_INF,
    ONE,
    ZERO,
    Value,
    _dense,
    _f32,
    _ints,
    _Window,
    broadcast_map,
    tensor,
)

if TYPE_CHECKING:
    from fuzz.models import _Model

MAX_SPATIAL = 16
"""The largest extent a family that grows the image (upsampling, transposed convolution,
pixel shuffle) makes."""
TRANSPOSED_CHANNELS = (4, 3, 5, 6, 8, 1, 2, 7)
"""The output channels of a transposed convolution."""
VISION_FAMILIES = (
    "pixel_shuffle", "upsample_nearest", "adaptive_max_pool", "adaptive_avg_pool",
    "upsample_bilinear", "conv_transpose",
)  # fmt: skip
"""Simplest first (as `FAMILIES`)."""


def mlir_float(value: float, f32: bool = True) -> str:
    """A float as MLIR prints it: `%.6e` when that reads back exactly, else 9 (f32) or 17
    (f64) significant digits; with its type."""
    value = float(np.float32(value)) if f32 else float(value)
    text = f"{value:.6e}"
    back = float(np.float32(float(text))) if f32 else float(text)
    if back != value:
        text = f"{value:.9g}" if f32 else f"{value:.17g}"
    return f"{text} : {'f32' if f32 else 'f64'}"


def _i64(m: _Model, value: int) -> str:
    return m.p.const(f"{value} : i64", f"c{value}_i64")


def _index(m: _Model, value: int) -> str:
    return m.p.const(f"{value} : index", f"c{value}")


def _loops(rank: int) -> str:
    return ", ".join(f"d{k}" for k in range(rank))


def _identity(rank: int) -> str:
    return f"affine_map<({_loops(rank)}) -> ({_loops(rank)})>"


def _index_tensor_map(shape: Sequence[int], rank: int) -> str:
    """torch-mlir's map of an index tensor of a gather (trailing axes aligned with the
    loops; an axis of extent 1 reads 0)."""
    offset = rank - len(shape)
    exprs = ["0" if e == 1 else f"d{offset + k}" for k, e in enumerate(shape)]
    return f"affine_map<({_loops(rank)}) -> ({', '.join(exprs)})>"


def _generic(
    m: _Model,
    ins: Sequence[tuple[Value, str]],
    out: Value,
    body: Sequence[str],
    result: str,
    out_map: str | None = None,
    iterators: Sequence[str] | None = None,
) -> Value:
    """A `linalg.generic` of any element types (block arguments `%in`, `%@in1`, ...; body
    values `%@bK`), printed once when the same op was printed before (torch-mlir's CSE)."""
    p = m.p
    rank = len(out.shape)
    out_map = out_map or _identity(rank)
    kinds = iterators or ["parallel"] * rank
    key = (
        "generic",
        tuple((v.token, mp) for v, mp in ins),
        out.token,
        out_map,
        tuple(kinds),
        tuple(body),
        result,
    )
    if key in p.shared:
        return p.shared[key]
    maps = ", ".join(p.map(mp) for mp in [*(mp for _, mp in ins), out_map])
    names = ["%in", *(f"%@in{k}" for k in range(1, len(ins)))][: len(ins)]
    block = ", ".join(
        [*(f"{n}: {v.element}" for n, (v, _) in zip(names, ins, strict=True)),
         f"%out: {out.element}"]
    )  # fmt: skip
    t = tensor(out.shape, out.element)
    operands = ""
    if ins:
        tokens = ", ".join(v.token for v, _ in ins)
        types = ", ".join(tensor(v.shape, v.element) for v, _ in ins)
        operands = f"ins({tokens} : {types}) "
    lines = "".join(f"      {line}\n" for line in body)
    kinds_text = ", ".join(f'"{k}"' for k in kinds)
    value = p.op(
        f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds_text}]}} "
        f"{operands}outs({out.token} : {t}) {{\n"
        f"    ^bb0({block}):\n"
        f"{lines}"
        f"      linalg.yield {result} : {out.element}\n"
        f"    }} -> {t}",
        out.shape,
        element=out.element,
    )
    p.shared[key] = value
    return value


def _map1(v: Value, out: Value) -> list[tuple[Value, str]]:
    return [(v, _identity(len(out.shape)))]


def _iota(m: _Model, n: int) -> Value:
    """`torch.arange(n)` (i64): `linalg.index` cast to i64; `%c0_i64` when n is 1."""
    out = m.p.empty((n,), "i64")
    if n == 1:
        return _generic(m, [], out, [], _i64(m, 0))
    return _generic(
        m, [], out, ["%@b0 = linalg.index 0 : index", "%@b1 = arith.index_cast %@b0 : index to i64"],
        "%@b1",
    )  # fmt: skip


def _unary(m: _Model, x: Value, element: str, body: Sequence[str], result: str) -> Value:
    """An elementwise generic of one operand into the shared empty of `element`."""
    out = m.p.empty(x.shape, element)
    return _generic(m, _map1(x, out), out, body, result)


def _scalar(m: _Model, value: float) -> tuple[list[str], str]:
    """A Python float scalar of an f32 op: an f32 constant when the f64 is one exactly
    (the `arith.truncf` folded), else the f64 constant truncated in the body."""
    if float(np.float32(value)) == value:
        return [], m.p.const(mlir_float(value))
    return [f"%@b0 = arith.truncf {m.p.const(mlir_float(value, False))} : f64 to f32"], "%@b0"


def _gather(m: _Model, src: Value, indices: Sequence[Value], shape: tuple[int, ...]) -> Value:
    """`aten.index.Tensor` of `src` by one i64 index tensor per axis (broadcast to `shape`),
    each wrapped when negative (`+ extent`)."""
    rank = len(shape)
    body: list[str] = []
    names = ["%in", *(f"%@in{k}" for k in range(1, len(indices)))]
    zero = _i64(m, 0)
    positions: list[str] = []
    for name, extent in zip(names, src.shape, strict=True):
        k = len(body)
        body += [
            f"%@b{k} = arith.cmpi slt, {name}, {zero} : i64",
            f"%@b{k + 1} = arith.addi {name}, {_i64(m, extent)} : i64",
            f"%@b{k + 2} = arith.select %@b{k}, %@b{k + 1}, {name} : i64",
            f"%@b{k + 3} = arith.index_cast %@b{k + 2} : i64 to index",
        ]
        positions.append(f"%@b{k + 3}")
    body.append(
        f"%extracted = tensor.extract {src.token}[{', '.join(positions)}] : {tensor(src.shape)}"
    )
    ins = [(v, _index_tensor_map(v.shape, rank)) for v in indices]
    return _generic(m, ins, m.p.empty(shape), body, "%extracted")


def _batch_and_channel_indices(m: _Model, n: int, c: int, rank: int) -> tuple[Value, Value]:
    """The index tensors of the two leading axes of a gather (`None` in PyTorch's index):
    the channels' `arange` expanded to `Cx1...` (rank - 1 axes), then the batch's."""
    p = m.p
    channel = p.expand(_iota(m, c), [list(range(rank - 1))], (c, *[1] * (rank - 2)))
    batch = p.expand(_iota(m, n), [list(range(rank))], (n, *[1] * (rank - 1)))
    return batch, channel


def _output_size(m: _Model, h: int, w: int, scales: Sequence[int]) -> tuple[int, int, int]:
    """An upsampling's output: (OH, OW, scale) for a scale factor that keeps both extents
    within MAX_SPATIAL, else (OH, OW, 0) for a size (2 to MAX_SPATIAL, not the input's)."""
    c = m.c
    fitting = [s for s in scales if max(h, w) * s <= MAX_SPATIAL]
    if fitting and not c.flag(40):
        s = c.choice(fitting)
        return h * s, w * s, s
    oh = c.integer(2, MAX_SPATIAL)
    ow = c.integer(2, MAX_SPATIAL) if c.flag(50) else oh
    # A ratio of 1 would be folded away (`divf x, 1.0`, `mulf x, 1.0`).
    oh = oh if oh != h else (oh + 1 if oh < MAX_SPATIAL else oh - 1)
    ow = ow if ow != w else (ow + 1 if ow < MAX_SPATIAL else ow - 1)
    return oh, ow, 0


# Families ------------------------------------------------------------------------------------


def applies(m: _Model, family: str) -> bool:
    _, _, h, w = m.value.shape
    if family == "pixel_shuffle":
        return max(h, w) * 2 <= MAX_SPATIAL
    if family in ("adaptive_avg_pool", "adaptive_max_pool"):
        return h * w > 1
    return True


def upsample_nearest(m: _Model) -> None:
    p, x = m.p, m.value
    n, ch, h, w = x.shape
    oh, ow, s = _output_size(m, h, w, (2, 3))
    if s:
        factors = [_f32(s), _f32(s)]
    else:
        factors = [mlir_float(np.float32(o) / np.float32(i)) for o, i in ((oh, h), (ow, w))]
    body: list[str] = []
    indices: list[str] = []
    for axis, extent in enumerate((n, ch, oh, ow)):
        if extent == 1:
            indices.append(_index(m, 0))
        else:
            indices.append(f"%@b{len(body)}")
            body.append(f"%@b{len(body)} = linalg.index {axis} : index")
    zero = p.const(ZERO)
    for axis, size, factor in ((2, h, factors[0]), (3, w, factors[1])):
        k = len(body)
        scale, top = p.const(factor), p.const(_f32(size - 1))
        body += [
            f"%@b{k} = arith.index_cast {indices[axis]} : index to i64",
            f"%@b{k + 1} = arith.sitofp %@b{k} : i64 to f32",
            f"%@b{k + 2} = arith.divf %@b{k + 1}, {scale} : f32",
            f"%@b{k + 3} = math.floor %@b{k + 2} : f32",
            f"%@b{k + 4} = arith.maximumf %@b{k + 3}, {zero} : f32",
            f"%@b{k + 5} = arith.minimumf %@b{k + 4}, {top} : f32",
            f"%@b{k + 6} = arith.fptosi %@b{k + 5} : f32 to i64",
            f"%@b{k + 7} = arith.index_cast %@b{k + 6} : i64 to index",
        ]
        indices[axis] = f"%@b{k + 7}"
    body.append(f"%extracted = tensor.extract {x.token}[{', '.join(indices)}] : {tensor(x.shape)}")
    m.value = _generic(m, [], p.empty((n, ch, oh, ow)), body, "%extracted")


def _bilinear_axis(
    m: _Model, size: int, out: int, scale: float, align: bool, rows: bool
) -> tuple[Value, Value, Value]:
    """PyTorch's `get_values` of `_upsample_linear` for one axis: the clamped source
    coordinate (as `OUTx1` for the rows), its floor and the next index (i64)."""
    p = m.p
    zero = p.const(ZERO)
    coord = _unary(m, _iota(m, out), "f32", ["%@b0 = arith.sitofp %in : i64 to f32"], "%@b0")

    def scaled(x: Value, op: str, value: float) -> Value:
        lines, token = _scalar(m, value)
        k = len(lines)
        return _unary(m, x, "f32", [*lines, f"%@b{k} = arith.{op} %in, {token} : f32"], f"%@b{k}")

    if align:
        coord = scaled(coord, "mulf", scale)
    else:
        coord = scaled(scaled(scaled(coord, "addf", 0.5), "mulf", scale), "subf", 0.5)
    coord = _unary(
        m, coord, "f32",
        [f"%@b0 = arith.cmpf ult, %in, {zero} : f32", f"%@b1 = arith.select %@b0, {zero}, %in : f32"],
        "%@b1",
    )  # fmt: skip
    if rows:
        coord = p.expand(coord, [[0, 1]], (out, 1))
    low = _unary(m, coord, "i64", ["%@b0 = arith.fptosi %in : f32 to i64"], "%@b0")
    high = _unary(m, low, "i64", [f"%@b0 = arith.addi %in, {_i64(m, 1)} : i64"], "%@b0")
    high = _unary(m, high, "i64", [f"%@b0 = arith.minsi %in, {_i64(m, size - 1)} : i64"], "%@b0")
    return coord, low, high


def upsample_bilinear(m: _Model) -> None:
    p, c, x = m.p, m.c, m.value
    n, ch, h, w = x.shape
    align = c.flag(50)
    oh, ow, s = _output_size(m, h, w, (2, 3))
    if align:
        m.used.add("bilinear_align_corners")
    axes: list[tuple[Value, Value, Value]] = []
    for rows, (size, out) in ((True, (h, oh)), (False, (w, ow))):
        ratio = 1.0 / s if s else size / out
        scale = (size - 1.0) / (out - 1) if align else ratio
        axes.append(_bilinear_axis(m, size, out, scale, align, rows))
    (rows_f, rows_lo, rows_hi), (cols_f, cols_lo, cols_hi) = axes
    batch, channel = _batch_and_channel_indices(m, n, ch, 4)
    shape = (n, ch, oh, ow)
    corners = [
        _gather(m, x, [batch, channel, r, col], shape)
        for r, col in product((rows_lo, rows_hi), (cols_lo, cols_hi))
    ]
    zero, one = p.const(ZERO), p.const(ONE)

    def weight(coord: Value, low: Value) -> Value:
        out = p.empty(coord.shape)
        ins = [*_map1(coord, out), *_map1(low, out)]
        diff = _generic(
            m, ins, out,
            ["%@b0 = arith.sitofp %@in1 : i64 to f32", "%@b1 = arith.subf %in, %@b0 : f32"],
            "%@b1",
        )  # fmt: skip
        return _unary(
            m, diff, "f32",
            [f"%@b0 = arith.cmpf ult, %in, {zero} : f32",
             f"%@b1 = arith.select %@b0, {zero}, %in : f32",
             f"%@b2 = arith.cmpf ugt, %@b1, {one} : f32",
             f"%@b3 = arith.select %@b2, {one}, %@b1 : f32"],
            "%@b3",
        )  # fmt: skip

    def lerp(a: Value, b: Value, t: Value) -> Value:
        return m.binary(a, m.binary(m.binary(b, a, "subf"), t, "mulf"), "addf")

    t = weight(cols_f, cols_lo)
    top = lerp(corners[0], corners[1], t)
    bottom = lerp(corners[2], corners[3], t)
    m.value = lerp(top, bottom, weight(rows_f, rows_lo))


def conv_transpose(m: _Model) -> None:
    p, c, x = m.p, m.c, m.value
    n, cin, h, w = x.shape
    cout = c.choice(TRANSPOSED_CHANNELS)
    bias = c.flag(50)
    per_axis = c.flag(30)
    axes: list[tuple[int, int, int, int]] = []
    for size in (h, w):
        if axes and not per_axis:
            # The first axis's kernel, stride, output padding and padding where they fit.
            k, s, pad, extra = axes[0]
            if (size - 1) * s + k + s - 1 > MAX_SPATIAL:
                s, extra = 1, 0
            pad = min(pad, ((size - 1) * s + k + extra - 1) // 2)
            axes.append((k, s, pad, extra))
            continue
        k = c.integer(1, min(4, MAX_SPATIAL + 1 - size))
        strides = [s for s in (1, 2, 3) if (size - 1) * s + k + s - 1 <= MAX_SPATIAL]
        s = c.choice(strides)
        extra = c.integer(0, s - 1)
        full = (size - 1) * s + k + extra
        pad = c.integer(0, min(k - 1, (full - 1) // 2))
        axes.append((k, s, pad, extra))
    if len({a[0] for a in axes}) > 1 or len({a[1] for a in axes}) > 1:
        m.used.add("conv_transpose_per_axis")
    (kh, sh, ph, eh), (kw, sw, pw, ew) = axes
    weight = p.arg(f"{m.prefix}_weight", (cin, cout, kh, kw))
    bias_arg = p.arg(f"{m.prefix}_bias", (cout,)) if bias else None
    # The weight, flipped and transposed: flipped[o, i, a, b] = weight[i, o, kh-1-a, kw-1-b].
    body: list[str] = []
    loops: list[str] = []
    for axis, extent in enumerate((cout, cin, kh, kw)):
        if extent == 1:
            loops.append(_index(m, 0))
        else:
            loops.append(f"%@b{len(body)}")
            body.append(f"%@b{len(body)} = linalg.index {axis} : index")
    for axis, k in ((2, kh), (3, kw)):
        if k > 1:
            body.append(f"%@b{len(body)} = arith.subi {_index(m, k - 1)}, {loops[axis]} : index")
            loops[axis] = f"%@b{len(body) - 1}"
    position = ", ".join([loops[1], loops[0], loops[2], loops[3]])
    body.append(f"%extracted = tensor.extract {weight.token}[{position}] : {tensor(weight.shape)}")
    flipped_init = p.fill(ZERO, p.empty((cout, cin, kh, kw)))
    flipped = _generic(m, [], flipped_init, body, "%extracted")
    # The input spread into zeros (strided), padded by k-1-p low and k-1-p+output_padding high.
    source = x
    lows = (kh - 1 - ph, kw - 1 - pw)
    highs = (lows[0] + eh, lows[1] + ew)
    if (sh, sw) != (1, 1) or any(lows) or any(highs):
        spread = (
            n, cin, (h - 1) * sh + 1 + lows[0] + highs[0], (w - 1) * sw + 1 + lows[1] + highs[1]
        )  # fmt: skip
        zeros = p.fill(ZERO, p.empty(spread))
        source = p.op(
            f"tensor.insert_slice {x.token} into {zeros.token}[0, 0, {lows[0]}, {lows[1]}] "
            f"{_ints(x.shape)} [1, 1, {sh}, {sw}] : {tensor(x.shape)} into {tensor(spread)}",
            spread,
            "inserted_slice",
        )
    out = (n, cout, source.shape[2] - kh + 1, source.shape[3] - kw + 1)
    empty = p.empty(out)
    init = p.conv_init(bias_arg, empty, out)
    m.value = p.op(
        f"linalg.conv_2d_nchw_fchw {_Window().attributes()} ins({source.token}, "
        f"{flipped.token} : {tensor(source.shape)}, {tensor(flipped.shape)}) "
        f"outs({init.token} : {tensor(out)}) -> {tensor(out)}",
        out,
    )


def _pool_sizes(m: _Model, h: int, w: int, fits: Callable[[int, int], bool]) -> tuple[int, int]:
    """Adaptive pooling output extents (each `o` with `fits(size, o)`), not the input's."""
    c = m.c
    options = [
        (oh, ow)
        for oh in range(1, h + 1)
        for ow in range(1, w + 1)
        if fits(h, oh) and fits(w, ow) and (oh, ow) != (h, w)
    ]
    uneven = [(oh, ow) for oh, ow in options if h % oh or w % ow]
    if fits is _uniform and uneven and c.flag(70):
        options = uneven  # the 6-D gather form, more often than the divisible one
    square = [(oh, ow) for oh, ow in options if oh == ow]
    return c.choice(square) if square and c.flag(50) else c.choice(options)


def adaptive_max_pool(m: _Model) -> None:
    p, x = m.p, m.value
    n, ch, h, w = x.shape
    oh, ow = _pool_sizes(m, h, w, lambda size, o: size % o in (0, 1))
    strides = (h // oh, w // ow)
    kernel = (h - (oh - 1) * strides[0], w - (ow - 1) * strides[1])
    shape = (n, ch, oh, ow)
    init = p.fill(NEG_INF, p.empty(shape))
    window = p.empty(kernel)
    m.value = p.op(
        f"linalg.pooling_nchw_max {{dilations = dense<1> : vector<2xi64>, strides = "
        f"{_dense(strides)}}} ins({x.token}, {window.token} : {tensor(x.shape)}, "
        f"{tensor(kernel)}) outs({init.token} : {tensor(shape)}) -> {tensor(shape)}",
        shape,
    )


def _uniform(size: int, out: int) -> bool:
    """PyTorch's `adaptive_avg_pool2d` gathers windows of one length (not `adaptive`)."""
    rest = size % out
    return rest == 0 or out % rest == 0


def _window_indices(m: _Model, size: int, out: int) -> tuple[Value, int]:
    """`compute_idx` of PyTorch's decomposition: the OUTxLENGTH window indices (i64)."""
    p = m.p
    length = size // out + (0 if size % out == 0 else 1)
    orange = _iota(m, out)
    times = _unary(m, orange, "i64", [f"%@b0 = arith.muli %in, {_i64(m, size)} : i64"], "%@b0")
    divisor = Value(p.const(f"dense<{out}> : tensor<i64>"), (), "i64")
    starts_out = p.empty((out,), "i64")
    starts = _generic(
        m,
        [(times, _identity(1)), (divisor, "affine_map<(d0) -> ()>")],
        starts_out,
        ["%@b0 = arith.divsi %in, %@in1 : i64"],
        "%@b0",
    )
    offsets = _iota(m, length)
    column = p.expand(starts, [[0, 1]], (out, 1))
    shape = (out, length)
    window = _generic(
        m,
        [
            (column, broadcast_map(column.shape, shape)),
            (offsets, broadcast_map(offsets.shape, shape)),
        ],
        p.empty(shape, "i64"),
        ["%@b0 = arith.addi %in, %@in1 : i64"],
        "%@b0",
    )
    return window, length


def adaptive_avg_pool(m: _Model) -> None:
    p, x = m.p, m.value
    n, ch, h, w = x.shape
    oh, ow = _pool_sizes(m, h, w, _uniform)
    if h % oh == 0 and w % ow == 0:
        m.used.add("adaptive_avg_pool_divisible")
        kernel = (h // oh, w // ow)
        shape = (n, ch, oh, ow)
        init = p.fill(ZERO, p.empty(shape))
        window = p.empty(kernel)
        total = p.op(
            f"linalg.pooling_nchw_sum {{dilations = dense<1> : vector<2xi64>, strides = "
            f"{_dense(kernel)}}} ins({x.token}, {window.token} : {tensor(x.shape)}, "
            f"{tensor(kernel)}) outs({init.token} : {tensor(shape)}) -> {tensor(shape)}",
            shape,
        )
        divisor = p.const(_f32(kernel[0] * kernel[1]))
        m.value = p.elementwise([total], shape, [f"%@b0 = arith.divf %in, {divisor} : f32"])
        return
    rows, lh = _window_indices(m, h, oh)
    cols, lw = _window_indices(m, w, ow)
    rows4 = p.expand(rows, [[0], [1, 2, 3]], (oh, lh, 1, 1))
    batch, channel = _batch_and_channel_indices(m, n, ch, 6)
    windows = _gather(m, x, [batch, channel, rows4, cols], (n, ch, oh, lh, ow, lw))
    shape = (n, ch, oh, ow)
    total = _generic(
        m,
        [(windows, _identity(6))],
        p.fill(ZERO, p.empty(shape)),
        ["%@b0 = arith.addf %in, %out : f32"],
        "%@b0",
        "affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d4)>",
        ["parallel", "parallel", "parallel", "reduction", "parallel", "reduction"],
    )
    if lh * lw == 1:
        m.value = total
        return
    divisor = p.const(_f32(lh * lw))
    m.value = p.elementwise([total], shape, [f"%@b0 = arith.divf %in, {divisor} : f32"])


def pixel_shuffle(m: _Model) -> None:
    p, c = m.p, m.c
    _, _, h, w = m.value.shape
    r = c.choice([r for r in (2, 3) if max(h, w) * r <= MAX_SPATIAL])
    if m.channels % (r * r):
        cout = r * r * c.integer(1, MAX_CHANNELS // (r * r))
        m.value = m.conv_of(m.value, f"{m.prefix}_conv", cout, m.same_shape_window(), c.flag(50))
    x = m.value
    n, ch, h, w = x.shape
    grouped = p.expand(x, [[0], [1, 2, 3], [4], [5]], (n, ch // (r * r), r, r, h, w))
    shape = (n, ch // (r * r), h, r, w, r)
    empty = p.empty(shape)
    swapped = p.op(
        f"linalg.transpose ins({grouped.token} : {tensor(grouped.shape)}) "
        f"outs({empty.token} : {tensor(shape)}) permutation = [0, 1, 4, 2, 5, 3] ",
        shape,
        "transposed",
    )
    m.value = p.collapse(swapped, [[0], [1], [2, 3], [4, 5]], (n, ch // (r * r), h * r, w * r))


LAYERS = {
    "pixel_shuffle": pixel_shuffle,
    "upsample_nearest": upsample_nearest,
    "adaptive_max_pool": adaptive_max_pool,
    "adaptive_avg_pool": adaptive_avg_pool,
    "upsample_bilinear": upsample_bilinear,
    "conv_transpose": conv_transpose,
}
