"""``batch_norm``: normalise each channel over the batch (and spatial) dims.

Mirrors ``torch/_decomp/decompositions.py`` (``native_batch_norm_helper``).  In training mode
the normalisation is torch's single op ``_native_batch_norm_legit.no_stats``
(``batch_norm_ops.py``: one backward op, torch's saved tensors; Inductor decomposes it into
reductions and pointwise ops and fuses it like any other); eval mode is a composite of
pointwise ops.  For an input of
shape (N, C, *), with the statistics over every dim but 1 (``n = N * prod(*)`` values each)::

    training:  mean = E[x],  var = E[(x - mean)^2]          (biased: used to normalise)
               running_mean <- (1 - momentum) running_mean + momentum mean
               running_var  <- (1 - momentum) running_var  + momentum var * n / (n - 1)
                                                             (unbiased: what torch stores)
    eval:      mean, var = running_mean, running_var
    out = (x - mean) / sqrt(var + eps) * weight + bias      (weight, bias per channel)

The running statistics are updated in place (``copy_``) from detached values: they are buffers,
not part of the graph autograd differentiates.  Without running statistics, "eval" normalises
with the batch's own statistics (``training=True``), as torch's modules do with
``track_running_stats=False``.
"""

from __future__ import annotations

from .. import _api as F
from .. import _dtype
from .table import COMPOSITE, defop


def _check_channels(input, tensors) -> int:  # noqa: A002 - torch's name
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected an input with at least 2 dims (N, C, ...), got "
                         f"{input.ndim}D input")
    c = input.shape[1]
    for name, t in tensors.items():
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    return c


def _batch_norm(input, weight=None, bias=None, running_mean=None,  # noqa: A002
                running_var=None, training=False, momentum=0.1, eps=1e-5,
                cudnn_enabled=True):
    if not input.dtype.is_floating_point:
        raise NotImplementedError('"batch_norm" not implemented for '
                                  f"'{_dtype.scalar_type_name(input.dtype)}'")
    c = _check_channels(input, {"weight": weight, "bias": bias, "running_mean": running_mean,
                                "running_var": running_var})
    channel_shape = (1, c) + (1,) * (input.ndim - 2)
    if training:  # one op, as torch's: its backward is one op (batch_norm_ops.py)
        out, mean, rstd = F.ops.aten._native_batch_norm_legit.no_stats(
            input, weight, bias, True, momentum, eps)
        n = input.numel() // c
        if running_mean is not None:
            running_mean.copy_(running_mean * (1 - momentum) + mean.detach() * momentum)
        if running_var is not None:
            var = (rstd.detach() ** -2 - eps).clamp(min=0)  # the biased variance it used
            unbiased = var * (n / (n - 1) if n > 1 else float("inf"))
            running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
        return out
    else:
        if running_mean is None or running_var is None:
            which = "running_mean" if running_mean is None else "running_var"
            raise RuntimeError(f"{which} must be defined in evaluation mode")
        out = (input - running_mean.reshape(channel_shape)) \
            * (running_var.reshape(channel_shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(channel_shape)
    if bias is not None:
        out = out + bias.reshape(channel_shape)
    return out


batch_norm = defop(
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) "
    "-> Tensor", COMPOSITE, decomposition=_batch_norm)
