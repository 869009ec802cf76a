"""Random BUFFER-LEVEL programs (MLIR text) for the differential checker.

`generate_program(chooser, features)` builds a module of one to three kernels over one
random iteration shape (extents include 1 and primes), and sometimes a host `@main` that
allocates buffers and calls the kernels (the shape `physlayout run` executes). `programs()`
is the same generator as a Hypothesis strategy.

Buffers carry random layouts (`fuzz.layouts`: transforms, pad values, axis separators,
shared and texture scopes); `fuzz.emitter.FunctionEmitter` writes the text (parameters,
loop nests, accesses), and `FunctionBuilder` here adds the patterns a body is made of.

Kernel bodies are loop nests (`scf.for`, `affine.for`, `scf.parallel`, `affine.parallel`,
over full or partial ranges in any axis order) built from patterns: elementwise maps with
broadcasts, transposed and reversed reads, guards (`scf.if`) and double stores; fills from a
scalar parameter; delinearized single loops (`divui`/`remui`); `iter_args` reductions;
texel loops (`c = c4 * 4 + lane`, what `vectorize-texels` matches); `vector<4xf32>` loads
and stores of four innermost elements; and patterns whose
iterations communicate through memory: scans `y[i] = y[i - 1] + x[i]` (in the buffer or
carried in `iter_args`), in-place reversals, in-place stencils and last-writer-wins stores.
Scratch buffers are `layout.allocate` + `layout.decl_buffer` (initialized by a full write
first: upstream `memref.alloc` is not zeroed), with aliases: a second declaration, a flat
1-D view, a view at an element offset, and flat views of parameters through `layout.data`.
Kernels may call earlier kernels; `@main` only allocates and calls. Some programs are
*host style* (kernels without allocations, calls or results: what `physlayout run`
launches), some use upstream `memref`s with affine layout maps instead of buffers (what
`apply-layout` normalizes like `mlir-opt -normalize-memrefs`; `memref.load`/`store`).

Choices are made through a `Chooser` (`fuzz.choices`), with spans around every
repeated part, so a recorded program can be regenerated and shrunk.

Every program is valid by construction: it parses, verifies, passes `verify-buffers` and
runs in the numpy evaluator without out-of-bounds accesses (the checker counts violations
as generator bugs), except that the item-9 switch adds deliberately invalid aliases.
Features that hit bugs being fixed on other branches are switched by `Features`
(`fuzz.features`: one switch per item of issue 12, and one per new bug this checker found);
`Features.safe()` turns them all off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from math import prod

from hypothesis import strategies as st

from fuzz.choices import Chooser, DrawChooser
from fuzz.emitter import FLOAT_CONSTANTS, Buf, FunctionEmitter, FunctionInfo, arg_list
from fuzz.features import Features
from fuzz.layouts import MAX_ELEMENTS, Layout

EXTENTS = (1, 2, 3, 4, 5, 7, 8, 11, 12, 13)
"""Iteration extents: 1, primes, powers of two and multiples of 4 (texture channels)."""
LOOP_KINDS = ("scf.for", "affine.for", "scf.parallel", "affine.parallel")
SEQUENTIAL = ("scf.for", "affine.for")


@dataclass
class Program:
    """A generated module: its text, per-function facts and the features it used."""

    text: str
    functions: list[FunctionInfo]
    features_used: set[str] = field(default_factory=set[str])
    choices: list[int] = field(default_factory=list[int])
    spans: list[tuple[int, int]] = field(default_factory=list[tuple[int, int]])


class FunctionBuilder(FunctionEmitter):
    """Emits one `func.func` from random patterns (`statement`), calls and buffers."""

    # Buffers --------------------------------------------------------------------------------

    def allocate(self, axes: tuple[int, ...]) -> Buf:
        """A scratch buffer over a new allocation (fully written before any other use)."""
        self.allocates = True
        layout = self.random_layout_for(axes, texture_ok=True)
        if self.c.flag(10) and not layout.is_texture:
            layout = replace(layout, scope="local")
        view = tuple(self.shape[a] for a in axes)
        ptr = self.fresh("p")
        ref = self.fresh("b")
        offset = 0
        if not layout.is_texture and self.c.flag(15) and (not layout.maps or self.c.flag(10)):
            offset = self.c.integer(1, 5)
            total = offset + layout.storage_elements(view)
            self.emit(f"{ptr} = layout.allocate [{total}] : {layout.ptr_text()}")
        else:
            extents = ", ".join(map(str, view))
            self.emit(f"{ptr} = layout.allocate [{extents}] : {layout.ptr_text()}")
        buf = Buf(ref, axes, view, layout, ptr)
        at = f" offset {offset}" if offset else ""
        self.emit(f"{ref} = layout.decl_buffer {ptr}{at} : {layout.ptr_text()} -> {buf.type}")
        if offset:
            buf.root = f"{ptr}+{offset}"
        self.full_write(buf)
        self.bufs.append(buf)
        return buf

    def dead_invalid_alias(self, param: Buf) -> None:
        """(item 9) An unused declaration past the end of a parameter's storage: the op
        verifier cannot see the parameter's size, `verify-buffers` can."""
        if param.layout.is_texture:
            return
        self.used.add("item9_dead_invalid_aliases")
        handle, dead = self.fresh("h"), self.fresh("dead")
        size = param.layout.storage_elements(param.shape)
        self.emit(f"{handle} = layout.data {param.ref} : {param.type} -> {param.layout.ptr_text()}")
        self.emit(
            f"{dead} = layout.decl_buffer {handle} offset {size} : {param.layout.ptr_text()} "
            f"-> !layout.buffer<{size}xf32{_scope_suffix(param.layout.scope)}>"
        )

    def alias(self, source: Buf) -> Buf | None:
        """A second declaration over `source`'s storage: the same type, a flat 1-D view, or
        (item 2) the physical view of transformed storage."""
        if "+" in source.root:
            return None
        kind = self.c.choice(["same", "flat", "physical"])
        if source.root.startswith("param"):
            handle = self.fresh("h")
            self.emit(
                f"{handle} = layout.data {source.ref} : {source.type} -> {source.layout.ptr_text()}"
            )
        else:
            handle = source.root
        if kind == "same" and not source.root.startswith("param"):
            ref = self.fresh("b")
            self.emit(
                f"{ref} = layout.decl_buffer {handle} : {source.layout.ptr_text()} -> {source.type}"
            )
            alias = replace(source, ref=ref)
        elif kind == "flat" or not source.transformed:
            if source.transformed or source.layout.is_texture or source.flat:
                return None
            layout = Layout(scope=source.layout.scope)
            alias = Buf(self.fresh("b"), source.axes, source.view_shape, layout, source.root, True)
            self.emit(
                f"{alias.ref} = layout.decl_buffer {handle} : {layout.ptr_text()} -> {alias.type}"
            )
        else:
            if not self.features.item2_physical_views or source.layout.physical is None:
                return None
            if prod(source.layout.physical) != prod(source.shape):
                return None  # a padded physical view does not fit the logical storage
            self.used.add("item2_physical_views")
            physical = source.layout.physical
            layout = Layout(scope=source.layout.scope)
            if source.layout.is_texture:
                return None
            ref = self.fresh("b")
            type_text = layout.type_text(physical)
            self.emit(f"{ref} = layout.decl_buffer {handle} : {layout.ptr_text()} -> {type_text}")
            # Read-only: a physical view is only ever read (one constant element).
            self.result_from(ref, layout.type_text(physical), physical)
            return None
        self.bufs.append(alias)
        return alias

    # Nest patterns ------------------------------------------------------------------------------

    def ranges(self, partial: bool) -> dict[int, tuple[int, int, int]]:
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        if partial:
            a = self.c.integer(0, len(self.shape) - 1)
            ranges[a] = (self.c.integer(0, 1), self.shape[a], self.c.choice([1, 2, 3]))
        return ranges

    def readable(self, exclude_root: str | None = None) -> list[Buf]:
        return [b for b in self.bufs if b.root != exclude_root]

    def full_bufs(self) -> list[Buf]:
        rank = len(self.shape)
        return [b for b in self.bufs if len(b.axes) == rank]

    def dependent_target_ok(self, buf: Buf) -> bool:
        if buf.transformed and not self.features.item1_loop_dependences:
            return False
        if buf.transformed:
            self.used.add("item1_loop_dependences")
        return True

    def loop_kind(self, parallel_ok: bool) -> str:
        return self.c.choice(LOOP_KINDS if parallel_ok else SEQUENTIAL)

    def invariant(self) -> list[str]:
        """(item 5) Scalars loaded before the nest, used inside it."""
        if not self.features.item5_invariant_loads or not self.bufs or not self.c.flag(15):
            return []
        self.used.add("item5_invariant_loads")
        buf = self.c.choice(self.bufs)
        point = {
            a: self.index(self.c.integer(0, self.shape[a] - 1)) for a in range(len(self.shape))
        }
        return [self.load(buf, point)]

    def full_write(self, out: Buf) -> None:
        """Write every element of `out` (an elementwise map or a fill)."""
        sources = [b for b in self.readable(out.root) if self.c.flag(50)][:2]
        self.elementwise(out, sources, partial=False, in_place=False)

    def elementwise(self, out: Buf, sources: list[Buf], partial: bool, in_place: bool) -> None:
        extra = self.invariant()
        kind = self.loop_kind(parallel_ok=True)
        axes = self.c.permutation(len(self.shape))
        point = self.open_nest(kind, axes, self.ranges(partial))
        values = [self.load(b, self.maybe_moved(b, point)) for b in sources]
        if in_place:
            values.append(self.load(out, point))
        if not values and self.c.flag(40):
            values.append(self.scalar_param())
        value = self.combine(values + extra)
        if self.c.flag(15):
            value = self.guarded(point, value)
        if self.c.flag(10):
            self.store(self.combine([value]), out, point)
        self.store(value, out, point)
        self.close_nest()

    def maybe_moved(self, buf: Buf, point: dict[int, str]) -> dict[int, str]:
        """Read a source at the point, reversed along one axis, or shifted (clamped)."""
        if not self.c.flag(30):
            return point
        axis = self.c.choice(buf.axes) if buf.axes else 0
        if not buf.axes:
            return point
        if self.c.flag(50):
            return self.reversed_point(point, axis)
        return self.shifted(point, axis, self.c.choice([-1, 1]))

    def guarded(self, point: dict[int, str], value: str) -> str:
        axis = self.c.integer(0, len(self.shape) - 1)
        cond = self.fresh("t")
        bound = self.index(self.c.integer(0, self.shape[axis]))
        self.emit(f"{cond} = arith.cmpi slt, {point[axis]}, {bound} : index")
        result = self.fresh("v")
        other = self.combine([value])
        self.emit(f"{result} = scf.if {cond} -> (f32) {{")
        self.emit(f"  scf.yield {value} : f32")
        self.emit("} else {")
        self.emit(f"  scf.yield {other} : f32")
        self.emit("}")
        return result

    def scan(self, y: Buf, x: Buf | None) -> None:
        """y[p] = y[p - e_axis] (clamped at 0) + x[p]: a flow dependence along `axis`."""
        axis = self.c.integer(0, len(self.shape) - 1)
        axes = self.c.permutation(len(self.shape))
        point = self.open_nest(self.loop_kind(False), axes, self.ranges(False))
        previous = self.load(y, self.shifted(point, axis, -1))
        values = [previous] + ([self.load(x, point)] if x is not None else [])
        self.store(self.combine(values), y, point)
        self.close_nest()

    def iter_scan(self, y: Buf, x: Buf) -> None:
        """A running sum carried in `iter_args` along the innermost loop, stored at every
        step (a carried dependence through iter_args)."""
        axis = self.c.integer(0, len(self.shape) - 1)
        outer = [a for a in self.c.permutation(len(self.shape)) if a != axis]
        kind = self.loop_kind(False)
        point = self.open_nest(kind, outer, self.ranges(False))
        acc, init, iv = self.fresh("v"), self.fconst(0.0), self.fresh("i")
        result = self.fresh("v")
        extent = self.shape[axis]
        if kind == "scf.for":
            self.emit(
                f"{result} = scf.for {iv} = {self.index(0)} to {self.index(extent)} step "
                f"{self.index(1)} iter_args({acc} = {init}) -> (f32) {{"
            )
        else:
            self.emit(
                f"{result} = affine.for {iv} = 0 to {extent} iter_args({acc} = {init}) -> (f32) {{"
            )
        self.depth += 1
        inner = {**point, axis: iv}
        total = self.arith("addf", acc, self.load(x, inner), "f32")
        self.store(total, y, inner)
        self.emit(f"{'scf' if kind == 'scf.for' else 'affine'}.yield {total} : f32")
        self.depth -= 1
        self.emit("}")
        self.close_nest()

    def reverse_in_place(self, y: Buf) -> None:
        axis = self.c.integer(0, len(self.shape) - 1)
        point = self.open_nest(
            self.loop_kind(False), self.c.permutation(len(self.shape)), self.ranges(False)
        )
        value = self.load(y, self.reversed_point(point, axis))
        self.store(self.combine([value]), y, point)
        self.close_nest()

    def stencil(self, out: Buf, source: Buf) -> None:
        """out[p] = f(source[p - e], source[p], source[p + e]) (clamped); in place when
        `out` is `source` (a dependence in both directions)."""
        axis = self.c.integer(0, len(self.shape) - 1)
        in_place = out is source
        kind = self.loop_kind(parallel_ok=not in_place)
        point = self.open_nest(
            kind, self.c.permutation(len(self.shape)), self.ranges(self.c.flag(30))
        )
        values = [
            self.load(source, self.shifted(point, axis, -1)),
            self.load(source, point),
            self.load(source, self.shifted(point, axis, 1)),
        ]
        self.store(self.combine(values), out, point)
        self.close_nest()

    def last_writer(self, y: Buf, x: Buf) -> None:
        """Every iteration along one axis stores to the same element of `y` (the last
        writer wins): `y[..., c, ...] = x[p]` with a constant on that axis."""
        axis = self.c.integer(0, len(self.shape) - 1)
        point = self.open_nest(
            self.loop_kind(False), self.c.permutation(len(self.shape)), self.ranges(self.c.flag(30))
        )
        value = self.combine([self.load(x, point)])
        target = {**point, axis: self.index(self.c.integer(0, self.shape[axis] - 1))}
        self.store(value, y, target)
        self.close_nest()

    def reduce(self, out: Buf, x: Buf) -> None:
        """out[q] = sum over the dropped axis of x (an iter_args reduction per point)."""
        (axis,) = [a for a in range(len(self.shape)) if a not in out.axes]
        kind = self.loop_kind(parallel_ok=True)
        point = self.open_nest(kind, list(out.axes), self.ranges(False))
        acc, iv, result = self.fresh("v"), self.fresh("i"), self.fresh("v")
        init = self.fconst(self.c.choice([0.0, *FLOAT_CONSTANTS]))
        extent = self.shape[axis]
        if self.c.flag(50):
            self.emit(
                f"{result} = scf.for {iv} = {self.index(0)} to {self.index(extent)} step "
                f"{self.index(1)} iter_args({acc} = {init}) -> (f32) {{"
            )
            yield_op = "scf.yield"
        else:
            self.emit(
                f"{result} = affine.for {iv} = 0 to {extent} iter_args({acc} = {init}) -> (f32) {{"
            )
            yield_op = "affine.yield"
        self.depth += 1
        value = self.load(x, {**point, axis: iv})
        total = self.arith(self.c.choice(["addf", "maximumf"]), acc, value, "f32")
        self.emit(f"{yield_op} {total} : f32")
        self.depth -= 1
        self.emit("}")
        self.store(result, out, point)
        self.close_nest()

    def delinearized(self, out: Buf, sources: list[Buf]) -> None:
        """One loop over every element; the indices come from `divui`/`remui` (or the
        signed forms) of the linear position."""
        total = prod(self.shape)
        kind = self.loop_kind(parallel_ok=True)
        point1 = self.open_nest(kind, [0], {0: (0, total, 1)})
        linear = point1[0]
        point: dict[int, str] = {}
        rest = linear
        signed = self.c.flag(50)
        for a in reversed(range(len(self.shape))):
            extent = self.index(self.shape[a])
            if a == 0:
                point[a] = rest
                break
            point[a] = self.arith("remsi" if signed else "remui", rest, extent)
            rest = self.arith("divsi" if signed else "divui", rest, extent)
        values = [self.load(b, point) for b in sources]
        self.store(self.combine(values), out, point)
        self.close_nest()

    def vector_loop(self, out: Buf, sources: list[Buf]) -> None:
        """`vector<4xf32>` loads and stores of four consecutive innermost elements
        (`c = c4 * 4`), elementwise vector arithmetic; sources whose innermost axis is
        another iteration axis are read as scalars and broadcast."""
        axis = out.axes[-1]
        kind = self.loop_kind(parallel_ok=True)
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        ranges[axis] = (0, self.shape[axis] // 4, 1)
        point = self.open_nest(kind, self.c.permutation(len(self.shape)), ranges)
        full = {**point, axis: self.arith("muli", point[axis], self.index(4))}
        values: list[str] = []
        for source in sources:
            if source.axes and source.axes[-1] == axis and not source.flat:
                value = self.fresh("v")
                idx = arg_list(self.indices(source, full))
                self.emit(
                    f"{value} = layout.load {source.ref}[{idx}] : {source.type}, vector<4xf32>"
                )
            else:
                scalar = self.load(source, full)
                value = self.fresh("v")
                self.emit(f"{value} = vector.broadcast {scalar} : f32 to vector<4xf32>")
            values.append(value)
        if not values:
            value = self.fresh("v")
            self.emit(f"{value} = vector.broadcast {self.scalar_param()} : f32 to vector<4xf32>")
            values.append(value)
        result = values[0]
        for value in values[1:]:
            op = self.c.choice(["addf", "mulf", "maximumf"])
            result = self.arith(op, result, value, "vector<4xf32>")
        idx = arg_list(self.indices(out, full))
        self.emit(f"layout.store {result}, {out.ref}[{idx}] : {out.type}, vector<4xf32>")
        self.written.add(out.root)
        self.close_nest()

    def texel_loop(self, out: Buf, sources: list[Buf]) -> None:
        """The channel axis (innermost of a texture buffer) as `c4` and a lane loop
        `scf.for %l = 0 to 4`, `c = c4 * 4 + l`."""
        channel = out.axes[-1]
        blocks = self.shape[channel] // 4
        outer = [a for a in self.c.permutation(len(self.shape)) if a != channel]
        kind = self.loop_kind(parallel_ok=True)
        ranges = {a: (0, e, 1) for a, e in enumerate(self.shape)}
        ranges[channel] = (0, blocks, 1)
        point = self.open_nest(kind, [*outer, channel], ranges)
        lane = self.fresh("i")
        self.emit(f"scf.for {lane} = {self.index(0)} to {self.index(4)} step {self.index(1)} {{")
        self.depth += 1
        scaled = self.arith("muli", point[channel], self.index(4))
        full = {**point, channel: self.arith("addi", scaled, lane)}
        values = [self.load(b, full) for b in sources]
        self.store(self.combine(values), out, full)
        self.depth -= 1
        self.emit("}")
        self.close_nest()

    # Statements ---------------------------------------------------------------------------------

    def statement(self, callees: Sequence[Callee]) -> None:
        c = self.c
        kind = c.choice(
            [
                "elementwise",
                "elementwise",
                "fill",
                "reduce",
                "scan",
                "iter_scan",
                "reverse",
                "stencil",
                "last_writer",
                "delinearize",
                "texel",
                "vector",
                "call",
                "alloc",
                "alias",
            ]
        )
        if self.memref and kind in ("alloc", "alias"):
            kind = "elementwise"
        full = self.full_bufs()
        if kind == "call" and callees and not self.host_style:
            self.call(c.choice(list(callees)))
            return
        if kind == "alloc" and len(self.bufs) < 6 and not self.host_style:
            self.allocate(self.random_axes(full=True))
            return
        if kind == "alias" and self.features.item9_dead_invalid_aliases and c.flag(15):
            self.dead_invalid_alias(c.choice(self.param_bufs))
            return
        if kind == "alias" and self.bufs:
            self.alias(c.choice(self.bufs))
            return
        out = c.choice(full) if full and c.flag(70) else self.new_param()
        if len(out.axes) != len(self.shape):
            out = self.new_param()
        others = self.readable(out.root)
        if not others or c.flag(20):
            others = [*others, self.new_param(full=False)]
        source = c.choice(others)
        if kind == "fill":
            self.elementwise(out, [], partial=c.flag(30), in_place=False)
        elif kind == "reduce" and len(self.shape) > 1:
            drop = c.integer(0, len(self.shape) - 1)
            axes = tuple(a for a in out.axes if a != drop)
            target = self.param_buffer(axes, self.random_layout_for(axes, texture_ok=True))
            self.reduce(target, out if len(source.axes) != len(self.shape) else source)
        elif kind in ("scan", "iter_scan", "reverse", "stencil", "last_writer"):
            self.dependent(kind, out, source)
        elif kind == "delinearize" and not source.flat:
            self.delinearized(out, [source] if len(source.axes) else [])
        elif kind == "texel" and out.layout.is_texture and self.shape[out.axes[-1]] % 4 == 0:
            self.texel_loop(out, [source])
        elif (
            kind == "vector"
            and not self.memref
            and not out.flat
            and self.shape[out.axes[-1]] % 4 == 0
        ):
            self.vector_loop(out, [source])
        else:
            in_place = c.flag(25)
            sources = [source] + ([c.choice(others)] if c.flag(30) else [])
            self.elementwise(out, sources, partial=c.flag(25), in_place=in_place)

    def dependent(self, kind: str, out: Buf, source: Buf) -> None:
        """A nest whose iterations communicate through memory (or iter_args)."""
        if not self.dependent_target_ok(out):
            out = self.param_buffer(out.axes, Layout(memref=self.memref))
        if kind == "scan":
            self.scan(out, source)
        elif kind == "iter_scan":
            self.iter_scan(out, source)
        elif kind == "reverse":
            self.reverse_in_place(out)
        elif kind == "stencil":
            self.stencil(out, out if self.c.flag(50) else source)
        else:
            target = out
            self.last_writer(target, source)

    def call(self, callee: Callee) -> None:
        """Call `callee` with buffers of its parameter types (parameters of this function,
        scratch buffers, or (item 6) views at an offset)."""
        self.calls = True
        args: list[str] = []
        for position, (type_text, template) in enumerate(callee.params):
            if template is None:
                args.append(self.scalar_param() if self.c.flag(50) else self.fconst(2.0))
                continue
            same = [b for b in self.bufs if b.type == type_text and b.ref not in args]
            if same and self.c.flag(60):
                buf = self.c.choice(same)
            elif self.memref:
                buf = self.param_of_type(type_text, template)
            elif (
                self.features.item6_offset_alias_calls
                and self.c.flag(15)
                and not template.layout.is_texture
            ):
                self.used.add("item6_offset_alias_calls")
                buf = self.offset_view(template)
            elif self.c.flag(30):
                buf = self.scratch_like(template, initialize=self.name != "main")
            else:
                buf = self.param_of_type(type_text, template)
            if position in callee.written:
                self.written.add(buf.root)
            args.append(buf.ref)
        types = ", ".join(t for t, _ in callee.params)
        result = " -> f32" if callee.result else " -> ()"
        prefix = f"{self.fresh('v')} = " if callee.result else ""
        self.emit(f"{prefix}func.call @{callee.name}({arg_list(args)}) : ({types}){result}")

    def scratch_like(self, template: Buf, initialize: bool) -> Buf:
        """A scratch buffer of `template`'s type over a new allocation (a host function
        leaves it as allocated: zero-filled)."""
        self.allocates = True
        ptr, ref = self.fresh("p"), self.fresh("b")
        extents = ", ".join(map(str, template.shape))
        self.emit(f"{ptr} = layout.allocate [{extents}] : {template.layout.ptr_text()}")
        buf = replace(template, ref=ref, root=ptr)
        self.emit(f"{ref} = layout.decl_buffer {ptr} : {template.layout.ptr_text()} -> {buf.type}")
        if initialize:
            self.full_write(buf)
        self.bufs.append(buf)
        return buf

    def offset_view(self, template: Buf) -> Buf:
        self.allocates = True
        ptr, ref = self.fresh("p"), self.fresh("b")
        offset = self.c.integer(1, 4)
        size = template.layout.storage_elements(template.shape) + offset
        self.emit(f"{ptr} = layout.allocate [{size}] : {template.layout.ptr_text()}")
        buf = replace(template, ref=ref, root=f"{ptr}+{offset}")
        self.emit(
            f"{ref} = layout.decl_buffer {ptr} offset {offset} : {template.layout.ptr_text()} -> {buf.type}"
        )
        self.bufs.append(buf)
        return buf


def _scope_suffix(scope: str) -> str:
    return "" if scope == "global" else f', scope = "{scope}"'


@dataclass
class Callee:
    """A generated function others may call: parameter types (with a template buffer, or
    None for a scalar), the positions it writes, whether it returns a value."""

    name: str
    params: list[tuple[str, Buf | None]]
    written: set[int]
    result: bool


def _callee(builder: FunctionBuilder, info: FunctionInfo) -> Callee:
    by_ref = {b.ref: b for b in builder.param_bufs}
    params = [(t, by_ref.get(n)) for n, t in builder.params]
    return Callee(info.name, params, info.written_params, info.result)


def random_shape(c: Chooser) -> tuple[int, ...]:
    rank = c.integer(1, 3)
    shape = [c.choice(EXTENTS) for _ in range(rank)]
    while prod(shape) > MAX_ELEMENTS:
        shape[shape.index(max(shape))] = max(1, max(shape) // 2)
    return tuple(shape)


def generate_program(c: Chooser, features: Features | None = None) -> Program:
    """A random buffer-level module (see the module docstring)."""
    features = features or Features()
    used: set[str] = set()
    shape = random_shape(c)
    texts: list[str] = []
    infos: list[FunctionInfo] = []
    callees: list[Callee] = []
    host_style = c.flag(40)
    memref_style = c.flag(15)
    for k in c.repeat(1, 3, 50):
        builder = FunctionBuilder(c, f"k{k}", shape, features, used)
        builder.host_style = host_style
        builder.memref = memref_style
        builder.new_param()
        for _ in c.repeat(1, 4, 65):
            builder.statement(callees)
        text, info = builder.finish()
        texts.append(text)
        infos.append(info)
        callees.append(_callee(builder, info))
    if c.flag(30):
        main = FunctionBuilder(c, "main", shape, features, used)
        main.memref = memref_style
        for _ in c.repeat(1, 3, 50):
            main.call(c.choice(callees))
        text, info = main.finish()
        texts.append(text)
        infos.append(info)
    return Program("\n\n".join(texts) + "\n", infos, used, list(c.choices), list(c.spans))


@st.composite
def programs(draw: st.DrawFn, features: Features | None = None) -> Program:
    """Hypothesis strategy: random buffer-level programs (see `generate_program`)."""
    return generate_program(DrawChooser(draw), features)
