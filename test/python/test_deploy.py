"""`physlayout compile` artifacts: plan.json against its JSON Schema, `physlayout run OUT/`
against `physlayout run FILE.mlir`, the generated C host (gcc -std=c99 -Wall -Werror, run on
the local OpenCL device) against both, and clear errors for bad artifacts on both sides.

The C host tests need gcc and the OpenCL headers and ICD loader (Debian: ocl-icd-opencl-dev,
opencl-c-headers), and a platform that the system's ICD loader finds: where it finds none
(no /etc/OpenCL/vendors entry), they run the host on pip's PoCL (the pocl.icd that
pocl-binary-distribution puts beside pyopencl's libraries, through OCL_ICD_VENDORS), else
they skip with the reason; except under PHYSLAYOUT_REQUIRE_TOOLS=1 (CI), where they fail.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_files import model_inputs

from physlayout.runtime.device import OpenCLRuntime

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = ROOT / "docs" / "plan.schema.json"

RAISE = "raise-layout-rewrites,physlayout-adreno"
# (file, entry or None, pipeline or None): graph and buffer level, textures, padding, in-place
# parameters.
CASES = [
    ("demo.mlir", None, None),
    ("loop_order.mlir", None, None),
    ("relu_texture.mlir", None, None),
    ("nhwc_relu_nchw4c.mlir", "relu", None),
    ("graph_conv_bias_conv.mlir", "conv_bias_conv", None),
    ("graph_conv_bias_conv.mlir", "conv_bias_conv_padded", None),
    ("relayout_chains.mlir", "pack_unpack_padded", RAISE),
    ("relayout_chains.mlir", "pack_then_transpose", RAISE),
    # parameters prepared once (plan.prepare: every argument but the first)
    ("conv_bias_relu.mlir", None, "physlayout-adreno{lift-params=true}"),
    ("graph_conv_bias_conv.mlir", "conv_bias_conv_padded", "physlayout-adreno{lift-params=true}"),
]

SPLIT = "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = -1.0 : f32"
PADDED_IN = f"""
// An input with a padded transform (read, padding included, through a flat alias would be
// the pad value), an f32 scalar, and an i32 buffer.
func.func @axpy(%a: f32, %x: !layout.buffer<10xf32, {SPLIT}>, %y: !layout.buffer<10xf32>,
                %k: !layout.buffer<3xi32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c10 step %c1 {{
    %v = layout.load %x[%i] : !layout.buffer<10xf32, {SPLIT}>, f32
    %w = layout.load %y[%i] : !layout.buffer<10xf32>, f32
    %p = arith.mulf %a, %v : f32
    %s = arith.addf %p, %w : f32
    layout.store %s, %y[%i] : !layout.buffer<10xf32>, f32
  }}
  scf.for %i = %c0 to %c3 step %c1 {{
    %v = layout.load %k[%i] : !layout.buffer<3xi32>, i32
    %d = arith.addi %v, %v : i32
    layout.store %d, %k[%i] : !layout.buffer<3xi32>, i32
  }}
  func.return
}}
"""

NCHW4C = "transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h | w, c mod 4)>, pad_value = 0.0 : f32, scope = \"global.texture\""
TEXTURE_C5 = f"""
// A texture input and a texture output, 5 channels (the second texel of each pixel is
// padded): the boundary fills the padding, scatters, copies to the image and back.
func.func @relu(%a: !layout.buffer<1x3x2x5xf32, {NCHW4C}>, %b: !layout.buffer<1x3x2x5xf32, {NCHW4C}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  scf.for %n = %c0 to %c1 step %c1 {{
    scf.for %h = %c0 to %c3 step %c1 {{
      scf.for %w = %c0 to %c2 step %c1 {{
        scf.for %c = %c0 to %c5 step %c1 {{
          %v = layout.load %a[%n, %h, %w, %c] : !layout.buffer<1x3x2x5xf32, {NCHW4C}>, f32
          %r = arith.maximumf %v, %zero : f32
          layout.store %r, %b[%n, %h, %w, %c] : !layout.buffer<1x3x2x5xf32, {NCHW4C}>, f32
        }}
      }}
    }}
  }}
  func.return
}}
"""


def physlayout(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the `physlayout` command in this process: (exit status, stdout, stderr)."""
    from physlayout.cli import main

    try:
        main(list(argv))
        code = 0
    except SystemExit as done:
        code = int(done.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


PROBE = r"""#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
int main(void) {
    cl_uint n = 0;
    cl_int status = clGetPlatformIDs(0, NULL, &n);
    printf("%d %u\n", (int)status, status == CL_SUCCESS ? n : 0u);
    return 0;
}
"""


def pip_pocl() -> list[dict[str, str]]:
    """The environment variables that show the system's ICD loader pip's PoCL: each .icd
    file that pocl-binary-distribution installs beside pyopencl's own libraries (the file
    names the library without a path, hence LD_LIBRARY_PATH)."""
    spec = importlib.util.find_spec("pyopencl")
    if spec is None or not spec.submodule_search_locations:
        return []
    libs = Path(next(iter(spec.submodule_search_locations))) / ".libs"
    path = os.pathsep.join(p for p in (str(libs), os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return [{"OCL_ICD_VENDORS": str(icd), "LD_LIBRARY_PATH": path} for icd in sorted(libs.glob("*.icd"))]


def find_opencl_loader(candidates: list[dict[str, str]]) -> tuple[dict[str, str], str | None]:
    """The first of `candidates` (environment variables added to this process's) under which
    a program built with `-lOpenCL` finds an OpenCL platform, and None; or ({}, why none
    does)."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "probe.c").write_text(PROBE)
        built = subprocess.run(["gcc", "-std=c99", "-o", "probe", "probe.c", "-lOpenCL"], cwd=folder,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        if built.returncode != 0:
            return {}, f"cannot build an OpenCL probe: {built.stderr.strip()[:300]}"
        for extra in candidates:
            env = {k: v for k, v in os.environ.items() if k != "PHYSLAYOUT_OPENCL_DEVICE"} | extra
            probe = subprocess.run([str(Path(folder) / "probe")], capture_output=True, text=True,
                                   timeout=120, env=env)  # fmt: skip
            status, _, count = probe.stdout.partition(" ")
            if probe.returncode == 0 and status == "0" and int(count or 0) > 0:
                return extra, None
    return {}, (
        "the system's OpenCL ICD loader (libOpenCL) finds no platform (no vendor .icd in "
        "/etc/OpenCL/vendors or $OCL_ICD_VENDORS), nor does it find pip's PoCL (pyopencl/.libs/"
        "*.icd); install a driver (Debian: pocl-opencl-icd) or see docs/deploy.md"
    )


@functools.cache
def host_environment() -> tuple[dict[str, str], str | None]:
    """The environment variables the C host runs under here (none where the system loader
    finds a platform, else pip's PoCL), and None; or ({}, why it cannot run here)."""
    from conftest import c_host_toolchain_problem

    problem = c_host_toolchain_problem()
    if problem is not None:
        return {}, problem
    return find_opencl_loader([{}, *pip_pocl()])


@pytest.fixture(scope="session")
def c_toolchain() -> str | None:
    """Why the C host cannot be built and run here (None: it can)."""
    return host_environment()[1]


@pytest.fixture
def gcc(c_toolchain: str | None) -> None:
    if c_toolchain is None:
        return
    if os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") == "1":
        pytest.fail(f"PHYSLAYOUT_REQUIRE_TOOLS=1 but the C host cannot run: {c_toolchain}")
    pytest.skip(f"cannot build or run the C host: {c_toolchain}")


def build_host(out: Path) -> Path:
    """host.c built as README.txt says, with -Werror added."""
    readme = (out / "README.txt").read_text()
    assert "Build: gcc -std=c99 -O2 -Wall -o host host.c -lOpenCL" in readme
    result = subprocess.run(
        ["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-o", "host", "host.c", "-lOpenCL"],
        cwd=out, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return out / "host"


def run_host(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """./host in `out` (on pip's PoCL where the system loader finds no platform)."""
    env = {k: v for k, v in os.environ.items() if k != "PHYSLAYOUT_OPENCL_DEVICE"}
    env.update(host_environment()[0])
    return subprocess.run(
        [str(out / "host"), *args], cwd=out, capture_output=True, text=True, timeout=300, env=env
    )


def write_inputs(out: Path, seed: int) -> list[str]:
    """Random .npy inputs for every input of out/plan.json; the --input arguments."""
    plan = json.loads((out / "plan.json").read_text())
    rng = np.random.default_rng(seed)
    args: list[str] = []
    for param in plan["inputs"]:
        dtype = np.dtype(param["dtype"])
        if param["kind"] == "scalar":
            args.append(f"--input={param['name']}=1.5" if dtype.kind == "f" else f"--input={param['name']}=3")
            continue
        shape = tuple(param["shape"])
        if dtype.kind == "f":
            data = rng.uniform(-1, 1, shape).astype(dtype)
        else:
            data = rng.integers(-8, 8, shape).astype(dtype)
        path = out / f"in_{param['name']}.npy"
        np.save(path, data)
        args.append(f"--input={param['name']}={path}")
    return args


def compile_case(tmp: Path, file: str, entry: str | None, capsys: Any, *extra: str) -> Path:
    out = tmp / (Path(file).stem + (f"_{entry}" if entry else ""))
    path = file if Path(file).is_absolute() else str(EXAMPLES / file)
    argv = ["compile", path, "-o", str(out), *extra]
    if entry:
        argv += ["--entry", entry]
    code, _, err = physlayout(*argv, capsys=capsys)
    assert code == 0, err
    return out


def outputs_of(out: Path) -> list[str]:
    plan = json.loads((out / "plan.json").read_text())
    return [p["name"] for p in plan["outputs"]]


# The schema ---------------------------------------------------------------------------------


def _pipeline(pipeline: str | None) -> tuple[str, ...]:
    return () if pipeline is None else ("--pipeline", pipeline)


@pytest.mark.parametrize(("file", "entry", "pipeline"), CASES, ids=lambda x: str(x))
def test_plan_validates_against_its_schema(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file: str,
    entry: str | None,
    pipeline: str | None,
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    out = compile_case(tmp_path, file, entry, capsys, *_pipeline(pipeline))
    plan = json.loads((out / "plan.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(plan)
    assert sorted(os.listdir(out)) == ["README.txt", "host.c", "kernels.cl", "kernels.json", "plan.json", "source.mlir"]
    first = (out / "kernels.cl").read_text().split("\n", 1)[0]
    assert first == f"// physlayout artifact {plan['artifact_id']} (plan schema 1)"
    # Every launched kernel is in kernels.cl, every step names an existing storage.
    kernels = (out / "kernels.cl").read_text()
    for name in plan["kernels"]:
        assert f"__kernel void {name}(" in kernels
    for step in plan["steps"]:
        for key in ("storage", "src", "dst"):
            if key in step:
                assert 0 <= step[key] < len(plan["storages"])


def test_prepared_parameters_run_once_before_the_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With lift-params the plan takes the graph's own arguments; the weights are written,
    laid out and prepared (batch norm folded) by the prepare steps, into `prepared`
    storages the body only reads: the body launches only @main's kernels."""
    out = compile_case(
        tmp_path, "models/bottleneck.mlir", None, capsys, "--pipeline",
        "physlayout-adreno{lift-params=true}",
    )  # fmt: skip
    plan = json.loads((out / "plan.json").read_text())
    source = (EXAMPLES / "models/bottleneck.mlir").read_text()
    header = next(line for line in source.splitlines() if "func.func @main(" in line)
    arguments = re.findall(r"%(\w+): tensor", header.split(" -> ")[0])
    assert len(arguments) == 16 and [p["name"] for p in plan["inputs"]] == arguments
    prepare_launches = [s["kernel"] for s in plan["prepare"] if s["op"] == "launch"]
    body_launches = [s["kernel"] for s in plan["steps"] if s["op"] == "launch"]
    assert prepare_launches and all(k.startswith("main_prepare") for k in prepare_launches
                                    if not k.startswith("physlayout_in_"))  # fmt: skip
    assert not any(k.startswith(("main_prepare", "physlayout_in_conv")) for k in body_launches)
    assert len(body_launches) <= 5 + 2  # the 3 convs' groups, x in and the result out
    prepared = {k for k, s in enumerate(plan["storages"]) if s["role"] == "prepared"}
    made_in_prepare = {s["storage"] for s in plan["prepare"] if s["op"] == "allocate"}
    made_in_body = {s["storage"] for s in plan["steps"] if s["op"] in ("allocate", "fill", "write")}
    assert prepared and prepared <= made_in_prepare and not prepared & made_in_body
    read_in_body = {a["storage"] for s in plan["steps"] if s["op"] == "launch" for a in s["args"]
                    if "storage" in a}  # fmt: skip
    assert prepared & read_in_body


def test_schema_rejects_another_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    out = compile_case(tmp_path, "demo.mlir", None, capsys)
    plan = json.loads((out / "plan.json").read_text())
    plan["version"] = 2
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(plan, json.loads(SCHEMA.read_text()))


def test_compile_is_deterministic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = compile_case(tmp_path / "a", "demo.mlir", None, capsys)
    b = compile_case(tmp_path / "b", "demo.mlir", None, capsys)
    for name in ("kernels.cl", "plan.json", "host.c"):
        assert (a / name).read_bytes() == (b / name).read_bytes()


def test_demo_plan_contents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's logical plan: %f (OIHW4o global) and %y (NCHW4c texture) are relayout by
    boundary kernels; %y's image is 14 x 56 RGBA FLOAT; x and f are inputs, y an output."""
    out = compile_case(tmp_path, "demo.mlir", None, capsys)
    plan = json.loads((out / "plan.json").read_text())
    assert [(p["name"], p["direction"]) for p in plan["inputs"]] == [("x", "in"), ("f", "in")]
    assert [(p["name"], p["direction"], p["shape"]) for p in plan["outputs"]] == [
        ("y", "out", [1, 14, 14, 16])
    ]
    y = plan["storages"][plan["outputs"][0]["storage"]]
    assert y["image"] == {"channel_order": "CL_RGBA", "channel_type": "CL_FLOAT", "width": 14, "height": 56}
    ops = [(s["op"], s.get("kernel")) for s in plan["steps"] if s["op"] in ("launch", "copy_image_to_buffer")]
    assert ops == [
        ("launch", "physlayout_in_f"), ("launch", "to_nchw4c"), ("launch", "relu"),
        ("launch", "conv2d"), ("copy_image_to_buffer", None), ("launch", "physlayout_out_y"),
    ]  # fmt: skip
    assert plan["requirements"] == {
        "extensions": [], "image_support": True, "max_image_width": 16, "max_image_height": 64
    }  # fmt: skip
    assert plan["prepare"] == []


# Round trips: physlayout run OUT/ == physlayout run FILE.mlir == ./host ---------------------


def _run_file(file: str, entry: str | None, inputs: list[str], names: list[str], tmp: Path,
              capsys: Any, *extra: str) -> dict[str, np.ndarray]:  # fmt: skip
    argv = ["run", file, *inputs, *(f"--output={n}={tmp / (n + '.file.npy')}" for n in names), *extra]
    if entry:
        argv += ["--entry", entry]
    code, _, err = physlayout(*argv, capsys=capsys)
    assert code == 0, err
    return {n: np.load(tmp / f"{n}.file.npy") for n in names}


@pytest.mark.parametrize(("file", "entry", "pipeline"), CASES, ids=lambda x: str(x))
def test_artifact_round_trip_and_c_host(
    runtime: OpenCLRuntime,
    gcc: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    file: str,
    entry: str | None,
    pipeline: str | None,
) -> None:
    """The same inputs through `physlayout run FILE.mlir`, `physlayout run OUT/ --check` and
    the C host give bit-identical outputs."""
    out = compile_case(tmp_path, file, entry, capsys, *_pipeline(pipeline))
    inputs = write_inputs(out, 7)
    names = outputs_of(out)
    want = _run_file(str(EXAMPLES / file), entry, inputs, names, tmp_path, capsys, *_pipeline(pipeline))
    argv = ["run", str(out), "--check", *inputs, *(f"--output={n}={tmp_path / (n + '.art.npy')}" for n in names)]
    code, stdout, err = physlayout(*argv, capsys=capsys)
    assert code == 0, err + stdout
    assert "check: passed" in stdout
    build_host(out)
    host = run_host(out, *inputs, *(f"--output={n}={n}.c.npy" for n in names))
    assert host.returncode == 0, host.stderr
    assert "device time" in host.stdout
    for name in names:
        artifact = np.load(tmp_path / f"{name}.art.npy")
        c_host = np.load(out / f"{name}.c.npy")
        assert c_host.dtype == want[name].dtype and c_host.shape == want[name].shape
        np.testing.assert_array_equal(artifact, want[name])
        np.testing.assert_array_equal(c_host, want[name])


def test_random_inputs_match_between_file_and_artifact(
    runtime: OpenCLRuntime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --input both runs draw the same seeded inputs: same outputs."""
    out = compile_case(tmp_path, "demo.mlir", None, capsys)
    code, _, err = physlayout("run", str(EXAMPLES / "demo.mlir"), "--seed", "3",
                              f"--output=y={tmp_path / 'a.npy'}", capsys=capsys)  # fmt: skip
    assert code == 0, err
    code, _, err = physlayout("run", str(out), "--seed", "3", f"--output=y={tmp_path / 'b.npy'}",
                              capsys=capsys)  # fmt: skip
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))


@pytest.mark.parametrize("text", [PADDED_IN, TEXTURE_C5], ids=["padded-global-scalar-i32", "texture-c5"])
def test_boundary_kernels_with_padding_scalars_and_integers(
    runtime: OpenCLRuntime, gcc: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    source = tmp_path / "source.mlir"
    source.write_text(text)
    out = compile_case(tmp_path, str(source), None, capsys)
    inputs = write_inputs(out, 11)
    names = outputs_of(out)
    want = _run_file(str(source), None, inputs, names, tmp_path, capsys)
    code, stdout, err = physlayout("run", str(out), "--check", *inputs, capsys=capsys)
    assert code == 0 and "check: passed" in stdout, err + stdout
    build_host(out)
    host = run_host(out, *inputs, *(f"--output={n}={n}.c.npy" for n in names))
    assert host.returncode == 0, host.stderr
    for name in names:
        np.testing.assert_array_equal(np.load(out / f"{name}.c.npy"), want[name])


def test_physical_io_artifact(
    runtime: OpenCLRuntime, gcc: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--physical-io: no boundary kernels; the caller gives %f as OIHW4o [4, 16, 3, 3, 4]
    and gets %y as the NCHW4c image's [1, 4, 14, 14, 4]; both runners agree with the logical
    artifact mapped by the layouts."""
    from physlayout.dialects.buffer_layout import PendingLayout
    from physlayout.runtime.opencl import parse_module

    out = compile_case(tmp_path, "demo.mlir", None, capsys, "--physical-io")
    plan = json.loads((out / "plan.json").read_text())
    assert plan["io_layout"] == "physical"
    assert not any(k.startswith("physlayout_") for k in plan["kernels"])
    shapes = {p["name"]: (p["layout"], p["shape"]) for p in [*plan["inputs"], *plan["outputs"]]}
    assert shapes == {
        "x": ("logical", [1, 16, 16, 16]),
        "f": ("physical", [4, 16, 3, 3, 4]),
        "y": ("physical", [1, 4, 14, 14, 4]),
    }
    module = parse_module((EXAMPLES / "demo.mlir").read_text())
    main = next(op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main")
    f_layout = PendingLayout.of(main.function_type.inputs.data[1])
    y_layout = PendingLayout.of(main.function_type.inputs.data[2])
    assert f_layout is not None and y_layout is not None
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, (1, 16, 16, 16)).astype(np.float32)
    f = rng.uniform(-1, 1, (16, 16, 3, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    np.save(tmp_path / "fp.npy", f_layout.map_ndarray(f))
    want = _run_file(str(EXAMPLES / "demo.mlir"), None, [f"--input=x={tmp_path / 'x.npy'}",
                     f"--input=f={tmp_path / 'f.npy'}"], ["y"], tmp_path, capsys)["y"]  # fmt: skip
    inputs = [f"--input=x={tmp_path / 'x.npy'}", f"--input=f={tmp_path / 'fp.npy'}"]
    code, stdout, err = physlayout("run", str(out), "--check", *inputs,
                                   f"--output=y={tmp_path / 'y.art.npy'}", capsys=capsys)  # fmt: skip
    assert code == 0 and "check: passed" in stdout, err + stdout
    physical = np.load(tmp_path / "y.art.npy")
    assert physical.shape == (1, 4, 14, 14, 4)
    np.testing.assert_array_equal(y_layout.unmap_ndarray(physical), want)
    build_host(out)
    host = run_host(out, *inputs, "--output=y=y.c.npy")
    assert host.returncode == 0, host.stderr
    np.testing.assert_array_equal(np.load(out / "y.c.npy"), physical)


# Bad artifacts: Python side -------------------------------------------------------------------


@pytest.fixture
def demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    return compile_case(tmp_path, "demo.mlir", None, capsys)


def _edit_plan(out: Path, edit: Any) -> None:
    plan = json.loads((out / "plan.json").read_text())
    edit(plan)
    (out / "plan.json").write_text(json.dumps(plan))


def test_python_refuses_another_schema_version(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit_plan(demo, lambda p: p.update(version=2))
    code, _, err = physlayout("run", str(demo), capsys=capsys)
    assert code == 1
    assert "plan schema version 2, but this physlayout reads version 1" in err
    assert "Traceback" not in err


def test_python_refuses_a_missing_kernel(
    runtime: OpenCLRuntime, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernels = demo / "kernels.cl"
    kernels.write_text(kernels.read_text().replace("__kernel void relu(", "__kernel void relu_gone("))
    code, _, err = physlayout("run", str(demo), capsys=capsys)
    assert code == 1
    assert "error: kernels.cl has no kernel 'relu', which the plan launches" in err


def test_python_refuses_kernels_of_another_artifact(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kernels = demo / "kernels.cl"
    kernels.write_text(kernels.read_text().replace("(plan schema 1)", "(plan schema 2)", 1))
    code, _, err = physlayout("run", str(demo), capsys=capsys)
    assert code == 1
    assert "kernels.cl belongs to another artifact" in err


def test_python_refuses_a_device_without_a_required_extension(
    runtime: OpenCLRuntime, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit_plan(demo, lambda p: p["requirements"]["extensions"].append("cl_physlayout_missing"))
    code, _, err = physlayout("run", str(demo), capsys=capsys)
    assert code == 1
    assert "lacks the OpenCL extension cl_physlayout_missing, which the plan's kernels need" in err


def test_python_refuses_images_larger_than_the_device_allows(
    runtime: OpenCLRuntime, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit_plan(demo, lambda p: p["requirements"].update(max_image_width=10**6))
    code, _, err = physlayout("run", str(demo), capsys=capsys)
    assert code == 1
    assert "the plan uses images up to 1000000 x 64 texels; device" in err


def test_python_refuses_inputs_of_the_wrong_shape_or_dtype(
    runtime: OpenCLRuntime, demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.save(tmp_path / "short.npy", np.zeros((1, 16, 16), np.float32))
    code, _, err = physlayout("run", str(demo), f"--input=x={tmp_path / 'short.npy'}", capsys=capsys)
    assert code == 1
    assert "has shape [1, 16, 16], expected [1, 16, 16, 16] (logical layout)" in err
    np.save(tmp_path / "complex.npy", np.zeros((1, 16, 16, 16), np.complex64))
    code, _, err = physlayout("run", str(demo), f"--input=x={tmp_path / 'complex.npy'}", capsys=capsys)
    assert code == 1
    assert "holds complex64 values, which do not convert to float32" in err
    code, _, err = physlayout("run", str(demo), f"--input=y={tmp_path / 'short.npy'}", capsys=capsys)
    assert code == 1
    assert "%y is an output of the plan" in err


def test_python_refuses_a_directory_that_is_not_an_artifact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = physlayout("run", str(tmp_path), capsys=capsys)
    assert code == 1
    assert "is not a physlayout artifact: it has no plan.json" in err


def test_host_c_generation_refuses_another_schema_version(demo: Path) -> None:
    from physlayout.runtime.plan import PlanError
    from physlayout.runtime.plan_json import plan_from_json

    plan = json.loads((demo / "plan.json").read_text())
    plan["version"] = 2
    with pytest.raises(PlanError, match="plan schema version 2"):
        plan_from_json(plan)


# Bad artifacts: C side ------------------------------------------------------------------------


def test_c_host_errors(
    runtime: OpenCLRuntime, gcc: None, demo: Path, tmp_path: Path
) -> None:
    """Missing input, wrong shape, dtype and order, an unknown parameter, a kernels.cl of
    another artifact, a missing kernel: one clear line each, exit status 1."""
    build_host(demo)
    x = np.zeros((1, 16, 16, 16), np.float32)
    f = np.zeros((16, 16, 3, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "f.npy", f)
    good = [f"--input=x={tmp_path / 'x.npy'}", f"--input=f={tmp_path / 'f.npy'}"]

    def error(*args: str) -> str:
        result = run_host(demo, *args)
        assert result.returncode == 1, result.stdout
        return result.stderr

    assert "missing --input f=FILE.npy (float32 [16, 16, 3, 3], logical layout)" in error(good[0])
    np.save(tmp_path / "bad_shape.npy", np.zeros((16, 16, 3), np.float32))
    assert (
        "--input f: " + str(tmp_path / "bad_shape.npy") + " has shape [16, 16, 3], expected [16, 16, 3, 3]"
        in error(good[0], f"--input=f={tmp_path / 'bad_shape.npy'}")
    )
    np.save(tmp_path / "f64.npy", f.astype(np.float64))
    assert "holds float64 values (descr '<f8'), expected float32 (descr '<f4')" in error(
        good[0], f"--input=f={tmp_path / 'f64.npy'}"
    )
    np.save(tmp_path / "fortran.npy", np.asfortranarray(f))
    assert "is in Fortran order" in error(good[0], f"--input=f={tmp_path / 'fortran.npy'}")
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    assert "is not a .npy file" in error(good[0], f"--input=f={tmp_path / 'junk.npy'}")
    assert "--input: no parameter 'z'" in error(*good, "--input=z=1")
    assert "--output x: x is an input of the plan" in error(*good, "--output=x=x.npy")
    ok = run_host(demo, *good)
    assert ok.returncode == 0, ok.stderr
    assert "wrote y.npy: %y float32 [1, 14, 14, 16] (logical layout)" in ok.stdout
    np.testing.assert_array_equal(np.load(demo / "y.npy"), np.zeros((1, 14, 14, 16), np.float32))

    kernels = demo / "kernels.cl"
    original = kernels.read_text()
    kernels.write_text(original.replace("(plan schema 1)", "(plan schema 2)", 1))
    assert "kernels.cl belongs to another artifact" in error(*good)
    kernels.write_text(original.replace("__kernel void conv2d(", "__kernel void conv2d_gone("))
    assert "kernels.cl has no kernel 'conv2d', which the plan launches" in error(*good)
    kernels.write_text(original.replace("__kernel void conv2d(", "__kernel void conv2d(undeclared_t q, "))
    message = error(*good)
    assert "build log of kernels.cl" in message
    assert "clBuildProgram (kernels.cl) failed: CL_BUILD_PROGRAM_FAILURE (-11)" in message


def test_c_host_refuses_a_device_without_a_required_extension(
    runtime: OpenCLRuntime, gcc: None, demo: Path, tmp_path: Path
) -> None:
    import dataclasses

    from physlayout.runtime.host_c import host_c
    from physlayout.runtime.plan_json import plan_from_json

    plan = plan_from_json(json.loads((demo / "plan.json").read_text()))
    requirements = dataclasses.replace(plan.requirements, extensions=("cl_physlayout_missing",))
    plan = dataclasses.replace(plan, requirements=requirements)
    (demo / "host.c").write_text(host_c(plan, plan.artifact_id))
    build_host(demo)
    result = run_host(demo)
    assert result.returncode == 1
    assert "host: error: missing --input x" in result.stderr
    np.save(tmp_path / "x.npy", np.zeros((1, 16, 16, 16), np.float32))
    np.save(tmp_path / "f.npy", np.zeros((16, 16, 3, 3), np.float32))
    result = run_host(demo, f"--input=x={tmp_path / 'x.npy'}", f"--input=f={tmp_path / 'f.npy'}")
    assert result.returncode == 1
    assert (
        "lacks the OpenCL extension cl_physlayout_missing, which the plan's kernels need"
        in result.stderr
    )


# Boundary kernels on edge shapes ----------------------------------------------------------------


def _copy_module(shape: tuple[int, ...], layout: str, into: bool) -> str:
    """@copy(%x, %y): y = x, the parameter `%x` (into=False: `%y`) in `layout`."""
    dims = "x".join(map(str, shape))
    plain = f"!layout.buffer<{dims}xf32>"
    laid = f"!layout.buffer<{dims}xf32, {layout}>"
    x_type, y_type = (laid, plain) if not into else (plain, laid)
    idx = [f"%i{k}" for k in range(len(shape))]
    lines = [f"func.func @copy(%x: {x_type}, %y: {y_type}) {{",
             "  %c0 = arith.constant 0 : index", "  %c1 = arith.constant 1 : index"]  # fmt: skip
    for k, extent in enumerate(shape):
        lines.append(f"  %n{k} = arith.constant {extent} : index")
    for k in range(len(shape)):
        lines.append("  " * (k + 1) + f"scf.for %i{k} = %c0 to %n{k} step %c1 {{")
    pad = "  " * (len(shape) + 1)
    lines.append(f"{pad}%v = layout.load %x[{', '.join(idx)}] : {x_type}, f32")
    lines.append(f"{pad}layout.store %v, %y[{', '.join(idx)}] : {y_type}, f32")
    for k in reversed(range(len(shape))):
        lines.append("  " * (k + 1) + "}")
    lines += ["  func.return", "}"]
    return "\n".join(lines) + "\n"


EDGE_LAYOUTS = [
    ((13,), "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 7.0 : f32"),
    ((1,), "transform = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>, pad_value = 0.0 : f32"),
    ((7, 3), "transform = #layout.index_map<(i, j) -> (j, i)>"),
    ((1, 5, 7, 3), "transform = #layout.index_map<(n, h, w, c) -> (n, c floordiv 4, h, w, c mod 4)>, pad_value = 0.0 : f32"),
    ((2, 3, 1, 5), NCHW4C),
]


@pytest.mark.parametrize(("shape", "layout"), EDGE_LAYOUTS, ids=lambda x: str(x)[:40])
@pytest.mark.parametrize("into", [False, True], ids=["in", "out"])
def test_boundary_kernels_on_edge_shapes(
    runtime: OpenCLRuntime,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    shape: tuple[int, ...],
    layout: str,
    into: bool,
) -> None:
    """Extents of 1, primes, 3 and 5 channels, padding, a transpose, a texture: the logical
    artifact's boundary kernels give back exactly the logical input."""
    source = tmp_path / "copy.mlir"
    source.write_text(_copy_module(shape, layout, into))
    out = compile_case(tmp_path, str(source), None, capsys)
    x = np.random.default_rng(2).uniform(-1, 1, shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    code, stdout, err = physlayout("run", str(out), "--check", f"--input=x={tmp_path / 'x.npy'}",
                                   f"--output=y={tmp_path / 'y.npy'}", capsys=capsys)  # fmt: skip
    assert code == 0 and "check: passed" in stdout, err + stdout
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x)


def test_fp16_artifact_requires_cl_khr_fp16(
    runtime: OpenCLRuntime, gcc: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Compiled for a target with cl_khr_fp16 (`--fp16`), an f16 texture program requires
    the extension: HALF_FLOAT images in plan.json, cl_khr_fp16 in its requirements; a device
    without it is refused by both runners."""
    fp16 = ROOT / "test" / "opencl" / "target-fp16.mlir"
    out = compile_case(tmp_path, str(fp16), "relu_half", capsys, "--fp16")
    plan = json.loads((out / "plan.json").read_text())
    assert plan["requirements"]["extensions"] == ["cl_khr_fp16"]
    images = [s["image"]["channel_type"] for s in plan["storages"] if s["kind"] == "image"]
    assert images and set(images) == {"CL_HALF_FLOAT"}
    assert {p["dtype"] for p in plan["inputs"]} == {"float16"}
    if runtime.limits.fp16:
        pytest.skip("the device has cl_khr_fp16")
    code, _, err = physlayout("run", str(out), capsys=capsys)
    assert code == 1
    assert "lacks the OpenCL extension cl_khr_fp16, which the plan's kernels need" in err
    build_host(out)
    args = write_inputs(out, 3)
    result = run_host(out, *args)
    assert result.returncode == 1
    assert "lacks the OpenCL extension cl_khr_fp16" in result.stderr


def test_compile_without_fp16_stores_half(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --fp16, f16 is storage only (vload_half/vstore_half_rte, read_imagef of
    HALF_FLOAT images): the artifact needs no extension and runs on any device."""
    fp16 = ROOT / "test" / "opencl" / "target-fp16.mlir"
    code, _, _ = physlayout("compile", str(fp16), "--entry", "relu_half", "-o",
                            str(tmp_path / "out"), capsys=capsys)  # fmt: skip
    assert code == 0
    plan = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert "cl_khr_fp16" not in json.dumps(plan["requirements"])
    kernels = (tmp_path / "out" / "kernels.cl").read_text()
    assert "cl_khr_fp16" not in kernels
    assert "vstore_half_rte" in kernels and "read_imagef" in kernels


def test_run_artifact_refuses_compile_options(
    demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An artifact runs as compiled: options that would change the compile are refused."""
    code, _, err = physlayout("run", str(demo), "--pipeline", "physlayout-adreno{fuse=true}",
                              capsys=capsys)  # fmt: skip
    assert code == 1
    assert "runs as compiled" in err


# Models (torch-mlir graphs, examples/models/) -------------------------------------------------

MODELS = ROOT / "examples" / "models"


def _model_inputs(name: str, out: Path) -> list[str]:
    """The model's inputs (examples/models/inputs.py, seed 0) as .npy files in `out`."""
    arrays = model_inputs(name)
    args: list[str] = []
    for key, array in arrays.items():
        np.save(out / f"in_{key}.npy", array)
        args.append(f"--input={key}=in_{key}.npy")
    return args


@pytest.mark.parametrize("name", ["bottleneck", "transformer_encoder_layer"])
def test_models_through_the_c_host(
    runtime: OpenCLRuntime, gcc: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """A torch-mlir model compiled once: the C host's output equals `physlayout run OUT/`'s
    bit for bit and PyTorch's within 1e-5 of max|result0|."""
    if not (MODELS / f"{name}.mlir").exists():
        pytest.skip(f"examples/models/{name}.mlir is not in this checkout")
    out = compile_case(tmp_path, str(MODELS / f"{name}.mlir"), None, capsys)
    jsonschema = pytest.importorskip("jsonschema")
    plan = json.loads((out / "plan.json").read_text())
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(plan)
    inputs = _model_inputs(name, out)
    expected = np.load(MODELS / f"{name}.expected.npz")["result0"]
    python_inputs = [a.replace("=in_", f"={out}/in_") for a in inputs]
    code, stdout, err = physlayout("run", str(out), *python_inputs,
                                   f"--output=result0={tmp_path / 'py.npy'}", capsys=capsys)  # fmt: skip
    assert code == 0, err + stdout
    build_host(out)
    host = run_host(out, *inputs, "--output=result0=c.npy")
    assert host.returncode == 0, host.stderr
    got = np.load(out / "c.npy")
    np.testing.assert_array_equal(got, np.load(tmp_path / "py.npy"))
    assert float(np.abs(got - expected).max()) <= 1e-5 * float(np.abs(expected).max())


def test_failed_layout_check_in_both_runners(
    runtime: OpenCLRuntime, gcc: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bottleneck's outlined `cf.assert` (a `layout.check` step in the plan) fails on
    random batch-norm statistics: both runners stop with the program's message."""
    if not (MODELS / "bottleneck.mlir").exists():
        pytest.skip("examples/models/bottleneck.mlir is not in this checkout")
    out = compile_case(tmp_path, str(MODELS / "bottleneck.mlir"), None, capsys)
    plan = json.loads((out / "plan.json").read_text())
    # prepared by default: torch-mlir's asserts on the statistics run once, before the body
    checks = [s for s in plan["prepare"] if s["op"] == "check"]
    assert checks and all(s["message"] == "unimplemented: tensor with zero element" for s in checks)
    inputs = write_inputs(out, 0)
    code, _, err = physlayout("run", str(out), *inputs, capsys=capsys)
    assert code == 1
    assert "assertion failed: unimplemented: tensor with zero element" in err
    build_host(out)
    host = run_host(out, *inputs)
    assert host.returncode == 1
    assert "host: error: assertion failed: unimplemented: tensor with zero element (" in host.stderr
