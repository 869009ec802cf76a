"""Random small CNN-like MODELS, printed as torch-mlir's FX importer prints them
(linalg on tensors, as the exports in the shared models folder: `#map` aliases, `module {
func.func @main(%x, PARAMETERS...) -> tensor { ... return } }`, constants hoisted to the top
in its order, `tensor.empty`/`linalg.fill` shared, SSA names as MLIR's printer picks them).

`generate_model(chooser)` builds an input `%x: tensor<NxCxHxW>` (C <= 12, H, W <= 10, extents
of 1 included) and two to six layers, each from one op family (`FAMILIES`), sometimes a
classifier head; parameters are arguments named like a `state_dict` (`%layers_2_weight`,
`%layers_3_running_var`, `%fc_bias`, in registration order). The families:

- `conv`: `linalg.conv_2d_nchw_fchw` (kernels 1-3, strides 1-2, dilations 1-2, per-axis),
  zero `tensor.pad` when padded, bias as `linalg.broadcast` into the output or a zero fill;
- `grouped_conv`: `linalg.conv_2d_ngchw_gfchw` between `tensor.expand_shape`s of the input,
  the weight and the output and a `tensor.collapse_shape` of the result;
- `depthwise_conv`: `linalg.depthwise_conv_2d_nchw_chw` with the weight collapsed to CxKHxKW;
- `batch_norm`: running_var + `arith.truncf` of the f64 eps, `math.sqrt`, a reciprocal with
  `cf.assert` of `cmpf one`, the 1-D parameters expanded to Cx1x1, sub/mul/mul/add generics
  (broadcast maps as torch-mlir writes them: `(d1, 0, 0)`, `(d1, d2, d3)` on 1x1);
- `relu` (`cmpf ugt` + `select`), `sigmoid` (`negf`, `math.exp`, `addf`, `divf`), `silu`
  (sigmoid, then a multiply);
- `max_pool`: `linalg.pooling_nchw_max` over a `-inf` `tensor.pad`, `ceil_mode` as extra
  high-side padding of one stride; `avg_pool`: `linalg.pooling_nchw_sum` + a divide generic;
- `residual_add`: an add generic of a same-shape earlier value or a conv branch;
- `concat`: `tensor.concat` along channels of conv branches (and the value itself), with
  channel counts that are multiples of 4 (`concat_aligned`) or not (`concat_unaligned`);
- `channel_split`: `tensor.extract_slice` of channels (one part, or ShuffleNet's: a branch
  on the second part concatenated to the first); `channel_shuffle`: expand, `linalg.transpose`,
  collapse;
- `mean`: keepdim mean (reduction generic with output map `(d0, d1, 0, 0)`, then a divide
  unless the window is 1x1); `squeeze_excite`: mean, 1x1 convs, relu or SiLU, sigmoid and
  the broadcast multiply;
- `classifier`: flatten (`collapse_shape`), `linalg.transpose` of the weight, `linalg.matmul`,
  bias add with map `(d1)`;
- the vision families of `fuzz.vision_models` (torch 2.15's exports): `pixel_shuffle`,
  `upsample_nearest`, `adaptive_max_pool`, `adaptive_avg_pool`, `upsample_bilinear`,
  `conv_transpose` (see that module).

The input has batch 1 or 3 (`batch3`, about one model in seven); every family handles
both. A model returns its last value and sometimes one or two earlier ones (`two_results`,
`three_results`). `generate_model(chooser, targets)` makes a model with the families and
variants `targets` names (a campaign's `--features`).

`features_used` of the returned `Graph` holds the families a model contains, and the variants
`max_pool_ceil`, `concat_aligned`, `concat_unaligned`, `two_results`, `three_results`, `batch3`,
`bilinear_align_corners`, `conv_transpose_per_axis`, `adaptive_avg_pool_divisible`.
`model_options(chooser)`
draws the pipeline options a campaign checks a model with (`lift-params`, `fuse`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from types import ModuleType

from hypothesis import strategies as st

from fuzz.choices import Chooser, DrawChooser
from fuzz.graphs import Graph

Shape = tuple[int, ...]

FAMILIES = (
    "relu", "conv", "batch_norm", "sigmoid", "silu", "depthwise_conv", "grouped_conv",
    "max_pool", "avg_pool", "residual_add", "concat", "channel_split", "channel_shuffle",
    "mean", "squeeze_excite", "pixel_shuffle", "upsample_nearest", "adaptive_max_pool",
    "adaptive_avg_pool", "upsample_bilinear", "conv_transpose", "classifier",
)  # fmt: skip
"""The op families, simplest first (a shrunk model picks the first that applies); the
vision ones (`fuzz.vision_models`) after the others."""
STEP_FAMILIES = FAMILIES[:-1]
"""The families of a layer; `classifier` is only the head."""
MODEL_VARIANTS = ("batch3", "two_results", "three_results")
"""Whole-model features a campaign can target besides the families (`generate_model`)."""
CHANNELS = (4, 3, 5, 6, 8, 1, 2, 7, 12, 9, 10, 11)
SPATIAL = (4, 3, 5, 6, 7, 8, 9, 10, 2, 1)
MAX_CHANNELS = 12

ZERO = "0.000000e+00 : f32"
ONE = "1.000000e+00 : f32"
NEG_INF = "0xFF800000 : f32"
EPS = "1.000000e-05 : f64"
CONSTANT_ORDER = (ZERO, ONE, NEG_INF, EPS)
"""Where torch-mlir's exports print these constants (first, in this order, after the i64
ones); any other constant follows them in order of first use."""


@dataclass(frozen=True)
class ModelOptions:
    """The `physlayout-adreno` options a model is checked with."""

    lift_params: bool = False
    fuse: bool = True


def model_options(c: Chooser) -> ModelOptions:
    """Options drawn before the model (so they keep their positions when it shrinks)."""
    return ModelOptions(lift_params=c.flag(30), fuse=not c.flag(25))


@dataclass(frozen=True)
class Value:
    """A value of the function: its token in the text being built (or `%name` for an
    argument) and its static shape."""

    token: str
    shape: Shape
    element: str = "f32"


def tensor(shape: Sequence[int], element: str = "f32") -> str:
    return "tensor<" + "".join(f"{e}x" for e in shape) + f"{element}>"


def _ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _dense(values: tuple[int, int]) -> str:
    text = str(values[0]) if values[0] == values[1] else _ints(values)
    return f"dense<{text}> : vector<2xi64>"


def _f32(value: float) -> str:
    return f"{value:.6e} : f32"


def broadcast_map(operand: Shape, result: Shape) -> str:
    """torch-mlir's indexing map of an elementwise operand (trailing axes aligned): an
    operand axis of extent 1 against a result axis that is not 1 reads index 0."""
    loops = [f"d{k}" for k in range(len(result))]
    offset = len(result) - len(operand)
    exprs = [
        "0" if extent == 1 and result[offset + k] != 1 else loops[offset + k]
        for k, extent in enumerate(operand)
    ]
    return f"affine_map<({', '.join(loops)}) -> ({', '.join(exprs)})>"


# The printer ---------------------------------------------------------------------------------

_TOKEN = re.compile(r"%@(?:in(\d)|([ab]?)(\d+))")


@dataclass
class _Printer:
    """The function being built. Results are tokens (`%@N`; in regions `%@bK` for the K-th
    body value, `%@aK` for the K-th block argument of a pad, `%@inK` for the block argument
    of the (K+1)-th input, named `%in_N` after the top level's names),
    named when the text is assembled, as MLIR's printer names them: the top-level values
    first (numbered, or a name hint made unique with one shared counter), then each region
    on its own from where the top level ended."""

    args: list[tuple[str, Shape]] = field(default_factory=list[tuple[str, Shape]])
    lines: list[str] = field(default_factory=list[str])
    hints: list[str | None] = field(default_factory=list[str | None])
    constants: dict[str, str] = field(default_factory=dict[str, str])
    maps: dict[str, str] = field(default_factory=dict[str, str])
    shared: dict[tuple[object, ...], Value] = field(default_factory=dict[tuple[object, ...], Value])

    def arg(self, name: str, shape: Shape) -> Value:
        self.args.append((name, shape))
        return Value(f"%{name}", shape)

    def _new(self, hint: str | None) -> str:
        self.hints.append(hint)
        return f"%@{len(self.hints) - 1}"

    def op(self, text: str, shape: Shape, hint: str | None = None, element: str = "f32") -> Value:
        token = self._new(hint)
        self.lines.append(f"    {token} = {text}")
        return Value(token, shape, element)

    def const(self, literal: str, hint: str = "cst") -> str:
        """The hoisted `arith.constant` of `literal` (`hint`: its name, `c2` for an index
        2, `c7_i64` for an i64 7)."""
        if literal not in self.constants:
            self.constants[literal] = self._new(hint)
        return self.constants[literal]

    def map(self, text: str) -> str:
        if text not in self.maps:
            self.maps[text] = f"#map{len(self.maps) or ''}"
        return self.maps[text]

    # Shared ops (torch-mlir's output is CSE'd: one tensor.empty per shape, one fill each)

    def empty(self, shape: Shape, element: str = "f32") -> Value:
        key = ("empty", shape, element)
        if key not in self.shared:
            t = tensor(shape, element)
            self.shared[key] = self.op(f"tensor.empty() : {t}", shape, element=element)
        return self.shared[key]

    def conv_init(self, bias: Value | None, empty: Value, shape: Shape) -> Value:
        """A convolution's init as torch-mlir prints it: zeros without a bias, else the bias
        broadcast over batch and pixels."""
        if bias is None:
            return self.fill(ZERO, empty)
        return self.op(
            f"linalg.broadcast ins({bias.token} : {tensor(bias.shape)}) "
            f"outs({empty.token} : {tensor(shape)}) dimensions = [0, 2, 3] ",
            shape,
            "broadcasted",
        )

    def fill(self, literal: str, init: Value) -> Value:
        key = ("fill", literal, init.token)
        if key not in self.shared:
            t = tensor(init.shape)
            self.shared[key] = self.op(
                f"linalg.fill ins({self.const(literal)} : f32) outs({init.token} : {t}) -> {t}",
                init.shape,
            )
        return self.shared[key]

    def expand(self, x: Value, groups: Sequence[Sequence[int]], shape: Shape) -> Value:
        key = ("expand", x.token, shape)
        if key not in self.shared:
            reassociation = "[" + ", ".join(_ints(g) for g in groups) + "]"
            self.shared[key] = self.op(
                f"tensor.expand_shape {x.token} {reassociation} output_shape {_ints(shape)} "
                f": {tensor(x.shape, x.element)} into {tensor(shape, x.element)}",
                shape,
                "expanded",
                x.element,
            )
        return self.shared[key]

    def collapse(self, x: Value, groups: Sequence[Sequence[int]], shape: Shape) -> Value:
        reassociation = "[" + ", ".join(_ints(g) for g in groups) + "]"
        return self.op(
            f"tensor.collapse_shape {x.token} {reassociation} : {tensor(x.shape)} "
            f"into {tensor(shape)}",
            shape,
            "collapsed",
        )

    def pad(self, x: Value, low: Shape, high: Shape, literal: str) -> Value:
        if not any(low) and not any(high):
            return x
        shape = tuple(lo + e + hi for lo, e, hi in zip(low, x.shape, high, strict=True))
        block_args = ", ".join(f"%@a{k}: index" for k in range(len(shape)))
        return self.op(
            f"tensor.pad {x.token} low{_ints(low)} high{_ints(high)} {{\n"
            f"    ^bb0({block_args}):\n"
            f"      tensor.yield {self.const(literal)} : f32\n"
            f"    }} : {tensor(x.shape)} to {tensor(shape)}",
            shape,
            "padded",
        )

    def generic(
        self,
        ins: Sequence[tuple[Value, str]],
        out: Value,
        out_map: str,
        iterators: Sequence[str],
        body: Sequence[str],
    ) -> Value:
        """A `linalg.generic`; `body` ends with the yielded value `%@bK` (its last line
        defines it)."""
        maps = ", ".join(self.map(m) for m in [*(m for _, m in ins), out_map])
        kinds = ", ".join(f'"{k}"' for k in iterators)
        names = ["%in", "%@in1"][: len(ins)]
        block = ", ".join([*(f"{n}: f32" for n in names), "%out: f32"])
        result = re.findall(r"%@b\d+", body[-1])[0]
        lines = "".join(f"      {line}\n" for line in body)
        t = tensor(out.shape)
        return self.op(
            f"linalg.generic {{indexing_maps = [{maps}], iterator_types = [{kinds}]}} "
            f"ins({', '.join(v.token for v, _ in ins)} : {', '.join(tensor(v.shape) for v, _ in ins)}) "
            f"outs({out.token} : {t}) {{\n"
            f"    ^bb0({block}):\n"
            f"{lines}"
            f"      linalg.yield {result} : f32\n"
            f"    }} -> {t}",
            out.shape,
        )

    def elementwise(self, ins: Sequence[Value], shape: Shape, body: Sequence[str]) -> Value:
        """An elementwise generic as torch-mlir writes one (outs: the shared empty)."""
        maps = [(v, broadcast_map(v.shape, shape)) for v in ins]
        identity = broadcast_map(shape, shape)
        return self.generic(maps, self.empty(shape), identity, ["parallel"] * len(shape), body)

    # Assembly --------------------------------------------------------------------------

    def text(self, results: Sequence[Value]) -> str:
        constants = sorted(
            self.constants.items(),
            key=lambda item: (
                -1
                if item[0].endswith(": i64")
                else CONSTANT_ORDER.index(item[0])
                if item[0] in CONSTANT_ORDER
                else len(CONSTANT_ORDER),
                int(item[1][2:]),
            ),
        )
        first = [int(token[2:]) for _, token in constants]
        order = first + sorted(set(range(len(self.hints))) - set(first))
        names: dict[int, str] = {}
        taken = {name for name, _ in self.args}
        counter = numbered = 0
        for k in order:
            hint = self.hints[k]
            if hint is None:
                names[k] = str(numbered)
                numbered += 1
            elif hint not in taken:
                names[k] = hint
                taken.add(hint)
            else:
                names[k] = f"{hint}_{counter}"
                counter += 1

        def name(match: re.Match[str]) -> str:
            if match.group(1):
                return f"%in_{counter + int(match.group(1)) - 1}"
            kind, number = match.group(2), int(match.group(3))
            if kind == "b":
                return f"%{numbered + number}"
            if kind == "a":
                return f"%arg{len(self.args) + number}"
            return f"%{names[number]}"

        body = [f"    {token} = arith.constant {literal}" for literal, token in constants]
        body += self.lines
        types = [tensor(v.shape) for v in results]
        result_types = types[0] if len(types) == 1 else f"({', '.join(types)})"
        signature = ", ".join(f"%{n}: {tensor(s)}" for n, s in self.args)
        lines = [f"{alias} = {text}" for text, alias in self.maps.items()]
        lines += [
            "module {",
            f"  func.func @main({signature}) -> {result_types} {{",
            *body,
            f"    return {', '.join(v.token for v in results)} : {', '.join(types)}",
            "  }",
            "}",
        ]
        return _TOKEN.sub(name, "\n".join(lines) + "\n")


# Layers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Window:
    """A convolution's or pooling's kernel, strides, dilations and (symmetric) padding."""

    kernel: tuple[int, int] = (1, 1)
    strides: tuple[int, int] = (1, 1)
    dilations: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)

    def out(self, h: int, w: int) -> tuple[int, int]:
        """The output extents on an HxW input (PyTorch's, rounding down)."""

        def axis(k: int, size: int) -> int:
            reach = self.dilations[k] * (self.kernel[k] - 1) + 1
            return (size + 2 * self.padding[k] - reach) // self.strides[k] + 1

        return axis(0, h), axis(1, w)

    def attributes(self) -> str:
        return f"{{dilations = {_dense(self.dilations)}, strides = {_dense(self.strides)}}}"


SAME_3x3 = _Window((3, 3), (1, 1), (1, 1), (1, 1))
POINTWISE = _Window()


@dataclass
class _Model:
    c: Chooser
    p: _Printer
    value: Value
    history: list[Value] = field(default_factory=list[Value])
    used: set[str] = field(default_factory=set[str])
    prefix: str = "layers_0"

    @property
    def channels(self) -> int:
        return self.value.shape[1]

    # Building blocks ---------------------------------------------------------------------

    def relu_of(self, x: Value) -> Value:
        zero = self.p.const(ZERO)
        return self.p.elementwise(
            [x],
            x.shape,
            [
                f"%@b0 = arith.cmpf ugt, %in, {zero} : f32",
                f"%@b1 = arith.select %@b0, %in, {zero} : f32",
            ],
        )

    def sigmoid_of(self, x: Value) -> Value:
        one = self.p.const(ONE)
        return self.p.elementwise(
            [x],
            x.shape,
            [
                "%@b0 = arith.negf %in : f32",
                "%@b1 = math.exp %@b0 : f32",
                f"%@b2 = arith.addf %@b1, {one} : f32",
                f"%@b3 = arith.divf {one}, %@b2 : f32",
            ],
        )

    def binary(self, a: Value, b: Value, op: str) -> Value:
        return self.p.elementwise([a, b], a.shape, [f"%@b0 = arith.{op} %in, %@in1 : f32"])

    def silu_of(self, x: Value) -> Value:
        return self.binary(x, self.sigmoid_of(x), "mulf")

    def conv_of(
        self, x: Value, prefix: str, cout: int, window: _Window, bias: bool, groups: int = 1
    ) -> Value:
        """torch-mlir's lowering of `nn.Conv2d(cin, cout, groups=groups)` applied to `x`."""
        p = self.p
        n, cin, h, w = x.shape
        kh, kw = window.kernel
        weight = p.arg(f"{prefix}_weight", (cout, cin // groups, kh, kw))
        bias_arg = p.arg(f"{prefix}_bias", (cout,)) if bias else None
        padded = p.pad(x, (0, 0, *window.padding), (0, 0, *window.padding), ZERO)
        oh, ow = window.out(h, w)
        out = (n, cout, oh, ow)
        empty = p.empty(out)
        if groups == 1:
            init = p.conv_init(bias_arg, empty, out)
            return p.op(
                f"linalg.conv_2d_nchw_fchw {window.attributes()} ins({padded.token}, "
                f"{weight.token} : {tensor(padded.shape)}, {tensor(weight.shape)}) "
                f"outs({init.token} : {tensor(out)}) -> {tensor(out)}",
                out,
            )
        if groups == cin == cout:
            init = p.fill(ZERO, empty)
            flat = p.collapse(weight, [[0, 1], [2], [3]], (cout, kh, kw))
            return p.op(
                f"linalg.depthwise_conv_2d_nchw_chw {window.attributes()} ins({padded.token}, "
                f"{flat.token} : {tensor(padded.shape)}, {tensor(flat.shape)}) "
                f"outs({init.token} : {tensor(out)}) -> {tensor(out)}",
                out,
            )
        g = groups
        split = [[0], [1, 2], [3], [4]]
        grouped_in = p.expand(padded, split, (n, g, cin // g, *padded.shape[2:]))
        grouped_weight = p.expand(weight, [[0, 1], [2], [3], [4]], (g, cout // g, cin // g, kh, kw))
        grouped_out = p.expand(empty, split, (n, g, cout // g, oh, ow))
        init = p.fill(ZERO, grouped_out)
        t = tensor(grouped_out.shape)
        result = p.op(
            f"linalg.conv_2d_ngchw_gfchw {window.attributes()} ins({grouped_in.token}, "
            f"{grouped_weight.token} : {tensor(grouped_in.shape)}, {tensor(grouped_weight.shape)}) "
            f"outs({init.token} : {t}) -> {t}",
            grouped_out.shape,
        )
        return p.collapse(result, split, out)

    def mean_of(self, x: Value) -> Value:
        p = self.p
        n, c, h, w = x.shape
        empty = p.empty((n, c, 1, 1))
        init = p.fill(ZERO, empty)
        total = p.generic(
            [(x, broadcast_map(x.shape, x.shape))],
            init,
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>",
            ["parallel", "parallel", "reduction", "reduction"],
            ["%@b0 = arith.addf %in, %out : f32"],
        )
        if h * w == 1:
            return total
        divisor = p.const(_f32(h * w))
        return p.elementwise([total], total.shape, [f"%@b0 = arith.divf %in, {divisor} : f32"])

    def concat_of(self, parts: Sequence[Value]) -> Value:
        n, _, h, w = parts[0].shape
        shape = (n, sum(v.shape[1] for v in parts), h, w)
        return self.p.op(
            f"tensor.concat dim(1) {', '.join(v.token for v in parts)} : "
            f"({', '.join(tensor(v.shape) for v in parts)}) -> {tensor(shape)}",
            shape,
            "concat",
        )

    def slice_of(self, x: Value, start: int, size: int) -> Value:
        n, _, h, w = x.shape
        shape = (n, size, h, w)
        return self.p.op(
            f"tensor.extract_slice {x.token}[0, {start}, 0, 0] {_ints(shape)} [1, 1, 1, 1] "
            f": {tensor(x.shape)} to {tensor(shape)}",
            shape,
            "extracted_slice",
        )

    def window(self, h: int, w: int) -> _Window:
        """A random convolution window that fits an HxW input (else a 1x1 one per axis)."""
        c = self.c
        kh = c.choice((3, 1, 2))
        kw = c.choice((3, 1, 2)) if c.flag(15) else kh
        sh = c.choice((1, 2))
        sw = c.choice((1, 2)) if c.flag(15) else sh
        dh = 2 if c.flag(15) else 1
        dw = (2 if c.flag(50) else 1) if c.flag(10) else dh
        ph = c.integer(0, dh * (kh - 1) // 2)
        pw = c.integer(0, dw * (kw - 1) // 2) if (kw, dw) != (kh, dh) or c.flag(10) else ph
        axes = [(kh, sh, dh, ph), (kw, sw, dw, pw)]
        for k, (size, (kernel, stride, dilation, pad)) in enumerate(zip((h, w), axes, strict=True)):
            if dilation * (kernel - 1) + 1 > size + 2 * pad:
                axes[k] = (1, stride, 1, 0)
        (kh, sh, dh, ph), (kw, sw, dw, pw) = axes
        return _Window((kh, kw), (sh, sw), (dh, dw), (ph, pw))

    def same_shape_window(self) -> _Window:
        return SAME_3x3 if self.c.flag(50) else POINTWISE

    # Families (each replaces `self.value`) ---------------------------------------------------

    def applies(self, family: str) -> bool:
        c = self.channels
        if family == "grouped_conv":
            return any(c % g == 0 for g in range(2, c))
        if family in ("depthwise_conv", "channel_split"):
            return c >= 2
        if family == "avg_pool":
            return min(self.value.shape[2:]) >= 2
        if family == "channel_shuffle":
            return any(c % g == 0 and c // g >= 2 for g in range(2, c))
        if family == "concat":
            return c < MAX_CHANNELS
        if family in _vision().LAYERS:
            return _vision().applies(self, family)
        return True

    def layer(self, family: str) -> None:
        """Apply one family (a method here, or a function of `fuzz.vision_models`)."""
        self.used.add(family)
        if family in _vision().LAYERS:
            _vision().LAYERS[family](self)
        else:
            getattr(self, family)()
        self.history.append(self.value)

    def relu(self) -> None:
        self.value = self.relu_of(self.value)

    def sigmoid(self) -> None:
        self.value = self.sigmoid_of(self.value)

    def silu(self) -> None:
        self.value = self.silu_of(self.value)

    def conv(self) -> None:
        _, _, h, w = self.value.shape
        cout = self.c.choice(CHANNELS)
        window = self.window(h, w)
        self.value = self.conv_of(self.value, self.prefix, cout, window, bias=self.c.flag(50))

    def depthwise_conv(self) -> None:
        _, c, h, w = self.value.shape
        self.value = self.conv_of(self.value, self.prefix, c, self.window(h, w), False, groups=c)

    def grouped_conv(self) -> None:
        _, c, h, w = self.value.shape
        groups = self.c.choice([g for g in range(2, c) if c % g == 0])
        multiple = self.c.integer(1, MAX_CHANNELS // groups)
        window = self.window(h, w)
        self.value = self.conv_of(
            self.value, self.prefix, groups * multiple, window, False, groups=groups
        )

    def batch_norm(self) -> None:
        p, x = self.p, self.value
        c = self.channels
        weight, bias, mean, var = (
            p.arg(f"{self.prefix}_{n}", (c,))
            for n in ("weight", "bias", "running_mean", "running_var")
        )
        vector = p.empty((c,))
        identity = "affine_map<(d0) -> (d0)>"
        eps, zero, one = p.const(EPS), p.const(ZERO), p.const(ONE)

        def unary(v: Value, body: list[str]) -> Value:
            return p.generic([(v, identity)], vector, identity, ["parallel"], body)

        shifted = unary(
            var, [f"%@b0 = arith.truncf {eps} : f64 to f32", "%@b1 = arith.addf %in, %@b0 : f32"]
        )
        root = unary(shifted, ["%@b0 = math.sqrt %in : f32"])
        inverse = unary(
            root,
            [
                f"%@b0 = arith.cmpf one, %in, {zero} : f32",
                'cf.assert %@b0, "unimplemented: tensor with zero element"',
                f"%@b1 = arith.divf {one}, %in : f32",
            ],
        )
        column = [[0, 1, 2]]
        mean3 = p.expand(mean, column, (c, 1, 1))
        inverse3 = p.expand(inverse, column, (c, 1, 1))
        y = self.binary(x, mean3, "subf")
        y = self.binary(y, inverse3, "mulf")
        y = self.binary(y, p.expand(weight, column, (c, 1, 1)), "mulf")
        self.value = self.binary(y, p.expand(bias, column, (c, 1, 1)), "addf")

    def max_pool(self) -> None:
        p, c = self.p, self.c
        x = self.value
        n, channels, h, w = x.shape
        k = c.choice((2, 3))
        s = c.choice((2, 1))
        pad = c.integer(0, k // 2)
        if min(h, w) + 2 * pad < k:
            pad = k // 2
        ceil = c.flag(40)
        outs: list[int] = []
        for size in (h, w):
            span = size + 2 * pad - k
            out = (-(-span // s) if ceil else span // s) + 1
            if ceil and (out - 1) * s >= size + pad:
                out -= 1
            outs.append(out)
        if ceil:
            self.used.add("max_pool_ceil")
        high = pad + (s if ceil else 0)
        padded = p.pad(x, (0, 0, pad, pad), (0, 0, high, high), NEG_INF)
        shape = (n, channels, outs[0], outs[1])
        init = p.fill(NEG_INF, p.empty(shape))
        window = p.empty((k, k))
        self.value = p.op(
            f"linalg.pooling_nchw_max {_Window(strides=(s, s)).attributes()} ins({padded.token}, "
            f"{window.token} : {tensor(padded.shape)}, {tensor(window.shape)}) "
            f"outs({init.token} : {tensor(shape)}) -> {tensor(shape)}",
            shape,
        )

    def avg_pool(self) -> None:
        p, x = self.p, self.value
        n, channels, h, w = x.shape
        k = self.c.choice([k for k in (2, 3) if k <= min(h, w)])
        s = self.c.choice((k, 1, 2))
        shape = (n, channels, (h - k) // s + 1, (w - k) // s + 1)
        init = p.fill(ZERO, p.empty(shape))
        window = p.empty((k, k))
        total = p.op(
            f"linalg.pooling_nchw_sum {_Window(strides=(s, s)).attributes()} ins({x.token}, "
            f"{window.token} : {tensor(x.shape)}, {tensor(window.shape)}) "
            f"outs({init.token} : {tensor(shape)}) -> {tensor(shape)}",
            shape,
        )
        divisor = p.const(_f32(k * k))
        self.value = p.elementwise([total], shape, [f"%@b0 = arith.divf %in, {divisor} : f32"])

    def residual_add(self) -> None:
        x = self.value
        earlier = [v for v in self.history if v.shape == x.shape and v != x]
        if earlier and self.c.flag(50):
            self.value = self.binary(x, self.c.choice(earlier), "addf")
            return
        branch = self.conv_of(
            x, f"{self.prefix}_conv", self.channels, self.same_shape_window(), self.c.flag(50)
        )
        if self.c.flag(50):
            branch = self.relu_of(branch)
        self.value = self.binary(branch, x, "addf")

    def concat(self) -> None:
        x = self.value
        parts: list[Value] = [x] if self.c.flag(50) else []
        aligned = self.c.flag(40)
        budget = MAX_CHANNELS - sum(v.shape[1] for v in parts)
        branches = self.c.integer(2 - len(parts), 3 - len(parts))
        for k in range(branches):
            rest = branches - k - 1
            if budget - rest < 1:
                break
            wanted = self.c.choice((4, 8)) if aligned else self.c.integer(1, 7)
            cout = min(wanted, budget - rest)
            branch = self.conv_of(
                x, f"{self.prefix}_branch{k}", cout, self.same_shape_window(), True
            )
            parts.append(self.relu_of(branch))
            budget -= cout
        if all(v.shape[1] % 4 == 0 for v in parts):
            self.used.add("concat_aligned")
        else:
            self.used.add("concat_unaligned")
        self.value = self.concat_of(parts)

    def channel_split(self) -> None:
        x = self.value
        c = self.channels
        cut = self.c.integer(1, c - 1) if self.c.flag(40) else c // 2
        if not self.c.flag(50):
            self.value = (
                self.slice_of(x, 0, cut) if self.c.flag(50) else self.slice_of(x, cut, c - cut)
            )
            return
        first = self.slice_of(x, 0, cut)
        second = self.slice_of(x, cut, c - cut)
        branch = self.conv_of(second, f"{self.prefix}_branch", c - cut, POINTWISE, False)
        self.value = self.concat_of([first, self.relu_of(branch)])

    def channel_shuffle(self) -> None:
        p, x = self.p, self.value
        n, c, h, w = x.shape
        g = self.c.choice([g for g in range(2, c) if c % g == 0 and c // g >= 2])
        split = [[0], [1, 2], [3], [4]]
        grouped = p.expand(x, split, (n, g, c // g, h, w))
        shape = (n, c // g, g, h, w)
        empty = p.empty(shape)
        swapped = p.op(
            f"linalg.transpose ins({grouped.token} : {tensor(grouped.shape)}) "
            f"outs({empty.token} : {tensor(shape)}) permutation = [0, 2, 1, 3, 4] ",
            shape,
            "transposed",
        )
        self.value = p.collapse(swapped, split, x.shape)

    def mean(self) -> None:
        self.value = self.mean_of(self.value)

    def squeeze_excite(self) -> None:
        x = self.value
        c = self.channels
        squeezed = self.c.integer(1, c)
        h = self.conv_of(self.mean_of(x), f"{self.prefix}_fc1", squeezed, POINTWISE, True)
        h = self.silu_of(h) if self.c.flag(50) else self.relu_of(h)
        gate = self.sigmoid_of(self.conv_of(h, f"{self.prefix}_fc2", c, POINTWISE, True))
        self.value = self.p.elementwise([gate, x], x.shape, ["%@b0 = arith.mulf %in, %@in1 : f32"])

    def classifier(self) -> None:
        p, x = self.p, self.value
        n, c, h, w = x.shape
        features = c * h * w
        classes = self.c.integer(1, 10)
        weight = p.arg("fc_weight", (classes, features))
        bias = p.arg("fc_bias", (classes,))
        flat = p.collapse(x, [[0], [1, 2, 3]], (n, features))
        empty = p.empty((features, classes))
        transposed = p.op(
            f"linalg.transpose ins({weight.token} : {tensor(weight.shape)}) "
            f"outs({empty.token} : {tensor(empty.shape)}) permutation = [1, 0] ",
            empty.shape,
            "transposed",
        )
        shape = (n, classes)
        init = p.fill(ZERO, p.empty(shape))
        product = p.op(
            f"linalg.matmul ins({flat.token}, {transposed.token} : {tensor(flat.shape)}, "
            f"{tensor(transposed.shape)}) outs({init.token} : {tensor(shape)}) -> {tensor(shape)}",
            shape,
        )
        self.value = self.binary(product, bias, "addf")


def _vision() -> ModuleType:
    """`fuzz.vision_models` (imported here: it builds on this module)."""
    from fuzz import vision_models

    return vision_models


def generate_model(c: Chooser, targets: Collection[str] = ()) -> Graph:
    """A random torch-mlir-style model (see the module docstring). `targets` (families of
    `FAMILIES` and `MODEL_VARIANTS`) makes the model have them: a layer is one of the
    targeted families that apply until one was drawn, then half of the time, and a last
    layer adds one when none applied; `batch3`, `two_results` and `three_results` are then always on
    (three layers at least for three results)."""
    targeted_layers = [f for f in STEP_FAMILIES if f in targets]
    channels, h = c.choice(CHANNELS), c.choice(SPATIAL)
    w = c.choice(SPATIAL) if c.flag(30) else h
    batch = 3 if c.flag(15) or "batch3" in targets else 1
    printer = _Printer()
    x = printer.arg("x", (batch, channels, h, w))
    model = _Model(c, printer, x, [x])
    if batch > 1:
        model.used.add("batch3")
    for index in c.repeat(3 if "three_results" in targets else 2, 6, 60):
        model.prefix = f"layers_{index}"
        applicable = [f for f in STEP_FAMILIES if model.applies(f)]
        wanted = [f for f in targeted_layers if f in applicable]
        first = not model.used & set(targeted_layers)
        model.layer(c.choice(wanted) if wanted and (first or c.flag(50)) else c.choice(applicable))
    wanted = [f for f in targeted_layers if model.applies(f)]
    if wanted and not model.used & set(targeted_layers):
        model.prefix = f"layers_{len(model.history) - 1}"
        model.layer(c.choice(wanted))
    if c.flag(35) or "classifier" in targets:
        model.used.add("classifier")
        model.classifier()
    results = [model.value]
    earlier = list({v.token: v for v in model.history[1:] if v != model.value}.values())
    several = {"two_results", "three_results"} & set(targets)
    if earlier and (c.flag(10) or several):
        model.used.add("two_results")
        results.insert(c.integer(0, 1), earlier.pop(c.integer(0, len(earlier) - 1)))
        if earlier and (c.flag(40) or "three_results" in targets):
            model.used.add("three_results")
            results.insert(c.integer(0, 2), c.choice(earlier))
    return Graph(printer.text(results), list(c.choices), model.used, list(c.spans))


@st.composite
def models(draw: st.DrawFn) -> Graph:
    """Hypothesis strategy: random torch-mlir-style models (see `generate_model`)."""
    return generate_model(DrawChooser(draw))
