"""lit configuration: FileCheck tests for every `.mlir` file under test/."""

import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "physlayout"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["Output", "python", "__pycache__", "inputs", ".venv", "build"]  # noqa: F821

_bin = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([_bin, os.environ.get("PATH", "")])  # noqa: F821
for _var in ("HOME", "POCL_CACHE_DIR", "PHYSLAYOUT_OPENCL_DEVICE", "OPENBLAS_CORETYPE", "PYTHONPATH"):
    if _var in os.environ:
        config.environment[_var] = os.environ[_var]  # noqa: F821

# Upstream MLIR (Debian mlir-22-tools) enables the interop tests.
_mlir_opt = shutil.which("mlir-opt-22") or shutil.which("mlir-opt")
_mlir_runner = shutil.which("mlir-runner-22") or shutil.which("mlir-runner")
if _mlir_opt:
    config.available_features.add("mlir")  # noqa: F821
    config.substitutions.append(("%mlir-opt", _mlir_opt))  # noqa: F821
if _mlir_runner:
    config.available_features.add("mlir-runner")  # noqa: F821
    config.substitutions.append(("%mlir-runner", _mlir_runner))  # noqa: F821
    _libdir = "/usr/lib/llvm-22/lib"
    _libs = [
        os.path.join(_libdir, n)
        for n in ("libmlir_c_runner_utils.so.22.1", "libmlir_runner_utils.so.22.1")
    ]
    config.substitutions.append(("%runner-libs", ",".join(_libs)))  # noqa: F821

# OpenCL: the device the runtime picks builds a kernel (probed in a subprocess: a broken ICD
# may abort the process).
_probe = subprocess.run(
    [
        sys.executable,
        "-c",
        "from physlayout.runtime.opencl import OpenCLRuntime; "
        "OpenCLRuntime().build('__kernel void k(__global float *a) { a[0] = 1.0f; }')",
    ],
    capture_output=True,
    timeout=120,
)
if _probe.returncode == 0:
    config.available_features.add("opencl")  # noqa: F821

# CI (PHYSLAYOUT_REQUIRE_TOOLS=1) runs every test: a missing tool is an error, not a skip.
if os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") == "1":
    for _feature in ("mlir", "mlir-runner", "opencl"):
        if _feature not in config.available_features:  # noqa: F821
            lit_config.fatal(f"PHYSLAYOUT_REQUIRE_TOOLS=1 but feature '{_feature}' is missing")  # noqa: F821

config.substitutions.append(("%python", sys.executable))  # noqa: F821
