"""Views and in-place ops against torch — programs modelled on pytorch's
``test/test_view_ops.py`` (which ops return views of the base, contiguity, ``view``'s
shape errors, ``expand``/``narrow``/``select`` errors, writes through transposes, shared
version counters) and ``test/test_autograd.py``'s in-place tests (leaves, ``copy_``
gradients, saved outputs modified, ``.data`` assignment, in-place casting rules)

Each program's outcome must be torch's (``tests/fidelity.py``); without torch, each still runs
under mtc (it must not fail in an unexpected way).
"""

from __future__ import annotations

import pytest

from .fidelity import arange_leaf as _l
from .fidelity import program_tests, programs_of

pytestmark = pytest.mark.torch




def vo_is_view_of(T):
    x = T.arange(6.0).reshape(2, 3)
    outs = [
        x.t(),
        x[0],
        x.view(6),
        x.reshape(6),
        x.t().reshape(6),
        x.flatten(),
        x.unsqueeze(0),
        x.expand(2, 2, 3),
        x.narrow(1, 0, 2),
        x.transpose(0, 1).contiguous(),
        x.unflatten(1, (3, 1)),
        x.movedim(0, 1),
        x.view_as(x),
        x.select(1, 1),
        x.squeeze(),
        x.detach(),
        x.split(1)[0],
    ]
    return [[o._base is x._base for o in outs], [o.is_contiguous() for o in outs]]


def vo_view_incompatible_error(T):
    x = T.arange(6.0).reshape(2, 3).t()
    x.view(6)


def vo_view_dtype_shape_infer(T):
    x = T.arange(12.0)
    return [x.view(-1, 4).shape, x.view(3, -1).shape, x.reshape(2, -1, 2).shape]


def vo_view_two_minus_one_error(T):
    T.arange(12.0).view(-1, -1)


def vo_view_bad_numel_error(T):
    T.arange(12.0).view(5, 2)


def vo_inplace_through_transpose(T):
    x = T.zeros(2, 3)
    x.t()[0].fill_(1.0)
    x.t()[1, 1] = 5.0
    return [x]


def vo_inplace_on_expand_error(T):
    x = T.zeros(3)
    x.expand(2, 3).add_(1)


def vo_movedim_permute_values(T):
    x = T.arange(24).reshape(2, 3, 4)
    return [
        x.movedim(0, -1).shape,
        x.movedim((0, 1), (2, 0)).shape,
        x.permute(2, 0, 1)[1, 1],
        T.swapaxes(x, 0, 2).shape,
        x.mT.shape,
    ]


def vo_permute_error(T):
    T.ones(2, 3).permute(0, 0)


def vo_squeeze_dims_tuple(T):
    x = T.zeros(1, 2, 1, 3)
    return [
        x.squeeze((0, 2)).shape,
        x.squeeze(1).shape,
        x.squeeze(-2).shape,
        T.zeros(1).squeeze().shape,
    ]


def vo_expand_errors(T):
    T.ones(2, 3).expand(3, 3)


def vo_expand_minus_one_new_dim_error(T):
    T.ones(3).expand(-1, 3)


def vo_contiguous_returns_self(T):
    x = T.ones(2, 3)
    y = x.t()
    return [
        x.contiguous() is x,
        y.contiguous() is y,
        y.contiguous().is_contiguous(),
        y.is_contiguous(),
    ]


def vo_chunk_uneven(T):
    x = T.arange(5)
    return [x.chunk(3), x.chunk(5), x.chunk(10), T.arange(6).chunk(4)]


def vo_split_list_sizes_error(T):
    T.arange(5).split([2, 2])


def vo_unbind_neg_dim(T):
    x = T.arange(6).reshape(2, 3)
    return [x.unbind(-1), T.unbind(x, 0)]


def vo_narrow_errors(T):
    T.arange(5).narrow(0, 3, 3)


def vo_select_out_of_range(T):
    T.arange(6).reshape(2, 3).select(1, 3)


def vo_index_out_of_range_int(T):
    T.arange(6).reshape(2, 3)[2]


def vo_view_version_shared(T):
    x = T.ones(3)
    v = x[1:]
    v.add_(1)
    w = x.view(3)
    w.mul_(2)
    return [x._version, v._version, w._version, x]


def ip_leaf_inplace_error(T):
    x = _l(T)
    x.add_(1)


def ip_leaf_setitem_error(T):
    x = _l(T)
    x[0] = 0


def ip_nonleaf_inplace_ok_grad(T):
    x = _l(T)
    y = x * 2
    y.add_(1).mul_(3)
    y.sum().backward()
    return [y, x.grad, type(y.grad_fn).__name__]


def ip_inplace_returns_self(T):
    x = T.ones(2)
    return [x.add_(1) is x, x.zero_() is x, x.clamp_(0, 1) is x, x.copy_(T.ones(2)) is x]


def ip_inplace_broadcast_self_error(T):
    x = T.ones(3)
    x.add_(T.ones(2, 3))


def ip_copy_broadcast_and_dtype(T):
    x = T.zeros(2, 3)
    x.copy_(T.tensor([1, 2, 3]))
    y = T.zeros(2, dtype=T.int64)
    y.copy_(T.tensor([1.7, -2.7]))
    return [x, y]


def ip_copy_grad_to_src(T):
    a = _l(T)
    b = T.zeros(2, 3, requires_grad=True)
    c = b * 1
    c.copy_(a * 3)
    c.sum().backward()
    return [a.grad, b.grad, type(c.grad_fn).__name__]


def ip_inplace_on_output_of_relu_saved(T):
    x = _l(T) - 3
    y = x.relu()
    y.mul_(2)
    y.sum().backward()


def ip_sigmoid_inplace_then_backward(T):
    x = _l(T)
    y = (x * 1).sigmoid_()
    y.sum().backward()
    return [x.grad, type(y.grad_fn).__name__]


def ip_inplace_int_overflow_wraps(T):
    x = T.tensor([250], dtype=T.uint8)
    x.add_(10)
    return [x]


def ip_out_of_place_on_int_div(T):
    x = T.tensor([1, 2])
    x.div_(2)


def ip_mul_scalar_bool(T):
    x = T.tensor([True, False])
    x.mul_(True)
    return [x]


def ip_leaf_zero_in_no_grad_version(T):
    x = _l(T)
    with T.no_grad():
        x.zero_()
    return [x._version, x.requires_grad, x.is_leaf, x.grad_fn]


def ip_data_assignment(T):
    x = _l(T)
    x.data = T.zeros(2, 3)
    y = (x + 1).sum()
    y.backward()
    return [x, x.grad, x.requires_grad]


def ip_data_shape_change(T):
    x = _l(T)
    x.data = T.zeros(4)
    return [x.shape, x.requires_grad]


def ip_setitem_with_grad_value_into_plain(T):
    x = T.zeros(3)
    v = _l(T, 1)
    x[1] = v[0] * 2
    x.sum().backward()
    return [x.requires_grad, type(x.grad_fn).__name__, v.grad]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)
