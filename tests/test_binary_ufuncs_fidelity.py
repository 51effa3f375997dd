"""Eager ops against torch: programs modelled on pytorch's ``test/test_binary_ufuncs.py``,
``test/test_type_promotion.py``, ``test/test_torch.py`` and the gradient checks of
``test/test_autograd.py`` for indexing, scatter and gather.

Each program names the torch test it is modelled on; its outcome (``tests/fidelity.py``) —
the same values, dtypes and gradients, or the same exception type and message start — must be
torch's.
"""

from __future__ import annotations

import pytest

from .fidelity import run_program

pytestmark = pytest.mark.torch  # comparisons with torch; without it each program runs under mtc

# ------------------------------------------------------------- type promotion with scalars


def int_tensor_with_python_scalars(T):  # test_type_promotion.py: test_int_promotion / scalars
    i = T.tensor([1, -2, 3])
    return [i + 1, i + 1.5, i * True, i / 2, i // 2, i ** 2, i - 2.5, 2 ** i.abs()]


def bool_tensor_with_python_scalars(T):  # test_type_promotion.py: test_bool / test_booleans
    b = T.tensor([True, False, True])
    return [b + 1, b * 2.5, b & True, b | False, b + b, b * b, ~b]


def float_tensor_with_python_scalars(T):  # test_type_promotion.py: test_float_promotion
    f = T.tensor([1.5, -2.0], dtype=T.float32)
    h = T.tensor([1.5, -2.0], dtype=T.float16)
    return [f + 1, f * 2.5, f + True, h + 1.5, h * 3, (f > 1) + 1]


def zero_dim_tensors_promote_as_scalars(T):  # test_type_promotion.py: test_zero_dim_wrapped
    i = T.tensor([1, 2, 3], dtype=T.int32)
    f = T.tensor([1.0, 2.0], dtype=T.float32)
    return [i + T.tensor(5), i + T.tensor(5.0), f + T.tensor(2.0, dtype=T.float64),
            T.tensor(2, dtype=T.int64) + T.tensor(3, dtype=T.uint8), i * T.tensor(True)]


def mixed_tensor_dtypes(T):  # test_type_promotion.py: test_mixed_type_backward / result_type
    b = T.tensor([True, False])
    u8 = T.tensor([200, 100], dtype=T.uint8)
    i32 = T.tensor([7, -7], dtype=T.int32)
    f16 = T.tensor([0.5, 1.5], dtype=T.float16)
    f32 = T.tensor([0.5, 1.5])
    f64 = T.tensor([0.25, 2.0], dtype=T.float64)
    return [b + u8, u8 + i32, i32 * f32, f32 + f64, f16 + i32, u8 * f16, T.result_type(b, u8),
            T.result_type(f32, 2.0), T.promote_types(T.int32, T.float16)]


def small_integer_dtypes(T):  # test_type_promotion.py: test_int8_int16 / test_uint8_int8
    i8 = T.tensor([100, -100, 7], dtype=T.int8)
    i16 = T.tensor([1000, -3, 2], dtype=T.int16)
    u8 = T.tensor([200, 1, 255], dtype=T.uint8)
    return [i8 + u8, i8 * i16, i8 + 300, i8 + 2.5, u8 - i8, i16 // 3, i8.short(), i16.char(),
            T.result_type(i8, u8), T.promote_types(T.int8, T.uint8), (i8 * i8).dtype,
            i8.sum().dtype, i8.abs()]


def int8_index_error(T):  # test_indexing.py: test_index_dtype (int8 indices are refused)
    T.arange(4)[T.tensor([0, 1], dtype=T.int8)]
    return []


def inplace_promotion_errors(T):  # test_type_promotion.py: test_inplace (result can't be cast)
    i = T.tensor([1, 2, 3])
    i.add_(1.5)
    return [i]


def inplace_float_into_int_with_int_ok(T):  # test_type_promotion.py: test_inplace
    i = T.tensor([1, 2, 3])
    f = T.tensor([1.0, 2.0, 3.0])
    i.mul_(2)
    f.add_(T.tensor([1, 1, 1]))
    f *= 2
    return [i, f]


def true_divide_of_ints(T):  # test_binary_ufuncs.py: test_div_rounding_modes
    a = T.tensor([7, -7, 7, -7, 0])
    b = T.tensor([2, 2, -2, -2, 3])
    return [a / b, T.div(a, b, rounding_mode="floor"), T.div(a, b, rounding_mode="trunc"),
            a // b, a % b, T.fmod(a, b), T.remainder(a, -3)]


def float_floor_divide_and_remainder(T):  # test_binary_ufuncs.py: test_floor_divide / remainder
    a = T.tensor([5.5, -5.5, 5.5, -5.5, 0.0], dtype=T.float64)
    b = T.tensor([2.0, 2.0, -2.0, -2.0, 3.0], dtype=T.float64)
    return [a // b, a % b, T.fmod(a, b), T.remainder(a, 1.5), -7.5 % T.tensor([2.0]),
            T.div(a, b, rounding_mode="trunc")]


def integer_division_by_zero(T):  # test_binary_ufuncs.py: test_floor_divide_zero
    T.tensor([5, -3]) // T.tensor([0, 0])
    return []


def integer_remainder_by_zero(T):  # test_binary_ufuncs.py: test_remainder_by_zero (int)
    T.tensor([5, -3]) % T.tensor([0, 0])
    return []


def float_division_by_zero(T):  # test_binary_ufuncs.py: test_div (inf and nan)
    a = T.tensor([1.0, -1.0, 0.0])
    return [a / 0, a // 0.0, T.tensor([1, 0]) / 0]


def int_pow_negative_exponent_error(T):  # test_binary_ufuncs.py: test_int_pow (negative)
    T.tensor([2, 3]) ** -1
    return []


def pow_with_scalar_bases(T):  # test_binary_ufuncs.py: test_pow_scalar_base
    x = T.tensor([0.5, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = 2 ** x + x ** 2 + x.pow(0.5)
    y.sum().backward()
    return [y, x.grad]


def bitwise_and_shift_ops(T):  # test_binary_ufuncs.py: test_bitwise_ops / shifts
    a = T.tensor([12, -5, 7])
    b = T.tensor([10, 3, 1])
    return [a & b, a | b, a ^ b, ~a, a & 6]


def bitwise_on_float_error(T):  # test_binary_ufuncs.py: test_bitwise_ops (floats rejected)
    T.tensor([1.0]) & T.tensor([1.0])
    return []


def comparisons_across_dtypes(T):  # test_binary_ufuncs.py: test_comparison_ops_type_promotion
    i = T.tensor([1, 2, 3])
    f = T.tensor([1.5, 2.0, 2.5])
    return [i < f, i == 2, f >= 2, T.eq(i, f), T.maximum(i, f), T.minimum(i, T.tensor(2))]


# -------------------------------------------------------------------- shapes and dtypes


def broadcasting(T):  # test_torch.py: test_broadcast
    a = T.ones(2, 1, 3)
    b = T.arange(4.0).reshape(4, 1)
    return [a + b, (a * b).shape, a.expand(4, 2, 3).shape, T.broadcast_shapes((2, 1), (3,)),
            T.broadcast_shapes(2, (3, 1)), T.broadcast_shapes((0, 1), (1, 5)),
            T.broadcast_shapes()]


def broadcast_shapes_error(T):  # test_torch.py: test_broadcast_shapes (mismatch)
    T.broadcast_shapes((2, 3), (1, 3), (4,))
    return []


def broadcasting_error(T):  # test_torch.py: test_broadcast_fail
    T.ones(2, 3) + T.ones(4)
    return []


def inplace_broadcast_into_smaller_error(T):  # test_torch.py: test_inplace broadcasting
    a = T.ones(3)
    a.add_(T.ones(2, 3))
    return [a]


def matmul_shape_error(T):  # test_torch.py / test_linalg.py: test_matmul_small_brute_force
    T.ones(2, 3) @ T.ones(2, 3)
    return []


def matmul_dtype_mismatch_error(T):  # test_linalg.py: mm with mismatched dtypes
    T.ones(2, 3) @ T.ones(3, 2, dtype=T.float64)
    return []


def view_size_error(T):  # test_view_ops.py: test_view (invalid size)
    T.ones(2, 3).view(4)
    return []


def cat_dtype_promotion_and_error(T):  # test_tensor_creation_ops.py: test_cat_out / promote
    a = T.tensor([1, 2])
    b = T.tensor([0.5])
    ok = T.cat([a, b])
    T.cat([T.ones(2, 3), T.ones(2, 4)])
    return [ok]


# ---------------------------------------------------------- indexing, scatter, gather grads


def index_put_accumulate_grad(T):  # test_autograd.py: test_index_put_accumulate_duplicate_indices
    x = T.zeros(5, dtype=T.float64, requires_grad=True)
    v = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64, requires_grad=True)
    idx = T.tensor([1, 3, 1, 1])
    y = x.index_put((idx,), v * v, accumulate=True)
    (y * T.arange(5.0, dtype=T.float64)).sum().backward()
    return [y, x.grad, v.grad]


def index_put_no_accumulate_grad(T):  # test_autograd.py: test_index_put (no duplicates)
    x = T.arange(6.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    v = T.tensor([10.0, 20.0], dtype=T.float64, requires_grad=True)
    y = x.index_put((T.tensor([0, 1]), T.tensor([2, 0])), v)
    (y * y).sum().backward()
    return [y, x.grad, v.grad]


def repeated_index_read_grad(T):  # test_autograd.py: test_advanced_indexing (duplicates)
    x = T.arange(1.0, 7.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    y = x[T.tensor([1, 1, 0]), T.tensor([2, 2, 0])]
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [y, x.grad]


def gather_and_scatter_grads(T):  # test_autograd.py: test_gather / test_scatter (OpInfo grads)
    x = T.arange(1.0, 7.0, dtype=T.float64).reshape(2, 3).requires_grad_()
    src = T.full((2, 2), 5.0, dtype=T.float64, requires_grad=True)
    idx = T.tensor([[0, 0], [2, 1]])
    g = x.gather(1, idx)
    a = x.scatter_add(1, idx, src)
    b = x.scatter_add(0, idx[:, :1], src[:, :1])
    s = x.scatter(1, idx[:, 1:], src[:, :1])
    v = x.scatter(0, T.tensor([[1, 0, 1]]), 2.5)
    ((g * g).sum() + (a * a).sum() + (b * b).sum() + (s * s).sum() + (v * v).sum()).backward()
    return [g, a, b, s, v, x.grad, src.grad]


def gather_index_errors(T):  # test_torch.py: test_gather_bounds / index dtype
    T.ones(2, 3).gather(1, T.tensor([[3]]))
    return []


def scatter_add_shape_error(T):  # test_scatter_gather_ops.py: test_scatter_add shape checks
    T.ones(2, 3).scatter_add(0, T.tensor([[0, 1]]), T.ones(2, 1))
    return []


def gather_float_index_error(T):  # test_scatter_gather_ops.py: gather index dtype
    T.ones(2, 3).gather(1, T.tensor([[0.0]]))
    return []


def index_select_grad_and_error(T):  # test_autograd.py: index_select with repeated indices
    x = T.arange(1.0, 7.0, dtype=T.float64).reshape(3, 2).requires_grad_()
    y = x.index_select(0, T.tensor([2, 0, 2]))
    y.sum().backward()
    grad = x.grad
    x.index_select(0, T.tensor([[0]]))
    return [y, grad]


PROGRAMS = [
    int_tensor_with_python_scalars, bool_tensor_with_python_scalars,
    float_tensor_with_python_scalars, zero_dim_tensors_promote_as_scalars, mixed_tensor_dtypes,
    small_integer_dtypes, int8_index_error, inplace_promotion_errors,
    inplace_float_into_int_with_int_ok, true_divide_of_ints,
    float_floor_divide_and_remainder, integer_division_by_zero, integer_remainder_by_zero,
    float_division_by_zero, int_pow_negative_exponent_error, pow_with_scalar_bases,
    bitwise_and_shift_ops, bitwise_on_float_error, comparisons_across_dtypes, broadcasting,
    broadcast_shapes_error, broadcasting_error, inplace_broadcast_into_smaller_error,
    matmul_shape_error,
    matmul_dtype_mismatch_error, view_size_error, cat_dtype_promotion_and_error,
    index_put_accumulate_grad, index_put_no_accumulate_grad, repeated_index_read_grad,
    gather_and_scatter_grads, gather_index_errors, scatter_add_shape_error,
    gather_float_index_error, index_select_grad_and_error,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)
