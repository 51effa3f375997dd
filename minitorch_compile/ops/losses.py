"""More loss composites: ``binary_cross_entropy`` (+ ``_with_logits``), ``smooth_l1_loss``,
``huber_loss``, ``kl_div``; and ``cosine_similarity``, ``one_hot``.

Mirrors ``torch/_decomp/decompositions.py`` (the losses) and ``aten/src/ATen/native/Loss.cpp``.
Pointwise formulas, reduced by ``nn_ops._reduce`` ('none' | 'mean' | 'sum')::

    binary_cross_entropy        -w (t log x + (1 - t) log(1 - x)),  each log clamped at -100
    ..._with_logits             (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)
    smooth_l1_loss (beta)       0.5 d^2 / beta  if |d| < beta  else |d| - 0.5 beta
    huber_loss (delta)          0.5 d^2         if |d| < delta else delta (|d| - 0.5 delta)
    kl_div                      t log t - t x   (log_target: exp(t) (t - x))

``binary_cross_entropy`` takes the log of ``clamp(x, e^-100)`` rather than clamping the log
afterwards: the value is the same, but at ``x = 1`` (a saturated sigmoid) the branch
``log(1 - x)`` would otherwise send ``0 * inf = NaN`` back; its gradient is torch's
``(x - t) / (x (1 - x))``.  Input values outside [0, 1] raise torch's error at run time (a
``_check_bce_input`` node, kept in compiled graphs like ``_assert_async``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _api as F
from .. import _dtype
from .indexing import _dynamic_output_shape, _has_data
from .nn_ops import _reduce
from .table import COMPOSITE, INDEXING, TensorMeta, defop

_LOG_FLOOR = math.exp(-100.0)  # torch clamps BCE's logs at -100


def _check_bce_input_kernel(self):
    if not np.all((self >= 0) & (self <= 1)):  # NaN fails too, as in torch
        raise RuntimeError("all elements of input should be between 0 and 1")
    return np.zeros((), dtype=np.bool_)


_check_bce_input = defop("_check_bce_input(Tensor self) -> Tensor", INDEXING,
                         kernel=_check_bce_input_kernel,
                         meta=lambda self: TensorMeta((), _dtype.bool_), differentiable=False)
_check_bce_input._mtc_side_effect = True


def _binary_cross_entropy(self, target, weight=None, reduction="mean"):
    if target.dtype is not self.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_type_name(target.dtype)} but expected "
                           f"{_dtype.scalar_type_name(self.dtype)}")
    _check_bce_input(self)
    log_x = self.clamp(min=_LOG_FLOOR).log()
    log_1mx = (1 - self).clamp(min=_LOG_FLOOR).log()
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_with_logits(self, target, weight=None, pos_weight=None, reduction="mean"):
    log_sig = F.ops.aten.log_sigmoid(self)
    if pos_weight is not None:
        loss = (1 - target) * self - ((pos_weight - 1) * target + 1) * log_sig
    else:
        loss = (1 - target) * self - log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _smooth_l1_loss(self, target, reduction="mean", beta=1.0):
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = self - target
    if beta == 0:
        return _reduce(d.abs(), reduction)
    ad = d.abs()
    return _reduce(F.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta), reduction)


def _huber_loss(self, target, reduction="mean", delta=1.0):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = self - target
    ad = d.abs()
    return _reduce(F.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta)), reduction)


def _kl_div(self, target, reduction="mean", log_target=False):
    if log_target:
        loss = target.exp() * (target - self)
    else:  # xlogy(t, t): 0 where t == 0 (the log sees 1 there, so no 0 * -inf)
        loss = target * F.where(target == 0, 1, target).log() - target * self
    return _reduce(loss, reduction)


binary_cross_entropy = defop(
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, "
    "str reduction='mean') -> Tensor", COMPOSITE, decomposition=_binary_cross_entropy)
binary_cross_entropy_with_logits = defop(
    "binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, str reduction='mean') -> Tensor", COMPOSITE,
    decomposition=_bce_with_logits)
smooth_l1_loss = defop("smooth_l1_loss(Tensor self, Tensor target, str reduction='mean', "
                       "float beta=1.0) -> Tensor", COMPOSITE, decomposition=_smooth_l1_loss)
huber_loss = defop("huber_loss(Tensor self, Tensor target, str reduction='mean', "
                   "float delta=1.0) -> Tensor", COMPOSITE, decomposition=_huber_loss)
kl_div = defop("kl_div(Tensor self, Tensor target, str reduction='mean', *, "
               "bool log_target=False) -> Tensor", COMPOSITE, decomposition=_kl_div)

# ---------------------------------------------------------------- similarity, one_hot

_TINY = 1e-30  # keeps sqrt's gradient finite for an all-zero vector (torch's norm gives 0)


def _l2_norm(x, dim):
    return (x * x).sum(dim, keepdim=True).clamp(min=_TINY).sqrt()


def _cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """sum((x1 / max(|x1|, eps)) (x2 / max(|x2|, eps))) along ``dim`` — torch's formula, whose
    clamp is not differentiated (torch clamps under no_grad): ``n + (max(n, eps) - n).detach()``
    has the clamped value and the gradient of ``n``."""
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_dtype.scalar_type_name(x1.dtype)}")
    from .table import MetaError, broadcast_shapes

    try:  # torch expands both first
        shape = list(broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except MetaError as e:
        raise RuntimeError(str(e)) from None
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1, n2 = _l2_norm(x1, dim), _l2_norm(x2, dim)
    n1 = n1 + (n1.clamp(min=eps) - n1).detach()
    n2 = n2 + (n2.clamp(min=eps) - n2).detach()
    return ((x1 / n1) * (x2 / n2)).sum(dim)


cosine_similarity = defop("cosine_similarity(Tensor x1, Tensor x2, int dim=1, "
                          "float eps=1e-08) -> Tensor", COMPOSITE,
                          decomposition=_cosine_similarity)


def _one_hot_meta(self, num_classes=-1):
    """Eager mode runs the meta rule too: there a ``-1`` is resolved from the data; a fake
    tensor has none, so ``num_classes=-1`` is data-dependent (a graph break, as in torch)."""
    if self.dtype is not _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not _has_data(self):
            raise _dynamic_output_shape("one_hot", "its input (num_classes=-1)")
        if self._data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(self._data.max()) + 1
    return TensorMeta((*self.shape, num_classes), _dtype.int64)


def _one_hot_kernel(a, num_classes=-1):
    if num_classes == -1:
        num_classes = int(a.max()) + 1
    if a.size and a.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if a.size and a.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (a[..., None] == np.arange(num_classes)).astype(np.int64)


one_hot = defop("one_hot(Tensor self, int num_classes=-1) -> Tensor", INDEXING,
                kernel=_one_hot_kernel, meta=_one_hot_meta, differentiable=False)
