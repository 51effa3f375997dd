"""The sink of a leaf's gradient: ``AccumulateGrad`` and torch's gradient layout contract.

Mirrors ``torch/csrc/autograd/functions/accumulate_grad.h`` (``accumulateGrad``) and
``torch/csrc/autograd/utils/grad_layout_contract.h`` (``obeys_layout_contract``,
``clone_obey_contract``).  Invariant: a leaf's ``.grad`` never aliases another leaf's or the
caller's tensor, never has overlapping elements, and has the leaf's strides when the leaf is
dense (else it is contiguous).
"""

from __future__ import annotations

from .._dispatch import state
from .graph import Node


class AccumulateGrad(Node):
    """The sink of a leaf tensor: adds the incoming gradient into ``leaf.grad``.

    The first gradient is stored as is — unless its memory already went to another leaf
    (``add``'s derivative hands the same ``grad`` to both inputs; ``cat``'s hands out slices of
    one) or was passed in by the caller: then a clone is stored, so two ``.grad``s never alias
    (torch's rule too).  A gradient that is a view of a temporary (a linear layer's weight
    gradient is a transpose) is stored as a ``detach()`` of it, so the ``.grad`` owns its
    memory and later gradients can go into it in place.
    The stored gradient obeys torch's "gradient layout contract" (``obeys_layout_contract``,
    ``clone_obey_contract`` in ``torch/csrc/autograd/functions/accumulate_grad.h``): for a
    dense, non-overlapping parameter its strides are the parameter's (a transposed weight gets
    a transposed ``.grad``, a contiguous one a contiguous ``.grad`` even when the gradient was
    computed transposed); for any other parameter it is contiguous.  So a gradient whose
    elements overlap (``sum``'s derivative is an ``expand``) is never stored, and ``.grad`` can
    be written in place (``zero_grad``, an optimizer's ``add_``).  Later gradients are added *into*
    ``.grad`` in place when grad mode is off (torch's ``variable_grad += new_grad``:
    ``g = x.grad`` still names the sum), and out of place under ``create_graph`` (the sum is
    then part of a graph).
    """

    claimed: dict | None = None  # id -> memory of gradients handed out in this backward run

    def __init__(self, variable):
        super().__init__()
        self.variable = variable
        self.input_meta = [(variable.shape, variable.dtype)]
        self.post_accumulate_hooks: list = []  # Tensor.register_post_accumulate_grad_hook

    def apply(self, grads):
        (g,) = grads
        v = self.variable
        if g is None:
            return []
        if not state.grad_enabled and g.requires_grad:
            g = g.detach()
        if v.grad is None:
            claimed = AccumulateGrad.claimed
            if claimed is not None:  # (keyed by the memory: a view by its base)
                memory = g._base if g._base is not None else g
                if id(memory) in claimed:
                    g = memory = g.clone()
                claimed[id(memory)] = memory  # held: its id is not reused during the run
            if state.grad_enabled and v.is_contiguous():
                g = _clone_obey_contract(g)  # create_graph: a copy, recorded (CopyBackwards)
            else:
                g = _obey_layout_contract(g, v)
                if g._base is not None and claimed is not None and not state.grad_enabled:
                    g = g.detach()  # the view's memory is this .grad's alone from now on
            v.grad = g
        elif not state.grad_enabled and _owns_its_memory(v.grad) and not v.grad.requires_grad:
            v.grad.add_(g)
        else:
            v.grad = v.grad + g
        for hook in tuple(self.post_accumulate_hooks):
            hook(v)
        return []


def _non_overlapping_and_dense(t) -> bool:
    """Every element its own memory location and no gaps (a permutation of a contiguous
    layout, e.g. a transpose): such a gradient can be written in place as it is."""
    sizes_strides = sorted((st, n) for n, st in zip(t.shape, t._data.strides) if n != 1)
    expected = t._data.itemsize
    for st, n in sizes_strides:
        if st != expected:
            return False
        expected *= n
    return True


def _obey_layout_contract(g, v):
    """``g`` itself if its layout already follows the contract (above), else a copy that does:
    permute ``g`` so the parameter's strides are decreasing, make that contiguous, permute
    back (for a dense parameter; torch's ``new_empty_strided(...).copy_(g)``)."""
    if g.numel() == 0 or g.ndim == 0:
        return g
    if not _non_overlapping_and_dense(v):
        return g if g.is_contiguous() else g.contiguous()
    vs, gs = v._data.strides, g._data.strides
    if all(n == 1 or a == b for n, a, b in zip(v.shape, gs, vs)):
        return g
    order = sorted(range(v.ndim), key=lambda i: (-vs[i], i))  # outermost dim first
    inverse = sorted(range(v.ndim), key=order.__getitem__)
    out = g.permute(order).contiguous().permute(inverse)
    if not out.requires_grad:  # the copy is .grad's alone: not a view of a temporary
        out._base = out._view_chain = None
    return out


def _clone_obey_contract(g):
    """torch's ``clone_obey_contract`` for a dense parameter under ``create_graph``: a new
    buffer ``copy_``-ed from the gradient, so ``.grad``'s node is ``CopyBackwards``."""
    from .. import _api as F

    return F.empty(tuple(g.shape), dtype=g.dtype, device=g.device).copy_(g)


def _owns_its_memory(t) -> bool:
    """A dense tensor that is no view (of another gradient, of the caller's tensor)."""
    return t._base is None and _non_overlapping_and_dense(t)
