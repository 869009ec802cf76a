"""`physlayout.verification`: verifying with indexed symbol lookups gives xDSL's answers.

Random modules (hypothesis) of functions, nested symbol tables and calls, some broken (a
missing callee, a duplicate name, a wrong operand type, a function without a name, a call
to a non-function): every `SymbolTable.lookup_symbol` answer and the outcome of verifying
(success, or the same exception and message) must be those of xDSL's uncached lookups.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr, f32, i32
from xdsl.ir import Block, Operation, Region
from xdsl.traits import SymbolTable

from physlayout.verification import indexed_symbol_lookups, verify_module

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
