"""Indexing, mutation and dtype-corner programs of PyTorch's ``test_torchinductor.py``
(``CommonTemplate``), written over ``L`` as in ``torch_suite_pointwise.py``.
"""

from __future__ import annotations

from .torch_suite import array, boolean, program, rand, randint, randn, scalar

# --------------------------------------------------------------------------- dtypes, scalars


@program("test_div3", randint(1, 100, 8, 8, dtype="int64"), randint(1, 100, 8, 8))
@program("test_div5", randint(-100, 0, 8, 8), scalar(16))
@program("test_div6", boolean(8, 8), randint(-100, -1, 8, 8))
@program("test_div_zero_dim", randn(10), array(0.75))
@program("test_div_zero_dim[int64]", array(7, dtype="int64"), randint(1, 9, 10))
def div(L):
    def fn(a, b):
        return (L.div(a, b, rounding_mode=None), L.div(a, b, rounding_mode="floor"),
                L.div(a, b, rounding_mode="trunc"), a / b, a // b)
    return fn


@program("test_div9", randn(8))
def div9(L):
    return lambda x: (L.div(42, x), L.div(42, x, rounding_mode="floor"))


@program("test_scalar_input", randint(0, 5, 1, 8), scalar(5400))
def scalar_input(L):
    return lambda x, y: (L.div(x, y, rounding_mode="floor"),)


@program("test_float_index_expression_type_promotion", array(list(range(10)), dtype="int64"))
def float_index_promotion(L):
    return lambda x: (x + 1.0 / x.size(0),)


@program("test_arange3", randn(14))
def arange3(L):
    return lambda x: (x + L.arange(0, 53, 4, dtype=L.int64),)


@program("test_arange4", randn(1024))
def arange4(L):
    return lambda x: (x - L.arange(512, -512, -1.0),)


@program("test_tensor2", randn(1))
def tensor2(L):
    return lambda x: (L.tensor(list(range(2, 40, 2))) + x,)


@program("test_long_tensor", randint(0, 999, 8, 8))
def long_tensor(L):
    return lambda a: (L.tensor([294]) - a, L.tensor([295]) + a)


@program("test_full_truncation[int64]", randint(-9, 9, 8))
@program("test_full_truncation[int32]", randint(-9, 9, 8, dtype="int32"))
@program("test_full_truncation[float64]", randn(8, dtype="float64"))
def full_truncation(L):
    return lambda a: (a + L.full_like(a, 7.777),)


@program("test_new_ones", randn(8))
def new_ones(L):
    return lambda a: (a.new_ones([]), a.new_zeros([]), a.new_ones(3) + a[:3])


@program("test_pow2", randn(16, 16))
def pow2(L):
    return lambda x: (L.pow(1000, x), L.pow(x, 1000))


@program("test_pow_int[int64]", randint(-3, 4, 16, 16), randint(0, 4, 16, 16))
@program("test_pow_int[int32]", randint(-3, 4, 16, 16, dtype="int32"),
         randint(0, 4, 16, 16, dtype="int32"))
def pow_int(L):
    return lambda x, y: (L.pow(x, 0x57), L.pow(x, y))


@program("test_sign_dtype", randn(1, 2, 6, 6))
def sign_dtype(L):
    return lambda x: (L.tanh(L.sign(x)),)


@program("test_log_fp64", randn(1024, dtype="float64", shift=10))
def log_fp64(L):
    return lambda x: (L.log(x), L.log2(x))


@program("test_bitwise3", randint(0, 100, 5, 10, 1, dtype="int32"),
         randint(0, 100, 10, 1, dtype="int32"), notes="int32 for torch's int8 (no int8 here)")
def bitwise3(L):
    return lambda x, y: (L.max(L.bitwise_and(x, y), y), L.clamp_max(L.bitwise_or(x, y), y),
                         L.clamp_min(L.bitwise_xor(x, y), y))


@program("test_isinf", array([1, float("inf"), 2, float("-inf"), float("nan")]))
@program("test_isinf[float64]", array([1, float("inf"), 2, float("-inf"), float("nan")],
                                      dtype="float64"))
def isinf(L):
    return lambda x: (x.isinf(), x.isnan())


@program("test_any", array([[1.0, 2.0, float("inf")], [0.0, -1.0, 3.0]] * 4))
def any_(L):
    return lambda x: (x.any(-1), x.isinf().any(), L.all(x.isinf(), dim=0),
                      L.all(L.logical_not(x.isinf())))


@program("test_unroll_small_reduction", randn(8, 3))
def unroll_small_reduction(L):
    def fn(x):
        val1, index1 = x.min(-1)
        val2, index2 = x.max(-1)
        return (val1, index1, val2, index2, x.sum(-1), (x > 1).any(-1), (x > 0).all(-1),
                x.argmin(-1), x.argmax(-1), x.amin(-1), x.amax(-1))
    return fn


@program("test_argmax_argmin1", randn(8, 32, 32))
def argmax_argmin1(L):
    return lambda x: (L.argmax(x), L.argmin(x))


@program("test_argmax_argmin2", randn(144, 144))
def argmax_argmin2(L):
    return lambda x: (L.argmax(x, 0), L.argmin(x, 0), L.argmax(x, 1), L.argmin(x, 1))


# --------------------------------------------------------------------------- views and copies


@program("test_view_detach", randn(4, 4))
def view_detach(L):
    return lambda a: (a[0].detach(),)


@program("test_narrow", randn(64, 64))
def narrow(L):
    return lambda x: (L.narrow(x, 1, 10, 16), L.narrow(x + 2, 0, 10, 16) + 1)


@program("test_expand_as", randn(6, 1, 100), randn(6, 128, 100))
def expand_as(L):
    return lambda a, b: (a.expand_as(b), (a + 1).expand_as(b + 1) + 1)


@program("test_mm_views", randn(32 * 32), randn(32 * 32))
def mm_views(L):
    return lambda a, b: (L.mm(a.view(32, 32), b.view(32, 32)),)


@program("test_cat_negative_dim", randn(2, 3), randn(2, 4))
def cat_negative_dim(L):
    return lambda a, b: (L.cat((a, b), dim=-1),)


@program("test_cat_uint8", randint(0, 256, 3, 255, dtype="uint8"))
def cat_uint8(L):
    return lambda x: (L.cat([x.new_zeros(1).expand(x.shape[:1] + (1,)), x], dim=-1),)


@program("test_select_scatter", randn(8, 19, 38), randn(8, 38), randn(19, 38))
def select_scatter(L):
    return lambda x, a, b: (L.select_scatter(x, a, 1, 0), L.select_scatter(x, b, 0, 1))


@program("test_slice_scatter", randn(4, 8, 100), randn(4, 8, 80))
def slice_scatter(L):
    return lambda x, a: (L.slice_scatter(x, a, 2, 10, -10),
                         L.slice_scatter(x, a[:, :, :40], 2, 10, -10, 2))


# --------------------------------------------------------------------------- indexing


@program("test_index3", randn(3, 4, 4, 4, 3), array([0, 2, 1], dtype="int64"),
         array([0, 2, 1], dtype="int64"))
def index3(L):
    return lambda x, ia, ib: (x[:, ia, None, ib, 0],)


@program("test_indirect_load_broadcast", randn(32, 1), randn(95, 512), randint(0, 95, 32, 21))
def indirect_load_broadcast(L):
    return lambda in0, in1, in2: (L.gather(in1, 0, in2) + in0,)


@program("test_index_put1", randn(64, 4, 2), randint(0, 60, 10), randn(10, 4, 2))
def index_put1(L):
    return lambda a, b, c: (L.index_put(a, [b], c), (a + 1).index_put_([b + 1], c + 1) + 1)


@program("test_index_put3", randn(64, 4, 2), array([0, 1, 2], dtype="int64"), randn(64, 1, 2))
def index_put3(L):
    def fn(a, b, c):
        a = a.clone()
        a[:, b] = c
        a1 = a + 1
        a1[:, b + 1] = c + 1
        return (a, a1)
    return fn


@program("test_index_put_as_masked_fill", randn(64, 4, 2), randn(64, 4, 2), array(0.5),
         scalar(False))
@program("test_index_put_as_masked_fill[accumulate]", randn(64, 4, 2), randn(64, 4, 2),
         array(0.5), scalar(True))
def index_put_as_masked_fill(L):
    def fn(a, b, c, d):
        a = a.clone()
        L.ops.aten.index_put_(a, [b > 0], c, d)
        return (a,)
    return fn


@program("test_remove_noop_clone", randn(2, 4))
def remove_noop_clone(L):
    def fn(x):
        y = x.clone().reshape(-1, 4)
        y[:, [2, 0]] = y[:, [0, 2]]
        return (y + x,)
    return fn


# --------------------------------------------------------------------------- mutation


@program("test_remove_noop_copy", randn(8, 8), randn(8))
def remove_noop_copy(L):
    def fn(x, y):
        x = x.cos()
        a = x.copy_(y)
        return (a.sin(),)
    return fn


@program("test_cat_inplace", rand(2))
def cat_inplace(L):
    def fn(x):
        rt = L.cat([x])
        x.sin_()
        return (rt,)
    return fn


@program("test_inplace_mixed_dtype_ops", randn(4, 4), randn(4, 4, dtype="float64"))
def inplace_mixed_dtype_ops(L):
    def fn(x, y):
        z = x + y.float()
        w = z.add_(y)
        return (w.mul_(y),)
    return fn


@program("test_input_mutation1", randn(64))
def input_mutation1(L):
    def fn(a):
        b = a + 1
        a.copy_(b)
        c = a + 2
        return (a * b / c,)
    return fn


@program("test_input_mutation3", randn(1, 64))
def input_mutation3(L):
    def fn(a):
        a += 1
        a *= 2
        a.sigmoid_()
        a = a.view(64)
        a += 3
        a *= 4
        a.relu_()
        return (a,)
    return fn


@program("test_slice_mutation1", randn(8, 8))
def slice_mutation1(L):
    def fn(a):
        x = L.zeros_like(a)
        b = x + 1
        x[:, 3] = 3.0
        c = L.clone(x)
        x[4, :] = 4.0
        d = x + 1
        return (x, b, c, d)
    return fn


@program("test_inplace_activations", randn(64, scale=10))
def inplace_activations(L):
    F = L.nn.functional

    def fn(x):
        a = F.hardswish(x + 1, inplace=True)
        b = F.hardtanh(x + 1, inplace=True)
        d = F.silu(x + 1, inplace=True)
        e = L.log1p(x + 1)
        f = (x + 1).masked_fill_(L.zeros_like(x, dtype=L.bool), 99.0)
        h = (x + 1).masked_fill_(L.ones_like(x, dtype=L.bool), 99.0)
        return (a, b, d, e, f, h)
    return fn
