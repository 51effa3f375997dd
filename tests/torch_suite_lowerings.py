"""Pooling, padding, triangle, sort and scan programs of PyTorch's ``test_torchinductor.py``
(``CommonTemplate``), written over ``L`` as in ``torch_suite_pointwise.py``.  Inputs of the
big tests are smaller here (the suite runs our numpy kernels and torch's on every program);
``notes`` says so where it matters.
"""

from __future__ import annotations

from .torch_suite import program, randint, randn


def _neg_arange(n):
    import numpy as np

    return lambda rng: -np.arange(n * n, dtype="float32").reshape(1, 1, n, n)


def _aten(L):
    return L.ops.aten


# --------------------------------------------------------------------------- max pooling


@program("test_max_pool2d1", randn(2, 4, 16, 16))
@program("test_max_pool2d1[bw]", randn(2, 4, 16, 16), grad=(0,))
@program("test_max_pool2d2", randn(2, 8, 55, 55), notes="torch: [16, 64, 55, 55]")
def max_pool2d1(L):
    return lambda x: tuple(_aten(L).max_pool2d_with_indices(x, [3, 3], [2, 2]))


@program("test_max_pool2d3", _neg_arange(8))
def max_pool2d3(L):
    a = _aten(L)
    return lambda x: (*a.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]),
                      *a.max_pool2d_with_indices(x, [3], [2], [1]))


@program("test_max_pool2d4", randn(2, 2, 31, 31), notes="torch: [2, 8, 111, 111]")
def max_pool2d4(L):
    return lambda x: tuple(_aten(L).max_pool2d_with_indices(x, [3, 3], [2, 2], [0, 0], [1, 1],
                                                            True))


@program("test_max_pool2d5", randn(2, 8, 55, 55), notes="torch: [16, 64, 55, 55]")
def max_pool2d5(L):
    return lambda x: tuple(_aten(L).max_pool2d_with_indices(x, [3, 3], []))


@program("test_max_pool2d6", randn(2, 4, 55, 55), notes="a 13x13 window: a fallback")
def max_pool2d6(L):
    return lambda x: tuple(_aten(L).max_pool2d_with_indices(x, [13, 13], []))


@program("test_max_pool2d7", randn(1, 1, 6, 7))
def max_pool2d7(L):
    return lambda x: (L.nn.functional.max_pool2d(x, 1, stride=(2, 2), padding=0,
                                                 ceil_mode=True),)


@program("test_max_pool2d8", randn(2, 2, 3, 6))
@program("test_max_pool2d8[bw]", randn(2, 2, 3, 6), grad=(0,))
def max_pool2d8(L):
    return lambda x: tuple(_aten(L).max_pool2d_with_indices(x, [3, 2], [2, 1], [1, 1], [1, 2]))


# --------------------------------------------------------------------------- average pooling


@program("test_avg_pool2d1", randn(2, 4, 16, 16))
@program("test_avg_pool2d1[bw]", randn(2, 4, 16, 16), grad=(0,))
@program("test_avg_pool2d2", randn(2, 8, 55, 55), notes="torch: [16, 64, 55, 55]")
def avg_pool2d1(L):
    return lambda x: (_aten(L).avg_pool2d(x, [3, 3], [2, 2]),)


@program("test_avg_pool2d3", _neg_arange(8))
def avg_pool2d3(L):
    a = _aten(L)
    return lambda x: (a.avg_pool2d(x, [3, 3], [2, 2], [1, 1]), a.avg_pool2d(x, [3], [2], [1]))


@program("test_avg_pool2d4", randn(2, 2, 31, 31), notes="torch: [2, 8, 111, 111]")
def avg_pool2d4(L):
    return lambda x: (_aten(L).avg_pool2d(x, [3, 3], [2, 2], [0, 0], True),)


@program("test_avg_pool2d5", _neg_arange(8))
@program("test_avg_pool2d5[bw]", _neg_arange(8), grad=(0,))
def avg_pool2d5(L):
    return lambda x: (_aten(L).avg_pool2d(x, [3, 3], [2, 2], [1, 1], count_include_pad=False),)


@program("test_avg_pool2d6", _neg_arange(8))
def avg_pool2d6(L):
    return lambda x: (_aten(L).avg_pool2d(x, [3, 3], [2, 2], [1, 1], divisor_override=3),)


@program("test_avg_pool2d7", _neg_arange(24), notes="a 13x13 window: a fallback")
def avg_pool2d7(L):
    return lambda x: (_aten(L).avg_pool2d(x, [13, 13], [1, 1], [0, 0]),)


@program("test_avg_pool2d8", randn(1, 3, 6, 6))
@program("test_avg_pool2d8[bw]", randn(1, 3, 6, 6), grad=(0,))
def avg_pool2d8(L):
    return lambda x: (_aten(L).avg_pool2d(x, kernel_size=3, stride=2, padding=1,
                                          ceil_mode=True),)


@program("test_adaptive_avg_pool2d1", randn(2, 4, 16, 16))
@program("test_adaptive_avg_pool2d1[bw]", randn(2, 4, 16, 16), grad=(0,))
@program("test_adaptive_avg_pool2d1[3x3]", randn(2, 4, 3, 3))
def adaptive_avg_pool2d1(L):
    a = _aten(L)
    return lambda x: (a._adaptive_avg_pool2d(x, (6, 6)), a._adaptive_avg_pool2d(x + 1, (2, 5)))


# --------------------------------------------------------------------------- padding


@program("test_constant_pad_1d", randint(0, 999, 2, 16, 31, dtype="float32"))
def constant_pad_1d(L):
    a = _aten(L)
    return lambda x: (a.constant_pad_nd(x, [0, 1], 6.0), a.constant_pad_nd(x, [2, 3], 99.0))


@program("test_constant_pad_2d", randint(0, 999, 1, 1, 8, 8, dtype="float32"))
@program("test_constant_pad_2d[bw]", randn(1, 1, 8, 8), grad=(0,))
def constant_pad_2d(L):
    a = _aten(L)
    return lambda x: (a.constant_pad_nd(x, [1, 1, 1, 1], 6.0),
                      a.constant_pad_nd(x, [1, 2, 3, 4], 99.0))


@program("test_constant_pad_3d", randint(0, 999, 2, 4, 4, 4, dtype="float32"))
def constant_pad_3d(L):
    a = _aten(L)
    return lambda x: (a.constant_pad_nd(x, [1, 2, 3, 4, 5, 6], 6.0),
                      a.constant_pad_nd(x, [0, 0, 3, 4, 0, 0], 6.0))


# --------------------------------------------------------------------------- tril, arange


@program("test_tril", randn(2, 8, 8), notes="a triangle mask, as transformers build one")
@program("test_tril[bw]", randn(2, 8, 8), grad=(0,))
def tril(L):
    return lambda x: ((x * 2).tril(), x.triu(1) + 1, x.tril(-2).sum(-1))


@program("test_arange5", randn(6, 10), notes="arange over a size, into a comparison")
def arange5(L):
    return lambda x: (x + L.arange(x.size(1)), L.arange(x.size(0)).unsqueeze(1) >
                      L.arange(x.size(1)))


# --------------------------------------------------------------------------- torch's fallbacks


@program("test_sort", randint(0, 999, 1, 1, 8, 8, dtype="float32"))
def sort(L):
    return lambda x: tuple(L.sort(x))


@program("test_topk", randint(0, 999, 1, 1, 8, 8, dtype="float32"))
def topk(L):
    return lambda x: tuple(L.topk(x, 2, -1))


@program("test_cumsum", randn(4, 16))
@program("test_cumsum[bw]", randn(4, 16), grad=(0,))
def cumsum(L):
    return lambda x: (x.cumsum(0), x.cumsum(1) * 2)
