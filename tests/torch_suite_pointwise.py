"""Pointwise, view and dtype programs of PyTorch's ``test_torchinductor.py`` (``CommonTemplate``).

Each program is the test's ``fn`` written over ``L`` (``minitorch_compile`` or ``torch``); the
name cites the test; ``[bw]`` marks a backward variant added here (the torch test checks the
forward only).  Sizes are the test's, or smaller where only the count of kernels matters.
"""

from __future__ import annotations

from .torch_suite import array, boolean, program, rand, randint, randn, scalar

# --------------------------------------------------------------------------- arithmetic


@program("test_add_const_int[int64]", randint(0, 32, 32))
@program("test_add_const_int[float32]", randn(32))
def add_const_int(L):
    return lambda a: (a + 1, L.add(a, 1, alpha=2))


@program("test_add_const_float", randn(32))
def add_const_float(L):
    return lambda a: (a + 1.5,)


@program("test_abs", randn(17))
def abs_(L):
    return lambda a: (a / (L.abs(a) + 1),)


@program("test_max_min", randn(8), randn(8))
@program("test_max_min[nan]", array([float("nan"), 1, -2, 3, 0.5, -1, 2, 4]),
         array([1, float("nan"), -1, 2, 0.5, -3, 2, 5]))
def max_min(L):
    return lambda a, b: (L.maximum(a, b), L.minimum(a, b))


@program("test_compar", array([3], dtype="int64"))
def compar(L):
    return lambda x: (x.gt(3.5), x.ge(3.5), x.eq(3.5), x.le(2.5), x.lt(3.5), x.ne(3.5))


@program("test_horizonal_fusion1", randn(8, 16, 16), randn(8, 16, 16), randn(1, 16, 1))
def horizontal_fusion1(L):
    return lambda a, b, c: (a + b, a - c, b * c)


@program("test_horizonal_fusion2", randn(8, 16, 8), randn(8, 16), randn(16, 8))
def horizontal_fusion2(L):
    return lambda a, b, c: (a + 1, b + 2, c + 3)


@program("test_vertical_fusion1", randn(24, 24, 26), randn(24, 24, 26), randn(26))
def vertical_fusion1(L):
    def fn(sa, ct, p):  # torchbench's pyhpc_equation_of_state; torch asserts one kernel
        v17, v18 = -3.087032500374211e-7, -1.988366587925593e-8
        v19, v20 = -1.061519070296458e-11, 1.550932729220080e-10
        t15 = v19 * ct
        t19 = v17 + ct * (v18 + t15) + v20 * sa
        t20 = 1.0 / t19
        t128 = t19 * p
        return (t20 + t128,)
    return fn


@program("test_relu", randn(8, 8), randn(8, 8))
def relu(L):
    return lambda a, b: (L.relu(a), L.relu(a + b) / 10)


@program("test_exp", randn(8, 8), randn(8, 8))
def exp(L):
    return lambda a, b: (L.exp(a), L.exp(a + b))


@program("test_sigmoid", randn(8, 8), randn(8, 8))
@program("test_sigmoid[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def sigmoid(L):
    return lambda a, b: (L.sigmoid(a), L.sigmoid(a + b))


@program("test_silu", randn(8, 8))
def silu(L):
    return lambda a: (L.nn.functional.silu(a),)


@program("test_div1", randn(8, 8, scale=100), randn(8, 8, scale=100))
@program("test_div2", randint(-100, 100, 8, 8), randn(8, 8, scale=100))
@program("test_div4", randint(-100, 0, 8, 8), randint(1, 10, 8, 8))
def div(L):
    def fn(a, b):
        return (L.div(a, b, rounding_mode=None), L.div(a, b, rounding_mode="floor"),
                L.div(a, b, rounding_mode="trunc"), a / b, a // b)
    return fn


@program("test_div_by_zero", randn(10), array([0.0] * 10), array([-0.0] * 10))
def div_by_zero(L):
    def fn(x, runtime_zero, runtime_neg_zero):
        zero = L.zeros_like(x)
        return (x / 0.0, x / -0.0, zero / 0.0, x / zero, x / -zero, zero / zero,
                x / runtime_zero, x / runtime_neg_zero, runtime_zero / runtime_neg_zero)
    return fn


@program("test_clamp", randn(8, 8), randn(8, 8))
@program("test_clamp[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def clamp(L):
    return lambda a, b: (a.clamp(-0.1, 0.1), b.clamp(0), L.clamp(a + b, max=0))


@program("test_gelu", randn(16, 16))
@program("test_gelu[bw]", randn(16, 16), grad=(0,))
def gelu(L):
    F = L.nn.functional
    return lambda x: (F.gelu(x) + 2, F.gelu(x + 1))


@program("test_clone", randn(16, 16))
def clone(L):
    return lambda x: (L.clone(x) + 2, L.clone(x + 1))


@program("test_masked_fill", boolean(1, 16), randn(16, 16))
def masked_fill(L):
    return lambda mask, value: (value.masked_fill(mask, -10000.0) + 2,
                                (value / 2.0).masked_fill(L.logical_not(mask), 667))


@program("test_pow1", randn(16, 16))
def pow1(L):
    return lambda x: tuple(L.pow(x, e) for e in range(-8, 9))


@program("test_hardtanh", randn(64))
def hardtanh(L):
    F = L.nn.functional
    return lambda x: (F.hardtanh(x), F.hardtanh(x + 1), F.hardtanh(x - 1))


@program("test_hardsigmoid", randn(64))
def hardsigmoid(L):
    F = L.nn.functional
    return lambda x: (F.hardsigmoid(x), F.hardsigmoid(x + 3), F.hardsigmoid(x - 3))


@program("test_hardswish", randn(64))
def hardswish(L):
    F = L.nn.functional
    return lambda x: (F.hardswish(x), F.hardswish(x + 3), F.hardswish(x - 3))


@program("test_rsqrt", rand(64))
def rsqrt(L):
    return lambda x: (L.rsqrt(x), L.rsqrt(x + 1) - 2)


@program("test_expm1", randn(64))
def expm1(L):
    return lambda x: (L.expm1(x), L.expm1(x) * 2)


@program("test_log1p", rand(64))
def log1p(L):
    return lambda x: (L.log1p(x), L.log1p(x) * 2)


@program("test_log2", randn(64, shift=10))
def log2(L):
    return lambda x: (L.log2(x), L.log2(x + 1) - 2)


@program("test_signbit", randn(1, 2, 6, 6))
def signbit(L):
    return lambda x: (L.signbit(x), ~L.signbit(-x) & 1)


@program("test_fmod", randn(1, 2, 6, 6), randn(1, 2, 6, 6))
def fmod(L):
    return lambda a, b: (L.fmod(a, b), L.fmod(3.0 * a, b) - 2.0)


@program("test_remainder", randn(64), randn(64))
def remainder(L):
    return lambda a, b: (L.remainder(a, b), L.remainder(a + 1, b - 1),
                         L.remainder(a - 1, b + 1))


@program("test_bitwise", randint(0, 2**30, 64, dtype="int32"),
         randint(0, 2**30, 64, dtype="int32"))
@program("test_bitwise2", boolean(2, 20), boolean(2, 20))
def bitwise(L):
    return lambda x, y: (L.bitwise_not(x), L.bitwise_or(x, y), L.bitwise_xor(x, y),
                         L.bitwise_and(x, y))


@program("test_inf", randn(8))
def inf(L):
    return lambda a: (a + float("inf"), a + float("-inf"), a * -float("inf"))


@program("test_sum_int[bool]", boolean(64))
@program("test_sum_int[uint8]", randint(0, 2, 64, dtype="uint8"))
@program("test_sum_int[int32]", randint(0, 2, 64, dtype="int32"))
def sum_int(L):
    return lambda x: (2 * x.sum(-1) + x.sum(),)


@program("test_to_dtype", randn(2, 2, 10), randn(2, 2, 10, dtype="float64"))
def to_dtype(L):
    return lambda a, b: (a.to(L.float64), (b + 1).to(L.float64), b.to(L.float64),
                         b.to(L.bool))


@program("test_zeros", randn(8))
def zeros(L):
    return lambda a: (a + 1, L.zeros(1, 8, 64, 64), L.zeros(2, 3), a + L.ones(8),
                      L.full((2, 3), 3.1416))


@program("test_full_like", randn(8))
def full_like(L):
    return lambda a: (L.full_like(a, 7.777) - 1,)


@program("test_arange1", randn(8, 8))
def arange1(L):
    def fn(x):
        rng1 = L.arange(8 * 8, dtype=L.float32).view(8, 8)
        rng2 = L.arange(10, 18)
        tmp = x * rng1
        return tmp, tmp + rng2
    return fn


@program("test_arange2", randint(0, 4, 8, 8))
def arange2(L):
    return lambda x: (x + L.arange(8),)


@program("test_linspace1", randn(1, 7))
def linspace1(L):
    return lambda x: (L.linspace(0.125, 0.875, 7) + x,)


# --------------------------------------------------------------------------- views


@program("test_views1[35->5x7]", randn(35), randn(5, 7))
@program("test_views1[50x20->10x5x20]", randn(50, 20), randn(10, 5, 20))
@program("test_views1[10x1x10x1x10->10x100]", randn(10, 1, 10, 1, 10), randn(10, 100))
@program("test_views1[5x7->35]", randn(5, 7), randn(35))
@program("test_views1[10x5x20->50x20]", randn(10, 5, 20), randn(50, 20))
@program("test_views1[2x3x4x5x6x7->6x4x5x42]", randn(2, 3, 4, 5, 6, 7), randn(6, 4, 5, 42))
def views1(L):
    return lambda x, y: (x.view(y.shape) + y, (x + 1).view(y.shape) + y)


@program("test_views2", randn(2, 2, 2, 2))
def views2(L):
    return lambda x: (x.view(4, -1) + 1, (x * 2).view(4, -1) + 1)


@program("test_transpose", randn(8, 8), randn(8, 8))
@program("test_transpose[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def transpose(L):
    return lambda a, b: (L.t(a) + b, L.transpose(b * 2, 0, 1) + 10)


@program("test_transpose_add", randn(16, 32), randn(32, 16))
def transpose_add(L):
    return lambda a, b: (a.t() + b,)


@program("test_permute1", randn(2, 2, 2, 2, 2))
def permute1(L):
    return lambda a: (L.permute(a + 1, [2, 1, 4, 0, 3]) + 2, L.permute(a, [2, 1, 4, 0, 3]) + 2)


@program("test_expand", randn(2, 1, 2))
@program("test_expand[bw]", randn(2, 1, 2), grad=(0,))
def expand(L):
    return lambda a: ((a + 1).expand(3, 4, 2, 3, 2) + 2, a.expand(2, 1, 2, 3, 2) + 2)


@program("test_squeeze1", randn(1, 2, 1, 2, 2, 1, 1))
def squeeze1(L):
    return lambda a: ((a + 1).squeeze() + 2, a.squeeze() + 2)


@program("test_squeeze2", randn(1, 2, 1, 2, 2, 2, 1))
def squeeze2(L):
    return lambda a: ((a + 1).squeeze(-1).squeeze(2) + 2, a.squeeze(0) + 2)


@program("test_simplify_loops", randn(2, 3, 4, 5, 6), randn(4, 2, 3, 5, 6))
def simplify_loops(L):
    return lambda a, b: (a + b.permute(1, 2, 0, 3, 4),)


@program("test_unsqueeze", randn(2, 2, 2, 2))
def unsqueeze(L):
    return lambda a: (L.unsqueeze(a + 1, -1) + 2, L.unsqueeze(a, 2) + 2,
                      L.unsqueeze(a + 1, 0) + 2, L.unsqueeze(a, -2) + 2)


@program("test_slice1", randn(2, 20, 2))
def slice1(L):
    return lambda a: (a[:, :10, 0] + a[:, 10:, 0], (a + 1)[:, :10, 0] + (a + 1)[:, 10:, 0],
                      a[:, -30:, 0], a[:, :-30, 0])


@program("test_slice2", randn(2, 20, 2))
def slice2(L):
    return lambda a: (a[:-1, ::2, -1] + a[-1:, 1::2, -2],
                      (a + 1)[:-1, ::2, -1] + (a + 2)[-1:, 1::2, -2])


@program("test_split", randn(2, 2, 10))
def split(L):
    def fn(a):
        t = L.split(a + 1, 3, -1)
        return (t[0], t[1], t[2], t[3])
    return fn


@program("test_split_with_list", randn(2, 2, 10))
def split_with_list(L):
    return lambda a: tuple(t + 1.0 for t in L.split(a * 2.0, [3, 3, 4], -1))


@program("test_unbind", randn(4, 4, 4))
def unbind(L):
    return lambda a: (*L.unbind(a), *L.unbind(a, -1))


@program("test_flip", randn(1, 2, 6, 6))
def flip(L):
    return lambda x: (L.flip(x, (-1,)), L.flip(x, (0, 2)) - 2)


@program("test_repeat", randn(1, 2, 4, 8))
def repeat(L):
    return lambda x: (x.repeat(0, 1, 1, 1), x.repeat(2, 2, 3, 1), x.repeat(8, 1, 1, 1),
                      x.repeat(2, 1, 1, 1, 1, 1))


@program("test_cat", randn(8, 16))
@program("test_cat[bw]", randn(8, 16), grad=(0,))
def cat(L):
    def fn(a):
        tmp = a * 2
        return (L.cat((a, a[:, :4] + 1, a + 2), -1), L.cat((tmp, tmp), 0),
                L.cat((tmp, tmp.double()), 0))
    return fn


@program("test_stack", randn(1, 16), randn(12, 1))
def stack(L):
    return lambda a, b: (L.stack([a.expand(12, 16), b.expand(12, 16)], 2),)


@program("test_concat_add_inplace", randn(2, 12, 14, 14), randn(2, 12, 14, 14),
         randn(2, 24, 14, 14))
def concat_add_inplace(L):
    return lambda x, y, z: (L.cat([x, y], dim=1).add_(z),)


@program("test_inplace_add", randn(4, 4), randn(4, 4))
def inplace_add(L):
    return lambda x, y: (x.add_(y),)


@program("test_masked_fill[where]", boolean(1, 16), randn(16, 16), scalar(0.5))
def where(L):
    return lambda mask, value, s: (L.where(mask, value, s) * 2, L.where(~mask, value.exp(), value))
