"""OpInfos of the nn layer ops: convolution (and its backward, conv1d/2d, transposed),
pooling (max, avg, adaptive avg, with their backward ops), constant_pad_nd and pad.

The numpy references are written independently of the kernels in ``ops/conv.py`` and
``ops/pooling.py``: convolution sums ``einsum`` products over the kernel offsets (no im2col),
pooling walks the output positions or the kernel offsets directly (small samples), in float64.
Registered into ``opinfo.OPINFOS`` like ``opinfo_more``.
"""

from __future__ import annotations

import itertools

import numpy as np

import minitorch_compile as mtc

from .opinfo import S, dtype_of, opinfo, same

INT64 = np.int64

# ---------------------------------------------------------------- convolution


def _conv_sample_parts(g, nd, transposed=False):
    groups = g.choice([1, 2])
    cin, cout = groups * g.integers(1, 2), groups * g.integers(1, 2)
    k = [g.integers(1, 3) for _ in range(nd)]
    s = [g.integers(1, 2) for _ in range(nd)]
    d = [g.integers(1, 2) for _ in range(nd)]
    p = [g.integers(0, 1) for _ in range(nd)]
    if transposed:
        op = [g.integers(0, max(si, di) - 1) for si, di in zip(s, d)]
        # output (n - 1) s - 2 p + d (k - 1) + op + 1 >= 1
        size = [max(1, -(-(2 * pi - di * (ki - 1) - oi) // si) + 1) + g.integers(0, 1)
                for ki, si, pi, di, oi in zip(k, s, p, d, op)]
    else:
        op = [0] * nd
        size = [max(1, di * (ki - 1) + 1 - 2 * pi) + g.integers(0, 2)
                for ki, pi, di in zip(k, p, d)]
    n = g.integers(1, 2)
    return groups, cin, cout, k, s, d, p, op, size, n


def _convolution_sample(g, dt):
    nd, transposed = g.choice([1, 2]), g.bool()
    groups, cin, cout, k, s, d, p, op, size, n = _conv_sample_parts(g, nd, transposed)
    x = g.array((n, cin, *size), dt)
    w = g.array((cin, cout // groups, *k) if transposed else (cout, cin // groups, *k), dt)
    b = g.array((cout,), dt) if g.bool() else None
    return S(x, w, b, s, p, d, transposed, op, groups)


def _conv_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    dt = x.dtype
    x, w = x.astype(np.float64), w.astype(np.float64)
    nd = x.ndim - 2
    kernel = w.shape[2:]
    if not transposed:
        xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in padding])
        out = [(xp.shape[2 + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
               for i in range(nd)]
        og, cg = w.shape[0] // groups, w.shape[1]
        y = np.zeros((x.shape[0], w.shape[0], *out))
        for j in itertools.product(*map(range, kernel)):
            sl = tuple(slice(j[i] * dilation[i], j[i] * dilation[i] + stride[i] * (out[i] - 1)
                             + 1, stride[i]) for i in range(nd))
            patch = xp[(slice(None), slice(None)) + sl]
            for gi in range(groups):
                y[:, gi * og:(gi + 1) * og] += np.einsum(
                    "oc,nc...->no...", w[(slice(gi * og, (gi + 1) * og), slice(None), *j)],
                    patch[:, gi * cg:(gi + 1) * cg])
    else:
        size = x.shape[2:]
        out = [(size[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1)
               + output_padding[i] + 1 for i in range(nd)]
        og, cg = w.shape[1], x.shape[1] // groups
        yp = np.zeros((x.shape[0], og * groups, *[o + 2 * q for o, q in zip(out, padding)]))
        for j in itertools.product(*map(range, kernel)):
            sl = tuple(slice(j[i] * dilation[i], j[i] * dilation[i] + stride[i] * (size[i] - 1)
                             + 1, stride[i]) for i in range(nd))
            for gi in range(groups):
                yp[(slice(None), slice(gi * og, (gi + 1) * og)) + sl] += np.einsum(
                    "nc...,co->no...", x[:, gi * cg:(gi + 1) * cg],
                    w[(slice(gi * cg, (gi + 1) * cg), slice(None), *j)])
        y = yp[(slice(None), slice(None), *(slice(q, q + o) for q, o in zip(padding, out)))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd)
    return y.astype(dt)


def _weight_grad_ref(x, gy, kernel, stride, padding, dilation, groups):
    """d<gy, conv(x, w)>/dw, offset by offset."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in padding])
    out = gy.shape[2:]
    og, cg = gy.shape[1] // groups, x.shape[1] // groups
    gw = np.zeros((gy.shape[1], cg, *kernel))
    for j in itertools.product(*map(range, kernel)):
        sl = tuple(slice(j[i] * dilation[i], j[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                         stride[i]) for i in range(nd))
        patch = xp[(slice(None), slice(None)) + sl]
        for gi in range(groups):
            a = gy[:, gi * og:(gi + 1) * og].reshape(gy.shape[0], og, -1)
            b = patch[:, gi * cg:(gi + 1) * cg].reshape(x.shape[0], cg, -1)
            gw[(slice(gi * og, (gi + 1) * og), slice(None), *j)] = np.einsum("nop,ncp->oc", a, b)
    return gw


def _convolution_backward_sample(g, dt):
    x, w, b, s, p, d, transposed, op, groups = _convolution_sample(g, dt).args
    y = _conv_ref(x, w, None, s, p, d, transposed, op, groups)
    gy = g.array(y.shape, dt)
    return S(gy, x, w, [w.shape[1] * groups if transposed else w.shape[0]], s, p, d,
             transposed, op, groups, [True, True, True])


def _convolution_backward_ref(gy, x, w, bias_sizes, s, p, d, transposed, op, groups, mask):
    dt = x.dtype
    gy64, x64, w64 = (a.astype(np.float64) for a in (gy, x, w))
    k = w.shape[2:]
    if transposed:
        gx = _conv_ref(gy64, w64, None, s, p, d, False, op, groups)
        gx = gx[(slice(None), slice(None), *(slice(0, n) for n in x.shape[2:]))]
        gw = _weight_grad_ref(gy64, x64, k, s, p, d, groups)
    else:
        ops = [n - ((o - 1) * si - 2 * pi + di * (ki - 1) + 1)
               for n, o, si, pi, di, ki in zip(x.shape[2:], gy.shape[2:], s, p, d, k)]
        gx = _conv_ref(gy64, w64, None, s, p, d, True, ops, groups)
        gw = _weight_grad_ref(x64, gy64, k, s, p, d, groups)
    gb = gy64.sum(axis=(0, *range(2, gy.ndim)))
    return gx.astype(dt), gw.astype(dt), gb.astype(dt)


opinfo("convolution", _convolution_sample, _conv_ref, same(), atol32=1e-4, rtol32=1e-4,
       second_order=True)
opinfo("convolution_backward", _convolution_backward_sample, _convolution_backward_ref,
       lambda s: (dtype_of(s.args[0]),) * 3, atol32=1e-4, rtol32=1e-4)


def _convnd_sample(nd, string_padding=False, transposed=False):
    def sample(g, dt):
        groups, cin, cout, k, s, d, p, op, size, n = _conv_sample_parts(
            g, nd, transposed or string_padding)
        batched = g.bool()
        shape = ((n,) if batched else ()) + (cin, *size)
        if string_padding:
            s = [1] * nd
            size = [max(z, di * (ki - 1) + 1) for z, di, ki in zip(size, d, k)]
            shape = shape[:-nd] + tuple(size)
        x = g.array(shape, dt)
        w = g.array((cin, cout // groups, *k) if transposed else (cout, cin // groups, *k), dt)
        b = g.array((cout,), dt) if g.bool() else None
        if transposed:
            return S(x, w, b, s, p, op, groups, d)
        return S(x, w, b, s, g.choice(["same", "valid"]) if string_padding else p, d, groups)
    return sample


def _convnd_ref(transposed=False):
    def ref(x, w, b, stride, padding, *rest):
        nd = w.ndim - 2
        batched = x.ndim == nd + 2
        xb = x if batched else x[None]
        if transposed:
            op, groups, dilation = rest
            y = _conv_ref(xb, w, b, stride, padding, dilation, True, op, groups)
        else:
            dilation, groups = rest
            if isinstance(padding, str):  # 'same': total d (k - 1), the odd one on the right
                tot = [d * (k - 1) for d, k in zip(dilation, w.shape[2:])] \
                    if padding == "same" else [0] * nd
                xb = np.pad(xb, [(0, 0), (0, 0)] + [(t // 2, t - t // 2) for t in tot])
                padding = [0] * nd
            y = _conv_ref(xb, w, b, stride, padding, dilation, False, [0] * nd, groups)
        return y if batched else y[0]
    return ref


for _nd in (1, 2):
    opinfo(f"conv{_nd}d", _convnd_sample(_nd), _convnd_ref(), same(), atol32=1e-4,
           rtol32=1e-4)
    opinfo(f"conv{_nd}d.padding", _convnd_sample(_nd, string_padding=True), _convnd_ref(),
           same(), atol32=1e-4, rtol32=1e-4)
    opinfo(f"conv_transpose{_nd}d" + (".input" if _nd == 2 else ""),
           _convnd_sample(_nd, transposed=True), _convnd_ref(transposed=True), same(),
           atol32=1e-4, rtol32=1e-4)

# ---------------------------------------------------------------- padding


def _constant_pad_sample(g, dt):
    x = g.array(g.shape(min_dims=1), dt)
    k = g.integers(1, min(x.ndim, 3))
    pad = []
    for i in range(k):
        n = x.shape[x.ndim - 1 - i]
        pad += [g.integers(-(n // 2), 2), g.integers(-(n // 2), 2)]
    return S(x, pad, g.choice([0, 1.5]))


def _constant_pad_ref(x, pad, value=0):
    out = x
    for i in range(len(pad) // 2):
        d, lo, hi = x.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = out.shape[d]
        out = np.take(out, np.arange(max(-lo, 0), n - max(-hi, 0)), axis=d)
        width = [(0, 0)] * x.ndim
        width[d] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, width, constant_values=np.asarray(value).astype(x.dtype))
    return out


opinfo("constant_pad_nd", _constant_pad_sample, _constant_pad_ref, same())

_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_sample(g, dt):
    mode = g.choice(["constant", "reflect", "replicate", "circular"])
    k = g.integers(1, 2)
    x = g.array(g.shape(min_dims=k + 1, max_dims=k + 2, min_side=2), dt)
    pad = []
    for i in range(k):
        n = x.shape[x.ndim - 1 - i]
        hi = n - 1 if mode in ("reflect", "circular") else 2
        pad += [g.integers(0, hi), g.integers(0, hi)]
    return S(x, pad, mode)


def _pad_ref(x, pad, mode="constant", value=None):
    width = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        width[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        return np.pad(x, width, constant_values=0 if value is None else value)
    return np.pad(x, width, mode=_NP_MODES[mode])


opinfo("pad", _pad_sample, _pad_ref, same())

# ---------------------------------------------------------------- pooling


def _pool_parts(g, dilation=True):
    k = [g.integers(1, 3) for _ in range(2)]
    s = [g.integers(1, 2) for _ in range(2)]
    d = [g.integers(1, 2) if dilation else 1 for _ in range(2)]
    # (no padding with dilation: a window all padding has torch's out-of-range index)
    p = [0 if di > 1 else g.integers(0, ki // 2) for ki, di in zip(k, d)]
    size = [max(1, di * (ki - 1) + 1 - 2 * pi) + g.integers(0, 2)
            for ki, pi, di in zip(k, p, d)]
    shape = ((g.integers(1, 2),) if g.bool() else ()) + (g.integers(1, 2), *size)
    return k, s, p, d, shape


def _out(n, k, s, p, d, ceil):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    return o - 1 if ceil and (o - 1) * s >= n + p else o


def _max_pool_sample(g, dt):
    k, s, p, d, shape = _pool_parts(g)
    return S(g.array(shape, dt), k, s, p, d, g.bool())


def _max_pool_ref(x, k, s, p, d, ceil_mode):
    h, w = x.shape[-2:]
    out = [_out(n, *a, ceil_mode) for n, a in zip((h, w), zip(k, s, p, d))]
    best = np.full(x.shape[:-2] + tuple(out), -np.inf)
    where = np.zeros(best.shape, dtype=INT64)
    for a, b in itertools.product(reversed(range(k[0])), reversed(range(k[1]))):
        r = np.arange(out[0]) * s[0] - p[0] + a * d[0]  # torch starts at the first in-bounds
        c = np.arange(out[1]) * s[1] - p[1] + b * d[1]  # position (row, then column)
        where = np.where((r >= 0)[:, None] & (c >= 0)[None, :], r[:, None] * w + c[None, :],
                         where)
    for a, b in itertools.product(range(k[0]), range(k[1])):
        r = np.arange(out[0]) * s[0] - p[0] + a * d[0]
        c = np.arange(out[1]) * s[1] - p[1] + b * d[1]
        inside = ((r >= 0) & (r < h))[:, None] & ((c >= 0) & (c < w))[None, :]
        v = np.where(inside, x[..., np.clip(r, 0, h - 1)[:, None], np.clip(c, 0, w - 1)], -np.inf)
        better = (v > best) | (np.isnan(v) & ~np.isnan(best))
        best = np.where(better, v, best)
        where = np.where(better, r[:, None] * w + c[None, :], where)
    return best.astype(x.dtype), where


opinfo("max_pool2d_with_indices", _max_pool_sample, _max_pool_ref,
       lambda s: (dtype_of(s.args[0]), mtc.int64))
opinfo("max_pool2d", _max_pool_sample, lambda *a: _max_pool_ref(*a)[0], same())


def _max_pool_backward_sample(g, dt):
    x, k, s, p, d, ceil = _max_pool_sample(g, dt).args
    _, idx = _max_pool_ref(x, k, s, p, d, ceil)
    return S(g.array(idx.shape, dt), x, k, s, p, d, ceil, idx)


def _max_pool_backward_ref(gy, x, k, s, p, d, ceil, idx):
    out = np.zeros(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))
    flat_out = out.reshape(-1, out.shape[-1])
    np.add.at(flat_out, (np.arange(flat_out.shape[0])[:, None],
                         idx.reshape(flat_out.shape[0], -1)),
              gy.reshape(flat_out.shape[0], -1))
    return out.reshape(x.shape).astype(gy.dtype)


opinfo("max_pool2d_with_indices_backward", _max_pool_backward_sample, _max_pool_backward_ref,
       same())


def _pool1d_sample(avg):
    def sample(g, dt):
        k, s, d = g.integers(1, 3), g.integers(1, 2), 1 if avg else g.integers(1, 2)
        p = 0 if d > 1 else g.integers(0, k // 2)
        n = max(1, d * (k - 1) + 1 - 2 * p) + g.integers(0, 2)
        shape = ((g.integers(1, 2),) if g.bool() else ()) + (g.integers(1, 2), n)
        if avg:
            return S(g.array(shape, dt), [k], [s], [p], g.bool(), g.bool())
        return S(g.array(shape, dt), [k], [s], [p], [d], g.bool())
    return sample


def _max_pool1d_ref(x, k, s, p, d, ceil):
    v, i = _max_pool_ref(x[..., None, :], [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]], ceil)
    return v[..., 0, :], i[..., 0, :]


opinfo("max_pool1d_with_indices", _pool1d_sample(False), _max_pool1d_ref,
       lambda s: (dtype_of(s.args[0]), mtc.int64))
opinfo("max_pool1d", _pool1d_sample(False), lambda *a: _max_pool1d_ref(*a)[0], same())


def _avg_pool_sample(g, dt):
    k, s, p, _, shape = _pool_parts(g, dilation=False)
    return S(g.array(shape, dt), k, s, p, g.bool(), g.bool(), g.choice([None, None, 3]))


def _avg_windows(n, o, k, s, p):
    """Per output position: (clipped start, clipped end, pool_size) — torch's loop bounds."""
    res = []
    for i in range(o):
        start = i * s - p
        end = min(start + k, n + p)
        res.append((max(start, 0), min(end, n), end - start))
    return res


def _avg_pool_ref(x, k, s, p, ceil_mode=False, count_include_pad=True, divisor_override=None,
                  grad=None):
    """Forward (``grad is None``) or backward (spread ``grad`` over each window)."""
    h, w = x.shape[-2:]
    out = [_out(n, *a, 1, ceil_mode) for n, a in zip((h, w), zip(k, s, p))]
    rows, cols = (_avg_windows(n, o, *a) for n, o, a in zip((h, w), out, zip(k, s, p)))
    y = np.zeros(x.shape[:-2] + tuple(out))
    gx = np.zeros(x.shape)
    for (i, (r0, r1, rn)), (j, (c0, c1, cn)) in itertools.product(enumerate(rows),
                                                                  enumerate(cols)):
        div = divisor_override or (rn * cn if count_include_pad else (r1 - r0) * (c1 - c0))
        if grad is None:
            y[..., i, j] = x[..., r0:r1, c0:c1].astype(np.float64).sum(axis=(-2, -1)) / div
        else:
            gx[..., r0:r1, c0:c1] += grad[..., i, j][..., None, None] / div
    return (y if grad is None else gx).astype(x.dtype)


opinfo("avg_pool2d", _avg_pool_sample, _avg_pool_ref, same())


def _avg_pool_backward_sample(g, dt):
    x, *rest = _avg_pool_sample(g, dt).args
    y = _avg_pool_ref(x, *rest)
    return S(g.array(y.shape, dt), x, *rest)


opinfo("avg_pool2d_backward", _avg_pool_backward_sample,
       lambda gy, x, *rest: _avg_pool_ref(x, *rest, grad=gy), same())
opinfo("avg_pool1d", _pool1d_sample(True),
       lambda x, k, s, p, ceil, cip: _avg_pool_ref(x[..., None, :], [1, k[0]], [1, s[0]],
                                                   [0, p[0]], ceil, cip)[..., 0, :], same())


def _adaptive_sample(g, dt):
    shape = ((g.integers(1, 2),) if g.bool() else ()) + tuple(g.integers(1, 4) for _ in range(3))
    return S(g.array(shape, dt), [g.integers(1, 4), g.integers(1, 4)])


def _adaptive_ref(x, size, grad=None):
    h, w = x.shape[-2:]
    y = np.zeros(x.shape[:-2] + tuple(size))
    gx = np.zeros(x.shape)
    for i, j in itertools.product(range(size[0]), range(size[1])):
        r0, r1 = i * h // size[0], -(-(i + 1) * h // size[0])
        c0, c1 = j * w // size[1], -(-(j + 1) * w // size[1])
        if grad is None:
            y[..., i, j] = x[..., r0:r1, c0:c1].astype(np.float64).mean(axis=(-2, -1))
        else:
            gx[..., r0:r1, c0:c1] += grad[..., i, j][..., None, None] / ((r1 - r0) * (c1 - c0))
    return (y if grad is None else gx).astype(x.dtype)


opinfo("_adaptive_avg_pool2d", _adaptive_sample, _adaptive_ref, same())
opinfo("adaptive_avg_pool2d", _adaptive_sample, _adaptive_ref, same())


def _adaptive_backward_sample(g, dt):
    x, size = _adaptive_sample(g, dt).args
    return S(g.array(x.shape[:-2] + tuple(size), dt), x)


opinfo("_adaptive_avg_pool2d_backward", _adaptive_backward_sample,
       lambda gy, x: _adaptive_ref(x, gy.shape[-2:], grad=gy), same())
