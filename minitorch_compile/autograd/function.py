"""Custom autograd functions: ``mtc.autograd.Function`` (``torch/autograd/function.py``).

Two styles, as in torch:

* ``forward(ctx, *args)`` saves what backward needs on ``ctx`` itself;
* ``forward(*args)`` plus ``setup_context(ctx, inputs, output)`` — the style the tutorial's
  ``Cosine`` uses, and the one ``functorch``/AOT tracing prefers.

``apply`` runs ``forward`` with grad mode off, then (if an input requires grad) records one
``<Name>Backward`` node whose ``apply`` calls the user's ``backward``.  An output that *is* an
input (``return x1, x0``, as the tutorial's ``Cosine`` does) passes through unchanged with its
own history; ``backward`` receives gradients only for the function's *new* outputs.  (torch
2.x instead returns an alias and then rejects saving it in ``setup_context``; the tutorial's
examples need the pass-through to run — see docs/eager.md.)
"""

from __future__ import annotations

from .._dispatch import state
from .graph import Node, SavedTensor, gradient_edge, node_class


class FunctionCtx:
    """The ``ctx`` object: a place to save tensors and flags for backward."""

    def __init__(self):
        self._saved: tuple = ()
        self._non_differentiable: set = set()
        self._materialize_grads = True
        self._dirty: tuple = ()
        self.needs_input_grad: tuple = ()
        self._node_name = "Function"

    def save_for_backward(self, *tensors) -> None:
        self._saved = tuple(None if t is None else SavedTensor(t)
                            for t in tensors)

    def save_for_forward(self, *tensors) -> None:
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            from .graph import _FREED

            raise RuntimeError(_FREED)
        return tuple(None if s is None else s.unpack() for s in self._saved)

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable |= {id(t) for t in tensors}

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The node a custom Function records; ``apply`` calls the user's ``backward``."""

    def __init__(self, fn_cls, ctx: FunctionCtx, n_inputs: int):
        super().__init__()
        self.fn_cls = fn_cls
        self.ctx = ctx
        self.n_inputs = n_inputs

    def name(self) -> str:
        return f"{self.fn_cls.__name__}Backward"

    def apply(self, grads):
        from .._api import zeros

        if self.ctx._materialize_grads:
            grads = [zeros(m[0], dtype=m[1]) if g is None and m is not None else g
                     for g, m in zip(grads, self.input_meta)]
        out = self.fn_cls.backward(self.ctx, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        if len(out) < self.n_inputs or any(g is not None for g in out[self.n_inputs:]):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{self.n_inputs}, got {len(out)})")
        return list(out[: self.n_inputs])

    def release(self):
        self.ctx._saved = None


class Function:
    """Subclass and define ``forward``/``backward`` (static methods); call ``apply``."""

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @classmethod
    def _uses_setup_context(cls) -> bool:
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor

        ctx = FunctionCtx()
        ctx._node_name = f"{cls.__name__}Backward"
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = needs
        record = state.grad_enabled and any(needs)
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            if cls._uses_setup_context():
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            state.grad_enabled = prev
        if not record:
            return output
        node = node_class(BackwardCFunction, f"{cls.__name__}Backward")(cls, ctx, len(args))
        node.next_functions = tuple(
            gradient_edge(a) if isinstance(a, Tensor) and a.requires_grad else None
            for a in args)
        is_tuple = isinstance(output, tuple)
        outs = list(output) if is_tuple else [output]
        dirty = _check_dirty(ctx, outs)
        metas = []
        for o in outs:
            # an input returned unchanged passes through with its own history: it is not an
            # output of this node and backward receives no gradient for it — unless the
            # forward wrote it (``mark_dirty``): then its history is rebased onto this node
            if not isinstance(o, Tensor) or (any(o is a for a in args) and id(o) not in dirty):
                continue
            nr = len(metas)
            metas.append((o.shape, o.dtype))
            if id(o) in ctx._non_differentiable or not o.dtype.is_floating_point:
                continue
            o._requires_grad = True
            o.grad_fn = node
            o._output_nr = nr
        node.input_meta = metas
        return tuple(outs) if is_tuple else outs[0]


def _check_dirty(ctx, outs) -> set:
    """torch's checks on ``ctx.mark_dirty``: a dirty tensor must be returned, may not be a
    leaf requiring grad, and (here) may not be a view — torch rebases a view's base with
    ``CopySlices``, which ours does not do for custom Functions: an error, not a wrong
    gradient."""
    dirty = {id(t) for t in ctx._dirty}
    for t in ctx._dirty:
        if not any(t is o for o in outs):
            raise RuntimeError("Some elements marked as dirty during the forward method were "
                               "not returned as output. The inputs that are modified inplace "
                               "must all be outputs of the Function.")
        if t.requires_grad and t._grad_fn is None and t._view_chain is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an "
                               "in-place operation.")
        if t._view_chain is not None:
            raise RuntimeError("mark_dirty on a view is not supported by minitorch_compile "
                               "(torch rebases the view's base with CopySlices); clone() the "
                               "view before passing it to the Function")
    return dirty


class once_differentiable:  # noqa: N801 - torch's name
    """Accepted for compatibility: the wrapped backward simply runs."""

    def __new__(cls, fn):
        return fn
