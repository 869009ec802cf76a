"""`MemoizedDeadCodeElimination` (the `dce` of the declared pipelines) erases exactly what
xDSL's `dce` erases: on random functions (pure, reading, writing, allocating and unknown ops,
nested `scf.for` loops, CFG loops) and on a
model's IR before the adreno pipeline's last `dce`. Its memos cannot answer for IR that
changed: a second run after a change erases what the change made dead, and the per-class
trait facts are read again when a class's traits are replaced."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def
from xdsl.parser import Parser
from xdsl.traits import IsTerminator
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from physlayout.runtime.opencl import module_text
from physlayout.transforms.dead_code import MemoizedDeadCodeElimination, never_dead
from physlayout.universe import make_context

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def _both(text: str) -> tuple[str, str]:
    """The module `text` after xDSL's `dce` and after the memoized one."""
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    theirs, ours = module.clone(), module.clone()
    DeadCodeElimination().apply(ctx, theirs)
    MemoizedDeadCodeElimination().apply(ctx, ours)
    ours.verify()
    return module_text(theirs), module_text(ours)


@st.composite
def _function(draw: st.DrawFn) -> str:
    """A random function over a memref `%m`, floats and an `i1`: straight-line ops of every
    effect kind, nested `scf.for` loops carrying a float, and optionally a CFG loop."""
    lines: list[str] = []
    count = [0]

    def fresh() -> str:
        count[0] += 1
        return f"%v{count[0]}"

    def body(floats: list[str], depth: int) -> list[str]:
        out: list[str] = []
        for _ in range(draw(st.integers(0, 5))):
            kind = draw(st.sampled_from(["add", "load", "store", "alloc", "call", "for"]))
            a, b = draw(st.sampled_from(floats)), draw(st.sampled_from(floats))
            name = fresh()
            if kind == "add":
                out.append(f"{name} = arith.addf {a}, {b} : f32")
                floats.append(name)
            elif kind == "load":
                out.append(f"{name} = memref.load %m[%i] : memref<4xf32>")
                floats.append(name)
            elif kind == "store":
                out.append(f"memref.store {a}, %m[%i] : memref<4xf32>")
            elif kind == "alloc":
                out.append(f"{name} = memref.alloc() : memref<4xf32>")
                if draw(st.booleans()):
                    out.append(f"memref.store {a}, {name}[%i] : memref<4xf32>")
            elif kind == "call":
                out.append(f"{name} = func.call @opaque({a}) : (f32) -> f32")
                floats.append(name)
            elif depth < 3:
                acc = fresh()
                inner = body([*floats, acc], depth + 1)
                yielded = draw(st.sampled_from([acc, *floats]))
                head = f"{name} = scf.for %k{name[2:]} = %c0 to %c4 step %c1"
                out.append(f"{head} iter_args({acc} = {a}) -> (f32) {{")
                out.extend(f"  {line}" for line in inner)
                out.append(f"  scf.yield {yielded} : f32")
                out.append("}")
                floats.append(name)
        return out

    entry = body(["%f"], 0)
    lines += ["%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index"]
    lines += ["%c4 = arith.constant 4 : index", *entry]
    if draw(st.booleans()):  # a CFG loop: the carried value is live only through the back edge
        lines.append("cf.br ^loop(%f : f32)")
        loop = body(["%x"], 1)
        next_value = draw(st.sampled_from(["%x", "%f"]))
        tail = [*loop, f"%next = arith.addf {next_value}, %f : f32"]
        tail.append("cf.cond_br %b, ^loop(%next : f32), ^exit")
        lines += ["^loop(%x: f32):", *tail, "^exit:"]
    lines.append("func.return")
    text = "\n    ".join(lines)
    return (
        "func.func private @opaque(f32) -> f32\n"
        "func.func @f(%m: memref<4xf32>, %f: f32, %i: index, %b: i1) {\n"
        f"    {text}\n}}\n"
    )


@settings(max_examples=120, deadline=None)
@given(_function())
def test_random_functions_lose_the_ops_xdsl_dce_erases(text: str) -> None:
    theirs, ours = _both(text)
    assert ours == theirs


def test_a_cfg_loop_keeps_what_its_back_edge_carries() -> None:
    """The value carried around the loop is used only by the back edge (and the store of
    the next iteration): it stays, the unused add goes."""
    text = """
    func.func @f(%m: memref<4xf32>, %f: f32, %i: index, %b: i1) {
      %dead = arith.addf %f, %f : f32
      cf.br ^loop(%f : f32)
    ^loop(%x: f32):
      memref.store %x, %m[%i] : memref<4xf32>
      %next = arith.addf %x, %f : f32
      cf.cond_br %b, ^loop(%next : f32), ^exit
    ^exit:
      func.return
    }
    """
    theirs, ours = _both(text)
    assert ours == theirs
    assert ours.count("arith.addf") == 1 and "arith.addf %f, %f" not in ours


def test_the_model_ir_before_the_last_dce_loses_the_same_ops() -> None:
    """bottleneck through the adreno pipeline without its last `dce`: both passes erase the
    same ops (the lane loops' leftovers)."""
    from physlayout.lowering.pipelines import PhyslayoutAdrenoPass
    from physlayout.runtime.opencl import parse_module

    module = parse_module((MODELS / "bottleneck.mlir").read_text())
    ctx = make_context()
    passes = PhyslayoutAdrenoPass().passes()
    assert isinstance(passes[-1], MemoizedDeadCodeElimination)
    for one in passes[:-1]:
        one.apply(ctx, module)
    theirs, ours = _both(module_text(module))
    assert ours == theirs
    assert len(ours) < len(module_text(module))  # it did erase something


def test_a_second_run_after_a_change_erases_what_the_change_made_dead() -> None:
    """No memo outlives a run: once the only store of a loaded value is erased, the next run
    erases the load that the first kept."""
    text = """
    func.func @f(%m: memref<4xf32>, %i: index) {
      %v = memref.load %m[%i] : memref<4xf32>
      memref.store %v, %m[%i] : memref<4xf32>
      func.return
    }
    """
    ctx = make_context()
    module: ModuleOp = Parser(ctx, text).parse_module()
    dce = MemoizedDeadCodeElimination()
    dce.apply(ctx, module)
    assert "memref.load" in module_text(module)
    store = next(op for op in module.walk() if op.name == "memref.store")
    store.detach()
    store.erase()
    dce.apply(ctx, module)
    assert "memref.load" not in module_text(module)


def test_class_facts_follow_a_replaced_trait_set() -> None:
    """`never_dead` reads a class's traits once, and again when they are replaced
    (`OpTraits.add_trait`), never an answer for the old set."""

    @irdl_op_definition
    class Plain(IRDLOperation):
        name = "test.plain_for_dce"
        traits = traits_def()

    assert not never_dead(Plain)
    Plain.traits.add_trait(IsTerminator())
    assert never_dead(Plain)
