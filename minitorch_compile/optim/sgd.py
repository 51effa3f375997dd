"""``optim.SGD``: stochastic gradient descent with momentum (``torch/optim/sgd.py``).

torch's exact update, per parameter ``p`` with gradient ``g`` (``b`` is the momentum buffer,
created on the first step as a copy of ``g``)::

    g = -g                              if maximize
    g = g + weight_decay * p            if weight_decay != 0      (L2 penalty)
    if momentum != 0:
        b = g                           on the first step
        b = momentum * b + (1 - dampening) * g   afterwards
        g = g + momentum * b            if nesterov                (look ahead)
        g = b                           otherwise
    p = p - lr * g

Note the first step uses ``b = g`` (no dampening), as torch does.  The math lives in the
functional ``sgd(...)`` (torch keeps the same split), so the class only gathers tensors and
state.
"""

from __future__ import annotations

from .._tensor import Tensor
from .optimizer import Optimizer, _use_grad_for_differentiable, implementation_switches


class SGD(Optimizer):
    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        **implementation_switches(foreach, fused, differentiable))
        super().__init__(params, defaults)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        """Gather the params with a grad, their grads and momentum buffers (None before the
        first step) into the lists — torch's signature; the compiler runs it eagerly while
        tracing."""
        for p in group["params"]:
            if p.grad is not None:
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    momentum_buffer_list.append(self.state[p].get("momentum_buffer"))
        return False  # has_sparse_grad

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params, grads, momentum_buffer_list = [], [], []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list,
                lr=group["lr"], momentum=group["momentum"], dampening=group["dampening"],
                weight_decay=group["weight_decay"], nesterov=group["nesterov"],
                maximize=group["maximize"])
            if group["momentum"] != 0:  # buffers made on the first step are kept
                for p, momentum_buffer in zip(params, momentum_buffer_list):
                    state = self.state[p]
                    state["momentum_buffer"] = momentum_buffer
        return loss


def sgd(params: list[Tensor], grads: list[Tensor], momentum_buffer_list: list, *, lr: float,
        momentum: float, dampening: float, weight_decay: float, nesterov: bool,
        maximize: bool) -> None:
    """One SGD step over ``params`` in place; fills ``momentum_buffer_list`` on first use."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.clone().detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            grad = grad.add(buf, alpha=momentum) if nesterov else buf
        if isinstance(lr, Tensor):  # a tensor lr (no .item(): a compiled step stays whole)
            param.sub_(grad * lr)
        else:
            param.add_(grad, alpha=-lr)
