"""Autograd and nn programs ported from pytorch's test suites, third sweep — from
``test/test_autograd.py`` (``test_retain_grad_inplace``, ``test_retain_grad_inplace_over_view``,
``test_no_grad_modifies_version``, ``test_set_grad_enabled``, ``mark_dirty``, a custom
Function's wrong gradient count or shape, ``create_graph`` accumulation, a gradient penalty
through linear layers), ``test/test_nn.py`` (shared submodules, buffers through
``load_state_dict``, registration errors, dropout's scaling) and ``test/test_optim.py``
(``maximize``, Adam's state, ``load_state_dict`` of state, argument errors).

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




def ta_retain_grad_inplace(T):  # test_retain_grad_inplace
    a = _l(T)
    x = a.clone()
    x.retain_grad()
    x.mul_(2)
    x.sum().backward()
    return [x.grad, a.grad]


def ta_retain_grad_inplace_over_view(T):
    base = _l(T) * 1
    a = base[1]
    a.retain_grad()
    a.mul_(3)
    base.sum().backward()
    return [a.grad, a.retains_grad]


def ta_hook_on_inplace_modified(T):
    x = _l(T)
    y = x * 1
    seen = []
    y.register_hook(lambda g: seen.append(g.sum().item()))
    y.mul_(2)
    y.sum().backward()
    return [seen, x.grad]


def ta_requires_grad_inplace_view_of_leaf(T):
    a = T.ones(3)
    b = a[:2]
    b.requires_grad_()
    return [b.requires_grad, b.is_leaf, a.requires_grad]


def ta_detach_inplace_on_view_error(T):
    x = _l(T) * 1
    v = x[0]
    v.detach_()


def ta_detach_then_inplace_no_effect_on_graph(T):
    x = _l(T)
    y = x * 2
    z = y.detach()
    z.zero_()
    y.sum().backward()
    return [x.grad, y]


def ta_no_grad_modifies_version(T):
    x = _l(T)
    y = x * 2
    with T.no_grad():
        y.add_(1)
    return [y._version, y.requires_grad, type(y.grad_fn).__name__]


def ta_set_grad_enabled_context_returns(T):
    with T.set_grad_enabled(False) as g:
        a = T.is_grad_enabled()
    return [g is None, a, T.is_grad_enabled()]


def ta_grad_mode_in_thread_default(T):
    with T.no_grad():
        f = T.is_grad_enabled()
    return [f, T.is_grad_enabled()]


def ta_grad_nonleaf_none_warn_value(T):
    x = _l(T)
    y = x * 2
    z = y.sum()
    z.backward()
    return [y.grad, x.grad]


def ta_backward_create_graph_grad_requires(T):
    x = _l(T)
    (x**2).sum().backward(create_graph=True)
    return [x.grad.requires_grad, type(x.grad.grad_fn).__name__]


def ta_grad_of_sum_twice_retain(T):
    x = _l(T)
    y = (x * x).sum()
    (a,) = T.autograd.grad(y, x, retain_graph=True)
    (b,) = T.autograd.grad(y, x)
    return [a, b]


def ta_grad_outputs_none_for_scalar(T):
    x = _l(T)
    return [T.autograd.grad((x * 3).sum(), x, grad_outputs=None)]


def ta_grad_multiple_outputs_list(T):
    x = _l(T)
    return [T.autograd.grad([(x * 2).sum(), (x * x).sum()], [x])]


def ta_backward_on_leaf_scalar(T):
    x = T.tensor(3.0, requires_grad=True)
    x.backward()
    return [x.grad]


def ta_integer_grad_argument_error(T):
    x = _l(T)
    (x * 2).backward(T.ones(2, 3, dtype=T.int64))
    return [x.grad]


def ta_version_after_setitem_views(T):
    x = T.zeros(4)
    a = x[:2]
    b = x[2:]
    a[0] = 1
    b.add_(1)
    x.mul_(2)
    return [x._version, a._version, b._version, x]


def ta_custom_function_inplace_mark_dirty(T):
    class Inc(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = _l(T)
    b = a * 1
    c = Inc.apply(b)
    c.sum().backward()
    return [c is b, a.grad, type(c.grad_fn).__name__.startswith("Inc")]


def ta_function_once_differentiable_error(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    F.apply(_l(T)).sum().backward()


def ta_custom_function_returns_wrong_shape_grad(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g.sum()

    F.apply(_l(T)).sum().backward()


def nn_forward_pre_hook_kwargs_and_removal(T):
    m = T.nn.Linear(2, 2)
    with T.no_grad():
        m.weight.fill_(1.0)
        m.bias.zero_()
    h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    a = m(T.ones(1, 2))
    h.remove()
    b = m(T.ones(1, 2))
    return [a, b]


def nn_module_call_kwargs(T):
    class M(T.nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    return [M()(T.ones(2), scale=3.0)]


def nn_named_parameters_shared_dedup(T):
    lin = T.nn.Linear(2, 2)
    m = T.nn.Sequential(lin, lin)
    return [
        [n for n, _ in m.named_parameters()],
        [n for n, _ in m.named_parameters(remove_duplicate=False)],
        len(list(m.modules())),
    ]


def nn_state_dict_of_shared(T):
    lin = T.nn.Linear(2, 2)
    m = T.nn.Sequential(lin, lin)
    return [list(m.state_dict().keys())]


def nn_load_state_dict_with_buffers(T):
    a = T.nn.BatchNorm1d(2)
    b = T.nn.BatchNorm1d(2)
    a.train()
    a(T.arange(8.0).reshape(4, 2))
    b.load_state_dict(a.state_dict())
    return [b.running_mean, b.running_var, b.num_batches_tracked]


def nn_load_state_dict_non_strict_missing_buffer(T):
    b = T.nn.BatchNorm1d(2)
    sd = b.state_dict()
    del sd["num_batches_tracked"]
    r = b.load_state_dict(sd, strict=False)
    return [list(r.missing_keys)]


def nn_module_half_float_params(T):
    m = T.nn.Linear(2, 2).to(T.float64)
    return [m.weight.dtype, type(m.weight).__name__, m.weight.requires_grad, m.weight.is_leaf]


def nn_module_requires_grad_false_then_backward(T):
    m = T.nn.Linear(2, 1)
    m.weight.requires_grad_(False)
    m(T.ones(1, 2)).sum().backward()
    return [m.weight.grad, m.bias.grad]


def nn_embedding_max_norm_padding(T):
    T.manual_seed(0)
    e = T.nn.Embedding(4, 2, padding_idx=0)
    return [e.weight[0], e(T.tensor([0, 0])).sum().item()]


def nn_functional_softmax_dim_required_warn(T):
    return [
        T.nn.functional.softmax(T.tensor([[1.0, 2.0]]), dim=-1),
        T.nn.functional.log_softmax(T.tensor([1.0, 2.0]), 0),
    ]


def nn_dropout_train_scaling(T):
    T.manual_seed(0)
    d = T.nn.Dropout(0.5)
    x = T.ones(1000)
    y = d(x)
    vals = sorted(set(y.tolist()))
    return [vals, d.eval()(x).sum().item()]


def nn_linear_no_bias_state_dict(T):
    m = T.nn.Linear(2, 3, bias=False)
    return [list(m.state_dict().keys()), m.bias]


def nn_module_name_errors(T):
    """(torch raises KeyError: caught here, as the runner counts a KeyError as ours)"""
    out = []
    for f in (lambda: T.nn.Sequential().add_module("a.b", T.nn.ReLU()),
              lambda: T.nn.Module().register_parameter("", T.nn.Parameter(T.ones(1))),
              lambda: T.nn.Module().register_buffer("x.y", T.ones(1))):
        try:
            f()
        except KeyError as e:
            out.append(str(e))
    return out


def nn_parameter_of_non_leaf_error(T):
    m = T.nn.Module()
    x = _l(T) * 2
    m.register_parameter("w", T.nn.Parameter(x))
    return [m.w.is_leaf, m.w.requires_grad]


def op_sgd_weight_decay_maximize_step(T):
    w = T.nn.Parameter(T.tensor([1.0, -1.0]))
    o = T.optim.SGD([w], lr=0.1, weight_decay=0.1, maximize=True)
    (w * w).sum().backward()
    o.step()
    return [w]


def op_adam_state_step_tensor(T):
    w = T.nn.Parameter(T.tensor([1.0]))
    o = T.optim.Adam([w])
    (w * 2).sum().backward()
    o.step()
    o.step()
    st = o.state[w]
    return [
        sorted(st.keys()),
        type(st["step"]).__name__,
        st["step"],
        st["exp_avg"],
        st["exp_avg_sq"],
    ]


def op_load_state_dict_casts_state(T):
    w = T.nn.Parameter(T.tensor([1.0]))
    o = T.optim.Adam([w], lr=0.5)
    (w * 2).sum().backward()
    o.step()
    w2 = T.nn.Parameter(T.tensor([1.0]))
    o2 = T.optim.Adam([w2], lr=0.1)
    o2.load_state_dict(o.state_dict())
    return [o2.param_groups[0]["lr"], o2.state[w2]["exp_avg"]]


def op_add_param_group_overlap_error(T):
    w = T.nn.Parameter(T.ones(1))
    o = T.optim.SGD([w], lr=0.1)
    o.add_param_group({"params": [w]})


def op_param_not_leaf_error(T):
    T.optim.SGD([_l(T) * 2], lr=0.1)


def op_params_is_tensor_error(T):
    T.optim.SGD(T.nn.Parameter(T.ones(1)), lr=0.1)


def ta_gradient_penalty_through_linear(T):
    T.manual_seed(0)
    m = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.Tanh(), T.nn.Linear(4, 1))
    with T.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(T.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 4)
    x = T.linspace(-1.0, 1.0, 6).reshape(2, 3).requires_grad_()
    (gx,) = T.autograd.grad(m(x).sum(), x, create_graph=True)
    penalty = ((gx.norm(dim=1) - 1) ** 2).mean()
    penalty.backward()
    return [gx, penalty] + [p.grad for p in m.parameters()]


def ta_create_graph_accumulates_out_of_place(T):
    x = _l(T)
    (x**3).sum().backward(create_graph=True)
    g1 = x.grad
    (x**2).sum().backward(create_graph=True)
    return [g1 is x.grad, x.grad, type(x.grad.grad_fn).__name__]


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_retain_grad_follows_the_tensor_through_an_inplace_op():
    x = mtc.arange(1.0, 4.0).requires_grad_()
    y = x.clone()
    y.retain_grad()
    y.mul_(2)
    y.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(3))  # of the written y, not of 2y
    assert y.retains_grad and not x.retains_grad


def test_create_graph_stores_a_recorded_copy_and_double_backward_reaches_the_weights():
    m = mtc.nn.Linear(2, 1)
    m(mtc.ones(3, 2)).pow(2).sum().backward(create_graph=True)
    g = m.weight.grad
    assert g.requires_grad and type(g.grad_fn).__name__ == "CopyBackwards"
    (gw,) = mtc.autograd.grad(g.sum(), m.weight)  # a linear weight's gradient (a view) kept
    assert gw is not None and gw.shape == m.weight.shape  # its graph: not a detach()
    with mtc.set_grad_enabled(False) as nothing:
        assert nothing is None and not mtc.is_grad_enabled()
