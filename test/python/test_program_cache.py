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
from physlayout.runtime.opencl import OpenCLRuntime, OpenCLRuntimeError

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
