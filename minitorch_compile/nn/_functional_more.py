"""``nn.functional``'s further activations, losses, normalizations, attention and helpers
(``torch/nn/functional.py``; re-exported by ``functional.py``).

Thin adapters over the op table (``ops/activations_more.py``, ``ops/losses.py``,
``ops/normalization.py``, ``ops/attention.py``) with torch's signatures; the few that torch
itself writes in Python (``softsign``, ``softmin``, ``tanhshrink``, ``normalize``, the
``'batchmean'`` reduction of ``kl_div``) are written here the same way.
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..ops._ops import ops
from . import _reduction

_aten = ops.aten

__all__ = ["leaky_relu", "elu", "selu", "celu", "softplus", "mish", "logsigmoid", "softsign",
           "tanhshrink", "glu", "prelu", "softmin", "threshold", "hardshrink", "softshrink",
           "group_norm", "rms_norm", "normalize", "one_hot", "cosine_similarity",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "smooth_l1_loss",
           "huber_loss", "kl_div", "scaled_dot_product_attention"]


def _maybe_inplace(input: Tensor, out: Tensor, inplace: bool) -> Tensor:  # noqa: A002
    return input.copy_(out) if inplace else out


# ---------------------------------------------------------------- activations


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002 - torch's names
               inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    return _maybe_inplace(input, _aten.leaky_relu(input, negative_slope), inplace)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x if x > 0 else alpha (exp(x) - 1)."""
    return _maybe_inplace(input, _aten.elu(input, alpha), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _maybe_inplace(input, _aten.selu(input), inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    return _maybe_inplace(input, _aten.celu(input, alpha), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta; x itself where beta x > threshold."""
    return _aten.softplus(input, beta, threshold)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x tanh(softplus(x))."""
    return _maybe_inplace(input, _aten.mish(input), inplace)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(x)), computed as -softplus(-x)."""
    return _aten.log_sigmoid(input)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    return input - input.tanh()


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b) for the two halves a, b of ``input`` along ``dim``."""
    return _aten.glu(input, dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x if x > 0 else weight[c] x (one learnt slope per channel, or one for all)."""
    return _aten.prelu(input, weight)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """softmax(-x)."""
    if dim is None:
        from .functional import _get_softmax_dim

        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _aten.softmax(-input, dim, dtype)


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _aten.threshold(input, threshold, value), inplace)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    return _aten.hardshrink(input, lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    return _aten.softshrink(input, lambd)


# ---------------------------------------------------------------- normalization


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each of ``num_groups`` channel groups per sample; per-channel affine."""
    return _aten.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the trailing ``normalized_shape``."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    return _aten.rms_norm(input, shape, weight, eps)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out=None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``."""
    if out is not None:
        raise NotImplementedError("normalize(out=...) is not supported by minitorch_compile")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_type_name(input)}")
    if p == 2:  # sqrt of a clamped sum: an all-zero slice gets gradient 0, as torch's norm
        norm = (input * input).sum(dim, keepdim=True).clamp(min=1e-30).sqrt()
    elif p == 1:
        norm = input.abs().sum(dim, keepdim=True)
    elif p == float("inf"):
        norm = input.abs().amax(dim, keepdim=True)
    else:
        norm = (input.abs() ** p).sum(dim, keepdim=True) ** (1.0 / p)
    return input / norm.clamp(min=eps)


def _type_name(t: Tensor) -> str:
    from .. import _dtype

    return _dtype.scalar_type_name(t.dtype)


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:  # noqa: A002 - torch's binding
    """int64 one-hot encoding along a new last dim (``num_classes=-1``: max + 1)."""
    return _aten.one_hot(input, num_classes)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """<x1, x2> / (max(||x1||, eps) max(||x2||, eps)) along ``dim``."""
    return _aten.cosine_similarity(x1, x2, dim, eps)


# ---------------------------------------------------------------- losses


def _legacy(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _reduction.legacy_get_string(size_average, reduce)
    return reduction


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)); ``input`` holds probabilities."""
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if weight is not None:
        weight = weight.expand(list(target.shape))
    return _aten.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)``, computed stably from the logits."""
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return _aten.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def _warn_size(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.", stacklevel=3)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None,  # noqa: A002
                   reduce=None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""
    _warn_size(input, target)
    return _aten.smooth_l1_loss(input, target, _legacy(size_average, reduce, reduction), beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    if weight is not None:
        raise NotImplementedError("huber_loss(weight=...) is not supported by minitorch_compile")
    _warn_size(input, target)
    return _aten.huber_loss(input, target, reduction, delta)


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """sum t (log t - x) with ``input`` = log-probabilities; ``'batchmean'`` divides by N."""
    reduction = _legacy(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction == "batchmean":
        loss = _aten.kl_div(input, target, "sum", log_target=log_target)
        return loss / input.shape[0] if input.ndim != 0 else loss
    return _aten.kl_div(input, target, reduction, log_target=log_target)


# ---------------------------------------------------------------- attention


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v (torch's math path)."""
    return _aten.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p,
                                              is_causal, scale=scale, enable_gqa=enable_gqa)
