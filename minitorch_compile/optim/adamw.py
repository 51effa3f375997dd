"""``optim.AdamW``: Adam with decoupled weight decay (``torch/optim/adamw.py``).

Loshchilov & Hutter's observation: with Adam, an L2 penalty added to the gradient is divided by
``sqrt(v)`` like the rest of it, so weights with large gradients are barely decayed.  AdamW
shrinks the parameter itself, before the Adam step, by ``p = p * (1 - lr * weight_decay)``.
As in torch 2.x, the class is ``Adam`` with ``decoupled_weight_decay=True`` and a default decay
of ``1e-2``; the update is the one written in ``adam.py``.
"""

from __future__ import annotations

from .adam import Adam


class AdamW(Adam):
    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
