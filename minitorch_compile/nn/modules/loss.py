"""Loss modules: ``MSELoss``, ``L1Loss``, ``NLLLoss``, ``CrossEntropyLoss``; ``BCELoss``,
``BCEWithLogitsLoss``, ``SmoothL1Loss``, ``HuberLoss``, ``KLDivLoss``
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


# ---------------------------------------------------------------- more losses
# (``ops/losses.py``)

from .. import _functional_more as _Fm  # noqa: E402


class BCELoss(_WeightedLoss):
    """-w (t log x + (1 - t) log(1 - x)); ``input`` holds probabilities."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return _Fm.binary_cross_entropy(input, target, weight=self.weight,
                                        reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``BCELoss`` of ``sigmoid(input)``, computed stably from the logits."""

    def __init__(self, weight: Tensor | None = None, size_average=None, reduce=None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return _Fm.binary_cross_entropy_with_logits(input, target, self.weight,
                                                    pos_weight=self.pos_weight,
                                                    reduction=self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return _Fm.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return _Fm.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return _Fm.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
