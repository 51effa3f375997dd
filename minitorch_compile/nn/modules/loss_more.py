"""Ranking, embedding and likelihood losses (``torch/nn/modules/loss.py`` and the formulas of
``torch/nn/functional.py`` / ``aten/src/ATen/native/Loss.cpp``), each a composite of table
ops followed by the usual ``reduction`` (``'mean'``, ``'sum'`` or ``'none'``):

* ``margin_ranking_loss``: ``max(0, -y (x1 - x2) + margin)``;
* ``hinge_embedding_loss``: ``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``;
* ``soft_margin_loss``: ``log(1 + exp(-y x))``;
* ``cosine_embedding_loss``: ``1 - cos(x1, x2)`` where ``y = 1``,
  ``max(0, cos(x1, x2) - margin)`` where ``y = -1`` (cosine with torch's ``EPSILON = 1e-12``);
* ``triplet_margin_loss``: ``max(d(a, p) - d(a, n) + margin, 0)`` with
  ``d = pairwise_distance`` (``swap``: the smaller of ``d(a, n)`` and ``d(p, n)``);
* ``poisson_nll_loss``: ``exp(x) - y x`` (``log_input``) or ``x - y log(x + eps)``, with
  Stirling's term for ``y > 1`` when ``full``;
* ``gaussian_nll_loss``: ``0.5 (log(max(var, eps)) + (x - y)^2 / max(var, eps))``
  (+ ``0.5 log 2 pi`` when ``full``);
* ``multilabel_soft_margin_loss``: ``-mean_c(y log sigmoid(x) + (1 - y) log sigmoid(-x))``.
"""

from __future__ import annotations

import math

from ... import _api
from ...autograd import no_grad
from ...ops.nn_ops import _reduce  # the table losses' reduction
from .. import functional as F
from .._functional_more import _legacy  # size_average/reduce -> reduction
from .loss import _Loss
from .simple_layers import pairwise_distance


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    if not (input1.dim() == input2.dim() == target.dim()):
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same "
                           f"dimension but got sizes: input1: {tuple(input1.shape)}, input2: "
                           f"{tuple(input2.shape)}, target: {tuple(target.shape)} ")
    loss = (-target * (input1 - input2) + margin).clamp_min(0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None,  # noqa: A002
                         reduce=None, reduction: str = "mean"):
    zeros = _api.zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    loss = _api.where(target != 1, margin_clamp, zeros) + _api.where(target != -1, input, zeros)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None,  # noqa: A002
                     reduction: str = "mean"):
    loss = (1 + (-target * input).exp()).log()
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    eps = 1e-12
    prod_sum = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + eps
    mag2 = (input2 * input2).sum(-1) + eps
    cos = prod_sum / (mag1 * mag2).sqrt()
    zeros = _api.zeros_like(cos)
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    loss = _api.where(target == 1, pos, zeros) + _api.where(target == -1, neg, zeros)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _api.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean"):
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, _legacy(size_average, reduce, reduction))


def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean"):
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if (var < 0).any():
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with no_grad():  # torch clamps without recording: the gradient flows as if unclamped
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None,  # noqa: A002
                                reduce=None, reduction: str = "mean"):
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.shape[-1]
    return _reduce(loss, _legacy(size_average, reduce, reduction))


# ---------------------------------------------------------------- modules


class MarginRankingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return margin_ranking_loss(input1, input2, target, self.margin,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):  # noqa: A002
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return cosine_embedding_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class TripletMarginLoss(_Loss):
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                   self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):  # noqa: A002
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):  # noqa: A002
        return multilabel_soft_margin_loss(input, target, self.weight,
                                           reduction=self.reduction)
