"""`physlayout.verification`: verifying with indexed symbol lookups and memoized generic
checks gives xDSL's answers.

Random modules (hypothesis) of functions, nested symbol tables and calls, some broken (a
missing callee, a duplicate name, a wrong operand type, a function without a name, a call
to a non-function): every `SymbolTable.lookup_symbol` answer and the outcome of verifying
(success, or the same exception and message) must be those of xDSL's uncached lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, func, scf
from xdsl.dialects import test as test_dialect
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    f32,
    i1,
    i32,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.irdl import (
    IRDLOperation,
    RangeOf,
    base,
    irdl_op_definition,
    region_def,
    traits_def,
    var_operand_def,
    var_region_def,
    var_result_def,
)
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolTable

from physlayout.dialects.layout import AllocateOp, LoadOp
from physlayout.dialects.layout_graph import (
    _PASSED_TRANSFORMS,  # pyright: ignore[reportPrivateUsage]
    TransformOp,
)
from physlayout.dialects.layout_types import BufferType, IndexMapAttr, PtrType
from physlayout.dialects.linalg_generic import GenericOp
from physlayout.indexing.index_map import IndexMap
from physlayout.verification import (
    _ORIGINAL_ISOLATED_VERIFY,  # pyright: ignore[reportPrivateUsage]
    PassedChecks,
    indexed_symbol_lookups,
    memoized_generic_checks,
    set_based_isolation_checks,
    verify_module,
)

PROPERTY = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
NAMES = ("a", "b", "c", "d", "m")
TYPES = (i32, f32)


def _callee(draw: st.DrawFn) -> SymbolRefAttr:
    root = draw(st.sampled_from(NAMES))
    if draw(st.booleans()):
        return SymbolRefAttr(root)
    return SymbolRefAttr(root, [draw(st.sampled_from(NAMES))])


def _function(draw: st.DrawFn, name: str, depth: int) -> func.FuncOp:
    """A function of one argument (i32 or f32) whose body calls random symbols."""
    arg_type = draw(st.sampled_from(TYPES))
    block = Block(arg_types=[arg_type])
    for _ in range(draw(st.integers(0, 3))):
        callee = _callee(draw)
        block.add_op(func.CallOp(callee, [block.args[0]], []))
    block.add_op(func.ReturnOp())
    function = func.FuncOp(name, ((arg_type,), ()), Region(block))
    if draw(st.integers(0, 9)) == 0:
        del function.properties["sym_name"]  # xDSL raises when a lookup reaches it
    return function


@st.composite
def modules(draw: st.DrawFn, depth: int = 0) -> ModuleOp:
    ops: list[Operation] = []
    for _ in range(draw(st.integers(0, 5))):
        name = draw(st.sampled_from(NAMES))
        if depth < 1 and draw(st.integers(0, 4)) == 0:
            inner = draw(modules(depth + 1))
            inner.properties["sym_name"] = StringAttr(name)
            ops.append(inner)
        else:
            ops.append(_function(draw, name, depth))
    return ModuleOp(ops)


def _outcome(action: Any, *args: Any) -> tuple[str, str] | Operation | None:
    try:
        return action(*args)
    except Exception as err:  # the comparison includes the exception
        return (type(err).__name__, str(err))


def _lookups(module: ModuleOp) -> list[tuple[str, str] | Operation | None]:
    answers: list[tuple[str, str] | Operation | None] = []
    for op in module.walk():
        if isinstance(op, func.CallOp):
            for name in (op.callee, *(SymbolRefAttr(n) for n in NAMES), "a", StringAttr("b")):
                answers.append(_outcome(SymbolTable.lookup_symbol, op, name))
    return answers


@PROPERTY
@given(modules())
def test_indexed_lookups_answer_as_xdsl(module: ModuleOp) -> None:
    expected = _lookups(module)
    verified = _outcome(module.verify)
    with indexed_symbol_lookups():
        assert _lookups(module) == expected
    assert _lookups(module) == expected  # xDSL's lookup again after the block
    assert _outcome(verify_module, module) == verified


def test_lookup_outside_any_symbol_table_raises_as_xdsl() -> None:
    block = Block(arg_types=[i32])
    call = func.CallOp("f", [block.args[0]], [])
    block.add_op(call)
    expected = _outcome(SymbolTable.lookup_symbol, call, "f")
    assert isinstance(expected, tuple)
    with indexed_symbol_lookups():
        assert _outcome(SymbolTable.lookup_symbol, call, "f") == expected


def test_the_index_is_gone_after_the_block() -> None:
    module = ModuleOp([func.FuncOp("f", ((), ()), Region(Block([func.ReturnOp()])))])
    with indexed_symbol_lookups(), indexed_symbol_lookups():
        assert SymbolTable.lookup_symbol(module, "f") is not None
    module.body.block.add_op(func.FuncOp("g", ((), ()), Region(Block([func.ReturnOp()]))))
    assert SymbolTable.lookup_symbol(module, "g") is not None


# Memoized generic checks: valid ops and variants of them that differ in one part of what
# xDSL's generic checks read (an operand or result type, a property, a region's block
# count; a `linalg.generic`'s shapes, maps or block argument types), most of them invalid, verified in a random order with one memo for all of them,
# must give exactly xDSL's outcome (success, or the same error) for each.


@irdl_op_definition
class _IndexArgsOp(IRDLOperation):
    """A test op whose region's entry arguments are constrained (by the generic checks)."""

    name = "test.index_args"
    body = region_def(entry_args=RangeOf(base(IndexType)))
    traits = traits_def(NoTerminator())


INDEX = IndexType()
_BLOCK_TYPES = (
    i32,
    i32,
    f32,
    IndexType(),
    IndexType(),
    BufferType([4], f32),
    i1,
    TensorType(f32, [4]),
    TensorType(f32, [5]),
)


_IDENTITY = AffineMap.identity(1)
_SHIFTED = AffineMap(1, 0, (AffineExpr.dimension(0) + 1,))
_TWO_DIMS = AffineMap(2, 0, (AffineExpr.dimension(0),))


def _generic(
    operands: Sequence[SSAValue],
    maps: Sequence[AffineMap] = (_IDENTITY, _IDENTITY),
    arg_type: Attribute = f32,
    result: Attribute = _BLOCK_TYPES[7],
) -> Operation:
    """A `linalg.generic` (physlayout's) of one input and one output, or a variant."""
    body = Block(arg_types=[arg_type, f32])
    body.add_op(YieldOp(body.args[0]))
    return GenericOp(
        [operands[0]],
        [operands[1]],
        Region(body),
        [AffineMapAttr(m) for m in maps],
        [IteratorTypeAttr.parallel()],
        [result],
    )


def _body(blocks: int = 1, arg_type: Attribute = INDEX) -> list[Region]:
    return [Region([Block([scf.YieldOp()], arg_types=[arg_type]) for _ in range(blocks)])]


def _specs(v: Sequence[SSAValue]) -> list[list[dict[str, Any]]]:
    """Per op: a valid spec (`create`'s keywords), then variants of it."""
    a, b, c, d, e, buf, _, t4, t5 = v
    extents = {"extents": ArrayAttr([IntAttr(4)])}
    return [
        [
            {"cls": arith.AddiOp, "operands": [a, b], "result_types": [i32]},
            {"cls": arith.AddiOp, "operands": [a, c], "result_types": [i32]},
            {"cls": arith.AddiOp, "operands": [a, b], "result_types": [f32]},
            {"cls": arith.AddiOp, "operands": [d, e], "result_types": [IndexType()]},
        ],
        [
            {"cls": LoadOp, "operands": [buf, d], "result_types": [f32]},
            {"cls": LoadOp, "operands": [buf, a], "result_types": [f32]},
            {"cls": LoadOp, "operands": [c, d], "result_types": [f32]},
            {"cls": LoadOp, "operands": [buf, d, e], "result_types": [f32]},
        ],
        [
            {"cls": AllocateOp, "result_types": [PtrType(f32)], "properties": extents},
            {"cls": AllocateOp, "result_types": [f32], "properties": extents},
            {"cls": AllocateOp, "result_types": [PtrType(f32)]},
            {
                "cls": AllocateOp,
                "result_types": [PtrType(f32)],
                "properties": {"extents": ArrayAttr([IntegerAttr(4, i32)])},
            },
            {
                "cls": AllocateOp,
                "result_types": [PtrType(f32)],
                "properties": {**extents, "elem_offset": IntAttr(0)},
            },
        ],
        [
            {"cls": scf.ForOp, "operands": [d, e, e], "regions": _body()},
            {"cls": scf.ForOp, "operands": [d, e, e], "regions": _body(2)},
            {"cls": scf.ForOp, "operands": [d, e, e], "regions": _body(1, i32)},
            {"cls": scf.ForOp, "operands": [d, e, e], "regions": []},
        ],
        [
            {"build": lambda: _generic([t4, t4])},
            {"build": lambda: _generic([t4, t5])},
            {"build": lambda: _generic([t5, t5], result=TensorType(f32, [5]))},
            {"build": lambda: _generic([t4, t4], arg_type=i32)},
            {"build": lambda: _generic([t4, t4], maps=(_IDENTITY, _SHIFTED))},
            {"build": lambda: _generic([t4, t4], maps=(_IDENTITY, _TWO_DIMS))},
            {"build": lambda: _generic([t4, t4], maps=(_IDENTITY,))},
        ],
        [
            {"cls": _IndexArgsOp, "regions": [Region(Block(arg_types=[IndexType()]))]},
            {"cls": _IndexArgsOp, "regions": [Region(Block(arg_types=[i32]))]},
        ],
        [
            {
                "cls": arith.ConstantOp,
                "result_types": [i32],
                "properties": {"value": IntegerAttr(1, i32)},
            },
            {
                "cls": arith.ConstantOp,
                "result_types": [i32],
                "properties": {"value": IntegerAttr(2, i32)},
            },
            {"cls": arith.ConstantOp, "result_types": [i32], "properties": {"value": i32}},
        ],
    ]


@st.composite
def _op_sequences(draw: st.DrawFn) -> list[Operation]:
    block = Block(arg_types=_BLOCK_TYPES)
    specs = _specs(block.args)
    ops: list[Operation] = []
    for _ in range(draw(st.integers(1, 16))):
        variants = draw(st.sampled_from(specs))
        spec = dict(draw(st.sampled_from(variants)))
        if "build" in spec:
            ops.append(spec["build"]())
            continue
        cls = spec.pop("cls")
        if "regions" in spec:  # each op owns its regions
            spec["regions"] = [r.clone() for r in spec["regions"]]
        ops.append(cls.create(**spec))
    return ops


def _verify_alone(op: Operation) -> None:
    op.verify()


@PROPERTY
@given(_op_sequences())
def test_memoized_generic_checks_answer_as_xdsl(ops: list[Operation]) -> None:
    expected = [_outcome(_verify_alone, op) for op in ops]
    passed = PassedChecks()
    for _ in range(2):  # the second round answers from the memo where it can
        with memoized_generic_checks(passed):
            assert [_outcome(_verify_alone, op) for op in ops] == expected
    assert [_outcome(_verify_alone, op) for op in ops] == expected  # xDSL's after the block


def test_a_changed_op_is_checked_again() -> None:
    """An op that passed, then changed in place (an operand of another type), fails with
    xDSL's error although its earlier signature is remembered."""
    block = Block(arg_types=[i32, i32, f32])
    add = arith.AddiOp(block.args[0], block.args[1])
    passed = PassedChecks()
    with memoized_generic_checks(passed):
        add.verify()
        add.operands = [block.args[0], block.args[2]]
        with_memo = _outcome(_verify_alone, add)
    assert isinstance(with_memo, tuple)
    assert with_memo == _outcome(_verify_alone, add)


def test_the_memo_is_bounded() -> None:
    block = Block(arg_types=[i32])
    passed = PassedChecks(limit=3)
    with memoized_generic_checks(passed):
        for k in range(10):
            arith.ConstantOp(IntegerAttr(k, i32)).verify()
            assert passed.count <= 3
    del block


def test_generic_verifier_is_the_one_read() -> None:
    """The memo of `linalg.generic`'s whole `verify_` rests on reading xDSL 0.74's
    `LinalgStructuredOperation.verify_` (it reads only the op's signature); if xDSL gives the
    op another verifier, this fails and the memo must be checked again."""
    from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
    from xdsl.dialects.linalg.ops import GenericOp as XdslGenericOp

    closure = XdslGenericOp.__dict__["verify_"].__closure__ or ()
    custom = [c.cell_contents for c in closure if callable(c.cell_contents)]
    assert custom == [LinalgStructuredOperation.__dict__["verify_"]]
    assert "verify_" not in GenericOp.__dict__


def test_a_second_verification_runs_no_generic_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verifying an unchanged module again with the same memo runs none of xDSL's generic
    checks (counted at their region checks, which run once per op checked); the memo's
    distinct signatures are those of the module's ops."""
    import xdsl.irdl.operations as irdl_operations

    module = ModuleOp(
        [
            func.FuncOp("f", ((i32,), ()), Region(Block([func.ReturnOp()], arg_types=[i32]))),
            func.FuncOp("g", ((i32,), ()), Region(Block([func.ReturnOp()], arg_types=[i32]))),
        ]
    )
    calls: list[str] = []
    original = irdl_operations.irdl_op_verify_regions

    def counted(op: Operation, *args: Any) -> None:
        calls.append(op.name)
        original(op, *args)

    monkeypatch.setattr(irdl_operations, "irdl_op_verify_regions", counted)
    passed = PassedChecks()
    verify_module(module, passed)
    assert sorted(calls) == ["builtin.module", "func.func", "func.func", "func.return"]
    calls.clear()
    verify_module(module, passed)
    assert calls == []
    assert passed.distinct() == 4  # the functions differ in their names
    verify_module(module)  # a memo of its own: every distinct signature checked once
    assert sorted(calls) == ["builtin.module", "func.func", "func.func", "func.return"]


# `layout.transform`'s own checks, memoized by (input type, result type, index map, pad
# value): random transforms (injective, colliding, padding and separator-carrying maps;
# right and wrong result shapes; pad values of the element type, of another type, or none)
# verified in a random order give the outcome and message of an unmemoized verification.

_TRANSFORM_MAPS = (
    "(i, j) -> (j, i)",
    "(i, j) -> (i floordiv 4, j, i mod 4)",
    "(i, j) -> (i floordiv 2, j)",
    "(i, j) -> (i, j floordiv 4 | j mod 4)",
    "(i) -> (i floordiv 4, i mod 4)",
)


@st.composite
def _transforms(draw: st.DrawFn) -> list[Operation]:
    ops: list[Operation] = []
    for _ in range(draw(st.integers(1, 12))):
        text = draw(st.sampled_from(_TRANSFORM_MAPS))
        attr = IndexMapAttr.from_map(*IndexMap.parse_with_separators(text))
        rank = attr.index_map.ndim
        shape = draw(st.sampled_from([[4, 4], [3, 4]] if rank == 2 else [[4], [3]]))
        source = Block(arg_types=[TensorType(f32, shape)]).args[0]
        result_shape = draw(st.sampled_from([[4, 4], [1, 4, 4], [1, 4], [2, 4]]))
        pad = draw(st.sampled_from([None, FloatAttr(0.0, f32), IntegerAttr(0, i32)]))
        ops.append(
            TransformOp.create(
                operands=[source],
                result_types=[TensorType(f32, result_shape)],
                properties={"index_map": attr} | ({} if pad is None else {"pad_value": pad}),
            )
        )
        if draw(st.booleans()):
            ops.append(ops[-1].clone())
    return ops


@PROPERTY
@given(_transforms())
def test_memoized_transform_checks_answer_as_unmemoized(ops: list[Operation]) -> None:
    expected: list[tuple[str, str] | Operation | None] = []
    for op in ops:
        _PASSED_TRANSFORMS.clear()
        expected.append(_outcome(_verify_alone, op))
    _PASSED_TRANSFORMS.clear()
    assert [_outcome(_verify_alone, op) for op in ops] == expected
    assert [_outcome(_verify_alone, op) for op in ops] == expected


# Isolation checked by set: random nests of ops, some isolated from above, whose operands
# are drawn from every value made so far (outside the isolated op, inside it, inside a
# nested isolated op, the isolated op's own results), some with a broken parent pointer:
# `set_based_isolation_checks` must answer each isolated op as xDSL does.


@irdl_op_definition
class _IsolatedOp(IRDLOperation):
    """A test op isolated from above, with any operands, results and regions."""

    name = "test.isolated"
    args = var_operand_def()
    outs = var_result_def()
    bodies = var_region_def()
    traits = traits_def(IsolatedFromAbove(), NoTerminator())


@st.composite
def _isolation_nests(draw: st.DrawFn) -> tuple[Operation, list[Operation]]:
    """A top isolated op holding a random nest, and every isolated op in it."""
    values: list[SSAValue] = list(Block(arg_types=[i32, i32]).args)  # defined outside
    isolated: list[Operation] = []

    def nest(depth: int) -> Operation:
        regions: list[Region] = []
        if depth < 3:
            for _ in range(draw(st.integers(0, 2))):
                blocks: list[Block] = []
                for _ in range(draw(st.integers(1, 2))):
                    block = Block(arg_types=[i32] * draw(st.integers(0, 2)))
                    values.extend(block.args)
                    for _ in range(draw(st.integers(0, 3))):
                        block.add_op(nest(depth + 1))
                    blocks.append(block)
                regions.append(Region(blocks))
        count = draw(st.integers(0, min(3, len(values))))
        operands = [values[draw(st.integers(0, len(values) - 1))] for _ in range(count)]
        if draw(st.booleans()):
            op = _IsolatedOp.create(operands=operands, result_types=[i32], regions=regions)
            isolated.append(op)
        else:
            op = test_dialect.TestOp(operands, [i32], regions=regions)
        values.extend(op.results)
        return op

    top = _IsolatedOp.create(result_types=[i32], regions=[Region(Block([nest(0)]))])
    isolated.append(top)
    values.extend(top.results)  # later draws cannot use them: they are made last
    for _ in range(draw(st.integers(0, 3))):  # a use of the top op's own result inside it
        inner = next(iter(top.walk()), top)
        if inner.operands and draw(st.booleans()):
            inner.operands = [top.results[0], *inner.operands[1:]]
    blocks = [block for op in top.walk() for region in op.regions for block in region.blocks]
    if blocks and draw(st.integers(0, 4)) == 0:  # a broken parent pointer
        block = draw(st.sampled_from(blocks))
        if draw(st.booleans()):
            block.parent = None
        elif block.parent is not None:
            block.parent.parent = None
    return top, isolated


@PROPERTY
@given(_isolation_nests())
def test_set_based_isolation_checks_answer_as_xdsl(nest: tuple[Operation, list[Operation]]) -> None:
    top, isolated = nest
    trait = IsolatedFromAbove()
    expected = [_outcome(trait.verify, op) for op in isolated]
    with set_based_isolation_checks():
        assert [_outcome(trait.verify, op) for op in isolated] == expected
        assert IsolatedFromAbove.verify is not _ORIGINAL_ISOLATED_VERIFY
    assert IsolatedFromAbove.verify is _ORIGINAL_ISOLATED_VERIFY  # xDSL's after the block
    del top


def test_isolation_violations_are_xdsls_errors() -> None:
    """A function reading a value of another function, and one reading its own result:
    both fail with xDSL's message under the set-based check."""
    outside = Block(arg_types=[i32])
    inner = test_dialect.TestOp([outside.args[0]], [i32])
    holder = _IsolatedOp.create(result_types=[i32], regions=[Region(Block([inner]))])
    own = test_dialect.TestOp([], [i32])
    selfish = _IsolatedOp.create(result_types=[i32], regions=[Region(Block([own]))])
    own.operands = [selfish.results[0]]
    for op in (holder, selfish):
        expected = _outcome(IsolatedFromAbove().verify, op)
        assert isinstance(expected, tuple) and "IsolatedFromAbove" in expected[1]
        with set_based_isolation_checks():
            assert _outcome(IsolatedFromAbove().verify, op) == expected


def test_isolation_with_a_broken_parent_pointer_is_xdsls() -> None:
    """A block (or its region) whose parent pointer is cleared: xDSL's parent chains from
    the values defined there no longer reach the isolated op, so reading them fails; the
    set-based check must not accept them because it reached the block from above."""
    for broken in ("block", "region"):
        block = Block(arg_types=[i32])
        user = test_dialect.TestOp([block.args[0]], [i32])
        block.add_op(user)
        holder = test_dialect.TestOp([], [], regions=[Region(block)])
        top = _IsolatedOp.create(result_types=[i32], regions=[Region(Block([holder]))])
        if broken == "block":
            block.parent = None
        else:
            holder.regions[0].parent = None
        expected = _outcome(IsolatedFromAbove().verify, top)
        assert isinstance(expected, tuple)
        with set_based_isolation_checks():
            assert _outcome(IsolatedFromAbove().verify, top) == expected
