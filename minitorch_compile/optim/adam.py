"""``optim.Adam``: adaptive moment estimation (``torch/optim/adam.py``).

Adam keeps, per parameter, running averages of the gradient (``m``, "first moment") and of
its square (``v``, "second moment"), and steps each coordinate by ``m / sqrt(v)`` — so every
coordinate moves at roughly the rate ``lr`` whatever the scale of its gradient.

torch's exact update at step ``t = 1, 2, ...`` (``b1, b2 = betas``)::

    g = -g                                  if maximize
    g = g + weight_decay * p                if weight_decay != 0     (L2: Adam)
    p = p * (1 - lr * weight_decay)         instead, if decoupled_weight_decay (AdamW)
    m = m + (1 - b1) * (g - m)              (m.lerp_(g, 1 - b1))
    v = b2 * v + (1 - b2) * g * g
    v_max = max(v_max, v)                   if amsgrad; then use v_max instead of v
    denom = sqrt(v) / sqrt(1 - b2^t) + eps
    p = p - lr / (1 - b1^t) * m / denom

``m`` and ``v`` start at zero, so early averages are biased towards zero; dividing by
``1 - b^t`` (the *bias correction*) undoes that.  ``eps`` is added *after* the correction, as
in torch.  The step counter ``state["step"]`` is a 0-d float tensor, as in torch.

``AdamW`` (``adamw.py``) is Adam with ``decoupled_weight_decay=True``: the decay shrinks the
parameter directly instead of entering the moments through the gradient.  ``lr`` may be a 0-d
tensor (torch allows it so a compiled step does not recompile when a scheduler changes it).

``capturable=True`` computes the bias corrections from the step *tensor* (no ``.item()``), so
the whole step can be captured in a graph; the compiler traces every Adam step that way (torch's
``OptimizerVariable`` flips the flag in its trace too).  It rounds differently from the float
path only in the last bits.
"""

from __future__ import annotations

from .. import _api
from .._tensor import Tensor
from .optimizer import Optimizer, _use_grad_for_differentiable, implementation_switches


class Adam(Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        **implementation_switches(foreach, fused, differentiable))
        super().__init__(params, defaults)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps):
        """Gather the params with a grad (and their state) into the lists, creating the state
        on first sight — torch's signature; the compiler runs it eagerly while tracing."""
        for p in group["params"]:
            if p.grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = _api.tensor(0.0, dtype=_api.float32)
                state["exp_avg"] = _api.zeros_like(p)
                state["exp_avg_sq"] = _api.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = _api.zeros_like(p)
            params_with_grad.append(p)
            grads.append(p.grad)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            max_exp_avg_sqs.append(state.get("max_exp_avg_sq"))
            state_steps.append(state["step"])
        return False  # has_complex

    @_use_grad_for_differentiable
    def step(self, closure=None):
        loss = self._evaluate_closure(closure)
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps = \
                [], [], [], [], [], []
            self._init_group(group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                             steps)
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                 steps, amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2,
                 lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], capturable=group["capturable"],
                 decoupled_weight_decay=group.get("decoupled_weight_decay", False))
        return loss


def adam(params: list[Tensor], grads: list[Tensor], exp_avgs: list[Tensor],
         exp_avg_sqs: list[Tensor], max_exp_avg_sqs: list, state_steps: list[Tensor], *,
         amsgrad: bool, beta1: float, beta2: float, lr: float, weight_decay: float, eps: float,
         maximize: bool, capturable: bool = False,
         decoupled_weight_decay: bool = False) -> None:
    """One Adam step over ``params`` in place (torch's ``_single_tensor_adam``)."""
    for i, param in enumerate(params):
        grad = -grads[i] if maximize else grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        if weight_decay != 0 and decoupled_weight_decay:
            param.mul_(1 - lr * weight_decay)
        elif weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        # decay the first and second moment running averages
        exp_avg.add_(grad - exp_avg, alpha=1 - beta1)  # lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)  # addcmul_
        if capturable:  # bias corrections as tensor ops on the step tensor (no .item())
            bias_correction1 = 1 - beta1**step_t
            bias_correction2_sqrt = (1 - beta2**step_t).sqrt()
            step_size = lr / bias_correction1
        else:
            step = step_t.item()
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
        if amsgrad:
            max_exp_avg_sqs[i].copy_(_api.maximum(max_exp_avg_sqs[i], exp_avg_sq))
            second_moment = max_exp_avg_sqs[i]
        else:
            second_moment = exp_avg_sq
        denom = (second_moment.sqrt() / bias_correction2_sqrt).add_(eps)
        if capturable or isinstance(step_size, Tensor):  # no .item() of a tensor lr
            param.sub_(exp_avg / denom * step_size)
        else:
            param.add_(exp_avg / denom, alpha=-step_size)  # addcdiv_(exp_avg, denom, -step_size)
