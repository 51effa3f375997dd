"""``native_layer_norm`` and ``native_layer_norm_backward``: layer norm as torch's single ops.

Mirrors ``aten/src/ATen/native/layer_norm.cpp``, its lines of ``derivatives.yaml`` and the
decompositions of ``torch/_decomp/decompositions.py``.  ``layer_norm`` (a composite,
``nn_ops.py``) checks its arguments and calls ``native_layer_norm``, which returns the
normalised output with the ``mean`` and ``rstd`` it used (keepdim shapes, ``(*outer, 1...)``);
its backward is ONE call for the three inputs, as in torch's AOT graphs::

    forward:   mean = E[x],  rstd = 1 / sqrt(Var[x] + eps)          over the last k dims
               out  = (x - mean) * rstd * weight + bias
    backward:  x_hat = (x - mean) * rstd,   g = grad_out * weight,   N = inner numel
               d_input  = rstd / N * (N g - sum(g) - x_hat * sum(g * x_hat))   (inner sums)
               d_weight = sum over outer dims of grad_out * x_hat
               d_bias   = sum over outer dims of grad_out

Inductor lowers both through ``forward_decomposition`` / ``backward_decomposition`` (the same
functions, in primitives), so the fused kernels are what the composite gave.  A gradient of
``native_layer_norm_backward`` (double backward) differentiates ``backward_decomposition``
itself: one formula for its six tensor inputs.  An output not asked for in ``output_mask``
(or without a weight/bias) is an empty ``(0,)`` tensor, as ``convolution_backward``'s.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _api as F
from .table import REDUCTION, TensorMeta, defop


def _axis(input, normalized_shape) -> int:  # noqa: A002
    return input.ndim - len(normalized_shape)


# ---------------------------------------------------------------- decompositions


def forward_decomposition(input, normalized_shape, weight, bias, eps):  # noqa: A002
    dims = list(range(_axis(input, normalized_shape), input.ndim))
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    out = centered * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def backward_decomposition(grad_out, input, normalized_shape, mean, rstd, weight, bias,  # noqa: A002
                           output_mask):
    axis = _axis(input, normalized_shape)
    inner = list(range(axis, input.ndim))
    outer = list(range(axis))
    n = math.prod(input.shape[axis:])
    x_hat = (input - mean) * rstd
    g = grad_out * weight if weight is not None else grad_out
    d_input = d_weight = d_bias = None
    if output_mask[0]:
        d_input = (rstd / n) * (g * n - g.sum(inner, keepdim=True)
                                - x_hat * (g * x_hat).sum(inner, keepdim=True))
    if output_mask[1] and weight is not None:
        d_weight = (grad_out * x_hat).sum(outer) if outer else grad_out * x_hat
    if output_mask[2] and bias is not None:
        d_bias = grad_out.sum(outer) if outer else grad_out.clone()
    return d_input, d_weight, d_bias


# ---------------------------------------------------------------- native_layer_norm


def _forward_meta(input, normalized_shape, weight, bias, eps):  # noqa: A002
    stats = tuple(input.shape[:_axis(input, normalized_shape)]) + (1,) * len(normalized_shape)
    return (TensorMeta(tuple(input.shape), input.dtype), TensorMeta(stats, input.dtype),
            TensorMeta(stats, input.dtype))


def _forward_kernel(x, normalized_shape, weight, bias, eps):
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centered = x - mean
    rstd = 1.0 / np.sqrt((centered * centered).mean(axis=axes, keepdims=True) + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


native_layer_norm = defop(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "
    "float eps) -> (Tensor output, Tensor mean, Tensor rstd)", REDUCTION,
    kernel=_forward_kernel, meta=_forward_meta, nondifferentiable_outputs=(1, 2),
    derivatives={"input, weight, bias": lambda grad, input, normalized_shape, mean, rstd,
                 weight, bias, grad_input_mask: F.ops.aten.native_layer_norm_backward(
                     grad, input, normalized_shape, mean, rstd, weight, bias,
                     grad_input_mask)})

# ---------------------------------------------------------------- native_layer_norm_backward


def _backward_meta(grad_out, input, normalized_shape, mean, rstd, weight, bias,  # noqa: A002
                   output_mask):
    shapes = (input.shape, None if weight is None else weight.shape,
              None if bias is None else bias.shape)
    return tuple(TensorMeta(tuple(s) if m and s is not None else (0,), input.dtype)
                 for s, m in zip(shapes, output_mask))


def _backward_kernel(gy, x, normalized_shape, mean, rstd, weight, bias, output_mask):
    axis = x.ndim - len(normalized_shape)
    inner, outer = tuple(range(axis, x.ndim)), tuple(range(axis))
    n = math.prod(x.shape[axis:])
    x_hat = (x - mean) * rstd
    g = gy * weight if weight is not None else gy
    empty = np.empty((0,), dtype=x.dtype)
    d_input = (rstd / n) * (g * n - g.sum(axis=inner, keepdims=True)
                            - x_hat * (g * x_hat).sum(axis=inner, keepdims=True)) \
        if output_mask[0] else empty
    d_weight = (gy * x_hat).sum(axis=outer) if output_mask[1] and weight is not None else empty
    d_bias = gy.sum(axis=outer) if output_mask[2] and bias is not None else empty
    return d_input, d_weight, d_bias


def _double_backward(grads, grad_out, input, normalized_shape, mean, rstd, weight, bias,  # noqa: A002
                     output_mask, grad_input_mask):
    """The gradients of native_layer_norm_backward's inputs (torch's
    ``layer_norm_double_backward``): autograd through ``backward_decomposition``, with a graph
    when the running backward has ``create_graph``.

    As torch's formula, ``mean`` and ``rstd`` are taken for what they are, functions of
    ``input`` (their own gradients are not implemented, as in torch): they are recomputed from
    it, ``rstd`` as ``rsqrt(var + c)`` with the constant ``c = rstd^-2 - var`` (eps, recovered
    so the value is the saved one).  The decomposition runs on a fresh view of each input, so
    autograd.grad gives partial derivatives (``grad_out`` itself may depend on ``input``)
    still connected to the inputs' history for a derivative of higher order."""
    from .. import autograd
    from .._dispatch import state
    from ..autograd.grad_mode import enable_grad

    create_graph = state.grad_enabled
    dims = list(range(_axis(input, normalized_shape), input.ndim))
    with enable_grad():
        g, x, w, b = (None if t is None else t.view(list(t.shape))
                      for t in (grad_out, input, weight, bias))
        mean_x = x.mean(dims, keepdim=True)
        var_x = ((x - mean_x) * (x - mean_x)).mean(dims, keepdim=True)
        rstd_x = (var_x + (rstd.detach() ** -2 - var_x).detach()).rsqrt()
        outs = backward_decomposition(g, x, normalized_shape, mean_x, rstd_x, w, b,
                                      output_mask)
    mask = [m and t is not None for t, m in zip((g, x, None, None, w, b), grad_input_mask)]
    wanted = [t for t, m in zip((g, x, None, None, w, b), mask) if m]
    pairs = [(o, gr) for o, gr in zip(outs, grads) if o is not None and o.requires_grad]
    if not pairs or not wanted:
        return [None] * 6
    got = iter(autograd.grad([o for o, _ in pairs], wanted, [gr for _, gr in pairs],
                             allow_unused=True, create_graph=create_graph))
    return [next(got) if m else None for m in mask]


native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)", REDUCTION, kernel=_backward_kernel, meta=_backward_meta,
    derivatives={"grad_out, input, mean, rstd, weight, bias": _double_backward})
