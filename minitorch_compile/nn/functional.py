"""``nn.functional``: the stateless layer functions (``torch/nn/functional.py``).

The idea: every layer is a function of its input *and its weights*; a ``Module`` merely owns
the weights and calls one of these.  ``nn.Linear(2, 3)(x)`` is ``F.linear(x, weight, bias)``.

Each function has torch's signature and keyword names and is a thin adapter over one op of the
op table (``mtc.ops.aten.*``): it fills in Python-level conveniences (``dim=None`` for softmax,
legacy ``size_average``/``reduce``, a negative ``padding_idx``) and calls the op — so eager
mode, autograd and the compiler all see the same ops whichever API the user wrote.
"""

from __future__ import annotations

import warnings

from .._tensor import Tensor
from ..ops._ops import ops
from . import _reduction

_aten = ops.aten

__all__ = ["relu", "gelu", "tanh", "sigmoid", "silu", "hardtanh", "relu6", "hardswish",
           "hardsigmoid", "softmax", "log_softmax", "linear", "layer_norm", "batch_norm",
           "dropout", "embedding", "mse_loss", "l1_loss", "cross_entropy", "nll_loss"]

# ---------------------------------------------------------------- activations


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - torch's names
    """max(x, 0)."""
    return input.relu_() if inplace else _aten.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x); ``approximate='tanh'``: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return _aten.gelu(input, approximate=approximate)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return _aten.tanh(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-x))."""
    return _aten.sigmoid(input)


def _maybe_inplace(input: Tensor, out: Tensor, inplace: bool) -> Tensor:  # noqa: A002
    """``inplace=True``: write the result into ``input`` (torch's ``silu_``, ``hardtanh_``)."""
    return input.copy_(out) if inplace else out


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x) (also called swish)."""
    return _maybe_inplace(input, _aten.silu(input), inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 0 at and beyond the bounds."""
    return _maybe_inplace(input, _aten.hardtanh(input, min_val, max_val), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6) — ``hardtanh(x, 0, 6)``, as torch defines it."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * relu6(x + 3) / 6."""
    return _maybe_inplace(input, _aten.hardswish(input), inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6."""
    return _maybe_inplace(input, _aten.hardsigmoid(input), inplace)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """torch's legacy choice when ``dim`` is omitted: 0 for 0-, 1- and 3-D inputs, else 1."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype=None) -> Tensor:
    """exp(x_i) / sum_j exp(x_j) along ``dim`` (computed in ``dtype`` if given)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _aten.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype=None) -> Tensor:
    """x_i - log sum_j exp(x_j) along ``dim``."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _aten.log_softmax(input, dim, dtype)


# ---------------------------------------------------------------- layers


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """y = x W^T + b."""
    return _aten.linear(input, weight, bias)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing ``normalized_shape``."""
    if not isinstance(normalized_shape, int):
        normalized_shape = list(normalized_shape)
    return _aten.layer_norm(input, normalized_shape, weight, bias, eps)


def batch_norm(input: Tensor, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dims; in training, also update
    ``running_mean``/``running_var`` in place (``ops/batch_norm.py`` has the formulas)."""
    if training:
        size = tuple(input.shape)
        per_channel = size[0] if size else 1
        for s in size[2:]:
            per_channel *= s
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    return _aten.batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                            eps, False)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1/(1-p) (when training)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    out = _aten.dropout(input, p, training)
    if inplace and out is not input:
        return input.copy_(out)
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input``; ``padding_idx``'s row gets no grad."""
    if padding_idx is None:
        padding_idx = -1  # the op's "no padding row"
    elif padding_idx > 0:
        if padding_idx >= weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
    elif padding_idx < 0:
        if padding_idx < -weight.size(0):
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...) renormalises weight rows in place; "
                                  "it is not supported by minitorch_compile")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not "
                                  "supported by minitorch_compile")
    return _aten.embedding(weight, input, padding_idx)


# ---------------------------------------------------------------- losses


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """(input - target)^2, reduced; with ``weight``: sum(w (x-y)^2) / sum(w) for 'mean'."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    if weight is None:
        from ._functional_more import _warn_size  # (that module imports this one)

        _warn_size(input, target)  # in Python, as torch's F.mse_loss: the op just broadcasts
        return _aten.mse_loss(input, target, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    d = input - target
    weighted = d * d * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    if reduction == "mean":
        return weighted.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,  # noqa: A002
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    if weight is not None:
        raise NotImplementedError("l1_loss(weight=...) is not supported by minitorch_compile")
    return _aten.l1_loss(input, target, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """-w[y] * input[n, y] for the target class y of each sample (``input`` is log-probs)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    return _aten.nll_loss(input, target, weight, reduction, ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``nll_loss(log_softmax(input, 1), target)``, optionally with label smoothing.

    ``target`` holds class indices (int) or class probabilities (float, ``input``'s shape).
    """
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    return _aten.cross_entropy_loss(input, target, weight, reduction, ignore_index,
                                    label_smoothing)


# conv, pooling and padding live in _functional_layers.py (torch keeps one file; ours would pass
# 400 lines); re-exported here so ``F.conv2d`` is where torch has it
from ._functional_layers import *  # noqa: E402,F401,F403
from ._functional_layers import __all__ as _layers_all  # noqa: E402

__all__ += _layers_all
from ._functional_more import *  # noqa: E402,F401,F403 - activations, losses, norms, attention
from ._functional_more import __all__ as _more_all  # noqa: E402

__all__ += _more_all

# nn.MultiheadAttention's functional form (defined beside the module)
from .modules.multihead_attention import multi_head_attention_forward  # noqa: E402,F401

__all__ += ["multi_head_attention_forward"]
from .modules.simple_layers import (  # noqa: E402,F401
    dropout1d,
    dropout2d,
    dropout3d,
    pairwise_distance,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ += ["dropout1d", "dropout2d", "dropout3d", "pairwise_distance", "pixel_shuffle",
            "pixel_unshuffle"]
from .modules.loss_more import (  # noqa: E402,F401
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
)

__all__ += ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
            "cosine_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
            "gaussian_nll_loss", "multilabel_soft_margin_loss"]
from .modules.upsampling import interpolate  # noqa: E402,F401

__all__ += ["interpolate"]
from .modules.instancenorm import instance_norm  # noqa: E402,F401

__all__ += ["instance_norm"]
