"""Graph-level layout rewrites of the `layout` dialect (the Relax layout-transformation
design): `layout.transform`, `layout.pad` and `layout.crop` on static `tensor<...>` values.

Semantics (each op is pure and produces a new tensor):

- ``%r = layout.transform %t {index_map = #layout.index_map<M>[, pad_value = V]}``:
  ``r`` has shape ``transformed_shape([M], shape(t))`` (the extents a buffer with the
  pending transform ``M`` gets; ``T2(T1(t))`` has those of the list ``[M1, M2]``),
  ``r[M(i)] = t[i]`` for every index ``i`` of ``t``, and every other position of ``r``
  (the padding predicate of ``M``) holds ``V``.
  ``M`` must be injective on the box of ``t`` (proven with isl) and may carry no axis
  separators (a tensor has no physical axes). ``pad_value`` is required when ``M`` pads and
  must then be a constant of the element type; without padding it is allowed and ignored.
- ``%r = layout.pad %t {low = array<i64: ...>, high = array<i64: ...>, pad_value = V}``:
  ``r`` has extents ``low_k + shape_k + high_k``; ``r[i + low] = t[i]`` and every other
  position holds ``V`` (the seed's ``relax.pad`` with ``pad_width = [[low_k, high_k]]``).
- ``%r = layout.crop %t {start = array<i64: ...>, sizes = array<i64: ...>[, cropped_value =
  V | "undef"]}``: ``r = t[start : start + sizes]``. The optional ``cropped_value`` is a
  promise about the elements of ``t`` that are cropped away: they all equal ``V``, or
  (``"undef"``) they hold no meaningful value, so a later ``layout.pad`` may put them back
  with any value (the seed's ``T.undef``). Passes rely on the promise; the numpy evaluator
  checks a concrete ``V``.

All three ops print their properties in the attribute dictionary, as in MLIR:
``%r = layout.transform %t {index_map = #layout.index_map<(i) -> (i floordiv 4, i mod 4)>,
pad_value = 0.0 : f32} : tensor<10xf32> -> tensor<3x4xf32>``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from physlayout.dialects.layout import IndexMapAttr
from physlayout.indexing.extents import transformed_shape
from physlayout.indexing.index_map import IndexMap

UNDEF = "undef"
"""The `cropped_value` of a `layout.crop` whose cropped-away elements are undefined."""

ScalarAttr = FloatAttr | IntegerAttr
"""A scalar constant attribute (a pad value or a cropped value)."""


# Helpers ----------------------------------------------------------------------------------


def static_shape(value: SSAValue | Attribute) -> tuple[int, ...] | None:
    """The static shape of a tensor value or type, or None for anything else (including
    dynamic tensors)."""
    type_ = value.type if isinstance(value, SSAValue) else value
    if not isinstance(type_, TensorType):
        return None
    shape = tuple(type_.get_shape())
    if any(extent < 0 for extent in shape):
        return None
    return shape


def element_type(value: SSAValue | Attribute) -> Attribute | None:
    """The element type of a tensor value or type, or None."""
    type_ = value.type if isinstance(value, SSAValue) else value
    if not isinstance(type_, TensorType):
        return None
    return type_.get_element_type()


def scalar_value(attr: ScalarAttr) -> float | int:
    """The Python value of a scalar constant attribute."""
    return attr.value.data


def constant_scalar(value: SSAValue | None) -> ScalarAttr | None:
    """The scalar attribute of a value produced by `arith.constant`, else None."""
    if value is None:
        return None
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, ScalarAttr):
        return owner.value
    return None


def dense_attr(type_: TensorType, values: Sequence[float | int]) -> DenseIntOrFPElementsAttr:
    """A dense tensor constant of `type_` from row-major `values` (one value: a splat)."""
    return DenseIntOrFPElementsAttr.from_list(type_, values)  # pyright: ignore[reportCallIssue, reportArgumentType]


def same_scalar(a: Attribute | None, b: Attribute | None) -> bool:
    """Whether two scalar constants are the same value of the same type, bit for bit
    (``0.0`` and ``-0.0`` differ; a NaN equals the identical NaN)."""
    if not isinstance(a, ScalarAttr) or not isinstance(b, ScalarAttr) or a.type != b.type:
        return False
    if isinstance(a, FloatAttr) and isinstance(b, FloatAttr):
        return struct.pack("<d", a.value.data) == struct.pack("<d", b.value.data)
    return a.value.data == b.value.data


def i64_array(values: Sequence[int]) -> DenseArrayBase[IntegerType]:
    """`array<i64: ...>` of `values`."""
    return DenseArrayBase.from_list(i64, tuple(values))


def int_tuple(array: DenseArrayBase[IntegerType] | None) -> tuple[int, ...]:
    """The values of an integer dense array (empty for an absent optional property)."""
    return () if array is None else tuple(int(v) for v in array.get_values())


def _tensor_operands(op: Operation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The static shapes of the input and the result of a graph layout op (both tensors of
    the same element type), or a VerifyException naming the problem."""
    source, result = op.operands[0], op.results[0]
    in_shape, out_shape = static_shape(source), static_shape(result)
    if in_shape is None or out_shape is None:
        raise VerifyException(
            f"'{op.name}' expects statically shaped tensors, got {source.type} -> {result.type}"
        )
    if element_type(source) != element_type(result):
        raise VerifyException(
            f"'{op.name}' must keep the element type: {source.type} -> {result.type}"
        )
    return in_shape, out_shape


def _check_scalar(op: Operation, what: str, attr: Attribute, elt: Attribute | None) -> None:
    if not isinstance(attr, ScalarAttr) or attr.type != elt:
        raise VerifyException(f"'{op.name}' {what} must be a constant of type {elt}, got {attr}")


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(map(str, shape)) + "]"


# layout.transform ------------------------------------------------------------------------

_PASSED_TRANSFORMS: set[tuple[Attribute, Attribute, IndexMapAttr, Attribute | None]] = set()
"""(input type, result type, index map, pad value) of transforms that passed their checks
(`TransformOp.verify_`); forgotten past `_PASSED_LIMIT` entries."""

_PASSED_BY_IDENTITY: dict[tuple[int, ...], tuple[Attribute | None, ...]] = {}
"""The same, by the identity of the four attributes (held as the value, so no other object
takes their identity): an unchanged transform is found without hashing its map again."""

_PASSED_LIMIT = 4096


class TransformOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """`layout.transform`'s canonicalizations: a transform proven the identity on its input box
    folds to its input, and two adjacent transforms whose composition is proven the identity
    fold away."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from physlayout.dialects.canonicalization_patterns import (
            FoldIdentityTransform,
            FoldInverseTransforms,
        )

        return (FoldIdentityTransform(), FoldInverseTransforms())


class PadOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """`layout.pad`'s canonicalization: a pad whose low and high widths are all zero folds to its
    input."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from physlayout.dialects.canonicalization_patterns import FoldTrivialPad

        return (FoldTrivialPad(),)


class CropOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    """`layout.crop`'s canonicalization: a crop that keeps the whole tensor folds to its input."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from physlayout.dialects.canonicalization_patterns import FoldTrivialCrop

        return (FoldTrivialCrop(),)


@irdl_op_definition
class TransformOp(IRDLOperation):
    """`layout.transform`: rewrites a tensor into the layout of an IndexMap (padding
    positions hold `pad_value`)."""

    name = "layout.transform"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    index_map = prop_def(IndexMapAttr)
    pad_value = opt_prop_def(Attribute)

    traits = traits_def(Pure(), TransformOpHasCanonicalizationPatterns())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input: SSAValue,
        index_map: IndexMap,
        pad_value: Attribute | None = None,
        result_type: Attribute | None = None,
    ):
        if result_type is None:
            shape = static_shape(input)
            elt = element_type(input)
            if shape is None or elt is None:
                raise VerifyException(f"layout.transform needs a static tensor, got {input.type}")
            try:
                result_type = TensorType(elt, transformed_shape([index_map], shape))
            except ValueError as err:
                raise VerifyException(f"invalid layout.transform: {err}") from None
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"index_map": IndexMapAttr.from_map(index_map), "pad_value": pad_value},
        )

    @property
    def map(self) -> IndexMap:
        """The IndexMap of the transform."""
        return self.index_map.index_map

    def input_shape(self) -> tuple[int, ...]:
        """The static shape of the input tensor."""
        shape = static_shape(self.input)
        assert shape is not None
        return shape

    def result_shape(self) -> tuple[int, ...]:
        """The static shape of the result tensor."""
        shape = static_shape(self.result)
        assert shape is not None
        return shape

    def pads(self) -> bool:
        """Whether the transform has padding positions (decided exactly)."""
        return self.map.padding_predicate(self.input_shape()) is not None

    def verify_(self) -> None:
        """The checks of `_verify_uncached`, skipped for a transform whose input type, result
        type, index map and pad value (all it reads) equal those of one that passed them,
        or are the very same objects (the pipelines verify every transform after every
        pass; each check proves the map injective and computes its padding on the input
        box)."""
        key = (self.input.type, self.result.type, self.index_map, self.pad_value)
        identity = tuple(map(id, key))
        if identity in _PASSED_BY_IDENTITY:
            return
        try:
            passed = key in _PASSED_TRANSFORMS
        except TypeError:  # a pad value that cannot be hashed: always checked
            self._verify_uncached()
            return
        if not passed:
            self._verify_uncached()
        if len(_PASSED_BY_IDENTITY) >= _PASSED_LIMIT:
            _PASSED_TRANSFORMS.clear()
            _PASSED_BY_IDENTITY.clear()
        _PASSED_TRANSFORMS.add(key)
        _PASSED_BY_IDENTITY[identity] = key

    def _verify_uncached(self) -> None:
        in_shape, out_shape = _tensor_operands(self)
        imap = self.map
        if self.index_map.axis_separators:
            raise VerifyException(
                f"'{self.name}' index map {self.index_map.index_map.to_string(self.index_map.axis_separators)} "
                "carries axis separators ('|'); tensors have no physical axes"
            )
        if imap.ndim != len(in_shape):
            raise VerifyException(
                f"'{self.name}' index map {imap} expects {imap.ndim} indices but the input "
                f"{self.input.type} has rank {len(in_shape)}"
            )
        try:
            collision = imap.find_collision(in_shape)
            expected = tuple(transformed_shape([imap], in_shape))
            padding = imap.padding_predicate(in_shape) if collision is None else None
        except ValueError as err:
            raise VerifyException(f"'{self.name}' {err}") from None
        if collision is not None:
            first, second = collision
            raise VerifyException(
                f"'{self.name}' index map {imap} is not injective on shape "
                f"{_shape_text(in_shape)}: indices {first} and {second} have the same image"
            )
        if expected != out_shape:
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} does not match the shape "
                f"{_shape_text(expected)} of index map {imap} on {_shape_text(in_shape)}"
            )
        if self.pad_value is None:
            if padding is not None:
                raise VerifyException(
                    f"'{self.name}' index map {imap} introduces padding on shape "
                    f"{_shape_text(in_shape)} where {padding}; a pad_value is required"
                )
            return
        _check_scalar(self, "pad_value", self.pad_value, element_type(self.input))


# layout.pad ------------------------------------------------------------------------------


@irdl_op_definition
class PadOp(IRDLOperation):
    """`layout.pad`: surrounds a tensor with `low`/`high` elements of `pad_value` per
    dimension."""

    name = "layout.pad"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    low = prop_def(DenseArrayBase.constr(i64))
    high = prop_def(DenseArrayBase.constr(i64))
    pad_value = prop_def(Attribute)

    traits = traits_def(Pure(), PadOpHasCanonicalizationPatterns())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue, low: Sequence[int], high: Sequence[int], pad_value: Attribute
    ):
        shape = static_shape(input)
        elt = element_type(input)
        if shape is None or elt is None or len(low) != len(shape) or len(high) != len(shape):
            raise VerifyException(f"layout.pad needs one low/high width per dim of {input.type}")
        out = [lo + extent + hi for lo, extent, hi in zip(low, shape, high, strict=True)]
        super().__init__(
            operands=[input],
            result_types=[TensorType(elt, out)],
            properties={
                "low": i64_array(low),
                "high": i64_array(high),
                "pad_value": pad_value,
            },
        )

    def get_low(self) -> tuple[int, ...]:
        """Elements of padding before each dimension."""
        return int_tuple(self.low)

    def get_high(self) -> tuple[int, ...]:
        """Elements of padding after each dimension."""
        return int_tuple(self.high)

    def verify_(self) -> None:
        in_shape, out_shape = _tensor_operands(self)
        low, high = self.get_low(), self.get_high()
        if len(low) != len(in_shape) or len(high) != len(in_shape):
            raise VerifyException(
                f"'{self.name}' expects {len(in_shape)} low and high widths for "
                f"{self.input.type}, got {len(low)} and {len(high)}"
            )
        if any(w < 0 for w in (*low, *high)):
            raise VerifyException(
                f"'{self.name}' pad widths must be non-negative, got low = "
                f"{_shape_text(low)}, high = {_shape_text(high)}"
            )
        expected = tuple(lo + e + hi for lo, e, hi in zip(low, in_shape, high, strict=True))
        if expected != out_shape:
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} does not match the padded "
                f"shape {_shape_text(expected)}"
            )
        _check_scalar(self, "pad_value", self.pad_value, element_type(self.input))


# layout.crop -----------------------------------------------------------------------------


@irdl_op_definition
class CropOp(IRDLOperation):
    """`layout.crop`: the box ``[start, start + sizes)`` of a tensor, with an optional
    promise (`cropped_value`) about the elements cropped away."""

    name = "layout.crop"

    input = operand_def(TensorType)
    result = result_def(TensorType)
    start = prop_def(DenseArrayBase.constr(i64))
    sizes = prop_def(DenseArrayBase.constr(i64))
    cropped_value = opt_prop_def(Attribute)

    traits = traits_def(Pure(), CropOpHasCanonicalizationPatterns())
    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input: SSAValue,
        start: Sequence[int],
        sizes: Sequence[int],
        cropped_value: Attribute | None = None,
    ):
        elt = element_type(input)
        if elt is None:
            raise VerifyException(f"layout.crop needs a tensor, got {input.type}")
        super().__init__(
            operands=[input],
            result_types=[TensorType(elt, list(sizes))],
            properties={
                "start": i64_array(start),
                "sizes": i64_array(sizes),
                "cropped_value": cropped_value,
            },
        )

    def get_start(self) -> tuple[int, ...]:
        """The first index of the box kept, per dimension."""
        return int_tuple(self.start)

    def get_sizes(self) -> tuple[int, ...]:
        """The extents of the box kept (the result shape)."""
        return int_tuple(self.sizes)

    def is_undef(self) -> bool:
        """Whether the cropped-away elements are declared undefined."""
        return isinstance(self.cropped_value, StringAttr) and self.cropped_value.data == UNDEF

    def verify_(self) -> None:
        in_shape, out_shape = _tensor_operands(self)
        start, sizes = self.get_start(), self.get_sizes()
        if len(start) != len(in_shape) or len(sizes) != len(in_shape):
            raise VerifyException(
                f"'{self.name}' expects {len(in_shape)} start indices and sizes for "
                f"{self.input.type}, got {len(start)} and {len(sizes)}"
            )
        for axis, (s, n, extent) in enumerate(zip(start, sizes, in_shape, strict=True)):
            if s < 0 or n <= 0 or s + n > extent:
                raise VerifyException(
                    f"'{self.name}' window [{s}, {s + n}) on axis {axis} does not fit in "
                    f"extent {extent} (start must be >= 0, sizes > 0)"
                )
        if tuple(sizes) != out_shape:
            raise VerifyException(
                f"'{self.name}' result type {self.result.type} does not match the sizes "
                f"{_shape_text(sizes)}"
            )
        if self.cropped_value is None or self.is_undef():
            return
        elt = element_type(self.input)
        if not isinstance(self.cropped_value, ScalarAttr) or self.cropped_value.type != elt:
            raise VerifyException(
                f"'{self.name}' cropped_value must be a constant of type {elt} or "
                f'"{UNDEF}", got {self.cropped_value}'
            )
