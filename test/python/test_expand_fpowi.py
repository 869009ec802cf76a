"""`math.fpowi` with a constant exponent expanded into multiplies (normalize-graph's
`ExpandConstantFPowI`), and the evaluator's `fpowi` as upstream MLIR lowers it: the graph
evaluator before and after the pass bit for bit (f32 and f16, special values, exponents
from -70 to 70 and the most negative ones), the evaluator against a scalar transcription of
upstream's loop, and OpenCL against the evaluator with no `pown` left in the kernels."""

from __future__ import annotations

import numpy as np
import pytest
from graph_harness import apply, parse
from hypothesis import given, settings
from hypothesis import strategies as st

from physlayout.semantics.evaluator_arith import _power_int  # pyright: ignore[reportPrivateUsage]
from physlayout.semantics.graph_evaluator import run_graph
from physlayout.transforms.normalize_graph import NormalizeGraphPass

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 3.0e-20, -7.0e18, np.inf, -np.inf, np.nan, 1e-38]


def _graph(power: int, element: str, count: int) -> str:
    return f"""
func.func @p(%x: tensor<{count}x{element}>) -> tensor<{count}x{element}> {{
  %n = arith.constant {power} : i64
  %e = tensor.empty() : tensor<{count}x{element}>
  %r = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}} ins(%x : tensor<{count}x{element}>) outs(%e : tensor<{count}x{element}>) {{
  ^bb0(%in: {element}, %out: {element}):
    %y = math.fpowi %in, %n : {element}, i64
    linalg.yield %y : {element}
  }} -> tensor<{count}x{element}>
  return %r : tensor<{count}x{element}>
}}
"""


def _upstream(x: np.floating, n: int, bits: int) -> np.floating:
    """upstream's `__mlir_math_fpowi` (convert-math-to-funcs), one scalar, each multiply
    rounded to `x`'s type by numpy's scalar arithmetic."""
    kind = type(x)
    if n == 0:
        return kind(1)
    lowest = -(1 << (bits - 1))
    p = (1 << (bits - 1)) - 1 if n == lowest else abs(n)
    result, b = kind(1), x
    with np.errstate(all="ignore"):
        while True:
            if p & 1:
                result = kind(result * b)
            p >>= 1
            if p == 0:
                break
            b = kind(b * b)
        if n == lowest:
            result = kind(result * x)
        return kind(kind(1) / result) if n < 0 else result


@settings(max_examples=60, deadline=None)
@given(
    power=st.integers(-70, 70),
    element=st.sampled_from(["f32", "f16"]),
    values=st.lists(st.floats(-4.0, 4.0, width=16), min_size=1, max_size=9),
)
def test_expansion_keeps_every_value(power: int, element: str, values: list[float]) -> None:
    dtype = np.float32 if element == "f32" else np.float16
    with np.errstate(over="ignore"):  # -7e18 is -inf in f16
        x = np.array([*values, *SPECIAL], dtype)
    text = _graph(power, element, len(x))
    before = run_graph(parse(text), "p", [x])[0]
    after_module = apply(parse(text), [NormalizeGraphPass()])
    expanded = abs(power) <= 64
    assert ("math.fpowi" not in str(after_module)) == expanded
    after = run_graph(after_module, "p", [x])[0]
    np.testing.assert_array_equal(before, after)  # NaN == NaN here; bits below
    assert before.tobytes() == after.tobytes()


@pytest.mark.parametrize("bits", [32, 64])
def test_evaluator_follows_upstreams_loop(bits: int) -> None:
    rng = np.random.default_rng(bits)
    x = np.array([*SPECIAL, *rng.uniform(-3, 3, 20), 1.0000001, 0.9999999], np.float32)
    lowest = -(1 << (bits - 1))
    powers = [0, 1, 2, 3, 5, -1, -2, -7, 31, 64, 65, -65, 1000, lowest, lowest + 1]
    exponent_type = np.int32 if bits == 32 else np.int64
    for n in powers:
        got = _power_int(x, np.asarray(n, exponent_type))
        want = np.array([_upstream(np.float32(v), n, bits) for v in x], np.float32)
        assert got.dtype == np.float32 and got.tobytes() == want.tobytes(), n


def test_a_different_order_is_caught_on_values() -> None:
    """A planted bug: numpy's power (one rounding) for the multiplies' order differs from
    upstream's loop on values (so the before/after check above can see a wrong order)."""
    x = np.random.default_rng(1).uniform(-3, 3, 200).astype(np.float32)
    planted = np.power(x, np.float32(13))
    assert planted.tobytes() != _power_int(x, np.int64(13)).tobytes()


def test_opencl_runs_the_multiplies_bit_exactly(runtime: object) -> None:
    """(`runtime`: skipped without an OpenCL device.)"""
    import physlayout

    x = np.array([*np.random.default_rng(2).uniform(-3, 3, 29), *SPECIAL], np.float32)
    for power in (3, -2, 13):
        text = _graph(power, "f32", len(x))
        model = physlayout.compile(text, cache=False, tuning_cache=False)
        assert "pown" not in model.kernels
        want = run_graph(parse(text), "p", [x])[0]
        _assert_same_bits_up_to_nan_payloads(np.asarray(model(x)), want, power)


def _assert_same_bits_up_to_nan_payloads(got: np.ndarray, want: np.ndarray, power: int) -> None:
    """Bit for bit, except that a NaN may carry another payload: a device writes its own
    (NVIDIA's OpenCL gives 0x7fffffff where numpy keeps 0x7fc00000)."""
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), power
    assert got[~nan].tobytes() == want[~nan].tobytes(), power
