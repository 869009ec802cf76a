"""legalize-layout's `generic_key` (a generic or fused kernel is not built again) is exact:
requests with equal keys build kernels with equal `kernel_key`s whose parameters are bound to
host values of equal numbers. Checked on every generic and fused kernel legalize-layout
builds for the bottleneck model and the legalize lit inputs, and with hypothesis on requests
whose fields are mixed from two random requests; and every field of the key is needed: for
each one, two requests that differ only there build different kernels."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, ModuleOp, TensorType, f32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, SSAValue
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from physlayout.dialects.layout import BufferType
from physlayout.indexing.quasi_affine import Dim, Expr
from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
from physlayout.naming import FreshNames
from physlayout.transforms import legalize_layout
from physlayout.transforms.equal_kernels import kernel_key
from physlayout.transforms.legalize_kernels import (
    Epilogue,
    FusedStage,
    GenericLoops,
    GenericOutput,
    GenericRequest,
    HostNumbers,
    PaddedRead,
    StageInput,
    generic_kernel,
    generic_key,
)
from physlayout.transforms.legalize_layout import HostBuilder
from physlayout.universe import make_context

ROOT = Path(__file__).resolve().parents[2]
PROPERTY = settings(max_examples=150, deadline=None, derandomize=True)
FIELDS = ("loops", "body", "inputs", "outputs", "epilogue", "host types", "gathers")

Built = tuple[Hashable | None, Hashable, tuple[int, ...]]
"""A request's key, the `kernel_key` of the kernel built (or the error), and the host
numbers of the kernel's parameters."""


def _consistent(records: list[Built]) -> None:
    seen: dict[Hashable, tuple[Hashable, tuple[int, ...]]] = {}
    for key, built, numbers in records:
        if key is not None:
            assert seen.setdefault(key, (built, numbers)) == (built, numbers)


# Real requests: every generic and fused kernel of legalized inputs --------------------------


def _recorded(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Built]:
    records: list[Built] = []

    def call_generic(self: HostBuilder, name: str, request: GenericRequest) -> None:
        key, hosts = self._generic_key(request)  # pyright: ignore[reportPrivateUsage]
        external = self._external  # pyright: ignore[reportPrivateUsage]
        kernel, args = generic_kernel(name, request, external)
        records.append((key, kernel_key(kernel), tuple(hosts.number(a) for a in args)))
        self._call(kernel, args)  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setattr(HostBuilder, "_call_generic", call_generic)
    ctx = make_context()
    module = Parser(ctx, path.read_text()).parse_module()
    for ir in _split(module, path):
        for stage in PhyslayoutAdrenoPass().passes():
            try:
                stage.apply(ctx, ir)
            except PassFailedException:
                break
            if stage.name == legalize_layout.LegalizeLayoutPass.name:
                break
    return records


def _split(module: ModuleOp, path: Path) -> list[ModuleOp]:
    """The module, or (a lit input of several cases) each graph function in a module alone."""
    if "models" in path.parts:
        return [module]
    functions = [f for f in module.ops if isinstance(f, func.FuncOp)]
    return [ModuleOp([f.clone()]) for f in functions]


@pytest.mark.parametrize(
    "path",
    [
        "examples/models/bottleneck.mlir",
        "test/graph/legalize-layout.mlir",
        "test/graph/legalize-fused.mlir",
    ],
)
def test_equal_keys_of_real_requests_build_equal_kernels(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _recorded(ROOT / path, monkeypatch)
    assert records
    assert all(key is not None for key, _, _ in records)
    _consistent(records)


# Random requests -----------------------------------------------------------------------------

GRAPH = """
func.func @g(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %s: f32) -> tensor<4x4xf32> {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %mul = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %add_one = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %one : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %add_two = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %add_s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %scalar_in = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : tensor<4x4xf32>, f32) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %scalar_one = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %one : tensor<4x4xf32>, f32) outs(%e : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  func.return %add : tensor<4x4xf32>
}
"""


@dataclass(frozen=True)
class Request:
    """What a generic kernel is built from (`generic_kernel`'s arguments), drawn from small
    domains over one host block: `buffers[k]` indexes the host buffers (or None)."""

    op: str
    loops: GenericLoops
    inputs: tuple[int | None, int | None]
    init: int | None
    result: int
    start: FloatAttr | str | None
    offset: tuple[int, ...]
    epilogue: str | None
    padded: bool
    scalar: int
    """Which host scalar the graph's %s is passed as (0 or 1: two host values)."""


class Setting:
    """The parsed graph, a host block (buffers of several types, two scalars) and a builder
    whose `_external`/`_outer_key` resolve the graph's %s to a host scalar."""

    TYPES = (
        BufferType((4, 4), f32, scope="global"),
        BufferType((4, 4), f32, scope="global"),
        BufferType((4, 4), f32, scope="local"),
        BufferType((8, 8), f32, scope="global"),
    )

    def __init__(self) -> None:
        module = Parser(make_context(), GRAPH).parse_module()
        graph = next(f for f in module.ops if isinstance(f, func.FuncOp))
        self.graph = graph
        self.ops = {
            op.res[0].name_hint or "": op
            for op in graph.body.block.ops
            if isinstance(op, GenericOp)
        }
        self.host = Block(arg_types=[*self.TYPES, f32, f32])
        self.buffers = self.host.args[: len(self.TYPES)]
        self.scalars = self.host.args[len(self.TYPES) :]

    def build(self, request: Request) -> Built:
        builder = HostBuilder(self.graph, FreshNames())
        builder.scalars[self.graph.body.block.args[2]] = self.scalars[request.scalar]
        op = self.ops[request.op]
        inputs = [
            None if k is None or not isinstance(v.type, TensorType) else self.buffers[k]
            for k, v in zip(request.inputs, op.inputs, strict=True)
        ]
        start: FloatAttr | SSAValue | None = (
            self.graph.body.block.args[2] if request.start == "s" else request.start  # type: ignore[assignment]
        )
        init = None if request.init is None else self.buffers[request.init]
        outputs = [GenericOutput(init, self.buffers[request.result], start, request.offset)]
        epilogue = None
        if request.epilogue is not None:
            stage = self.ops[request.epilogue]
            sources = (StageInput(value=op.res[0]), StageInput(buffer=self.buffers[1], indices=_ID))
            epilogue = Epilogue(op.res[0], (FusedStage(stage, sources, _ID),), stage.res[0])
        padded = {0: PaddedRead((1, 0), (3, 4), FloatAttr(0.0, f32))} if request.padded else {}
        hosts = HostNumbers()
        outer = partial(builder._outer_key, hosts=hosts)  # pyright: ignore[reportPrivateUsage]
        built = GenericRequest(op, request.loops, inputs, outputs, epilogue, padded)
        key = generic_key(built, outer, hosts)
        try:
            external = builder._external  # pyright: ignore[reportPrivateUsage]
            kernel, args = generic_kernel("k", built, external)
        except PassFailedException as err:
            return key, str(err), ()
        return key, kernel_key(kernel), tuple(hosts.number(a) for a in args)


_ID: tuple[Expr, ...] = (Dim("d0"), Dim("d1"))
_T: tuple[Expr, ...] = (Dim("d1"), Dim("d0"))


def _loops(extents: tuple[int, int], second: tuple[Expr, ...], lane: int | None) -> GenericLoops:
    return GenericLoops(extents, (0, 1), (), (_ID, second, _ID), lane)


LOOPS = (_loops((4, 4), _ID, None), _loops((4, 2), _ID, None), _loops((4, 4), _T, None),
         _loops((4, 4), _ID, 1))  # fmt: skip
OPS = ("add", "mul", "add_one", "add_two", "add_s", "scalar_in", "scalar_one")
STARTS = (None, FloatAttr(0.0, f32), FloatAttr(-0.0, f32), FloatAttr(1.0, f32), "s")


@st.composite
def requests(draw: st.DrawFn) -> Request:
    buffer = st.integers(0, len(Setting.TYPES) - 1)
    return Request(
        draw(st.sampled_from(OPS)),
        draw(st.sampled_from(LOOPS)),
        (draw(st.one_of(st.none(), buffer)), draw(st.one_of(st.none(), buffer))),
        draw(st.one_of(st.none(), buffer)),
        draw(buffer),
        draw(st.sampled_from(STARTS)),
        draw(st.sampled_from(((), (0, 0), (0, 4)))),
        draw(st.sampled_from((None, "add", "mul"))),
        draw(st.booleans()),
        draw(st.integers(0, 1)),
    )


def _valid(request: Request) -> bool:
    """Whether the host values fit the op: a tensor input gets a buffer (None is for a
    scalar input, as legalize-layout passes them)."""
    op = SETTING.ops[request.op]
    return all(
        (k is None) == (not isinstance(v.type, TensorType))
        for k, v in zip(request.inputs, op.inputs, strict=True)
    )


SETTING = Setting()


@st.composite
def nearby_requests(draw: st.DrawFn) -> list[Request]:
    """A request and others that each take some of its fields from a second request (often
    all but one: the key must tell apart requests that differ in a single field)."""
    base = draw(requests().filter(_valid))
    found = [base]
    for _ in range(draw(st.integers(1, 5))):
        other = draw(requests())
        mixed = {
            name: getattr(other if draw(st.integers(0, 4)) == 0 else base, name)
            for name in Request.__dataclass_fields__
        }
        request = Request(**mixed)
        if _valid(request):
            found.append(request)
    return found


@PROPERTY
@given(nearby_requests())
def test_equal_generic_keys_build_equal_kernels(found: list[Request]) -> None:
    _consistent([SETTING.build(request) for request in found])


def test_every_field_of_the_key_is_needed() -> None:
    """For each field of the key, two requests differing there build different kernels
    (or bind different host values), so a key without it would be wrong."""
    base = Request("add", LOOPS[0], (0, 1), None, 2, None, (), None, False, 0)
    variants = {
        "loops": Request("add", LOOPS[1], (0, 1), None, 2, None, (), None, False, 0),
        "body": Request("mul", LOOPS[0], (0, 1), None, 2, None, (), None, False, 0),
        "inputs": Request("add", LOOPS[0], (0, 1), None, 2, None, (), None, True, 0),
        "outputs": Request("add", LOOPS[0], (0, 1), None, 2, FloatAttr(1.0, f32), (), None, False, 0),
        "epilogue": Request("add", LOOPS[0], (0, 1), None, 2, None, (), "add", False, 0),
        "host types": Request("add", LOOPS[0], (0, 3), None, 2, None, (), None, False, 0),
    }  # fmt: skip
    key, built, numbers = SETTING.build(base)
    assert isinstance(key, tuple) and len(key) == len(FIELDS)  # pyright: ignore[reportUnknownArgumentType]
    # The requests drawn here gather nothing: their last field (the clamps of the gathers,
    # which depend on the value bounds of the index tensors) is empty; test_gathers.py
    # builds kernels with and without clamps and checks their values.
    assert key[-1] == ()
    for field, index in zip(FIELDS[:-1], range(len(FIELDS) - 1), strict=True):
        other_key, other_built, other_numbers = SETTING.build(variants[field])
        assert isinstance(other_key, tuple)
        without = key[:index] + key[index + 1 :]  # pyright: ignore[reportUnknownVariableType]
        assert without == other_key[:index] + other_key[index + 1 :], field  # pyright: ignore[reportUnknownArgumentType]
        assert (built, numbers) != (other_built, other_numbers), field
