"""`physlayout run` guesses no values: a graph-level model run without some of its arguments
is refused with their names (seeded random values only with `--random-inputs`, or for
`--check`, which compares with the evaluator on the same values, and then says so); an .npz
may name the arguments as PyTorch's state_dict does (`conv1.weight` for `%conv1_weight`),
and a name that matches nothing gets a did-you-mean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physlayout.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "models" / "bottleneck.mlir"
ADD = """func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tensor.empty() : tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %w : tensor<4xf32>, tensor<4xf32>) outs(%0 : tensor<4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.addf %in, %in_0 : f32
    linalg.yield %2 : f32
  } -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def _run(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(["run", *argv])
        code = 0
    except SystemExit as done:
        code = int(done.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_missing_arguments_are_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "add.mlir"
    source.write_text(ADD)
    np.save(tmp_path / "x.npy", np.ones(4, np.float32))
    code, out, err = _run(str(source), "--input", f"x={tmp_path / 'x.npy'}", capsys=capsys)
    assert code == 1 and out == ""
    assert "error: @main: no value for the arguments %w: give them with --input" in err


def test_a_wrong_npz_name_gets_a_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    np.savez(tmp_path / "in.npz", x=np.ones(4, np.float32), ww=np.ones(4, np.float32))
    source = tmp_path / "add.mlir"
    source.write_text(ADD)
    code, _, err = _run(str(source), "--inputs", str(tmp_path / "in.npz"), capsys=capsys)
    assert code == 1
    assert "holds ['ww'], which name no parameter or result; did you mean w for ww?" in err


@pytest.fixture
def device() -> None:
    try:
        from physlayout.runtime.device import OpenCLRuntime

        OpenCLRuntime().build("__kernel void k(__global float *a) { a[0] = 1.0f; }")
    except Exception as err:
        pytest.skip(f"no OpenCL device: {err}")


def test_random_values_are_explicit_and_announced(
    device: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "add.mlir"
    source.write_text(ADD)
    for flag in ("--random-inputs", "--check"):
        code, out, err = _run(str(source), flag, "--seed", "3", capsys=capsys)
        assert code == 0, err
        assert "note: seeded random values (--seed 3) for %x, %w" in err
    assert "check: passed" in out


def test_pytorch_state_dict_names_are_accepted(
    device: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import runpy

    make_inputs = runpy.run_path(str(MODEL.parent / "inputs.py"))["make_inputs"]
    arrays = make_inputs(str(MODEL.with_suffix(".args.txt")), seed=0)
    torch_names = {k.replace("_", ".", 1) if k != "x" else k: v for k, v in arrays.items()}
    assert "conv1.weight" in torch_names and "bn1.running_mean" in torch_names
    np.savez(tmp_path / "torch.npz", **torch_names)
    code, out, err = _run(
        str(MODEL), "--inputs", str(tmp_path / "torch.npz"), "--expected",
        str(MODEL.with_suffix(".expected.npz")), "--rtol", "1e-4", capsys=capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "expected: passed" in out and "random" not in err


@pytest.mark.parametrize(
    ("argv", "usage", "meant"),
    [
        (["run", "x.mlir", "--chek"], "usage: physlayout run", "--check"),
        (["compile", "x.mlir", "-o", "out", "--precison", "f16"], "usage: physlayout compile",
         "--precision"),
    ],
)
def test_a_misspelt_option_gets_the_subcommands_usage(
    argv: list[str], usage: str, meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert usage in err and f"(did you mean {meant}?)" in err
