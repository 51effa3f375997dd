"""OpInfos of the second half of the tensor ops (``ops/index_ops.py``, ``distributions.py``,
``special.py``, ``bucketization.py``, and ``repeat_interleave`` with a tensor of repeats), kept
apart from ``opinfo_tensorops.py`` so each file stays readable.

Imported at the end of ``opinfo_tensorops.py``; registering here fills the same ``OPINFOS``.
Random ops have no reference: their ``check`` tests the values' properties (0/1, finite,
distinct categories), and ``tests/test_tensor_ops_more.py`` their frequencies.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import minitorch_compile as mtc

from .opinfo import (
    ALL,
    F32,
    F64,
    FLOATS,
    INT,
    NUMERIC,
    TO_FLOAT,
    S,
    dtype_of,
    opinfo,
    pointwise,
    same,
)

# ---------------------------------------------------------------- index_add / copy / fill


def _index_vector_sample(op):
    def sample(g, dt):
        a = g.array(g.shape(), dt)
        d = g.dim(a.ndim)
        n = a.shape[d % a.ndim] if a.ndim else 1
        if op == "copy":  # distinct positions (torch leaves repeated writes unordered)
            k = g.integers(0, n)
            idx = np.asarray(g.draw(st.permutations(range(n)))[:k], dtype=np.int64)
        else:
            low = -n if op == "fill" and not g.grad else 0  # torch's backward: no negatives
            idx = np.asarray(g.draw(st.lists(st.integers(low, n - 1), max_size=3)), np.int64)
        if a.ndim == 0:  # a 0-dim self: one index, a 0-dim source
            idx = np.zeros(1, np.int64)
        if op == "fill":
            value = g.array((), dt) if g.grad or g.bool() else g.scalar(dt)
            return S(a, d, idx, value)
        src_shape = list(a.shape) or [1]
        src_shape[d % max(a.ndim, 1)] = idx.size
        src = g.array(src_shape if a.ndim else (), dt)
        if op == "add":
            return S(a, d, idx, src, alpha=g.choice([1, 2]))
        return S(a, d, idx, src)
    return sample


def _index_ref(op):
    def ref(a, dim, idx, src, alpha=1):
        out = a.copy().reshape(a.shape or (1,))
        o = np.moveaxis(out, dim % out.ndim, 0)
        if op == "add":
            np.add.at(o, idx, np.moveaxis(np.asarray(src).reshape(
                (idx.size,) + o.shape[1:] if a.ndim == 0 else src.shape), dim % out.ndim, 0)
                * alpha)
        elif op == "copy":
            o[idx] = np.moveaxis(np.asarray(src).reshape(
                (idx.size,) if a.ndim == 0 else src.shape), dim % out.ndim, 0)
        else:
            o[idx] = np.asarray(src).astype(a.dtype)
        return out.reshape(a.shape)
    return ref


opinfo("index_add", _index_vector_sample("add"), _index_ref("add"), same(), dtypes=NUMERIC)
opinfo("index_copy", _index_vector_sample("copy"), _index_ref("copy"), same(), dtypes=ALL)
opinfo("index_fill", _index_vector_sample("fill"),
       lambda a, dim, idx, value: _index_ref("fill")(a, dim, idx, value), same(), dtypes=ALL)


def _scatter_reduce_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    d = g.dim(a.ndim)
    idx_shape = tuple(g.integers(1, s) for s in a.shape)
    idx = np.asarray(g.draw(st.lists(st.integers(0, a.shape[d] - 1), min_size=int(np.prod(
        idx_shape)), max_size=int(np.prod(idx_shape)))), np.int64).reshape(idx_shape)
    reduces = ["sum", "mean", "amax", "amin", "prod"]
    return S(a, d, idx, g.array(idx_shape, dt), g.choice(reduces), include_self=g.bool())


def _scatter_reduce_ref(a, dim, idx, src, reduce, include_self=True):
    d = dim % a.ndim
    out = a.astype(np.float64) if reduce == "mean" else a.copy()
    grid = list(np.ix_(*[np.arange(s) for s in idx.shape]))
    grid[d] = idx
    grid = tuple(grid)
    count = np.zeros(a.shape, np.int64)
    np.add.at(count, grid, 1)
    if not include_self:
        ident = {"sum": 0, "mean": 0, "prod": 1,
                 "amax": -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min
                 if a.dtype.kind in "iu" else False,
                 "amin": np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).max
                 if a.dtype.kind in "iu" else True}[reduce]
        out[count > 0] = ident
    ufunc = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
             "amin": np.minimum}[reduce]
    ufunc.at(out, grid, src)
    if reduce == "mean":
        total = np.maximum(count + (1 if include_self else 0), 1)
        out = np.floor(out / total) if a.dtype.kind in "iub" else out / total
        out = out.astype(a.dtype)
    return out


opinfo("scatter_reduce.two", _scatter_reduce_sample, _scatter_reduce_ref, same(),
       dtypes=(F32, F64, INT))

# ---------------------------------------------------------------- sampling


def _zero_or_one(out, s):
    (y,) = out
    assert np.all((y == 0) | (y == 1))


opinfo("bernoulli", lambda g, dt: S(np.asarray(g.array(g.shape(), dt, "positive") / 3,
                                               dtype=dt.np)),
       None, same(), grad=False, check=_zero_or_one, torch_values=False)
opinfo("bernoulli.p", lambda g, dt: S(g.array(g.shape(), dt), g.choice([0.0, 0.3, 1.0])),
       None, same(), dtypes=ALL, grad=False, torch_values=False,
       check=lambda out, s: _zero_or_one(out, s) if 0 < s.args[1] < 1 else
       np.testing.assert_array_equal(out[0], np.full(s.args[0].shape, s.args[1])))


def _normal_sample(g, dt):
    s1, s2 = g.bshapes(2)
    return S(g.array(s1, dt), g.array(s2, dt, "positive"))


def _finite(out, s):
    assert np.all(np.isfinite(out[0]))


opinfo("normal.Tensor_Tensor", _normal_sample, None, same(), grad=False, check=_finite,
       torch_values=False)
opinfo("normal.float_float", lambda g, dt: S(0.5, 2.0, list(g.shape()), dtype=dt), None,
       lambda s: s.kwargs["dtype"], grad=False, check=_finite, torch_values=False)


def _uniform_check(out, s):
    lo, hi = s.args[1], s.args[2]
    assert np.all((out[0] >= lo) & (out[0] <= hi))


opinfo("uniform", lambda g, dt: S(g.array(g.shape(), dt), -2.0, 3.0), None, same(),
       grad=False, check=_uniform_check, torch_values=False)
opinfo("normal_functional", lambda g, dt: S(g.array(g.shape(), dt), 1.0, 0.5), None, same(),
       grad=False, check=_finite, torch_values=False)


def _multinomial_sample(g, dt):
    w = g.array(g.shape(min_dims=1, max_dims=2), dt, "positive")
    replacement = g.bool()
    n = w.shape[-1]
    return S(w, g.integers(1, 4 if replacement else n), replacement)


def _multinomial_check(out, s):
    (idx,) = out
    w, k, replacement = s.args
    assert idx.shape == w.shape[:-1] + (k,) and np.all((idx >= 0) & (idx < w.shape[-1]))
    if not replacement:  # distinct categories in every row
        rows = idx.reshape(-1, k)
        assert all(len(set(r)) == k for r in rows.tolist())


opinfo("multinomial", _multinomial_sample, None, lambda s: INT, grad=False,
       check=_multinomial_check, torch_values=False)

# ---------------------------------------------------------------- special functions


def _open_unit_sample(g, dt):
    return S(np.asarray(g.array(g.shape(), dt) * 0.3, dtype=dt.np))  # in (-0.9, 0.9)


def _gamma_sample(g, dt):
    """Away from the poles: positive values, or negative ones a quarter off an integer."""
    a = g.array(g.shape(), dt)
    if dt.is_floating_point:
        a = np.where(a < 0, np.floor(a) + 0.25, a + 0.25).astype(dt.np)
    else:
        a = np.abs(a) + 1
    return S(np.asarray(a, dtype=dt.np))


def _ref_via_torch(name):
    """torch is the reference where numpy has no such function (skips without torch)."""
    def ref(*args):
        import pytest
        torch = pytest.importorskip("torch")
        ts = [torch.from_numpy(a.astype(np.float64)) if isinstance(a, np.ndarray) else a
              for a in args]
        return getattr(torch, name)(*ts).numpy()
    return ref


pointwise("erfinv", _open_unit_sample, _ref_via_torch("erfinv"), TO_FLOAT, dtypes=FLOATS)
pointwise("lgamma", _gamma_sample, _ref_via_torch("lgamma"), TO_FLOAT, dtypes=(F32, F64, INT))
pointwise("digamma", _gamma_sample, _ref_via_torch("digamma"), TO_FLOAT, dtypes=(F32, F64, INT))
opinfo("polygamma", lambda g, dt: S(g.integers(1, 3), _gamma_sample(g, dt).args[0]),
       _ref_via_torch("polygamma"), lambda s: dtype_of(s.args[1]) if
       dtype_of(s.args[1]).is_floating_point else F32, dtypes=(F32, F64))

# ---------------------------------------------------------------- bucketization


def _searchsorted_sample(g, dt):
    values = g.array(g.shape(min_dims=1, max_dims=3), dt)
    if g.bool():
        seq = np.sort(g.array((g.integers(1, 4),), dt))
    else:
        seq = np.sort(g.array(values.shape[:-1] + (g.integers(1, 4),), dt), -1)
    return S(seq, values, out_int32=g.bool(), right=g.bool())


def _searchsorted_ref(seq, values, out_int32=False, right=False):
    side = "right" if right else "left"
    out = np.empty(values.shape, np.int32 if out_int32 else np.int64)
    rows_s = seq.reshape(-1, seq.shape[-1])
    rows_v = values.reshape(-1, values.shape[-1])
    for i in range(rows_v.shape[0]):  # a per-row loop is fine in a reference
        s = rows_s[0] if seq.ndim == 1 else rows_s[i]
        out.reshape(-1, values.shape[-1])[i] = np.searchsorted(s, rows_v[i], side=side)
    return out


opinfo("searchsorted.Tensor", _searchsorted_sample, _searchsorted_ref,
       lambda s: mtc.int32 if s.kwargs["out_int32"] else INT, dtypes=(F32, F64, INT),
       grad=False)
opinfo("bucketize.Tensor",
       lambda g, dt: S(g.array(g.shape(), dt), np.sort(g.array((g.integers(1, 4),), dt)),
                       right=g.bool()),
       lambda x, b, right=False: np.searchsorted(b, x, side="right" if right else "left"),
       lambda s: INT, dtypes=(F32, F64, INT), grad=False)


def _bincount_sample(g, dt):
    x = np.abs(g.array((g.integers(0, 5),), INT))
    weights = g.array(x.shape, g.choice([F32, F64])) if g.bool() else None
    return S(x, weights, g.integers(0, 3))


opinfo("bincount", _bincount_sample,
       lambda x, w=None, minlength=0: np.bincount(x, w, minlength),
       lambda s: INT if s.args[1] is None or not s.args[0].size else dtype_of(s.args[1]),
       dtypes=(INT,),
       grad=False, dynamic_shape=lambda s: True)


def _repeats_sample(g, dt):
    return S(np.asarray(g.draw(st.lists(st.integers(0, 3), max_size=4)), np.int64))


opinfo("repeat_interleave.Tensor", _repeats_sample,
       lambda r: np.repeat(np.arange(r.size), r), lambda s: INT, dtypes=(INT,), grad=False,
       dynamic_shape=lambda s: True)


def _repeat_interleave_tensor_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    d = g.choice([None, g.dim(a.ndim)])
    n = a.size if d is None else a.shape[d]
    r = np.asarray([g.integers(0, 2) for _ in range(n)] if g.bool() else g.integers(0, 2),
                   np.int64)
    return S(a, r, d)


def _repeat_interleave_tensor_ref(a, r, dim=None):
    if dim is None:
        return np.repeat(a.reshape(-1), r)
    return np.repeat(a, np.broadcast_to(r, (a.shape[dim],)), axis=dim % a.ndim)


opinfo("repeat_interleave.self_Tensor", _repeat_interleave_tensor_sample,
       _repeat_interleave_tensor_ref, same(), dtypes=ALL, dynamic_shape=lambda s: True)
