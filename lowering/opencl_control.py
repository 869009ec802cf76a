"""Control flow of `-t opencl` below the NDRange: `scf.for`/`affine.for` (with `iter_args`
as C variables), sequential `scf.parallel`/`affine.parallel`, `scf.if` and the yields."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import affine, scf
from xdsl.ir import Operation, SSAValue

from physlayout.lowering.opencl_c import c_type
from physlayout.lowering.opencl_kernels import KernelWriter, fail
from physlayout.lowering.opencl_parallel import loop_dims


class ControlFlowWriter(KernelWriter):
    """Writes loops and conditionals as C statements inside one work-item."""

    def carry(self, op: Operation, inits: Sequence[SSAValue], args: Sequence[SSAValue]) -> list[str]:
        """Declare one C variable per carried value: loop block arg and result share it."""
        names: list[str] = []
        for init, arg, result in zip(inits, args, op.results, strict=True):
            name = self.name_of(result)
            self.c_names[arg] = name
            names.append(name)
            self.line(f"{c_type(result.type, self.at(op))} {name} = {self.expr(init)};")
        return names

    def emit_scf_for(self, op: scf.ForOp) -> None:
        body = op.body.block
        names = self.carry(op, list(op.iter_args), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lb, ub, step = self.expr(op.lb), self.expr(op.ub), self.expr(op.step)
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_affine_for(self, op: affine.ForOp) -> None:
        body = op.body.block
        names = self.carry(op, list(op.inits), list(body.args[1:]))
        iv = self.name_of(body.args[0], "i")
        lower_ops = list(op.lowerBoundOperands)
        upper_ops = list(op.upperBoundOperands)
        lower_map, upper_map = op.lowerBoundMap.data, op.upperBoundMap.data
        lowers = [self.affine_expr(e, lower_ops, lower_map.num_dims, op) for e in lower_map.results]
        uppers = [self.affine_expr(e, upper_ops, upper_map.num_dims, op) for e in upper_map.results]
        lb, ub = lowers[0], uppers[0]
        for other in lowers[1:]:
            lb = f"max({lb}, {other})"
        for other in uppers[1:]:
            ub = f"min({ub}, {other})"
        step = op.step.value.data
        self.open(f"for (int {iv} = {lb}; {iv} < {ub}; {iv} += {step})")
        self.carried.append(names)
        self.emit_block(body)
        self.carried.pop()
        self.close()

    def emit_parallel(self, op: scf.ParallelOp | affine.ParallelOp) -> None:
        dims = loop_dims(op)
        if dims is None:
            raise fail(
                self.at(op),
                "parallel loops need constant bounds and no reductions in the OpenCL target",
            )
        for dim in dims:
            name = self.name_of(dim.iv, "i")
            self.open(f"for (int {name} = {dim.lower}; {name} < {dim.upper}; {name} += {dim.step})")
        self.carried.append([])
        body = op.regions[0].blocks[0]
        for inner in body.ops:
            if inner is body.last_op:
                continue
            self.emit(inner)
        self.carried.pop()
        for _ in dims:
            self.close()

    def emit_if(self, op: scf.IfOp) -> None:
        names: list[str] = []
        for result in op.results:
            name = self.name_of(result)
            names.append(name)
            self.line(f"{c_type(result.type, self.at(op))} {name};")
        self.open(f"if ({self.expr(op.cond)})")
        self.carried.append(names)
        self.emit_block(op.true_region.blocks[0])
        if op.false_region.blocks and (
            len(op.false_region.blocks[0].ops) > 1 or names
        ):
            self.depth -= 1
            self.line("} else {")
            self.depth += 1
            self.emit_block(op.false_region.blocks[0])
        self.carried.pop()
        self.close()

    def emit_yield(self, op: Operation) -> None:
        names = self.carried[-1] if self.carried else []
        values = [self.expr(v) for v in op.operands]
        pairs = [(n, v) for n, v in zip(names, values, strict=True) if n != v]
        if len(pairs) <= 1:
            for name, value in pairs:
                self.line(f"{name} = {value};")
            return
        temps: list[str] = []
        for (name, value), operand in zip(pairs, op.operands, strict=False):
            temp = self.names.fresh(None, "t")
            temps.append(temp)
            self.line(f"{c_type(operand.type, self.at(op))} {temp} = {value};")
            del name
        for (name, _), temp in zip(pairs, temps, strict=True):
            self.line(f"{name} = {temp};")

