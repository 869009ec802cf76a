"""The numpy reference evaluator's scalar semantics: integer division, remainder, wraparound,
shifts and comparisons (i1, i8, i32, index; i8 against a Python model of every op), float
ops and predicates kept in float32, and the vector register ops (`vector.broadcast`,
`extract`, `insert`, `reduction`, `fma`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from evaluator_harness import CONSTANTS, par, parse, random
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import DiagnosticException

from physlayout.semantics.evaluator import run_function


def test_integer_division_semantics():
    text = """
func.func @div(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32) {
  %q = arith.divsi %a, %b : i32
  %f = arith.floordivsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %c = arith.ceildivsi %a, %b : i32
  %u = arith.divui %a, %b : i32
  %m = arith.remui %a, %b : i32
  func.return %q, %f, %r, %c, %u, %m : i32, i32, i32, i32, i32, i32
}"""
    module = parse(text)
    assert run_function(module, "div", [-7, 4]) == [-1, -2, -3, -1, (2**32 - 7) // 4, 1]
    assert run_function(module, "div", [7, -4]) == [-1, -2, 3, -1, 0, 7]
    assert run_function(module, "div", [7, 4]) == [1, 1, 3, 2, 1, 3]
    with pytest.raises(DiagnosticException, match="division by zero"):
        run_function(module, "div", [7, 0])


def test_integer_wraparound_shifts_and_comparisons():
    text = """
func.func @ints(%a: i8, %b: i8) -> (i8, i8, i8, i8, i8, i1, i1, i32, i32, index) {
  %s = arith.addi %a, %b : i8
  %p = arith.muli %a, %b : i8
  %one = arith.constant 1 : i8
  %l = arith.shli %a, %one : i8
  %rs = arith.shrsi %b, %one : i8
  %ru = arith.shrui %b, %one : i8
  %lt = arith.cmpi slt, %b, %a : i8
  %ult = arith.cmpi ult, %b, %a : i8
  %es = arith.extsi %b : i8 to i32
  %eu = arith.extui %b : i8 to i32
  %ix = arith.index_cast %b : i8 to index
  func.return %s, %p, %l, %rs, %ru, %lt, %ult, %es, %eu, %ix : i8, i8, i8, i8, i8, i1, i1, i32, i32, index
}"""
    results = run_function(parse(text), "ints", [127, -2])
    assert results == [125, 2, -2, -1, 127, True, False, -2, 254, -2]
    assert run_function(parse(text), "ints", [127, 1])[0] == -128


def test_float_ops_and_predicates():
    text = """
func.func @floats(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32, f32, i1, i1, i1, i1, f16, f64) {
  %mx = arith.maximumf %x, %y : f32
  %mn = arith.maxnumf %x, %y : f32
  %e = math.erf %x : f32
  %rs = math.rsqrt %y : f32
  %fm = math.fma %x, %y, %x : f32
  %rem = arith.subf %x, %y : f32
  %olt = arith.cmpf olt, %x, %y : f32
  %ult = arith.cmpf ult, %x, %y : f32
  %une = arith.cmpf une, %x, %x : f32
  %ord = arith.cmpf ord, %x, %y : f32
  %h = arith.truncf %y : f32 to f16
  %d = arith.extf %y : f32 to f64
  func.return %mx, %mn, %e, %rs, %fm, %rem, %olt, %ult, %une, %ord, %h, %d : f32, f32, f32, f32, f32, f32, i1, i1, i1, i1, f16, f64
}"""
    module = parse(text)
    x, y = np.float32(-1.5), np.float32(2.25)
    out = run_function(module, "floats", [x, y])
    assert out[0] == 2.25 and out[1] == 2.25
    assert out[2] == pytest.approx(math.erf(-1.5), rel=1e-6)
    assert out[3] == pytest.approx(1 / 1.5, rel=1e-6)
    assert out[4] == np.float32(x * y + x)
    assert out[5] == np.float32(-1.5 - 2.25)
    assert out[6:10] == [True, True, False, True]
    assert out[10] == 2.25 and out[11] == 2.25
    nan = run_function(module, "floats", [np.float32("nan"), y])
    assert math.isnan(nan[0]) and nan[1] == 2.25
    assert nan[6:10] == [False, True, True, False]


def test_f32_values_stay_float32():
    text = """
func.func @third(%x: f32) -> f32 {
  %three = arith.constant 3.0 : f32
  %r = arith.divf %x, %three : f32
  func.return %r : f32
}"""
    (r,) = run_function(parse(text), "third", [1.0])
    assert r == float(np.float32(1.0) / np.float32(3.0))
    assert r != 1.0 / 3.0


def test_vector_register_ops():
    text = """
func.func @vec(%x: f32, %v: vector<4xf32>) -> (vector<4xf32>, f32, vector<4xf32>, f32, f32) {
  %b = vector.broadcast %x : f32 to vector<4xf32>
  %e = vector.extract %v[2] : f32 from vector<4xf32>
  %i = vector.insert %x, %v [0] : f32 into vector<4xf32>
  %s = vector.reduction <add>, %v : vector<4xf32> into f32
  %m = vector.reduction <maxnumf>, %v, %x : vector<4xf32> into f32
  func.return %b, %e, %i, %s, %m : vector<4xf32>, f32, vector<4xf32>, f32, f32
}"""
    v = np.array([1.0, -2.0, 3.5, 0.25], np.float32)
    b, e, i, s, m = run_function(parse(text), "vec", [np.float32(9.0), v])
    np.testing.assert_array_equal(b, np.full(4, 9.0, np.float32))
    assert e == 3.5
    np.testing.assert_array_equal(i, [9.0, -2.0, 3.5, 0.25])
    assert s == 2.75 and m == 9.0


def test_vector_ops_in_lanes_and_vector_element_buffer():
    body = """
    %v = layout.load %A[%i] : !layout.buffer<6xvector<4xf32>>, vector<4xf32>
    %s = vector.reduction <add>, %v : vector<4xf32> into f32
    %b = vector.broadcast %s : f32 to vector<4xf32>
    %f = vector.fma %v, %v, %b : vector<4xf32>
    %cond = arith.cmpf ogt, %s, %zero : f32
    %sel = arith.select %cond, %f, %v : vector<4xf32>
    layout.store %sel, %B[%i] : !layout.buffer<6xvector<4xf32>>, vector<4xf32>"""
    loop = par(["%i"], ["%c0"], ["%c6"], ["%c1"], body)
    text = f"""
func.func @f(%A: !layout.buffer<6xvector<4xf32>>, %B: !layout.buffer<6xvector<4xf32>>) {{
  {CONSTANTS}
  %c6 = arith.constant 6 : index
  {loop}
  func.return
}}"""
    a = random((6, 4), seed=20)
    b = np.zeros_like(a)
    run_function(parse(text), "f", [a, b])
    s = a.sum(axis=1, keepdims=True, dtype=np.float32)
    np.testing.assert_allclose(b, np.where(s > 0, a * a + s, a), rtol=1e-6)


INT_OPS = """
func.func @ops(%a: i8, %b: i8) -> (i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8) {
  %0 = arith.divsi %a, %b : i8
  %1 = arith.remsi %a, %b : i8
  %2 = arith.floordivsi %a, %b : i8
  %3 = arith.ceildivsi %a, %b : i8
  %4 = arith.divui %a, %b : i8
  %5 = arith.remui %a, %b : i8
  %6 = arith.muli %a, %b : i8
  %7 = arith.subi %a, %b : i8
  %8 = arith.minsi %a, %b : i8
  %9 = arith.maxui %a, %b : i8
  %c3 = arith.constant 3 : i8
  %10 = arith.shrsi %a, %c3 : i8
  %11 = arith.shrui %a, %c3 : i8
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8, i8
}"""


def _i8(x: int) -> int:
    return (x + 128) % 256 - 128


def _int_model(a: int, b: int) -> list[int]:
    """C / MLIR semantics of the ops in INT_OPS, in plain Python."""
    ua, ub = a % 256, b % 256
    trunc = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return [
        _i8(trunc),
        _i8(a - trunc * b),
        _i8(a // b),
        _i8(-((-a) // b)),
        _i8(ua // ub),
        _i8(ua % ub),
        _i8(a * b),
        _i8(a - b),
        min(a, b),
        _i8(max(ua, ub)),
        a >> 3,
        _i8(ua >> 3),
    ]


INT_MODULE = parse(INT_OPS)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(-128, 127), st.integers(-128, 127).filter(lambda b: b != 0))
def test_i8_semantics_match_python_model(a: int, b: int):
    if a == -128 and b == -1:
        return  # signed overflow: undefined behaviour
    assert run_function(INT_MODULE, "ops", [a, b]) == _int_model(a, b)


def test_i1_arithmetic_is_modulo_two_and_signed():
    text = """
func.func @g(%a: i1, %b: i1) -> (i1, i1, i1, i32, i32) {
  %s = arith.addi %a, %b : i1
  %m = arith.muli %a, %b : i1
  %lt = arith.cmpi slt, %a, %b : i1
  %e = arith.extsi %a : i1 to i32
  %u = arith.extui %a : i1 to i32
  func.return %s, %m, %lt, %e, %u : i1, i1, i1, i32, i32
}"""
    module = parse(text)
    assert run_function(module, "g", [True, True]) == [False, True, False, -1, 1]
    assert run_function(module, "g", [True, False]) == [True, False, True, -1, 1]
