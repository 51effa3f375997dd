"""Training-code idioms against torch: hooks, ``retain_graph``, double backward, grad modes,
``detach_``/``requires_grad_``, in-place ops on views and saved tensors (version counter
errors), leaf checks, the autograd graph's shape, gradient layouts, ``unique``, ``type()``,
gradient clipping, and the learning-rate schedules — programs modelled on pytorch's
``test/test_autograd.py``, ``test/test_nn.py`` and ``test/test_optim.py``.

Each program's outcome must be torch's (``tests/fidelity.py``): the same values, dtypes and
shapes, or the same exception type and first words of its message.
"""

from __future__ import annotations

import warnings

import pytest

from .fidelity import arange_leaf, programs_of, run_program

pytestmark = pytest.mark.torch


_x = arange_leaf


# ------------------------------------------------------------------ graph shape


def next_functions_of_mixed_inputs(T):  # test_next_functions
    x, y = _x(T), T.ones(2, 3)
    z = x * y + y
    fns = z.grad_fn.next_functions
    return [len(fns), fns[1], type(fns[0][0]).__name__, fns[0][1],
            type(fns[0][0].next_functions[0][0]).__name__]


def t_node_name(T):
    x = _x(T)
    return [type(x.t().grad_fn).__name__, type(x.transpose(0, 1).grad_fn).__name__,
            type(x.T.grad_fn).__name__, type(x.mT.grad_fn).__name__]


def saved_tensors_of_common_nodes(T):  # test_autograd_views_codegen / saved attributes
    x = _x(T)
    e = x.exp()
    p = x.pow(2)
    return [e.grad_fn._saved_result, p.grad_fn._saved_self, p.grad_fn._saved_exponent]


def saved_sizes_of_sum(T):
    return [tuple(_x(T).sum(1).grad_fn._saved_self_sym_sizes)]


def accumulate_grad_variable(T):
    x = _x(T)
    acc = (x * 2).grad_fn.next_functions[0][0]
    return [acc.variable is x, type(acc).__name__]


def grad_fn_of_leaf_and_detached(T):
    x = _x(T)
    return [x.grad_fn is None, x.detach().grad_fn is None, (x * 1).detach().requires_grad]


# ------------------------------------------------------------------ gradient layouts


def grad_of_transposed_computation_is_contiguous(T):  # test_grad_layout
    x = _x(T, 4, 3)
    (x.t() * T.arange(4.0)).sum().backward()
    return [x.grad, x.grad.stride(), x.grad.is_contiguous()]


def transposed_leaf_keeps_transposed_grad(T):
    w = T.arange(6.0).reshape(3, 2).t().requires_grad_()
    (w * w).sum().backward()
    g = w.grad
    (w * 3).sum().backward()
    return [w.grad, w.grad.stride(), g is w.grad]


def mm_weight_grad_layout(T):  # linear's weight gradient arrives transposed
    w = _x(T, 4, 3)
    x = T.arange(6.0).reshape(2, 3)
    (x @ w.t()).sum().backward()
    return [w.grad, w.grad.stride()]


def expanded_grad_is_copied(T):
    x = _x(T)
    x.sum().backward()
    x.grad.zero_()
    return [x.grad, x.grad.stride()]


# ------------------------------------------------------------------ hooks


def tensor_hook_scales_grad(T):  # test_hooks
    x = _x(T)
    x.register_hook(lambda g: g * 2)
    (x * 3).sum().backward()
    return [x.grad]


def hook_on_intermediate_sees_grad(T):
    x = _x(T)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    (y * y).sum().backward()
    return [seen[0], x.grad]


def hook_removed_handle(T):
    x = _x(T)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 1).sum().backward()
    return [x.grad]


def two_hooks_run_in_order(T):
    x = _x(T)
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    x.sum().backward()
    return [x.grad]


def hook_on_tensor_without_grad_errors(T):
    x = T.ones(2)
    x.register_hook(lambda g: g)
    return [x]


def retain_grad_on_intermediate(T):
    x = _x(T)
    y = x * x
    y.retain_grad()
    z = y.sum() * 2
    z.backward()
    return [y.grad, y.retains_grad, x.grad]


def post_accumulate_hook_sees_grad(T):
    x = _x(T)
    seen = []
    x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return seen


def module_forward_pre_hook_changes_input(T):
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.arange(6.0).reshape(2, 3))
        lin.bias.fill_(1.0)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    return [lin(T.ones(1, 3))]


def module_full_backward_hook_sees_grads(T):
    lin = T.nn.Linear(3, 2)
    with T.no_grad():
        lin.weight.copy_(T.arange(6.0).reshape(2, 3))
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((gi[0], go[0])))
    x = T.ones(1, 3, requires_grad=True)
    lin(x).sum().backward()
    return [seen[0][0], seen[0][1]]


# ------------------------------------------------------------------ retain_graph / create_graph


def second_backward_without_retain_graph_errors(T):  # test_retain_graph
    x = _x(T)
    y = (x * x).sum()
    y.backward()
    y.backward()
    return [x.grad]


def second_backward_with_retain_graph_accumulates(T):
    x = _x(T)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [x.grad]


def double_backward_of_cube(T):  # test_grad_nonleaf / create_graph
    x = _x(T)
    (g,) = T.autograd.grad((x ** 3).sum(), x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return [g, gg, g.requires_grad]


def double_backward_through_backward_call(T):
    x = _x(T)
    (x.sin() * x).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return [g.detach(), x.grad]


def grad_of_unused_input_errors(T):
    x, y = _x(T), _x(T)
    return list(T.autograd.grad((x * 2).sum(), [x, y]))


def grad_of_unused_input_allowed(T):
    x, y = _x(T), _x(T)
    return list(T.autograd.grad((x * 2).sum(), [x, y], allow_unused=True))


def grad_of_non_scalar_needs_grad_outputs(T):
    x = _x(T)
    (x * 2).backward()
    return [x.grad]


def backward_with_gradient_argument(T):
    x = _x(T)
    (x * 2).backward(T.full((2, 3), 0.5))
    return [x.grad]


def grad_outputs_shape_mismatch_errors(T):
    x = _x(T)
    (x * 2).backward(T.ones(3))
    return [x.grad]


def backward_on_tensor_without_grad_errors(T):
    T.ones(2).sum().backward()
    return []


# ------------------------------------------------------------------ grad modes


def no_grad_result_does_not_require_grad(T):
    x = _x(T)
    with T.no_grad():
        y = x * 2
    return [y.requires_grad, y.grad_fn is None, T.is_grad_enabled()]


def enable_grad_inside_no_grad(T):
    x = _x(T)
    with T.no_grad():
        with T.enable_grad():
            y = x * 2
        z = x * 2
    return [y.requires_grad, z.requires_grad]


def set_grad_enabled_false_and_as_function(T):
    x = _x(T)
    with T.set_grad_enabled(False):
        y = x * 2
    T.set_grad_enabled(False)
    z = x * 2
    T.set_grad_enabled(True)
    return [y.requires_grad, z.requires_grad, T.is_grad_enabled()]


def no_grad_as_decorator(T):
    @T.no_grad()
    def f(x):
        return x * 2
    return [f(_x(T)).requires_grad]


def inplace_under_no_grad_on_leaf(T):  # parameters updated by hand
    w = _x(T)
    with T.no_grad():
        w.sub_(0.5 * T.ones(2, 3))
    return [w, w.requires_grad, w.is_leaf, w.grad_fn is None]


def requires_grad_propagates_through_ops(T):
    a, b = T.ones(2), T.ones(2, requires_grad=True)
    return [(a + 1).requires_grad, (a + b).requires_grad, (a + b).is_leaf,
            b.is_leaf, (b * 1).detach().is_leaf]


# ------------------------------------------------------------------ detach_ / requires_grad_


def detach_inplace_cuts_history(T):
    x = _x(T)
    y = x * 2
    y.detach_()
    return [y.requires_grad, y.grad_fn is None, y.is_leaf]


def detach_inplace_of_view_errors(T):
    x = _x(T)
    y = (x * 2)[0]
    y.detach_()
    return [y]


def requires_grad_on_non_leaf_errors(T):
    x = _x(T)
    (x * 2).requires_grad_(False)
    return []


def requires_grad_on_integer_tensor_errors(T):
    T.ones(2, dtype=T.int64).requires_grad_()
    return []


def detached_shares_storage_and_version(T):
    x = _x(T)
    d = x.detach()
    d.zero_()
    return [x, x._version == d._version]


PROGRAMS = programs_of(globals())


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_program(program)
