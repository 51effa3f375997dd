"""OpInfos of the breadth ops (issue 9): more pointwise math, bitwise and modulo ops, gathers,
logsumexp/var_mean/addmm, linspace and the random integers, activations, l1_loss, batch_norm.

Registered into ``opinfo.OPINFOS`` (imported at the end of ``opinfo.py``), so every generated
test — numpy references, Meta device, NPU, gradcheck, torch comparison — covers them too.
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
    INT,
    NUMERIC,
    TO_BOOL,
    TO_FLOAT,
    S,
    _axis,
    _reduce_ref,
    _torch_f,
    _var_ref,
    binary_sample,
    dtype_of,
    int_to_float,
    opinfo,
    pointwise,
    same,
    unary_sample,
)

U8 = mtc.uint8
INTS = (INT, BOOL, U8)  # the bitwise ops' dtypes

# ---------------------------------------------------------------- rounding (ops/rounding.py)


def _keep_ints(ufunc):
    return lambda a: a.copy() if a.dtype.kind in "iu" else ufunc(a)


def _round_decimals_ref(a, decimals):
    scale = a.dtype.type(10.0 ** abs(decimals))
    return np.rint(a * scale) / scale if decimals >= 0 else np.rint(a / scale) * scale


for _name, _ufunc in (("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc),
                      ("round", np.rint)):
    pointwise(_name, unary_sample(), _keep_ints(_ufunc), dtypes=NUMERIC)
pointwise("round.decimals", unary_sample(decimals=[-1, 1, 2, 3]), _round_decimals_ref,
          dtypes=(F32, F64))
pointwise("frac", unary_sample(), lambda a: a - np.trunc(a), dtypes=(F32, F64))

# ------------------------------------------------------- trigonometry (ops/pointwise_trig.py)


def _scaled_sample(scale, shift=0.0, domain="real"):
    """A float sample ``array * scale + shift`` (inside asin's, atanh's, acosh's domains)."""
    def sample(g, dt):
        a = g.array(g.shape(min_side=1 if g.grad else 0), dt, domain)
        return S(np.asarray(a * scale + shift, dtype=a.dtype))
    return sample


def _sinc_ref(a):
    return np.sinc(a.astype(np.float64)).astype(a.dtype)


for _name, _ufunc, _sample in (
        ("asin", np.arcsin, _scaled_sample(0.3)), ("acos", np.arccos, _scaled_sample(0.3)),
        ("atan", np.arctan, unary_sample()), ("sinh", np.sinh, unary_sample()),
        ("cosh", np.cosh, unary_sample()), ("tan", np.tan, _scaled_sample(0.4)),
        ("asinh", np.arcsinh, unary_sample()),
        ("acosh", np.arccosh, _scaled_sample(1.0, 1.0, "positive")),
        ("atanh", np.arctanh, _scaled_sample(0.3)), ("log10", np.log10, unary_sample("positive")),
        ("exp2", np.exp2, unary_sample()), ("erfc", None, unary_sample()),
        ("sinc", _sinc_ref, unary_sample()),
        ("deg2rad", lambda a: a * (np.pi / 180), unary_sample()),
        ("rad2deg", lambda a: a * (180 / np.pi), unary_sample())):
    if _name == "erfc":
        import math as _math

        _ufunc = np.vectorize(lambda v: _math.erfc(v), otypes=[np.float64])
    pointwise(_name, _sample, _ufunc, TO_FLOAT, dtypes=(F32, F64))

# ---------------------------------------------------------------- unary float math

pointwise("expm1", unary_sample(), np.expm1, TO_FLOAT, second_order=True)
pointwise("log2", unary_sample("positive"), np.log2, TO_FLOAT, second_order=True)
pointwise("log1p", unary_sample("positive"), np.log1p, TO_FLOAT, second_order=True)


def _special_values_sample(g, dt):
    """Finite values, with nan, +-inf and -0.0 sprinkled in for float dtypes."""
    a = g.array(g.shape(), dt)
    if dt.is_floating_point and a.size and not g.smooth:
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dt.np)
        where = g.draw(st.lists(st.integers(0, a.size - 1), max_size=3))
        flat = a.reshape(-1)
        for i in where:
            flat[i] = specials[g.integers(0, 3)]
    return S(a)


def _classify_ref(fn, non_float):
    return lambda a: fn(a) if a.dtype.kind == "f" else non_float(a)


for _name, _fn, _other in (
        ("isnan", np.isnan, lambda a: np.zeros(a.shape, bool)),
        ("isinf", np.isinf, lambda a: np.zeros(a.shape, bool)),
        ("isfinite", np.isfinite, lambda a: np.ones(a.shape, bool)),
        ("signbit", np.signbit, lambda a: a < 0 if a.dtype.kind == "i" else
         np.zeros(a.shape, bool))):
    pointwise(_name, _special_values_sample, _classify_ref(_fn, _other), TO_BOOL, grad=False,
              dtypes=ALL + (U8,))


def _one_bound_sample(g, dt):
    """``self`` and one clamp bound that broadcasts to self's shape."""
    s_self, s_bound = g.bshapes(2)
    full = np.broadcast_shapes(s_self, s_bound)
    # a Python-number bound must fit self's dtype (torch raises for uint8.clamp_min(-1))
    bound_dtypes = [dt] if dt.np.kind == "u" else NUMERIC
    return S(g.array(full, dt), g.operand(bound_dtypes, s_bound))


pointwise("clamp_min", _one_bound_sample, np.maximum, operands=(0, 1), dtypes=NUMERIC)
pointwise("clamp_max", _one_bound_sample, np.minimum, operands=(0, 1), dtypes=NUMERIC)

# ---------------------------------------------------------------- modulo and bitwise

pointwise("remainder", binary_sample(NUMERIC, "nonzero"), np.remainder, operands=(0, 1),
          dtypes=NUMERIC)
pointwise("fmod", binary_sample(NUMERIC, "nonzero"), np.fmod, operands=(0, 1), dtypes=NUMERIC)
for _name, _fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    pointwise(_name, binary_sample(INTS), _fn, operands=(0, 1), dtypes=INTS, grad=False)
pointwise("bitwise_not", unary_sample(), np.invert, dtypes=INTS, grad=False)

# ---------------------------------------------------------------- reductions and matmul


def _logsumexp_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim = g.dims(a.ndim, none=False)
    if dim == []:
        dim = g.dim(a.ndim)
    return S(a, dim, g.bool())


def _logsumexp_ref(a, dim, keepdim=False):
    a = a.astype(np.float64)
    ax = _axis(dim, a.ndim)
    m = np.max(a, axis=ax, keepdims=True)
    out = np.log(np.sum(np.exp(a - m), axis=ax, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, ax)


opinfo("logsumexp", _logsumexp_sample, _logsumexp_ref,
       lambda s: int_to_float(dtype_of(s.args[0])), dtypes=(F32, F64, INT))


def _var_mean_sample(g, dt):
    a = g.array(g.shape(min_dims=1, min_side=2) if g.grad else g.shape(), dt)
    return S(a, g.dims(a.ndim), correction=g.choice([None, 0, 1]), keepdim=g.bool())


def _var_mean_ref(a, dim=None, correction=None, keepdim=False):
    mean = np.mean(a.astype(np.float64), axis=_axis(dim, a.ndim), keepdims=keepdim)
    return _var_ref(a, dim, correction, keepdim), mean


opinfo("var_mean", _var_mean_sample, _var_mean_ref, lambda s: (dtype_of(s.args[0]),) * 2)


def _addmm_sample(g, dt):
    n, k, m = (g.integers(1, g.max_side) for _ in range(3))
    self_shape = g.choice([(n, m), (m,), (1, m), (n, 1), ()])
    if dt.is_floating_point:
        beta, alpha = g.choice([1, 0.5, 0]), g.choice([1, 2.0, -0.5])
    else:
        beta, alpha = g.choice([1, 2, 0]), g.choice([1, -1, 3])
    if g.grad:
        beta = g.choice([1, 0.5])
    return S(g.array(self_shape, dt), g.array((n, k), dt), g.array((k, m), dt), beta=beta,
             alpha=alpha)


def _addmm_ref(c, a, b, beta=1, alpha=1):
    prod = alpha * (a.astype(np.float64) @ b)
    return prod if beta == 0 else beta * c + prod


opinfo("addmm", _addmm_sample, _addmm_ref, same(), dtypes=NUMERIC)

# ---------------------------------------------------------------- views, copies, gathers


def _narrow_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim = g.dim(a.ndim)
    n = a.shape[dim]
    start = g.integers(-n, n)
    length = g.integers(0, n - (start % n if n and start != n else n))
    return S(a, dim, start, length)


def _narrow_ref(a, dim, start, length):
    start = start + a.shape[dim] if start < 0 else start
    return np.take(a, np.arange(start, start + length), axis=dim)


opinfo("narrow", _narrow_sample, _narrow_ref, same(), dtypes=ALL)


def _flip_sample(g, dt):
    a = g.array(g.shape(), dt)
    dims = g.draw(st.lists(st.integers(0, max(a.ndim, 1) - 1), unique=True))
    return S(a, [d - max(a.ndim, 1) if g.bool() else d for d in dims])


opinfo("flip", _flip_sample,
       lambda a, dims: np.flip(a, tuple(d % a.ndim for d in dims)) if a.ndim else a,
       same(), dtypes=ALL)


def _repeat_sample(g, dt):
    a = g.array(g.shape(), dt)
    repeats = [g.integers(1 if g.grad else 0, 2) for _ in range(a.ndim + g.integers(0, 2))]
    return S(a, repeats)


opinfo("repeat", _repeat_sample,
       lambda a, repeats: np.tile(a.reshape((1,) * (len(repeats) - a.ndim) + a.shape), repeats),
       same(), dtypes=ALL)


def _indices(g, n, shape):
    """int64 indices in [0, n) (repeats allowed: they accumulate in the backward)."""
    if g.smooth:
        return np.asarray(g.rng.integers(0, n, shape), dtype=np.int64)
    size = int(np.prod(shape))
    values = g.draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size))
    return np.asarray(values, dtype=np.int64).reshape(shape)


def _index_select_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim = g.dim(a.ndim)
    k = g.integers(0, 4) if not g.grad else g.integers(1, 4)
    return S(a, dim, _indices(g, a.shape[dim], (k,)))


opinfo("index_select", _index_select_sample,
       lambda a, dim, idx: np.take(a, idx, axis=dim), same(), dtypes=ALL)


def _gather_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim = g.dim(a.ndim)
    shape = [g.integers(1, s) if d != dim % a.ndim else g.integers(1, 4)
             for d, s in enumerate(a.shape)]
    return S(a, dim, _indices(g, a.shape[dim], tuple(shape)))


def _gather_ref(a, dim, index):
    d = dim % a.ndim
    sl = tuple(slice(0, s) if i != d else slice(None) for i, s in enumerate(index.shape))
    return np.take_along_axis(a[sl], index, axis=d)


opinfo("gather", _gather_sample, _gather_ref, same(), dtypes=ALL)


def _scatter_add_sample(g, dt):
    a, dim, index = _gather_sample(g, dt).args
    # torch's backward cannot give src a gradient when src is larger than index (it returns
    # index's shape); ours zero-pads: checked in test_ops_breadth, not against torch here
    src = g.array(tuple(s + (0 if g.grad else g.integers(0, 1)) for s in index.shape), dt)
    return S(a, dim, index, src)


def _scatter_add_ref(a, dim, index, src):
    out = a.astype(np.float64) if a.dtype.kind == "f" else a.copy()
    d = dim % a.ndim
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[d] = index[pos]
        out[tuple(target)] += src[pos]
    return out


opinfo("scatter_add", _scatter_add_sample, _scatter_add_ref, same(), dtypes=NUMERIC)


def _scatter_sample(g, dt):
    a, dim, index, src = _scatter_add_sample(g, dt).args
    if g.grad:  # unique indices along dim: an overwritten src element has no gradient in
        d = dim % a.ndim  # finite differences, while torch's formula (and ours) gives it one
        k = min(index.shape[d], a.shape[d])
        shape = list(index.shape)
        shape[d] = k
        along = (np.arange(k) + g.integers(0, a.shape[d] - 1)) % a.shape[d]
        view = [1] * index.ndim
        view[d] = k
        index = np.broadcast_to(along.reshape(view), shape).astype(index.dtype).copy()
        src = src[tuple(slice(0, s) for s in shape)]  # torch's backward needs src <= index
    return S(a, dim, index, src)


def _scatter_ref(a, dim, index, src):
    """Writes in index order, the last write to an element winning (torch's CPU order)."""
    out = a.copy()
    d = dim % a.ndim
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[d] = index[pos]
        out[tuple(target)] = src[pos]
    return out


opinfo("scatter", _scatter_sample, _scatter_ref, same(), dtypes=NUMERIC)

# ---------------------------------------------------------------- creation


def _linspace_sample(g, dt):
    start = g.choice([-2.5, -1, 0, 0.5, 3])
    end = g.choice([-3, 0, 1, 2.5, 10])
    return S(start, end, g.integers(0, 6), dtype=g.choice([None, dt]))


def _linspace_ref(start, end, steps, dtype=None):
    out = np.linspace(start, end, steps)
    return np.trunc(out) if dtype is not None and not dtype.is_floating_point else out


opinfo("linspace", _linspace_sample, _linspace_ref, lambda s: s.kwargs["dtype"] or F32,
       dtypes=(F32, F64, INT), grad=False)


def _dtype_kw(dtype) -> dict:
    """torch's ``randint``/``randperm`` schemas default ``dtype`` to long; an explicit None
    there means the default float dtype, so leave it out."""
    return {} if dtype is None else {"dtype": dtype}


def _randint_check(out, s):
    (y,), (low, high, _size) = out, s.args
    assert np.all(y >= low) and np.all(y < high) and np.all(y == np.round(y))


opinfo("randint.low", lambda g, dt: S(g.integers(-3, 1), g.integers(2, 5),
                                      list(g.shape(max_side=3)), dtype=g.choice([None, dt])),
       None, lambda s: s.kwargs["dtype"] or INT, dtypes=(INT, F32), grad=False,
       check=_randint_check, torch_values=False,
       torch=lambda torch, low, high, size, dtype=None: torch.randint(
           low, high, size, **_dtype_kw(dtype)))


def _randperm_check(out, s):
    (y,) = out
    np.testing.assert_array_equal(np.sort(y), np.arange(s.args[0]))


opinfo("randperm", lambda g, dt: S(g.integers(0, 6), dtype=g.choice([None, dt])), None,
       lambda s: s.kwargs["dtype"] or INT, dtypes=(INT, F32), grad=False,
       check=_randperm_check, torch_values=False,
       torch=lambda torch, n, dtype=None: torch.randperm(n, **_dtype_kw(dtype)))

# ---------------------------------------------------------------- activations and losses


def _wide(g, dt):
    """Values in [-4.5, 4.5]: past hardswish's and hardsigmoid's kinks at +-3."""
    a = g.array(g.shape(min_side=1 if g.grad else 0), dt)
    return S(np.asarray(a * 1.5, dtype=a.dtype))


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


opinfo("silu", _wide, lambda a: a.astype(np.float64) * _sigmoid(a.astype(np.float64)), same(),
       torch=lambda torch, a: torch.nn.functional.silu(a))
opinfo("hardswish", _wide, lambda a: a * np.clip(a.astype(np.float64) + 3, 0, 6) / 6, same(),
       torch=lambda torch, a: torch.nn.functional.hardswish(a))
opinfo("hardsigmoid", _wide, lambda a: np.clip(a.astype(np.float64) + 3, 0, 6) / 6, same(),
       torch=lambda torch, a: torch.nn.functional.hardsigmoid(a))


def _hardtanh_sample(g, dt):
    a = _wide(g, dt).args[0]
    lo, hi = sorted(g.choice([-2, -1, 0, 1, 2]) for _ in range(2))
    if lo == hi:
        hi = lo + 1
    return S(a, lo, hi) if not g.bool() else S(a)


opinfo("hardtanh", _hardtanh_sample, lambda a, lo=-1, hi=1: np.clip(a, lo, hi), same(),
       dtypes=(F32, F64, INT))
opinfo("l1_loss", lambda g, dt: (lambda shape: S(g.array(shape, dt), g.array(shape, dt),
                                                 g.choice(["none", "mean", "sum"])))(g.shape()),
       lambda a, b, r: _reduce_ref(np.abs(a.astype(np.float64) - b), r), same(),
       torch=_torch_f("l1_loss", ["input", "target", "reduction"]))


def _batch_norm_sample(g, dt):
    n, c = g.integers(1, 3), g.integers(1, 3)
    spatial = tuple(g.integers(1, 2) for _ in range(g.integers(0, 2)))
    training = True if g.grad else g.bool()
    if training and n * int(np.prod(spatial)) == 1:
        n = 2
    x = g.array((n, c) + spatial, dt)
    w = g.array((c,), dt) if g.bool() else None
    b = g.array((c,), dt) if g.bool() else None
    stats = not training or (not g.grad and g.bool())
    rm = g.array((c,), dt) if stats else None
    rv = g.array((c,), dt, "positive") if stats else None
    return S(x, w, b, rm, rv, training, g.choice([0.1, 0.5]), g.choice([1e-5, 0.1]), False)


def _batch_norm_ref(x, w, b, rm, rv, training, momentum, eps, cudnn):
    x = x.astype(np.float64)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        mean, var = x.mean(axis=dims, keepdims=True), x.var(axis=dims, keepdims=True)
    else:
        mean, var = rm.reshape(shape), rv.reshape(shape)
    out = (x - mean) / np.sqrt(var + eps)
    out = out * (1 if w is None else w.reshape(shape))
    return out + (0 if b is None else b.reshape(shape))


opinfo("batch_norm", _batch_norm_sample, _batch_norm_ref, same(), atol32=1e-4, rtol32=1e-3)


def _bn_legit_sample(g, dt):
    x, w, b = _batch_norm_sample(g, dt).args[:3]
    if x.shape[0] * int(np.prod(x.shape[2:])) == 1:  # one value per channel: var 0
        x = np.concatenate([x, x + 1])
    return S(x, w, b, True, g.choice([0.1, 0.5]), g.choice([1e-5, 0.1]))


def _bn_stats(x, eps):
    xd = x.astype(np.float64)
    dims = (0,) + tuple(range(2, x.ndim))
    return xd.mean(axis=dims), 1 / np.sqrt(xd.var(axis=dims) + eps)


def _bn_legit_ref(x, w, b, training, momentum, eps):
    return (_batch_norm_ref(x, w, b, None, None, True, momentum, eps, False), *_bn_stats(x, eps))


opinfo("_native_batch_norm_legit.no_stats", _bn_legit_sample, _bn_legit_ref,
       lambda s: (dtype_of(s.args[0]),) * 3, atol32=1e-4, rtol32=1e-3, second_order=True,
       torch=lambda torch, *a: torch.ops.aten._native_batch_norm_legit.no_stats(*a))


def _bn_backward_sample(g, dt):
    x, w, _, _, _, eps = _bn_legit_sample(g, dt).args
    mean, rstd = (s.astype(dt.np) for s in _bn_stats(x, eps))
    return S(g.array(x.shape, dt), x, w, None, None, mean, rstd, True, eps,
             [g.bool(), g.bool(), g.bool()])


def _bn_backward_ref(gy, x, w, rm, rv, mean, rstd, train, eps, mask):
    xd = x.astype(np.float64)
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    n = x.size // x.shape[1]
    c = xd - mean.reshape(shape)
    r = rstd.reshape(shape)
    g_sum, dot = gy.sum(axis=dims), (gy * c).sum(axis=dims)
    scale = r if w is None else r * w.reshape(shape)
    empty = np.empty((0,))
    return ((gy - c * dot.reshape(shape) * r * r / n - g_sum.reshape(shape) / n) * scale
            if mask[0] else empty,
            dot * rstd if mask[1] and w is not None else empty,
            g_sum if mask[2] else empty)


def _torch_bn_backward(torch, gy, x, w, rm, rv, mean, rstd, train, eps, mask):
    present = [True, w is not None, True]
    w = torch.ones(x.shape[1], dtype=x.dtype) if w is None else w
    outs = torch.ops.aten.native_batch_norm_backward(gy, x, w, rm, rv, mean, rstd, train, eps,
                                                     [True, True, True])
    return tuple(o if m and p else torch.empty((0,), dtype=x.dtype)
                 for o, m, p in zip(outs, mask, present))


# no finite-difference check: the derivative takes save_mean / save_invstd for the functions
# of input they are (as layer norm's); the forward op's second-order check covers it
opinfo("native_batch_norm_backward", _bn_backward_sample, _bn_backward_ref,
       lambda s: (dtype_of(s.args[1]),) * 3, grad=False, atol32=1e-4, rtol32=1e-3,
       torch=_torch_bn_backward)
