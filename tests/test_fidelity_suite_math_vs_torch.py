"""Math ops, promotion and reductions against torch, second sweep — programs modelled on
pytorch's ``test/test_unary_ufuncs.py`` (rounding, trigonometric and hyperbolic
functions with their gradients and integer inputs, ``erfc``'s tail),
``test/test_type_promotion.py`` (``alpha``, bool arithmetic errors, 0-dim operands of
each category, ``cat``/``stack``, conversions), ``test/test_reductions.py``
(``nansum``/``nanmean``, ties, sort stability, gradients) and ``test/test_torch.py``
(``eye``, ``logspace``, ``dot``/``mv``/``inner``, ``trace``, ``isin``, ``copysign``)

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, each still runs
under mtc (it must not fail in an unexpected way), and the tests at the end check the new
ops against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import arange_leaf as _l
from .fidelity import program_tests, programs_of

pytestmark = pytest.mark.torch




def tp_add_alpha_int_float_error(T):
    return [T.add(T.tensor([1, 2]), T.tensor([1, 2]), alpha=0.5)]


def tp_add_alpha(T):
    return [
        T.add(T.tensor([1.0, 2.0]), T.tensor([1, 2]), alpha=2),
        T.sub(T.tensor([3, 4]), 1, alpha=2),
        T.tensor([1.0]).add(2, alpha=3),
    ]


def tp_sub_bool_error(T):
    return [T.tensor([True]) - T.tensor([False])]


def tp_neg_bool_error(T):
    return [-T.tensor([True])]


def tp_int_pow_negative_float(T):
    return [T.tensor([2]) ** -1.0, T.pow(T.tensor([2, 3]), 2), T.pow(2, T.tensor([0.5]))]


def tp_float_int_min_max(T):
    return [
        T.maximum(T.tensor([1, 5]), T.tensor([2.5, 0.5])),
        T.minimum(T.tensor([1], dtype=T.int8), T.tensor([300])),
    ]


def tp_uint8_sub_wrap(T):
    return [T.tensor([1], dtype=T.uint8) - 2, T.tensor([1], dtype=T.uint8) - T.tensor(2)]


def tp_int32_times_large_scalar(T):
    return [(T.tensor([1], dtype=T.int32) * 2**33).dtype]


def tp_zero_dim_both(T):
    return [
        (T.tensor(1, dtype=T.int32) + T.tensor(1, dtype=T.int64)).dtype,
        (T.tensor(1.0, dtype=T.float16) + T.tensor(1)).dtype,
        (T.tensor(1.0) + T.tensor(1.0, dtype=T.float64)).dtype,
    ]


def tp_mixed_dim_categories(T):
    return [
        (T.ones(2, dtype=T.int32) + T.tensor(1.0, dtype=T.float64)).dtype,
        (T.ones(2, dtype=T.float16) + T.tensor(1.0, dtype=T.float64)).dtype,
        (T.ones(2, dtype=T.bool) + T.tensor(1, dtype=T.int8)).dtype,
    ]


def tp_cat_mixed(T):
    return [
        T.cat([T.ones(1, dtype=T.int32), T.ones(1, dtype=T.float16)]).dtype,
        T.cat([T.ones(1, dtype=T.bool), T.ones(1, dtype=T.uint8)]).dtype,
        T.stack([T.tensor(1), T.tensor(2.0)]).dtype,
    ]


def tp_sum_of_bool_and_prod(T):
    return [
        T.tensor([True, True]).prod(),
        T.tensor([True, True]).cumsum(0),
        T.tensor([1, 2], dtype=T.uint8).sum().dtype,
    ]


def tp_mean_int_error(T):
    return [T.tensor([1, 2]).mean()]


def tp_true_div_inplace_int_error(T):
    x = T.tensor([1, 2])
    x /= 2


def tp_floor_div_float(T):
    return [
        T.tensor([5.0, -5.0]) // 2,
        T.floor_divide(T.tensor([7]), T.tensor([2])),
        T.tensor([-7.5]) % 2,
    ]


def tp_comparison_with_nan(T):
    x = T.tensor([float("nan"), 1.0])
    return [
        x == x,
        x != x,
        x.isnan(),
        T.isfinite(T.tensor([1.0, float("inf")])),
        x.max(),
        x.argmax(),
        T.nan_to_num(x),
        T.nanmean(x),
    ]


def tp_type_conversion_methods(T):
    x = T.tensor([1.7, -1.7])
    return [
        x.int(),
        x.long(),
        x.short(),
        x.bool(),
        x.half().dtype,
        x.to(T.uint8),
        x.type(T.int32),
        x.byte(),
    ]


def tp_item_and_python_types(T):
    return [
        type(T.tensor(1).item()).__name__,
        type(T.tensor(1.0).item()).__name__,
        type(T.tensor(True).item()).__name__,
        T.tensor([1, 2]).tolist(),
        int(T.tensor(2.9)),
        float(T.tensor(3)),
        bool(T.tensor(0.0)),
    ]


def tp_item_multi_error(T):
    return [T.tensor([1, 2]).item()]


def tp_bool_multi_error(T):
    return [bool(T.tensor([1, 2]))]


def tp_full_infers(T):
    return [
        T.full((2,), 1).dtype,
        T.full((2,), 1.0).dtype,
        T.full((2,), True).dtype,
        T.tensor([1, 2.0]).dtype,
        T.tensor([True, 1]).dtype,
        T.arange(3).dtype,
        T.arange(3.0).dtype,
        T.arange(0, 1, 0.25).dtype,
        T.zeros_like(T.ones(2, dtype=T.int32)).dtype,
        T.ones_like(T.ones(2), dtype=T.float64).dtype,
    ]


def tp_linspace_logspace(T):
    return [
        T.linspace(0, 1, 5),
        T.linspace(0, 10, steps=3, dtype=T.int64),
        T.arange(10, 0, -3),
        T.eye(2, 3),
        T.logspace(0, 2, 3),
    ]


def red_sum_int_overflow_promotes(T):
    x = T.tensor([2**30, 2**30], dtype=T.int32)
    return [x.sum(), x.sum().dtype]


def red_argmax_ties_first(T):
    x = T.tensor([[1, 3, 3], [2, 2, 1]])
    return [x.argmax(1), x.argmin(0), x.max(1).indices, T.tensor([1.0, 1.0]).argmax()]


def red_topk_sort_stable(T):
    x = T.tensor([3, 1, 3, 2, 1])
    return [
        x.sort(stable=True),
        x.sort(descending=True, stable=True),
        x.topk(2),
        x.argsort(),
        T.tensor([2.0, 1.0, 3.0]).topk(2, largest=False),
    ]


def red_cumprod_cumsum_dtype(T):
    x = T.tensor([1.0, 3.0, 2.0, 5.0])
    return [x.cumprod(0), x.cumsum(0, dtype=T.float64)]


def red_norm_variants_grad(T):
    x = _l(T)
    y = x.norm(dim=1)
    y.sum().backward()
    return [y, x.grad]


def red_mean_grad_keepdim(T):
    x = _l(T)
    y = x.mean((0, 1), keepdim=True)
    y.backward(T.ones(1, 1))
    return [y, x.grad]


def red_var_grad(T):
    x = _l(T)
    x.var(1).sum().backward()
    return [x.grad]


def red_logsumexp_grad(T):
    x = _l(T)
    x.logsumexp(1).sum().backward()
    return [x.grad]


def red_max_dim_grad(T):
    x = T.tensor([[1.0, 5.0, 5.0], [7.0, 2.0, 7.0]], requires_grad=True)
    x.max(1).values.sum().backward()
    return [x.grad]


def red_median_grad(T):
    x = T.tensor([3.0, 1.0, 2.0, 4.0], requires_grad=True)
    x.median().backward()
    return [x.grad]


def red_dim_list_duplicates_error(T):
    T.ones(2, 3).sum((1, -1))


def red_dtype_arg_int_to_float_sum(T):
    return [T.tensor([1, 2]).sum(dtype=T.float16), T.tensor([1.5, 2.5]).sum(dtype=T.int64)]


def _m(T):
    return T.tensor([0.5, 1.5, 2.5, -0.5, -1.7, 0.2], requires_grad=True)


def math_rounding(T):
    x = _m(T)
    outs = [
        T.floor(x),
        T.ceil(x),
        T.round(x),
        T.trunc(x),
        T.frac(x),
        x.round(decimals=1),
        T.round(T.tensor([1.2345, -2.5551]), decimals=2),
    ]
    sum(o.sum() for o in outs).backward()
    return outs + [x.grad, [type(o.grad_fn).__name__ for o in outs[:5]]]


def math_rounding_ints(T):
    x = T.tensor([1, -2, 3])
    return [x.floor(), T.ceil(x), x.round(), x.trunc(), T.floor(T.tensor([3], dtype=T.uint8))]


def math_floor_bool_error(T):
    return [T.floor(T.tensor([True]))]


def math_frac_int_error(T):
    return [T.tensor([1]).frac()]


def math_trig_grads(T):
    x = T.tensor([0.1, -0.4, 0.7], dtype=T.float64, requires_grad=True)
    fs = [T.tan, T.asin, T.acos, T.atan, T.sinh, T.cosh, T.asinh, T.atanh, T.exp2, T.erfc]
    outs = [f(x) for f in fs]
    grads = [T.autograd.grad(o.sum(), x)[0] for o in outs]
    return outs + grads + [[type(o.grad_fn).__name__ for o in outs]]


def math_acosh_log10_grads(T):
    x = T.tensor([1.5, 3.0], requires_grad=True)
    a, b = T.acosh(x), x.log10()
    (a + b).sum().backward()
    return [a, b, x.grad]


def math_int_inputs_to_float(T):
    x = T.tensor([1, 2])
    return [
        T.tan(x),
        T.exp2(x),
        T.log10(x),
        x.sinh(),
        T.erfc(x),
        T.square(x),
        T.square(T.tensor([True, False])),
        T.sgn(T.tensor([-2, 0, 3])),
    ]


def math_erfc_tail(T):
    return [T.erfc(T.tensor([5.0, 10.0, -3.0])), T.erfc(T.tensor([5.0], dtype=T.float64))]


def math_inplace_variants(T):
    x = T.tensor([0.5, 1.5, -2.5])
    x.floor_()
    y = T.tensor([0.3])
    y.tan_()
    z = T.tensor([1.25])
    z.frac_()
    return [x, y, z]


def math_square_grad(T):
    x = T.tensor([1.0, -3.0], requires_grad=True)
    y = T.square(x)
    y.sum().backward()
    return [y, x.grad, type(y.grad_fn).__name__]


def ex_floor_divide(T):
    return [
        T.floor_divide(T.tensor([7, -7]), 2),
        T.tensor([7.5, -7.5]).floor_divide(2),
        T.true_divide(T.tensor([1]), 2),
    ]


def ex_eye_logspace(T):
    return [
        T.eye(3),
        T.eye(2, 3),
        T.eye(2, dtype=T.int64),
        T.logspace(0, 2, 3),
        T.logspace(0, 3, 4, base=2),
        T.eye(2, requires_grad=True).requires_grad,
    ]


def ex_nan_to_num_nansum(T):
    x = T.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    y = T.tensor([[float("nan"), 1.0], [2.0, 4.0]])
    return [
        T.nan_to_num(x),
        T.nan_to_num(x, nan=2.0, posinf=9.0, neginf=-9.0),
        x.nan_to_num(),
        T.nansum(y),
        T.nansum(y, 1),
        T.nanmean(y, 1),
        y.nanmean(),
        T.nansum(T.tensor([1, 2])),
        T.nan_to_num(T.tensor([1, 2])),
    ]


def ex_nanmean_int_error(T):
    return [T.nanmean(T.tensor([1, 2]))]


def ex_dot_family(T):
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = T.tensor([4.0, 5.0, 6.0])
    d = T.dot(a, b)
    d.backward()
    m = T.arange(6.0).reshape(2, 3)
    return [
        d,
        a.grad,
        T.mv(m, b),
        T.inner(m, b),
        T.inner(m, m),
        T.ger(a.detach(), b[:2]),
        T.dot(T.tensor([1, 2]), T.tensor([3, 4])),
        a.dot(b),
    ]


def ex_dot_errors(T):
    r = []
    for f in (
        lambda: T.dot(T.ones(2), T.ones(2, dtype=T.float64)),
        lambda: T.dot(T.ones(2), T.ones(3)),
        lambda: T.dot(T.ones(2, 1), T.ones(2)),
    ):
        try:
            f()
        except RuntimeError as e:
            r.append(str(e))
    return r


def ex_trace(T):
    x = T.arange(9.0).reshape(3, 3).requires_grad_()
    t = T.trace(x)
    t.backward()
    return [t, x.grad, T.trace(T.arange(6).reshape(2, 3)), T.arange(6.0).reshape(3, 2).trace()]


def ex_broadcast_ravel_split(T):
    x = T.arange(6).reshape(2, 3)
    a, b = T.broadcast_tensors(T.ones(2, 1), T.ones(3))
    return [
        T.broadcast_to(T.tensor([1, 2, 3]), (2, 3)),
        a.shape,
        b.shape,
        T.ravel(x.t()),
        x.ravel(),
        T.hsplit(x, 3),
        T.vsplit(x, [1]),
        T.fliplr(x),
        T.flipud(x),
    ]


def ex_isin_xor_copysign(T):
    return [
        T.isin(T.tensor([1, 2, 3]), T.tensor([2, 5])),
        T.isin(T.tensor([1.0, 2.0]), 2.0, invert=True),
        T.logical_xor(T.tensor([1, 0]), T.tensor([1.0, 1.0])),
        T.copysign(T.tensor([1, 2]), -1.0),
        T.copysign(T.tensor([1.0, -2.0]), T.tensor([-0.0, 3.0])),
        T.deg2rad(T.tensor([180.0])),
        T.rad2deg(T.tensor([3.14159265])),
    ]


def ex_swapaxes(T):
    x = T.arange(6).reshape(1, 2, 3)
    return [T.swapaxes(x, 0, 2).shape, x.swapdims(1, 2).shape, T.moveaxis(x, 0, -1).shape]


def ex_clamp_min_inplace(T):
    x = T.tensor([-1.0, 0.5, 3.0])
    x.clamp_min_(0.0)
    y = T.tensor([1.0, 5.0])
    y.clamp_max_(2.0)
    return [x, y]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_rounding_and_inverse_functions_follow_numpy():
    x = np.linspace(-0.95, 0.95, 41)
    t = mtc.tensor(x)
    for ours, theirs in (
        (mtc.floor, np.floor),
        (mtc.ceil, np.ceil),
        (mtc.round, np.round),
        (mtc.trunc, np.trunc),
        (mtc.asin, np.arcsin),
        (mtc.acos, np.arccos),
        (mtc.atanh, np.arctanh),
        (mtc.tan, np.tan),
        (mtc.exp2, np.exp2),
    ):
        np.testing.assert_allclose(ours(t).numpy(), theirs(x), rtol=1e-12)
    assert mtc.round(mtc.tensor([0.5, 1.5, 2.5])).tolist() == [0.0, 2.0, 2.0]  # half to even
    assert mtc.erfc(mtc.tensor([10.0], dtype=mtc.float64)).item() > 0  # no 1 - erf(x)


def test_inverse_trig_gradients_follow_their_formulas():
    x = mtc.tensor([0.2, -0.5], dtype=mtc.float64, requires_grad=True)
    (g,) = mtc.autograd.grad((mtc.asin(x) + mtc.atanh(x)).sum(), x)
    a = np.array([0.2, -0.5])
    np.testing.assert_allclose(g.numpy(), 1 / np.sqrt(1 - a * a) + 1 / (1 - a * a))
