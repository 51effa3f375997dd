"""Writes along one dim at a vector of indices: ``index_add``, ``index_copy``, ``index_fill``,
and the reducing scatter ``scatter_reduce``.

Mirrors ``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` and the ``derivatives.yaml`` rows
of the same names.  With ``d`` the dim and ``idx`` a 1-D int64/int32 index::

    index_add(x, d, idx, src, alpha)  out[..., idx[j], ...] += alpha * src[..., j, ...]
    index_copy(x, d, idx, src)        out[..., idx[j], ...]  = src[..., j, ...]
    index_fill(x, d, idx, value)      out[..., idx[j], ...]  = value
    scatter_reduce(x, d, idx, src, r) out[i with i_d -> idx[i]] (r)= src[i]   (idx: x's rank)

Kernels move ``d`` to the front (a view) and use numpy's unbuffered ``ufunc.at``, so repeated
indices accumulate — no per-element Python.  ``scatter_reduce``'s ``include_self=False``
first resets every written position to the reduction's identity.

Gradients: ``index_add`` passes ``grad`` to ``self`` and ``alpha * grad.index_select`` to
``source``; ``index_copy``/``index_fill`` zero the written rows of ``self``'s gradient
(``index_fill(grad, 0)``).  ``scatter_reduce``'s ``sum``/``mean`` are linear; ``amax``/``amin``
share the gradient evenly among the elements equal to the result (torch's rule); ``prod``'s
is "the product of everything else", recomputed with the differentiated zero replaced by 1
(torch's formula, exact with zeros).
All run as Inductor fallback kernels.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .gather_scatter import _check_index_dtype, _check_same_rank, _index_grid, _pad_to
from .table import INDEXING, OP_TABLE, MetaError, TensorMeta, _define_inplace, defop, wrap_dim

# ---------------------------------------------------------------- shared checks


def _check_index_vector(name, self, dim, index):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    _check_index_dtype(name, index, "int32 or int64")
    return d


def _check_source(name, self, d, index, source):
    if source.dtype is not self.dtype:
        raise MetaError(f"{name}(): self ({_dtype.scalar_type_name(self.dtype)}) and source "
                        f"({_dtype.scalar_type_name(source.dtype)}) must have the same scalar "
                        "type")
    n = index.numel()
    src_n = source.shape[d] if source.ndim else 1
    if n != src_n:
        raise IndexError(f"{name}(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({src_n})")
    if max(source.ndim, 1) != max(self.ndim, 1) or any(
            s != t for k, (s, t) in enumerate(zip(source.shape, self.shape)) if k != d):
        raise MetaError(f"{name}(): Source/destination tensor must have same slice shapes. "
                        f"Destination slice shape: {list(self.shape)} at dimension {d} and "
                        f"source slice shape: {list(source.shape)} at dimension {d}.")


def _front(a, dim):
    """``a`` as a view with ``dim`` first (a 0-dim tensor as a 1-element vector)."""
    return a.reshape(1) if a.ndim == 0 else np.moveaxis(a, dim % a.ndim, 0)


def _checked(index, n, message, negative_ok=False):
    """The flat index, every entry in [0, n) ([-n, n) when ``negative_ok``), else torch's
    ``IndexError`` (each op words it its own way)."""
    flat = index.reshape(-1)
    low = -n if negative_ok else 0
    bad = flat[(flat < low) | (flat >= n)]
    if bad.size:
        raise IndexError(message.format(bad=bad[0], n=n))
    return flat


# ---------------------------------------------------------------- index_add / copy / fill


def _index_add_meta(self, dim, index, source, alpha=1):
    d = _check_index_vector("index_add", self, dim, index)
    _check_source("index_add", self, d, index, source)
    return TensorMeta(tuple(self.shape), self.dtype)


def _index_add_kernel(a, dim, index, source, alpha=1):
    out = a.copy()
    o = _front(out, dim)
    idx = _checked(index, o.shape[0], "index out of range in self")
    np.add.at(o, idx, _front(source, dim) * alpha if alpha != 1 else _front(source, dim))
    return out


index_add = defop(
    "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
    INDEXING, kernel=_index_add_kernel, meta=_index_add_meta, inplace=True,
    derivatives={"self": lambda grad: grad,
                 "source": lambda grad, dim, index, alpha, source_sizes:
                 (grad.index_select(dim, index) * alpha).reshape(tuple(source_sizes))})


def _index_copy_meta(self, dim, index, source):
    d = _check_index_vector("index_copy", self, dim, index)
    _check_source("index_copy", self, d, index, source)
    return TensorMeta(tuple(self.shape), self.dtype)


def _index_copy_kernel(a, dim, index, source):
    out = a.copy()
    o = _front(out, dim)
    o[_checked(index, o.shape[0], "index_copy_(): index {bad} is out of bounds for dimension "
               f"{dim % max(a.ndim, 1)} with size {{n}}")] = _front(source, dim)
    return out


index_copy = defop(
    "index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor", INDEXING,
    kernel=_index_copy_kernel, meta=_index_copy_meta, inplace=True,
    derivatives={"self": lambda grad, dim, index: grad.index_fill(dim, index, 0),
                 "source": lambda grad, dim, index, source_sizes:
                 grad.index_select(dim, index).reshape(tuple(source_sizes))})


def _index_fill_meta(self, dim, index, value):
    _check_index_vector("index_fill", self, dim, index)
    if hasattr(value, "shape") and len(value.shape):
        raise MetaError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                        f"tensor with {len(value.shape)} dimension(s).")
    return TensorMeta(tuple(self.shape), self.dtype)


def _index_fill_kernel(a, dim, index, value):
    out = a.copy()
    o = _front(out, dim)
    o[_checked(index, o.shape[0], f"index {{bad}} is out of bounds for dimension "
               f"{dim % max(a.ndim, 1)} with size {{n}}", negative_ok=True)] = \
        np.asarray(value).astype(a.dtype)
    return out


index_fill = defop(
    "index_fill(Tensor self, int dim, Tensor index, Tensor value) -> Tensor", INDEXING,
    kernel=_index_fill_kernel, meta=_index_fill_meta, inplace=True,
    derivatives={"self": lambda grad, dim, index: grad.index_fill(dim, index, 0),
                 # the filled positions, each once (indices may repeat or be negative)
                 "value": lambda grad, dim, index: (grad - grad.index_fill(dim, index, 0))
                 .sum()},
    notes="torch's index_fill.int_Scalar and .int_Tensor in one row")

# ---------------------------------------------------------------- scatter_reduce

_REDUCE_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
                 "amin": np.minimum}


def _identity(reduce, npd):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if npd.kind == "f" else (True if npd.kind == "b" else np.iinfo(npd).max)
    small = -np.inf if npd.kind == "f" else (False if npd.kind == "b" else np.iinfo(npd).min)
    return small if reduce == "amax" else big


def _scatter_reduce_meta(self, dim, index, src, reduce, include_self=True):
    wrap_dim(dim, self.ndim)
    if reduce not in _REDUCE_UFUNC:
        raise MetaError("reduce argument must be either sum, prod, mean, amax or amin, got "
                        f"{reduce}")
    _check_index_dtype("scatter_reduce", index)
    _check_same_rank("scatter_reduce", self, index, src)
    if src.dtype is not self.dtype:
        raise MetaError("scatter(): Expected self.dtype to be equal to src.dtype")
    return TensorMeta(tuple(self.shape), self.dtype)


def _scatter_reduce_kernel(a, dim, index, src, reduce, include_self=True):
    out = a.copy()
    if index.size == 0:
        return out
    o = out.reshape(1) if a.ndim == 0 else out
    d = dim % max(a.ndim, 1)
    n = o.shape[d]
    if index.min() < 0 or index.max() >= n:
        bad = index[(index < 0) | (index >= n)].reshape(-1)[0]
        raise MetaError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    grid = _index_grid(index.reshape(-1) if a.ndim == 0 else index, d)
    s = src.reshape(-1) if src.ndim == 0 else src
    s = s[tuple(slice(0, k) for k in (index.reshape(-1) if a.ndim == 0 else index).shape)]
    count = np.zeros(o.shape, np.int64)
    np.add.at(count, grid, 1)
    if not include_self:
        o[count > 0] = _identity(reduce, a.dtype)
    _REDUCE_UFUNC[reduce].at(o, grid, s)
    if reduce == "mean":
        total = count + (1 if include_self else 0)
        total = np.maximum(total, 1)
        o[...] = o // total if a.dtype.kind in "iub" else o / total
    return out


def _scatter_reduce_self_backward(grad, self, dim, index, src, reduce, include_self, result):
    if reduce == "sum":
        return grad if include_self else grad.scatter(dim, index, 0.0)
    if reduce == "mean":
        count = _counts(self, dim, index, include_self)
        return grad / count if include_self else (grad / count).scatter(dim, index, 0.0)
    if reduce in ("amax", "amin"):
        hit = (self == result) if include_self else (self == result).scatter(dim, index, False)
        ties = _ties(self, dim, index, src, result, include_self)
        return F.where(hit, grad / ties, 0)
    # prod: the product of everything else at that position — the result recomputed with a
    # zero self replaced by 1, divided by that self (torch's exclusive-product trick)
    masked_self = self.masked_fill(self == 0, 1)
    g = grad * _scatter_reduce(masked_self, dim, index, src, "prod", include_self) / masked_self
    return g if include_self else g.scatter(dim, index, 0.0)


def _scatter_reduce_src_backward(grad, self, dim, index, src, reduce, include_self, result):
    """The gradient of the part of ``src`` that ``index`` covers, zero-padded to ``src``."""
    if reduce == "sum":
        g = grad.gather(dim, index)
    elif reduce == "mean":
        g = (grad / _counts(self, dim, index, include_self)).gather(dim, index)
    elif reduce in ("amax", "amin"):
        ties = _ties(self, dim, index, src, result, include_self)
        g = F.where(_covered(src, index) == result.gather(dim, index),
                    (grad / ties).gather(dim, index), 0)
    else:  # prod: result / src, except for a src that is the only zero at its position
        s = _covered(src, index)
        zero = s == 0
        zeros_there = F.ops.aten.scatter_add(F.zeros_like(self), dim, index,
                                             zero.to(self.dtype)).gather(dim, index)
        single = zero & (zeros_there == 1)
        without = _scatter_reduce(self, dim, index, s.masked_fill(single, 1), "prod",
                                  include_self)
        g = F.where(single, (grad * without).gather(dim, index),
                    (grad * result).gather(dim, index) / s.masked_fill(zero, 1))
    return _pad_to(g, tuple(src.shape))


def _scatter_reduce(self, dim, index, src, reduce, include_self):
    return F.ops.aten.scatter_reduce.two(self, dim, index, src, reduce,
                                         include_self=include_self)


def _covered(src, index):
    """The part of ``src`` that ``index`` reads (``src`` may be larger along any dim)."""
    for d, n in enumerate(index.shape):
        if src.shape[d] != n:
            src = src.narrow(d, 0, n)
    return src


def _counts(self, dim, index, include_self):
    ones = F.ones_like(index, dtype=self.dtype)
    base = F.ones_like(self) if include_self else F.zeros_like(self)
    return F.ops.aten.scatter_add(base, dim, index, ones).clamp_min(1)


def _ties(self, dim, index, src, result, include_self):
    """How many elements (of self, if included, and of src) equal each result."""
    from_src = (_covered(src, index) == result.gather(dim, index)).to(self.dtype)
    base = (self == result).to(self.dtype) if include_self else F.zeros_like(self)
    return F.ops.aten.scatter_add(base, dim, index, from_src).clamp_min(1)


scatter_reduce = defop(
    "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, "
    "bool include_self=True) -> Tensor", INDEXING,
    kernel=_scatter_reduce_kernel, meta=_scatter_reduce_meta, inplace=True,
    derivatives={"self": _scatter_reduce_self_backward, "src": _scatter_reduce_src_backward})

# torch's ``x.scatter_(d, idx, src)`` and ``x.scatter_add_(...)``: the in-place variants of the
# two scatters of ``gather_scatter.py``, derived the way ``defop(inplace=True)`` derives them
scatter_ = _define_inplace(OP_TABLE["scatter"])
scatter_add_ = _define_inplace(OP_TABLE["scatter_add"])
