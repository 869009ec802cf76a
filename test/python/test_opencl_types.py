"""Element types on the OpenCL path are exact: `uiN` buffers are numpy's unsigned dtypes on
the host and `uchar`/... in the kernel (values 200..255 of a ui8 come back as they are, and
signed ops read them as two's complement), `index` buffer elements are 64-bit (`long`,
int64), f64 needs cl_khr_fp64 (refused before any build on a device without it), and what
the kernels cannot hold exactly (index values beyond `int`, unsigned textures, loads of
index elements) is refused with a diagnostic, never wrapped."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import DiagnosticException

from physlayout.cli import main
from physlayout.runtime.device import OpenCLRuntime, OpenCLRuntimeError
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import compile_module
from physlayout.semantics.evaluator import run_function

UNSIGNED = Path(__file__).resolve().parents[1] / "opencl/run-unsigned.mlir"

F64 = """
func.func @twice(%a: !layout.buffer<8xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = layout.load %a[%i] : !layout.buffer<8xf64>, f64
    %w = arith.addf %v, %v : f64
    layout.store %w, %a[%i] : !layout.buffer<8xf64>, f64
  }
  func.return
}
"""

IOTA = """
func.func @iota(%a: !layout.buffer<8xindex>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = arith.muli %i, %k : index
    layout.store %v, %a[%i] : !layout.buffer<8xindex>, index
  }
  func.return
}
"""


def test_ui8_values_above_127_are_exact(runtime: OpenCLRuntime) -> None:
    compiled = compile_module(UNSIGNED.read_text(), runtime)
    a = np.concatenate([np.arange(200, 256), [0, 1, 7, 127, 128, 129, 100, 50]]).astype(np.uint8)
    b = np.random.default_rng(0).integers(0, 256, 64).astype(np.uint8)
    k = 253  # -3 as a signed byte
    outputs = [np.zeros(64, t) for t in (np.float32, np.float32, np.int32, np.int32)]
    outputs += [np.zeros(64, np.uint8), np.zeros(64, np.uint8), np.zeros(64, np.int32)]
    args = [a.copy(), b.copy(), *outputs, k]
    reference = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    execute(compiled, "ops", args)
    run_function(compiled.source, "ops", reference)
    _, got_b, fu, fs, zu, zs, mx, dv, bits, _ = args
    signed_a, signed_b = a.view(np.int8).astype(np.int64), b.view(np.int8).astype(np.int64)
    lt = signed_a < signed_b
    quotient = np.trunc(signed_a / -3).astype(np.int64).astype(np.uint8)
    expected = {
        "b": (a.astype(np.int64) + k).astype(np.uint8),
        "fu": a.astype(np.float32),
        "fs": signed_a.astype(np.float32),
        "zu": a.astype(np.int32),
        "zs": signed_a.astype(np.int32),
        "mx": np.maximum(signed_a, signed_b).astype(np.uint8),
        "dv": np.where(lt, quotient, a // k),
        "bits": lt + 2 * (a < b) - lt,
    }
    for name, got in zip(expected, [got_b, fu, fs, zu, zs, mx, dv, bits], strict=True):
        np.testing.assert_array_equal(got, expected[name], err_msg=name)
    assert got_b.dtype == np.uint8 and got_b.max() > 127
    for got, want in zip(args[:-1], reference[:-1], strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


FLOOR_DIVISIONS = """
func.func @fd(%a: !layout.buffer<8xi64>, %b: !layout.buffer<8xi64>, %c: !layout.buffer<8xi64>,
              %u: !layout.buffer<8xui8>, %v: !layout.buffer<8xui8>, %k: i64, %q: ui8) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = layout.load %a[%i] : !layout.buffer<8xi64>, i64
    %f = arith.floordivsi %x, %k : i64
    layout.store %f, %b[%i] : !layout.buffer<8xi64>, i64
    %g = arith.ceildivsi %x, %k : i64
    layout.store %g, %c[%i] : !layout.buffer<8xi64>, i64
    %y = layout.load %u[%i] : !layout.buffer<8xui8>, ui8
    %h = arith.floordivsi %y, %q : ui8
    layout.store %h, %v[%i] : !layout.buffer<8xui8>, ui8
  }
  func.return
}
"""


def test_floor_divisions_of_i64_and_ui8_are_exact(runtime: OpenCLRuntime) -> None:
    """floordivsi/ceildivsi of i64 values beyond 2^31 (the `_long` helpers) and of ui8
    values read as signed bytes."""
    compiled = compile_module(FLOOR_DIVISIONS, runtime)
    a = np.array([2**40 + 3, -(2**40) - 3, 7, -7, 2**33, -1, 0, 5 * 2**35 + 1], np.int64)
    u = np.array([200, 255, 128, 127, 0, 1, 250, 3], np.uint8)
    b, c, v = np.zeros(8, np.int64), np.zeros(8, np.int64), np.zeros(8, np.uint8)
    execute(compiled, "fd", [a, b, c, u, v, -3, 253])
    np.testing.assert_array_equal(b, a // -3)
    np.testing.assert_array_equal(c, -(a // 3))
    np.testing.assert_array_equal(v, (u.view(np.int8).astype(np.int64) // -3).astype(np.uint8))


def test_unsigned_textures_are_refused(runtime: OpenCLRuntime) -> None:
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    with pytest.raises(OpenCLRuntimeError, match=r"f32 or f16 texels .* not uint8 values"):
        runtime.allocate("texture", (2, 8), np.uint8)


def test_index_elements_are_64_bit(runtime: OpenCLRuntime) -> None:
    """The kernel writes a[0..3] = i * k; a[4..7] keep their 64-bit values."""
    compiled = compile_module(IOTA, runtime)
    assert "__global long* a, int k" in compiled.program.source
    a = (np.arange(8) + 2**40).astype(np.int64)
    reference = a.copy()
    execute(compiled, "iota", [a, 5])
    run_function(compiled.source, "iota", [reference, 5])
    np.testing.assert_array_equal(a, [0, 5, 10, 15, *(np.arange(4, 8) + 2**40)])
    np.testing.assert_array_equal(a, reference)


def test_index_scalars_beyond_int_are_refused(runtime: OpenCLRuntime) -> None:
    compiled = compile_module(IOTA, runtime)
    a = np.zeros(8, np.int64)
    with pytest.raises(OpenCLRuntimeError, match=r"@iota: argument %k: 2147483648 does not fit"):
        execute(compiled, "iota", [a, 2**31])


def test_f64_runs_where_the_device_has_cl_khr_fp64(runtime: OpenCLRuntime) -> None:
    if not runtime.limits.fp64:
        pytest.skip("the device does not report cl_khr_fp64")
    compiled = compile_module(F64, runtime)
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in compiled.program.source
    a = np.linspace(-1, 1, 8) + 1e-12
    want = a * 2
    execute(compiled, "twice", [a])
    np.testing.assert_array_equal(a, want)


@pytest.fixture
def no_fp64(runtime: OpenCLRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every new OpenCLRuntime reports no cl_khr_fp64, and building a program fails the test."""
    original = OpenCLRuntime.__post_init__

    def post_init(self: OpenCLRuntime) -> None:
        original(self)
        self.limits = dataclasses.replace(self.limits, fp64=False)

    def build(self: OpenCLRuntime, source: str) -> None:
        raise AssertionError("a program was built")

    monkeypatch.setattr(OpenCLRuntime, "__post_init__", post_init)
    monkeypatch.setattr(OpenCLRuntime, "build", build)


@pytest.mark.usefixtures("no_fp64")
def test_f64_refused_without_cl_khr_fp64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(DiagnosticException, match=r"@twice: parameter %a: type f64 .*cl_khr_fp64"):
        compile_module(F64, OpenCLRuntime())
    source = tmp_path / "twice.mlir"
    source.write_text(F64)
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(source)])
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: opencl: @twice: parameter %a: type f64 needs the OpenCL "
                          "extension cl_khr_fp64"), err


def test_float_literals_are_memoized_by_exact_value() -> None:
    """`float_literal` memoizes by the value's exact text (issue 43: unrolled kernels spell
    the same constants again and again): 0.0 and -0.0 (equal as floats, and as dict keys)
    keep their own literals whichever comes first, NaN and the infinities too, in every
    type; each answer is the unmemoized spelling."""
    from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type

    from physlayout.lowering.opencl_c import _spell_float, float_literal  # pyright: ignore[reportPrivateUsage]

    values = [0.0, -0.0, 0.0, float("nan"), float("inf"), -float("inf"), 1e-45, 0.1, -2.5,
              float(np.float32(1 / 3)), 1 / 3, 65504.0]  # fmt: skip
    for type_ in (Float32Type(), Float16Type(), Float64Type()):
        for f16 in ("half", "float"):
            for value in [*values, *reversed(values)]:
                assert float_literal(value, type_, f16) == _spell_float(value, type_, f16)
    assert float_literal(-0.0, Float32Type()) == "(-0.0f)"
    assert float_literal(0.0, Float32Type()) == "0.0f"
    assert float_literal(-0.0, Float64Type()) == "(-0.0)"
    assert float_literal(np.float32(0.5), Float32Type()) == "0.5f"  # type: ignore[arg-type]
