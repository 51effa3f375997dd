"""Meta helpers shared by the op table's rules: broadcasting, dim wrapping, reductions' dims,
type-promotion kinds and ``elementwise_dtypes`` (``torch/_prims_common/__init__.py``).

They compute output metadata from input metadata only — shapes, dims, dtypes — never data, so
eager kernels, meta rules (fake tensors) and Inductor's lowerings all use the same ones, and
all raise torch's messages (``MetaError`` for a shape/dtype error).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import _dtype

# elementwise type-promotion kinds (torch/_prims_common ELEMENTWISE_TYPE_PROMOTION_KIND)
DEFAULT = "default"  # promote inputs, compute and return in that dtype
INT_TO_FLOAT = "int_to_float"  # integer/bool inputs compute in the default float dtype
ALWAYS_BOOL = "always_bool"  # compute in the promoted dtype, return bool
NO_PROMOTION = "no_promotion"  # result dtype = self's dtype
# ``promotion`` may also be a function of the call's arguments returning one of these kinds, for
# ops whose kind depends on a flag (``div``: INT_TO_FLOAT, but DEFAULT with a rounding_mode).


class TensorMeta(NamedTuple):
    shape: tuple
    dtype: _dtype.dtype


class MetaError(RuntimeError):
    """A shape/dtype error raised by a meta rule (the message is torch's)."""


def broadcast_shapes(*shapes) -> tuple:
    """Numpy/torch broadcasting of shapes, with torch's error message.

    Pairwise, as torch's fake ``infer_size``: for each dim from the right, with the sizes
    ``a`` (so far) and ``b`` (1 where a shape has no such dim) — is ``a`` 1? then ``b``; else is
    ``b`` 1? then ``a``; else they must be equal.  With symbolic sizes each question may be a
    guard: ``x * 2`` with ``x`` reshaped to an int argument ``n`` guards ``n != 1``, as in
    torch (a tensor's dynamic size is known ``>= 2``: no guard)."""
    out: tuple = ()
    for k, s in enumerate(shapes):
        if k == 0:
            out = tuple(s)
            continue
        ndim = max(len(out), len(s))
        sizes = []
        for j in range(ndim):
            a = out[j - ndim + len(out)] if j >= ndim - len(out) else 1
            b = s[j - ndim + len(s)] if j >= ndim - len(s) else 1
            if a == 1:
                sizes.append(b)
            elif b == 1 or a == b:
                sizes.append(a)
            else:
                raise MetaError(
                    f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {j}")
        out = tuple(sizes)
    return out


def wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__}")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def reduction_dims(dim, ndim: int) -> tuple:
    """``dim=None``/``[]`` means all dims; ints are wrapped; duplicates are an error.

    A 0-dim tensor accepts ``dim=0``/``-1`` (as torch does) but has no axis to reduce: ``()``.
    """
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        repeated = next(d for i, d in enumerate(out) if d in out[:i])
        raise MetaError(f"dim {repeated} appears multiple times in the list of dims")
    return out if ndim else ()


def reduced_shape(shape, dims, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def promotion_kind(promotion, args: tuple) -> str:
    """The promotion kind of one call (``promotion`` is a kind, or a function of the args)."""
    return promotion(*args) if callable(promotion) else promotion


def elementwise_dtypes(promotion: str, *operands) -> tuple[_dtype.dtype, _dtype.dtype]:
    """(compute dtype, result dtype) of a pointwise op, as torch's ``elementwise_dtypes``."""
    if promotion == NO_PROMOTION:
        d = operands[0].dtype
        return d, d
    promoted = _dtype.result_type(*operands)
    if promotion == DEFAULT:
        return promoted, promoted
    if promotion == INT_TO_FLOAT:
        if not promoted.is_floating_point:
            promoted = _dtype.get_default_dtype()
        return promoted, promoted
    if promotion == ALWAYS_BOOL:
        return promoted, _dtype.bool_
    raise ValueError(f"unknown promotion kind {promotion!r}")


def check_int_fits(value, dtype: _dtype.dtype) -> None:
    """torch's error for a number that an integer dtype cannot hold (``full``, ``clamp``)."""
    if dtype.category == _dtype.INTEGRAL and type(value) is int:
        info = np.iinfo(dtype.np)
        if not info.min <= value <= info.max:
            raise MetaError(f"value cannot be converted to type {dtype.name}_t without "
                            "overflow")
