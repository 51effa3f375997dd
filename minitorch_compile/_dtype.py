"""Data types and torch's type-promotion rules.

Mirrors ``torch/_prims_common`` (``elementwise_dtypes``) and ``c10/core/ScalarType.h``.

A ``dtype`` is a small record naming a numpy dtype and a *category* — bool < integer <
floating.  Promotion follows torch, which is *not* numpy's rule:

* operands fall into three tiers: tensors with ``ndim > 0``, zero-dim tensors, and Python
  numbers ("wrapped numbers");
* the result category is the highest category of any operand;
* within the category, a higher tier decides: ``float32[3] + float64[]`` is ``float32``, and
  ``int64[3] + 2.5`` is the *default* float dtype (``float32``), not ``float64``;
* across categories the float type wins outright: ``int64 + float16 -> float16``;
* ``uint8`` is an integer: ``uint8 + int32 -> int32``, ``uint8 + bool -> uint8``,
  ``uint8 + int8 -> int16`` (the smallest type holding both),
  ``uint8[3] + 300`` stays ``uint8`` (and wraps, as torch does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BOOL, INTEGRAL, FLOATING = 0, 1, 2


@dataclass(frozen=True, eq=False)
class dtype:
    """A tensor element type (``mtc.float32`` ...). Compared by identity, like torch's."""

    name: str
    np: np.dtype
    category: int
    itemsize: int

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    def __repr__(self) -> str:
        return f"mtc.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.dtype(np.float16), FLOATING, 2)
float32 = dtype("float32", np.dtype(np.float32), FLOATING, 4)
float64 = dtype("float64", np.dtype(np.float64), FLOATING, 8)
int32 = dtype("int32", np.dtype(np.int32), INTEGRAL, 4)
int64 = dtype("int64", np.dtype(np.int64), INTEGRAL, 8)
uint8 = dtype("uint8", np.dtype(np.uint8), INTEGRAL, 1)
int8 = dtype("int8", np.dtype(np.int8), INTEGRAL, 1)
int16 = dtype("int16", np.dtype(np.int16), INTEGRAL, 2)
bool_ = dtype("bool", np.dtype(np.bool_), BOOL, 1)

half, float, double = float16, float32, float64  # noqa: A001 - torch aliases
int, long = int32, int64  # noqa: A001
short = int16

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, float32, float64)
# c10's ScalarType names, which torch's error messages use ("not implemented for 'Float'")
SCALAR_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                     "int32": "Int", "int64": "Long",
                     "float16": "Half", "float32": "Float", "float64": "Double"}


def wrap_int(value: int, npd):
    """A Python int as the integer dtype ``npd`` computes with it: out-of-range values wrap
    around, as torch converts a wrapped number (``uint8_tensor + 300`` adds 44); numpy would
    raise ``OverflowError`` instead."""
    info = np.iinfo(npd)
    if info.min <= value <= info.max:
        return value
    if not -(1 << 63) <= value < (1 << 64):
        raise OverflowError("int too big to convert")
    bits = 8 * np.dtype(npd).itemsize
    wrapped = value & ((1 << bits) - 1)
    if info.min < 0 and wrapped > info.max:
        wrapped -= 1 << bits
    return npd.type(wrapped)


def scalar_type_name(d: dtype) -> str:
    return SCALAR_TYPE_NAMES[d.name]

_FROM_NP = {d.np: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}


def _by_name(name: str) -> dtype:
    return _BY_NAME[name]


_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


def from_numpy_dtype(npd) -> dtype:
    """The mtc dtype of a numpy dtype; unsupported ones raise like ``torch.from_numpy``."""
    d = _FROM_NP.get(np.dtype(npd))
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(npd)}. The only supported types are: "
            "float64, float32, float16, int64, int32, int16, int8, uint8, and bool."
        )
    return d


def to_dtype(d) -> dtype:
    """Accept an mtc dtype, a numpy dtype, or a Python type (``float``, ``int``, ``bool``)."""
    if isinstance(d, dtype):
        return d
    if d is builtins_float:
        return float64
    if d is builtins_int:
        return int64
    if d is builtins_bool:
        return bool_
    return from_numpy_dtype(d)


import builtins as _builtins  # noqa: E402

builtins_float, builtins_int, builtins_bool = _builtins.float, _builtins.int, _builtins.bool


def scalar_category(x) -> int:
    """Category of a Python number (bool is its own category, as in torch)."""
    if isinstance(x, (builtins_bool, np.bool_)):
        return BOOL
    if isinstance(x, (builtins_int, np.integer)):  # numpy integers count as ints, as in torch
        return INTEGRAL
    return FLOATING


def default_dtype_for_category(cat: int) -> dtype:
    return (bool_, int64, _default_float)[cat]


def promote_types(a: dtype, b: dtype) -> dtype:
    """``torch.promote_types``: the higher category wins; within one, the wider type."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return _FROM_NP[np.promote_types(a.np, b.np)]


def result_type(*operands) -> dtype:
    """``torch.result_type`` over tensors (anything with ``.dtype`` and ``.ndim``) and numbers."""
    dim_dt = zero_dt = None
    wrapped_cat = -1
    for x in operands:
        dt = getattr(x, "dtype", None)
        if isinstance(dt, dtype):
            if x.ndim > 0:
                dim_dt = dt if dim_dt is None else promote_types(dim_dt, dt)
            else:
                zero_dt = dt if zero_dt is None else promote_types(zero_dt, dt)
        elif x is not None:
            wrapped_cat = max(wrapped_cat, scalar_category(x))
    result = dim_dt
    if zero_dt is not None and (result is None or zero_dt.category > result.category):
        result = zero_dt
    if wrapped_cat >= 0 and (result is None or wrapped_cat > result.category):
        result = default_dtype_for_category(wrapped_cat)
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result
