"""Eager autograd and tensor semantics against torch: a sweep of programs modelled on pytorch's
``test/test_autograd.py``, ``test/test_indexing.py``, ``test/test_type_promotion.py`` and
``test/test_reductions.py``.

Each program is written once against ``T`` (``mtc`` or ``torch``); its outcome — the exception
type and message start, or the values, dtypes and shapes — must be torch's
(``tests/fidelity.py``). Without torch each program still runs under mtc, and the regression
tests at the end (one per fixed difference) check a recorded expectation instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def _x(T, rows=2, cols=3):
    return T.arange(1.0, rows * cols + 1, dtype=T.float64).reshape(rows, cols).requires_grad_()


# ------------------------------------------------------------------ writes under autograd


def setitem_on_non_leaf(T):  # test_indexing.py: test_index_put_accumulate / setitem backward
    x = _x(T)
    y = x * 2
    y[0, 1] = 10.0
    y.sum().backward()
    return [y, x.grad]


def setitem_tensor_value_grad(T):  # test_autograd.py: test_setitem (value requiring grad)
    x = _x(T)
    v = T.tensor([5.0, 6.0, 7.0], dtype=T.float64, requires_grad=True)
    y = x.clone()
    y[1] = v * 2
    (y * y).sum().backward()
    return [y, x.grad, v.grad]


def setitem_on_leaf_error(T):  # test_leaf_assignment
    x = _x(T)
    x[0] = 1.0
    return [x]


def setitem_on_leaf_under_no_grad(T):  # test_no_grad_modifies_version (an init-style write)
    x = _x(T)
    with T.no_grad():
        x[0] = 0.0
    (x * 2).sum().backward()
    return [x, x.grad]


def view_of_view_inplace(T):  # test_inplace_on_view_of_view
    x = _x(T, 3, 4)
    y = x * 1
    w = y[1:][:, 1:3]
    w.mul_(3)
    y.sum().backward()
    return [y, x.grad, y._version]


def base_written_after_view_taken(T):  # test_inplace_on_view_modify_base
    x = _x(T)
    y = x * 1
    v = y[0]
    y.add_(1)
    (v * 2).sum().backward()
    return [v, x.grad]


def view_write_of_saved_output_error(T):  # test_inplace_on_view_saved_output
    x = _x(T)
    y = x.exp()
    y[0].zero_()
    y.sum().backward()
    return [x.grad]


def version_counter_shared_by_views(T):  # test_version_counter
    x = T.zeros(3)
    v = x.view(3)
    x.add_(1)
    v.mul_(2)
    return [x._version, v._version]


def inplace_sigmoid_output_saved_error(T):  # test_inplace_on_view_saved_output (sigmoid)
    x = _x(T)
    y = x.sigmoid()
    y.mul_(2)
    y.sum().backward()
    return [x.grad]


def exp_inplace_saves_its_result(T):  # test_inplace (exp_ saves the written result)
    x = _x(T)
    y = (x * 1).exp_()
    y.sum().backward()
    return [x.grad, y]


def saved_input_modified_error(T):  # test_saved_variable_version_counter (mul saves both)
    x = _x(T)
    a = x * 1
    b = a * a
    a.add_(1)
    b.sum().backward()
    return [x.grad]


def add_saves_nothing_so_write_is_fine(T):  # test_inplace_not_requires_grad
    x = _x(T)
    a = x * 1
    b = a + 2
    a.mul_(3)
    b.sum().backward()
    return [x.grad]


def transpose_view_inplace(T):  # test_inplace_on_view_python (transposed view)
    x = _x(T)
    y = x * 1
    y.t().mul_(2)
    y.sum().backward()
    return [y, x.grad]


def unsqueeze_view_fill(T):  # test_inplace_on_view_python (unsqueeze, then select)
    x = _x(T)
    y = x.clone()
    y.unsqueeze(0)[0, 0].fill_(0)
    (y * y).sum().backward()
    return [x.grad]


def detached_alias_written(T):  # test_detach (the write is invisible to autograd)
    x = _x(T)
    y = x * 2
    y.detach().zero_()
    y.sum().backward()
    return [y, x.grad]


# ------------------------------------------------------------------ advanced indexing gradients


def duplicate_indices_accumulate(T):  # test_index_backward_does_not_save_tensor / dup indices
    x = _x(T)
    x[T.tensor([0, 0, 1, 0])].sum().backward()
    return [x.grad]


def index_put_accumulate_grad(T):  # test_index_put_accumulate_duplicate_indices
    x = T.zeros(5, dtype=T.float64)
    v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = x.index_put((T.tensor([1, 1, 3]),), v, accumulate=True)
    (y * T.arange(5.0, dtype=T.float64)).sum().backward()
    return [y, v.grad]


def index_assign_blocks_grad(T):  # test_index_put (overwritten elements get no gradient)
    x = T.zeros(5, dtype=T.float64, requires_grad=True)
    y = x.clone()
    y[T.tensor([2, 4])] = T.tensor([1.0, 2.0], dtype=T.float64)
    (y * 3).sum().backward()
    return [y, x.grad]


def bool_mask_grad(T):  # test_index_bool / masked_select backward
    x = _x(T)
    m = x > 2.5
    x[m].pow(2).sum().backward()
    return [x[m], x.grad]


def two_index_tensors_grad(T):  # test_advancedindex (pairs of indices, repeated)
    x = _x(T, 3, 4)
    y = x[T.tensor([0, 2, 0]), T.tensor([1, 1, 1])]
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return [x.grad]


def index_list_then_slice(T):  # test_advancedindex (list index then a slice)
    x = _x(T, 3, 4)
    y = x[[0, 0, 2], 1:3]
    y.sum().backward()
    return [y, x.grad]


# ------------------------------------------------------------------ graphs, hooks, grads


def retain_graph_then_backward(T):  # test_retain_grad / retain_graph=True
    x = _x(T)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [x.grad]


def backward_twice_freed_error(T):  # test_backward_twice_with_saved_values
    x = _x(T)
    y = x.exp().sum()
    y.backward()
    y.backward()
    return [x.grad]


def double_backward_through_grad(T):  # test_gradgrad
    x = _x(T)
    (g,) = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    return [g, x.grad]


def double_backward_without_create_graph_error(T):  # test_grad_nonleaf (no graph for g)
    x = _x(T)
    (g,) = T.autograd.grad((x ** 3).sum(), x)
    g.sum().backward()
    return [g]


def grad_of_non_scalar_error(T):  # test_grad_badcalls (implicit grad for scalars only)
    x = _x(T)
    return list(T.autograd.grad(x * 2, x))


def hook_scales_grad(T):  # test_hooks (a hook's return value replaces the gradient)
    x = _x(T)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    return [x.grad]


def retain_grad_on_a_view(T):  # test_retain_grad_inplace_on_view (retain_grad of a view)
    x = _x(T)
    v = (x * 2)[0]
    v.retain_grad()
    (v * 3).sum().backward()
    return [v.grad, x.grad]


def leaf_grad_is_contiguous(T):  # test_grad_layout (AccumulateGrad's layout contract)
    x = _x(T)
    x.sum().backward()  # an expand: copied into the leaf's layout
    g = x.grad
    x.sum().backward()
    return [x.grad, x.grad.is_contiguous(), x.grad.stride(), g is x.grad]


def mm_grads_follow_transposed_operands(T):  # mm_mat1/mm_mat2_backward's layout rule
    x, w = _x(T, 3, 4), _x(T, 5, 4)
    wt, xt = w.t(), x.t().contiguous().t()  # column-major operands, as linear's weight.t()
    gx, gw = T.autograd.grad(xt.mm(wt).sum(), [xt, wt])
    return [gx, gw, gx.stride(), gw.stride()]


def zero_grad_in_place_after_sum(T):  # test_optim.py: zero_grad(set_to_none=False)
    x = _x(T)
    x.sum().backward()
    x.grad.zero_()
    x.sum().backward()
    return [x.grad]


def hook_changes_size_error(T):  # test_hooks (check_single_result)
    x = _x(T)
    y = x * 2
    y.register_hook(lambda g: g.sum())
    y.sum().backward()
    return [x.grad]


def post_accumulate_grad_hook(T):  # test_post_accumulate_grad_hook_*
    x = _x(T)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (x * 3).sum().backward()
    (x * 2).sum().backward()
    return seen


def post_accumulate_grad_hook_on_non_leaf_error(T):
    y = _x(T) * 2
    y.register_post_accumulate_grad_hook(lambda p: None)
    return [y]


# ------------------------------------------------------------------ dtypes and division


def integer_division_modes(T):  # test_binary_ufuncs.py: test_div_rounding_modes / floor_divide
    a, b = T.tensor([-7, 7, -8, 5]), T.tensor([2, -2, 3, -5])
    return [a // b, a % b, T.div(a, b), T.div(a, b, rounding_mode="floor"),
            T.div(a, b, rounding_mode="trunc"), a / 2, T.remainder(a, 3), T.fmod(a, 3)]


def integer_division_by_zero_error(T):  # test_binary_ufuncs.py: ZeroDivisionError
    return [T.tensor([1, 2]) // T.tensor([0, 1])]


def float_division_by_zero(T):  # inf, nan, floor of inf
    a = T.tensor([1.0, -1.0, 0.0])
    return [a / 0, a // 0, a % 0]


def promotion_table(T):  # test_type_promotion.py: categories, 0-d tensors, bool, uint8
    i, lng = T.tensor([1, 2], dtype=T.int32), T.tensor([3, 4])
    f, d = T.tensor([1.5, 2.5]), T.tensor([1.0], dtype=T.float64)
    b, u = T.tensor([True, False]), T.tensor([200, 3], dtype=T.uint8)
    return [i + lng, i + 2, i + 2.5, f + d, lng * 1.5, b + b, b + 1, u + 1, f + d.sum(),
            i * True, u - 1, T.tensor(3) + f, lng / lng, (i ** 2).dtype, (lng ** 0.5).dtype,
            i.sum().dtype, b.sum(), u.sum().dtype]


def promotion_with_zero_dim(T):  # test_type_promotion.py: test_zero_dim_promotion
    f16 = T.tensor([1.0, 2.0], dtype=T.float16)
    return [(f16 + T.tensor(1.0, dtype=T.float64)).dtype,
            (T.tensor([1], dtype=T.int32) + T.tensor(1.0, dtype=T.float64)).dtype,
            (T.tensor([1], dtype=T.uint8) + T.tensor(-1)).dtype]


def inplace_float_into_int_error(T):  # test_type_promotion.py: result type can't be cast
    a = T.tensor([1, 2])
    a += 1.5
    return [a]


def inplace_int_into_float(T):
    a = T.tensor([1.0, 2.0])
    a += T.tensor([1, 2])
    a *= 2
    return [a]


# ------------------------------------------------------------------ reductions


def reductions_dims(T):  # test_reductions.py: dim=None, keepdim, negative and tuple dims
    x = T.arange(24.0).reshape(2, 3, 4)
    return [x.sum(), x.sum(-1), x.sum((0, -1), keepdim=True), x.mean(dim=None),
            x.amax((1, 2)), x.max(dim=-2)[0], x.max(dim=-2)[1], x.std(-1),
            x.var((0, 1), keepdim=True), x.prod(1), x.argmax(), x.argmax(1, keepdim=True),
            x.logsumexp(-1), x.norm(), x.min(), x.sum(dim=[]), x.mean(())]


def integer_reductions(T):  # sum of ints is int64; cumsum; argmin
    x = T.arange(6).reshape(2, 3)
    return [x.sum(), x.sum(0).dtype, x.prod(), x.cumsum(1), x.max(), x.argmin(0)]


def mean_of_integers_error(T):  # mean needs a floating dtype
    return [T.arange(6).mean()]


def reduction_dim_out_of_range_error(T):
    return [T.ones(2, 3).sum(2)]


def reduction_repeated_dim_error(T):
    return [T.ones(2, 3).sum((0, 0))]


def reduction_gradients(T):  # test_reductions.py / OpInfo samples' gradients
    x = _x(T, 3, 4)
    (x.amax(1).sum() + x.max() + x.std() + x.var(0, keepdim=True).sum() + x.prod(1).sum()
     + x.norm() + x.logsumexp(0).sum()).backward()
    return [x.grad]


def max_ties_share_the_gradient(T):  # amax/max() split a tie evenly, max(dim) picks one
    x = T.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]], requires_grad=True)
    (x.max() + x.amax(1).sum() + x.max(1)[0].sum()).backward()
    return [x.grad]


def empty_reductions(T):  # test_reductions.py: test_empty_tensor_*
    e = T.ones(0, 3)
    return [e.sum(0), e.sum(1), e.mean(0), e.prod(0), e.amax(1)]


def max_of_empty_error(T):
    return [T.ones(0, 3).max()]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)


# ------------------------------------------------------------------ regressions without torch


def test_gradient_of_sum_is_stored_contiguous_and_accumulated_in_place():
    """``sum``'s gradient is an expand (one memory location); ``.grad`` must be a real copy so
    ``zero_grad(set_to_none=False)`` and optimizers can write it, and a second backward adds
    into the same tensor."""
    x = _x(mtc)
    x.sum().backward()
    g = x.grad
    assert g.is_contiguous() and g.stride() == (3, 1)
    g.zero_()
    x.sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), np.ones((2, 3)))


def test_tensor_hooks_keep_the_gradient_shape_and_post_accumulate_hooks_run():
    x = _x(mtc)
    y = x * 2
    y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()
    seen = []
    z = _x(mtc)
    z.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.numpy().copy()))
    (z * 3).sum().backward()
    np.testing.assert_array_equal(seen[0], np.full((2, 3), 3.0))


def test_reduction_errors_name_the_repeated_dim_and_the_op_called():
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        mtc.ones(2, 3).sum((0, -2))
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim"):
        mtc.ones(0, 3).max()
