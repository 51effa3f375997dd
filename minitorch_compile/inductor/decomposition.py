"""Decompositions: ops Inductor rewrites into a small primitive set before lowering
(``torch/_inductor/decomposition.py`` over ``torch/_decomp/decompositions.py``).

The op table's composites (``softmax``, ``layer_norm``, ``linear``, ``var``, the losses ...)
already decompose while Dynamo/AOT trace, into the table's primitives.  Some of those primitives
are still "big" ops with their own numpy kernel — ``_softmax``, ``_softmax_backward_data``,
``mean``, ``std`` — which an eager library wants and a fusing compiler does not: written as
reductions and pointwise ops, they fuse with their neighbours.  This table says how.

The primitive set after decomposition: pointwise ops, the reductions ``sum``/``amax``/
``amin``/``all``/``any``, views, ``full``, and ``mm``/``bmm`` (extern kernels).

Each decomposition is a plain function over tensors; ``GraphLowering`` traces it with
``make_fx`` on the node's fake inputs and lowers the small graph it gives, with the original
node as the origin of every buffer (so a softmax kernel is still named after ``_softmax``).
Entries are keyed by op *name*, so one written for an op another table adds later (``addmm``,
``silu``) starts to apply as soon as the op exists.  A decomposition that applies to some
arguments only raises ``NotImplementedError`` for the others: the op is then lowered (or falls
back) as it is.
"""

from __future__ import annotations

import math

from .. import _dtype
from ..ops.table import reduction_dims

decompositions: dict = {}  # "aten::name.overload" -> function


def register_decomposition(*names):
    def register(fn):
        for n in names:
            decompositions[n] = fn
        return fn
    return register


# ops a target keeps whole: its vector unit has the op as one instruction, so decomposing it
# would only trade one pass over a tile for many (torch_npu's Inductor likewise drops the
# decompositions of ops the npu runs natively; the Ascend C high-level API has ``Gelu``); the
# CPU lowers float32 ``gelu`` as one shared body with its constants folded (``ops/_erf.py``:
# 18 passes where the decomposition's makes 20), other dtypes call the eager kernel per tile
KEPT_WHOLE = {"npu": {"aten::gelu"}, "cpu": {"aten::gelu"}}


def get_decomposition(op, device_type: str = "cpu"):
    """The decomposition of an ``OpOverload`` for ``device_type``'s code generator, or ``None``."""
    if f"{op.namespace}::{op.name}" in KEPT_WHOLE.get(device_type, ()):
        return None
    return decompositions.get(op.qualified_name) or decompositions.get(
        f"{op.namespace}::{op.name}")


def _numel(shape, dims) -> int:
    n = 1
    for d in dims:
        n *= shape[d]
    return n


@register_decomposition("aten::_softmax")
def _softmax(x, dim, half_to_float):
    """softmax = exp(x - max) / sum(exp(x - max)): two reductions, one pass per row."""
    shifted = x - x.amax(dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim, keepdim=True)


@register_decomposition("aten::_log_softmax")
def _log_softmax(x, dim, half_to_float):
    shifted = x - x.amax(dim, keepdim=True)
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


@register_decomposition("aten::_softmax_backward_data")
def _softmax_backward_data(grad_output, output, dim, input_dtype):
    out = output * (grad_output - (grad_output * output).sum(dim, keepdim=True))
    return out if out.dtype is input_dtype else out.to(input_dtype)


@register_decomposition("aten::_log_softmax_backward_data")
def _log_softmax_backward_data(grad_output, output, dim, input_dtype):
    out = grad_output - output.exp() * grad_output.sum(dim, keepdim=True)
    return out if out.dtype is input_dtype else out.to(input_dtype)


@register_decomposition("aten::mean")
def mean(x, dim=None, keepdim=False, dtype=None):
    dims = reduction_dims(dim, x.ndim)
    low = dtype is None and x.dtype is _dtype.float16
    if low:  # as torch's lowering: a half-precision mean sums and divides in float32
        x = x.to(_dtype.float32)
    total = x.sum(dims, keepdim=keepdim, dtype=dtype)
    out = total / _numel(tuple(x.shape), dims)
    return out.to(_dtype.float16) if low else out


@register_decomposition("aten::std")
def std(x, dim=None, correction=None, keepdim=False):
    dims = reduction_dims(dim, x.ndim)
    n = _numel(tuple(x.shape), dims)
    centered = x - mean(x, dims, keepdim=True)
    c = 1 if correction is None else correction
    return ((centered * centered).sum(dims, keepdim=keepdim) / max(n - c, 0)).sqrt()


@register_decomposition("aten::gelu")
def gelu(x, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + inner.tanh())
    # torch's decomposition: ``x * M_SQRT1_2``, a multiply (a divide costs twice the pass)
    return 0.5 * x * (1 + (x * _M_SQRT1_2).erf())


_M_SQRT1_2 = 0.70710678118654752440


@register_decomposition("aten::silu")
def silu(x):
    return x * x.sigmoid()


@register_decomposition("aten::addmm")
def addmm(bias, mat1, mat2, beta=1, alpha=1):
    out = mat1.mm(mat2)
    if alpha != 1:
        out = out * alpha
    if beta == 0:
        return out
    return out + (bias if beta == 1 else bias * beta)


@register_decomposition("aten::index_put")
def index_put(x, indices, values, accumulate=False):
    """A bool mask of ``x``'s shape and one value is a masked fill (torch's
    ``index_put_as_masked_fill`` pattern): ``where(mask, value, x)`` — pointwise, it fuses.
    Any other index (integers, a mask of fewer dims, several values) is a real scatter."""
    if len(indices) != 1 or indices[0] is None or indices[0].dtype is not _dtype.bool_ or \
            tuple(indices[0].shape) != tuple(x.shape) or values.ndim != 0:
        raise NotImplementedError("index_put: not a masked fill")
    mask = indices[0]
    value = values.to(x.dtype)
    if accumulate:
        return _where(mask, x + value, x)
    return _where(mask, value, x)


def _where(cond, a, b):
    from .._api import where

    return where(cond, a, b)


@register_decomposition("aten::masked_fill")
def masked_fill(x, mask, value):
    """``where(mask, value, x)`` with the value cast to ``x``'s dtype: pointwise, so it fuses
    (torch's Inductor lowers masked_fill the same way)."""
    from .._api import where

    if hasattr(value, "dtype"):
        return where(mask, value.to(x.dtype), x)
    return where(mask, _cast_number(value, x.dtype), x)


def _cast_number(value, dtype):
    """A Python number as ``dtype`` would hold it (``2.7`` in an int tensor is 2)."""
    if dtype is _dtype.bool_:
        return bool(value)
    return value if dtype.is_floating_point else int(value)


# ---------------------------------------------------------------- losses (torch/_decomp)
# AOT graphs keep mse_loss and nll_loss_forward whole, with their backward ops, as torch's do;
# Inductor writes them as pointwise ops and reductions so they fuse with their neighbours.
# ``reduction`` is torch's enum: 0 none, 1 mean, 2 sum.


def _apply_reduction(loss, reduction):
    if reduction == 0:
        return loss
    return loss.mean() if reduction == 1 else loss.sum()


@register_decomposition("aten::mse_loss")
def mse_loss(x, y, reduction="mean"):
    from ..ops.loss_ops import reduction_enum

    d = x - y
    return _apply_reduction(d * d, reduction_enum(reduction))


@register_decomposition("aten::mse_loss_backward")
def mse_loss_backward(grad_output, x, y, reduction):
    n = _numel(tuple(x.shape), range(x.ndim)) if reduction == 1 else 1
    return (2.0 / n) * (x - y) * grad_output


def _target_one_hot(x, target, ignore_index, check=True):
    """(hit, valid): the bool one-hot of each row's target and whether the row counts; the
    targets' bounds checked at run time (``_check_class_indices``, as the eager kernel does) —
    by the forward only: a backward's targets are the ones its forward checked."""
    from .._api import arange, ops

    c = x.shape[-1]
    if check:
        target = ops.aten._check_class_indices(target, c, ignore_index)
    hit = target.unsqueeze(-1) == arange(c, device=target.device)
    return hit, target != ignore_index


def _row_weight(x, hit, valid, weight):
    w = _where(valid, 1.0, 0.0).to(x.dtype)
    if weight is not None:
        w = w * _where(hit, weight, 0).sum(-1)
    return w


@register_decomposition("aten::nll_loss_forward")
def nll_loss_forward(x, target, weight, reduction, ignore_index):
    hit, valid = _target_one_hot(x, target, ignore_index)
    w = _row_weight(x, hit, valid, weight)
    loss = -_where(hit, x, 0).sum(-1) * w
    total_weight = w.sum()
    if reduction == 0:
        return loss, total_weight * 0
    out = loss.sum()
    return (out / total_weight if reduction == 1 else out), total_weight


@register_decomposition("aten::nll_loss_backward")
def nll_loss_backward(grad_output, x, target, weight, reduction, ignore_index, total_weight):
    hit, valid = _target_one_hot(x, target, ignore_index, check=False)
    w = _row_weight(x, hit, valid, weight)
    g = grad_output.unsqueeze(-1) if reduction == 0 and x.ndim == 2 else grad_output
    scale = -w.unsqueeze(-1) * g if x.ndim == 2 else -w * g
    if reduction == 1:
        scale = scale / total_weight
    return _where(hit, scale, 0)


# ---------------------------------------------------------------- layer norm (torch/_decomp)


@register_decomposition("aten::native_layer_norm")
def native_layer_norm(x, normalized_shape, weight, bias, eps):
    from ..ops.layer_norm import forward_decomposition

    return forward_decomposition(x, normalized_shape, weight, bias, eps)


@register_decomposition("aten::native_layer_norm_backward")
def native_layer_norm_backward(grad_out, x, normalized_shape, mean, rstd, weight, bias,
                               output_mask):
    from .._api import empty
    from ..ops.layer_norm import backward_decomposition

    outs = backward_decomposition(grad_out, x, normalized_shape, mean, rstd, weight, bias,
                                  output_mask)
    return tuple(empty((0,), dtype=x.dtype) if o is None else o for o in outs)


# ---------------------------------------------------------------- batch norm (torch/_decomp)


@register_decomposition("aten::_native_batch_norm_legit.no_stats")
def native_batch_norm_legit(x, weight, bias, training, momentum, eps):
    from ..ops.batch_norm_ops import forward_decomposition

    return forward_decomposition(x, weight, bias, training, momentum, eps)


@register_decomposition("aten::native_batch_norm_backward")
def native_batch_norm_backward(grad_out, x, weight, running_mean, running_var, save_mean,
                               save_invstd, train, eps, output_mask):
    from .._api import empty
    from ..ops.batch_norm_ops import backward_decomposition

    if not train:
        raise NotImplementedError("native_batch_norm_backward: eval mode")
    outs = backward_decomposition(grad_out, x, weight, save_mean, save_invstd, output_mask)
    return tuple(empty((0,), dtype=x.dtype) if o is None else o for o in outs)
