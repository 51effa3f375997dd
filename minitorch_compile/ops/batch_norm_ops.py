"""``_native_batch_norm_legit.no_stats`` and ``native_batch_norm_backward``: training-mode
batch norm as torch's single ops.

Mirrors ``aten/src/ATen/native/Normalization.cpp``, its lines of ``derivatives.yaml`` and the
decompositions of ``torch/_decomp/decompositions.py``.  ``batch_norm`` (a composite,
``batch_norm.py``) normalises a training batch with this op — which returns the output and
the per-channel ``save_mean`` and ``save_rstd`` it used — and updates the running statistics
itself from them (torch's graph has ``_native_batch_norm_legit_functional`` return the new
running statistics instead; the values are the same).  Its backward is ONE call for input,
weight and bias, as in torch's AOT graphs.  For an input (N, C, *), ``n = N * prod(*)``
values per channel, statistics over every dim but 1::

    forward:   mean = E[x],  rstd = 1 / sqrt(Var[x] + eps)           (biased variance)
               out  = (x - mean) * rstd * weight + bias
    backward:  x_c = x - mean,   g_sum = sum(grad),   dot = sum(grad * x_c)
               d_input  = (grad - x_c * dot * rstd^2 / n - g_sum / n) * rstd * weight
               d_weight = dot * rstd,   d_bias = g_sum

Inductor lowers both through the decompositions below (pointwise ops and reductions).  A
gradient of the backward differentiates ``backward_decomposition`` with ``mean`` and ``rstd``
taken for the functions of ``input`` they are (``ops/layer_norm.py`` explains the trick).
Eval mode (running statistics) stays a decomposition here (torch:
``_native_batch_norm_legit_no_training``).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .table import REDUCTION, TensorMeta, defop


def _dims(ndim: int) -> list:
    return [0, *range(2, ndim)]


def _per_channel(t, ndim: int):
    """A (C,) tensor shaped to broadcast against (N, C, *)."""
    return t.reshape([1, -1] + [1] * (ndim - 2))


# ---------------------------------------------------------------- decompositions


def forward_decomposition(input, weight, bias, training, momentum, eps):  # noqa: A002
    dims = _dims(input.ndim)
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    out = centered * rstd
    if weight is not None:
        out = out * _per_channel(weight, input.ndim)
    if bias is not None:
        out = out + _per_channel(bias, input.ndim)
    return out, mean.reshape([-1]), rstd.reshape([-1])


def backward_decomposition(grad_out, input, weight, save_mean, save_rstd,  # noqa: A002
                           output_mask):
    dims = _dims(input.ndim)
    n = input.numel() // input.shape[1]
    mean, rstd = _per_channel(save_mean, input.ndim), _per_channel(save_rstd, input.ndim)
    centered = input - mean
    g_sum = grad_out.sum(dims)
    dot = (grad_out * centered).sum(dims)
    d_input = d_weight = d_bias = None
    if output_mask[0]:
        scale = rstd if weight is None else rstd * _per_channel(weight, input.ndim)
        proj = centered * _per_channel(dot, input.ndim) * (rstd * rstd / n)
        d_input = (grad_out - proj - _per_channel(g_sum, input.ndim) / n) * scale
    if output_mask[1] and weight is not None:
        d_weight = dot * save_rstd
    if output_mask[2]:
        d_bias = g_sum
    return d_input, d_weight, d_bias


# ---------------------------------------------------------------- the forward op


def _forward_meta(input, weight, bias, training, momentum, eps):  # noqa: A002
    c = input.shape[1]
    return (TensorMeta(tuple(input.shape), input.dtype), TensorMeta((c,), input.dtype),
            TensorMeta((c,), input.dtype))


def _forward_kernel(x, weight, bias, training, momentum, eps):
    axes = tuple(_dims(x.ndim))
    shape = [1, -1] + [1] * (x.ndim - 2)
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    rstd = 1.0 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean.reshape(-1), rstd.reshape(-1)


native_batch_norm_legit = defop(
    "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, "
    "bool training, float momentum, float eps) -> (Tensor output, Tensor save_mean, "
    "Tensor save_rstd)", REDUCTION, kernel=_forward_kernel, meta=_forward_meta,
    nondifferentiable_outputs=(1, 2),
    derivatives={"input, weight, bias": lambda grad, input, weight, save_mean, save_rstd,
                 eps, grad_input_mask: F.ops.aten.native_batch_norm_backward(
                     grad, input, weight, None, None, save_mean, save_rstd, True, eps,
                     grad_input_mask)})

# ---------------------------------------------------------------- native_batch_norm_backward


def _backward_meta(grad_out, input, weight, running_mean, running_var, save_mean,  # noqa: A002
                   save_invstd, train, eps, output_mask):
    c = input.shape[1]
    shapes = (tuple(input.shape), (c,) if weight is not None else None, (c,))
    return tuple(TensorMeta(s if m and s is not None else (0,), input.dtype)
                 for s, m in zip(shapes, output_mask))


def _backward_kernel(gy, x, weight, running_mean, running_var, save_mean, save_invstd, train,
                     eps, output_mask):
    if not train:
        raise NotImplementedError("native_batch_norm_backward: eval mode (train=False) is "
                                  "not supported by minitorch_compile (eval batch norm "
                                  "decomposes)")
    axes = tuple(_dims(x.ndim))
    shape = [1, -1] + [1] * (x.ndim - 2)
    n = x.size // x.shape[1]
    rstd = save_invstd.reshape(shape)
    centered = x - save_mean.reshape(shape)
    g_sum = gy.sum(axis=axes)
    dot = (gy * centered).sum(axis=axes)
    empty = np.empty((0,), dtype=x.dtype)
    d_input = empty
    if output_mask[0]:
        scale = rstd if weight is None else rstd * weight.reshape(shape)
        d_input = (gy - centered * dot.reshape(shape) * (rstd * rstd / n)
                   - g_sum.reshape(shape) / n) * scale
    d_weight = dot * save_invstd if output_mask[1] and weight is not None else empty
    d_bias = g_sum if output_mask[2] else empty
    return d_input, d_weight, d_bias


def _double_backward(grads, grad_out, input, weight, save_mean, save_invstd,  # noqa: A002
                     output_mask, grad_input_mask):
    """Autograd through ``backward_decomposition``, ``save_mean``/``save_invstd`` recomputed
    from ``input`` (``rsqrt(var + c)``, ``c = invstd^-2 - var``: the saved value, eps's
    derivative 0) — see ``layer_norm._double_backward``."""
    from .. import autograd
    from .._dispatch import state
    from ..autograd.grad_mode import enable_grad

    create_graph = state.grad_enabled
    dims = _dims(input.ndim)
    with enable_grad():
        g, x, w = (None if t is None else t.view(list(t.shape))
                   for t in (grad_out, input, weight))
        mean = x.mean(dims)
        centered = x - _per_channel(mean, x.ndim)
        var = (centered * centered).mean(dims)
        rstd = (var + (save_invstd.detach() ** -2 - var).detach()).rsqrt()
        outs = backward_decomposition(g, x, w, mean, rstd, output_mask)
    tensors = (g, x, w, None, None, None, None)
    mask = [m and t is not None for t, m in zip(tensors, grad_input_mask)]
    wanted = [t for t, m in zip(tensors, mask) if m]
    pairs = [(o, gr) for o, gr in zip(outs, grads) if o is not None and o.requires_grad]
    if not pairs or not wanted:
        return [None] * len(tensors)
    got = iter(autograd.grad([o for o, _ in pairs], wanted, [gr for _, gr in pairs],
                             allow_unused=True, create_graph=create_graph))
    return [next(got) if m else None for m in mask]


native_batch_norm_backward = defop(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, "
    "Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, "
    "bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)", REDUCTION,
    kernel=_backward_kernel, meta=_backward_meta,
    derivatives={"grad_out, input, weight, running_mean, running_var, save_mean, save_invstd":
                 lambda grads, grad_out, input, weight, save_mean, save_invstd, output_mask,
                 grad_input_mask: _double_backward(grads, grad_out, input, weight, save_mean,
                                                   save_invstd, output_mask,
                                                   grad_input_mask)})
