"""Calling a module, and the hooks around the call (``torch/nn/modules/module.py``'s
``_call_impl`` and ``register_*_hook``).

``module(*args, **kwargs)`` runs, in torch's order::

    forward pre-hooks    hook(module, args) -> None | new args
                         (with_kwargs=True: hook(module, args, kwargs) -> None | (args, kwargs))
    [backward hooks: wrap the tensor args in an identity node]        (_backward_hook.py)
    result = forward(*args, **kwargs)
    forward hooks        hook(module, args, result) -> None | new result
                         (with_kwargs=True: hook(module, args, kwargs, result))
    [backward hooks: wrap the tensor results in an identity node]

Every ``register_*`` returns a ``RemovableHandle``; ``prepend=True`` puts the hook first.  A
forward hook registered with ``always_call=True`` also runs when ``forward`` raises.

The compiler inlines ``forward`` only for modules without hooks: ``dynamo/variables/
nn_module.py`` breaks the graph at the call of a module with forward hooks or backward hooks
(torch's "Module-level backwards hooks require compiled autograd"), so the call runs here,
hooks and all, and guards the lengths of the four hook tables.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from .hooks import RemovableHandle


class ModuleHooksMixin:
    """The hook tables of ``Module`` and its ``__call__``."""

    def _init_hooks(self) -> None:
        init = object.__setattr__
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks",
                     "_backward_hooks"):
            init(self, name, OrderedDict())
        # flags by hook id (dicts a RemovableHandle can reference weakly, as torch's)
        for name in ("_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called"):
            init(self, name, OrderedDict())

    @staticmethod
    def _add_hook(hooks: OrderedDict, hook: Callable, prepend: bool,
                  extra: tuple = ()) -> RemovableHandle:
        handle = RemovableHandle(hooks, *extra)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None | new args`` runs before ``forward``."""
        handle = self._add_hook(self._forward_pre_hooks, hook, prepend,
                                (self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None | new output`` runs after ``forward``."""
        handle = self._add_hook(self._forward_hooks, hook, prepend,
                                (self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, *,
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None | new grad_output`` runs when the gradients
        with respect to the module's outputs are known."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, *,
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None | new grad_input`` runs when the
        gradients with respect to the module's inputs are known."""
        return self._add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        raise NotImplementedError(
            "register_backward_hook (the deprecated, non-full module backward hook) is not "
            "supported by minitorch_compile: use register_full_backward_hook")

    # ------------------------------------------------------------------ the call

    def _run_forward_pre_hooks(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        for hook_id, hook in tuple(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        return args, kwargs

    def _run_forward_hooks(self, args: tuple, kwargs: dict, result, only_always: bool = False):
        for hook_id, hook in tuple(self._forward_hooks.items()):
            if only_always and hook_id not in self._forward_hooks_always_called:
                continue
            if hook_id in self._forward_hooks_with_kwargs:
                new = hook(self, args, kwargs, result)
            else:
                new = hook(self, args, result)
            if new is not None:
                result = new
        return result

    def __call__(self, *args, **kwargs):
        from ._backward_hook import BackwardHook

        args, kwargs = self._run_forward_pre_hooks(args, kwargs)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                   list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        try:
            result = self.forward(*args, **kwargs)
        except Exception:
            if self._forward_hooks_always_called:
                self._run_forward_hooks(args, kwargs, None, only_always=True)
            raise
        if bw_hook is not None:
            bw_hook.check_inputs_not_written()
        result = self._run_forward_hooks(args, kwargs, result)
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result
