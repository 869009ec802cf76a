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
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from physlayout.runtime.cache_paths import cache_dir

SUBDIRECTORY = "opencl"


def program_key(device: Any, source: str) -> str:
    """The cache key of `source` built for `device` (module docstring)."""
    platform = device.platform
    parts = [
        device.name, device.vendor, device.version, device.driver_version,
        platform.name, platform.version, source,
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
    binary = _read(path)
    if binary is not None:
        try:
            return cl.Program(context, [device], [binary]).build()
        except cl.Error as err:
            _discard(path, f"the driver refused it: {err}")
    program = cl.Program(context, source).build(cache_dir=False)
    _write(path, bytes(program.get_info(cl.program_info.BINARIES)[0]))
    return program


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
