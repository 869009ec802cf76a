"""apply-schedules and its default heuristic (issue 42): every schedule is value-checked.

Each check lowers a graph with `physlayout-adreno{schedule=false}`, gives kernels a
`#layout.schedule`, applies them and compares every buffer of the host function `@main`,
evaluated by the numpy buffer evaluator on the same seeded inputs, with the unscheduled
module: bit-exact (a schedule keeps every floating-point operation and its order). Random
models (`fuzz.models`: convs with strides and dilations, grouped and depthwise convs,
pooling, means, matmuls, elementwise ops; 1 to 12 channels, so 3- and 5-channel textures;
extents of 1 and primes) get random tiles, tiles larger than the extent included; the
heuristic's schedules are checked the same way and on the OpenCL device against the numpy
evaluator (textures and global weights, f16 storage). Planted bugs (a remainder tile
skipped, an accumulator shared by two tile elements, a weight texel read at another
element's offset) must fail the same value check.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz.graphs import Graph
from fuzz.models import models
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout import BufferType
from physlayout.dialects.layout_schedule import SCHEDULE, SCHEDULED, ScheduleAttr
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.runtime.opencl import parse_module
from physlayout.semantics.evaluator import run_function
from physlayout.semantics.evaluator_values import CheckFailed, dtype_of
from physlayout.transforms import apply_schedules
from physlayout.transforms.apply_schedules import ApplySchedulesPass, TileCloner, kernel_loop
from physlayout.transforms.schedule_heuristic import (
    DeviceModel,
    default_schedule,
    loop_ranges,
    trip_counts,
)
from physlayout.universe import make_context

CONV_RELU_CONV = """
func.func @main(%x: tensor<1x8x7x9xf32>, %w1: tensor<12x8x3x3xf32>, %w2: tensor<5x12x3x2xf32>) -> tensor<1x5x3x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x12x5x7xf32>
  %init1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x12x5x7xf32>) -> tensor<1x12x5x7xf32>
  %conv1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w1 : tensor<1x8x7x9xf32>, tensor<12x8x3x3xf32>) outs(%init1 : tensor<1x12x5x7xf32>) -> tensor<1x12x5x7xf32>
  %e2 = tensor.empty() : tensor<1x12x5x7xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv1 : tensor<1x12x5x7xf32>) outs(%e2 : tensor<1x12x5x7xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x12x5x7xf32>
  %e3 = tensor.empty() : tensor<1x5x3x6xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x5x3x6xf32>) -> tensor<1x5x3x6xf32>
  %conv2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%relu, %w2 : tensor<1x12x5x7xf32>, tensor<5x12x3x2xf32>) outs(%init2 : tensor<1x5x3x6xf32>) -> tensor<1x5x3x6xf32>
  func.return %conv2 : tensor<1x5x3x6xf32>
}
"""
"""conv (8 -> 12 channels, 3x3) -> relu -> conv (12 -> 5 channels, 3x2): 3 and 2 output
channel blocks, 5 and 3 rows, 7 and 6 columns."""

RFC_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rfc_conv_relu_conv.mlir"

TILE_VALUES = (1, 2, 3, 4, 5, 8, 16)
PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
"""No shrinking: a model's evaluation takes seconds (a failure prints its tiles and model)."""


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def lowered(text: str, **options: Any) -> ModuleOp:
    """`text` through `physlayout-adreno{schedule=false}` (and `options`)."""
    module = parse_module(text)
    PhyslayoutAdrenoPass(schedule=False, **options).apply(make_context(), module)
    return module


def kernels(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of `module` a schedule applies to (one top-level `scf.parallel`)."""
    return [op for op in module.ops if isinstance(op, func.FuncOp) and kernel_loop(op) is not None]


def scheduled(module: ModuleOp, tiles: Mapping[str, Sequence[int]], unroll: int = 0) -> ModuleOp:
    """A copy of `module` whose kernels named in `tiles` have those tiles (and `unroll`)
    applied."""
    copy = module.clone()
    for kernel in kernels(copy):
        tile = tiles.get(kernel.sym_name.data)
        if tile is not None:
            kernel.attributes[SCHEDULE] = ScheduleAttr.of(tile, unroll=unroll)
    ApplySchedulesPass().apply(make_context(), copy)
    return copy


def host_inputs(module: ModuleOp, seed: int) -> list[np.ndarray]:
    """Seeded values for every parameter of `@main` (results included: they are overwritten)."""
    main = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )
    rng = np.random.default_rng(seed)
    values: list[np.ndarray] = []
    for k, arg in enumerate(main.body.block.args):
        assert isinstance(arg.type, BufferType)
        shape = tuple(arg.type.get_shape())
        low = -1 if k == 0 else 0.1  # parameters positive: batch-norm variances
        values.append(rng.uniform(low, 1, shape).astype(dtype_of(arg.type.element_type)))
    return values


def evaluate(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every parameter of `@main` after the buffer evaluator ran it on copies of `inputs`
    (and the message of a failed `layout.check`, as a string array)."""
    values = [np.array(v) for v in inputs]
    try:
        run_function(module, "main", values)
    except CheckFailed as err:
        return [np.array(str(err))]
    return values


class ValueMismatch(AssertionError):
    """A scheduled module computed other values than the unscheduled one."""


def check_schedules(
    module: ModuleOp, tiles: Mapping[str, Sequence[int]], seed: int = 0, unroll: int = 0
) -> None:
    """The module with `tiles` applied computes bit-exactly what `module` computes (else
    `ValueMismatch`, naming the parameter)."""
    inputs = host_inputs(module, seed)
    expected = evaluate(module, inputs)
    got = evaluate(scheduled(module, tiles, unroll), inputs)
    for k, (e, g) in enumerate(zip(expected, got, strict=True)):
        if not np.array_equal(e, g, equal_nan=True):
            raise ValueMismatch(f"parameter {k} differs with tiles {dict(tiles)}")


def every_kernel(module: ModuleOp, tile: Sequence[int]) -> dict[str, Sequence[int]]:
    """`tile` for every kernel of `module` whose loop has as many axes."""
    found: dict[str, Sequence[int]] = {}
    for kernel in kernels(module):
        loop = kernel_loop(kernel)
        if loop is not None and len(loop.lowerBound) == len(tile):
            found[kernel.sym_name.data] = tile
    return found


def test_kernels_of_the_example() -> None:
    module = lowered(CONV_RELU_CONV)
    names = [k.sym_name.data for k in kernels(module)]
    assert "main_fused_relu" in names and "main_fused_conv2" in names


@pytest.mark.parametrize(
    "tile",
    [
        (1, 2, 1, 4),
        (1, 1, 3, 5),
        (1, 3, 5, 7),
        (1, 2, 2, 2),
        (1, 4, 8, 16),
        (2, 1, 1, 3),
        (1, 1, 1, 1),
    ],
)
@pytest.mark.parametrize("unroll", [0, 3])
def test_conv_tiles_are_exact(tile: tuple[int, ...], unroll: int) -> None:
    module = lowered(CONV_RELU_CONV)
    check_schedules(module, every_kernel(module, tile), unroll=unroll)


def test_unrolling_every_reduction_loop_is_exact() -> None:
    module = lowered(CONV_RELU_CONV, weights_in_global=True)
    check_schedules(module, every_kernel(module, (1, 1, 1, 1)), unroll=64)
    check_schedules(module, every_kernel(module, (1, 2, 1, 3)), unroll=64)


def test_tile_along_one_axis_of_global_weights() -> None:
    module = lowered(CONV_RELU_CONV, weights_in_global=True)
    for tile in [(1, 2, 1, 1), (1, 1, 1, 4), (1, 3, 2, 3)]:
        check_schedules(module, every_kernel(module, tile))


@st.composite
def scheduled_models(draw: st.DrawFn) -> tuple[Graph, dict[str, list[int]]]:
    model = draw(models())
    module = lowered(model.text)
    tiles: dict[str, list[int]] = {}
    for kernel in kernels(module):
        loop = kernel_loop(kernel)
        assert loop is not None
        ranges = loop_ranges(loop)
        assert ranges is not None
        tile = draw(
            st.lists(st.sampled_from(TILE_VALUES), min_size=len(ranges), max_size=len(ranges))
        )
        # the pass cuts each length to its axis's trips; keep the evaluated tile small
        cut = [min(t, max(1, n)) for n, t in zip(trip_counts(ranges), tile, strict=True)]
        assume(np.prod(cut) <= 256)
        tiles[kernel.sym_name.data] = tile
    return model, tiles


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(case=scheduled_models())
def test_random_models_with_random_tiles_are_exact(
    case: tuple[Graph, dict[str, list[int]]],
) -> None:
    model, tiles = case
    check_schedules(lowered(model.text), tiles)


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck), phases=PHASES)
@given(model=models())
def test_default_schedules_are_exact(model: Graph) -> None:
    # one compute unit: the heuristic tiles these small models (it keeps 32 work-items a unit)
    module = parse_module(model.text)
    PhyslayoutAdrenoPass(compute_units=1).apply(make_context(), module)
    reference = lowered(model.text)
    inputs = host_inputs(reference, 1)
    for e, g in zip(evaluate(reference, inputs), evaluate(module, inputs), strict=True):
        assert np.array_equal(e, g, equal_nan=True)


def test_heuristic_tiles_convs_and_leaves_elementwise_kernels() -> None:
    with open(RFC_EXAMPLE) as stream:
        module = lowered(stream.read(), fuse=False)
    device = DeviceModel(compute_units=2, max_work_group_size=256, registers=128)
    chosen: dict[str, ScheduleAttr | None] = {}
    for kernel in kernels(module):
        loop = kernel_loop(kernel)
        assert loop is not None
        chosen[kernel.sym_name.data] = default_schedule(loop, device)
    assert chosen["main_generic_relu"] is None
    assert chosen["main_generic_init1"] is None
    conv = chosen["main_generic_conv1"]
    assert conv is not None and max(conv.tile) > 1
    assert np.prod(conv.tile) * 4 <= device.registers  # one float4 accumulator per element
    # the work-group divides nothing it need not: at most the device's size
    assert np.prod(conv.workgroup) <= device.max_work_group_size
    conv_loop = next(
        kernel_loop(k) for k in kernels(module) if k.sym_name.data == "main_generic_conv1"
    )
    assert conv_loop is not None
    assert default_schedule(conv_loop, DeviceModel(registers=4)) is None  # one float4: no tile
    # too few work-items to share out: a small conv stays untiled on a device with many units
    small = lowered(CONV_RELU_CONV)
    small_loop = next(
        kernel_loop(k) for k in kernels(small) if k.sym_name.data == "main_fused_relu"
    )
    assert small_loop is not None
    assert default_schedule(small_loop, DeviceModel(compute_units=64)) is None


def test_schedule_option_off_keeps_kernels_untiled() -> None:
    module = parse_module(CONV_RELU_CONV)
    PhyslayoutAdrenoPass(schedule=False).apply(make_context(), module)
    assert not any(SCHEDULED in k.attributes for k in kernels(module))
    module = parse_module(CONV_RELU_CONV)
    PhyslayoutAdrenoPass(compute_units=1).apply(make_context(), module)
    assert any(SCHEDULED in k.attributes for k in kernels(module))


def test_second_run_changes_nothing() -> None:
    module = scheduled(lowered(CONV_RELU_CONV), {"main_fused_relu": (1, 2, 2, 4)})
    text = str(module)
    ApplySchedulesPass(default=True).apply(make_context(), module)
    assert str(module) == text


@pytest.mark.parametrize(
    ("tile", "message"),
    [((2, 2), "the schedule tiles 2 axes, the scf.parallel has 4"), ((1, 1), "tiles 2 axes")],
)
def test_bad_schedules_are_diagnosed(tile: tuple[int, ...], message: str) -> None:
    module = lowered(CONV_RELU_CONV)
    with pytest.raises(PassFailedException, match=message):
        scheduled(module, {"main_fused_relu": tile})


# Planted bugs: each must fail the value check. ----------------------------------------------


def _planted_cases() -> list[tuple[str, tuple[int, ...]]]:
    return [("main_fused_relu", (1, 2, 1, 4)), ("main_fused_conv2", (1, 2, 2, 4))]


def test_planted_skipped_remainder_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    original = apply_schedules.tile_loop

    def skip_remainder(kernel: Any, loop: Any, tile: Sequence[int], unroll: int = 0) -> Any:
        ops = original(kernel, loop, tile, unroll)
        upper = [op for op in loop.upperBound]
        ranges = apply_schedules.loop_ranges(loop)
        assert ranges is not None
        for k, ((lower, high, step), size) in enumerate(zip(ranges, tile, strict=True)):
            whole = lower + (high - lower) // (step * size) * step * size
            if whole != high:
                from xdsl.dialects import arith
                from xdsl.dialects.builtin import IndexType, IntegerAttr

                bound = arith.ConstantOp(IntegerAttr(whole, IndexType()))
                ops.insert(0, bound)
                upper[k] = bound.result
        ops[-1].operands = [
            *ops[-1].operands[: len(upper)],
            *upper,
            *ops[-1].operands[2 * len(upper) :],
        ]
        return ops

    monkeypatch.setattr(apply_schedules, "tile_loop", skip_remainder)
    module = lowered(CONV_RELU_CONV)
    for name, tile in _planted_cases():
        with pytest.raises(ValueMismatch):
            check_schedules(module, {name: tile})


def test_planted_shared_accumulator_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    original = TileCloner.jam

    def shared(self: TileCloner, op: Any, axes: frozenset[int], point: Any) -> None:
        # one copy of the iter_args for the whole tile: every element adds into it
        original(self, op, frozenset(), point)
        for value in (*op.body.block.args[1:], *op.results):
            self.deps[value] = axes

    monkeypatch.setattr(TileCloner, "jam", shared)
    module = lowered(CONV_RELU_CONV)
    for name, tile in _planted_cases():
        with pytest.raises(ValueMismatch):
            check_schedules(module, {name: tile})


def test_planted_weight_at_wrong_offset_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from physlayout.dialects.layout import LoadOp

    original = TileCloner.clone_op

    def wrong_offset(self: TileCloner, op: Any, axes: frozenset[int], point: Any) -> None:
        if not (isinstance(op, LoadOp) and axes == frozenset({1})):  # the weight texel
            original(self, op, axes, point)
            return
        # each element's weight load takes the next element's channel block
        maps = self.maps
        shifted = [maps[(e + len(maps) // 2) % len(maps)] for e in range(len(maps))]
        self.maps = [dict(m) for m in shifted]
        original(self, op, axes, point)
        for e, m in enumerate(self.maps):
            maps[e].update({r: m[r] for r in op.results})
        self.maps = maps

    monkeypatch.setattr(TileCloner, "clone_op", wrong_offset)
    module = lowered(CONV_RELU_CONV)
    for name, tile in _planted_cases():
        with pytest.raises(ValueMismatch):
            check_schedules(module, {name: tile})


# On the OpenCL device. -------------------------------------------------------------------


def run_on_device(runtime: Any, module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every parameter of `@main` after running `module` (lowered already) on the device."""
    from physlayout.runtime.host import execute
    from physlayout.runtime.opencl import compile_module

    values = [np.array(v) for v in inputs]
    execute(compile_module(module, runtime, lowered_already=True), "main", values)
    return values


@pytest.mark.parametrize("options", [{}, {"weights_in_global": True}, {"precision": "f16"}])
def test_scheduled_kernels_on_the_device(runtime: Any, options: dict[str, Any]) -> None:
    """Textures, global weights and f16 storage: the scheduled kernels give on the device
    bit-exactly what the unscheduled ones give (same operations in the same order), and
    what the buffer evaluator gives (within 1e-5 relative)."""
    from physlayout.transforms.to_mixed_precision import ToMixedPrecisionPass

    text = CONV_RELU_CONV
    passes = dict(options)
    if passes.pop("precision", None) == "f16":
        source = parse_module(text)
        ToMixedPrecisionPass().apply(make_context(), source)
        text = str(source)
    module = lowered(text, **passes)
    inputs = host_inputs(module, 3)
    reference = evaluate(module, inputs)
    plain = run_on_device(runtime, module, inputs)
    for tile in [(1, 2, 1, 4), (1, 3, 2, 8), (1, 1, 5, 2)]:
        got = run_on_device(runtime, scheduled(module, every_kernel(module, tile)), inputs)
        for e, p, g in zip(reference, plain, got, strict=True):
            assert np.array_equal(p, g), tile
            scale = max(1.0, float(np.max(np.abs(e))))
            assert float(np.max(np.abs(g.astype(np.float64) - e))) <= 1e-5 * scale


def test_work_group_of_the_schedule_reaches_the_plan(runtime: Any) -> None:
    from physlayout.runtime.opencl import compile_module
    from physlayout.runtime.plan import Launch
    from physlayout.runtime.plan_builder import build_plan

    module = lowered(CONV_RELU_CONV)
    for kernel in kernels(module):
        if kernel.sym_name.data == "main_fused_relu":
            kernel.attributes[SCHEDULE] = ScheduleAttr.of((1, 1, 1, 2), (1, 3, 5, 2))
    ApplySchedulesPass().apply(make_context(), module)
    plan = build_plan(compile_module(module, runtime, lowered_already=True), "main")
    launches = {s.kernel: s for s in plan.steps if isinstance(s, Launch)}
    # work-items: 4 column tiles (dimension 0), 5 rows, 3 channel blocks; the schedule asks
    # for 2 x 5 x 3 (dimension 0 first)
    assert launches["main_fused_relu"].global_size == (4, 5, 3)
    assert launches["main_fused_relu"].local_size == (2, 5, 3)
