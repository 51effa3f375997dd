"""``nn.Parameter``: a tensor that a ``Module`` treats as learnable (``torch/nn/parameter.py``).

The idea: a Parameter is *just a tensor* — a leaf that requires grad — carrying one extra
meaning.  When it is assigned as an attribute of a module (``self.weight = Parameter(w)``),
``Module.__setattr__`` sees its type and files it under ``module._parameters``; that is how
``module.parameters()`` finds the tensors to hand to an optimizer and how ``state_dict()``
finds the tensors to save.  A plain tensor assigned the same way stays a plain attribute.

Invariants (as in torch):

* ``Parameter(data)`` shares ``data``'s memory and version counter (torch builds it with
  ``Tensor._make_subclass(cls, data.detach(), requires_grad)``): no copy is made;
* it is a leaf: ``grad_fn is None``; ``requires_grad`` defaults to ``True``;
* anything *computed* from a Parameter is a plain ``Tensor`` (``2 * p``, ``p.detach()``,
  ``p[0]``): only the object you created is a Parameter.
"""

from __future__ import annotations

from .._device import CPU
from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad and registers itself on a ``Module``."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from .._api import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(data): expected a Tensor, got {type(data).__name__}")
        p = object.__new__(cls)
        p._data = data._data  # shared memory ...
        p._device = data._device
        p._vc = data._get_vc()  # ... and a shared version counter, like a detach()ed view
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass  # everything happens in __new__

    @classmethod
    def _make(cls, data, device=CPU) -> Tensor:
        # Tensor's helpers build results with ``type(self)._make``; results of ops on a
        # Parameter (detach, views, aliases) are plain tensors, as in torch.
        return Tensor._make(data, device)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach()._data.copy(), str(self._device),
                                     self.requires_grad))


def _rebuild_parameter(data, device, requires_grad) -> Parameter:
    return Parameter(Tensor(data, device=device), requires_grad)


def zero_grads(params, set_to_none: bool = True) -> None:
    """Drop every parameter's ``.grad`` (or zero it in place when ``set_to_none=False``).

    Shared by ``Module.zero_grad`` and ``Optimizer.zero_grad``, as in torch."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if p.grad.grad_fn is not None:
                p.grad.detach_()
            else:
                p.grad.requires_grad_(False)
            p.grad.zero_()
