"""A numpy reference evaluator for buffer-level IR (`layout` + upstream dialects).

Every pass is tested numerically: run a function before and after the pass on the same
inputs and compare. Usage:

```python
from physlayout.semantics.evaluator import Evaluator, run_function
outputs = run_function(module, "relu", [a, b])   # a, b: numpy arrays, mutated in place
```

Arguments and results
---------------------
- A buffer argument (`!layout.buffer`, `memref`) is a C-contiguous numpy array whose shape is
  the type's shape followed by the vector shape of its element type (a
  `!layout.buffer<16xvector<4xf32>>` is a (16, 4) float32 array) and whose dtype is the
  scalar element type's (f16/f32/f64, i1 as bool, iN as intN, index as int64). Dynamic memref
  extents accept any extent. The evaluator writes into it in place and checks shape and
  dtype on entry. A buffer whose type has a pending `transform` is passed in its LOGICAL
  shape too: the evaluator copies it into physical storage (padding holds the pad value)
  and copies the logical values back when the call returns (see "Storage model"). Memref
  layout maps are ignored (an argument is row-major over its type's shape).
- A data handle argument (`!layout.ptr`) is any C-contiguous array of the scalar dtype,
  used flat.
- Scalar arguments are Python/numpy numbers (integers wrap to the type's width); vector
  arguments are arrays of the vector's shape.
- Results: scalars come back as Python `int`/`float`/`bool`, vectors as arrays, buffers as
  arrays aliasing their storage (a copy of the logical values for a buffer with a pending
  transform).

Storage model
-------------
A data handle is a flat array of scalars from a start offset, always in the physical layout
(the compiled program's meaning: RFC 0039, storage is physical once a transform is applied).
`layout.data %buf` is the handle `%buf` was declared over (an argument buffer's flat array);
inside a called function, the handle of a parameter starts at the parameter's first element
(the callee addresses its parameter from there, wherever the caller's buffer lies in its
storage, as compiled code does); `layout.allocate [extents]` makes a zero-filled handle of
`prod(extents)` elements (times the vector lanes of the handle's element type), or of the
transformed extents when `extents` is the logical shape of a buffer with a pending transform
declared over it (`apply-layout` resizes that allocation); `layout.decl_buffer %ptr offset K`
views the handle from `K * lanes(ptr element)` scalars after its start with the declared
shape (a `vector<4xf32>` buffer over an `f32` handle is legal: same scalars): row-major, or,
when the type has a pending transform, element `idx` at the row-major position of `map(idx)`
in the transformed shape (what `apply-layout` and `flatten-buffers` make of it). So a store
through a logical view with a transform and a load through a physical view (RFC DeclBuffer)
of the same handle meet, and declarations over one handle alias. As `apply-layout`
guarantees, the padding of a buffer with a padded transform that a function stores to
(directly, `layout.store`) is filled with the pad value: for a parameter on entry to the
function, for a `layout.decl_buffer` right after it. Memref ops build strided views. Views
that leave their storage and accesses outside a view's shape (checked per axis) raise
`EvaluationError`, a `DiagnosticException` naming the buffer and the index.

Execution model
---------------
SIMT-style vectorized execution (see `evaluator_values`): a parallel loop (`scf.parallel`,
`affine.parallel`) runs all its iterations at once as new lane axes; loads gather, stores
scatter at the active lanes. Sequential loops iterate in Python, vectorized over the
enclosing lanes; when their bounds differ between lanes they run to the largest trip count
with the finished lanes masked off. `scf.if`/`affine.if` run only the taken branch when the
condition is uniform over the active lanes, else both branches under complementary masks,
selecting yielded values with `np.where`. Inactive lanes never touch memory or raise errors.
Storage allocated inside a parallel loop is private to each lane.

With `vectorize_loops=True` (the default) an `scf.for`/`affine.for` that provably behaves like
a parallel loop is run as one (the rule is documented in `evaluator_analysis`); otherwise
it runs sequentially. Results are identical in both modes. (Reductions of
`scf.parallel` (pairwise, with its `scf.reduce` region) and `affine.parallel` (numpy
reductions) may combine floats in another order than a sequential loop would.)

Supported ops
-------------
`func.func/call/return`; `scf.for` (iter_args), `scf.parallel` (+ `scf.reduce` with or without
reductions), `scf.if`, `scf.yield`; `affine.for/parallel` (bound maps, groups, steps,
reductions)/`if`/`apply`/`min`/`max`/`load`/`store`/`vector_load`/`vector_store`/`yield`;
`arith` and `math` as listed in `evaluator_arith.VALUE_OPS` plus `arith.constant` (scalars,
dense vectors); `vector.broadcast/extract/insert` (static positions), `vector.reduction`,
`vector.fma`, `vector.load/store` (1-D); `memref.alloc/alloca/dealloc/load/store/cast/
memory_space_cast/assume_alignment/reinterpret_cast/subview/collapse_shape/expand_shape/
copy/dim`; `layout.allocate/decl_buffer/data/load/store`. Anything else raises an
`EvaluationError` naming (and locating) the op when it is reached.

Implementation
--------------
The meaning of every op is an `@impl` function on an `xdsl.interpreter.InterpreterFunctions`
class, one per dialect family (`FUNCTIONS`): `evaluator_arith` (arith, math),
`evaluator_vector`, `evaluator_memory` (layout, memref), `evaluator_scf` (scf, func),
`evaluator_affine`. An `Evaluator` registers them on an `xdsl.interpreter.Interpreter`;
`evaluator_frame` runs blocks over the current lanes (kept on the interpreter),
`evaluator_loops` holds the loop and branch machinery, `evaluator_values` the lanes and
storage, `evaluator_access` gathers and scatters, `evaluator_analysis` the vectorization
rule, `evaluator_args` the conversion of arguments and results. An `Evaluator` prepares each block once and caches loop decisions:
build a new one (or call `run_function`) after changing the module.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.ir import Operation

from physlayout.semantics.evaluator_affine import AffineFunctions
from physlayout.semantics.evaluator_args import (
    ArgValue,
    ResultValue,
    convert_arg,
    convert_result,
    write_back,
)
from physlayout.semantics.evaluator_arith import ArithFunctions, MathFunctions
from physlayout.semantics.evaluator_frame import Simt, function_named, install_simt, simt
from physlayout.semantics.evaluator_memory import LayoutFunctions, MemRefFunctions
from physlayout.semantics.evaluator_scf import FuncFunctions, ScfFunctions, entry_block
from physlayout.semantics.evaluator_values import EvaluationError, Lanes
from physlayout.semantics.evaluator_vector import VectorFunctions

__all__ = [
    "FUNCTIONS",
    "ArgValue",
    "EvaluationError",
    "Evaluator",
    "ResultValue",
    "make_interpreter",
    "run_function",
]

FUNCTIONS: tuple[type[InterpreterFunctions], ...] = (
    ArithFunctions,
    MathFunctions,
    VectorFunctions,
    LayoutFunctions,
    MemRefFunctions,
    ScfFunctions,
    FuncFunctions,
    AffineFunctions,
)
"""The interpreter functions that give every supported op its meaning."""


def make_interpreter(module: ModuleOp, vectorize_loops: bool = True) -> Interpreter:
    """An xDSL interpreter for `module` with all of `FUNCTIONS` registered."""
    interpreter = Interpreter(module)
    for functions in FUNCTIONS:
        interpreter.register_implementations(functions())
    install_simt(interpreter, Simt(vectorize_loops=vectorize_loops))
    return interpreter


class Evaluator:
    """Evaluates the functions of `module` on numpy arrays (see the module docstring)."""

    def __init__(self, module: ModuleOp, vectorize_loops: bool = True):
        self.module = module
        self.vectorize_loops = vectorize_loops
        self.interpreter = make_interpreter(module, vectorize_loops)

    @property
    def _decisions(self) -> dict[Operation, tuple[tuple[object, ...], bool]]:
        """The cached `vectorize_loops` decision of each loop run so far (for tests)."""
        return simt(self.interpreter).decisions

    def run(self, name: str, args: Sequence[ArgValue]) -> list[ResultValue]:
        """Call function `name` with `args`; returns its results (buffers alias storage)."""
        func = function_named(self.interpreter, name)
        block = entry_block(func)
        if len(args) != len(block.args):
            raise EvaluationError(f"@{name} takes {len(block.args)} arguments, got {len(args)}")
        entries = [
            convert_arg(value, arg, i)
            for i, (value, arg) in enumerate(zip(args, block.args, strict=True))
        ]
        simt(self.interpreter).lanes = Lanes((), None)
        with np.errstate(all="ignore"):
            results = self.interpreter.call_op(func, tuple(entries))
        for value, entry in zip(args, entries, strict=True):
            write_back(value, entry)
        return [convert_result(entry) for entry in results]


def run_function(
    module: ModuleOp,
    name: str,
    args: Sequence[ArgValue],
    vectorize_loops: bool = True,
) -> list[ResultValue]:
    """Evaluate function `name` of `module` on `args` (buffers are mutated in place)."""
    return Evaluator(module, vectorize_loops=vectorize_loops).run(name, args)
