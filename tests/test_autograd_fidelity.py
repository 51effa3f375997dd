"""Eager autograd against torch: programs modelled on pytorch's ``test/test_autograd.py``.

Each program names the torch test (class ``TestAutograd`` unless said otherwise) it is modelled
on. The outcome — the same exception type and message start, or the same values, dtypes and
gradients — must be torch's (``tests/fidelity.py``).
"""

from __future__ import annotations

import pytest

from .fidelity import run_program

pytestmark = pytest.mark.torch  # comparisons with torch; without it each program runs under mtc


def _x(T, rows=2, cols=3):
    return T.arange(1.0, rows * cols + 1, dtype=T.float64).reshape(rows, cols).requires_grad_()


# ------------------------------------------------------------------ in-place ops and views


def slice_imul_on_non_leaf(T):  # test_inplace_on_view_backward
    x = _x(T)
    y = x * 1
    y[1:] *= 2
    (y * y).sum().backward()
    return [y, x.grad, type(y.grad_fn).__name__]


def view_then_inplace_then_backward(T):  # test_inplace_on_view_of_view
    x = _x(T)
    y = x.clone()
    v = y.view(-1)[2:5]
    v.add_(x.view(-1)[:3])
    y.sum().backward()
    return [y, x.grad]


def inplace_on_view_leaf_error(T):  # test_inplace_on_view_leaf_errors
    x = _x(T)
    x[0].mul_(2)
    return [x]


def leaf_inplace_error(T):  # test_leaf_assignment / "a leaf Variable ... in-place"
    x = _x(T)
    x.add_(1)
    return [x]


def leaf_inplace_under_no_grad(T):  # test_no_grad_modifies_version (leaf update like SGD)
    x = _x(T)
    with T.no_grad():
        x.mul_(0.5)
    x.sum().backward()
    return [x, x.grad, x._version > 0]


def version_counter_error(T):  # test_saved_variable_version_counter
    x = _x(T)
    y = x.sigmoid()
    y.add_(1)  # sigmoid saved its result
    y.sum().backward()
    return [x.grad]


def version_counter_error_through_view(T):  # test_inplace_on_view_saved_output
    x = _x(T)
    y = x.exp()
    y[0].zero_()
    y.sum().backward()
    return [x.grad]


def inplace_on_input_saved_by_mul(T):  # test_inplace_not_requires_grad
    a = T.ones(3, dtype=T.float64)
    x = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = x * a
    a.mul_(2)  # mul saved `a` to compute x's gradient
    y.sum().backward()
    return [x.grad]


def view_chain_then_inplace(T):  # test_inplace_view_python (out-of-place views here)
    x = _x(T)
    y = (x + 0).unsqueeze(0).transpose(1, 2)
    y.sin_()
    y.sum().backward()
    return [y, x.grad]


def detach_shares_storage(T):  # test_detach
    x = _x(T)
    y = x * 2
    z = y.detach()
    z.zero_()  # modifies y too; y was not saved by anything
    w = y + x
    w.sum().backward()
    return [y, z.requires_grad, z.grad_fn is None, x.grad]


def detach_then_saved_modified(T):  # test_detach (modifying a detached saved value)
    x = _x(T)
    y = x.tanh()
    y.detach().zero_()
    y.sum().backward()
    return [x.grad]


def detach_inplace(T):  # test_detach_ (detach_ on a non-leaf)
    x = _x(T)
    y = x * 3
    y.detach_()
    return [y.requires_grad, y.grad_fn is None, y.is_leaf]


def detach_inplace_on_view_error(T):  # test_detach_ (a view cannot be detached in place)
    x = _x(T)
    y = (x * 3)[0]
    y.detach_()
    return [y]


# -------------------------------------------------------------- requires_grad, leaves, grad


def requires_grad_on_non_leaf_error(T):  # test_requires_grad_ (non-leaf)
    x = _x(T)
    (x * 2).requires_grad_(False)
    return []


def requires_grad_on_int_error(T):  # test_requires_grad_ (only floating point)
    T.arange(3).requires_grad_()
    return []


def requires_grad_true_on_non_leaf_is_fine(T):  # test_requires_grad_ (no-op)
    x = _x(T)
    y = (x * 2).requires_grad_()
    return [y.requires_grad, y.is_leaf]


def retain_grad_on_non_leaf(T):  # test_retain_grad
    x = _x(T)
    y = x * 2
    y.retain_grad()
    z = y * y
    z.sum().backward()
    return [y.grad, x.grad, y.retains_grad, z.retains_grad]


def retain_grad_accumulates(T):  # test_retain_grad_inplace
    x = _x(T)
    y = x ** 2
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return [y.grad, x.grad]


def non_leaf_grad_is_none(T):  # test_grad_nonleaf (.grad of a non-leaf is None, with a warning)
    import warnings
    x = _x(T)
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [y.grad]


def tensor_hooks(T):  # test_hooks
    x = _x(T)
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(g.clone()))
    y.register_hook(lambda g: g * 10)  # a hook's result replaces the gradient
    x.register_hook(lambda g: g + 1)
    (y * y).sum().backward()
    return [seen[0], x.grad]


def hook_removal(T):  # test_hooks (RemovableHandle.remove)
    x = _x(T)
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    (x * 3).sum().backward()
    return [x.grad]


def hook_on_no_grad_tensor_error(T):  # test_hook_none / register_hook without requires_grad
    T.ones(2).register_hook(lambda g: g)
    return []


def backward_twice_error(T):  # test_backward_twice_without_saved_values / retained graph
    x = _x(T)
    y = x.exp().sum()
    y.backward()
    y.backward()
    return [x.grad]


def backward_twice_without_saved_values(T):  # test_backward_twice_without_saved_values
    x = _x(T)
    y = (x + 1).sum()
    y.backward()
    y.backward()  # nothing was saved: allowed, and the gradient accumulates
    return [x.grad]


def backward_retain_graph_accumulates(T):  # test_accumulate_grad
    x = _x(T)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [x.grad]


def grad_reset_to_none_and_zero(T):  # test_grad_accumulation (after zero_/None)
    x = _x(T)
    (x * 2).sum().backward()
    x.grad.zero_()
    (x * 3).sum().backward()
    g = x.grad.clone()
    x.grad = None
    (x * 4).sum().backward()
    return [g, x.grad]


def backward_non_scalar_error(T):  # test_backward_no_grad / implicit grad for scalars only
    x = _x(T)
    (x * 2).backward()
    return []


def backward_with_gradient_shape_error(T):  # test_backward_badcalls
    x = _x(T)
    (x * 2).backward(T.ones(3, dtype=T.float64))
    return []


def backward_without_grad_fn_error(T):  # test_backward_badcalls (no grad_fn)
    T.ones(3).sum().backward()
    return []


# -------------------------------------------------------------------- grad modes and .grad


def grad_modes(T):  # test_no_grad / test_set_grad_enabled / test_enable_grad
    x = _x(T)
    with T.no_grad():
        a = x * 2
        with T.enable_grad():
            b = x * 2
    with T.set_grad_enabled(False):
        c = x * 2
    T.set_grad_enabled(False)
    d = x * 2
    T.set_grad_enabled(True)
    e = x * 2
    return [a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad,
            e.requires_grad, T.is_grad_enabled()]


def no_grad_decorator(T):  # test_no_grad_python_function
    @T.no_grad()
    def f(x):
        return x * 2

    return [f(_x(T)).requires_grad]


def autograd_grad_create_graph(T):  # test_grad (second derivatives)
    x = T.tensor([0.5, 1.5, -2.0], dtype=T.float64, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return [g, gg, g.requires_grad, x.grad]


def autograd_grad_unused_error(T):  # test_grad_nonleaf_many_outputs / allow_unused
    x = _x(T)
    z = _x(T)
    T.autograd.grad((x * 2).sum(), [x, z])
    return []


def autograd_grad_allow_unused(T):  # test_grad_unreachable
    x = _x(T)
    z = _x(T)
    gx, gz = T.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    return [gx, gz]


def autograd_grad_of_non_leaf(T):  # test_grad_nonleaf
    x = _x(T)
    y = x * 2
    z = (y * y).sum()
    (gy,) = T.autograd.grad(z, y)
    return [gy, x.grad]


def assign_grad_of_wrong_shape_error(T):  # test_grad_assignment (shape mismatch)
    x = _x(T)
    x.grad = T.ones(4, dtype=T.float64)
    return []


PROGRAMS = [
    slice_imul_on_non_leaf, view_then_inplace_then_backward, inplace_on_view_leaf_error,
    leaf_inplace_error, leaf_inplace_under_no_grad, version_counter_error,
    version_counter_error_through_view, inplace_on_input_saved_by_mul, view_chain_then_inplace,
    detach_shares_storage, detach_then_saved_modified, detach_inplace,
    detach_inplace_on_view_error, requires_grad_on_non_leaf_error, requires_grad_on_int_error,
    requires_grad_true_on_non_leaf_is_fine, retain_grad_on_non_leaf, retain_grad_accumulates,
    non_leaf_grad_is_none, tensor_hooks, hook_removal, hook_on_no_grad_tensor_error,
    backward_twice_error, backward_twice_without_saved_values,
    backward_retain_graph_accumulates, grad_reset_to_none_and_zero, backward_non_scalar_error,
    backward_with_gradient_shape_error, backward_without_grad_fn_error, grad_modes,
    no_grad_decorator, autograd_grad_create_graph, autograd_grad_unused_error,
    autograd_grad_allow_unused, autograd_grad_of_non_leaf, assign_grad_of_wrong_shape_error,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    run_program(program)
