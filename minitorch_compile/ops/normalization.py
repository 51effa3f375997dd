"""``group_norm`` and ``rms_norm``: composites of reductions and pointwise ops.

Mirrors ``torch/_decomp/decompositions.py`` (``native_group_norm``) and ``torch/_refs``'
``rms_norm``; Inductor fuses them like ``layer_norm`` (a reduction with its prologue and
epilogue in one kernel)::

    group_norm:  x (N, C, *) viewed as (N, G, C/G * prod(*)); each row normalised by its own
                 mean and biased variance; then the per-channel affine  y * w[c] + b[c]
    rms_norm:    x * rsqrt(mean(x^2 over normalized_shape) + eps) * weight
                 (eps defaults to the dtype's machine epsilon, as torch's)
"""

from __future__ import annotations

import numpy as np

from .table import COMPOSITE, defop


def _shape_text(t) -> str:
    return f"[{', '.join(map(str, t.shape))}]"


def _group_norm(input, num_groups, weight=None, bias=None, eps=1e-05,  # noqa: A002
                cudnn_enabled=True):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_shape_text(input)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_shape_text(t)} "
                               f"and input of shape {_shape_text(input)}")
    x = input.reshape([n, num_groups, -1])
    mean = x.mean(-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(-1, keepdim=True)
    out = (centered * (var + eps).rsqrt()).reshape(list(input.shape))
    channel = [1, c] + [1] * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(channel)
    if bias is not None:
        out = out + bias.reshape(channel)
    return out


group_norm = defop("group_norm(Tensor input, int num_groups, Tensor? weight=None, "
                   "Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
                   COMPOSITE, decomposition=_group_norm)


def _rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(shape)
    if k == 0 or list(input.shape[input.ndim - k:]) != shape or k > input.ndim:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size"
                           f"{_shape_text(input)}")
    if eps is None:
        eps = float(np.finfo(input.dtype.np).eps) if input.dtype.is_floating_point else 1e-7
    dims = list(range(input.ndim - k, input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


rms_norm = defop("rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                 "float? eps=None) -> Tensor", COMPOSITE, decomposition=_rms_norm)
