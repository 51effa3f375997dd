"""OpInfos of the tensor ops ordinary programs meet (``ops/pointwise_more.py``, ``scan.py``,
``sorting.py``, ``tensor_transformations.py``, ``linalg.py``).

Registered into ``opinfo.OPINFOS`` (imported at the end of ``opinfo.py``), so the generated
tests — numpy references, Meta device, NPU, gradcheck, torch comparison — cover them.  The
references are independent numpy: a stable descending sort is ``argsort(-x, stable)``, a
cumulative product ``np.cumprod``, ``einsum`` numpy's own ``np.einsum``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import minitorch_compile as mtc

from .opinfo import (
    ALL,
    BOOL,
    F32,
    F64,
    FLOATS,
    INT,
    NUMERIC,
    TO_FLOAT,
    S,
    binary_sample,
    dtype_of,
    opinfo,
    pointwise,
    same,
)

U8 = mtc.uint8


# ---------------------------------------------------------------- pointwise

pointwise("atan2", binary_sample(NUMERIC), np.arctan2, TO_FLOAT, operands=(0, 1),
          dtypes=NUMERIC)
pointwise("hypot", binary_sample(FLOATS, scalars=False), np.hypot, operands=(0, 1),
          dtypes=FLOATS)
pointwise("logaddexp", binary_sample(FLOATS, scalars=False), np.logaddexp, operands=(0, 1),
          dtypes=FLOATS)


def _logit_sample(g, dt):
    a = g.array(g.shape(), dt, "positive") / 3.5  # in (0, 1)
    eps = None if g.grad else g.choice([None, 0.1])
    return S(np.asarray(a, dtype=dt.np), eps=eps)


def _logit_ref(a, eps=None):
    if eps is not None:
        a = np.clip(a, eps, 1 - eps)
    return np.log(a / (1 - a))


pointwise("logit", _logit_sample, _logit_ref, TO_FLOAT, dtypes=FLOATS)


def _lerp_sample(g, dt):
    s1, s2, s3 = g.bshapes(3)
    weight = g.array(s3, dt) if g.grad or g.bool() else g.scalar(dt)
    return S(g.array(s1, dt), g.array(s2, dt), weight)


pointwise("lerp", _lerp_sample, lambda a, b, w: a + w * (b - a), operands=(0, 1, 2),
          dtypes=FLOATS)


def _addc_sample(domain):
    def sample(g, dt):
        s1, s2, s3 = g.bshapes(3)
        value = g.choice([1, 2, -0.5] if dt.is_floating_point else [1, 2] if dt is U8 else [1, -1])
        return S(g.array(s1, dt), g.array(s2, dt), g.array(s3, dt, domain), value=value)
    return sample


pointwise("addcmul", _addc_sample("real"), lambda a, b, c, value=1: a + value * (b * c),
          operands=(0, 1, 2), dtypes=NUMERIC)
pointwise("addcdiv", _addc_sample("nonzero"), lambda a, b, c, value=1: a + value * (b / c),
          operands=(0, 1, 2), dtypes=FLOATS)


def _masked_fill_sample(g, dt):
    s_self, s_mask = g.bshapes(2)
    if g.grad:
        s_mask = s_self  # torch's in-place check needs self's shape; keep gradients simple
    value = g.array((), dt) if g.grad or g.bool() else g.scalar(dt)
    return S(g.array(s_self, dt), g.array(s_mask, BOOL), value)


def _masked_fill_ref(a, mask, value):
    return np.where(mask, np.asarray(value).astype(a.dtype), a)


opinfo("masked_fill", _masked_fill_sample, _masked_fill_ref, same(), dtypes=ALL)

# ---------------------------------------------------------------- scans and products


def _acc(dt):
    return dt if dt.is_floating_point else INT


def _scan_sample(g, dt):
    a = g.array(g.shape(), dt)
    s = S(a, g.dim(a.ndim))
    if not g.grad:
        s.kwargs["dtype"] = g.choice([None, F64])
    return s


def _scan_ref(fn):
    def ref(a, dim, dtype=None):
        out = (dtype or _acc(dtype_of(a))).np
        return fn(a.astype(out), axis=dim % a.ndim) if a.ndim else a.astype(out)
    return ref


def _scan_out(s):
    return s.kwargs.get("dtype") or _acc(dtype_of(s.args[0]))


opinfo("cumsum", _scan_sample, _scan_ref(np.cumsum), _scan_out, dtypes=ALL)
opinfo("cumprod", _scan_sample, _scan_ref(np.cumprod), _scan_out, dtypes=ALL)


def _prod_sample(g, dt):
    s = S(g.array(g.shape(), dt))
    if not g.grad:
        s.kwargs["dtype"] = g.choice([None, F64])
    return s


opinfo("prod", _prod_sample,
       lambda a, dtype=None: np.prod(a.astype((dtype or _acc(dtype_of(a))).np)),
       _scan_out, dtypes=ALL)


def _prod_dim_sample(g, dt):
    a = g.array(g.shape(), dt)
    s = S(a, g.dim(a.ndim), g.bool())
    if not g.grad:
        s.kwargs["dtype"] = g.choice([None, F64])
    return s


def _prod_dim_ref(a, dim, keepdim=False, dtype=None):
    a = a.astype((dtype or _acc(dtype_of(a))).np)
    return np.prod(a, axis=dim % a.ndim, keepdims=keepdim) if a.ndim else a


opinfo("prod.dim_int", _prod_dim_sample, _prod_dim_ref, _scan_out, dtypes=ALL)

# ---------------------------------------------------------------- sorting


def _stable_argsort(a, axis, descending):
    if descending:
        return np.argsort(-a.astype(np.float64), axis=axis, kind="stable")
    return np.argsort(a, axis=axis, kind="stable")


def _sort_sample(g, dt):
    a = g.array(g.shape(), dt)
    return S(a, g.dim(a.ndim), g.bool(), stable=True)


def _sort_ref(a, dim=-1, descending=False, stable=False):
    if a.ndim == 0:
        return a, np.zeros((), np.int64)
    idx = _stable_argsort(a, dim % a.ndim, descending)
    return np.take_along_axis(a, idx, dim % a.ndim), idx


def _torch_sort(torch, a, dim=-1, descending=False, stable=False):
    return torch.sort(a, dim=dim, descending=descending, stable=stable)


opinfo("sort", _sort_sample, _sort_ref, lambda s: (dtype_of(s.args[0]), INT), dtypes=NUMERIC,
       torch=_torch_sort)
opinfo("argsort", _sort_sample, lambda *a, **k: _sort_ref(*a, **k)[1], lambda s: INT,
       dtypes=NUMERIC, grad=False,
       torch=lambda torch, *a, **k: _torch_sort(torch, *a, **k)[1])


def _topk_sample(g, dt):
    a = g.array(g.shape(), dt)
    d = g.dim(a.ndim)
    n = a.shape[d] if a.ndim else 1
    return S(a, g.integers(0, n), d, g.bool(), True)


def _topk_ref(a, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    values, idx = _sort_ref(a, dim, largest)
    if a.ndim == 0:
        return values, idx
    d = dim % a.ndim
    return np.take(values, np.arange(k), d), np.take(idx, np.arange(k), d)


opinfo("topk", _topk_sample, _topk_ref, lambda s: (dtype_of(s.args[0]), INT), dtypes=NUMERIC)


def _kth_sample(g, dt):
    a = g.array(g.shape(), dt)
    d = g.dim(a.ndim)
    n = a.shape[d] if a.ndim else 1
    return S(a, g.integers(1, n), d, g.bool())


def _kth_ref(a, k, dim=-1, keepdim=False):
    values, idx = _sort_ref(a, dim)
    if a.ndim == 0:
        return values, idx
    d = dim % a.ndim
    v, i = np.take(values, [k - 1], d), np.take(idx, [k - 1], d)
    return (v, i) if keepdim else (np.squeeze(v, d), np.squeeze(i, d))


opinfo("kthvalue", _kth_sample, _kth_ref, lambda s: (dtype_of(s.args[0]), INT),
       dtypes=(F32, F64, INT))


def _median_dim_ref(a, dim, keepdim=False):
    n = a.shape[dim % a.ndim] if a.ndim else 1
    return _kth_ref(a, (n + 1) // 2, dim, keepdim)


opinfo("median.dim", lambda g, dt: (lambda a: S(a, g.dim(a.ndim), g.bool()))(
           g.array(g.shape(), dt)),
       _median_dim_ref, lambda s: (dtype_of(s.args[0]), INT), dtypes=(F32, F64, INT))
opinfo("median", lambda g, dt: S(g.array(g.shape(), dt)),
       lambda a: np.sort(a.reshape(-1))[(a.size - 1) // 2], same(), dtypes=(F32, F64, INT))

# ---------------------------------------------------------------- shape-moving ops


def _roll_sample(g, dt):
    a = g.array(g.shape(), dt)
    if g.bool() or a.ndim == 0:
        return S(a, g.integers(-5, 5))
    dims = g.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=a.ndim,
                           unique_by=lambda d: d % a.ndim))
    return S(a, [g.integers(-5, 5) for _ in dims], dims)


def _roll_ref(a, shifts, dims=()):
    if not dims:
        return np.roll(a.reshape(-1), shifts).reshape(a.shape)
    return np.roll(a, shifts, axis=tuple(d % a.ndim for d in dims))


opinfo("roll", _roll_sample, _roll_ref, same(), dtypes=ALL,
       torch=lambda torch, a, shifts, dims=(): torch.roll(a, shifts, dims))


def _tri_sample(g, dt):
    return S(g.array(g.shape(min_dims=2), dt), g.integers(-3, 3))


opinfo("tril", _tri_sample, np.tril, same(), dtypes=ALL)
opinfo("triu", _tri_sample, np.triu, same(), dtypes=ALL)
opinfo("diag", lambda g, dt: S(g.array(g.shape(min_dims=1, max_dims=2), dt), g.integers(-2, 2)),
       np.diag, same(), dtypes=ALL)


def _movedim_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    n = g.integers(1, a.ndim)
    src = g.draw(st.permutations(range(a.ndim)))[:n]
    dst = g.draw(st.permutations(range(a.ndim)))[:n]
    return S(a, [s - a.ndim if g.bool() else s for s in src], list(dst))


opinfo("movedim", _movedim_sample, lambda a, s, d: np.moveaxis(a, s, d), same(), dtypes=ALL)


def _expand_as_sample(g, dt):
    a = g.array(g.shape(max_dims=2), dt)
    target = tuple(g.integers(1, 3) if s == 1 else s for s in a.shape)
    return S(a, g.array((g.integers(1, 2),) * g.integers(0, 1) + target, dt))


opinfo("expand_as", _expand_as_sample, lambda a, b: np.broadcast_to(a, b.shape), same(),
       dtypes=ALL)


def _unflatten_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    d = g.dim(a.ndim)
    n = a.shape[d]
    first = g.choice([k for k in range(1, n + 1) if n % k == 0])
    sizes = [first, n // first] if g.bool() else [first, -1]
    return S(a, d, sizes)


def _unflatten_ref(a, dim, sizes):
    d = dim % a.ndim
    return a.reshape(a.shape[:d] + tuple(sizes) + a.shape[d + 1:])


opinfo("unflatten.int", _unflatten_sample, _unflatten_ref, same(), dtypes=ALL)


def _tile_sample(g, dt):
    a = g.array(g.shape(max_dims=2), dt)
    return S(a, [g.integers(1, 2) for _ in range(g.integers(0, 3))])


opinfo("tile", _tile_sample, lambda a, dims: np.tile(a, dims) if dims else a.copy(), same(),
       dtypes=ALL)


def _repeat_interleave_sample(g, dt):
    a = g.array(g.shape(), dt)
    # a 0-dim tensor with a dim is torch's IndexError (tests/test_tensor_ops_more.py)
    return S(a, g.integers(0, 3), g.choice([None, g.dim(a.ndim)]) if a.ndim else None)


def _repeat_interleave_ref(a, repeats, dim=None):
    if dim is None:
        return np.repeat(a.reshape(-1), repeats)
    return np.repeat(a.reshape(1) if a.ndim == 0 else a, repeats, axis=dim % max(a.ndim, 1))


opinfo("repeat_interleave.self_int", _repeat_interleave_sample, _repeat_interleave_ref, same(),
       dtypes=ALL)


def _stack_sample(min_dims):
    def sample(g, dt):
        shape = list(g.shape(max_dims=2))
        n = g.integers(1, 3)
        if len(shape) < min_dims:
            along = g.integers(1, 3)
            return S([g.array((along,) * len(shape) or (), dt) for _ in range(n)] if not shape
                     else [g.array(shape, dt) for _ in range(n)])
        axis = (1 if len(shape) >= 2 else 0) if min_dims == 1 else 0
        ts = []
        for _ in range(n):
            shape[axis] = g.integers(1, 3)
            ts.append(g.array(shape, dt))
        return S(ts)
    return sample


def _first_dtype(s):
    return dtype_of(s.args[0][0])


opinfo("hstack", _stack_sample(1), lambda ts: np.hstack(ts), _first_dtype, dtypes=ALL)
opinfo("vstack", _stack_sample(2), lambda ts: np.vstack(ts), _first_dtype, dtypes=ALL)

# ---------------------------------------------------------------- products and norms

_EQUATIONS = [  # (equation, operand shapes by letter)
    "ij,jk->ik", "bij,bjk->bik", "ij,kj->ik", "i,i->", "i,j->ij", "ij->ji", "ij->", "ijk->kj",
    "bhqd,bhkd->bhqk", "...ij,...jk->...ik", "ij,jk,kl->il", "ij,ij->i", "ij", "ji,jk",
]


def _einsum_sample(g, dt):
    eq = g.choice(_EQUATIONS)
    sizes = {c: g.integers(1, 3) for c in "ijklbhqd"}
    lhs = eq.partition("->")[0].split(",")
    ell = tuple(g.integers(1, 2) for _ in range(g.integers(0, 2)))
    ts = [g.array((ell if "..." in term else ()) + tuple(sizes[c] for c in term.replace(
        "...", "")), dt) for term in lhs]
    return S(eq, ts)


opinfo("einsum", _einsum_sample, lambda eq, ts: np.einsum(eq, *ts), lambda s: dtype_of(
    s.args[1][0]), dtypes=FLOATS)


def _tensordot_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    k = g.integers(1, a.ndim)
    dims_a = list(range(a.ndim - k, a.ndim))
    b_shape = tuple(a.shape[d] for d in dims_a) + tuple(g.shape(max_dims=1))
    return S(a, g.array(b_shape, dt), dims_a, list(range(k)))


opinfo("tensordot", _tensordot_sample,
       lambda a, b, da, db: np.tensordot(a, b, (da, db)), same(), dtypes=FLOATS)
opinfo("outer", lambda g, dt: S(g.array(g.shape(1, 1), dt), g.array(g.shape(1, 1), dt)),
       np.outer, same(), dtypes=NUMERIC)


def _baddbmm_sample(g, dt):
    b, n, k, m = (g.integers(1, 3) for _ in range(4))
    beta = g.choice([1, 0.5] if g.grad else [1, 0.5, 0])
    return S(g.array(g.choice([(b, n, m), (m,), (n, 1)]), dt), g.array((b, n, k), dt),
             g.array((b, k, m), dt), beta=beta, alpha=g.choice([1, 2.0]))


def _baddbmm_ref(c, x, y, beta=1, alpha=1):
    prod = alpha * (x.astype(np.float64) @ y)
    return prod if beta == 0 else beta * c + prod


opinfo("baddbmm", _baddbmm_sample, _baddbmm_ref, same(), dtypes=FLOATS)


def _cross_sample(g, dt):
    shape = list(g.shape(min_dims=1, max_dims=3))
    d = g.dim(len(shape))
    shape[d] = 3
    return S(g.array(shape, dt), g.array(shape, dt), dim=d)


opinfo("linalg_cross", _cross_sample, lambda a, b, dim=-1: np.cross(a, b, axis=dim), same(),
       dtypes=(F32, F64, INT))


def _norm_sample(g, dt):
    a = g.array(g.shape(min_side=1), dt)
    ords = [2, 1, 3, 0.5] + ([] if g.grad else [0, float("inf"), float("-inf")])
    return S(a, g.choice(ords), g.dims(a.ndim), g.bool())


def _norm_ref(a, ord=2, dim=None, keepdim=False):  # noqa: A002
    x = np.abs(a.astype(np.float64))
    ax = None if dim is None or a.ndim == 0 or dim == [] else tuple(
        d % a.ndim for d in ((dim,) if isinstance(dim, int) else dim))
    if ord == float("inf"):
        return np.amax(x, axis=ax, keepdims=keepdim)
    if ord == float("-inf"):
        return np.amin(x, axis=ax, keepdims=keepdim)
    if ord == 0:
        return np.sum(x != 0, axis=ax, keepdims=keepdim).astype(np.float64)
    return np.sum(x ** ord, axis=ax, keepdims=keepdim) ** (1 / ord)


opinfo("linalg_vector_norm", _norm_sample, _norm_ref, same(), dtypes=FLOATS)

from . import opinfo_tensorops_more  # noqa: E402,F401 (the index, sampling, special ops)
