"""Sliding windows over the spatial dims: the one trick behind convolution and pooling kernels.

A convolution or a pooling layer looks at one *window* of its input per output position.  For
an input ``x`` of shape ``(N, C, *spatial)`` (already padded), kernel sizes ``k``, strides ``s``
and dilations ``d``, the windows are a read-only strided **view** — no copy::

    win[n, c, o_1..o_D, j_1..j_D] = x[n, c, o_1 s_1 + j_1 d_1, ..., o_D s_D + j_D d_D]

(``np.lib.stride_tricks.as_strided``: the output dims step ``s_i`` elements, the window dims
``d_i`` elements).  A pooling layer reduces the window dims (``max``, ``sum``); a convolution
copies the view once into a matrix of windows ("im2col") and multiplies it by the weights.

The **adjoint** of taking windows is :func:`scatter_windows`: every window element adds back
into the position it was read from.  Windows overlap, so a plain fancy-index assignment would
lose updates; instead the loop runs over the *kernel offsets* ``j`` (9 iterations for a 3x3
kernel), each one a strided ``+=`` over all ``N, C`` and output positions at once.  That is the
backward of every layer here (and a transposed convolution's forward).  No per-element Python.

Mirrors the roles of ``aten/src/ATen/native/im2col.h`` and ``col2im``.
"""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided


def out_sizes(padded: tuple, kernel, stride, dilation) -> list[int]:
    """Output positions per spatial dim: ``(P - d (k - 1) - 1) // s + 1``."""
    return [(p - d * (k - 1) - 1) // s + 1 for p, k, s, d in zip(padded, kernel, stride, dilation)]


def windows(xp: np.ndarray, kernel, stride, dilation, out) -> np.ndarray:
    """The read-only view ``(N, C, *out, *kernel)`` of the padded input ``xp``."""
    st = xp.strides
    spatial = st[2:]
    shape = (*xp.shape[:2], *out, *kernel)
    strides = (*st[:2], *(a * s for a, s in zip(spatial, stride)),
               *(a * d for a, d in zip(spatial, dilation)))
    return as_strided(xp, shape, strides, writeable=False)


def scatter_windows(win: np.ndarray, padded: tuple, stride, dilation) -> np.ndarray:
    """The adjoint of :func:`windows`: add each window element ``(N, C, *out, *kernel)`` back
    into a zero array of the padded input's shape ``(N, C, *padded)``."""
    nd = len(padded)
    out, kernel = win.shape[2:2 + nd], win.shape[2 + nd:]
    res = np.zeros(win.shape[:2] + tuple(padded), dtype=win.dtype)
    for j in itertools.product(*(range(k) for k in kernel)):  # one strided add per offset
        where = tuple(slice(ji * d, ji * d + s * (o - 1) + 1, s)
                      for ji, d, s, o in zip(j, dilation, stride, out))
        res[(slice(None), slice(None), *where)] += win[(Ellipsis, *j)]
    return res


def pad_spatial(x: np.ndarray, lo, hi, value=0) -> np.ndarray:
    """Pad the spatial dims (2:) by ``lo``/``hi`` elements with ``value``."""
    if not any(lo) and not any(hi):
        return x
    return np.pad(x, [(0, 0), (0, 0)] + list(zip(lo, hi)), constant_values=value)


def crop_spatial(x: np.ndarray, lo, size) -> np.ndarray:
    """``x[:, :, lo_i : lo_i + size_i, ...]``."""
    return x[(slice(None), slice(None), *(slice(a, a + n) for a, n in zip(lo, size)))]
