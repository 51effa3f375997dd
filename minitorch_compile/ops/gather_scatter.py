"""Ops that move elements by index: ``flip``, ``index_select``, ``gather``, ``scatter_add`` and
``scatter``.

Mirrors ``aten/src/ATen/native/TensorAdvancedIndexing.cpp`` (and ``TensorTransformations.cpp``
for ``flip``).  Each output element reads one input element at a computed position:

* ``flip(x, dims)[i] = x[i with i_d -> n_d - 1 - i_d for d in dims]`` (a copy, not a view);
* ``index_select(x, d, idx)[..., j, ...] = x[..., idx[j], ...]`` (``idx`` a vector);
* ``gather(x, d, idx)[i] = x[i with i_d -> idx[i]]`` (``idx`` has ``x``'s rank; its other dims
  may be smaller than ``x``'s);
* ``scatter_add(x, d, idx, src)``: a copy of ``x`` with ``src[i]`` added at ``i_d -> idx[i]``
  (repeated indices accumulate) — the backward of the two gathers, as in torch's
  ``gather_backward`` / ``index_select_backward``;
* ``scatter(x, d, idx, src)``: the same walk, writing ``src[i]`` (torch's ``scatter.src``;
  ``x.scatter(d, idx, value)`` with a number fills a tensor of ``idx``'s shape with it).

Index tensors must be int64 or int32, and indices outside [0, n) — negative ones too — raise
torch's errors (checked on the data, so when the kernel runs).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import INDEXING, MetaError, TensorMeta, defop, wrap_dim

# ---------------------------------------------------------------- flip


def _flip_dims(dims, ndim) -> tuple:
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    wrapped = tuple(wrap_dim(d, ndim) for d in dims)
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise MetaError(f"dim {d} appears multiple times in the list of dims")
    return wrapped if ndim else ()


flip = defop(
    "flip(Tensor self, int[] dims) -> Tensor", INDEXING,
    kernel=lambda a, dims: np.flip(a, _flip_dims(dims, a.ndim)).copy(),
    meta=lambda self, dims: TensorMeta(
        (_flip_dims(dims, self.ndim), tuple(self.shape))[1], self.dtype),
    derivatives={"self": lambda grad, dims: grad.flip(dims)})

# ---------------------------------------------------------------- index_select


def _check_index_dtype(name, index, names="int32/int64"):
    if index.dtype not in (_dtype.int64, _dtype.int32):
        raise MetaError(f"{name}(): Expected dtype {names} for index")


def _index_select_meta(self, dim, index):
    d = wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    _check_index_dtype("index_select", index, "int32 or int64")
    if self.ndim == 0:
        return TensorMeta((), self.dtype)
    shape = list(self.shape)
    shape[d] = index.numel()
    return TensorMeta(tuple(shape), self.dtype)


def _index_select_kernel(a, dim, index):
    if a.ndim == 0:
        if index.size and np.any(index != 0):
            raise RuntimeError(f"INDICES element is out of DATA bounds, "
                               f"id={index[index != 0].reshape(-1)[0]} axis_dim=1")
        return a.copy()
    d = dim % a.ndim
    n = a.shape[d]
    flat = index.reshape(-1)
    bad = flat[(flat < 0) | (flat >= n)]
    if bad.size:  # torch's CPU kernel's message
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad[0]} axis_dim={n}")
    return np.take(a, flat, axis=d)


def _index_select_backward(grad, self_sizes, dim, index):
    """``scatter_add`` of ``grad`` into zeros: ``index`` viewed along ``dim`` and expanded to
    ``grad``'s shape is exactly the ``gather`` index of this selection."""
    if len(self_sizes) == 0:
        return grad.reshape(())
    d = wrap_dim(dim, len(self_sizes))
    view = [1] * len(self_sizes)
    view[d] = -1
    idx = index.reshape(view).expand(tuple(grad.shape))
    return F.ops.aten.scatter_add(grad.new_zeros(tuple(self_sizes)), d, idx, grad)


index_select = defop(
    "index_select(Tensor self, int dim, Tensor index) -> Tensor", INDEXING,
    kernel=_index_select_kernel, meta=_index_select_meta,
    derivatives={"self": _index_select_backward})

# ---------------------------------------------------------------- gather / scatter_add


def _check_same_rank(name, self, index, other=None):
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise MetaError("Index tensor must have the same number of dimensions as "
                        f"{'self' if other else 'input'} tensor")
    if other is not None and max(other.ndim, 1) != max(self.ndim, 1):
        raise MetaError("Index tensor must have the same number of dimensions as src tensor")


def _check_index_fits(self, dim, index, other=None):
    """index.size(d) <= self.size(d) for d != dim (and <= src.size(d) for every d), with
    torch's two messages: gather's names the dimension, scatter's names self and src
    (``ScatterGatherChecks.h``)."""
    for d in range(index.ndim):
        too_big_for_self = d != dim and self.ndim and index.shape[d] > self.shape[d]
        if other is None and too_big_for_self:
            raise MetaError(f"Size does not match at dimension {d} expected index "
                            f"{list(index.shape)} to be no larger than self {list(self.shape)} "
                            f"apart from dimension {dim}")
        if other is not None and (too_big_for_self or
                                  (other.ndim and index.shape[d] > other.shape[d])):
            raise MetaError(f"Expected index {list(index.shape)} to be no larger than self "
                            f"{list(self.shape)} apart from dimension {dim} and to be no "
                            f"larger size than src {list(other.shape)}")


def _gather_meta(self, dim, index, sparse_grad=False):
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype("gather", index)
    _check_same_rank("gather", self, index)
    _check_index_fits(self, d, index)
    return TensorMeta(tuple(index.shape), self.dtype)


def _check_bounds(index, n, d):
    """Indices must lie in [0, n): unlike Python's, negative indices are an error here."""
    if index.size and (index.min() < 0 or index.max() >= n):
        bad = index[(index < 0) | (index >= n)].reshape(-1)[0]
        raise MetaError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _index_grid(index, dim):
    """The full index tuple of a gather/scatter: ``index`` along ``dim``, the position of
    each element along every other dim."""
    grid = list(np.ix_(*[np.arange(s) for s in index.shape]))
    grid[dim] = index
    return tuple(grid)


def _gather_kernel(a, dim, index, sparse_grad=False):
    if a.ndim == 0:
        _check_bounds(index, 1, 0)
        return np.broadcast_to(a, index.shape).copy()
    d = dim % a.ndim
    _check_bounds(index, a.shape[d], d)
    return a[_index_grid(index, d)]


gather = defop(
    "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", INDEXING,
    kernel=_gather_kernel, meta=_gather_meta,
    derivatives={"self": lambda grad, self_sizes, dim, index: F.ops.aten.scatter_add(
        grad.new_zeros(tuple(self_sizes)), dim, index, grad)})


def _scatter_add_meta(self, dim, index, src):
    d = wrap_dim(dim, self.ndim)
    _check_index_dtype("scatter_add", index)
    _check_same_rank("scatter_add", self, index, src)
    if src.dtype is not self.dtype:
        raise MetaError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_index_fits(self, d, index, src)
    return TensorMeta(tuple(self.shape), self.dtype)


def _scatter_add_kernel(a, dim, index, src):
    out = a.copy()
    if index.size == 0:
        return out
    if a.ndim == 0:
        _check_bounds(index, 1, 0)
        return out + src.reshape(-1)[: index.size].sum()
    d = dim % a.ndim
    _check_bounds(index, a.shape[d], d)
    src = src.reshape((1,) * (index.ndim - src.ndim) + src.shape) if src.ndim < index.ndim \
        else src
    np.add.at(out, _index_grid(index, d), src[tuple(slice(0, s) for s in index.shape)])
    return out


scatter_add = defop(
    "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", INDEXING,
    kernel=_scatter_add_kernel, meta=_scatter_add_meta,
    derivatives={"self": lambda grad: grad,
                 "src": lambda grad, dim, index, src_sizes: _pad_to(
                     grad.gather(dim, index), src_sizes)})


def _scatter_kernel(a, dim, index, src):
    """``scatter_add``'s walk, writing instead of adding: with repeated indices the last write
    wins here (torch leaves the order undefined)."""
    out = a.copy()
    if index.size == 0:
        return out
    if a.ndim == 0:
        _check_bounds(index, 1, 0)
        return src.reshape(-1)[index.size - 1].astype(a.dtype)
    d = dim % a.ndim
    _check_bounds(index, a.shape[d], d)
    src = src.reshape((1,) * (index.ndim - src.ndim) + src.shape) if src.ndim < index.ndim \
        else src
    out[_index_grid(index, d)] = src[tuple(slice(0, s) for s in index.shape)]
    return out


scatter = defop(
    "scatter(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", INDEXING,
    kernel=_scatter_kernel, meta=_scatter_add_meta,
    derivatives={"self": lambda grad, dim, index: F.ops.aten.scatter(
                     grad, dim, index, grad.new_zeros(tuple(index.shape))),
                 "src": lambda grad, dim, index, src_sizes: _pad_to(
                     grad.gather(dim, index), src_sizes)})


def _pad_to(grad, sizes):
    """Zero-pad ``grad`` at the end of each dim up to ``sizes`` (``src`` may be larger than
    ``index``; its elements past ``index``'s extent were not added, so get no gradient)."""
    for d, (have, want) in enumerate(zip(tuple(grad.shape), sizes)):
        if have != want:
            sizes_now = list(grad.shape)
            sizes_now[d] = want
            grad = F.ops.aten.slice_backward(grad, sizes_now, d, 0, have, 1)
    return grad

