"""Loss modules: ``MSELoss``, ``L1Loss``, ``NLLLoss``, ``CrossEntropyLoss``
(``torch/nn/modules/loss.py``).

A loss module stores its options (``reduction``, class ``weight``, ``ignore_index``,
``label_smoothing``) and calls the function of ``nn.functional``.  A class ``weight`` is
registered as a *buffer*: it is saved in ``state_dict`` and moves with ``.to()``, but it is
not a parameter, so no optimizer touches it.

``reduction``: ``'none'`` keeps one loss per element/sample, ``'sum'`` adds them, ``'mean'``
averages — for weighted NLL/cross entropy a *weighted* mean, ``sum(w_i l_i) / sum(w_i)`` over
non-ignored targets.
"""

from __future__ import annotations

from ..._tensor import Tensor
from .. import _reduction
from .. import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _reduction.legacy_get_string(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """mean((input - target)^2) (or sum / none)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002 - torch's name
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """-weight[y] * input[n, y]; ``input`` holds log-probabilities."""

    def __init__(self, weight: Tensor | None = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """``NLLLoss`` of ``log_softmax(input, dim=1)``; optional label smoothing."""

    def __init__(self, weight: Tensor | None = None, size_average=None,
                 ignore_index: int = -100, reduce=None, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class L1Loss(_Loss):
    """mean(|input - target|) (or sum / none)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)
