"""Positions in sorted sequences and counts: ``searchsorted``, ``bucketize``, ``bincount``.

Mirrors ``aten/src/ATen/native/Bucketization.cpp`` and ``SummaryOps.cpp``.

``searchsorted(seq, values, right)``: for each value, the number of elements of its row of
``seq`` that are ``<`` it (``<=`` with ``right=True``) — the insertion index that keeps the row
sorted.  ``seq`` is 1-D (shared by every value) or has ``values``' leading dims (one row per
row of values).  A 1-D sequence is one ``np.searchsorted``; for rows, the kernel sorts each
row of ``[values, sequence]`` at once (one stable ``argsort`` over the last dim; for
``right=True`` the sequence goes first, so equal elements sort before the value) and reads each
value's answer as its sorted position minus the number of values sorted before it.

``bucketize(x, boundaries)`` is ``searchsorted(boundaries, x)`` (a 1-D sequence).

``bincount(x, weights, minlength)``: ``np.bincount``.  Its length, ``max(x) + 1``, depends on
the *values* of ``x``, so the meta rule raises ``DynamicOutputShapeException`` (a graph break
under ``mtc.compile``, as in torch).  None of these is differentiable (torch's neither).
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .indexing import _dynamic_output_shape, _has_data
from .table import COMPOSITE, INDEXING, MetaError, TensorMeta, defop


def _searchsorted_meta(sorted_sequence, self, out_int32=False, right=False, side=None,
                       sorter=None):
    seq = sorted_sequence
    if side is not None and side not in ("left", "right"):
        raise MetaError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                        f"side = {side}")
    if side == "left" and right:
        raise MetaError("torch.searchsorted(): side and right can't be set to opposites, got "
                        "side of left while right was True")
    if seq.ndim > 1 and (self.ndim != seq.ndim or tuple(seq.shape[:-1]) != tuple(
            self.shape[:-1])):
        raise MetaError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq.shape)} and input value tensor {list(self.shape)}")
    if seq.ndim == 0:
        raise MetaError("torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                        "first N-1 dimensions of boundaries tensor and input value tensor must "
                        f"match, but we got boundaries tensor {list(seq.shape)} and input "
                        f"value tensor {list(self.shape)}")
    return TensorMeta(tuple(self.shape), _dtype.int32 if out_int32 else _dtype.int64)


def _searchsorted_kernel(seq, values, out_int32=False, right=False, side=None, sorter=None):
    side = "right" if right or side == "right" else "left"
    if sorter is not None:
        seq = np.take_along_axis(seq, sorter, -1)
    out_np = np.int32 if out_int32 else np.int64
    if seq.ndim == 1:
        return np.searchsorted(seq, values, side=side).astype(out_np)
    rows = seq.reshape(-1, seq.shape[-1])
    vals = values.reshape(rows.shape[0], -1)
    m = vals.shape[-1]
    # one stable sort per row of [values, sequence] ("left": a value goes before equal
    # elements) or [sequence, values] ("right": after them); a value's answer is its sorted
    # position minus the values sorted before it
    first, second = (vals, rows) if side == "left" else (rows, vals)
    combined = np.concatenate([first, second], -1)
    order = np.argsort(combined, axis=-1, kind="stable")
    is_val = (order < m) if side == "left" else (order >= rows.shape[-1])
    vals_before = np.cumsum(is_val, -1) - is_val
    seq_before = np.arange(combined.shape[-1]) - vals_before
    val_slot = order - (0 if side == "left" else rows.shape[-1])
    out = np.zeros(vals.shape, np.int64)
    r, c = np.nonzero(is_val)
    out[r, val_slot[r, c]] = seq_before[r, c]
    return out.reshape(values.shape).astype(out_np)


searchsorted = defop(
    "searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, "
    "bool right=False, str? side=None, Tensor? sorter=None) -> Tensor", INDEXING,
    kernel=_searchsorted_kernel, meta=_searchsorted_meta, differentiable=False)

bucketize = defop(
    "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, "
    "bool right=False) -> Tensor", COMPOSITE,
    decomposition=lambda self, boundaries, out_int32=False, right=False: searchsorted(
        boundaries, self, out_int32=out_int32, right=right))

# ---------------------------------------------------------------- bincount


def _bincount_meta(self, weights=None, minlength=0):
    if self.ndim != 1 or self.dtype.is_floating_point or self.dtype is _dtype.bool_:
        raise MetaError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise MetaError("minlength should be >= 0")
    if weights is not None and tuple(weights.shape) != tuple(self.shape):
        raise MetaError("weights should be 1-d and have the same length as input")
    if not _has_data(self):
        raise _dynamic_output_shape("bincount", "its input")
    data = self._data
    if data.size and data.min() < 0:
        raise MetaError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(data.max()) + 1 if data.size else 0, minlength)
    if weights is None or data.size == 0:  # torch: an empty input counts in int64, weights or not
        dtype = _dtype.int64
    else:
        dtype = _dtype.float32 if weights.dtype is _dtype.float32 else _dtype.float64
    return TensorMeta((n,), dtype)


bincount = defop(
    "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", INDEXING,
    kernel=lambda a, weights=None, minlength=0: np.bincount(a, weights, minlength),
    meta=_bincount_meta, differentiable=False)
