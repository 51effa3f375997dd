"""Neural-network ops: softmax, log_softmax, layer_norm, losses, dropout, embedding.

All but ``embedding`` are composites: their decompositions (the ones ``torch/_decomp`` uses)
are what autograd, tracing and the code generator see.  ``embedding`` is a primitive gather
whose backward, ``embedding_dense_backward``, scatters gradients back with ``np.add.at``.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .loss_ops import reduction_enum
from .table import COMPOSITE, INDEXING, REDUCTION, MetaError, TensorMeta, defop, wrap_dim

# ---------------------------------------------------------------- softmax


def _check_dim(name, dim, ndim):
    """Validate ``dim`` up front, so a bad one is reported by this op, not by ``amax``."""
    try:
        wrap_dim(dim, ndim)
    except IndexError as e:
        raise IndexError(f"{name}: {e}") from None


def _as_float(x, dtype):
    x = x if dtype is None else x.to(dtype)
    return x if x.dtype.is_floating_point else x.to(_dtype.get_default_dtype())


def _check_floating(name, self, dim, dtype):
    """An integer input needs ``dtype=``: torch's CPU kernels name themselves in the error."""
    if dtype is None and not self.dtype.is_floating_point:
        last = "_lastdim" if self.ndim == 0 or dim % self.ndim == self.ndim - 1 else ""
        raise NotImplementedError(f'"{name}{last}_kernel_impl" not implemented for '
                                  f"'{_dtype.scalar_type_name(self.dtype)}'")


def _softmax_composite(self, dim, dtype=None):
    """``softmax`` = ``_softmax`` on a floating-point input (torch's CompositeImplicit rule)."""
    _check_dim("softmax", dim, self.ndim)
    _check_floating("softmax", self, dim, dtype)
    return F.ops.aten._softmax(_as_float(self, dtype), dim, False)


def _log_softmax_composite(self, dim, dtype=None):
    _check_dim("log_softmax", dim, self.ndim)
    _check_floating("log_softmax", self, dim, dtype)
    return F.ops.aten._log_softmax(_as_float(self, dtype), dim, False)


softmax = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                COMPOSITE, decomposition=_softmax_composite)
log_softmax = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                    COMPOSITE, decomposition=_log_softmax_composite)


# The primitives, with torch's derivatives: the backward of softmax reads only its *output*
# (y * (g - sum(g * y))), which is what lets a partitioner save one tensor for it.


def _norm_meta(name):
    def meta(self, dim, half_to_float=False):
        if not self.dtype.is_floating_point:
            raise MetaError(f'"{name}" not implemented for \'{self.dtype.name}\'')
        wrap_dim(dim, self.ndim)
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


def _axis(a, dim):
    return dim % a.ndim if a.ndim else None


def _softmax_kernel(a, dim, half_to_float=False):
    shifted = a - np.max(a, axis=_axis(a, dim), keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=_axis(a, dim), keepdims=True)


def _log_softmax_kernel(a, dim, half_to_float=False):
    shifted = a - np.max(a, axis=_axis(a, dim), keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=_axis(a, dim), keepdims=True))


defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", REDUCTION,
      kernel=_softmax_kernel, meta=_norm_meta("softmax"),
      derivatives={"self": lambda grad, result, dim, self: F.ops.aten._softmax_backward_data(
          grad, result, dim, self.dtype)})
defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", REDUCTION,
      kernel=_log_softmax_kernel, meta=_norm_meta("log_softmax"),
      derivatives={"self": lambda grad, result, dim, self:
                   F.ops.aten._log_softmax_backward_data(grad, result, dim, self.dtype)})


def _backward_meta(grad_output, output, dim, input_dtype):
    return TensorMeta(tuple(grad_output.shape), input_dtype)


def _sum_keep(t, dim):
    return t.sum(dim, keepdim=True)


defop("_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor", REDUCTION, meta=_backward_meta,
      kernel=lambda g, y, dim, input_dtype: y * (g - np.sum(g * y, axis=_axis(y, dim),
                                                              keepdims=True)),
      derivatives={
          "grad_output": lambda grad, output, dim, input_dtype:
              F.ops.aten._softmax_backward_data(grad, output, dim, input_dtype),
          "output": lambda grad, grad_output, output, dim:
              grad * (grad_output - _sum_keep(grad_output * output, dim))
              - grad_output * _sum_keep(grad * output, dim)})
defop("_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor", REDUCTION, meta=_backward_meta,
      kernel=lambda g, y, dim, input_dtype: g - np.exp(y) * np.sum(g, axis=_axis(y, dim),
                                                                   keepdims=True),
      derivatives={
          "grad_output": lambda grad, output, dim: grad - _sum_keep(grad * output.exp(), dim),
          "output": lambda grad, grad_output, output, dim:
              -grad * output.exp() * _sum_keep(grad_output, dim)})

# ---------------------------------------------------------------- layer_norm


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """(x - mean) / sqrt(var + eps) * weight + bias over the trailing ``normalized_shape``."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.ndim - k:]) != normalized_shape or k == 0:
        raise RuntimeError(
            f"layer_norm: Given normalized_shape={list(normalized_shape)}, expected input with "
            f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of size"
            f"{list(input.shape)}")
    # one op, as torch's (ops/layer_norm.py): its backward is one op too
    return F.ops.aten.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


layer_norm = defop(
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05) -> Tensor", COMPOSITE, decomposition=_layer_norm)

# ---------------------------------------------------------------- losses


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input, target):  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        import warnings

        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", stacklevel=5)


# mse_loss is a single op, as in torch: ops/loss_ops.py


def _l1_loss(input, target, reduction="mean"):  # noqa: A002
    """|input - target|, reduced (torch's composite; its gradient is abs's, sign(x - y))."""
    _warn_size(input, target)
    return _reduce((input - target).abs(), reduction)


l1_loss = defop("l1_loss(Tensor input, Tensor target, str reduction='mean') -> Tensor",
                COMPOSITE, decomposition=_l1_loss)


def _class_one_hot(target, num_classes, class_dim, ndim):
    """Boolean one-hot of integer ``target`` along ``class_dim`` (a broadcast compare)."""
    shape = [1] * ndim
    shape[class_dim] = num_classes
    return target.unsqueeze(class_dim) == F.arange(num_classes, device=target.device).view(shape)


def _nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):  # noqa: A002
    """-input[n, target[n]] (weighted), averaged over the weights of the non-ignored targets."""
    if input.ndim < 1 or input.ndim > 1 and (
            target.ndim != input.ndim - 1 or target.shape[0] != input.shape[0]):
        raise RuntimeError(f"nll_loss: Expected input batch_size ({input.shape[0]}) to match "
                           f"target batch_size ({target.shape[0] if target.ndim else 0}).")
    if target.dtype.is_floating_point or target.dtype is _dtype.bool_:
        raise RuntimeError(f"nll_loss: expected scalar type Long but found "
                           f"{target.dtype.name.capitalize()}")
    if input.ndim <= 2:  # torch's nll_loss_nd: one op (its backward, one op too)
        return F.ops.aten.nll_loss_forward(input, target, weight, reduction_enum(reduction),
                                           ignore_index)[0]
    class_dim = 1  # more dims: decomposed (torch reshapes them for nll_loss2d)
    c = input.shape[class_dim]
    target = F.ops.aten._check_class_indices(target, c, ignore_index)
    valid = target != ignore_index
    hit = _class_one_hot(target, c, class_dim, input.ndim)
    picked = F.where(hit, input, 0).sum(class_dim)
    w = F.where(valid, 1.0, 0.0).to(input.dtype)
    if weight is not None:
        w = w * F.where(hit, weight.view([c] + [1] * (input.ndim - class_dim - 1)), 0) \
            .sum(class_dim)
    loss = -picked * w
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


def _check_class_indices_kernel(target, num_classes, ignore_index):
    bad = (target != ignore_index) & ((target < 0) | (target >= num_classes))
    if bad.any():
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    return target.copy()


# the one-hot decomposition would silently ignore a class index out of range; this op checks
# the values at run time (an assert node in traced graphs, like torch's _assert_async)
defop("_check_class_indices(Tensor target, SymInt num_classes, SymInt ignore_index) -> Tensor",
      INDEXING, kernel=_check_class_indices_kernel,
      meta=lambda target, num_classes, ignore_index: TensorMeta(tuple(target.shape),
                                                                 target.dtype),
      differentiable=False)


def _assert_async_kernel(self, assert_msg):
    if not bool(np.asarray(self).reshape(-1)[0]):
        raise AssertionError(*([assert_msg] if assert_msg else []))
    return np.zeros((), dtype=np.bool_)


# `assert cond` on a one-element tensor inside compiled code (torch's _assert_async): the
# compiler puts this node in the graph instead of breaking; it raises at run time.  Its result
# is never used — dead-code elimination keeps it (``_mtc_side_effect``)
_assert_async = defop("_assert_async(Tensor self, str assert_msg='') -> Tensor", INDEXING,
                      kernel=_assert_async_kernel,
                      meta=lambda self, assert_msg='': TensorMeta((), _dtype.bool_),
                      differentiable=False)
_assert_async._mtc_side_effect = True


nll_loss = defop(
    "nll_loss(Tensor input, Tensor target, Tensor? weight=None, str reduction='mean', "
    "SymInt ignore_index=-100) -> Tensor", COMPOSITE, decomposition=_nll_loss)


def _cross_entropy(input, target, weight=None, ignore_index=-100,  # noqa: A002
                   reduction="mean", label_smoothing=0.0):
    class_dim = 0 if input.ndim == 1 else 1
    logp = _log_softmax_composite(input, class_dim)
    if target.dtype.is_floating_point:  # class probabilities
        if ignore_index != -100:
            raise RuntimeError("cross_entropy: ignore_index is not supported for floating point "
                               "target")
        if tuple(target.shape) != tuple(input.shape):
            raise RuntimeError("cross_entropy: expected target of the input's shape for class "
                               "probabilities")
        c = input.shape[class_dim]
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / c
        term = logp * target
        if weight is not None:
            term = term * weight.view([c] + [1] * (input.ndim - class_dim - 1))
        return _reduce(-term.sum(class_dim), reduction)
    loss = _nll_loss(logp, target, weight, reduction, ignore_index)
    if not label_smoothing:
        return loss
    c = input.shape[class_dim]
    valid = (target != ignore_index).to(input.dtype)
    smooth = logp if weight is None else \
        logp * weight.view([c] + [1] * (input.ndim - class_dim - 1))
    smooth = -smooth.sum(class_dim) * valid
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            hit = _class_one_hot(target, c, class_dim, input.ndim)
            wsum = (F.where(hit, weight.view([c] + [1] * (input.ndim - class_dim - 1)), 0)
                    .sum(class_dim) * valid).sum()
            smooth = smooth.sum() / wsum
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * loss + label_smoothing / c * smooth


cross_entropy = defop(
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, "
    "str reduction='mean', SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    COMPOSITE,
    decomposition=lambda self, target, weight=None, reduction="mean", ignore_index=-100,
    label_smoothing=0.0: _cross_entropy(self, target, weight, ignore_index, reduction,
                                        label_smoothing))

# ---------------------------------------------------------------- dropout


def _dropout(input, p=0.5, train=True):  # noqa: A002
    """Zero each element with probability p, scale the survivors by 1/(1-p)."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    if p == 1:
        return input * F.zeros_like(input)
    # torch's draw and order: noise = bernoulli_(1 - p) (a float64 uniform below 1 - p),
    # noise / (1 - p), then input * noise; the draw is kept as a bool mask (what AOT saves)
    keep = F.ops.aten.bernoulli.p(F.empty_like(input, dtype=_dtype.bool_), 1 - p)
    return input * (keep.to(input.dtype) / (1 - p))


dropout = defop("dropout(Tensor input, float p, bool train) -> Tensor", COMPOSITE,
                decomposition=_dropout)

# ---------------------------------------------------------------- embedding


def _embedding_meta(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if scale_grad_by_freq or sparse:  # both change the backward, which would ignore them
        raise NotImplementedError("embedding: scale_grad_by_freq=True and sparse=True are not "
                                  "supported")
    if weight.ndim != 2:
        raise MetaError(f"embedding: 'weight' must be 2-D, got {weight.ndim}-D")
    if indices.dtype.is_floating_point or indices.dtype is _dtype.bool_:
        raise MetaError("embedding: Expected tensor for argument #1 'indices' to have one of the "
                        f"following scalar types: Long, Int; but got {indices.dtype.name} "
                        "instead")
    return TensorMeta(tuple(indices.shape) + (weight.shape[1],), weight.dtype)


def _embedding_kernel(w, idx, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError(f"embedding: index out of range in self (num_embeddings={w.shape[0]})")
    return w[idx]


embedding = defop(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
    "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", INDEXING,
    kernel=_embedding_kernel, meta=_embedding_meta,
    derivatives={"weight": lambda grad, weight_sizes, indices, padding_idx:
                 F.ops.aten.embedding_dense_backward(grad, indices, weight_sizes[0],
                                                     padding_idx)})


def _embedding_backward_kernel(g, idx, num_weights, padding_idx):
    out = np.zeros((num_weights, g.shape[-1]), dtype=g.dtype)
    np.add.at(out, idx.reshape(-1), g.reshape(-1, g.shape[-1]))
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _embedding_double_backward(grad, indices, padding_idx):
    """Gather ``grad``'s rows back; padding rows were zeroed forward, so get none (torch's
    ``embedding_dense_double_backward``)."""
    out = F.ops.aten.embedding(grad, indices)
    if padding_idx >= 0:
        out = F.where((indices == padding_idx).unsqueeze(-1), 0, out)
    return out


embedding_dense_backward = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx) -> Tensor", INDEXING, kernel=_embedding_backward_kernel,
    meta=lambda grad_output, indices, num_weights, padding_idx: TensorMeta(
        (num_weights, grad_output.shape[-1]), grad_output.dtype),
    derivatives={"grad_output": _embedding_double_backward})

