"""OpInfos of the further nn composites: the activations of ``ops/activations_more.py``, the
losses, ``cosine_similarity``, ``one_hot``, ``group_norm``/``rms_norm`` and
``scaled_dot_product_attention``.  Plain numpy references (``logaddexp`` for the softplus
family, so the formulas differ from the ops' ``where``/``clamp`` forms).  Registered into
``opinfo.OPINFOS`` like ``opinfo_more``.
"""

from __future__ import annotations

import warnings

import numpy as np

import minitorch_compile as mtc

from .opinfo import INT, S, _reduce_ref, _torch_f, opinfo, same, unary_sample

_REDUCTIONS = ["none", "mean", "sum"]

# ---------------------------------------------------------------- activations


def _elu_ref(x, alpha=1, scale=1, input_scale=1):
    return np.where(x > 0, x * scale, alpha * scale * np.expm1(x * input_scale)).astype(x.dtype)


def _f(fn):
    """A float reference computed in float64, returned in the input's dtype."""
    return lambda x, *a, **k: np.asarray(fn(x.astype(np.float64), *a, **k)).astype(x.dtype)


opinfo("leaky_relu", unary_sample(negative_slope=[0.01, 0.2]),
       _f(lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope)), same())
opinfo("elu", lambda g, dt: S(g.array(g.shape(), dt), g.choice([1.0, 0.5]),
                              g.choice([1.0, 2.0]), g.choice([1.0, 0.5])), _elu_ref, same())
opinfo("selu", unary_sample(), lambda x: _elu_ref(x, 1.6732632423543772848170429916717,
                                                  1.0507009873554804934193349852946), same())
opinfo("celu", unary_sample(alpha=[1.0, 2.0]),
       lambda x, alpha=1.0: _elu_ref(x, alpha, 1, 1 / alpha), same())
opinfo("softplus", lambda g, dt: S(g.array(g.shape(), dt), g.choice([1, 2]), g.choice([20, 1])),
       _f(lambda x, beta=1, threshold=20: np.where(x * beta > threshold, x,
                                                   np.logaddexp(0, x * beta) / beta)), same())
opinfo("mish", unary_sample(), _f(lambda x: x * np.tanh(np.logaddexp(0, x))), same())
opinfo("log_sigmoid", unary_sample(), _f(lambda x: -np.logaddexp(0, -x)), same())


def _glu_sample(g, dt):
    shape = list(g.shape(min_dims=1))
    d = g.integers(0, len(shape) - 1)
    shape[d] *= 2
    return S(g.array(shape, dt), d - len(shape) if g.bool() else d)


def _glu_ref(x, dim=-1):
    a, b = np.split(x.astype(np.float64), 2, axis=dim)
    return (a / (1 + np.exp(-b))).astype(x.dtype)


opinfo("glu", _glu_sample, _glu_ref, same())


def _prelu_sample(g, dt):
    x = g.array(g.shape(min_dims=1), dt)
    c = x.shape[1] if x.ndim >= 2 else 1
    return S(x, g.array((g.choice([1, c]),), dt))


def _prelu_ref(x, w):
    wb = w.reshape(()) if w.size == 1 else w.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, wb * x).astype(x.dtype)


opinfo("prelu", _prelu_sample, _prelu_ref, same())
opinfo("threshold", lambda g, dt: S(g.array(g.shape(), dt), g.choice([0.1, -1.0]),
                                    g.choice([0.0, 20.0])),
       lambda x, th, v: np.where(x > th, x, v).astype(x.dtype), same())
opinfo("hardshrink", unary_sample(lambd=[0.5, 1.1]),
       lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0).astype(x.dtype), same())
opinfo("softshrink", unary_sample(lambd=[0.5, 1.1]),
       lambda x, lambd=0.5: (np.sign(x) * np.maximum(np.abs(x) - lambd, 0)).astype(x.dtype),
       same())

# ---------------------------------------------------------------- losses


def _probabilities(g, shape, dt):
    return np.asarray(1 / (1 + np.exp(-g.array(shape, dt).astype(np.float64))), dtype=dt.np)


def _bce_sample(g, dt):
    shape = g.shape()
    w = None if g.grad or g.bool() else g.array(shape, dt, "positive")
    return S(_probabilities(g, shape, dt), _probabilities(g, shape, dt), w,
             g.choice(_REDUCTIONS))


def _bce_ref(x, t, w=None, reduction="mean"):
    x64 = x.astype(np.float64)
    loss = -(t * np.maximum(np.log(x64), -100) + (1 - t) * np.maximum(np.log(1 - x64), -100))
    return np.asarray(_reduce_ref(loss * (1 if w is None else w), reduction)).astype(x.dtype)


opinfo("binary_cross_entropy", _bce_sample, _bce_ref, same(), atol32=1e-4,
       torch=_torch_f("binary_cross_entropy", ["input", "target", "weight", "reduction"]))
opinfo("_check_bce_input", lambda g, dt: S(_probabilities(g, g.shape(), dt)),
       lambda x: np.zeros((), np.bool_), lambda s: mtc.bool, grad=False, torch_values=False,
       torch=lambda torch, x: torch.zeros((), dtype=torch.bool))


def _bce_logits_sample(g, dt):
    shape = g.shape()
    x, t = g.array(shape, dt), _probabilities(g, shape, dt)
    w = None if g.grad or g.bool() else g.array(shape, dt, "positive")
    pw = g.array(shape[-1:], dt, "positive") if g.bool() and not g.grad else None  # torch: no grad
    return S(x, t, w, pw, g.choice(_REDUCTIONS))


def _bce_logits_ref(x, t, w=None, pw=None, reduction="mean"):
    x64 = x.astype(np.float64)
    log_weight = 1 if pw is None else (pw - 1) * t + 1
    loss = (1 - t) * x64 + log_weight * np.logaddexp(0, -x64)
    return np.asarray(_reduce_ref(loss * (1 if w is None else w), reduction)).astype(x.dtype)


opinfo("binary_cross_entropy_with_logits", _bce_logits_sample, _bce_logits_ref, same(),
       atol32=1e-4, torch=_torch_f("binary_cross_entropy_with_logits",
                                   ["input", "target", "weight", "pos_weight", "reduction"]))


def _pair_sample(param, values):
    def sample(g, dt):
        shape = g.shape()
        return S(g.array(shape, dt), g.array(shape, dt), g.choice(_REDUCTIONS),
                 g.choice(values))
    return sample


def _smooth_l1_ref(x, t, reduction="mean", beta=1.0):
    d = np.abs(x.astype(np.float64) - t)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return np.asarray(_reduce_ref(loss, reduction)).astype(x.dtype)


def _huber_ref(x, t, reduction="mean", delta=1.0):
    d = np.abs(x.astype(np.float64) - t)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return np.asarray(_reduce_ref(loss, reduction)).astype(x.dtype)


opinfo("smooth_l1_loss", _pair_sample("beta", [1.0, 0.5, 0.0]), _smooth_l1_ref, same(),
       torch=_torch_f("smooth_l1_loss", ["input", "target", "reduction", "beta"]))
opinfo("huber_loss", _pair_sample("delta", [1.0, 0.5, 2.0]), _huber_ref, same(),
       torch=_torch_f("huber_loss", ["input", "target", "reduction", "delta"]))


def _kl_sample(g, dt):
    shape = g.shape()
    log_target = g.bool()
    t = g.array(shape, dt) if log_target else g.array(shape, dt, "positive")
    return S(g.array(shape, dt), t, g.choice(_REDUCTIONS), log_target=log_target)


def _kl_ref(x, t, reduction="mean", log_target=False):
    x64, t64 = x.astype(np.float64), t.astype(np.float64)
    if log_target:
        loss = np.exp(t64) * (t64 - x64)
    else:
        loss = np.where(t64 > 0, t64 * np.log(np.where(t64 > 0, t64, 1)), 0) - t64 * x64
    return np.asarray(_reduce_ref(loss, reduction)).astype(x.dtype)


def _torch_kl_div(torch, x, t, r, log_target=False):
    with warnings.catch_warnings():  # torch's note on 'mean' (ours warns in F.kl_div only)
        warnings.simplefilter("ignore")
        return torch.nn.functional.kl_div(x, t, reduction=r, log_target=log_target)


opinfo("kl_div", _kl_sample, _kl_ref, same(), torch=_torch_kl_div)

# ---------------------------------------------------------------- similarity, one_hot


def _cos_sample(g, dt):
    s1, s2 = g.bshapes(2, min_dims=1)
    x1, x2 = g.array(s1, dt), g.array(s2, dt)
    nd = len(np.broadcast_shapes(s1, s2))
    return S(x1, x2, g.integers(-nd, nd - 1), g.choice([1e-8, 0.5]))


def _cos_ref(x1, x2, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(x1.astype(np.float64), x2.astype(np.float64))
    na = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    nb = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return ((a / na) * (b / nb)).sum(dim).astype(x1.dtype)


opinfo("cosine_similarity", _cos_sample, _cos_ref, same(), atol32=1e-5)


def _one_hot_sample(g, dt):
    n = g.integers(1, 4)
    idx = np.asarray(g.rng.integers(0, n, g.shape()) if g.smooth else
                     np.arange(int(np.prod(g.shape())), dtype=np.int64) % n, dtype=np.int64)
    return S(idx, n if g.bool() or idx.size == 0 else -1)


opinfo("one_hot", _one_hot_sample,
       lambda a, n=-1: np.eye(int(a.max()) + 1 if n == -1 else n, dtype=np.int64)[a],
       lambda s: INT, dtypes=(INT,), grad=False, dynamic_shape=lambda s: s.args[1] == -1)

# ---------------------------------------------------------------- normalization, attention


def _group_norm_sample(g, dt):
    groups = g.integers(1, 2)
    c = groups * g.integers(1, 2)
    shape = (g.integers(1, 2), c) + tuple(g.integers(1, 3) for _ in range(g.integers(0, 2)))
    if g.grad and int(np.prod(shape[2:])) * (c // groups) == 1:
        shape = shape[:2] + (2,)  # one value per group: the variance has no gradient
    w = g.array((c,), dt) if g.bool() else None
    b = g.array((c,), dt) if g.bool() else None
    return S(g.array(shape, dt), groups, w, b, g.choice([1e-5, 0.1]))


def _group_norm_ref(x, groups, w=None, b=None, eps=1e-5, cudnn=True):
    x64 = x.astype(np.float64).reshape(x.shape[0], groups, -1)
    y = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + eps)
    y = y.reshape(x.shape)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = y * (1 if w is None else w.reshape(shape)) + (0 if b is None else b.reshape(shape))
    return y.astype(x.dtype)


opinfo("group_norm", _group_norm_sample, _group_norm_ref, same(), atol32=1e-4, rtol32=1e-3)


def _rms_norm_sample(g, dt):
    x = g.array(g.shape(min_dims=1), dt)
    norm = list(x.shape[x.ndim - g.integers(1, x.ndim):])
    return S(x, norm, g.array(norm, dt) if g.bool() else None, g.choice([None, 1e-5, 0.1]))


def _rms_norm_ref(x, norm, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    x64 = x.astype(np.float64)
    axes = tuple(range(x.ndim - len(norm), x.ndim))
    y = x64 / np.sqrt((x64 * x64).mean(axes, keepdims=True) + eps)
    return (y * (1 if w is None else w)).astype(x.dtype)


opinfo("rms_norm", _rms_norm_sample, _rms_norm_ref, same(), atol32=1e-4, rtol32=1e-3)


def _sdpa_sample(g, dt):
    b, h, lq, lk, e = (g.integers(1, 2), g.integers(1, 2), g.integers(1, 3), g.integers(1, 3),
                       g.integers(1, 3))
    q, k, v = (g.array((b, h, n, e), dt) for n in (lq, lk, lk))
    kind = g.choice(["none", "bool", "float", "causal"])
    mask = None
    if kind == "bool":
        mask = g.array((lq, lk), mtc.bool)
    elif kind == "float":
        mask = g.array((lq, lk), dt)
    return S(q, k, v, mask, 0.0, kind == "causal", scale=g.choice([None, 0.5]))


def _sdpa_ref(q, k, v, mask=None, dropout_p=0.0, is_causal=False, scale=None):
    q64, k64, v64 = (a.astype(np.float64) for a in (q, k, v))
    s = q64 @ np.swapaxes(k64, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    allowed = np.ones(s.shape[-2:], bool)
    if is_causal:
        allowed = np.tril(allowed)
    if mask is not None and mask.dtype == bool:
        allowed = allowed & mask
    elif mask is not None:
        s = s + mask
    s = np.where(allowed, s, -np.inf)
    m = np.max(np.where(allowed, s, -1e300), -1, keepdims=True)
    e = np.where(allowed, np.exp(s - m), 0)
    total = e.sum(-1, keepdims=True)
    attn = np.where(total > 0, e / np.where(total > 0, total, 1), 0)
    return (attn @ v64).astype(q.dtype)


opinfo("scaled_dot_product_attention", _sdpa_sample, _sdpa_ref, same(), atol32=1e-5)
