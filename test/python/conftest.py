"""pytest set-up: with PHYSLAYOUT_REQUIRE_TOOLS=1 (CI) the upstream MLIR tools, a working
OpenCL device, and gcc with the OpenCL headers and ICD loader (the C host of
`physlayout compile`, test_deploy.py) are required, so their tests cannot be skipped
silently."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from physlayout.runtime.device import OpenCLRuntime


def pytest_configure(config: pytest.Config) -> None:
    """Every test session compiles into a compile cache of its own (an empty directory), so
    that no test reads an artifact an earlier session or the user's runs left."""
    import tempfile

    os.environ["PHYSLAYOUT_CACHE_DIR"] = tempfile.mkdtemp(prefix="physlayout-cache-")
    del config


def pytest_sessionstart(session: pytest.Session) -> None:
    if os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") != "1":
        return
    from physlayout.runtime.device import OpenCLRuntime
    from physlayout.runtime.mlir_runner import MlirTools

    tools = MlirTools.find()
    if tools is None or tools.runner is None:
        pytest.exit("PHYSLAYOUT_REQUIRE_TOOLS=1 but mlir-opt-22 / mlir-runner-22 is missing", 3)
    runtime = OpenCLRuntime()
    runtime.build("__kernel void k(__global float *a) { a[0] = 1.0f; }")
    problem = c_host_toolchain_problem()
    if problem is not None:
        pytest.exit(f"PHYSLAYOUT_REQUIRE_TOOLS=1 but the C host cannot be built: {problem}", 3)


def c_host_toolchain_problem() -> str | None:
    """Why `gcc -std=c99 ... -lOpenCL` cannot build an OpenCL host here (None: it can)."""
    import shutil
    import subprocess
    import tempfile
    from pathlib import Path

    if shutil.which("gcc") is None:
        return "gcc is missing"
    program = "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void) { cl_uint n; return clGetPlatformIDs(0, 0, &n) == 0 ? 0 : 0; }\n"
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "probe.c").write_text(program)
        result = subprocess.run(
            ["gcc", "-std=c99", "-o", "probe", "probe.c", "-lOpenCL"],
            cwd=folder, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    if result.returncode != 0:
        return f"the OpenCL headers or libOpenCL are missing (ocl-icd-opencl-dev, opencl-c-headers): {result.stderr.strip()[:300]}"
    return None


@pytest.fixture(scope="session")
def runtime() -> OpenCLRuntime:
    """One OpenCL runtime for every test that asks for it; skipped without a device."""
    from physlayout.runtime.device import OpenCLRuntime, OpenCLRuntimeError

    try:
        return OpenCLRuntime()
    except (OpenCLRuntimeError, ImportError) as err:
        pytest.skip(f"no OpenCL device: {err}")
