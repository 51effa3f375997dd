"""In-place ops under autograd, and writes through views (``CopySlices``).

Mirrors the in-place half of torch's generated ``VariableType`` kernels,
``torch/csrc/autograd/VariableTypeUtils.h`` (``check_inplace``, ``rebase_history``) and
``CopySlices`` in ``torch/csrc/autograd/functions/tensor.cpp``.

An in-place op ``self.op_(*args)`` that takes part in autograd runs in four steps::

    1. check     a leaf that requires grad, a view of one, or a view made in no_grad mode
                 cannot be written (torch's errors);
    2. record    the node of the *functional* op, before the write: its edges point at the
                 current history of every input; what its formulas name is saved now —
                 ``self`` as a clone (the write would destroy it; torch's generated code
                 saves ``self.clone()`` too), every other tensor as is, with its version;
    3. write     run the op below Autograd (it bumps the shared version counter); then save
                 ``result`` (``self`` after the write) if a formula names it;
    4. rebase    a plain tensor takes the node as its ``grad_fn``.  A *view* cannot own the
                 write: its base's history becomes ``CopySlices(base's old history, view
                 chain, node)``, and the view's own ``grad_fn`` is regenerated from the base's
                 the next time it is read (its version is stale) — as is every other view's.

Version counters are shared by a tensor, its views and its ``detach()``es, so a tensor saved
in step 2 and modified afterwards through *any* alias raises at unpack time, never silently.

``CopySlices.apply(grad)`` (grad has the base's shape)::

    grad_slice = replay(grad, chain)               # the view's part of the gradient
    res        = node.apply([grad_slice])          # the op's own derivative
    grad_base  = scatter(grad, res[0], chain)      # base grad, view part replaced
    return [grad_base] + res[1:]

``replay``/``scatter`` live in ``ops/view_replay.py`` and are out of place, so a traced
backward is free of mutation.
"""

from __future__ import annotations

from .._dispatch import AUTOGRAD, PYTHON, dispatch_below_autograd, exclude, state
from .graph import Node, _record, _short_name, gradient_edge, torch_node_name
from .node_names import camel

_MULTI_OUTPUT_SUFFIX = (
    " This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation by "
    "an out-of-place one.")
_NO_GRAD_SUFFIX = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace to "
    "be tracked).")


def view_rebase_error(view, indirect: bool) -> RuntimeError:
    """torch's ``handle_view_on_rebase``: the error for writing a view whose creation forbids
    it — an output of unbind/split/chunk made with grad mode on (or a view of one), or a view
    made in no_grad mode (or a view of one) — either directly (``indirect=False``: the view
    is the tensor written) or through its base or a sibling view (``indirect=True``: raised
    when the view's stale ``grad_fn`` is next read)::

        header  "Output N of Op is a view and <what> modified inplace."     (has a grad_fn)
             or "A view was created in no_grad mode and <what> modified inplace with grad
                 mode enabled."                          (made in no_grad mode, or no grad_fn)
        suffix  the multiple-views sentence, or the no_grad one
    """
    what = "its base or another view of its base has been" if indirect else "is being"
    multi, no_grad = view._multi_output_view, view._view_no_grad
    node = view._grad_fn
    if multi is not None and multi[0] is not None:
        name, nr = multi
    elif node is not None:
        name, nr = _short_name(node.name()), view._output_nr
    else:
        name, nr = None, 0
    if multi is None or node is None:
        prefix = "A view was created in"
        if no_grad == "nested":  # (ours has no grad_fn; torch's is named after the view op)
            name = name or camel(view._view_chain[-1][0].name)
            prefix = f"Output {nr} of {name} is a view of a view which was created in"
        msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"Output {nr} of {name} is a view and {what} modified inplace."
    return RuntimeError(msg + (_MULTI_OUTPUT_SUFFIX if multi is not None else _NO_GRAD_SUFFIX))


# nodes torch writes by hand instead of generating from derivatives.yaml keep its names
_NODE_NAMES = {"copy_": "CopyBackwards"}


def check_inplace(self) -> None:
    """torch's ``check_inplace``: which tensors may not be written under autograd.

    A view made in no_grad mode, or an output of a multi-output view op, is refused
    (``view_rebase_error``).  A view is refused when its base is a leaf — either a leaf that
    requires grad (the view's history leads to it), or any leaf when the view itself was made
    to require grad (``arange(6.).view(2, 3).requires_grad_()``); every tensor is refused when
    it is itself a leaf that requires grad (torch's order and conditions,
    ``VariableTypeUtils.h``)."""
    if self._view_no_grad:
        raise view_rebase_error(self, indirect=False)
    if self._multi_output_view is not None and self.requires_grad and state.grad_enabled:
        raise view_rebase_error(self, indirect=False)
    if self._view_chain is not None:
        base = self._base
        if base._grad_fn is None and (base.requires_grad or self.requires_grad):
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                               "an in-place operation.")
    if self.requires_grad and self._grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")


def inplace_autograd(op, args):
    """The Autograd kernel of every mutable op (``self`` is argument 0)."""
    from ..ops._ops import ops
    from ..ops.view_replay import check_scatterable

    self = args[0]
    check_inplace(self)
    functional = op.opdef.functional if op.opdef is not None else None
    derivs = (functional or op).opdef.derivatives if op.opdef is not None else None
    if derivs is None:
        raise RuntimeError(f"the derivative for '{op}' is not implemented")
    chain = self._view_chain
    if chain is not None:
        check_scatterable(chain)  # before writing: fail without changing anything
    self_name = op.schema.arguments[0].name
    clones = []

    def save_old_self(name, value):
        if name != self_name or value is not self:
            return value
        if not clones:
            with exclude(AUTOGRAD):
                clones.append(ops.aten.clone.default(self))
        return clones[0]

    node_name = _NODE_NAMES.get(op.name) or torch_node_name(op, args)
    node, deferred = _record(op, args, None, derivs, node_name,
                             saver=save_old_self)
    with exclude(AUTOGRAD):
        out = dispatch_below_autograd(op, args)
    from .graph import SavedTensor

    for name in deferred:
        node.saved[name] = SavedTensor(self, (node, 0), is_output=True)
    node.input_meta = [(self.shape, self.dtype)]
    if self.dtype.is_floating_point:
        if chain is None:
            _move_retained(self, node, 0)
            self._grad_fn, self._output_nr, self._requires_grad = node, 0, True
        else:
            base = self._base
            copy_slices = CopySlices(base, chain, node)
            _move_retained(base, copy_slices, 0)
            base._grad_fn, base._output_nr, base._requires_grad = copy_slices, 0, True
            # self's version is now newer than its _view_version: its grad_fn is regenerated
            # (and a retain_grad() leaves the old node now, as torch regenerates it at once)
            _move_retained(self, None, 0)
    for name in deferred:  # saved-tensor hooks see the written tensor with its grad_fn
        node.saved[name].pack_pending()
    return out


def _move_retained(t, node, nr: int) -> None:
    """torch moves a tensor's retain_grad hook to its new grad_fn when an in-place op rebases
    its history: ``.grad`` is then the gradient of the *written* tensor (``node`` None: the
    view's new node is only made when it is next read — ``regenerate_view_grad_fn``)."""
    if not t._retains_grad:
        return
    old = t._grad_fn
    if old is not None and old.retained.get(t._output_nr) is t:
        del old.retained[t._output_nr]
    if node is not None:
        node.retained[nr] = t


class CopySlices(Node):
    """The base's node after a write through one of its views (see the module docstring)."""

    def __init__(self, base, chain, fn):
        super().__init__()
        edge = gradient_edge(base) if base.requires_grad else None
        self.next_functions = (edge,) + tuple(fn._edges[1:])
        self.input_meta = [(base.shape, base.dtype)]
        self.chain = chain
        self.fn = fn

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grads):
        from .. import _api as F
        from ..ops.view_replay import replay, scatter

        (grad,) = grads
        if grad is None:
            grad = F.zeros(self.input_meta[0][0], dtype=self.input_meta[0][1])
        grad_slice = replay(grad, self.chain)
        res = self.fn.apply([grad_slice])
        out = [None] * len(self._edges)
        if self._edges[0] is not None:
            r0 = res[0] if res else None
            if r0 is None:
                r0 = F.zeros_like(grad_slice)
            elif tuple(r0.shape) != tuple(grad_slice.shape):
                r0 = r0.sum_to_size(tuple(grad_slice.shape))
            out[0] = scatter(grad, r0, self.chain)
        out[1:] = res[1:]
        return out

    def release(self):
        self.fn.release()


def regenerate_view_grad_fn(view) -> None:
    """A write changed ``view``'s base: its history is now "this view of the base's new
    history" — made by replaying its view chain on the base under autograd (the replayed
    tensors are dropped; only their ``grad_fn`` is kept).  Ops run below the Python key: they
    only compute metadata, and a tracer must not record them."""
    base = view._base
    if (view._multi_output_view is not None or view._view_no_grad) and (
            view._grad_fn is not None or base.requires_grad):
        raise view_rebase_error(view, indirect=True)  # (stays stale: raises on every read)
    view._view_version = view._vc[0]
    if view._view_no_grad or not base.requires_grad:
        return
    from ..ops.view_replay import replay

    prev_enabled, prev_excluded = state.grad_enabled, state.excluded
    state.grad_enabled = True
    state.excluded = (prev_excluded - {AUTOGRAD}) | {PYTHON}
    try:
        w = replay(base, view._view_chain)
    finally:
        state.grad_enabled, state.excluded = prev_enabled, prev_excluded
    _move_retained(view, w._grad_fn, w._output_nr)
    view._grad_fn, view._output_nr, view._requires_grad = w._grad_fn, w._output_nr, True
