"""Public functions of the breadth ops whose Python signature is not their schema's
(``torch/functional.py``, ``torch/_tensor.py``, the argument parser's overloads).

* ``sort``/``topk``/``kthvalue``/``median(dim)``/``aminmax`` return torch's named tuples
  (``.values``/``.indices``, ``.min``/``.max``);
* ``prod(x)`` / ``prod(x, dim)`` and ``median(x)`` / ``median(x, dim)`` pick the overload;
* ``einsum(eq, *operands)`` takes varargs (or one list), ``norm(x, p, dim)`` maps
  ``p="fro"`` to ``linalg_vector_norm``'s ``ord=2``, ``cross(a, b)`` without ``dim`` uses the
  first dim of size 3, as ``torch.cross`` does;
* ``count_nonzero``, ``take_along_dim``, ``meshgrid``, ``cdist``: torch's compositions, here as
  the op-table ops they decompose into (they record those ops in a graph).

``_api`` imports this module at its end; ``mtc.linalg`` is the namespace of ``vector_norm`` and
``cross``.
"""

from __future__ import annotations

import collections
import types

from .ops._ops import ops

_aten = ops.aten

sort_result = collections.namedtuple("sort", ["values", "indices"])
topk_result = collections.namedtuple("topk", ["values", "indices"])
kthvalue_result = collections.namedtuple("kthvalue", ["values", "indices"])
median_result = collections.namedtuple("median", ["values", "indices"])
aminmax_result = collections.namedtuple("aminmax", ["min", "max"])


def sort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return sort_result(*_aten.sort(input, dim, descending, stable=bool(stable)))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return _aten.argsort(input, dim, descending, stable=bool(stable))


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    return topk_result(*_aten.topk(input, k, dim, largest, sorted))


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    return kthvalue_result(*_aten.kthvalue(input, k, dim, keepdim))


def median(input, dim=None, keepdim=False):  # noqa: A002
    if dim is None:
        return _aten.median.default(input)
    return median_result(*_aten.median.dim(input, dim, keepdim))


def prod(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    if dim is None:
        return _aten.prod.default(input, dtype=dtype)
    return _aten.prod.dim_int(input, dim, keepdim, dtype=dtype)


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    dims = () if dim is None else dim
    return aminmax_result(input.amin(dims, keepdim), input.amax(dims, keepdim))


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _aten.einsum(equation, list(operands))


def tensordot(a, b, dims=2):
    """``dims`` an int (the last ``dims`` of ``a`` with the first of ``b``) or two lists."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    return _aten.tensordot(a, b, da, db)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):  # noqa: A002
    if p == "fro":
        p = 2
    if isinstance(p, str):
        raise NotImplementedError(f"norm(p={p!r}): only vector norms are supported")
    return _aten.linalg_vector_norm(input, p, dim, keepdim, dtype=dtype)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    return _aten.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)


def cross(input, other, dim=None):  # noqa: A002
    if dim is None:  # torch.cross's (deprecated) default: the first dim of size 3
        sizes = tuple(input.shape)
        dim = next((d for d, s in enumerate(sizes) if s == 3), -1)
    return _aten.linalg_cross(input, other, dim=dim)


def _linalg_cross(input, other, *, dim=-1):  # noqa: A002
    return _aten.linalg_cross(input, other, dim=dim)


linalg = types.SimpleNamespace(vector_norm=_vector_norm, cross=_linalg_cross,
                               __doc__="``torch.linalg``'s vector_norm and cross")


def unique(input, sorted=True, return_inverse=False, return_counts=False,  # noqa: A002
           dim=None):
    """``torch.unique``: the distinct values (``dim=None``: of the flattened input) or slices
    along ``dim``, with the inverse indices and the counts when asked for."""
    if dim is None:
        out, inverse, counts = _aten._unique2(input, sorted, return_inverse, return_counts)
    else:
        out, inverse, counts = _aten.unique_dim(input, dim, sorted, return_inverse,
                                                return_counts)
    extra = ([inverse] if return_inverse else []) + ([counts] if return_counts else [])
    return (out, *extra) if extra else out


def count_nonzero(input, dim=None):  # noqa: A002
    return (input != 0).sum(dim)


def take_along_dim(input, indices, dim=None):  # noqa: A002
    """``gather`` with ``indices`` broadcast against ``input`` (except along ``dim``); no
    ``dim``: of the flattened tensor."""
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    d = dim % max(input.ndim, 1)
    in_shape, idx_shape = list(input.shape), list(indices.shape)
    in_shape[d] = idx_shape[d] = 1
    from ._api import broadcast_shapes

    b = list(broadcast_shapes(tuple(in_shape), tuple(idx_shape)))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = indices.shape[d], input.shape[d]
    return input.expand(tuple(bx)).gather(d, indices.expand(tuple(bi)))


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    out = []
    for i, t in enumerate(flat):
        view = [1] * len(flat)
        view[i] = -1
        out.append(t.reshape(view).expand(shape))
    if swap:
        out[0], out[1] = out[1], out[0]
        out = [o.transpose(0, 1) for o in out]
    return tuple(out)


def cdist(x1, x2, p=2.0):
    """Pairwise ``p``-norm distances of the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M)."""
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _aten.linalg_vector_norm(diff, p, -1)


def bernoulli(input, p=None, *, generator=None):  # noqa: A002
    if p is None:
        return _aten.bernoulli.default(input, generator=generator)
    return _aten.bernoulli.p(input, p, generator=generator)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None):
    """torch's four forms: tensor/tensor, number/tensor, tensor/number, number/number + size."""
    from ._api import full_like
    from ._tensor import Tensor

    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() missing required argument 'size'")
        return _aten.normal.float_float(float(mean), float(std), tuple(size),
                                        generator=generator, dtype=dtype, device=device)
    if not isinstance(mean, Tensor):
        mean = full_like(std, mean)
    if not isinstance(std, Tensor):
        std = full_like(mean, std)
    return _aten.normal.Tensor_Tensor(mean, std)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002
    """torch's three forms: ``(input, int)``, ``(input, Tensor)`` and ``(repeats)``."""
    from ._tensor import Tensor

    if repeats is None:  # repeat_interleave(repeats): the index form
        return _aten.repeat_interleave.Tensor(input, output_size=output_size)
    if isinstance(repeats, Tensor):
        return _aten.repeat_interleave.self_Tensor(input, repeats, dim,
                                                   output_size=output_size)
    return _aten.repeat_interleave.self_int(input, repeats, dim, output_size=output_size)


def hstack(tensors):
    return _aten.hstack(list(tensors))


def vstack(tensors):
    return _aten.vstack(list(tensors))


def tile(input, dims):  # noqa: A002
    return _aten.tile(input, (dims,) if isinstance(dims, int) else tuple(dims))


def round(input, *, decimals=0):  # noqa: A001, A002 - torch's names
    """``round`` (half to even) or, with ``decimals``, ``round.decimals``: two overloads."""
    if decimals == 0:
        return _aten.round(input)
    return _aten.round.decimals(input, decimals=decimals)


def fix(input):  # noqa: A002
    return _aten.trunc(input)


# ---------------------------------------------------------------- torch's aliases and small
# composites (``torch/_refs``): the same op under another name, or two ops


def _api():
    from . import _api as A

    return A


def negative(input):  # noqa: A002
    return -input


def positive(input):  # noqa: A002
    if input.dtype.name == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def absolute(input):  # noqa: A002
    return input.abs()


def multiply(input, other):  # noqa: A002
    return input * other


def divide(input, other, *, rounding_mode=None):  # noqa: A002
    return _api().div(input, other, rounding_mode=rounding_mode)


true_divide = divide


def subtract(input, other, *, alpha=1):  # noqa: A002
    return _api().sub(input, other, alpha=alpha)


def greater(input, other):  # noqa: A002
    return input > other


def less(input, other):  # noqa: A002
    return input < other


def clip(input, min=None, max=None):  # noqa: A002
    return input.clamp(min, max)


def floor_divide(input, other):  # noqa: A002
    return _api().div(input, other, rounding_mode="floor")


def swapaxes(input, axis0, axis1):  # noqa: A002
    return input.transpose(axis0, axis1)


swapdims = swapaxes


def ravel(input):  # noqa: A002
    return input.reshape(-1)


def broadcast_to(input, size):  # noqa: A002
    return input.expand(*size)


def fliplr(input):  # noqa: A002
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input):  # noqa: A002
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def dot(input, tensor):  # noqa: A002
    """torch's checks and messages (dims, then dtypes, then sizes): ``_api_extra.dot``."""
    from ._api_extra import dot as _dot

    return _dot(input, tensor)


def mv(input, vec):  # noqa: A002
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, "
                           f"{vec.dim()}")
    return input.matmul(vec)


def inner(input, other):  # noqa: A002
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    return tensordot(input, other, dims=([input.dim() - 1], [other.dim() - 1]))


def ger(input, vec2):  # noqa: A002
    return _api().outer(input, vec2)


def logical_xor(input, other):  # noqa: A002
    return (input != 0) ^ (other != 0)


def fmax(input, other):  # noqa: A002
    """The larger, ignoring a NaN (NaN only where both are)."""
    A = _api()
    return A.where(input.isnan(), other, A.where(other.isnan(), input,
                                                  A.maximum(input, other)))


def fmin(input, other):  # noqa: A002
    A = _api()
    return A.where(input.isnan(), other, A.where(other.isnan(), input,
                                                  A.minimum(input, other)))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):  # noqa: A002
    if not input.dtype.is_floating_point:
        return input.clone()
    import numpy as np

    info = np.finfo(input.dtype.np)
    A = _api()
    out = A.where(input.isnan(), nan, input)
    out = A.where(out == float("inf"), float(info.max) if posinf is None else posinf, out)
    return A.where(out == float("-inf"), float(info.min) if neginf is None else neginf, out)


def nansum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    zeroed = _api().where(input.isnan(), 0, input) if input.dtype.is_floating_point else input
    return zeroed.sum(dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{input.dtype.name.capitalize()}")
    keep = ~input.isnan()
    return nansum(input, dim, keepdim, dtype=dtype) / keep.sum(dim, keepdim)


__all__ = ["negative", "positive", "absolute", "multiply", "divide", "true_divide",
           "subtract", "greater", "less", "clip", "floor_divide", "swapaxes", "swapdims",
           "ravel", "broadcast_to", "fliplr", "flipud", "dot", "mv", "inner", "ger",
           "logical_xor", "fmax", "fmin", "nan_to_num", "nansum", "nanmean", "round", "fix",
           "sort", "argsort", "topk", "kthvalue", "median", "prod", "aminmax",
           "einsum",
           "tensordot", "norm", "cross", "linalg", "count_nonzero", "unique", "take_along_dim",
           "meshgrid", "cdist", "hstack", "vstack", "tile", "bernoulli", "normal",
           "repeat_interleave"]
