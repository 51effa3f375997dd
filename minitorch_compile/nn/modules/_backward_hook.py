"""Module backward hooks: ``BackwardHook`` (``torch/utils/hooks.py``).

A module's *full* backward hook ``hook(module, grad_input, grad_output)`` must see the gradients
with respect to the module's own inputs and outputs — not a tensor's total gradient (an input
may feed other modules too).  torch gets them by wrapping the boundary in identity autograd
Functions, one node per side, so that backward has a place to stop at each side:

    args  --[input identity]-->  forward(...)  --[output identity]-->  result

* **output side** (reached first in backward): its node receives ``grad_output`` (``None`` for
  an output that got no gradient), runs the backward *pre*-hooks (which may replace it) and
  remembers it;
* **input side**: its node receives ``grad_input`` (zeros for a tensor argument not requiring
  grad, ``None`` for a non-tensor argument), calls each full hook with the remembered
  ``grad_output``; a hook's non-``None`` return replaces ``grad_input``.

When no input requires grad there is no input node: the full hooks run at the output side with
``grad_input`` all ``None`` (and a warning, as torch).  A side is wrapped only if grad mode is
on and one of its tensors requires grad.

Deviation: torch's identity returns views of the inputs, so a module writing its input in place
fails at that write; ours returns detached aliases and raises the same error once ``forward``
returns (the write has happened by then).
"""

from __future__ import annotations

import warnings

from ..._dispatch import state
from ..._tensor import Tensor
from ...autograd.function import Function


class BackwardHookFunction(Function):
    """The identity with a backward that hands the gradients to the ``BackwardHook``."""

    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.on_backward = on_backward
        outs = tuple(t.detach() for t in tensors)
        ctx.mark_non_differentiable(*(o for o, t in zip(outs, tensors) if not t.requires_grad))
        return outs

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.on_backward(grads))


class _OutputSide(BackwardHookFunction):
    @staticmethod
    def forward(ctx, on_backward, *tensors):
        ctx.set_materialize_grads(False)  # an output without a gradient shows as None
        return BackwardHookFunction.forward(ctx, on_backward, *tensors)


def _pack_with_none(indices, values, size: int) -> tuple:
    res = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class BackwardHook:
    """One module call's backward hooks (made by ``Module.__call__`` when hooks exist)."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_tensors_index = None
        self.n_outputs = 0
        self.output_tensors_index = None

    @staticmethod
    def _apply_on_tensors(fn_cls, on_backward, args: tuple):
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (state.grad_enabled and any(t.requires_grad for t in tensors)):
            return args, None, ()
        new = fn_cls.apply(on_backward, *tensors)
        res = list(args)
        for i, t in zip(index, new):
            res[i] = t
        return tuple(res), index, new

    # ------------------------------------------------------------------ input side

    def setup_input_hook(self, args: tuple) -> tuple:
        res, self.input_tensors_index, self._inputs = self._apply_on_tensors(
            BackwardHookFunction, self._on_input_grads, args)
        self.n_inputs = len(args)
        self._input_versions = [t._version for t in self._inputs]
        return res

    def check_inputs_not_written(self) -> None:
        for i, (t, v) in enumerate(zip(self._inputs, self._input_versions)):
            if t._version != v:
                raise RuntimeError(
                    f"Output {i} of BackwardHookFunctionBackward is a view and is being modified "
                    "inplace. This view was created inside a custom Function (or because an "
                    "input was returned as-is) and the autograd logic to handle view+inplace "
                    "would override the custom backward associated with the custom Function, "
                    "leading to incorrect gradients. This behavior is forbidden. You can fix "
                    "this by cloning the output of the custom Function.")

    def _on_input_grads(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:  # the output side was not reached
            return grads
        res = _pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    # ------------------------------------------------------------------ output side

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, self.output_tensors_index, _ = self._apply_on_tensors(
            _OutputSide, self._on_output_grads, args)
        self.n_outputs = len(args)
        return res if is_tuple else res[0]

    def _on_output_grads(self, grads: tuple) -> tuple:
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grads, self.n_outputs)
        expected = len(self.grad_outputs)
        for pre_hook in self.user_pre_hooks:
            new = pre_hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected {expected}")
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: call the hooks here
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients.",
                          stacklevel=2)
            grad_inputs = _pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(e is None for e in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)
