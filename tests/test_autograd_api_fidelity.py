"""The autograd API against torch: custom ``Function``s, ``autograd.grad``/``backward``
arguments and their errors — programs modelled on pytorch's ``test/test_autograd.py``
(``TestAutograd`` unless said otherwise).

Outcomes are compared by ``tests/fidelity.py``: the same values, dtypes and gradients, or the
same exception type and message start.
"""

from __future__ import annotations

import pytest

from .fidelity import run_program

pytestmark = pytest.mark.torch  # comparisons with torch; without it each program runs under mtc


def _x(T):
    return T.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=T.float64, requires_grad=True)


def _scale_function(T, returned):
    """A custom Function whose backward returns ``returned(grad, ctx)``."""
    class Scale(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            ctx.save_for_backward(x)
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return returned(grad, ctx)

    return Scale


def custom_function_with_needs_input_grad(T):  # test_function
    flags = []

    def backward(grad, ctx):
        flags.append(list(ctx.needs_input_grad))
        (x,) = ctx.saved_tensors
        return grad * ctx.k + x * 0, None

    x = _x(T)
    y = _scale_function(T, backward).apply(x, 3.0)
    y.sum().backward()
    return [y, x.grad, flags[0], y.grad_fn.name()]


def custom_function_wrong_number_of_grads(T):  # test_function_returns_too_many_grads
    x = _x(T)
    y = _scale_function(T, lambda grad, ctx: (grad, None, None)).apply(x, 2.0)
    y.sum().backward()
    return [x.grad]


def custom_function_wrong_grad_shape(T):  # test_function_returns_invalid_gradient_shape
    x = _x(T)
    y = _scale_function(T, lambda grad, ctx: (grad.sum(0), None)).apply(x, 2.0)
    y.sum().backward()
    return [x.grad]


def custom_function_grad_broadcastable_is_summed(T):  # validate_outputs: sum_to_size
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = _scale_function(T, lambda grad, ctx: (grad.expand(2, 3), None)).apply(x, 2.0)
    y.sum().backward()
    return [x.grad]


def _double_in_place(T):
    """A custom Function that doubles its input in place and marks it dirty."""
    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return Double


def custom_function_mark_dirty_leaf_error(T):  # test_mark_dirty_leaf (a leaf written)
    Double = _double_in_place(T)
    Double.apply(_x(T))
    return []


def custom_function_mark_dirty(T):  # test_dirty_inplace / mark_dirty
    Double = _double_in_place(T)
    x = _x(T)
    y = x * 1
    z = Double.apply(y)
    (z * z).sum().backward()
    return [z, x.grad, z is y]


def custom_function_non_differentiable_output(T):  # test_mark_non_differentiable_mixed
    class MaxAndIndex(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.max(1, keepdim=True)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.x_shape = x.shape
            return values, idx

        @staticmethod
        def backward(ctx, grad_values, grad_idx):
            (idx,) = ctx.saved_tensors
            return T.zeros(ctx.x_shape, dtype=grad_values.dtype).scatter_add(1, idx, grad_values)

    x = _x(T)
    values, idx = MaxAndIndex.apply(x)
    (values * T.tensor([[2.0], [3.0]], dtype=T.float64)).sum().backward()
    return [values, idx, idx.requires_grad, x.grad]


def grad_with_grad_outputs(T):  # test_grad (grad_outputs)
    x = _x(T)
    y = x.exp()
    (g,) = T.autograd.grad(y, x, grad_outputs=T.full((2, 3), 0.5, dtype=T.float64))
    return [g, x.grad]


def grad_of_output_not_requiring_grad(T):  # test_grad_badcalls
    x = _x(T)
    T.autograd.grad(x.detach().sum(), x)
    return []


def grad_wrt_input_not_requiring_grad(T):  # test_grad_badcalls (input without grad)
    x = _x(T)
    z = T.ones(3, dtype=T.float64)
    T.autograd.grad((x * 2).sum(), [x, z])
    return []


def grad_outputs_wrong_shape(T):  # test_grad_badcalls (grad_outputs shape)
    x = _x(T)
    T.autograd.grad(x * 2, x, grad_outputs=T.ones(3, dtype=T.float64))
    return []


def backward_with_inputs(T):  # test_backward_with_inputs
    x = _x(T)
    w = _x(T)
    (x * w).sum().backward(inputs=[w])
    return [x.grad, w.grad]


def double_backward_of_sin(T):  # test_gradgrad / create_graph through a chain
    x = _x(T)
    (g,) = T.autograd.grad(x.sin().sum(), x, create_graph=True)
    (gg,) = T.autograd.grad((g * g).sum(), x)
    return [g, gg]


def hook_on_leaf_changes_accumulated_grad(T):  # test_hooks (leaf hook before accumulation)
    x = _x(T)
    x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    (x * 1).sum().backward()
    return [x.grad]


def copy_grad_into_plain_tensor(T):  # test_copy_ (copy_ of a tensor requiring grad)
    x = _x(T)
    buf = T.zeros(2, 3, dtype=T.float64)
    buf.copy_(x * 2)
    (buf * buf).sum().backward()
    return [buf.requires_grad, buf.grad_fn.name().split("::")[-1], x.grad]


def view_of_non_contiguous_error(T):  # test_view_ops.py: test_view (incompatible strides)
    x = _x(T)
    x.t().view(-1)
    return []


def expand_and_sum_to_size_grads(T):  # test_expand / test_sum_to_with_empty_dim_grad
    x = T.tensor([[1.0], [2.0]], dtype=T.float64, requires_grad=True)
    y = x.expand(2, 4) * T.arange(4.0, dtype=T.float64)
    z = y.sum_to_size(2, 1)
    z.sum().backward()
    return [z, x.grad]


def no_grad_result_backward_error(T):  # test_no_grad (result has no grad_fn)
    x = _x(T)
    with T.no_grad():
        y = (x * 2).sum()
    y.backward()
    return []


PROGRAMS = [
    custom_function_with_needs_input_grad, custom_function_wrong_number_of_grads,
    custom_function_wrong_grad_shape, custom_function_grad_broadcastable_is_summed,
    custom_function_mark_dirty, custom_function_mark_dirty_leaf_error,
    custom_function_non_differentiable_output,
    grad_with_grad_outputs, grad_of_output_not_requiring_grad, grad_wrt_input_not_requiring_grad,
    grad_outputs_wrong_shape, backward_with_inputs, double_backward_of_sin,
    hook_on_leaf_changes_accumulated_grad, copy_grad_into_plain_tensor,
    view_of_non_contiguous_error, expand_and_sum_to_size_grads, no_grad_result_backward_error,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)
