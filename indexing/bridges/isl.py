"""Quasi-affine expressions <-> isl (islpy): maps, sets, affs and constraints.

Every function here works on positional spaces: the inputs of an index map are named
``x0, x1, ...`` in isl and the outputs ``i0, i1, ...`` (our dimension names never reach isl,
so they cannot clash with isl keywords). Every isl failure is re-raised as ValueError.
islpy is imported by the functions that call it: the text-only ones (`expr_to_isl`,
`conjunction_to_isl`, the names) do not load it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from physlayout.indexing.quasi_affine import Add, CeilDiv, Const, Dim, Expr, FloorDiv, Mod, Mul
from physlayout.indexing.simplify import simplify

if TYPE_CHECKING:
    import islpy as isl

IslConstraint = tuple[Expr, bool]
"""``(expr, is_equality)``: ``expr == 0`` if `is_equality` else ``expr >= 0``."""


@contextmanager
def isl_errors(what: str) -> Iterator[None]:
    """Re-raise `isl.Error` raised inside the block as ValueError naming `what`."""
    import islpy as isl

    try:
        yield
    except isl.Error as err:
        raise ValueError(f"isl failed while {what}: {err}") from None


def input_names(count: int) -> list[str]:
    """isl names of the inputs of a map: x0, x1, ..."""
    return [f"x{k}" for k in range(count)]


def output_names(count: int) -> list[str]:
    """isl names of the outputs of a map (and of the transformed box): i0, i1, ..."""
    return [f"i{k}" for k in range(count)]


def expr_to_isl(expr: Expr, names: Mapping[str, str]) -> str:
    """Print `expr` in isl syntax, renaming dimensions through `names`."""
    match expr:
        case Dim(name=name):
            return names[name]
        case Const(value=value):
            return str(value)
        case Add(lhs=lhs, rhs=rhs):
            return f"({expr_to_isl(lhs, names)} + {expr_to_isl(rhs, names)})"
        case Mul(lhs=Const(value=c), rhs=other) | Mul(lhs=other, rhs=Const(value=c)):
            return f"({c} * ({expr_to_isl(other, names)}))"
        case FloorDiv(lhs=lhs, divisor=k):
            return f"floor(({expr_to_isl(lhs, names)})/{k})"
        case CeilDiv(lhs=lhs, divisor=k):
            return f"floor(({expr_to_isl(lhs, names)} + {k - 1})/{k})"
        case Mod(lhs=lhs, divisor=k):
            return f"(({expr_to_isl(lhs, names)}) mod {k})"
        case _:
            raise ValueError(f"not a quasi-affine expression: {expr!r}")


def box_constraints(names: Sequence[str], shape: Sequence[int]) -> list[str]:
    """isl constraints ``0 <= name <= extent - 1`` for each name."""
    return [f"0 <= {name} <= {extent - 1}" for name, extent in zip(names, shape, strict=True)]


def _braces(space: str, constraints: Sequence[str]) -> str:
    if not constraints:
        return f"{{ {space} }}"
    return f"{{ {space} : {' and '.join(constraints)} }}"


def build_map(
    initial: Sequence[str], final: Sequence[Expr], shape: Sequence[int] | None
) -> isl.Map:
    """The isl map ``{ [x...] -> [i...] : i_j = final_j(x) }``, with domain the box
    ``0 <= x_k < shape_k`` when `shape` is given, else all of Z^n."""
    import islpy as isl

    ins = input_names(len(initial))
    outs = output_names(len(final))
    rename = dict(zip(initial, ins, strict=True))
    constraints = [
        f"{out} = {expr_to_isl(expr, rename)}" for out, expr in zip(outs, final, strict=True)
    ]
    if shape is not None:
        constraints += box_constraints(ins, shape)
    text = _braces(f"[{', '.join(ins)}] -> [{', '.join(outs)}]", constraints)
    with isl_errors(f"building the isl map {text}"):
        return isl.Map(text)


def build_box(shape: Sequence[int], names: Sequence[str] | None = None) -> isl.Set:
    """The isl set ``{ [i...] : 0 <= i_k < shape_k }``."""
    import islpy as isl

    names = list(names) if names is not None else output_names(len(shape))
    text = _braces(f"[{', '.join(names)}]", box_constraints(names, shape))
    with isl_errors(f"building the isl set {text}"):
        return isl.Set(text)


def build_set(names: Sequence[str], shape: Sequence[int], disjuncts: str) -> isl.Set:
    """The isl set of the box over `names` intersected with the isl formula `disjuncts`."""
    import islpy as isl

    constraints = [*box_constraints(names, shape), f"({disjuncts})"]
    text = _braces(f"[{', '.join(names)}]", constraints)
    with isl_errors(f"building the isl set {text}"):
        return isl.Set(text)


def val_to_int(val: isl.Val) -> int:
    """An integral isl value as a Python int."""
    result = val.to_python()
    if not isinstance(result, int):
        raise ValueError(f"expected an integer from isl, got {val}")
    return result


def _int_coef(val: isl.Val, denominator: isl.Val) -> int:
    """``val * denominator`` as an int (the numerator coefficient of a rational aff)."""
    return val_to_int(val.mul(denominator))


def _linear_expr(terms: Sequence[tuple[int, Expr]], const: int) -> Expr:
    """``sum(c * e) + const`` as an expression (zero coefficients dropped)."""
    result: Expr = Const(const)
    for coef, expr in terms:
        if coef:
            result = result + expr * coef
    return result


def aff_to_expr(aff: isl.Aff, names: Sequence[str]) -> Expr:
    """Convert an isl affine expression (with floor divisions) over a set space whose
    dimensions are called `names` into an `Expr` (not simplified).

    A rational aff ``num / d`` is converted to ``num floordiv d``: isl only produces such
    affs where their value is integral, so both agree there.
    """
    with isl_errors(f"converting {aff}"):
        divs = local_divs(aff.get_domain_local_space(), names)
        return _aff_with_divs(aff, names, divs)


def local_divs(space: isl.LocalSpace, names: Sequence[str]) -> list[Expr]:
    """The integer divisions of a local space as expressions; division k may use the
    divisions before it."""
    import islpy as isl

    divs: list[Expr] = []
    with isl_errors("converting integer divisions"):
        for k in range(space.dim(isl.dim_type.div)):
            divs.append(_aff_with_divs(space.get_div(k), names, divs))
    return divs


def _aff_with_divs(aff: isl.Aff, names: Sequence[str], divs: Sequence[Expr]) -> Expr:
    """``floor(aff)`` given the expressions of (at least the used) divisions of its space."""
    import islpy as isl

    denominator = aff.get_denominator_val()
    terms: list[tuple[int, Expr]] = [
        (_int_coef(aff.get_coefficient_val(isl.dim_type.in_, k), denominator), Dim(name))
        for k, name in enumerate(names)
    ]
    for k, div in enumerate(divs):
        terms.append((_int_coef(aff.get_coefficient_val(isl.dim_type.div, k), denominator), div))
    for k in range(len(divs), aff.dim(isl.dim_type.div)):
        if not aff.get_coefficient_val(isl.dim_type.div, k).is_zero():
            raise ValueError(f"isl division {k} of {aff} refers to a later division")
    numerator = _linear_expr(terms, _int_coef(aff.get_constant_val(), denominator))
    den = val_to_int(denominator)
    return numerator if den == 1 else numerator // den


def set_to_disjuncts(iset: isl.Set, names: Sequence[str]) -> tuple[tuple[IslConstraint, ...], ...]:
    """Describe `iset` as a union of conjunctions of constraints over `names`.

    Existentially quantified variables are made explicit divisions first (isl
    ``compute_divs``), so every constraint is a quasi-affine expression of `names`,
    simplified, and compared with 0.
    """
    with isl_errors(f"describing {iset}"):
        explicit = iset.compute_divs()
        basic_sets = explicit.get_basic_sets()
    return tuple(_basic_set_constraints(bset, names) for bset in basic_sets)


def _basic_set_constraints(bset: isl.BasicSet, names: Sequence[str]) -> tuple[IslConstraint, ...]:
    import islpy as isl

    result: list[IslConstraint] = []
    with isl_errors(f"describing {bset}"):
        for constraint in bset.get_constraints():
            divs = local_divs(constraint.get_local_space(), names)
            terms: list[tuple[int, Expr]] = [
                (val_to_int(constraint.get_coefficient_val(isl.dim_type.set, k)), Dim(name))
                for k, name in enumerate(names)
            ]
            terms += [
                (val_to_int(constraint.get_coefficient_val(isl.dim_type.div, k)), div)
                for k, div in enumerate(divs)
            ]
            const = val_to_int(constraint.get_constant_val())
            expr = simplify(_linear_expr(terms, const))
            result.append((expr, bool(constraint.is_equality())))
    return tuple(result)


def pieces(pma: isl.PwMultiAff) -> list[tuple[isl.Set, isl.MultiAff]]:
    """The pieces ``(domain, multi_aff)`` of a piecewise multi-affine function."""
    found: list[tuple[isl.Set, isl.MultiAff]] = []

    def collect(domain: isl.Set, multi_aff: isl.MultiAff) -> None:
        found.append((domain, multi_aff))

    with isl_errors("listing the pieces of an isl function"):
        pma.foreach_piece(collect)
    return found


def point_coordinates(point: isl.Point, count: int) -> list[int]:
    """The first `count` coordinates of an isl point."""
    import islpy as isl

    with isl_errors("reading an isl point"):
        return [val_to_int(point.get_coordinate_val(isl.dim_type.set, k)) for k in range(count)]


def conjunction_to_isl(conjunction: Sequence[IslConstraint], names: Sequence[str]) -> str:
    """``c1 and c2 ...`` in isl syntax over the isl names `names` (``0 = 0`` when empty);
    the inverse of one conjunction of `set_to_disjuncts`."""
    identity = {name: name for name in names}
    parts = [f"{expr_to_isl(e, identity)} {'=' if eq else '>='} 0" for e, eq in conjunction]
    return " and ".join(parts) or "0 = 0"
