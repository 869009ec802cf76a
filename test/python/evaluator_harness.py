"""Test harness for the numpy reference evaluator's tests (`test_evaluator*.py`): `parse`
with every dialect the evaluator runs (upstream func, arith, scf, affine, memref, math,
vector and physlayout's `layout`), `par` (a generic-form `scf.parallel`), the index
constants `CONSTANTS` that loop bodies use, and `random` seeded float arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import affine, arith, builtin, func, memref, scf, vector
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from physlayout.dialects.layout_dialect import Layout


def parse(text: str, verify: bool = True) -> ModuleOp:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        scf.Scf,
        affine.Affine,
        memref.MemRef,
        math_dialect.Math,
        vector.Vector,
        Layout,
    ):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    if verify:
        module.verify()
    return module


def par(
    ivs: Sequence[str],
    lbs: Sequence[str],
    ubs: Sequence[str],
    steps: Sequence[str],
    body: str,
    inits: Sequence[tuple[str, str]] = (),
    results: str = "",
    reduce: str = "scf.reduce",
) -> str:
    """Generic-form `scf.parallel` (the form tests wrote before physlayout parsed the custom
    one, `dialects.scf_syntax`; both must keep parsing)."""
    n = len(ivs)
    operands = ", ".join([*lbs, *ubs, *steps, *(v for v, _ in inits)])
    types = ", ".join(["index"] * (3 * n) + [t for _, t in inits])
    result_types = ", ".join(t for _, t in inits)
    args = ", ".join(f"{iv}: index" for iv in ivs)
    head = f"{results} = " if results else ""
    return (
        f'{head}"scf.parallel"({operands}) <{{operandSegmentSizes = array<i32: {n}, {n}, '
        f"{n}, {len(inits)}>}}> ({{\n^bb0({args}):\n{body}\n{reduce}\n}}) : ({types}) -> "
        f"({result_types})"
    )


CONSTANTS = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
"""


def random(shape: Sequence[int], seed: int = 0, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)
