"""f16 on the OpenCL target, run on the local device (PoCL here, which has no cl_khr_fp16).

f16 storage needs no extension: half buffers are read and written with `vload_half`/
`vstore_half_rte`, f16 textures are HALF_FLOAT images read with `read_imagef` and written
with `write_imagef`, and f16 values are computed in float and rounded to half where MLIR's
f16 ops round (`px_half_rte`). The results must equal the numpy evaluator's bit for bit
(NaN payloads aside) on values chosen to round differently in half: ties to even,
subnormals, the largest finite half and overflow to infinity. Planted bugs (a store that
truncates, an accumulator kept in half) must make these comparisons fail. The generated
text is pinned by test/opencl/target-fp16*.mlir and target-f16-storage.mlir.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

from physlayout.runtime.device import OpenCLRuntime
from physlayout.runtime.host import execute
from physlayout.runtime.opencl import CompiledModule, compile_module
from physlayout.semantics.evaluator import run_function

TESTS = Path(__file__).resolve().parents[1]
FP16 = TESTS / "opencl/target-fp16.mlir"
STORAGE = TESTS / "python/inputs/f16_storage.mlir"


def hard_values(count: int = 1024) -> np.ndarray:
    """`count` float32 values whose rounding to half is easy to get wrong: exact ties
    between adjacent halves (each way to even), values one float ulp either side of a tie,
    ties among subnormals, the largest finite half, the overflow threshold 65520, infinities,
    NaN, signed zeros, and random normal values of several magnitudes."""
    halves = np.arange(0x0000, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    ties = (halves[:-1] + halves[1:]) / 2  # exact in float32: 12 significant bits
    rng = np.random.default_rng(7)
    picks = rng.choice(ties, 100, replace=False)
    special = [
        65504.0, 65519.99, 65520.0, 65536.0, 1e5, np.inf, np.nan, 0.0, -0.0, 1e-30,
        2.0**-24, 2.0**-25, 3 * 2.0**-25, 5 * 2.0**-25, 2.0**-26, 2.0**-14, 2.0**-14 - 2.0**-25,
        (2.0**-14 + (2.0**-14 - 2.0**-24)) / 2, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11,
        2049.0, 2051.0, 4097.0, 0.1, 1 / 3,
    ]  # fmt: skip
    tied = np.concatenate([picks, ties[:24], ties[-24:], ties[1020:1036]])
    base = np.concatenate([special, tied]).astype(np.float32)
    nudged = np.concatenate(
        [np.nextafter(tied.astype(np.float32), np.float32(np.inf)),
         np.nextafter(tied.astype(np.float32), np.float32(-np.inf))]
    )  # fmt: skip
    values = np.concatenate([base, -base, nudged])
    rest = count - len(values)
    assert rest > 0
    scales = np.repeat([1e-6, 1e-3, 1.0, 1e3, 3e4], rest // 5 + 1)[:rest]
    randoms = (rng.standard_normal(rest) * scales).astype(np.float32)
    return np.concatenate([values, randoms]).astype(np.float32)


def to_half(x: np.ndarray) -> np.ndarray:
    """`x` rounded to f16 by numpy (to nearest, ties to even; overflow to infinity)."""
    with np.errstate(over="ignore"):
        return np.asarray(x).astype(np.float16)


def same_halves(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-identical f16 arrays, any NaN equal to any NaN (payloads are not specified)."""
    got, want = np.asarray(got, np.float16), np.asarray(want, np.float16)
    nan = np.isnan(got) & np.isnan(want)
    return bool(np.array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])) and (
        np.array_equal(np.isnan(got), np.isnan(want))
    )


def same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-identical float32 arrays (signed zeros distinguished), NaN equal to NaN."""
    nan = np.isnan(got) & np.isnan(want)
    return bool(np.array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])) and (
        np.array_equal(np.isnan(got), np.isnan(want))
    )


def run_both(compiled: CompiledModule, name: str, args: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Run `name` on the device and with the evaluator: (device arrays, evaluator arrays)."""
    device = [a.copy() for a in args]
    reference = [a.copy() for a in args]
    execute(compiled, name, device)
    run_function(compiled.source, name, reference)
    return device, reference


@pytest.fixture(scope="module")
def storage(runtime: OpenCLRuntime) -> CompiledModule:
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    return compile_module(STORAGE.read_text(), runtime)


def mutated(compiled: CompiledModule, source: str) -> CompiledModule:
    """`compiled` running `source` (a planted bug) instead of its generated text."""
    assert source != compiled.program.source, "the mutation did not apply"
    program = dataclasses.replace(compiled.program, source=source)
    return dataclasses.replace(
        compiled, program=program, cl_program=compiled.runtime.build(source), cl_kernels={}
    )


def test_hard_values_expose_truncation() -> None:
    """The test values round differently to nearest-even than toward zero (else a
    truncating store could pass), and include every class of special value."""
    x = hard_values()
    nearest = to_half(x)
    toward_zero = np.where(np.abs(nearest.astype(np.float32)) > np.abs(x),
                           np.nextafter(nearest, np.float16(0)), nearest)  # fmt: skip
    finite = np.isfinite(x)
    assert np.count_nonzero(nearest[finite] != toward_zero[finite]) > 200
    assert {65504.0, np.inf, -np.inf} <= set(nearest.astype(np.float64).tolist())
    assert np.any((nearest != 0) & (np.abs(nearest) < 2.0**-14))  # subnormal results
    assert np.any(np.isnan(nearest))


def test_half_float_image_round_trip(runtime: OpenCLRuntime) -> None:
    """A texture of f16 is a HALF_FLOAT image (core OpenCL 1.2, no extension needed)."""
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    data = np.random.default_rng(0).standard_normal((6, 12)).astype(np.float16)
    storage = runtime.allocate("texture", (6, 12), np.float16)
    storage.upload(data)
    assert np.array_equal(storage.download(), data)


@pytest.mark.parametrize("name", ["relu_half", "channel_sum_half", "lane_half"])
def test_f16_textures_run_on_any_device(runtime: OpenCLRuntime, name: str) -> None:
    """target-fp16.mlir's kernels (f16 textures, an f16 accumulator, a lane read) run
    without cl_khr_fp16 and equal the evaluator exactly."""
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    compiled = compile_module(FP16.read_text(), runtime)
    rng = np.random.default_rng(1)
    shapes = {"relu_half": [(1, 3, 5, 8)] * 2, "channel_sum_half": [(1, 3, 5, 8), (1, 3, 5)],
              "lane_half": [(1, 3, 5, 8)] * 2}[name]  # fmt: skip
    args = [(rng.standard_normal(s) * 300).astype(np.float16) for s in shapes]
    device, reference = run_both(compiled, name, args)
    assert same_halves(device[-1], reference[-1])


def test_store_rounds_to_nearest_even(storage: CompiledModule) -> None:
    """f32 -> f16 buffer (the truncf feeds only the store, vstore_half_rte rounds)."""
    x = hard_values()
    device, reference = run_both(storage, "store_half", [x, np.zeros(1024, np.float16)])
    assert same_halves(reference[1], to_half(x))
    assert same_halves(device[1], reference[1])


def test_truncf_rounds_inside_the_kernel(storage: CompiledModule) -> None:
    """f32 -> f16 -> f32 in registers (px_half_rte): the f32 result is the half value."""
    x = hard_values()
    device, reference = run_both(storage, "round_trip", [x, np.zeros(1024, np.float32)])
    assert same_floats(reference[1], to_half(x).astype(np.float32))
    assert same_floats(device[1], reference[1])


def test_f16_texture_write_and_read(storage: CompiledModule) -> None:
    """f32 texels into a HALF_FLOAT image (rounded, then write_imagef) and back out with
    read_imagef: the evaluator's values, bit for bit."""
    x = hard_values().reshape(64, 16)
    device, reference = run_both(storage, "to_texture", [x, np.zeros((64, 16), np.float16)])
    assert same_halves(device[1], reference[1])
    back, back_reference = run_both(
        storage, "from_texture", [reference[1], np.zeros((64, 16), np.float32)]
    )
    assert same_floats(back[1], back_reference[1])
    assert same_floats(back[1], reference[1].astype(np.float32))


def test_f16_arithmetic_rounds_each_op(storage: CompiledModule) -> None:
    """+, *, / and sitofp on f16 values: each result is the nearest half of the exact
    result (numpy's f16 arithmetic), overflow to infinity and subnormals included."""
    rng = np.random.default_rng(3)
    a = to_half(hard_values())
    b = np.concatenate(
        [a[::-1][:512], (rng.standard_normal(512) * 50).astype(np.float16)]
    ).astype(np.float16)
    outs = [np.zeros(1024, np.float16) for _ in range(4)]
    with np.errstate(all="ignore"):
        device, reference = run_both(storage, "half_ops", [a, b, *outs])
        exact = [a.astype(np.float64) + b, a.astype(np.float64) * b, a.astype(np.float64) / b]
    for got, want, wide in zip(device[2:5], reference[2:5], exact, strict=True):
        assert same_halves(want, to_half(wide))
        assert same_halves(got, want)
    assert same_halves(device[5], reference[5])
    # sitofp: 3 * i exceeds 2048 from i = 683 on, where halves are even integers
    with np.errstate(over="ignore"):
        assert same_halves(device[5], to_half(np.arange(1024) * 3) + a)


def test_f32_accumulator_keeps_the_sum(storage: CompiledModule) -> None:
    """3000 ones: an f32 accumulator rounded once gives 3000 (a half value); an f16
    accumulator sticks at 2048 (2048 + 1 ties to the even 2048). Device and evaluator
    agree on both."""
    x = np.ones((5, 3000), np.float16)
    device, reference = run_both(storage, "sum_f32_accumulator", [x, np.zeros(5, np.float16)])
    assert same_halves(device[1], reference[1])
    assert np.all(device[1] == 3000)
    device, reference = run_both(storage, "sum_f16_accumulator", [x, np.zeros(5, np.float16)])
    assert same_halves(device[1], reference[1])
    assert np.all(device[1] == 2048)


# Planted bugs -------------------------------------------------------------------------

_TRUNCATING_HELPER = (
    "static inline float px_half_rte(float x) {\n"
    "  float a = fabs(x);\n"
    "  uint u = as_uint(a) & 0xFFFFE000u;\n"
    "  float r = select(as_float(u), trunc(a * 16777216.0f) / 16777216.0f, a < 6.103515625e-05f);\n"
    "  r = select(r, 65504.0f, a >= 65536.0f);\n"
    "  return select(copysign(r, x), x, isnan(x));\n"
    "}"
)


def _truncating(source: str) -> str:
    """The source with every rounding to half made a truncation: stores with `_rtz`, and
    the scalar in-register rounding truncating its low bits."""
    source = source.replace("vstore_half_rte(", "vstore_half_rtz(")
    start = source.index("static inline float px_half_rte(float x) {")
    end = source.index("\n}", start) + 2
    return source[:start] + _TRUNCATING_HELPER + source[end:]


@pytest.mark.parametrize("name", ["store_half", "round_trip"])
def test_a_truncating_rounding_is_caught(storage: CompiledModule, name: str) -> None:
    x = hard_values()
    out = np.zeros(1024, np.float16 if name == "store_half" else np.float32)
    device, reference = run_both(mutated(storage, _truncating(storage.program.source)), name, [x, out])
    same = same_halves if name == "store_half" else same_floats
    assert not same(device[1], reference[1])


def test_an_accumulator_kept_in_half_is_caught(storage: CompiledModule) -> None:
    """The f32 accumulator of `sum_f32_accumulator` rounded to half at each step (as if it
    were left in half) gives 2048, not the evaluator's 3000."""
    source = storage.program.source
    bug = re.sub(r"float a = (s \+ v);", r"float a = px_half_rte(\1);", source)
    x = np.ones((5, 3000), np.float16)
    device, reference = run_both(mutated(storage, bug), "sum_f32_accumulator", [x, np.zeros(5, np.float16)])
    assert not same_halves(device[1], reference[1])


@pytest.mark.parametrize("name", ["scalars", "vectors"])
def test_rounding_rules_kernels_match_the_evaluator(runtime: OpenCLRuntime, name: str) -> None:
    """target-f16-storage.mlir's kernels (every rounding rule) equal the evaluator: bit for
    bit, but for `exp`, whose float result may differ in the last float place and so, rarely,
    round to the neighbouring half (within one half ulp: relative 2^-10)."""
    if not runtime.limits.image_support:
        pytest.skip("no image support")
    compiled = compile_module((TESTS / "opencl/target-f16-storage.mlir").read_text(), runtime)
    a = to_half(hard_values()[:16] * 0.25)
    if name == "scalars":
        args = [a, np.zeros(48, np.float16), np.zeros(16, np.float32), np.float16(1.5)]
    else:
        args = [a, np.zeros((1, 16), np.float16), np.zeros(16, np.float16)]
    device = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    reference = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
    with np.errstate(all="ignore"):
        execute(compiled, name, device)
        run_function(compiled.source, name, reference)
    for got, want in zip(device[1:3], reference[1:3], strict=True):
        if name == "vectors":
            # fmax of -0 and +0 may give either zero (IEEE maxNum): compare values, not bits
            assert np.array_equal(got, want, equal_nan=True)
            continue
        close = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=2.0**-10, atol=0)
        assert np.all(close | (np.isnan(got) & np.isnan(want)))
