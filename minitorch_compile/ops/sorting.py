"""Sorting and selecting: ``sort``, ``argsort``, ``topk``, ``kthvalue``, ``median``, ``unique``.

Mirrors ``aten/src/ATen/native/Sorting.cpp`` / ``TensorCompare.cpp`` and their
``derivatives.yaml`` rows (``value_selecting_reduction_backward``).

The one algorithm under all of them is a **stable** sort along ``dim`` (numpy's
``argsort(kind="stable")``); a stable result is a valid answer to torch's unstable sort too,
so ``stable=`` only documents intent.  Descending order is a stable ascending sort of the
reversed row, read backwards: equal elements keep their original order, and NaN — which
numpy and torch both put after every number — comes first, as in torch.

* ``topk(k, largest, sorted)``: the first ``k`` of that order (always sorted);
* ``kthvalue(k)``: the ``k``-th smallest (1-based); ``median``: the lower middle,
  ``kthvalue((n + 1) // 2)`` — torch's definition, not the mean of the two middles.

``_unique2`` / ``unique_dim`` (``torch.unique`` without / with ``dim``) are numpy's
``np.unique``: their output size depends on the values, so their meta rule raises
``DynamicOutputShapeException`` (a graph break under ``mtc.compile``, as in torch), and they
are not differentiable.

Every value output is ``self`` gathered at the index output, so every gradient is the same
scatter of ``grad`` back to those indices (``_value_selecting_backward``).  Inductor runs these
as fallback kernels (a sort is not a loop over independent elements).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import (
    COMPOSITE,
    INDEXING,
    REDUCTION,
    MetaError,
    TensorMeta,
    defop,
    reduced_shape,
    wrap_dim,
)


def _stable_order(a, axis, descending):
    """Indices that sort ``a`` along ``axis`` stably (NaN last ascending, first descending)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    rev = np.flip(a, axis)
    order = np.argsort(rev, axis=axis, kind="stable")
    return np.flip(n - 1 - order, axis)


def _sort_kernel(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    idx = _stable_order(a, d, descending)
    return np.take_along_axis(a, idx, d), idx


def _sort_meta(self, dim=-1, descending=False, stable=False):
    wrap_dim(dim, self.ndim)
    return TensorMeta(tuple(self.shape), self.dtype), TensorMeta(tuple(self.shape),
                                                                 _dtype.int64)


def _value_selecting_backward(grad, self_sizes, dim, indices, keepdim=True):
    """Scatter ``grad`` to the positions ``indices`` picked along ``dim`` (zeros elsewhere)."""
    if len(self_sizes) == 0:
        return grad.reshape(())
    d = wrap_dim(dim, len(self_sizes))
    if not keepdim:
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return F.ops.aten.scatter(grad.new_zeros(tuple(self_sizes)), d, indices, grad)


sort = defop("sort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False) -> "
             "(Tensor values, Tensor indices)", REDUCTION, kernel=_sort_kernel, meta=_sort_meta,
             derivatives={"self": lambda grad, self_sizes, dim, indices:
                          _value_selecting_backward(grad, self_sizes, dim, indices)},
             notes="torch's sort and sort.stable in one row; always stable")

argsort = defop("argsort(Tensor self, int dim=-1, bool descending=False, *, bool stable=False)"
                " -> Tensor", COMPOSITE,
                decomposition=lambda self, dim=-1, descending=False, stable=False:
                F.ops.aten.sort(self, dim, descending, stable=stable)[1])

# ---------------------------------------------------------------- topk


def _topk_meta(self, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's name
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 0 <= k <= n:
        raise MetaError("selected index k out of range")
    shape = list(self.shape)
    if self.ndim:
        shape[d] = k
    return TensorMeta(tuple(shape), self.dtype), TensorMeta(tuple(shape), _dtype.int64)


def _topk_kernel(a, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    idx = np.take(_stable_order(a, d, largest), np.arange(k), axis=d)
    return np.take_along_axis(a, idx, d), idx


topk = defop("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
             "(Tensor values, Tensor indices)", REDUCTION, kernel=_topk_kernel, meta=_topk_meta,
             derivatives={"self": lambda grad, self_sizes, dim, indices:
                          _value_selecting_backward(grad, self_sizes, dim, indices)})

# ---------------------------------------------------------------- kthvalue / median


def _kthvalue_meta(self, k, dim=-1, keepdim=False):
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 1 <= k <= n:
        raise MetaError(f"kthvalue(): selected number k out of range for dimension {d}")
    shape = reduced_shape(tuple(self.shape), (d,) if self.ndim else (), keepdim)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, _dtype.int64)


def _kthvalue_kernel(a, k, dim=-1, keepdim=False):
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    idx = np.take(_stable_order(a, d, False), [k - 1], axis=d)
    values = np.take_along_axis(a, idx, d)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


kthvalue = defop("kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> "
                 "(Tensor values, Tensor indices)", REDUCTION, kernel=_kthvalue_kernel,
                 meta=_kthvalue_meta,
                 derivatives={"self": lambda grad, self_sizes, dim, keepdim, indices:
                              _value_selecting_backward(grad, self_sizes, dim, indices,
                                                        keepdim)})


def _median_dim_meta(self, dim, keepdim=False):
    d = wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    shape = reduced_shape(tuple(self.shape), (d,) if self.ndim else (), keepdim)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, _dtype.int64)


def _median_dim_kernel(a, dim, keepdim=False):
    """The lower middle; a row holding NaN gives its first NaN (torch's median propagates
    NaN — ``nanmedian`` is the one that skips it)."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    d = dim % a.ndim
    values, idx = _kthvalue_kernel(a, (a.shape[d] + 1) // 2, d, True)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        has_nan = nan.any(axis=d, keepdims=True)
        idx = np.where(has_nan, np.argmax(nan, axis=d, keepdims=True), idx)
        values = np.where(has_nan, np.nan, values).astype(a.dtype)
    return (values, idx) if keepdim else (np.squeeze(values, d), np.squeeze(idx, d))


median_dim = defop("median.dim(Tensor self, int dim, bool keepdim=False) -> "
                   "(Tensor values, Tensor indices)", REDUCTION, kernel=_median_dim_kernel,
                   meta=_median_dim_meta,
                   derivatives={"self": lambda grad, self_sizes, dim, keepdim, indices:
                                _value_selecting_backward(grad, self_sizes, dim, indices,
                                                          keepdim)})


def _median(self):
    """The whole-tensor median: the lower middle of the flattened tensor; NaN if any."""
    if self.numel() == 0:
        return F.full((), float("nan"), dtype=self.dtype)
    return F.ops.aten.median.dim(self.reshape(-1), 0)[0]


median = defop("median(Tensor self) -> Tensor", COMPOSITE, decomposition=_median)

# ---------------------------------------------------------------- unique


def _unique_meta(op, kernel):
    def meta(self, *args, **kwargs):
        from .indexing import _dynamic_output_shape, _has_data

        if not _has_data(self):  # how many distinct values: known only from the values
            raise _dynamic_output_shape(op, "its input")
        return kernel(self._data, *args, **kwargs, _meta=True)
    return meta


_NOT_ASKED = np.zeros((0,), np.int64)  # torch returns empty tensors for outputs not asked for


def _unique_kernel(a, sorted=True, return_inverse=False, return_counts=False, *,  # noqa: A002
                   _meta=False):
    """Every distinct value, ascending (numpy's and torch's CPU order, whatever ``sorted``
    says); NaNs are never equal, so each one is kept. ``inverse``: the position of each
    element's value in the result, in the input's shape."""
    values, inverse, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True,
                                        equal_nan=False)
    outs = (values, inverse.reshape(a.shape).astype(np.int64) if return_inverse else _NOT_ASKED,
            counts.astype(np.int64) if return_counts else _NOT_ASKED)
    if _meta:
        return tuple(TensorMeta(o.shape, _dtype.from_numpy_dtype(o.dtype)) for o in outs)
    return outs


_unique2 = defop("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
                 "bool return_counts=False) -> (Tensor, Tensor, Tensor)", INDEXING,
                 kernel=_unique_kernel, meta=_unique_meta("_unique2", _unique_kernel),
                 differentiable=False, notes="data-dependent output size")


def _unique_dim_kernel(a, dim, sorted=True, return_inverse=False,  # noqa: A002
                       return_counts=False, *, _meta=False):
    """The distinct slices along ``dim``, in lexicographic order (torch's ``unique_dim``,
    which returns the inverse and the counts whether asked for or not)."""
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    if a.shape[d] == 0:
        outs = (a, _NOT_ASKED, _NOT_ASKED)
    elif a.size == 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    else:
        values, inverse, counts = np.unique(a, axis=d, return_inverse=True,
                                            return_counts=True, equal_nan=False)
        outs = (values, inverse.reshape(-1).astype(np.int64), counts.astype(np.int64))
    if _meta:
        return tuple(TensorMeta(o.shape, _dtype.from_numpy_dtype(o.dtype)) for o in outs)
    return outs


unique_dim = defop("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse="
                   "False, bool return_counts=False) -> (Tensor, Tensor, Tensor)", INDEXING,
                   kernel=_unique_dim_kernel, meta=_unique_meta("unique_dim", _unique_dim_kernel),
                   differentiable=False, notes="data-dependent output size")
