"""The PyTorch frontend (`physlayout.from_torch`, `physlayout.torch_frontend.export`, the
`torch.compile` backend "physlayout") on small modules shaped like the shared models: the
export is the shared models' (weights as named arguments; byte for byte the committed
bottleneck under the torch it was made with), and results match PyTorch's within 1e-4 of
max|result|. Needs torch and torch-mlir (`make torch-test` makes a venv with them; skipped
elsewhere); the torchvision models run only under `make torch-test`
(`PHYSLAYOUT_TORCH_SLOW=1`)."""

from __future__ import annotations

import collections
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx")

import physlayout  # noqa: E402
from physlayout.torch_frontend import (  # noqa: E402
    DynamoCompiled,
    dynamo_backend,
    export,
)

nn = torch.nn
ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-4
"""Largest error allowed, relative to max|result| of PyTorch's."""

slow = pytest.mark.skipif(
    os.environ.get("PHYSLAYOUT_TORCH_SLOW") != "1",
    reason="slow (a torchvision model): `make torch-test` runs it",
)


@pytest.fixture(autouse=True)
def _device(runtime: Any) -> None:
    """Every test here compiles for the OpenCL device (skipped without one)."""
    del runtime


def _relative_error(result: Any, expected: Any) -> float:
    expected = np.asarray(expected)
    return float(np.abs(np.asarray(result) - expected).max() / np.abs(expected).max())


def _signature(mlir: str) -> str:
    (line,) = [line for line in mlir.splitlines() if "func.func @main(" in line]
    return line


def _check(module: Any, *inputs: Any) -> tuple[float, ...]:
    """from_torch on `module`, called on `inputs`: the errors of its results against
    PyTorch's, relative to max|result|, each within TOLERANCE."""
    model = physlayout.from_torch(module, *inputs)
    with torch.no_grad():
        expected = module(*inputs)
    results = model(*(x.numpy() for x in inputs))
    expected = expected if isinstance(expected, tuple) else (expected,)
    results = results if isinstance(results, tuple) else (results,)
    assert len(results) == len(expected)
    errors = tuple(_relative_error(r, e.numpy()) for r, e in zip(results, expected, strict=True))
    print(f"{type(module).__name__}: max|physlayout - torch| / max|torch| per result {errors}")
    assert max(errors) <= TOLERANCE, errors
    return errors


class Bottleneck(nn.Module):
    """torchvision's ResNet Bottleneck(64, 16) (names and forward as torchvision writes
    them), without torchvision."""

    def __init__(self, inplanes: int = 64, planes: int = 16) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: Any) -> Any:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += identity
        return self.relu(out)


def _randomize_norms(module: Any) -> Any:
    """`module` in eval mode with non-trivial batch-norm statistics and scales."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.1, 0.1)
    return module.eval()


def test_export_is_the_shared_models_format() -> None:
    """The bottleneck's export has the committed file's arguments (`%x`, then the state_dict
    in order, `.` -> `_`, no num_batches_tracked); under torch 2.13 (the one the file was made
    with) it is the committed file byte for byte."""
    torch.manual_seed(0)
    module = Bottleneck().train()
    module.bn2.eval()
    exported = export(module, torch.rand(1, 64, 8, 8))
    assert module.training and module.bn1.training and not module.bn2.training  # put back
    committed = (ROOT / "examples" / "models" / "bottleneck.mlir").read_text()
    assert _signature(exported.mlir) == _signature(committed)
    assert exported.inputs == ("x",)
    assert exported.names["bn1.running_mean"] == "bn1_running_mean"
    assert "bn1.num_batches_tracked" not in exported.names
    assert list(exported.params) == list(exported.names.values())
    assert "dense_resource" not in exported.mlir
    if torch.__version__.startswith("2.13."):
        assert exported.mlir.strip() == committed.strip()


def test_transformer_encoder_layer() -> None:
    """The committed transformer_encoder_layer's arguments (byte for byte under torch 2.13);
    eager PyTorch takes its fused fast path, the export the decomposed graph."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(
        d_model=32, nhead=4, dim_feedforward=64, batch_first=True, dropout=0.0
    ).eval()
    x = torch.rand(1, 8, 32) * 2 - 1
    exported = export(layer, x)
    committed = (ROOT / "examples" / "models" / "transformer_encoder_layer.mlir").read_text()
    assert _signature(exported.mlir) == _signature(committed)
    if torch.__version__.startswith("2.13."):
        assert exported.mlir.strip() == committed.strip()
    _check(layer, x)


def test_bottleneck() -> None:
    torch.manual_seed(0)
    _check(_randomize_norms(Bottleneck()), torch.rand(1, 64, 8, 8) * 2 - 1)


def test_conv_bn_relu_sequential() -> None:
    """A bare nn.Sequential: its state_dict keys start with a digit (`0.weight`), which MLIR
    names cannot; they become `%_0_weight`."""
    torch.manual_seed(0)
    block = _randomize_norms(
        nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
    )
    x = torch.rand(1, 3, 16, 16) * 2 - 1
    exported = export(block, x)
    assert exported.names["0.weight"] == "_0_weight"
    assert exported.names["1.running_var"] == "_1_running_var"
    _check(block, x)


class Heads(nn.Module):
    """Two inputs, two results, nested and tied names: an MLP on `features`, a conv
    block on `image` from a nested module whose weight is also registered under a second
    name (tied)."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.blocks = nn.Sequential(
            collections.OrderedDict([("conv", nn.Conv2d(8, 8, 3, padding=1)), ("act", nn.ReLU())])
        )
        self.mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
        self.alias = self.encoder.blocks.conv  # a second name for the same weights

    def forward(self, image: Any, features: Any) -> tuple[Any, Any]:
        return self.mlp(features), self.alias(self.encoder.blocks(image))


def test_several_inputs_results_and_nested_names() -> None:
    torch.manual_seed(0)
    module = Heads().eval()
    image, features = torch.rand(1, 8, 6, 6) * 2 - 1, torch.rand(1, 16) * 2 - 1
    exported = export(module, image, features)
    assert exported.inputs == ("image", "features")
    assert exported.names == {
        "encoder.blocks.conv.weight": "encoder_blocks_conv_weight",
        "encoder.blocks.conv.bias": "encoder_blocks_conv_bias",
        "mlp.0.weight": "mlp_0_weight",
        "mlp.0.bias": "mlp_0_bias",
        "mlp.2.weight": "mlp_2_weight",
        "mlp.2.bias": "mlp_2_bias",
    }  # the tied `alias.*` names are not arguments
    arguments = re.findall(r"%(\w+):", _signature(exported.mlir))
    assert arguments == ["image", "features", *exported.names.values()]
    _check(module, image, features)


def test_from_torch_refuses_params() -> None:
    with pytest.raises(TypeError, match="own weights"):
        physlayout.from_torch(nn.Linear(2, 2), torch.ones(1, 2), params={})


def test_torch_compile_backend() -> None:
    """torch.compile(backend="physlayout") through the entry point: torch tensors in and out;
    the parameters are bound once and bound again after an in-place update."""
    assert "physlayout" in torch._dynamo.list_backends()
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)).eval()
    compiled = torch.compile(mlp, backend="physlayout", dynamic=False)
    made: list[DynamoCompiled] = []
    backend = torch._dynamo.lookup_backend("physlayout")
    assert backend is dynamo_backend
    watched = torch.compile(
        mlp, backend=lambda gm, inputs: made.append(backend(gm, inputs)) or made[-1]
    )
    x = torch.rand(2, 16) * 2 - 1
    with torch.no_grad():
        for inputs in (x, x * 3):
            result, expected = compiled(inputs), mlp(inputs)
            assert isinstance(result, torch.Tensor) and result.shape == expected.shape
            assert _relative_error(result, expected) <= TOLERANCE
        assert _relative_error(watched(x), mlp(x)) <= TOLERANCE
        (graph,) = made
        assert len(graph.static) == 4  # the two weights and biases are bound; x is the input
        (position,) = set(range(5)) - set(graph.static)  # dynamo's order: not always first
        assert [p.name for p in graph.model.inputs] == [graph.names[position]]
        bound = graph.model
        mlp[2].weight.mul_(-2.0)
        assert _relative_error(compiled(x), mlp(x)) <= TOLERANCE
        assert _relative_error(watched(x), mlp(x)) <= TOLERANCE
        assert graph.model is not bound and graph.model.artifact is bound.artifact


def test_from_pytorch_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/from-pytorch.md's `py` blocks run, in order, as one program (in a scratch
    directory: the page writes build/block/)."""
    page = (ROOT / "docs" / "from-pytorch.md").read_text()
    blocks = re.findall(r"```py\n(.*?)```", page, re.DOTALL)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for block in blocks:
        exec(compile(block, "docs/from-pytorch.md", "exec"), namespace)
    assert (tmp_path / "build" / "block" / "host.c").exists()


def test_torch_compile_backend_refuses_symbolic_shapes() -> None:
    compiled = torch.compile(nn.Linear(4, 2).eval(), backend="physlayout", dynamic=True)
    with torch.no_grad(), pytest.raises(Exception, match="dynamic=False"):
        compiled(torch.ones(3, 4))


def _torchvision() -> Any:
    return pytest.importorskip("torchvision")


@slow
def test_espcn_pixelshuffle() -> None:
    """The shared espcn_pixelshuffle (a named nn.Sequential; PixelShuffle is a 6-D
    transpose)."""
    torch.manual_seed(0)
    layers = [
        ("conv1", nn.Conv2d(1, 16, 5, padding=2)), ("tanh1", nn.Tanh()),
        ("conv2", nn.Conv2d(16, 8, 3, padding=1)), ("tanh2", nn.Tanh()),
        ("conv3", nn.Conv2d(8, 9, 3, padding=1)), ("shuffle", nn.PixelShuffle(3)),
    ]  # fmt: skip
    _check(nn.Sequential(collections.OrderedDict(layers)).eval(), torch.rand(1, 1, 24, 24) * 2 - 1)


@slow
def test_squeezenet1_1() -> None:
    torch.manual_seed(0)
    model = _torchvision().models.squeezenet1_1(weights=None, num_classes=10).eval()
    _check(model, torch.rand(1, 3, 64, 64) * 2 - 1)


@slow
def test_shufflenet_v2_x0_5() -> None:
    torch.manual_seed(0)
    model = _randomize_norms(_torchvision().models.shufflenet_v2_x0_5(weights=None, num_classes=10))
    _check(model, torch.rand(1, 3, 32, 32) * 2 - 1)
