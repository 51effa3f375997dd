"""Pooling: ``max_pool2d_with_indices``, ``avg_pool2d`` and ``_adaptive_avg_pool2d`` are
primitives with their ``*_backward`` ops; ``max_pool2d``, the 1-d forms and
``adaptive_avg_pool2d`` decompose into them.

Mirrors ``aten/src/ATen/native/Pool.h`` (``pooling_output_shape``, ``pool2d_shape_check``),
``DilatedMaxPool2d.cpp``, ``AveragePool2d.cpp``, ``AdaptiveAveragePooling.cpp``.

Output size per spatial dim (``pooling_output_shape``)::

    out = floor_or_ceil((n + 2 p - d (k - 1) - 1) / s) + 1
    ceil_mode: the last window must start inside the input or its left padding, else out -= 1

* **max**: the windows of the input padded with -inf (``_sliding.windows``), ``argmax`` over
  each window; the index returned is the flat position ``row * W + col`` in the unpadded input
  plane, as torch's.  The backward adds each output gradient at its index (``np.bincount``:
  overlapping windows accumulate).  NaN wins the max, as in torch (``argmax`` picks it).
* **avg**: window sums over the zero-padded input, divided per output position by torch's
  divisor — the window clipped to the padded input (``count_include_pad``) or to the input,
  or ``divisor_override``.  The backward spreads ``grad / divisor`` back over each window
  (``_sliding.scatter_windows``).
* **adaptive avg**: output cell ``i`` averages input rows ``floor(i n / o) .. ceil((i+1) n / o)``.
  Windows of different sizes do not fit a strided view, but the pooling is *separable*: an
  averaging matrix ``A_h`` (o_h x n_h) on the left, ``A_w`` on the right: ``y = A_h x A_w^T``,
  and its backward is ``A_h^T g A_w``.  Two matmuls.

All are declared ``INDEXING`` (window gathers, as the simulated NPU costs them).  Inductor runs
them as extern (fallback) kernels; torch generates a pointwise kernel for small max/avg pools
instead.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from ._sliding import crop_spatial, pad_spatial, scatter_windows, windows
from .table import COMPOSITE, INDEXING, TensorMeta, defop

# ---------------------------------------------------------------- shapes and torch's checks


def _pair(v, msg):
    v = [v] if isinstance(v, int) else list(v)
    if len(v) not in (1, 2):
        raise RuntimeError(msg)
    return v * 2 if len(v) == 1 else v


def _params(name, kernel_size, stride, padding, dilation=1):
    k = _pair(kernel_size, f"{name}: kernel_size must either be a single int, or a tuple of "
                           "two ints")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(
        stride, f"{name}: stride must either be omitted, a single int, or a tuple of two ints")
    p = _pair(padding, f"{name}: padding must either be a single int, or a tuple of two ints")
    d = _pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two ints")
    return k, s, p, d


def _out_size(n, k, s, p, d, ceil_mode) -> int:
    """torch's ``pooling_output_shape`` with its checks."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if p < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
    if p > ((k - 1) * d + 1) // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={p}, kernel_size={k} and dilation={d}")
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool2d_shape(self, k, s, p, d, ceil_mode):
    """Output shape, after torch's ``pool2d_shape_check``."""
    h, w = self.shape[-2], self.shape[-1]
    oh, ow = (_out_size(n, *a, ceil_mode) for n, a in zip((h, w), zip(k, s, p, d)))
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} "
                           f"kW: {k[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if self.ndim not in (3, 4) or any(n == 0 for n in self.shape[-3:]):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}")
    if oh < 1 or ow < 1:
        c = self.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{oh}x{ow}). Output size is too small")
    return (*self.shape[:-2], oh, ow)


def _right_pad(n, o, k, s, p, d) -> int:
    """Extra right padding so the last (ceil_mode) window lies inside the array."""
    return max(0, (o - 1) * s + d * (k - 1) + 1 - p - n)


def _batched(a):
    return a if a.ndim == 4 else a[None]


# ---------------------------------------------------------------- max pooling


def _max_pool_meta(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    if self.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    k, s, p, d = _params("max_pool2d", kernel_size, stride, padding, dilation)
    shape = _pool2d_shape(self, k, s, p, d, ceil_mode)
    return TensorMeta(shape, self.dtype), TensorMeta(shape, _dtype.int64)


def _lowest(dtype):
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_kernel(a, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    k, s, p, d = _params("max_pool2d", kernel_size, stride, padding, dilation)
    x = _batched(a)
    (h, w), (kh, kw) = x.shape[2:], k
    out = [_out_size(n, *args, ceil_mode) for n, args in zip((h, w), zip(k, s, p, d))]
    hi = [_right_pad(n, o, *args) for n, o, args in zip((h, w), out, zip(k, s, p, d))]
    xp = pad_spatial(x, p, hi, _lowest(x.dtype))
    win = windows(xp, k, s, d, out).reshape(*x.shape[:2], *out, kh * kw)
    arg = win.argmax(-1)
    values = np.take_along_axis(win, arg[..., None], -1)[..., 0]
    ki, kj = np.divmod(arg, kw)
    rows = np.arange(out[0])[:, None] * s[0] - p[0] + ki * d[0]
    cols = np.arange(out[1]) * s[1] - p[1] + kj * d[1]
    indices = (rows * w + cols).astype(np.int64)
    # no element above -inf (all -inf, or the window is all padding): torch keeps its first
    # in-bounds position (the window start stepped past the padding by the dilation)
    none = values == -np.inf if x.dtype.kind == "f" else np.zeros(values.shape, bool)
    if none.any():
        first = [_first_inside(o, ss, pp, dd) for o, ss, pp, dd in zip(out, s, p, d)]
        indices = np.where(none, first[0][:, None] * w + first[1], indices)
    return (values, indices) if a.ndim == 4 else (values[0], indices[0])


def _first_inside(out, s, p, d):
    start = np.arange(out) * s - p
    return start + d * (-(start // d)).clip(0)  # -(start // d) = ceil(-start / d)


def _max_pool_backward_kernel(g, x, kernel_size, stride, padding, dilation, ceil_mode, indices):
    planes, hw = int(np.prod(x.shape[:-2])), x.shape[-2] * x.shape[-1]
    idx = indices.reshape(planes, -1)
    inside = (idx >= 0) & (idx < hw)  # a window all padding has no input element to feed
    flat = (idx + (np.arange(planes) * hw)[:, None])[inside]
    out = np.bincount(flat, weights=g.reshape(planes, -1)[inside], minlength=planes * hw)
    return out.astype(g.dtype).reshape(x.shape)


def _max_pool_double_backward(grad, indices):
    """Gather the incoming gradient at the indices (torch's ``max_pool_double_backward``)."""
    flat = grad.reshape(list(grad.shape[:-2]) + [-1])
    return flat.gather(-1, indices.reshape(list(indices.shape[:-2]) + [-1])).reshape(
        list(indices.shape))


max_pool2d_with_indices = defop(
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor output, "
    "Tensor indices)",
    INDEXING, kernel=_max_pool_kernel, meta=_max_pool_meta,
    derivatives={"self": lambda grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                 indices: max_pool2d_with_indices_backward(grad, self, kernel_size, stride,
                                                           padding, dilation, ceil_mode,
                                                           indices)})
max_pool2d_with_indices_backward = defop(
    "max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
    INDEXING, kernel=_max_pool_backward_kernel,
    meta=lambda grad_output, self, *rest: TensorMeta(tuple(self.shape), grad_output.dtype),
    derivatives={"grad_output": _max_pool_double_backward,
                 "self": lambda grad, self: F.zeros_like(self)})


def _max_pool2d(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


max_pool2d = defop("max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
                   "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
                   COMPOSITE, decomposition=_max_pool2d)


def _one_d(name, self):
    if self.ndim not in (2, 3):
        raise RuntimeError(f"{name}() Expected 2D or 3D input tensor, but got "
                           f"{list(self.shape)}")


def _first(v, default=None):
    if isinstance(v, int):
        return v
    v = list(v)
    return default if not v else v[0]


def _max_pool1d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1,
                             ceil_mode=False):
    _one_d("max_pool1d", self)
    k = _first(kernel_size)
    v, i = max_pool2d_with_indices(self.unsqueeze(-2), [1, k], [1, _first(stride, k)],
                                   [0, _first(padding)], [1, _first(dilation)], ceil_mode)
    return v.squeeze(-2), i.squeeze(-2)


max_pool1d_with_indices = defop(
    "max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], "
    "int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    COMPOSITE, decomposition=_max_pool1d_with_indices)
max_pool1d = defop(
    "max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
    "int[1] dilation=1, bool ceil_mode=False) -> Tensor", COMPOSITE,
    decomposition=lambda *a, **k: _max_pool1d_with_indices(*a, **k)[0])

# ---------------------------------------------------------------- average pooling


def _avg_pool_meta(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                   count_include_pad=True, divisor_override=None):
    k, s, p, d = _params("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if self.ndim < 3:
        n = max(self.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         "but got -3)")
    return TensorMeta(_pool2d_shape(self, k, s, p, d, ceil_mode), self.dtype)


def _avg_divisors(n, o, k, s, p, count_include_pad):
    """Per output position along one dim: the window clipped to the padded input (torch's
    ``pool_size``) or to the input itself."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    if count_include_pad:
        return end - start
    return np.minimum(end, n) - np.maximum(start, 0)


def _avg_setup(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    k, s, p, _ = _params("avg_pool2d", kernel_size, stride, padding)
    hw = x.shape[-2:]
    out = [_out_size(n, *args, 1, ceil_mode) for n, args in zip(hw, zip(k, s, p))]
    hi = [_right_pad(n, o, kk, ss, pp, 1) for n, o, kk, ss, pp in zip(hw, out, k, s, p)]
    if divisor_override is not None:
        div = np.full(out, float(divisor_override))
    else:
        dh, dw = (_avg_divisors(n, o, *args, count_include_pad)
                  for n, o, args in zip(hw, out, zip(k, s, p)))
        div = np.outer(dh, dw).astype(np.float64)
    return k, s, p, out, hi, div


def _avg_pool_kernel(a, kernel_size, stride=(), padding=0, ceil_mode=False,
                     count_include_pad=True, divisor_override=None):
    x = _batched(a)
    k, s, p, out, hi, div = _avg_setup(x, kernel_size, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override)
    sums = windows(pad_spatial(x, p, hi), k, s, [1, 1], out).sum(axis=(-2, -1))
    res = sums / div.astype(x.dtype) if x.dtype.kind == "f" else np.trunc(sums / div)
    res = res.astype(a.dtype)
    return res if a.ndim == 4 else res[0]


def _avg_pool_backward_kernel(g, x, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override):
    g4, x4 = _batched(g), _batched(x)
    k, s, p, out, hi, div = _avg_setup(x4, kernel_size, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override)
    share = (g4 / div.astype(g4.dtype))[..., None, None]
    spread = np.broadcast_to(share, share.shape[:-2] + tuple(k))
    padded = [n + lo + h for n, lo, h in zip(x4.shape[2:], p, hi)]
    res = crop_spatial(scatter_windows(spread, padded, s, [1, 1]), p, x4.shape[2:])
    res = np.ascontiguousarray(res, dtype=g.dtype)
    return res if x.ndim == 4 else res[0]


_AVG_ARGS = ("int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
             "bool count_include_pad=True, int? divisor_override=None")


def _avg_backward_formula(grad, self, kernel_size, stride, padding, ceil_mode,
                          count_include_pad, divisor_override):
    return avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override)


avg_pool2d = defop(f"avg_pool2d(Tensor self, {_AVG_ARGS}) -> Tensor", INDEXING,
                   kernel=_avg_pool_kernel, meta=_avg_pool_meta,
                   derivatives={"self": _avg_backward_formula})
avg_pool2d_backward = defop(
    "avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, "
    "int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor",
    INDEXING, kernel=_avg_pool_backward_kernel,
    meta=lambda grad_output, self, *rest: TensorMeta(tuple(self.shape), grad_output.dtype),
    derivatives={  # linear in grad_output: its adjoint is the forward pooling
        "grad_output": lambda grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
        divisor_override: avg_pool2d(grad, kernel_size, stride, padding, ceil_mode,
                                     count_include_pad, divisor_override),
        "self": lambda grad, self: F.zeros_like(self)})


def _avg_pool1d(self, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True):
    _one_d("avg_pool1d", self)
    k = _first(kernel_size)
    return avg_pool2d(self.unsqueeze(-2), [1, k], [1, _first(stride, k)], [0, _first(padding)],
                      ceil_mode, count_include_pad).squeeze(-2)


avg_pool1d = defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], "
                   "int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) "
                   "-> Tensor", COMPOSITE, decomposition=_avg_pool1d)

# ---------------------------------------------------------------- adaptive average pooling


def _adaptive_matrix(n, o, dtype):
    """(o, n): row i averages input positions floor(i n / o) .. ceil((i + 1) n / o) - 1."""
    i = np.arange(o)
    start, end = (i * n) // o, -((-(i + 1) * n) // o)
    j = np.arange(n)
    hit = (j >= start[:, None]) & (j < end[:, None])
    return (hit / (end - start)[:, None]).astype(dtype)


def _adaptive_meta(self, output_size):
    if self.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(self.shape)}")
    for d in range(1, self.ndim):
        if self.shape[d] == 0:
            raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(self.shape)} "
                               f"with dimension {d} being empty")
    if not self.dtype.is_floating_point:
        raise NotImplementedError('"adaptive_avg_pool2d" not implemented for '
                                  f"'{_dtype.scalar_type_name(self.dtype)}'")
    return TensorMeta((*self.shape[:-2], *output_size), self.dtype)


def _adaptive_kernel(a, output_size):
    mh = _adaptive_matrix(a.shape[-2], output_size[0], a.dtype)
    mw = _adaptive_matrix(a.shape[-1], output_size[1], a.dtype)
    return np.matmul(np.matmul(mh, a), mw.T)


def _adaptive_backward_kernel(g, a):
    mh = _adaptive_matrix(a.shape[-2], g.shape[-2], g.dtype)
    mw = _adaptive_matrix(a.shape[-1], g.shape[-1], g.dtype)
    return np.matmul(np.matmul(mh.T, g), mw)


_adaptive_avg_pool2d = defop(
    "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", INDEXING,
    kernel=_adaptive_kernel, meta=_adaptive_meta,
    derivatives={"self": lambda grad, self: _adaptive_avg_pool2d_backward(grad, self)})
_adaptive_avg_pool2d_backward = defop(
    "_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor", INDEXING,
    kernel=_adaptive_backward_kernel,
    meta=lambda grad_output, self: TensorMeta(tuple(self.shape), grad_output.dtype),
    derivatives={"grad_output": lambda grad, grad_output_sizes: _adaptive_avg_pool2d(
        grad, list(grad_output_sizes[-2:])), "self": lambda grad, self: F.zeros_like(self)})


def _adaptive_avg_pool2d_composite(self, output_size):
    """torch's composite: a 1x1 output is a ``mean`` (which fuses), the rest the primitive."""
    size = list(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if any(o < 0 for o in size):
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{{', '.join(map(str, size))}}}")
    if size == [1, 1] and self.ndim in (3, 4) and self.dtype.is_floating_point and \
            all(n for n in self.shape[1:]):
        return self.mean([-1, -2], keepdim=True)
    return _adaptive_avg_pool2d(self, size)


adaptive_avg_pool2d = defop("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                            COMPOSITE, decomposition=_adaptive_avg_pool2d_composite)
