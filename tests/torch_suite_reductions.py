"""Reduction, normalization, matmul and indexing programs of PyTorch's ``test_torchinductor.py``
(``CommonTemplate``), written over ``L`` as in ``torch_suite_pointwise.py``.
"""

from __future__ import annotations

from .torch_suite import array, program, rand, randint, randn

# --------------------------------------------------------------------------- reductions


@program("test_sum1", randn(8, 8), randn(8, 8))
@program("test_sum1[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def sum1(L):
    return lambda a, b: ((a + b).sum(-1),)


@program("test_sum2", randn(8, 9, 3, 21), randn(8, 9, 3, 21))
def sum2(L):
    return lambda a, b: ((a + b).sum([1, 2]), (a + b).sum(-1))


@program("test_sum3", randn(10, 10), randn(1, 10))
def sum3(L):
    def fn(a, b):
        r1 = a + b
        return (r1, r1.sum(-1), L.squeeze(b) + 10)
    return fn


@program("test_sum4", randn(1, 16, 8, 8))
def sum4(L):
    def fn(a):
        b = a + 1
        c = b.sum(-1)
        d = c + 3
        e = d.sum(-1)
        f = e + 5
        return (f, e, d, c, b)
    return fn


@program("test_sum5", randn(1, 17, 8, 9))
def sum5(L):
    def fn(a):
        c = (a + 1).sum(-1)
        return ((c + 3).sum(-1) + 5,)
    return fn


@program("test_sum_keepdims", randn(8, 8), randn(8, 8))
def sum_keepdims(L):
    return lambda a, b: (L.sum(a + b, -1, keepdim=True),)


@program("test_sum_dtype", array([[70.0] * 32] * 32))
def sum_dtype(L):
    return lambda x: (x * x.sum(-1, dtype=L.float64) + x.sum(dtype=L.float64),)


@program("test_reduction1", array([float("-inf"), 0.0, float("inf")]))
def reduction1(L):
    return lambda a: (a.sum(), a.max(), a.min(), a.argmax(), a.argmin())


@program("test_expanded_reduction", randn(2, 197, 256), randn(2, 1, 256))
def expanded_reduction(L):
    return lambda x, y: ((x * y).sum((0, 1)),)


@program("test_min_max_reduction", randn(8, 8), randn(8, 8))
def min_max_reduction(L):
    return lambda a, b: ((a + b).max(), (a + b).min(), L.amax(a + 1, keepdim=True),
                         L.amin(b + 1, keepdim=True))


@program("test_min_max_reduction_nan", array([0.5, float("nan"), -1.0, 2.0]))
def min_max_reduction_nan(L):
    return lambda a: (L.max(a), L.min(a))


@program("test_no_op_reduction", randn(8, 1, 1))
def no_op_reduction(L):
    return lambda a: (a.sum(-1), L.amax(a + 1, 1, keepdim=True))


@program("test_cauchy", randn(32), randn(32))
def cauchy(L):
    return lambda x, y: (L.sum(1 / (L.unsqueeze(x, -1) - y)),)


@program("test_mean", randn(1, 2, 4, 8))
@program("test_mean[bw]", randn(1, 2, 4, 8), grad=(0,))
def mean(L):
    return lambda x: (x.mean(), x.mean(-1), L.mean(x, -2, keepdim=True), x.mean([0, 1]))


@program("test_var_mean", randn(1, 2, 4, 8))
def var_mean(L):
    return lambda x: (*L.var_mean(x, -1), *L.var_mean(x, [1, 3]))


@program("test_var_correction", randn(2, 8))
def var_correction(L):
    return lambda x: (L.var(x, dim=-1, correction=1.3), L.var(x, dim=-1, correction=3),
                      L.var(x, dim=-1, correction=10))


@program("test_std", randn(2, 4, 4, 8))
@program("test_std[bw]", randn(2, 4, 4, 8), grad=(0,))
def std(L):
    return lambda x: (L.var(x, True), L.var(x, False), L.var(x, -1, True), L.var(x, -1, False),
                      L.std(x, False), L.std(x, [0, 1], True), L.std(x, [0, 1], False),
                      L.std(x, -2, True, keepdim=True))


@program("test_logsumexp", randn(8, 8, shift=10))
def logsumexp(L):
    return lambda x: (L.logsumexp(x, -1), L.logsumexp(x, 0) - 2)


@program("test_multilayer_var", rand(14923))
def multilayer_var(L):
    return lambda a: (L.var(a),)


# --------------------------------------------------------------------------- softmax, norms


@program("test_softmax", randn(8, 8), randn(8, 8))
@program("test_softmax[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def softmax(L):
    return lambda a, b: (L.softmax(a + b, -1), L.softmax(a, 0), L.softmax(b, 1))


@program("test_log_softmax", randn(8, 8), randn(8, 8))
@program("test_log_softmax[bw]", randn(8, 8), randn(8, 8), grad=(0, 1))
def log_softmax(L):
    F = L.nn.functional
    return lambda a, b: (F.log_softmax(a + b, -1), F.log_softmax(a, 0), F.log_softmax(b, 1))


@program("test_softmax_one_kernel_loop", randn(16, 32))
def softmax_one_kernel(L):
    def fn(x):
        x_max = L.amax(x, 1, keepdim=True)
        unnormalized = L.exp(x - x_max)
        return (unnormalized / L.sum(unnormalized, 1, keepdim=True),)
    return fn


@program("test_layer_norm", randn(16, 32), randn(32), randn(32))
@program("test_layer_norm[bw]", randn(16, 32), randn(32), randn(32), grad=(0, 1, 2))
def layer_norm(L):
    F = L.nn.functional
    return lambda x, w, b: (F.relu(F.layer_norm(x, (32,), w, b)),)


@program("test_batch_norm_2d[eval]", randn(2, 10, 8, 8), randn(10), rand(10), randn(10),
         randn(10))
def batch_norm_eval(L):
    F = L.nn.functional
    return lambda x, rm, rv, w, b: (F.relu(F.batch_norm(x, rm, rv + 0.5, w, b, False)),)


@program("test_batch_norm_2d[train]", randn(2, 10, 8, 8), randn(10), randn(10))
@program("test_batch_norm_2d[train,bw]", randn(2, 10, 8, 8), randn(10), randn(10),
         grad=(0, 1, 2))
def batch_norm_train(L):
    F = L.nn.functional
    return lambda x, w, b: (F.relu(F.batch_norm(x, None, None, w, b, True)),)


@program("test_l1_loss", randn(2, 3, 16, 16), randn(2, 3, 16, 16))
@program("test_l1_loss[bw]", randn(2, 3, 16, 16), randn(2, 3, 16, 16), grad=(0,))
def l1_loss(L):
    F = L.nn.functional
    return lambda a, b: (F.l1_loss(a, b), F.mse_loss(a, b))


# --------------------------------------------------------------------------- matmul


@program("test_addmm", randn(8, 8), randn(8, 8), randn(8, 8))
@program("test_addmm[bw]", randn(8, 8), randn(8, 8), randn(8, 8), grad=(0, 1, 2))
def addmm(L):
    return lambda a, b, c: (L.addmm(a + 1, b + 2, c + 3) + 4,)


@program("test_linear1", randn(2, 8), randn(16, 8), randn(16))
def linear1(L):
    F = L.nn.functional
    return lambda x, w, b: (L.sigmoid(F.linear(x, w, b)),)


@program("test_linear2[bw]", randn(2, 8), randn(8, 8), randn(8), randn(8, 8), randn(8),
         grad=(0, 1, 2, 3, 4), tol=1e-3)
def linear2(L):
    F = L.nn.functional

    def fn(x, w1, b1, w2, b2):
        return (F.relu(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)),)
    return fn


@program("test_bmm1", randn(2, 8, 8), randn(2, 8, 8))
def bmm1(L):
    return lambda a, b: (L.bmm(a, b), L.bmm(a + 1, b + 2) + 3)


@program("test_bmm2", randn(1, 8, 8), randn(1, 8, 8))
def bmm2(L):
    return lambda a, b: (L.bmm(a.permute(0, 2, 1), b),)


@program("test_aliased_buffer_reuse", randn(4, 2), randn(4, 2))
def aliased_buffer_reuse(L):
    def fn(x, y):
        x = 2 * x
        y = 2 * y
        d = 1 + L.cat([x, y], dim=-1)
        m = L.mm(d, d)
        return (m[:, :2] + x,)
    return fn


# --------------------------------------------------------------------------- indexing


@program("test_gather1", randn(1, 1, 10, 6), randint(0, 5, 4, 5, 10, 1))
def gather1(L):
    return lambda a, b: (L.gather(a.expand([4, 5, 10, 6]), 3, b + 1),
                         L.gather(a.expand([4, 5, 10, 6]), -1, b + 1))


@program("test_index_select", randn(8, 8, 8), array([0, 0, 2, 1], dtype="int64"))
@program("test_index_select[bw]", randn(8, 8, 8), array([0, 0, 2, 1], dtype="int64"),
         grad=(0,))
def index_select(L):
    return lambda a, b: (L.index_select(a, 0, b), L.index_select(a, 1, b),
                         L.index_select(L.index_select(a, 2, b), 1, b))


@program("test_index1", randn(8, 8, 12), array([0, 0, 2, 2], dtype="int64"),
         array([3, 4, 4, 3], dtype="int64"))
def index1(L):
    return lambda a, b, c: (a[b, c],)


@program("test_index2", randn(8, 8, 8), array([[0, 0, 2, 2]], dtype="int64"))
def index2(L):
    return lambda a, b: (a[b], a[:, b])


@program("test_embedding", randn(10, 4), randint(0, 10, 2, 8))
def embedding(L):
    return lambda w, i: (L.relu(L.nn.functional.embedding(i, w)),)
