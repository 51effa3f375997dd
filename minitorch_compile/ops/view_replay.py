"""Replaying views and scattering into them: what writes through views are built from.

A view remembers how it was made from its base — its *view chain*, ``((op, rest_args), ...)``
(torch's ``view_fn``, set by ``Tensor._set_view_of``).  Two operations on a chain serve both
eager autograd (``CopySlices``, torch's ``torch/csrc/autograd/functions/tensor.cpp``) and
functionalization (``torch/_subclasses/functional_tensor.py``):

* ``replay(t, chain)``          — the same views applied to another tensor of the base's shape
  (a gradient, or the base's new value);
* ``scatter(base, src, chain)`` — the base with the view's elements replaced by ``src``, *out of
  place*.  Walk the chain backwards; each step puts its child into its parent with the view
  op's ``*_scatter`` rule::

      parents   P0 = base,  P1 = op1(P0),  ...,  P(k-1) = op(k-1)(P(k-2))
      result    S(k) = src;  S(i-1) = scatter_rule[op_i](P(i-1), S(i));  return S(0)

  A view that covers all of its parent's elements (``view``, ``transpose``, ``permute``,
  ``(un)squeeze``, ``alias``) scatters by its inverse view; ``slice``/``select`` by the
  ``slice_scatter``/``select_scatter`` ops declared here (torch's names).  ``expand`` has no
  rule: several elements share one memory location, and torch refuses to write them too.

Both functions take ``call(op, *args)`` and ``shape_of(value)``, so the same code emits eager
ops or graph nodes.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .table import INDEXING, MetaError, TensorMeta, defop, wrap_dim

# ---------------------------------------------------------------- the *_scatter ops


def _region(ndim, dim, key):
    return (slice(None),) * wrap_dim(dim, ndim) + (key,)


def _scatter_kernel(a, src, key):
    out = np.array(a, copy=True, order="K")
    out[key] = src
    return out


def _check_src(what, src, expected):
    if tuple(src.shape) != tuple(expected):
        raise MetaError(f"{what}: expected src to have a size equal to the slice of self. src "
                        f"size = {list(src.shape)}, slice size = {list(expected)}")


def _slice_scatter_meta(self, src, dim=0, start=None, end=None, step=1):
    view = F.ops.aten.slice.Tensor.opdef.meta(self, dim, start, end, step)
    _check_src("slice_scatter", src, view.shape)
    return TensorMeta(tuple(self.shape), self.dtype)


slice_scatter = defop(
    "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor", INDEXING,
    kernel=lambda a, src, dim=0, start=None, end=None, step=1: _scatter_kernel(
        a, src, _region(a.ndim, dim, slice(start, end, step))),
    meta=_slice_scatter_meta,
    derivatives={
        "self": lambda grad, src_sizes, dim, start, end, step: F.ops.aten.slice_scatter(
            grad, F.zeros(src_sizes, dtype=grad.dtype, device=grad.device), dim, start, end,
            step),
        "src": lambda grad, dim, start, end, step: F.ops.aten.slice(grad, dim, start, end,
                                                                    step)})


def _select_scatter_meta(self, src, dim, index):
    view = F.ops.aten.select.int.opdef.meta(self, dim, index)
    _check_src("select_scatter", src, view.shape)
    return TensorMeta(tuple(self.shape), self.dtype)


select_scatter = defop(
    "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor", INDEXING,
    kernel=lambda a, src, dim, index: _scatter_kernel(a, src, _region(a.ndim, dim, index)),
    meta=_select_scatter_meta,
    derivatives={
        "self": lambda grad, src_sizes, dim, index: F.ops.aten.select_scatter(
            grad, F.zeros(src_sizes, dtype=grad.dtype, device=grad.device), dim, index),
        "src": lambda grad, dim, index: grad.select(dim, index)})

# ---------------------------------------------------------------- replay / scatter


def _inverse_permutation(dims):
    n = len(dims)
    inverse = [0] * n
    for i, d in enumerate(dims):
        inverse[d % n] = i
    return inverse


def _reshape_back(call, parent, src, parent_shape, *rest):
    return call(F.ops.aten.view.default, src, list(parent_shape))


# op name -> rule(call, parent, src, parent_shape, *rest) -> the parent with src written in
SCATTER_RULES = {
    "view": _reshape_back,
    "squeeze": _reshape_back,
    "unsqueeze": _reshape_back,
    "alias": lambda call, parent, src, shape: src,
    "detach": lambda call, parent, src, shape: src,  # functionalization: detach shares memory
    "transpose": lambda call, parent, src, shape, d0, d1: call(
        F.ops.aten.transpose.default, src, d0, d1),
    "permute": lambda call, parent, src, shape, dims: call(
        F.ops.aten.permute.default, src, _inverse_permutation(dims)),
    "slice": lambda call, parent, src, shape, *rest: call(
        F.ops.aten.slice_scatter.default, parent, src, *rest),
    "select": lambda call, parent, src, shape, *rest: call(
        F.ops.aten.select_scatter.default, parent, src, *rest),
}


def _eager_call(op, *args):
    a, kw = op.split_args(args)  # keyword-only arguments (expand's implicit) go by name
    return op(*a, **kw)


def _eager_shape(t):
    return tuple(t.shape)


def check_scatterable(chain) -> None:
    """torch's error for writing an expanded view; a clear one for a view op with no rule."""
    for op, _ in chain:
        if op.name == "expand":
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation.")
        if op.name not in SCATTER_RULES:
            raise NotImplementedError(
                f"writing through a '{op}' view is not supported (no scatter rule in "
                "ops/view_replay.py); clone() the view first")


def replay(t, chain, call=_eager_call):
    """Apply the views of ``chain`` to ``t`` (a tensor or a graph node)."""
    for op, rest in chain:
        t = call(op, t, *rest)
    return t


def scatter(base, src, chain, call=_eager_call, shape_of=_eager_shape):
    """``base`` with the elements of view ``chain`` replaced by ``src`` (out of place)."""
    check_scatterable(chain)
    parents = [base]
    for op, rest in chain[:-1]:
        parents.append(call(op, parents[-1], *rest))
    for (op, rest), parent in zip(reversed(chain), reversed(parents)):
        src = SCATTER_RULES[op.name](call, parent, src, shape_of(parent), *rest)
    return src
