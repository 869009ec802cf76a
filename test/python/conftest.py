"""pytest set-up: with PHYSLAYOUT_REQUIRE_TOOLS=1 (CI) the upstream MLIR tools and a working
OpenCL device are required, so their tests cannot be skipped silently."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from physlayout.runtime.opencl import OpenCLRuntime


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") != "1":
        return
    from physlayout.runtime.mlir_runner import MlirTools
    from physlayout.runtime.opencl import OpenCLRuntime

    tools = MlirTools.find()
    if tools is None or tools.runner is None:
        pytest.exit("PHYSLAYOUT_REQUIRE_TOOLS=1 but mlir-opt-22 / mlir-runner-22 is missing", 3)
    runtime = OpenCLRuntime()
    runtime.build("__kernel void k(__global float *a) { a[0] = 1.0f; }")


@pytest.fixture(scope="session")
def runtime() -> OpenCLRuntime:
    """One OpenCL runtime for every test that asks for it; skipped without a device."""
    from physlayout.runtime.opencl import OpenCLRuntime, OpenCLRuntimeError

    try:
        return OpenCLRuntime()
    except (OpenCLRuntimeError, ImportError) as err:
        pytest.skip(f"no OpenCL device: {err}")
