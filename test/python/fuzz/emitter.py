"""The text layer of the buffer-level program generator (`fuzz.programs`): one
`func.func` as MLIR text, with the facts the checker needs about it.

`FunctionEmitter` holds what every pattern builds on: fresh SSA names and hoisted
constants; buffer parameters that appear as the body asks for them, each with a random
layout (`fuzz.layouts`; a texture layout where the axes allow, a memref layout map in
memref-typed programs); loop nests of the four kinds (`scf.for`, `affine.for`,
`scf.parallel`, `affine.parallel`, over full or partial ranges in any axis order);
`layout.load`/`layout.store` (or `memref.load`/`store`) at an iteration point, linearized
for flat 1-D views; random float expressions that are exact in every backend; and the
assembly of the function's text with its `FunctionInfo` (parameter types, the parameters it
writes, whether it allocates, calls or returns a value). The patterns (what a body
computes, allocations, aliases, calls) are `fuzz.programs.FunctionBuilder`, a subclass.

`Buf` is a buffer value a body can access: the iteration axes its axes follow, its view
shape, its layout and the storage it aliases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import prod

from fuzz.choices import Chooser
from fuzz.features import Features
from fuzz.layouts import Layout, fmt_float, memref_layout, random_layout, texture_layout

FLOAT_CONSTANTS = (0.5, 2.0, -1.5, 3.0)


@dataclass
class Buf:
    """A buffer value a function body can access: `axes` are the iteration axes its axes
    follow (a permutation for full buffers, fewer for broadcast/reduced ones); a `flat`
    buffer is a 1-D row-major view of that shape; `root` names its storage."""

    ref: str
    axes: tuple[int, ...]
    view_shape: tuple[int, ...]
    layout: Layout
    root: str
    flat: bool = False

    @property
    def shape(self) -> tuple[int, ...]:
        return (prod(self.view_shape),) if self.flat else self.view_shape

    @property
    def type(self) -> str:
        return self.layout.type_text(self.shape)

    @property
    def transformed(self) -> bool:
        return bool(self.layout.maps)


@dataclass
class FunctionInfo:
    """What the checker needs to know about a generated function."""

    name: str
    param_types: list[str]
    written_params: set[int]
    allocates: bool
    calls: bool
    result: bool


def arg_list(names: Sequence[str]) -> str:
    return ", ".join(names)


class FunctionEmitter:
    """Emits one `func.func`'s text: SSA names and constants, parameters (as the body asks
    for them), loop nests and accesses; `finish` assembles it with its `FunctionInfo`."""

    def __init__(
        self,
        c: Chooser,
        name: str,
        shape: tuple[int, ...],
        features: Features,
        used: set[str],
    ) -> None:
        self.c = c
        self.name = name
        self.shape = shape
        self.features = features
        self.used = used
        self.params: list[tuple[str, str]] = []
        self.param_bufs: list[Buf] = []
        self.bufs: list[Buf] = []
        self.lines: list[str] = []
        self.depth = 1
        self.counter = 0
        self.index_consts: dict[int, str] = {}
        self.float_consts: dict[float, str] = {}
        self.written: set[str] = set()
        self.allocates = False
        self.calls = False
        self.scalar: str | None = None
        self.result: str | None = None
        self.host_style = False
        """Kernels `physlayout run` can launch: no allocations, calls or results."""
        self.memref = False
        """Upstream memrefs with layout maps instead of `!layout.buffer`s (what
        `apply-layout` normalizes like `mlir-opt -normalize-memrefs`)."""
        self._closers: list[list[str]] = []
        """What closes each open loop nest, innermost nest last."""

    # Text helpers --------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"%{prefix}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    def index(self, value: int) -> str:
        if value not in self.index_consts:
            self.index_consts[value] = f"%c{value}" if value >= 0 else f"%cm{-value}"
        return self.index_consts[value]

    def fconst(self, value: float) -> str:
        if value not in self.float_consts:
            self.float_consts[value] = f"%f{len(self.float_consts)}"
        return self.float_consts[value]

    def arith(self, op: str, a: str, b: str, type_: str = "index") -> str:
        result = self.fresh("t" if type_ == "index" else "v")
        self.emit(f"{result} = arith.{op} {a}, {b} : {type_}")
        return result

    # Parameters -----------------------------------------------------------------------------

    def param_buffer(self, axes: tuple[int, ...], layout: Layout) -> Buf:
        name = f"%a{len(self.params)}"
        view = tuple(self.shape[a] for a in axes)
        buf = Buf(name, axes, view, layout, f"param{len(self.params)}")
        self.params.append((name, buf.type))
        self.param_bufs.append(buf)
        self.bufs.append(buf)
        return buf

    def param_of_type(self, type_text: str, template: Buf) -> Buf:
        name = f"%a{len(self.params)}"
        buf = replace(template, ref=name, root=f"param{len(self.params)}")
        self.params.append((name, type_text))
        self.param_bufs.append(buf)
        self.bufs.append(buf)
        return buf

    def scalar_param(self) -> str:
        if self.scalar is None:
            self.scalar = f"%s{len(self.params)}"
            self.params.append((self.scalar, "f32"))
        return self.scalar

    def random_layout_for(self, axes: tuple[int, ...], texture_ok: bool) -> Layout:
        with self.c.span():
            return self._random_layout_for(axes, texture_ok)

    def _random_layout_for(self, axes: tuple[int, ...], texture_ok: bool) -> Layout:
        view = [self.shape[a] for a in axes]
        if self.memref:
            return memref_layout(self.c, view, self.features, self.used)
        if texture_ok and axes and self.c.flag(30):
            layout = texture_layout(self.c, view, self.features, self.used)
            if layout is not None:
                return layout
        scope = "shared" if self.c.flag(5) else "global"
        layout = random_layout(self.c, view, self.features, scope, self.used)
        return layout

    def random_axes(self, full: bool) -> tuple[int, ...]:
        rank = len(self.shape)
        order = tuple(self.c.permutation(rank))
        if full or rank == 1 or not self.c.flag(30):
            return order
        drop = self.c.integer(0, rank - 1)
        return tuple(a for a in order if a != drop)

    def new_param(self, full: bool = True) -> Buf:
        axes = self.random_axes(full)
        return self.param_buffer(axes, self.random_layout_for(axes, texture_ok=True))

    # Loops --------------------------------------------------------------------------------

    def open_nest(
        self, kind: str, axes: Sequence[int], ranges: dict[int, tuple[int, int, int]]
    ) -> dict[int, str]:
        """Open a nest over `axes` (outermost first); returns the loop variables."""
        ivs = {a: self.fresh("i") for a in axes}
        if not axes:
            self._closers.append([])
            return ivs
        if kind in ("scf.parallel", "affine.parallel"):
            names = [ivs[a] for a in axes]
            lbs = [ranges[a][0] for a in axes]
            ubs = [ranges[a][1] for a in axes]
            steps = [ranges[a][2] for a in axes]
            n = len(axes)
            args = ", ".join(f"{v}: index" for v in names)
            if kind == "scf.parallel":
                operands = ", ".join(self.index(v) for v in [*lbs, *ubs, *steps])
                self.emit(
                    f'"scf.parallel"({operands}) <{{operandSegmentSizes = array<i32: {n}, {n}, {n}, 0>}}> ({{'
                )
                close = ["  scf.reduce", f"}}) : ({', '.join(['index'] * 3 * n)}) -> ()"]
            else:
                groups = f"dense<1> : vector<{n}xi32>"
                self.emit(
                    f'"affine.parallel"() <{{lowerBoundsGroups = {groups}, '
                    f"lowerBoundsMap = affine_map<() -> ({', '.join(map(str, lbs))})>, "
                    f"reductions = [], steps = [{', '.join(map(str, steps))}], "
                    f"upperBoundsGroups = {groups}, "
                    f"upperBoundsMap = affine_map<() -> ({', '.join(map(str, ubs))})>}}> ({{"
                )
                close = ['  "affine.yield"() : () -> ()', "}) : () -> ()"]
            self.emit(f"^bb0({args}):")
            self.depth += 1
            self._closers.append([close[0].strip(), close[1]])
            return ivs
        closers: list[str] = []
        for a in axes:
            lb, ub, step = ranges[a]
            if kind == "scf.for":
                self.emit(
                    f"scf.for {ivs[a]} = {self.index(lb)} to {self.index(ub)} step {self.index(step)} {{"
                )
            else:
                suffix = f" step {step}" if step != 1 else ""
                self.emit(f"affine.for {ivs[a]} = {lb} to {ub}{suffix} {{")
            self.depth += 1
            closers.append("}")
        self._closers.append(closers)
        return ivs

    def close_nest(self) -> None:
        closers = self._closers.pop()
        if len(closers) == 2 and closers[0] in ("scf.reduce", '"affine.yield"() : () -> ()'):
            self.emit(closers[0])
            self.depth -= 1
            self.emit(closers[1])
            return
        for closer in closers:
            self.depth -= 1
            self.emit(closer)

    # Accesses -------------------------------------------------------------------------------

    def indices(self, buf: Buf, point: dict[int, str]) -> list[str]:
        idx = [point[a] for a in buf.axes]
        if not buf.flat:
            return idx
        flat = idx[0] if idx else self.index(0)
        for k in range(1, len(idx)):
            scaled = self.arith("muli", flat, self.index(buf.view_shape[k]))
            flat = self.arith("addi", scaled, idx[k])
        return [flat]

    def load(self, buf: Buf, point: dict[int, str]) -> str:
        idx = self.indices(buf, point)
        value = self.fresh("v")
        if buf.layout.memref:
            self.emit(f"{value} = memref.load {buf.ref}[{arg_list(idx)}] : {buf.type}")
            return value
        self.emit(f"{value} = layout.load {buf.ref}[{arg_list(idx)}] : {buf.type}, f32")
        return value

    def store(self, value: str, buf: Buf, point: dict[int, str]) -> None:
        idx = self.indices(buf, point)
        if buf.layout.memref:
            self.emit(f"memref.store {value}, {buf.ref}[{arg_list(idx)}] : {buf.type}")
        else:
            self.emit(f"layout.store {value}, {buf.ref}[{arg_list(idx)}] : {buf.type}, f32")
        self.written.add(buf.root)

    def combine(self, values: list[str]) -> str:
        """A random float expression of `values` (exact in every backend: no
        transcendental functions)."""
        if not values:
            return self.fconst(self.c.choice(FLOAT_CONSTANTS))
        result = values[0]
        for value in values[1:]:
            op = self.c.choice(["addf", "mulf", "subf", "maximumf", "minimumf"])
            result = self.arith(op, result, value, "f32")
        if self.c.flag(30):
            op = self.c.choice(["mulf", "addf"])
            result = self.arith(op, result, self.fconst(self.c.choice(FLOAT_CONSTANTS)), "f32")
        if self.c.flag(10):
            negated = self.fresh("v")
            self.emit(f"{negated} = arith.negf {result} : f32")
            result = negated
        return result

    def shifted(self, point: dict[int, str], axis: int, delta: int) -> dict[int, str]:
        """`point` with `axis` moved by `delta`, clamped into range."""
        moved = self.arith("addi", point[axis], self.index(delta))
        bound = self.index(0) if delta < 0 else self.index(self.shape[axis] - 1)
        clamped = self.arith("maxsi" if delta < 0 else "minsi", moved, bound)
        return {**point, axis: clamped}

    def reversed_point(self, point: dict[int, str], axis: int) -> dict[int, str]:
        flipped = self.arith("subi", self.index(self.shape[axis] - 1), point[axis])
        return {**point, axis: flipped}

    # Results and assembly -------------------------------------------------------------------

    def result_from(self, ref: str, type_text: str, shape: Sequence[int]) -> None:
        point = ", ".join(self.index(self.c.integer(0, e - 1)) for e in shape)
        value = self.fresh("v")
        self.emit(f"{value} = layout.load {ref}[{point}] : {type_text}, f32")
        self.result = value

    def finish(self) -> tuple[str, FunctionInfo]:
        if (
            self.result is None
            and self.bufs
            and self.name != "main"
            and not self.host_style
            and self.c.flag(15)
        ):
            buf = self.c.choice(self.bufs)
            point = {
                a: self.index(self.c.integer(0, self.shape[a] - 1)) for a in range(len(self.shape))
            }
            self.result = self.load(buf, point)
        if self.result is not None:
            self.emit(f"func.return {self.result} : f32")
        else:
            self.emit("func.return")
        consts = [
            f"  {name} = arith.constant {value} : index"
            for value, name in sorted(self.index_consts.items())
        ] + [
            f"  {name} = arith.constant {fmt_float(value)} : f32"
            for value, name in self.float_consts.items()
        ]
        signature = ", ".join(f"{n}: {t}" for n, t in self.params)
        result = " -> f32" if self.result is not None else ""
        text = "\n".join(
            [f"func.func @{self.name}({signature}){result} {{", *consts, *self.lines, "}"]
        )
        by_ref = {b.ref: b for b in self.param_bufs}
        written_params = {
            position
            for position, (name, _) in enumerate(self.params)
            if name in by_ref and by_ref[name].root in self.written
        }
        info = FunctionInfo(
            self.name,
            [t for _, t in self.params],
            written_params,
            self.allocates,
            self.calls,
            self.result is not None,
        )
        return text, info
