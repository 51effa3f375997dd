"""Type promotion, reductions and advanced indexing against torch — programs modelled on
pytorch's ``test/test_type_promotion.py`` (scalars and 0-dim tensors of every category,
``result_type``/``can_cast``, integer division and in-place casting rules),
``test/test_reductions.py`` (``dim``/``keepdim``/``dtype``, empty inputs, named-tuple
results, ``std_mean``) and ``test/test_indexing.py`` (gets and sets with gradients, masks,
``masked_scatter``, ``nonzero(as_tuple=True)``, ``tensor_split``), and ``clamp``'s node names

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, each still runs
under mtc (it must not fail in an unexpected way), and the tests at the end check the
functions added for them against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import program_tests, programs_of

pytestmark = pytest.mark.torch


def promo_int_tensor_float_scalar(T):
    return [T.tensor([1, 2]) * 2.5, T.tensor([1, 2]) + True, T.tensor([True, False]) + 1]


def promo_zero_dim_float64_with_float32(T):
    return [
        T.ones(2) + T.tensor(1.0, dtype=T.float64),
        T.ones(2, dtype=T.int32) + T.tensor(1.5, dtype=T.float64),
    ]


def promo_zero_dim_int64_with_int8(T):
    return [
        T.ones(2, dtype=T.int8) + T.tensor(300),
        (T.ones(2, dtype=T.uint8) * T.tensor(-1)).dtype,
    ]


def promo_bool_with_int_zero_dim(T):
    return [(T.tensor([True]) + T.tensor(5)).dtype, (T.tensor([True]) * 2.0).dtype]


def promo_result_type(T):
    return [
        T.result_type(T.tensor([1]), 1.0),
        T.result_type(T.tensor(1.0), T.tensor([1], dtype=T.int32)),
        T.result_type(2, 3.0),
        T.promote_types(T.int32, T.float16),
        T.can_cast(T.float32, T.int32),
    ]


def promo_div_ints(T):
    a = T.tensor([5, -5])
    return [
        a / 2,
        a // 2,
        T.div(a, 2, rounding_mode="trunc"),
        T.div(a, 2, rounding_mode="floor"),
        a % 3,
        T.fmod(a, 3),
        T.remainder(a, -3),
    ]


def promo_comparison_dtype(T):
    return [T.tensor([1, 2]) < 1.5, T.eq(T.tensor([1.0]), T.tensor([1])), T.tensor([1]) == 1.0]


def promo_inplace_int_add_float_error(T):
    a = T.tensor([1, 2])
    a.add_(1.5)
    return [a]


def promo_inplace_float_add_int_ok(T):
    a = T.tensor([1.0, 2.0])
    a.add_(T.tensor([1, 2]))
    a.mul_(T.tensor(2, dtype=T.float64))
    return [a]


def promo_bool_inplace_error(T):
    a = T.tensor([True, False])
    a.add_(1)
    return [a]


def promo_float16_scalar(T):
    a = T.ones(2, dtype=T.float16)
    return [(a * 1e5).dtype, (a + T.tensor(1.0, dtype=T.float64)).dtype]


def promo_where_scalars(T):
    return [
        T.where(T.tensor([True, False]), 1.0, 0).dtype,
        T.where(T.tensor([True, False]), T.tensor([1, 2]), 0.5),
    ]


def promo_pow_int_negative_error(T):
    return [T.tensor([2, 3]) ** -1]


def promo_pow_scalar_base(T):
    return [2 ** T.tensor([1, 2]), 2.0 ** T.tensor([1, 2]), T.tensor([2, 3]) ** 2.0]


def promo_true_divide_bool(T):
    return [T.tensor([True, False]) / 2, T.tensor([True]) & T.tensor([False])]


def promo_bitwise_float_error(T):
    return [T.tensor([1.0]) & T.tensor([1.0])]


def promo_sum_int_dtype(T):
    return [
        T.tensor([1, 2], dtype=T.int8).sum().dtype,
        T.tensor([True, True]).sum(),
        T.tensor([1, 2], dtype=T.int32).prod().dtype,
        T.tensor([1, 2], dtype=T.int32).cumsum(0).dtype,
    ]


def red_sum_dtype_arg(T):
    x = T.arange(6).reshape(2, 3)
    return [
        x.sum(dtype=T.float32),
        x.sum(1, dtype=T.float64),
        x.float().mean(0, keepdim=True),
        x.sum((0, 1), keepdim=True),
    ]


def red_mean_dtype_arg(T):
    x = T.arange(6).reshape(2, 3)
    return [x.mean(dtype=T.float64), T.mean(x.float(), dim=-1, dtype=T.float64)]


def red_max_dim_returns(T):
    x = T.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]])
    v, i = x.max(1)
    r = x.max(dim=0, keepdim=True)
    return [v, i, r.values, r.indices, x.argmax(), x.argmax(1, keepdim=True), x.min(1)[1]]


def red_amax_amin(T):
    x = T.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]], requires_grad=True)
    y = x.amax(1)
    y.sum().backward()
    return [y, x.amin((0, 1)), x.grad]


def red_std_var_unbiased(T):
    x = T.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    return [
        x.std(),
        x.var(1),
        x.std(0, unbiased=False),
        x.var(1, correction=0, keepdim=True),
        T.var_mean(x, 1),
        T.std_mean(x),
    ]


def red_logsumexp_norm(T):
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]])
    return [
        x.logsumexp(1),
        T.logsumexp(x, (0, 1)),
        x.norm(),
        x.norm(dim=1),
        x.norm(p=1, dim=0, keepdim=True),
        T.linalg.vector_norm(x, ord=float("inf")),
    ]


def red_all_any(T):
    x = T.tensor([[0, 1], [2, 3]])
    return [x.all(), x.any(1), x.bool().all(0), T.all(T.tensor([])), T.any(T.tensor([]))]


def red_count_nonzero_median(T):
    x = T.tensor([[0.0, 1.0, 3.0], [2.0, 0.0, 5.0]])
    return [
        T.count_nonzero(x),
        T.count_nonzero(x, dim=1),
        x.median(),
        x.median(1).values,
        x.median(1).indices,
    ]


def red_prod_grad_with_zero(T):
    x = T.tensor([2.0, 0.0, 3.0], requires_grad=True)
    x.prod().backward()
    return [x.grad]


def red_sum_empty_dim(T):
    x = T.ones(0, 3)
    return [x.sum(0), x.sum(1), x.mean(0), x.prod(0)]


def red_min_empty_error(T):
    return [T.ones(0, 3).min(1)]


def red_keepdim_negative_dims(T):
    x = T.arange(24.0).reshape(2, 3, 4)
    return [x.sum(-1, keepdim=True).shape, x.mean((-1, 0)), x.max(-2).values, x.sum([])]


def idx_get_with_grad(T):
    x = T.arange(12.0).reshape(3, 4).requires_grad_()
    y = x[[0, 2, 0]][:, [1, 3]]
    y.sum().backward()
    return [y, x.grad]


def idx_bool_mask_get_set_grad(T):
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    z = x * 1
    z[z > 2] = 0.0
    z.sum().backward()
    return [z, x.grad]


def idx_setitem_tensor_value_grads(T):
    x = T.zeros(3, 3, requires_grad=True)
    v = T.ones(2, 3, requires_grad=True)
    y = x * 1
    y[[0, 2]] = v * 2
    (y * T.arange(9.0).reshape(3, 3)).sum().backward()
    return [y, x.grad, v.grad]


def idx_index_put_accumulate(T):
    x = T.zeros(5)
    i = T.tensor([0, 1, 1, 3])
    return [
        x.index_put((i,), T.tensor(1.0), accumulate=True),
        x.index_put_((i,), T.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True),
    ]


def idx_long_out_of_range_error(T):
    return [T.arange(5)[T.tensor([5])]]


def idx_bool_mask_shape_error(T):
    return [T.arange(6).reshape(2, 3)[T.tensor([True, False, True])]]


def idx_float_index_error(T):
    return [T.arange(5)[T.tensor([1.0])]]


def idx_ellipsis_none_mix(T):
    x = T.arange(24).reshape(2, 3, 4)
    return [x[..., 1], x[None, :, [0, 1]].shape, x[0, ..., None].shape, x[:, None, 1:, ::2]]


def idx_adjacent_vs_separated(T):
    x = T.arange(24).reshape(2, 3, 4)
    i = T.tensor([0, 1])
    return [x[:, i, i].shape, x[i, :, i].shape, x[i, 1:, i].shape, x[1, :, i]]


def idx_setitem_broadcast_slice(T):
    x = T.zeros(3, 4)
    x[1:, ::2] = T.tensor([1.0, 2.0])
    x[0] = 7
    return [x]


def idx_setitem_int_into_float_and_back(T):
    x = T.zeros(2, dtype=T.int64)
    x[0] = 2.7
    y = T.zeros(2)
    y[1] = T.tensor(3)
    return [x, y]


def idx_take_along_dim_gather_grad(T):
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    i = T.tensor([[2, 0], [1, 1]])
    y = T.take_along_dim(x, i, dim=1)
    y.sum().backward()
    return [y, x.grad]


def idx_index_select_negative_dim(T):
    x = T.arange(6.0).reshape(2, 3)
    return [x.index_select(-1, T.tensor([2, 0])), T.index_select(x, 0, T.tensor([1]))]


def idx_masked_select_scatter(T):
    x = T.arange(6.0).reshape(2, 3)
    m = x > 2
    return [x.masked_select(m), x.masked_scatter(m, T.tensor([10.0, 20.0, 30.0]))]


def idx_nonzero_where_single(T):
    x = T.tensor([[0, 1], [2, 0]])
    return [x.nonzero(), T.where(x), T.nonzero(x, as_tuple=True), T.argwhere(x)]


def masked_scatter_grads(T):
    x = T.ones(2, 3, requires_grad=True)
    s = T.arange(1.0, 7.0, requires_grad=True)
    m = T.tensor([[True, False, True], [False, True, False]])
    y = x.masked_scatter(m, s)
    (y * T.arange(6.0).reshape(2, 3)).sum().backward()
    return [y, x.grad, s.grad]


def masked_scatter_broadcast_and_errors(T):
    x = T.zeros(2, 3)
    r = [x.masked_scatter(T.tensor([True, False, True]), T.arange(1.0, 5.0))]
    try:
        x.masked_scatter(T.tensor([1, 0, 1]), T.ones(6))
    except RuntimeError as e:
        r.append(str(e))
    try:
        x.masked_scatter(T.ones(2, 3, dtype=T.bool), T.ones(5))
    except RuntimeError as e:
        r.append(str(e))
    x.masked_scatter_(T.tensor([False, True, False]), T.tensor([9.0, 8.0]))
    return r + [x]


def std_mean_variants(T):
    x = T.arange(6.0).reshape(2, 3)
    return [
        T.std_mean(x),
        T.std_mean(x, 1, keepdim=True, correction=0),
        T.std_mean(x, dim=0, unbiased=False),
    ]


def tensor_split_variants(T):
    x = T.arange(7)
    return [
        T.tensor_split(x, 3),
        x.tensor_split([1, 5]),
        T.tensor_split(T.arange(12).reshape(3, 4), 2, dim=1),
        x.tensor_split([5, 2]),
    ]


def nonzero_as_tuple_zero_dim(T):
    return [
        T.nonzero(T.tensor(3), as_tuple=True),
        T.tensor(0).nonzero(),
        T.where(T.tensor([0.0, 2.0, 3.0]) > 1),
    ]


def can_cast_table(T):
    ds = [T.bool, T.uint8, T.int8, T.int32, T.int64, T.float16, T.float32, T.float64]
    return [[T.can_cast(a, b) for b in ds] for a in ds]


def clamp_tensor_bounds(T):
    x = T.arange(6.0).reshape(2, 3).requires_grad_()
    y = T.clamp(x, min=T.tensor([1.0, 2.0, 3.0]), max=T.tensor(4.0))
    y.sum().backward()
    return [y, x.grad, type(y.grad_fn).__name__]


def clamp_method_names(T):
    x = T.arange(6.0).requires_grad_()
    return [
        type(o.grad_fn).__name__
        for o in (
            x.clamp(1),
            x.clamp(max=2),
            x.clamp_min(1),
            x.clamp_max(2),
            x.clamp(1, 3),
            T.clip(x, 1, 2),
            x.clamp(T.tensor(1.0)),
        )
    ]


def clamp_min_tensor_method(T):
    x = T.arange(6.0)
    return [
        x.clamp_min(T.tensor([2.0] * 6)),
        x.clamp(T.tensor(1.0), T.tensor(3.0)),
        T.clamp(T.arange(3), min=0.5),
    ]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_masked_scatter_fills_the_masked_places_in_order_and_routes_gradients():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    mask = rng.random((3, 4)) > 0.5
    src = rng.standard_normal(12)
    want = x.copy()
    want[mask] = src[: mask.sum()]
    xt = mtc.tensor(x, requires_grad=True)
    st = mtc.tensor(src, requires_grad=True)
    out = xt.masked_scatter(mtc.tensor(mask), st)
    np.testing.assert_array_equal(out.detach().numpy(), want)
    out.sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), (~mask).astype(float))
    np.testing.assert_array_equal(st.grad.numpy(), np.arange(12) < mask.sum())


def test_nonzero_tensor_split_std_mean_and_can_cast_follow_numpy():
    a = np.array([[0, 3, 0], [4, 0, 5]])
    for got, want in zip(mtc.nonzero(mtc.tensor(a), as_tuple=True), np.nonzero(a)):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(mtc.arange(10).tensor_split(4), np.array_split(np.arange(10), 4)):
        np.testing.assert_array_equal(got.numpy(), want)
    for got, want in zip(mtc.arange(10).tensor_split([2, 7]), np.split(np.arange(10), [2, 7])):
        np.testing.assert_array_equal(got.numpy(), want)
    x = np.arange(12.0).reshape(3, 4) ** 1.5
    std, mean = mtc.std_mean(mtc.tensor(x), 1)
    np.testing.assert_allclose(std.numpy(), x.std(1, ddof=1))
    np.testing.assert_allclose(mean.numpy(), x.mean(1))
    assert mtc.can_cast(mtc.int64, mtc.float16) and not mtc.can_cast(mtc.float16, mtc.int64)
    assert mtc.can_cast(mtc.bool, mtc.uint8) and not mtc.can_cast(mtc.uint8, mtc.bool)


def test_clamp_and_max_record_torchs_node_names():
    x = mtc.arange(6.0).requires_grad_()
    names = [type(o.grad_fn).__name__ for o in
             (x.clamp(1), x.clamp_min(1), x.clamp_max(2), x.clamp(mtc.tensor(1.0)), x.max())]
    assert names == ["ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0",
                     "ClampBackward0", "MaxBackward1"]
