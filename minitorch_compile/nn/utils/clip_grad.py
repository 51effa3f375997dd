"""Gradient clipping (``torch/nn/utils/clip_grad.py``).

``clip_grad_norm_`` treats the gradients of all parameters as one long vector ``g`` and, if its
``p``-norm exceeds ``max_norm``, scales every gradient in place by the same factor::

    total_norm = || (||g_1||_p, ||g_2||_p, ...) ||_p          (= ||g||_p)
    clip_coef  = min(max_norm / (total_norm + 1e-6), 1)
    g_i       *= clip_coef                                     for every i

It returns ``total_norm`` (a 0-d tensor), as torch does.  The factor is applied even when it is
1 (no data-dependent branch), which is what lets a compiler capture the whole thing in a graph.
``clip_grad_value_`` clamps every gradient entry into ``[-clip_value, clip_value]``.

Both are plain Python over tensor ops, so the compiler inlines them into a training step's
graph (the optimizer-step graph reads the ``.grad`` inputs and scales them in place).
"""

from __future__ import annotations

import math

from ... import _api
from ..._tensor import Tensor
from ...autograd import no_grad


def _norm(t: Tensor, norm_type: float) -> Tensor:
    if norm_type == math.inf:
        return t.abs().max()
    if norm_type == 2.0:
        return (t * t).sum().sqrt()
    return t.abs().pow(norm_type).sum().pow(1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Scale the grads of ``parameters`` in place so their joint norm is at most ``max_norm``;
    return the joint norm before scaling."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if len(grads) == 0:
        return _api.tensor(0.0)
    with no_grad():
        total_norm = _norm(_api.stack([_norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and not bool(total_norm.isfinite()):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               "`parameters` is non-finite, so it cannot be clipped. To disable "
                               "this error and scale the gradients by the non-finite norm "
                               "anyway, set `error_if_nonfinite=False`")
        clip_coef_clamped = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped)
    return total_norm


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient entry of ``parameters`` into ``[-clip_value, clip_value]``."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
