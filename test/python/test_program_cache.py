"""The OpenCL program cache (`runtime/program_cache.py`): a program built once is built from
its device binary afterwards (not from source), computes the same values, is keyed by the
device and driver, and a torn or refused binary is ignored, noted and rebuilt."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from physlayout.runtime import program_cache
from physlayout.runtime.device import OpenCLRuntime, OpenCLRuntimeError

SOURCE = """__kernel void scale(__global const float *x, __global float *y, float k) {
  size_t i = get_global_id(0);
  y[i] = x[i] * k + (float)i;
}
"""


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PHYSLAYOUT_CACHE_DIR", str(tmp_path))
    return tmp_path / program_cache.SUBDIRECTORY


class CountingCL:
    """pyopencl, counting the programs created from source and from binaries."""

    def __init__(self, cl: Any) -> None:
        self.cl = cl
        self.Error = cl.Error
        self.CompilerWarning = cl.CompilerWarning
        self.program_info = cl.program_info
        self.from_source = 0
        self.from_binary = 0

    def Program(self, context: Any, *args: Any) -> Any:
        if len(args) == 1:
            self.from_source += 1
        else:
            self.from_binary += 1
        return self.cl.Program(context, *args)


def _run(program: Any, runtime: OpenCLRuntime) -> np.ndarray:
    import pyopencl as cl

    x = np.arange(13, dtype=np.float32) - 6
    flags = cl.mem_flags
    x_buf = cl.Buffer(runtime.context, flags.READ_ONLY | flags.COPY_HOST_PTR, hostbuf=x)
    y_buf = cl.Buffer(runtime.context, flags.WRITE_ONLY, x.nbytes)
    program.scale(runtime.queue, x.shape, None, x_buf, y_buf, np.float32(2.5))
    y = np.empty_like(x)
    cl.enqueue_copy(runtime.queue, y, y_buf)
    return y


def test_second_build_comes_from_the_binary(runtime: OpenCLRuntime, cache: Path) -> None:
    import pyopencl as cl

    counting = CountingCL(cl)
    first = program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    (entry,) = cache.glob("*.bin")
    second = program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    assert (counting.from_source, counting.from_binary) == (1, 1)
    expected = (np.arange(13, dtype=np.float32) - 6) * 2.5 + np.arange(13)
    np.testing.assert_array_equal(_run(first, runtime), expected)
    np.testing.assert_array_equal(_run(second, runtime), expected)
    assert entry.name == program_cache.program_key(runtime.device, SOURCE) + ".bin"


@pytest.mark.parametrize(
    ("damage", "note"),
    [
        (lambda data: data[:-7], "checksum does not match"),
        (lambda data: data[:80] + bytes([data[80] ^ 1]) + data[81:], "checksum does not match"),
        (lambda data: b"garbage", "checksum does not match"),
    ],
)
def test_a_damaged_binary_is_rebuilt(
    runtime: OpenCLRuntime, cache: Path, capsys: pytest.CaptureFixture[str], damage: Any,
    note: str,
) -> None:  # fmt: skip
    import pyopencl as cl

    counting = CountingCL(cl)
    program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    (entry,) = cache.glob("*.bin")
    entry.write_bytes(damage(entry.read_bytes()))
    rebuilt = program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    assert (counting.from_source, counting.from_binary) == (2, 0)
    assert note in capsys.readouterr().err
    expected = (np.arange(13, dtype=np.float32) - 6) * 2.5 + np.arange(13)
    np.testing.assert_array_equal(_run(rebuilt, runtime), expected)
    program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    assert counting.from_binary == 1  # the rebuilt binary is stored again


def test_a_binary_the_driver_refuses_is_rebuilt(
    runtime: OpenCLRuntime, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose checksum matches but whose binary is not one the device accepts (another
    driver wrote it under a colliding name, say) is discarded after the driver refuses it."""
    import hashlib

    import pyopencl as cl

    path = cache / f"{program_cache.program_key(runtime.device, SOURCE)}.bin"
    path.parent.mkdir(parents=True)
    junk = b"\x7fELF not a program binary" * 8
    path.write_bytes(hashlib.sha256(junk).hexdigest().encode() + b"\n" + junk)
    counting = CountingCL(cl)
    program = program_cache.build_program(counting, runtime.context, runtime.device, SOURCE)
    assert counting.from_source == 1
    assert "the driver refused it" in capsys.readouterr().err
    expected = (np.arange(13, dtype=np.float32) - 6) * 2.5 + np.arange(13)
    np.testing.assert_array_equal(_run(program, runtime), expected)


def test_the_key_names_device_driver_and_source() -> None:
    platform = SimpleNamespace(name="Portable Computing Language", version="OpenCL 3.0 PoCL 6.0")
    device = SimpleNamespace(
        name="cpu", vendor="AMD", version="OpenCL 3.0", driver_version="6.0", platform=platform
    )
    keys = {program_cache.program_key(device, SOURCE)}
    for field, value in (("driver_version", "6.1"), ("name", "gpu"), ("version", "OpenCL 1.2")):
        keys.add(
            program_cache.program_key(SimpleNamespace(**{**vars(device), field: value}), SOURCE)
        )
    other_platform = SimpleNamespace(name=platform.name, version="OpenCL 3.0 PoCL 7.0")
    keys.add(
        program_cache.program_key(
            SimpleNamespace(**{**vars(device), "platform": other_platform}), SOURCE
        )
    )
    keys.add(program_cache.program_key(device, SOURCE + "\n"))
    assert len(keys) == 6


def test_runtime_without_program_cache_writes_nothing(cache: Path) -> None:
    try:
        runtime = OpenCLRuntime(program_cache=False)
    except (OpenCLRuntimeError, ImportError) as err:
        pytest.skip(f"no OpenCL device: {err}")
    runtime.build(SOURCE)
    assert not cache.exists()
    OpenCLRuntime().build(SOURCE)
    assert len(list(cache.glob("*.bin"))) == 1


class ChattyCL:
    """A driver whose compiler prints informational output for a program that builds (as
    NVIDIA's does): pyopencl turns that into a `CompilerWarning`."""

    class CompilerWarning(UserWarning):
        pass

    class Error(Exception):
        pass

    program_info = SimpleNamespace(BINARIES="binaries")

    def Program(self, context: Any, *args: Any) -> Any:
        del context, args
        chatty = self

        class Built:
            def build(self, *options: Any, **settings: Any) -> Any:
                del options, settings
                import warnings

                warnings.warn("Non-empty compiler output.", chatty.CompilerWarning, stacklevel=2)
                return self

            def get_info(self, what: Any) -> list[bytes]:
                assert what == "binaries"
                return [b""]  # no binary: nothing cached

        return Built()


def test_compiler_output_of_a_good_build_is_silent_unless_asked_for(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that succeeds with compiler output prints nothing (it would land in the
    middle of `physlayout run`'s output); `PYOPENCL_COMPILER_OUTPUT=1` shows it again."""
    import warnings

    del cache
    cl = ChattyCL()
    device = SimpleNamespace(
        name="chatty", vendor="v", version="1", driver_version="1",
        platform=SimpleNamespace(name="p", version="1"),
    )  # fmt: skip
    monkeypatch.delenv("PYOPENCL_COMPILER_OUTPUT", raising=False)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert program_cache.build_program(cl, None, device, SOURCE) is not None
    assert seen == []
    monkeypatch.setenv("PYOPENCL_COMPILER_OUTPUT", "1")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        program_cache.build_program(cl, None, device, SOURCE)
    assert [type(w.message) for w in seen] == [ChattyCL.CompilerWarning]


class RecordingCL(ChattyCL):
    """A quiet driver recording the options each program is built with."""

    def __init__(self) -> None:
        self.options: list[Any] = []

    def Program(self, context: Any, *args: Any) -> Any:
        del context, args
        recording = self

        class Built:
            def build(self, options: Any = None, **settings: Any) -> Any:
                del settings
                recording.options.append(options)
                return self

            def get_info(self, what: Any) -> list[bytes]:
                del what
                return [b""]

        return Built()


@pytest.mark.parametrize("offers", [True, False])
def test_division_and_sqrt_are_built_correctly_rounded_where_offered(
    cache: Path, offers: bool
) -> None:
    """f32 `/` and `sqrt` must round as `arith.divf` and the evaluator do: a device that
    offers CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT builds every program with
    `-cl-fp32-correctly-rounded-divide-sqrt`, and the cache keeps the two builds apart."""
    del cache
    bit = program_cache.CORRECTLY_ROUNDED_DIVIDE_SQRT
    config = (0b111 | bit) if offers else 0b111
    device = SimpleNamespace(
        name="d", vendor="v", version="1", driver_version="1", single_fp_config=config,
        platform=SimpleNamespace(name="p", version="1"),
    )  # fmt: skip
    cl = RecordingCL()
    program_cache.build_program(cl, None, device, SOURCE)
    flag = "-cl-fp32-correctly-rounded-divide-sqrt"
    assert cl.options == [[flag] if offers else []]
    other = SimpleNamespace(**{**vars(device), "single_fp_config": config ^ bit})
    assert program_cache.program_key(device, SOURCE) != program_cache.program_key(other, SOURCE)


def test_the_runtime_and_the_c_host_ask_for_the_same_rounding(runtime: OpenCLRuntime) -> None:
    """The runtime's own builds (with or without the binary cache) take the device's
    options, and the C host asks the device the same question before `clBuildProgram`."""
    import pyopencl as cl

    expected = program_cache.build_options(runtime.device)
    single = int(runtime.device.single_fp_config)
    assert bool(expected) == bool(single & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT)
    host = (Path(program_cache.__file__).parent / "host_main.c").read_text()
    assert "CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT" in host
    assert "-cl-fp32-correctly-rounded-divide-sqrt" in host
