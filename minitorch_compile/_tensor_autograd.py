"""A tensor's autograd state: ``requires_grad``, ``grad``, ``grad_fn``, the version counter.

torch keeps this per-tensor record in ``AutogradMeta`` (``torch/csrc/autograd/variable.h``)
and exposes it to Python as the properties of ``torch/csrc/autograd/python_variable.cpp``
(``grad``, ``grad_fn``, ``requires_grad``, ``is_leaf``, ``_version``, ``retains_grad``).
Here it is ``TensorAutogradState``, a base class of ``Tensor`` (``_tensor.py``); the fields
themselves are class-level defaults on ``Tensor`` (``_requires_grad``, ``_grad``, ``_grad_fn``,
``_output_nr``, ``_vc`` …), so a tensor that never takes part in autograd stores none of them.

Invariants:

* a tensor with a ``grad_fn`` is not a leaf, and its ``requires_grad`` cannot be turned off;
* only floating-point tensors can require gradients;
* a view shares its base's version counter (``_vc``, a one-element list); every in-place write
  bumps it.  A view whose base (or a sibling view) was written since it last looked has a stale
  ``grad_fn``: reading ``grad_fn`` or ``requires_grad`` regenerates it from the base's
  (``autograd/inplace.py``; torch's ``DifferentiableViewMeta::attr_version``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._tensor import Tensor


class TensorAutogradState:
    """The autograd properties and methods of ``Tensor`` (torch's ``AutogradMeta`` view)."""

    @property
    def grad_fn(self):
        if self._view_chain is not None and self._vc[0] != self._view_version:
            from .autograd.inplace import regenerate_view_grad_fn

            regenerate_view_grad_fn(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node

    @property
    def requires_grad(self) -> bool:
        if self._view_chain is not None and self._vc[0] != self._view_version:
            if self._multi_output_view is not None or self._view_no_grad:
                # (reading grad_fn would raise the rebase error; torch's
                # DifferentiableViewMeta::requires_grad asks the base instead)
                return self._requires_grad or self._base.requires_grad
            self.grad_fn  # a write to the base may have made this view require grad
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if not value:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return
        self.requires_grad_(value)

    @property
    def output_nr(self) -> int:
        """Which output of its ``grad_fn`` this tensor is.  An output of ``unbind``/``split``
        is its index there, as torch's one node has them all (ours are one node each)."""
        multi = self._multi_output_view
        return multi[1] if multi is not None and multi[0] is not None else self._output_nr

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            from .autograd.graph import check_grad_assignment

            check_grad_assignment(self, value)
        self._grad = value

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and self._is_inference:
            from ._dispatch import state

            if not state.inference_mode:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        vc = self._vc
        return 0 if vc is None else vc[0]

    def _get_vc(self) -> list:
        if self._vc is None:
            self._vc = [0]
        return self._vc

    def _bump_version(self) -> None:
        self._get_vc()[0] += 1

    def detach(self) -> Tensor:
        """Same data, no history (a view: writes are shared, as in torch)."""
        from .ops._ops import ops

        return ops.aten.detach.default(self)

    def detach_(self) -> Tensor:
        if self._view_chain is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        if self.grad_fn is None:
            return
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        self.grad_fn.retained[self._output_nr] = self
        self._retains_grad = True  # (follows the tensor to a new grad_fn: autograd/inplace)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor) -> None`` runs after a backward has accumulated this leaf's ``.grad``
        (an optimizer can step each parameter as soon as its gradient is ready)."""
        from .autograd.graph import gradient_edge

        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        from .autograd.graph import removable_handle

        node, _ = gradient_edge(self)
        return removable_handle(node.post_accumulate_hooks, hook)

    def is_inference(self) -> bool:
        """Made inside ``inference_mode``: it may not be saved for backward or written in
        place outside it."""
        return self._is_inference
