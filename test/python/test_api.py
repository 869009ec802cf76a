"""The Python API (`physlayout.compile`, `physlayout.load`, `CompiledModel`) and the session
under it (`runtime/session.py`): sources as text, path and module; parameters bound, prepared
once and resident (uploads counted); calls by position and name; results equal to
`physlayout run` and PyTorch's; save/load bit for bit; every misuse a diagnostic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_files import model_inputs
from xdsl.utils.exceptions import DiagnosticException

import physlayout
from physlayout.runtime.device import DeviceStorage

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "models" / "bottleneck.mlir"


def _runtime_problem() -> str | None:
    try:
        from physlayout.runtime.device import OpenCLRuntime

        OpenCLRuntime().build("__kernel void k(__global float *a) { a[0] = 1.0f; }")
    except Exception as err:  # no pyopencl, no device
        return str(err)
    return None


pytestmark = pytest.mark.skipif(_runtime_problem() is not None, reason="no OpenCL device")


@pytest.fixture(scope="module")
def arrays() -> dict[str, np.ndarray]:
    return model_inputs("bottleneck")


@pytest.fixture(scope="module")
def params(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in arrays.items() if k != "x"}


@pytest.fixture(scope="module")
def model(params: dict[str, np.ndarray]) -> physlayout.CompiledModel:
    return physlayout.compile(str(MODEL), params=params)


@pytest.fixture
def uploads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[int, ...]]]:
    """The physical shape of every storage upload while the test runs."""
    seen: list[tuple[int, ...]] = []
    original = DeviceStorage.upload

    def counting(self: DeviceStorage, physical: np.ndarray, wait: bool = True) -> Any:
        seen.append(self.physical_shape)
        return original(self, physical, wait)

    monkeypatch.setattr(DeviceStorage, "upload", counting)
    yield seen


def _expected() -> np.ndarray:
    return np.load(MODEL.with_suffix(".expected.npz"))["result0"]


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_a_call_matches_pytorch(model: physlayout.CompiledModel, arrays: dict[str, Any]) -> None:
    assert [p.name for p in model.inputs] == ["x"]
    assert [p.name for p in model.outputs] == ["result0"]
    assert model.prepare_launches > 0 and model.launches == 4  # prepared by default
    assert _relative(model(arrays["x"]), _expected()) < 1e-5


def test_each_call_computes_its_own_inputs(
    model: physlayout.CompiledModel, arrays: dict[str, Any]
) -> None:
    """Resident parameters do not make results stale: a second input gives the graph
    evaluator's result for it, and the first input again gives the first result again."""
    from physlayout.runtime.opencl import parse_module
    from physlayout.semantics.graph_evaluator import run_graph

    x2 = np.random.default_rng(7).uniform(-1, 1, arrays["x"].shape).astype(np.float32)
    first = model(arrays["x"])
    second = model(x=x2)
    names = [k for k in arrays]
    source = parse_module(MODEL.read_text())
    (want,) = run_graph(source, "main", [x2 if n == "x" else arrays[n] for n in names])
    assert _relative(second, want) < 1e-5
    assert np.array_equal(model(arrays["x"]), first)


def test_parameters_are_uploaded_once(
    params: dict[str, Any], arrays: dict[str, Any], uploads: list[tuple[int, ...]]
) -> None:
    model = physlayout.compile(str(MODEL), params=params)
    prepared = len(uploads)
    assert prepared >= len(params)  # each parameter once, before the first call
    for _ in range(3):
        model(arrays["x"])
    assert len(uploads) == prepared + 3  # then only the input, once per call


def test_bound_parameters_stay_resident_without_a_prepare_phase(
    params: dict[str, Any], arrays: dict[str, Any], uploads: list[tuple[int, ...]]
) -> None:
    model = physlayout.compile(str(MODEL), params=params, prepare=False)
    assert model.prepare_launches == 0 and model.launches > 5
    got = [model(arrays["x"]) for _ in range(3)]
    assert len(uploads) == len(params) + 3  # the parameters with the first call only
    assert all(np.array_equal(g, got[0]) for g in got)
    assert _relative(got[0], _expected()) < 1e-5


def test_text_path_and_module_sources_compile_alike(
    model: physlayout.CompiledModel, params: dict[str, Any]
) -> None:
    from physlayout.runtime.opencl import parse_module

    text = MODEL.read_text()
    from_text = physlayout.compile(text, params=params)
    from_module = physlayout.compile(parse_module(text), params=params)
    assert from_text.kernels == model.kernels
    assert from_module.plan.steps == model.plan.steps


def test_save_and_load_round_trip_bit_for_bit(
    model: physlayout.CompiledModel, params: dict[str, Any], arrays: dict[str, Any],
    tmp_path: Path,
) -> None:  # fmt: skip
    model.save(str(tmp_path / "out"))
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"kernels.cl", "plan.json", "host.c"}
    loaded = physlayout.load(tmp_path / "out", params=params)
    assert np.array_equal(loaded(arrays["x"]), model(arrays["x"]))
    assert loaded.launches == model.launches


def test_the_same_as_physlayout_run(
    model: physlayout.CompiledModel, arrays: dict[str, Any], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from physlayout.cli import main

    np.savez(tmp_path / "in.npz", **arrays)
    out = tmp_path / "y.npy"
    with pytest.raises(SystemExit) as done:
        main(["run", str(MODEL), "--inputs", str(tmp_path / "in.npz"), "--output",
              f"result0={out}", "--repeat", "2", "--warmup", "0"])  # fmt: skip
    assert done.value.code == 0
    printed = capsys.readouterr().out
    assert "repeat: 2 run(s) after 0 warm-up: median wall" in printed
    assert "@main: 4 launch(es)" in printed
    assert np.array_equal(np.load(out), model(arrays["x"]))


def test_f16_storage(params: dict[str, Any], arrays: dict[str, Any]) -> None:
    model = physlayout.compile(str(MODEL), params=params, precision="f16")
    assert any(s.dtype == "float16" for s in model.plan.storages)
    assert model.plan.options["precision"] == "f16"
    error = _relative(model(arrays["x"]), _expected())
    assert 0 < error < 2e-2


def test_missing_prepared_parameters_are_named(params: dict[str, Any]) -> None:
    partial = {k: v for k, v in params.items() if k != "bn2_running_var"}
    with pytest.raises(DiagnosticException, match=r"prepared parameters %bn2_running_var are not bound"):
        physlayout.compile(str(MODEL), params=partial)


def test_pytorch_names_get_a_did_you_mean(
    model: physlayout.CompiledModel, params: dict[str, Any]
) -> None:
    torch_names = {k.replace("_", ".", 1) if k.startswith("conv") else k: v for k, v in params.items()}
    with pytest.raises(DiagnosticException, match=r"no input %conv1.weight; did you mean %conv1_weight\?"):
        physlayout.compile(str(MODEL), params=torch_names)


def test_misuse_of_a_call_is_a_diagnostic(
    model: physlayout.CompiledModel, arrays: dict[str, Any]
) -> None:
    x = arrays["x"]
    with pytest.raises(DiagnosticException, match=r"no value for the inputs %x"):
        model()
    with pytest.raises(DiagnosticException, match=r"takes 1 input\(s\), got 2 positional"):
        model(x, x)
    with pytest.raises(DiagnosticException, match=r"%x: expected shape \[1, 64, 8, 8\]"):
        model(x[0])
    with pytest.raises(DiagnosticException, match=r"%conv1_weight is bound as a parameter"):
        model(x, conv1_weight=arrays["conv1_weight"])
    with pytest.raises(DiagnosticException, match=r"%x given twice"):
        model(x, x=x)
    with pytest.raises(DiagnosticException, match=r"complex128 values do not convert"):
        model(x.astype(np.complex128))


def test_timing_fields(model: physlayout.CompiledModel, arrays: dict[str, Any]) -> None:
    timing = model.time({"x": arrays["x"]}, repeat=3, warmup=1)
    assert timing.runs == 3 and timing.launches == model.launches
    assert timing.wall_ms > 0 and timing.device_ms > 0
    assert model.last_run is not None and len(model.last_run.times) == model.launches
    with pytest.raises(DiagnosticException, match="repeat must be >= 1"):
        model.time({"x": arrays["x"]}, repeat=0)
    assert model.time(arrays["x"], repeat=1, warmup=0).runs == 1  # by position, as a call
    assert model.time(x=arrays["x"], repeat=1, warmup=0).runs == 1


def test_call_leaves_profiling_events_unread(
    model: physlayout.CompiledModel, arrays: dict[str, Any]
) -> None:
    """Calling the model reads no profiling events (each read is a driver call per launch);
    the launches wait in `last_run.pending`, and `resolve` gives their times."""
    model(arrays["x"])
    last = model.last_run
    assert last is not None and last.times == [] and len(last.pending) == model.launches
    assert len(last.resolve().times) == model.launches and last.pending == []
    assert all(t.seconds > 0 for t in last.times)


@pytest.mark.parametrize("storage", ["buffer", "image"])
def test_a_call_waits_for_its_copies_once(
    storage: str, params: dict[str, Any], arrays: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call enqueues its input's upload and its result's download without blocking and
    keeps their events until the queue has finished (pyopencl's event of a copy from or to
    host memory waits for the copy when it is freed, so a dropped event made every upload
    wait for the driver); the result read that way is complete when the call returns."""
    from physlayout.runtime import device

    model = physlayout.compile(str(MODEL), params=params, texture_storage=storage)
    cl = device.pyopencl_module()
    log: list[str] = []  # "copy" (non-blocking), "blocking copy", "freed" (a copy's event)
    write, read = device._buffer_copies(cl)  # pyright: ignore[reportPrivateUsage]
    enqueue_copy = cl.enqueue_copy

    class Held:
        """A copy's event; its freeing is logged."""

        def __init__(self, event: Any) -> None:
            self.event = event

        def __del__(self) -> None:
            log.append("freed")

    def copied(copy: Any, is_blocking: bool, *args: Any, **kwargs: Any) -> Any:
        log.append("blocking copy" if is_blocking else "copy")
        return Held(copy(*args, is_blocking=is_blocking, **kwargs))

    def recorded(copy: Any) -> Any:
        return lambda queue, memory, data, is_blocking: copied(
            copy, is_blocking, queue, memory, data
        )

    def recorded_copy(*args: Any, is_blocking: bool = True, **kwargs: Any) -> Any:
        return copied(enqueue_copy, is_blocking, *args, **kwargs)

    monkeypatch.setattr(device, "_buffer_copies", lambda _cl: (recorded(write), recorded(read)))
    monkeypatch.setattr(cl, "enqueue_copy", recorded_copy)
    want = model(arrays["x"])
    second = model(arrays["x"] * 0.5)
    # per call: the input in and the result out, both events held until the queue finished
    assert log == ["copy", "copy", "freed", "freed"] * 2
    assert model.last_run is not None and model.last_run.transfers == []
    assert np.array_equal(model(arrays["x"]), want) and not np.array_equal(second, want)
    assert _relative(want, _expected()) < 1e-5


def test_run_refuses_inputs_not_by_name(
    model: physlayout.CompiledModel, arrays: dict[str, Any]
) -> None:
    """`run` takes a dict; an array there is a diagnostic, not numpy's truth-value error."""
    with pytest.raises(DiagnosticException, match=r"run takes the inputs by name \(a dict\), got ndarray"):
        model.run(arrays["x"])  # pyright: ignore[reportArgumentType]


def test_a_bad_source_is_a_parse_error() -> None:
    from xdsl.utils.exceptions import ParseError

    with pytest.raises(ParseError):
        physlayout.compile("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  oops\n}")
