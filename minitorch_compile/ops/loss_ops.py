"""The losses torch keeps as single aten ops: ``mse_loss`` (+ ``mse_loss_backward``) and
``nll_loss_forward`` (+ ``nll_loss_backward``).

Mirrors ``aten/src/ATen/native/Loss.cpp`` / ``LossNLL.cpp`` and their lines of
``derivatives.yaml``.  AOTAutograd traces these ops whole, as torch's does, so a joint graph of
``cross_entropy`` reads ``_log_softmax -> nll_loss_forward`` and its backward
``nll_loss_backward -> _log_softmax_backward_data`` — the saved tensors are torch's (the
log-probabilities, the target and ``total_weight``).  Inductor decomposes all four back into
pointwise ops and reductions (``inductor/decomposition.py``), so they still fuse.  The formulas,
for ``n`` values and reduction ``r`` (an int, torch's ``at::Reduction``: 0 none, 1 mean, 2 sum)::

    mse_loss(x, y)                 r((x - y)^2)
    mse_loss_backward(g, x, y)     g * 2 (x - y)            (/ n for mean)
    nll_loss_forward(x, t, w)      out_i = -w[t_i] x[i, t_i]   (0 where t_i == ignore_index)
                                   total_weight = sum_i w[t_i] (valid i);
                                   mean: sum(out) / total_weight,  sum: sum(out)
    nll_loss_backward(g, x, t ...) grad[i, t_i] = -w[t_i] g_i  (/ total_weight for mean)

``nll_loss_forward`` takes a 1-D (C) or 2-D (N, C) input; ``nn_ops.nll_loss`` keeps its
decomposition for more dims (torch uses ``nll_loss2d`` there).  ``total_weight`` is not
differentiable (torch's ``output_differentiability: [True, False]``).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from ._prims_common import DEFAULT
from .table import REDUCTION, MetaError, TensorMeta, broadcast_shapes, defop, elementwise_dtypes

NONE, MEAN, SUM = 0, 1, 2  # torch's at::Reduction
REDUCTIONS = {"none": NONE, "mean": MEAN, "sum": SUM}


def reduction_enum(reduction) -> int:
    """``'mean'`` -> 1 (``torch.nn._reduction.get_enum``); an int passes through."""
    if isinstance(reduction, int):
        return reduction
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return REDUCTIONS[reduction]


def _reduce_array(a, reduction: int):
    if reduction == NONE:
        return a
    return a.sum() if reduction == SUM else a.mean()


# ---------------------------------------------------------------- mse_loss


def _mse_meta(self, target, reduction="mean"):
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape))
    _, dtype = elementwise_dtypes(DEFAULT, self, target)
    return TensorMeta(shape if reduction_enum(reduction) == NONE else (), dtype)


def _mse_kernel(x, y, reduction="mean"):
    d = x - y
    return _reduce_array(d * d, reduction_enum(reduction))


def _mse_backward_meta(grad_output, self, target, reduction):
    shape = broadcast_shapes(tuple(self.shape), tuple(target.shape), tuple(grad_output.shape))
    _, dtype = elementwise_dtypes(DEFAULT, grad_output, self, target)
    return TensorMeta(shape, dtype)


def _mse_backward_kernel(g, x, y, reduction):
    d = x - y
    scale = 2.0 / max(d.size, 1) if reduction == MEAN else 2.0
    return scale * d * g


def _mse_double_backward(grad, t, reduction):
    """d(mse_loss_backward)/d(self): ``grad * 2`` (/ n for mean) — torch's
    ``mse_loss_double_backward``."""
    n = 1
    for s in t.shape:
        n *= s
    return grad * (2.0 / n if reduction == MEAN else 2.0)


def _mse_double_backward_grad_output(grad, grad_output, self, target, reduction):
    out = F.ops.aten.mse_loss_backward(grad, self, target, reduction)
    return out if reduction == NONE else out.sum()


mse_loss = defop(
    "mse_loss(Tensor self, Tensor target, str reduction='mean') -> Tensor", REDUCTION,
    kernel=_mse_kernel, meta=_mse_meta,
    derivatives={
        "self": lambda grad, self, target, reduction: F.ops.aten.mse_loss_backward(
            grad, self, target, reduction_enum(reduction)),
        "target": lambda grad, self, target, reduction: F.ops.aten.mse_loss_backward(
            grad, target, self, reduction_enum(reduction))})

mse_loss_backward = defop(
    "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor",
    REDUCTION, kernel=_mse_backward_kernel, meta=_mse_backward_meta,
    derivatives={
        "grad_output": _mse_double_backward_grad_output,
        "self": lambda grad, grad_output, self, reduction: _mse_double_backward(
            grad * grad_output, self, reduction),
        "target": lambda grad, grad_output, target, reduction: -_mse_double_backward(
            grad * grad_output, target, reduction)})

# ---------------------------------------------------------------- nll_loss


def _not_implemented(arg: str):
    """The formula of an input torch does not differentiate (``nll_loss_forward``'s
    ``weight``): autograd refuses the call when it requires grad (``not_differentiable``,
    torch's check at record time).  An integer ``target`` never requires grad."""
    def formula(grad):
        raise RuntimeError(f"the derivative for '{arg}' is not implemented.")
    formula.not_differentiable = True
    return formula


_NO_GRAD = {a: _not_implemented(a) for a in ("target", "weight")}


def _nll_meta(self, target, weight, reduction, ignore_index):
    if self.ndim not in (1, 2):
        raise MetaError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise MetaError("0D or 1D target tensor expected, multi-target not supported")
    batch = self.shape[0] if self.ndim == 2 else 1
    if (target.shape[0] if target.ndim else 1) != batch:
        raise ValueError(f"Expected input batch_size ({batch}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 1}).")
    c = self.shape[-1]
    if weight is not None and weight.numel() != c:
        raise MetaError(f"weight tensor should be defined either for all {c} classes or no "
                        f"classes but got weight tensor of shape: {list(weight.shape)}")
    shape = (self.shape[0],) if reduction == NONE and self.ndim == 2 else ()
    return TensorMeta(shape, self.dtype), TensorMeta((), self.dtype)


def _picked(x, t, weight, ignore_index):
    """(rows, safe target, per-row weight) with torch's bounds check on the targets."""
    c = x.shape[-1]
    t = t.reshape(-1)
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")
    safe = np.where(valid, t, 0)
    w = np.ones(len(t), dtype=x.dtype) if weight is None else weight.reshape(-1)[safe]
    return np.arange(len(t)), safe, np.where(valid, w, 0).astype(x.dtype)


def _nll_forward_kernel(x, t, weight, reduction, ignore_index):
    rows, safe, w = _picked(x, t, weight, ignore_index)
    losses = -x.reshape(len(rows), -1)[rows, safe] * w
    total = w.sum()
    if reduction == NONE:
        return losses.reshape(x.shape[:1] if x.ndim == 2 else ()), np.zeros((), x.dtype)
    out = losses.sum()
    if reduction == MEAN:
        with np.errstate(all="ignore"):  # every target ignored: 0 / 0 = nan, as torch
            out = out / total
    return out, total


def _nll_backward_meta(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    return TensorMeta(tuple(self.shape), self.dtype)


def _nll_backward_kernel(g, x, t, weight, reduction, ignore_index, total_weight):
    rows, safe, w = _picked(x, t, weight, ignore_index)
    g = g.reshape(-1) if reduction == NONE else np.broadcast_to(g.reshape(()), (len(rows),))
    scale = -w * g
    if reduction == MEAN:
        with np.errstate(all="ignore"):
            scale = scale / total_weight
    out = np.zeros((len(rows), x.shape[-1]), dtype=x.dtype)
    out[rows, safe] = scale
    return out.reshape(x.shape)


nll_loss_forward = defop(
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index) -> (Tensor output, Tensor total_weight)", REDUCTION,
    kernel=_nll_forward_kernel, meta=_nll_meta, nondifferentiable_outputs=(1,),
    derivatives={**_NO_GRAD, "self": lambda grad, self, target, weight, reduction, ignore_index,
                 total_weight: F.ops.aten.nll_loss_backward(
                     grad, self, target, weight, reduction, ignore_index, total_weight)})

def _nll_backward_weight_grad(grad, grad_output, self, target, reduction, ignore_index,
                              total_weight):
    """grad_input[n, t_n] = -w[t_n] g_n (/ total_weight): linear in ``w``, so d/dw[c] sums
    ``grad`` over the rows whose target is c (torch has no formula here: it raises)."""
    m = F.ops.aten.nll_loss_backward(grad_output, self, target, None, reduction, ignore_index,
                                     total_weight) * grad
    return m.sum(0) if m.ndim == 2 else m


def _nll_backward_total_weight_grad(grad, result, reduction, total_weight):
    """mean: grad_input is proportional to 1 / total_weight (torch raises here)."""
    s = (grad * result).sum()
    return -s / total_weight if reduction == MEAN else s * 0


nll_loss_backward = defop(
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
    "int reduction, SymInt ignore_index, Tensor total_weight) -> Tensor", REDUCTION,
    kernel=_nll_backward_kernel, meta=_nll_backward_meta,
    derivatives={"target": _NO_GRAD["target"], "weight": _nll_backward_weight_grad,
                 "total_weight": _nll_backward_total_weight_grad,
                 "self": lambda grad: F.zeros_like(grad),
                 "grad_output": lambda grad, target, weight, reduction, ignore_index:
                 F.ops.aten.nll_loss_forward(grad, target, weight, reduction, ignore_index)[0]})


def check_nll_target(target) -> None:
    if target.dtype.is_floating_point or target.dtype is _dtype.bool_:
        raise RuntimeError(f"nll_loss: expected scalar type Long but found "
                           f"{target.dtype.name.capitalize()}")
