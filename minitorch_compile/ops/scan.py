"""Scans and products: ``cumsum``, ``cumprod``, ``prod`` (whole tensor and over one dim).

Mirrors ``aten/src/ATen/native/ReduceOps.cpp`` (``cumsum``, ``cumprod``, ``prod``) and the
backward formulas of ``FunctionsManual.cpp`` (``cumprod_backward``, ``prod_backward``).

Result dtypes as torch: an integer or bool input sums and multiplies in ``int64`` (``dtype=``
overrides); a float input keeps its dtype.  A 0-dim tensor scans over its one element
(``dim`` 0 or -1).

Gradients, written with tensor ops so they trace and differentiate again:

* ``cumsum``: ``dx = reverse_cumsum(g) = flip(cumsum(flip(g)))``;
* ``prod`` over a dim: ``dx_k = g * prod_{j != k} x_j``, the product of an *exclusive*
  cumprod from the left and one from the right — no division, so zeros are exact (torch
  special-cases zeros; this formula needs no case);
* ``cumprod``: ``dx_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j`` — before a row's first
  zero that is ``reverse_cumsum(g * result) / x``; at the first zero a product of the elements
  before it and a cumprod of those after it; past it, 0.  O(n) and exact with zeros, written
  with masks (``where``) so it traces and differentiates again.

Inductor has no scan in its loop IR here: these run as fallback (extern) kernels.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import REDUCTION, TensorMeta, defop, reduced_shape, wrap_dim


def _acc_dtype(dtype, requested):
    if requested is not None:
        return requested
    return dtype if dtype.is_floating_point else _dtype.int64


def _scan_meta(self, dim, dtype=None):
    wrap_dim(dim, self.ndim)
    return TensorMeta(tuple(self.shape), _acc_dtype(self.dtype, dtype))


def _scan_kernel(np_fn):
    def kernel(a, dim, dtype=None):
        out_np = _acc_dtype(_dtype.from_numpy_dtype(a.dtype), dtype).np
        if a.ndim == 0:
            return a.astype(out_np)
        if out_np == np.float16:  # torch accumulates half in float (its acc_type)
            return np_fn(a.astype(np.float32), axis=dim % a.ndim).astype(np.float16)
        return np_fn(a.astype(out_np, copy=False), axis=dim % a.ndim)
    return kernel


def _reverse_cumsum(g, dim):
    return g.flip([dim]).cumsum(dim).flip([dim])


def _cumsum_backward(grad, self_sizes, self_dtype, dim):
    if len(self_sizes) == 0:
        return grad
    return _reverse_cumsum(grad, wrap_dim(dim, len(self_sizes))).to(self_dtype)


cumsum = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", REDUCTION,
               kernel=_scan_kernel(np.cumsum), meta=_scan_meta, inplace=True,
               derivatives={"self": _cumsum_backward})


def _cumprod_backward(grad, self, dim, result):
    """O(n), exact with zeros (torch's ``cumprod_backward``, written with masks):

    * before a row's first zero: ``dx_k = reverse_cumsum(g * result)_k / x_k``;
    * at the first zero ``z``: ``dx_z = prod_{j<z} x_j * sum_{i>=z} g_i prod_{z<j<=i} x_j``
      (the inner products: a cumprod of ``x`` with every position up to ``z`` set to 1);
    * after it: 0 (every product there holds ``x_z = 0``)."""
    if self.ndim == 0 or self.numel() == 0:
        return grad.to(self.dtype)
    d = wrap_dim(dim, self.ndim)
    g = grad.to(self.dtype)
    zeros_so_far = (self == 0).cumsum(d)
    before = zeros_so_far == 0
    at_first = (self == 0) & (zeros_so_far == 1)
    safe_x = F.where(before, self, 1)
    dx_before = _reverse_cumsum(g * result, d) / safe_x
    prefix = safe_x.prod(d, keepdim=True)  # prod_{j<z} x_j (the whole row if no zero)
    after_ones = F.where(before | at_first, 1, self).cumprod(d)
    tail = F.where(zeros_so_far >= 1, g * after_ones, 0).sum(d, keepdim=True)
    return F.where(before, dx_before, F.where(at_first, prefix * tail, 0))


cumprod = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", REDUCTION,
                kernel=_scan_kernel(np.cumprod), meta=_scan_meta, inplace=True,
                derivatives={"self": _cumprod_backward})

# ---------------------------------------------------------------- prod


def _exclusive_products(x, d):
    """``prod_{j != k} x_j`` along ``d`` for every ``k``: exclusive cumprods from both ends."""
    ones = F.ones_like(x.narrow(d, 0, 1))
    left = F.cat([ones, x.narrow(d, 0, x.shape[d] - 1)], d).cumprod(d)
    flipped = x.flip([d])
    right = F.cat([ones, flipped.narrow(d, 0, x.shape[d] - 1)], d).cumprod(d).flip([d])
    return left * right


def _prod_dim_backward(grad, self, dim, keepdim):
    if self.ndim == 0:
        return grad.to(self.dtype)
    d = wrap_dim(dim, self.ndim)
    g = grad if keepdim else grad.unsqueeze(d)
    if self.shape[d] == 0:
        return F.zeros_like(self)
    return g.to(self.dtype) * _exclusive_products(self, d)


def _prod_backward(grad, self):
    flat = self.reshape(-1)
    if flat.shape[0] == 0:
        return F.zeros_like(self)
    return (grad.to(self.dtype) * _exclusive_products(flat, 0)).reshape(tuple(self.shape))


def _prod_kernel(a, dtype=None):
    out_np = _acc_dtype(_dtype.from_numpy_dtype(a.dtype), dtype).np
    return np.prod(a.astype(out_np, copy=False))


def _prod_dim_kernel(a, dim, keepdim=False, dtype=None):
    out_np = _acc_dtype(_dtype.from_numpy_dtype(a.dtype), dtype).np
    a = a.astype(out_np, copy=False)
    if a.ndim == 0:
        return a.copy()
    return np.prod(a, axis=dim % a.ndim, keepdims=keepdim)


def _prod_dim_meta(self, dim, keepdim=False, dtype=None):
    d = wrap_dim(dim, self.ndim)
    shape = reduced_shape(tuple(self.shape), (d,) if self.ndim else (), keepdim)
    return TensorMeta(shape, _acc_dtype(self.dtype, dtype))


prod = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", REDUCTION,
             kernel=_prod_kernel,
             meta=lambda self, dtype=None: TensorMeta((), _acc_dtype(self.dtype, dtype)),
             derivatives={"self": _prod_backward})
prod_dim = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
                 "ScalarType? dtype=None) -> Tensor", REDUCTION,
                 kernel=_prod_dim_kernel, meta=_prod_dim_meta,
                 derivatives={"self": _prod_dim_backward})
