"""Built OpenCL programs cached on disk as device binaries, so that opening a compiled model
again (a `Session`, `physlayout.load`, a second `physlayout run`) does not build its kernels
from source again.

`build_program(context, device, source)` returns the built program of `source` for `device`.
The cache file is `<cache>/opencl/<key>.bin`, `<cache>` the compile cache's directory
(`compile_cache.cache_dir`); the key is a SHA-256 of the source and of the device's and
platform's names and versions and the driver version, so a binary is never handed to a
device or driver other than the one that built it. A file holds the SHA-256 of the binary,
a newline, then the binary: one whose digest does not match (a torn or edited file), or
that the driver refuses, is removed, noted on stderr and rebuilt from source. Files are
written to a temporary name and renamed. Devices that return no binary (the OpenCL
specification allows it) are built from source every time. The directory is one entry of
the compile cache's size bound (`compile_cache.trim`).

A build whose compiler output is not empty (NVIDIA's OpenCL gave output for kernels
that built fine) raises pyopencl's `CompilerWarning`, which Python prints to
stderr in the middle of a command's output; it is silenced here unless
`PYOPENCL_COMPILER_OUTPUT=1` asks for that output (pyopencl's own switch). Failed builds
still raise their `cl.Error` with the whole log.

Every program is built with `build_options(device)`: `-cl-fp32-correctly-rounded-divide-sqrt`
where the device offers it, so that an f32 `/` and `sqrt` round as `arith.divf`,
`math.sqrt` and the numpy evaluator do. OpenCL C otherwise allows 2.5 and 3 ulp, and NVIDIA's
compiler uses that room (a `1 / (x * x)` one ulp off, seen on an H200). The C host asks the
device the same question (`runtime/host_main.c`).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from physlayout.runtime.cache_paths import cache_dir

SUBDIRECTORY = "opencl"
CORRECTLY_ROUNDED_DIVIDE_SQRT = 1 << 7
"""`CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT`, a bit of a device's `CL_DEVICE_SINGLE_FP_CONFIG`."""


def build_options(device: Any) -> list[str]:
    """The options every program is built with on `device` (module docstring)."""
    config = int(getattr(device, "single_fp_config", 0))
    return ["-cl-fp32-correctly-rounded-divide-sqrt"] if config & CORRECTLY_ROUNDED_DIVIDE_SQRT else []


def program_key(device: Any, source: str) -> str:
    """The cache key of `source` built for `device` (module docstring)."""
    platform = device.platform
    parts = [
        device.name, device.vendor, device.version, device.driver_version,
        platform.name, platform.version, *build_options(device), source,
    ]  # fmt: skip
    digest = hashlib.sha256()
    for part in parts:
        digest.update(str(part).encode() + b"\0")
    return digest.hexdigest()


def build_program(cl: Any, context: Any, device: Any, source: str) -> Any:
    """The built program of `source` on `device`: from its cached binary when there is a
    sound one, else built from source and its binary stored (module docstring). Build
    errors of the source are `cl.Error`s, as `cl.Program(...).build()` raises them."""
    path = cache_dir() / SUBDIRECTORY / f"{program_key(device, source)}.bin"
    options = build_options(device)
    binary = _read(path)
    if binary is not None:
        try:
            return quietly(cl, lambda: cl.Program(context, [device], [binary]).build(options))
        except cl.Error as err:
            _discard(path, f"the driver refused it: {err}")
    program = quietly(cl, lambda: cl.Program(context, source).build(options, cache_dir=False))
    _write(path, bytes(program.get_info(cl.program_info.BINARIES)[0]))
    return program


def quietly(cl: Any, build: Callable[[], Any]) -> Any:
    """`build()` with pyopencl's `CompilerWarning` silenced, unless the user asked for the
    compiler's output with `PYOPENCL_COMPILER_OUTPUT=1` (module docstring)."""
    if os.environ.get("PYOPENCL_COMPILER_OUTPUT", "") not in ("", "0"):
        return build()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        return build()


def _read(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, _, binary = data.partition(b"\n")
    if digest.decode(errors="replace") != hashlib.sha256(binary).hexdigest():
        _discard(path, "its checksum does not match")
        return None
    os.utime(path)
    return binary


def _discard(path: Path, why: str) -> None:
    print(f"note: ignoring the cached OpenCL binary {path} ({why}); building again",
          file=sys.stderr)  # fmt: skip
    path.unlink(missing_ok=True)


def _write(path: Path, binary: bytes) -> None:
    if not binary:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, staging = tempfile.mkstemp(prefix=".staging-", dir=path.parent)
        with os.fdopen(handle, "wb") as file:
            file.write(hashlib.sha256(binary).hexdigest().encode() + b"\n" + binary)
        os.replace(staging, path)
    except OSError as err:  # a read-only or full disk: run without caching
        print(f"note: cannot cache the OpenCL binary in {path.parent} ({err})", file=sys.stderr)
