"""The C host of an artifact (`runtime/host_main.c` with the plan's tables of
`runtime/host_c.py`) on the bottleneck model, compiled with its parameters prepared (the
default): the prepare steps run once per process, `--repeat`/`--warmup` time the body and
leave its results unchanged, `--inputs FILE.npz` reads the archive np.savez writes, and a
host whose tables were broken by hand stops with the plan step it cannot run (exit status
1, never a crash).

Skipped where the C host cannot be built or run, as test_deploy.py's C host tests are.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from model_files import model_inputs
from test_deploy import PADDED_IN, build_host, find_opencl_loader, host_environment, run_host

from physlayout.runtime.device import OpenCLRuntime

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "examples" / "models"


def physlayout(*argv: str) -> tuple[int, str, str]:
    """The `physlayout` command in this process: (exit status, stdout, stderr)."""
    from physlayout.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
            code = 0
        except SystemExit as done:
            code = int(done.code or 0)
    return code, out.getvalue(), err.getvalue()


class Bottleneck:
    """The compiled bottleneck (`out`), its host built, its inputs as inputs.npz and as
    in_NAME.npy files, and the launch counts `physlayout compile` reported."""

    def __init__(self, out: Path, report: str) -> None:
        self.out = out
        found = re.search(r"(\d+) launch\(es\) per run after (\d+) prepare launch\(es\)", report)
        assert found, report
        self.launches, self.prepare_launches = int(found[1]), int(found[2])
        self.inputs = model_inputs("bottleneck")
        np.savez(out / "inputs.npz", **self.inputs)  # pyright: ignore[reportArgumentType]
        for name, array in self.inputs.items():
            np.save(out / f"in_{name}.npy", array)

    def npy_args(self) -> list[str]:
        return [f"--input={name}=in_{name}.npy" for name in self.inputs]

    def copy(self, into: Path) -> Path:
        """A copy of the artifact in `into` (to edit its host.c)."""
        shutil.copytree(self.out, into)
        return into


def require_c_host() -> None:
    """Skip (fail under PHYSLAYOUT_REQUIRE_TOOLS=1) where the C host cannot be built or run."""
    problem = host_environment()[1]
    if problem is None:
        return
    if os.environ.get("PHYSLAYOUT_REQUIRE_TOOLS") == "1":
        pytest.fail(f"PHYSLAYOUT_REQUIRE_TOOLS=1 but the C host cannot run: {problem}")
    pytest.skip(f"cannot build or run the C host: {problem}")


@pytest.fixture(scope="module")
def bottleneck(runtime: OpenCLRuntime, tmp_path_factory: pytest.TempPathFactory) -> Bottleneck:
    require_c_host()
    out = tmp_path_factory.mktemp("c_host") / "bottleneck"
    code, report, err = physlayout("compile", str(MODELS / "bottleneck.mlir"), "-o", str(out))
    assert code == 0, err
    model = Bottleneck(out, report)
    build_host(out)
    return model


def ok(result: Any) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def refused(result: Any) -> str:
    """The message of a run that must stop cleanly: exit status 1 (a crash is negative)."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    return result.stderr


# Prepare once, repeat -------------------------------------------------------------------


def test_repeat_prepares_once_and_keeps_the_outputs(bottleneck: Bottleneck) -> None:
    """The prepare launches run (and are listed) once, the body's once plus the repeats;
    the counts are compile's; the outputs after 3 repeats equal a single run's and the
    Python runner's bit for bit."""
    out = bottleneck.out
    once = ok(run_host(out, "--inputs", "inputs.npz", "--output=result0=once.npy"))
    assert "repeat:" not in once
    text = ok(run_host(out, "--inputs=inputs.npz", "--repeat", "3", "--warmup=1",
                       "--output=result0=repeat.npy"))  # fmt: skip
    for stdout in (once, text):
        assert stdout.count("@main_prepare: ") == 1 and stdout.count("@main: ") == 1
        assert f"@main_prepare: {bottleneck.prepare_launches} launch(es), " in stdout
        assert f"@main: {bottleneck.launches} launch(es), " in stdout
        listed = [line for line in stdout.splitlines() if line.startswith("  ")]
        assert len(listed) == bottleneck.prepare_launches + bottleneck.launches
    line = re.search(
        r"^repeat: 3 run\(s\) after 1 warm-up: median wall (\d+\.\d{3}) ms, median device "
        r"(\d+\.\d{3}) ms per inference \((\d+) launch\(es\), -?\d+ us per launch outside the "
        r"kernels, of which (\d+\.\d) us enqueueing\)$", text, re.MULTILINE,
    )  # fmt: skip
    assert line, text
    assert int(line[3]) == bottleneck.launches and float(line[1]) > 0 and float(line[2]) > 0
    # the host's own share of a run is part of its wall time
    assert 0 < float(line[4]) * int(line[3]) <= float(line[1]) * 1e3
    code, stdout, err = physlayout("run", str(out), "--inputs", str(out / "inputs.npz"),
                                   f"--output=result0={out / 'python.npy'}")  # fmt: skip
    assert code == 0, err + stdout
    python = np.load(out / "python.npy")
    np.testing.assert_array_equal(np.load(out / "once.npy"), python)
    np.testing.assert_array_equal(np.load(out / "repeat.npy"), python)


def test_textures_as_buffers_give_the_images_values(
    bottleneck: Bottleneck, tmp_path: Path
) -> None:
    """`compile --texture-storage buffer`: the plan holds no image, the C host runs it and
    gives bit for bit what the image artifact gives."""
    out = tmp_path / "buffers"
    code, _, err = physlayout(
        "compile", str(MODELS / "bottleneck.mlir"), "-o", str(out), "--texture-storage", "buffer"
    )
    assert code == 0, err
    plan = json.loads((out / "plan.json").read_text())
    kinds = {s["kind"] for s in plan["storages"]}
    assert kinds == {"buffer"}, kinds
    build_host(out)
    shutil.copy(bottleneck.out / "inputs.npz", out / "inputs.npz")
    ok(run_host(out, "--inputs", "inputs.npz", "--output=result0=buffers.npy"))
    ok(run_host(bottleneck.out, "--inputs", "inputs.npz", "--output=result0=images.npy"))
    np.testing.assert_array_equal(
        np.load(out / "buffers.npy"), np.load(bottleneck.out / "images.npy")
    )


def test_repeat_counts_are_checked(bottleneck: Bottleneck) -> None:
    assert "--repeat expects a count from 0 to 1000000, got '-1'" in refused(
        run_host(bottleneck.out, "--inputs", "inputs.npz", "--repeat", "-1")
    )


# --inputs FILE.npz ------------------------------------------------------------------------


def test_npz_inputs_equal_npy_inputs(bottleneck: Bottleneck) -> None:
    """The same arrays as .npy files, as an .npz, as an .npz of PyTorch's state_dict names
    (`conv1.weight`), and as an .npz whose %x an --input overrides: the same output."""
    out, inputs = bottleneck.out, bottleneck.inputs
    ok(run_host(out, *bottleneck.npy_args(), "--output=result0=npy.npy"))
    want = np.load(out / "npy.npy")
    ok(run_host(out, "--inputs", "inputs.npz", "--output=result0=npz.npy"))
    np.testing.assert_array_equal(np.load(out / "npz.npy"), want)
    dotted = {re.sub(r"^(conv\d|bn\d)_", r"\1.", k): v for k, v in inputs.items()}
    assert "conv1.weight" in dotted
    np.savez(out / "dotted.npz", **dotted)  # pyright: ignore[reportArgumentType]
    ok(run_host(out, "--inputs", "dotted.npz", "--output=result0=dotted.npy"))
    np.testing.assert_array_equal(np.load(out / "dotted.npy"), want)
    np.savez(out / "zero_x.npz", **{**inputs, "x": np.zeros_like(inputs["x"])})  # pyright: ignore[reportArgumentType]
    ok(run_host(out, "--inputs", "zero_x.npz", "--input=x=in_x.npy", "--output=result0=over.npy"))
    np.testing.assert_array_equal(np.load(out / "over.npy"), want)


def test_npz_with_zip64_records(bottleneck: Bottleneck, monkeypatch: pytest.MonkeyPatch) -> None:
    """An archive whose central directory holds every size and offset in zip64 extra fields
    and whose end record defers to the zip64 end record (as archives over 4 GiB have them):
    the same output."""
    import struct
    import zipfile

    out = bottleneck.out
    ok(run_host(out, "--inputs", "inputs.npz", "--output=result0=npz.npy"))
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 16)
    np.savez(out / "zip64.npz", **bottleneck.inputs)  # pyright: ignore[reportArgumentType]
    monkeypatch.undo()
    data = bytearray((out / "zip64.npz").read_bytes())
    end = data.rfind(b"PK\x05\x06")
    assert data.rfind(b"PK\x06\x06") >= 0 and end > 0
    data[end + 8 : end + 20] = struct.pack("<HHII", 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    (out / "zip64.npz").write_bytes(bytes(data))
    ok(run_host(out, "--inputs", "zip64.npz", "--output=result0=zip64.npy"))
    np.testing.assert_array_equal(np.load(out / "zip64.npy"), np.load(out / "npz.npy"))


def test_npz_members_are_checked(bottleneck: Bottleneck) -> None:
    """A compressed member, a member that names no parameter, a missing one, one of the
    wrong shape, a file that is no zip archive: one clear line each."""
    out, inputs = bottleneck.out, bottleneck.inputs
    np.savez_compressed(out / "compressed.npz", **inputs)  # pyright: ignore[reportArgumentType]
    assert (
        "--inputs: compressed.npz: member 'x.npy' is compressed (zip method 8, deflate: "
        "np.savez_compressed); this host reads only stored members"
    ) in refused(run_host(out, "--inputs", "compressed.npz"))
    np.savez(out / "extra.npz", **inputs, bogus=np.zeros(3, np.float32))  # pyright: ignore[reportArgumentType]
    assert (
        "--inputs: extra.npz holds 'bogus.npy', which names no parameter of @main (parameters: "
        "x, conv1_weight, bn1_weight,"
    ) in refused(run_host(out, "--inputs", "extra.npz"))
    np.savez(out / "short.npz", **{k: v for k, v in inputs.items() if k != "bn2_bias"})  # pyright: ignore[reportArgumentType]
    assert (
        "missing --input bn2_bias=FILE.npy (float32 [16], logical layout): the --inputs archive "
        "has no member for it"
    ) in refused(run_host(out, "--inputs", "short.npz"))
    np.savez(out / "shape.npz", **{**inputs, "bn1_bias": np.zeros(15, np.float32)})  # pyright: ignore[reportArgumentType]
    assert (
        "--inputs: shape.npz member 'bn1_bias.npy' has shape [15], expected [16] (logical layout)"
    ) in refused(run_host(out, "--inputs", "shape.npz"))
    assert "--inputs: in_x.npy is not a .npz (zip) archive" in refused(
        run_host(out, "--inputs", "in_x.npy")
    )


# Broken hosts stop at the step they cannot run ---------------------------------------------


def _rows(text: str, array: str) -> tuple[int, int]:
    """The line range [first, end) of the rows of C array `array` in host.c's lines."""
    lines = text.split("\n")
    first = lines.index(next(line for line in lines if f" {array}[] = {{" in line)) + 1
    return first, lines.index("};", first)


def _edit_rows(text: str, array: str, edit: Callable[[list[str]], list[str]]) -> str:
    lines = text.split("\n")
    first, end = _rows(text, array)
    lines[first:end] = edit(lines[first:end])
    return "\n".join(lines)


def _launch(plan: dict[str, Any], kernel: str) -> tuple[int, int]:
    """(index in plan["steps"], index of its first argument in ARGS) of `kernel`'s launch."""
    first = sum(len(s["args"]) for s in plan["prepare"] if s["op"] == "launch")
    for index, step in enumerate(plan["steps"]):
        if step["op"] == "launch" and step["kernel"] == kernel:
            return index, first
        first += len(step.get("args", [])) if step["op"] == "launch" else 0
    raise AssertionError(f"no launch of {kernel}")


def _prepare_after_body(text: str, plan: dict[str, Any]) -> str:
    n = len(plan["prepare"])
    return _edit_rows(text, "STEPS", lambda rows: rows[n:] + rows[:n])


def _swap_image_and_buffer(text: str, plan: dict[str, Any]) -> str:
    _, first = _launch(plan, "main_fused_padded")
    return _edit_rows(text, "ARGS", lambda r: [*r[:first], r[first + 1], r[first], *r[first + 2:]])


def _drop_an_argument(text: str, plan: dict[str, Any]) -> str:
    del plan
    return re.sub(r'("main_fused_padded", \d+, )4,', r"\g<1>3,", text)


def _shrink_x(text: str, plan: dict[str, Any]) -> str:
    del plan
    return text.replace('{"x", KIND_BUFFER, DT_F32, 4096u, 16384u,', '{"x", KIND_BUFFER, DT_F32, 2048u, 8192u,')


BROKEN = {
    "prepare-after-body": (
        _prepare_after_body,
        r"plan step steps\[\d+\] \(launch of kernel main_fused_padded, phase body\): argument 1 is "
        r"storage \d+ \(result0\.prepared\), which is used before its allocate step",
    ),
    "swapped-arguments": (
        _swap_image_and_buffer,
        r"plan step steps\[\d+\] \(launch of kernel main_fused_padded, phase body\): argument 0 of "
        r"the kernel has type 'image2d_t', but the plan binds storage \d+ \(result0\.prepared\), a "
        r"buffer, to it",
    ),
    "argument-missing": (
        _drop_an_argument,
        r"plan step steps\[\d+\] \(launch of kernel main_fused_padded, phase body\): kernel "
        r"main_fused_padded takes 4 argument\(s\), the plan binds 3",
    ),
    "storage-too-small": (
        _shrink_x,
        r"plan step steps\[\d+\] \(write of storage \d+ \(x\), phase input\): %x is float32 data of "
        r"16384 bytes, but its storage holds 8192 bytes of float32",
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_host_stops_at_the_step(bottleneck: Bottleneck, tmp_path: Path, case: str) -> None:
    """host.c's tables edited as a stale or hand-edited host would be: the host refuses the
    plan before running anything, naming the step (its place in plan.json, what it does)."""
    edit, message = BROKEN[case]
    out = bottleneck.copy(tmp_path / case)
    plan = json.loads((out / "plan.json").read_text())
    original = (out / "host.c").read_text()
    edited = edit(original, plan)
    assert edited != original
    (out / "host.c").write_text(edited)
    build_host(out)
    error = refused(run_host(out, "--inputs", "inputs.npz"))
    assert re.search("^host: error: " + message + "$", error, re.MULTILINE), error


def test_scalar_argument_of_the_wrong_size(runtime: OpenCLRuntime, tmp_path: Path) -> None:
    """A scalar bound as a double to a kernel's float argument: refused by its size."""
    require_c_host()
    source = tmp_path / "axpy.mlir"
    source.write_text(PADDED_IN)
    out = tmp_path / "axpy"
    code, _, err = physlayout("compile", str(source), "-o", str(out))
    assert code == 0, err
    text = (out / "host.c").read_text()
    scalar = "{ARG_INPUT, -1, DT_F32, 0, NULL},"  # %a, the f32 scalar
    assert scalar in text
    (out / "host.c").write_text(text.replace(scalar, "{ARG_INPUT, -1, DT_F64, 0, NULL},", 1))
    build_host(out)
    for name, shape, dtype in (("x", (10,), np.float32), ("y", (10,), np.float32), ("k", (3,), np.int32)):
        np.save(out / f"{name}.npy", np.ones(shape, dtype))
    error = refused(run_host(out, "--input=a=1.5", "--input=x=x.npy", "--input=y=y.npy", "--input=k=k.npy"))
    assert re.search(
        r"plan step steps\[\d+\] \(launch of kernel \w+, phase body\): argument \d+ of the kernel "
        r"has type 'float' \(4 bytes\), but the plan binds a float64 value \(8 bytes\) to it", error
    ), error


# Where the C host runs ----------------------------------------------------------------------


def test_a_loader_without_platforms_is_a_reason_to_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system ICD loader that finds no platform (no vendor .icd) is reported as such, the
    reason the C host tests skip; pip's PoCL, where found, is what they run on instead."""
    from conftest import c_host_toolchain_problem

    problem = c_host_toolchain_problem()
    if problem is not None:
        pytest.skip(f"cannot build an OpenCL program: {problem}")
    (tmp_path / "no-vendors").mkdir()
    monkeypatch.setenv("OCL_ICD_VENDORS", str(tmp_path / "no-vendors"))
    env, why = find_opencl_loader([{}])
    if why is None:  # seen with the CUDA toolkit's libOpenCL, which reads /etc/OpenCL/vendors
        pytest.skip("this system's ICD loader ignores $OCL_ICD_VENDORS: an empty vendor folder "
                    "cannot hide its platforms")  # fmt: skip
    assert env == {}
    assert "OpenCL ICD loader (libOpenCL) finds no platform" in why
