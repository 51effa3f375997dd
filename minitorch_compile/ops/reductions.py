"""Reductions: sum, mean, amax/amin, max/min over a dim (values and indices), argmax, var.

Meta rule shape: the input shape with the reduced dims removed (or kept as 1 with
``keepdim=True``); ``dim=None`` reduces everything.  Derivative formulas first put the reduced
dims back (``_restore``) so the gradient broadcasts against the input.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import (
    COMPOSITE,
    REDUCTION,
    MetaError,
    TensorMeta,
    defop,
    reduced_shape,
    reduction_dims,
    wrap_dim,
)


def _restore(grad, dims, keepdim):
    """Unsqueeze the reduced ``dims`` back into ``grad`` (a no-op when ``keepdim``)."""
    if not keepdim:
        for d in sorted(dims):
            grad = grad.unsqueeze(d)
    return grad


def _numel(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _check_nonempty(name, self, dims):
    if any(self.shape[d] == 0 for d in dims) or (self.ndim == 0 and self.numel() == 0):
        raise MetaError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
                        " Specify the reduction dim with the 'dim' argument.")


# ---------------------------------------------------------------- sum / mean


def _sum_meta(self, dim=None, keepdim=False, dtype=None):
    dims = reduction_dims(dim, self.ndim)
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point else _dtype.int64
    return TensorMeta(reduced_shape(self.shape, dims, keepdim), dtype)


def _sum_kernel(a, dim=None, keepdim=False, dtype=None):
    dims = reduction_dims(dim, a.ndim)
    return np.sum(a, axis=dims, keepdims=keepdim, dtype=None if dtype is None else dtype.np)


defop(
    "sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    REDUCTION, kernel=_sum_kernel, meta=_sum_meta,
    derivatives={"self": lambda grad, self_sizes, dim, keepdim:
                 _restore(grad, reduction_dims(dim, len(self_sizes)), keepdim)
                 .expand(self_sizes)})


def _mean_meta(self, dim=None, keepdim=False, dtype=None):
    dt = dtype or self.dtype
    if not dt.is_floating_point:
        raise MetaError("mean(): could not infer output dtype. Input dtype must be either a "
                        f"floating point or complex dtype. Got: {self.dtype.name.capitalize()}")
    return TensorMeta(reduced_shape(self.shape, reduction_dims(dim, self.ndim), keepdim), dt)


def _mean_backward(grad, self_sizes, dim, keepdim):
    dims = reduction_dims(dim, len(self_sizes))
    return _restore(grad, dims, keepdim).expand(self_sizes) / _numel(self_sizes, dims)


mean = defop(
    "mean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    REDUCTION, meta=_mean_meta,
    kernel=lambda a, dim=None, keepdim=False, dtype=None: np.mean(
        a, axis=reduction_dims(dim, a.ndim), keepdims=keepdim,
        dtype=None if dtype is None else dtype.np),
    derivatives={"self": _mean_backward})

# ---------------------------------------------------------------- amax / amin


def _amax_meta(name):
    def meta(self, dim=(), keepdim=False):
        dims = reduction_dims(dim, self.ndim)
        _check_nonempty(name, self, dims)
        return TensorMeta(reduced_shape(self.shape, dims, keepdim), self.dtype)
    return meta


def _amax_backward(grad, self, result, dim, keepdim):
    """Ties share the gradient evenly (torch's ``scale_grad_by_count``)."""
    dims = reduction_dims(dim, self.ndim)
    mask = self == _restore(result, dims, keepdim)
    return _restore(grad, dims, keepdim) * mask / mask.sum(dims, keepdim=True)


amax = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", REDUCTION,
             kernel=lambda a, dim=(), keepdim=False: np.amax(
                 a, axis=reduction_dims(dim, a.ndim), keepdims=keepdim),
             meta=_amax_meta("amax"), derivatives={"self": _amax_backward})
amin = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", REDUCTION,
             kernel=lambda a, dim=(), keepdim=False: np.amin(
                 a, axis=reduction_dims(dim, a.ndim), keepdims=keepdim),
             meta=_amax_meta("amin"), derivatives={"self": _amax_backward})

# ---------------------------------------------------------------- max/min over one dim


def _max_dim_meta(name):
    def meta(self, dim, keepdim=False):
        d = wrap_dim(dim, self.ndim)
        _check_nonempty(name, self, (d,) if self.ndim else ())
        shape = reduced_shape(self.shape, (d,) if self.ndim else (), keepdim)
        return TensorMeta(shape, self.dtype), TensorMeta(shape, _dtype.int64)
    return meta


def _max_dim_kernel(arg_fn):
    def kernel(a, dim, keepdim=False):
        if a.ndim == 0:
            return a.copy(), np.zeros((), dtype=np.int64)
        idx = arg_fn(a, axis=dim, keepdims=True)
        values = np.take_along_axis(a, idx, axis=dim)
        if not keepdim:
            idx, values = np.squeeze(idx, dim), np.squeeze(values, dim)
        return values, idx
    return kernel


def _select_backward_by_index(grad, self_sizes, dim, keepdim, indices):
    """Send ``grad`` to the position ``indices`` picked along ``dim``."""
    if len(self_sizes) == 0:
        return grad
    d = wrap_dim(dim, len(self_sizes))
    shape = [1] * len(self_sizes)
    shape[d] = self_sizes[d]
    positions = F.arange(self_sizes[d], device=grad.device).view(shape)
    hit = positions == _restore(indices, (d,), keepdim)
    return F.where(hit, _restore(grad, (d,), keepdim), 0)


def _full_reduction(name: str, method: str):
    """``max()``/``min()`` of every element: ``amax()``/``amin()``, with the error for an
    empty tensor naming the op the user called."""
    def decomposition(self):
        if isinstance(self.numel(), int) and self.numel() == 0:
            _check_nonempty(name, self, range(self.ndim))
        return getattr(self, method)()  # named MaxBackward1 by autograd/node_names.py
    return decomposition


for _name, _arg in (("max", np.argmax), ("min", np.argmin)):
    defop(f"{_name}.dim(Tensor self, int dim, bool keepdim=False) -> "
          "(Tensor values, Tensor indices)", REDUCTION,
          kernel=_max_dim_kernel(_arg), meta=_max_dim_meta(_name),
          derivatives={"self": _select_backward_by_index})
    defop(f"{_name}(Tensor self) -> Tensor", COMPOSITE,
          decomposition=_full_reduction(_name, "amax" if _name == "max" else "amin"))


def _argmax_meta(name):
    def meta(self, dim=None, keepdim=False):
        if dim is None:
            if self.numel() == 0:  # (torch's is an IndexError here)
                raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                                 "input.numel() == 0.")
            shape = (1,) * self.ndim if keepdim else ()
        else:
            d = wrap_dim(dim, self.ndim)
            _check_nonempty(name, self, (d,) if self.ndim else ())
            shape = reduced_shape(self.shape, (d,) if self.ndim else (), keepdim)
        return TensorMeta(shape, _dtype.int64)
    return meta


def _argmax_kernel(fn):
    def kernel(a, dim=None, keepdim=False):
        if dim is None:
            out = fn(a.reshape(-1))
            return np.asarray(out).reshape((1,) * a.ndim if keepdim else ())
        if a.ndim == 0:
            return np.zeros((), dtype=np.int64)
        return fn(a, axis=dim, keepdims=keepdim)
    return kernel


argmax = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", REDUCTION,
               kernel=_argmax_kernel(np.argmax), meta=_argmax_meta("argmax"),
               differentiable=False)
argmin = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", REDUCTION,
               kernel=_argmax_kernel(np.argmin), meta=_argmax_meta("argmin"),
               differentiable=False)

# ---------------------------------------------------------------- var / std (composites)


def _var(self, dim=None, correction=None, keepdim=False):
    """var = sum((x - mean)^2) / (N - correction), correction defaulting to 1 (Bessel)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("var: std and var only support floating point and complex dtypes")
    dims = reduction_dims(dim, self.ndim)
    correction = 1 if correction is None else correction
    centered = self - self.mean(dims, keepdim=True)
    n = _numel(self.shape, dims)
    return (centered * centered).sum(dims, keepdim=keepdim) / max(n - correction, 0)


var = defop("var(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
            " -> Tensor", COMPOSITE, decomposition=_var)


# std is a primitive, as in torch (``std.correction`` with its own ``std_backward``): the
# derivative of sqrt(var) is infinite where std is 0, and torch defines the gradient there as 0


def _std_meta(self, dim=None, correction=None, keepdim=False):
    if not self.dtype.is_floating_point:
        raise MetaError("std: std and var only support floating point and complex dtypes")
    return TensorMeta(reduced_shape(self.shape, reduction_dims(dim, self.ndim), keepdim),
                      self.dtype)


def _std_kernel(a, dim=None, correction=None, keepdim=False):
    dims = reduction_dims(dim, a.ndim)
    n = _numel(a.shape, dims)
    c = 1 if correction is None else correction
    centered = a - np.mean(a, axis=dims, keepdims=True)
    return np.sqrt(np.sum(centered * centered, axis=dims, keepdims=keepdim) / max(n - c, 0))


def _std_backward(grad, self, result, dim, correction, keepdim):
    """d std / dx = (x - mean) / ((N - correction) * std), and 0 where std is 0."""
    dims = reduction_dims(dim, self.ndim)
    dof = max(_numel(self.shape, dims) - (1 if correction is None else correction), 0)
    r = _restore(result, dims, keepdim)
    scale = F.where(r == 0, 0.0, _restore(grad, dims, keepdim) / (r * dof))
    return scale * (self - self.mean(dims, keepdim=True))


std = defop("std(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"
            " -> Tensor", REDUCTION, kernel=_std_kernel, meta=_std_meta,
            derivatives={"self": _std_backward})

# ---------------------------------------------------------------- all / any (boolean)


def _bool_reduce_dims(dim, ndim):
    """``dim=None`` reduces every dim; unlike sum's legacy ``[]``, ``dim=[]`` reduces none
    (torch's ``all.dims``/``any.dims``)."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return ()
    return reduction_dims(dim, ndim)


def _bool_reduce_meta(self, dim=None, keepdim=False):
    """bool, except that uint8 inputs give uint8 (torch keeps this legacy rule)."""
    return TensorMeta(reduced_shape(self.shape, _bool_reduce_dims(dim, self.ndim), keepdim),
                      _dtype.uint8 if self.dtype is _dtype.uint8 else _dtype.bool_)


defop("all(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
            REDUCTION, meta=_bool_reduce_meta, differentiable=False,
            kernel=lambda a, dim=None, keepdim=False: np.all(
                a, axis=_bool_reduce_dims(dim, a.ndim), keepdims=keepdim))
defop("any(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor",
            REDUCTION, meta=_bool_reduce_meta, differentiable=False,
            kernel=lambda a, dim=None, keepdim=False: np.any(
                a, axis=_bool_reduce_dims(dim, a.ndim), keepdims=keepdim))

# ---------------------------------------------------------------- logsumexp / var_mean (composites)


def _logsumexp(self, dim, keepdim=False):
    """log(sum(exp(x - m))) + m with m = amax(x): no overflow (``torch/_refs`` ``logsumexp``).

    An infinite max is replaced by 0 before subtracting (``inf - inf`` would be nan); integer
    inputs compute in the default float dtype.
    """
    if not self.dtype.is_floating_point:
        self = self.to(_dtype.get_default_dtype())
    dims = reduction_dims(dim, self.ndim)
    if self.numel() == 0:
        return self.exp().sum(dims, keepdim=keepdim).log()
    maxes = self.amax(dims, keepdim=True)
    maxes = F.where(maxes.abs() == float("inf"), 0.0, maxes)
    result = (self - maxes).exp().sum(dims, keepdim=keepdim).log()
    return result + (maxes if keepdim else _squeeze_dims(maxes, dims))


def _squeeze_dims(t, dims):
    for d in sorted(dims, reverse=True):
        t = t.squeeze(d)
    return t


logsumexp = defop("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
                  COMPOSITE, decomposition=_logsumexp)


def _var_mean(self, dim=None, correction=None, keepdim=False):
    """(var, mean) in one call (torch's ``var_mean.correction``)."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("var_mean only support floating point and complex dtypes")
    dims = reduction_dims(dim, self.ndim)
    return _var(self, dims, correction, keepdim), self.mean(dims, keepdim=keepdim)


var_mean = defop("var_mean(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                 "bool keepdim=False) -> (Tensor, Tensor)", COMPOSITE, decomposition=_var_mean)
