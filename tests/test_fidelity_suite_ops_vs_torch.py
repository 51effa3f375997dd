"""Tensor ops against torch: indexing, views, joins, gathers and scatters, and the gradients at
the awkward points (ties, zeros, clamp bounds) — programs modelled on pytorch's
``test/test_indexing.py``, ``test/test_view_ops.py``, ``test/test_shape_ops.py`` and the
OpInfo samples and error inputs of ``test/test_ops.py``.

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, the regression
tests at the end check recorded expectations.
"""

from __future__ import annotations

import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def _x(T, rows=2, cols=3):
    return T.arange(1.0, rows * cols + 1, dtype=T.float64).reshape(rows, cols).requires_grad_()


def _raises(build):
    def program(T):
        return [build(T)]
    return program


# ------------------------------------------------------------------ indexing


index_out_of_bounds_error = _raises(lambda T: T.ones(3)[5])
second_index_out_of_bounds_error = _raises(lambda T: T.ones(2, 3, 4)[1, ..., 9])
index_after_none_out_of_bounds_error = _raises(lambda T: T.ones(2, 3)[None, 2])
index_tensor_out_of_bounds_error = _raises(lambda T: T.ones(3)[T.tensor([0, 3])])
too_many_indices_error = _raises(lambda T: T.ones(3)[0, 0])
float_index_error = _raises(lambda T: T.ones(3)[T.tensor([0.0])])
bool_index_shape_error = _raises(lambda T: T.ones(3, 2)[T.tensor([True, False])])


def negative_index_tensor(T):
    return [T.arange(3.0)[T.tensor([-1, -3])]]


def none_ellipsis_and_advanced(T):  # test_indexing.py: test_advancedindex, test_none, ellipsis
    x = T.arange(24.0).reshape(2, 3, 4)
    return [x[None, ..., 1], x[..., None, 0:2], x[:, [0, 2]][..., 1], x[[0, 1], :, [1, 2]],
            x[:, [[0], [1]], [1, 2]]]


def setitem_value_shape_error(T):  # test_indexing.py: setitem expands the value
    x = T.zeros(3, 2)
    x[0] = T.ones(3)
    return [x]


def setitem_broadcasts_and_casts(T):  # test_indexing.py: test_setitem_expansion / dtypes
    x = T.zeros(3, 2)
    x[:, 0] = T.tensor([1.0, 2.0, 3.0])
    x[1:] = 7
    x[T.tensor([0, 2]), 1] = T.tensor([8.0, 9.0])
    y = T.zeros(3, dtype=T.int64)
    y[0] = 2.7
    y[1:] = T.tensor([1.5, -1.5])
    z = T.zeros(3)
    z[0] = T.ones(1, 1)  # leading size-1 dims of the value are dropped
    return [x, y, z]


# ------------------------------------------------------------------ views and shapes


view_size_error = _raises(lambda T: T.ones(2, 3).view(4))
view_two_inferred_error = _raises(lambda T: T.ones(2, 3).view(-1, -1))
view_non_contiguous_error = _raises(lambda T: T.arange(6.0).reshape(2, 3).t().view(6))
expand_error = _raises(lambda T: T.ones(2, 3).expand(3, 3))
transpose_dim_error = _raises(lambda T: T.ones(2, 3).transpose(0, 2))
permute_duplicate_dims_error = _raises(lambda T: T.ones(2, 3).permute(0, 0))
cat_shape_error = _raises(lambda T: T.cat([T.ones(2, 3), T.ones(2, 4)]))
stack_shape_error = _raises(lambda T: T.stack([T.ones(2), T.ones(3)]))
matmul_shape_error = _raises(lambda T: T.ones(2, 3) @ T.ones(2, 3))
matmul_dtype_error = _raises(lambda T: T.ones(2, 3) @ T.ones(3, 2, dtype=T.float64))
broadcast_error = _raises(lambda T: T.ones(2, 3) + T.ones(4))
item_of_many_error = _raises(lambda T: T.ones(2).item())
bool_of_many_error = _raises(lambda T: bool(T.ones(2)))


def reshape_copies_when_it_must(T):
    x = T.arange(6.0).reshape(2, 3).t()
    return [x.reshape(6), x.contiguous().view(6)]


def cat_promotes(T):  # test_tensor_creation_ops.py: test_cat_different_dtypes
    return [T.cat([T.ones(2, dtype=T.int64), T.ones(2)]),
            T.cat([T.ones(2), T.ones(2, dtype=T.float64)])]


def squeeze_variants(T):  # test_view_ops.py: squeeze with dims
    x = T.ones(1, 3, 1)
    return [x.squeeze().shape, x.squeeze(0).shape, x.squeeze(1).shape,
            x.squeeze((0, 2)).shape, x.unsqueeze(-1).shape]


# ------------------------------------------------------------------ gathers and scatters


def gather_grad(T):
    x = _x(T)
    y = x.gather(1, T.tensor([[0, 0], [2, 1]]))
    y.sum().backward()
    return [y, x.grad]


def scatter_add_grad(T):
    x = _x(T)
    src = T.ones(2, 2, dtype=T.float64, requires_grad=True)
    y = x.scatter_add(1, T.tensor([[0, 0], [2, 1]]), src)
    (y * y).sum().backward()
    return [y, x.grad, src.grad]


def scatter_grad(T):  # the overwritten elements of self get no gradient
    x = _x(T)
    src = T.full((2, 2), 5.0, dtype=T.float64, requires_grad=True)
    y = x.scatter(1, T.tensor([[0, 1], [2, 1]]), src)
    (y * y).sum().backward()
    return [y, x.grad, src.grad]


def index_add_grad(T):
    x = _x(T)
    src = T.ones(3, 3, dtype=T.float64, requires_grad=True)
    y = x.index_add(0, T.tensor([0, 1, 0]), src)
    (y * y).sum().backward()
    return [y, x.grad, src.grad]


def index_select_repeated_grad(T):
    x = _x(T)
    y = x.index_select(1, T.tensor([2, 2, 0]))
    (y * 2).sum().backward()
    return [y, x.grad]


def masked_fill_grads(T):
    x = _x(T)
    y = x.masked_fill(x > 3, 0.0)
    z = x * 1
    z.masked_fill_(x > 3, -1.0)
    (y * y).sum().backward()
    (z * z).sum().backward()
    return [y, z, x.grad]


# ------------------------------------------------------------------ gradients at awkward points


def clamp_grad_at_the_bounds(T):
    x = T.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    x.clamp(0.0, 1.0).sum().backward()
    return [x.grad]


def kinks_at_zero(T):  # relu, abs, sign at 0
    x = T.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    (x.relu().sum() + x.abs().sum() + x.sign().sum()).backward()
    return [x.grad]


def sqrt_and_norm_at_zero(T):
    x = T.tensor([0.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()
    z = T.zeros(3, requires_grad=True)
    z.norm().backward()
    return [x.grad, z.grad]


def pow_at_zero(T):
    x = T.tensor([0.0, 2.0], requires_grad=True)
    (x ** 0).sum().backward()
    y = T.tensor([0.0, 2.0], requires_grad=True)
    (y ** 0.5).sum().backward()
    return [x.grad, y.grad]


def maximum_minimum_ties(T):  # ties split the gradient
    a = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = T.tensor([1.0, 1.0, 4.0], requires_grad=True)
    (T.maximum(a, b).sum() + T.minimum(a, b).sum()).backward()
    return [a.grad, b.grad]


def sort_and_topk_grads(T):
    x = T.tensor([3.0, 1.0, 2.0, 1.0], requires_grad=True)
    v, i = x.sort(descending=True)
    t, j = x.topk(2)
    ((v * T.arange(4.0)).sum() + (t * 2).sum()).backward()
    return [v, i, t, j, x.grad]


def products_with_zeros(T):  # prod/cumprod backward with one and two zeros
    x = T.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
    x.cumprod(0).sum().backward()
    y = T.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0]], requires_grad=True)
    y.prod(1).sum().backward()
    return [x.grad, y.grad]


def std_of_one_element(T):  # nan, with a warning
    x = T.ones(1, requires_grad=True)
    y = x.std()
    y.backward()
    return [y, x.grad]


def variance_corrections(T):
    x = T.arange(6.0).reshape(2, 3)
    return [x.var(1, correction=0), x.std(unbiased=False), x.var(0, keepdim=True)]


# ------------------------------------------------------------------ scalars and creation


integer_to_negative_power_error = _raises(lambda T: T.tensor([2]) ** -1)


def integer_powers(T):
    return [T.tensor([2, 3]) ** 2, 2 ** T.tensor([2, 3]), T.tensor([2.0]) ** T.tensor([2]),
            T.tensor([4]) ** 0.5]


def where_promotes_scalars(T):
    return [T.where(T.tensor([True, False]), T.tensor([1, 2]), 2.5),
            T.where(T.tensor([True, False]), 1.0, 0)]


def python_conversions(T):
    return [float(T.tensor([2.5])), int(T.tensor(3.7)), int(T.tensor(-3.7))]


def creation_dtypes(T):  # test_tensor_creation_ops.py: inferred dtypes
    return [T.arange(5), T.arange(0, 1, 0.25), T.arange(1, 4, dtype=T.float32),
            T.linspace(0, 1, 5), T.full((2,), 3), T.full((2,), 3.0), T.full((2,), True),
            T.zeros(2, dtype=T.int32) + 1, T.tensor([1, 2.0]), T.tensor([True, 1]),
            T.tensor(3), T.tensor([[1], [2]]), T.tensor([])]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)


# ------------------------------------------------------------------ regressions without torch


def test_out_of_bounds_int_index_names_its_position():
    with pytest.raises(IndexError, match="index 9 is out of bounds for dimension 2 with size 4"):
        mtc.ones(2, 3, 4)[1, ..., 9]
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        mtc.ones(3)[5]


def test_setitem_value_is_expanded_not_broadcast():
    x = mtc.zeros(3, 2)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(2\) must match "
                                           r"the existing size \(3\)"):
        x[0] = mtc.ones(3)
    x[0] = mtc.ones(1, 1, 2)
    assert x[0].tolist() == [1.0, 1.0]
