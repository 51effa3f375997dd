"""More autograd and nn idioms against torch, modelled on pytorch's ``test/test_autograd.py``
and ``test/test_nn.py``: ``Node`` hooks and pre-hooks, custom Functions
(``mark_non_differentiable``, ``needs_input_grad``), ``load_state_dict`` strictness,
``parameters_to_vector``, ``autograd.functional`` (``jacobian``, ``hessian``, ``vjp``),
anomaly mode, higher-order gradients, hook handles, and in-place writes to the outputs of
``unbind``/``split`` (torch's multi-output-view error).

Each program's outcome must be torch's (``tests/fidelity.py``); the torch-free tests at the end
state the behaviours added for them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch_compile as mtc

from .fidelity import programs_of, run_program

pytestmark = pytest.mark.torch


def x_(T):
    return T.arange(1.0, 7.0).reshape(2, 3).requires_grad_()


def node_hook(T):
    x = x_(T)
    y = x * 2
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].clone(), go[0].clone())))
    y.sum().backward()
    return [seen[0][0], seen[0][1], x.grad]


def node_prehook(T):
    x = x_(T)
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    return [x.grad]


def custom_fn(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return g1 * b + g2, g1 * a + g2

    a, b = x_(T), x_(T) * 1
    o1, o2 = F.apply(a, b)
    (o1 + o2).sum().backward()
    return [a.grad, type(o1.grad_fn).__name__]


def mark_non_diff(T):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            i = a.argmax()
            ctx.mark_non_differentiable(i)
            return a * 2, i

        @staticmethod
        def backward(ctx, g, gi):
            return g * 2

    a = x_(T)
    o, i = F.apply(a)
    o.sum().backward()
    return [a.grad, i.requires_grad]


def needs_input_grad(T):
    res = []

    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            res.append(ctx.needs_input_grad)
            return g, None

    F.apply(x_(T), T.ones(2, 3)).sum().backward()
    return [res[0]]


def module_state_dict_strict(T):
    m = T.nn.Linear(2, 2)
    sd = m.state_dict()
    sd.pop("bias")
    return [m.load_state_dict(sd)]


def module_state_dict_nonstrict(T):
    m = T.nn.Linear(2, 2)
    sd = m.state_dict()
    sd.pop("bias")
    sd["extra"] = T.ones(1)
    r = m.load_state_dict(sd, strict=False)
    return [list(r.missing_keys), list(r.unexpected_keys)]


def module_requires_grad_(T):
    m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU(), T.nn.Linear(2, 1))
    m.requires_grad_(False)
    return [[p.requires_grad for p in m.parameters()], [n for n, _ in m.named_parameters()]]


def params_to_vector(T):
    m = T.nn.Linear(2, 2)
    with T.no_grad():
        for p in m.parameters():
            p.fill_(0.5)
    v = T.nn.utils.parameters_to_vector(m.parameters())
    T.nn.utils.vector_to_parameters(v * 2, m.parameters())
    return [v, m.weight]


def jacobian(T):
    return [T.autograd.functional.jacobian(lambda x: x**2, T.tensor([1.0, 2.0]))]


def hessian(T):
    return [T.autograd.functional.hessian(lambda x: (x**3).sum(), T.tensor([1.0, 2.0]))]


def vjp(T):
    return list(
        T.autograd.functional.vjp(lambda x: x**2, T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0]))
    )


def grad_of_grad_twice(T):
    x = T.tensor(2.0, requires_grad=True)
    y = x**4
    (g1,) = T.autograd.grad(y, x, create_graph=True)
    (g2,) = T.autograd.grad(g1, x, create_graph=True)
    (g3,) = T.autograd.grad(g2, x)
    return [g1, g2, g3]


def retain_graph_default_with_create_graph(T):
    x = x_(T)
    y = (x**2).sum()
    T.autograd.grad(y, x, create_graph=True)
    (g,) = T.autograd.grad(y, x)
    return [g]


def anomaly_mode(T):
    with T.autograd.detect_anomaly():
        x = x_(T)
        (x * 2).sum().backward()
    return [x.grad]


def set_detect_anomaly(T):
    T.autograd.set_detect_anomaly(False)
    return [T.is_anomaly_enabled()]


def grad_mode_inference_decorator(T):
    @T.inference_mode()
    def f(x):
        return x * 2

    return [f(x_(T)).requires_grad]


def clip_grad_norm_error_if_nonfinite(T):
    x = x_(T)
    (x * float("inf")).sum().backward()
    return [T.nn.utils.clip_grad_norm_([x], 1.0, error_if_nonfinite=True)]


def zero_grad_module(T):
    m = T.nn.Linear(2, 1)
    m(T.ones(1, 2)).sum().backward()
    m.zero_grad()
    return [m.weight.grad is None]


def optimizer_add_param_group(T):
    a = T.nn.Parameter(T.ones(2))
    b = T.nn.Parameter(T.ones(2))
    o = T.optim.SGD([a], lr=0.1)
    o.add_param_group({"params": [b], "lr": 0.5})
    (a.sum() + b.sum()).backward()
    o.step()
    return [a, b, len(o.param_groups)]


def optimizer_dup_param_errors(T):
    a = T.nn.Parameter(T.ones(2))
    o = T.optim.SGD([a], lr=0.1)
    o.add_param_group({"params": [a]})
    return []


def grad_requires_float(T):
    x = T.tensor([1, 2])
    return [T.autograd.grad(x.sum(), x)]


def backward_twice_leaf_only(T):
    x = x_(T)
    y = x.sum()
    y.backward()
    y.backward()
    return [x.grad]


def register_hook_returns_handle_remove_twice(T):
    x = x_(T)
    h = x.register_hook(lambda g: g)
    h.remove()
    h.remove()
    (x * 1).sum().backward()
    return [x.grad]


def nonleaf_grad_access(T):
    x = x_(T)
    y = x * 2
    y.sum().backward()
    return [y.grad]


def is_leaf_of_param_ops(T):
    p = T.nn.Parameter(T.ones(2))
    return [p.is_leaf, (p * 2).is_leaf, p.detach().is_leaf, type(p).__name__, repr(p)[:9]]


def inplace_on_detached_of_saved(T):
    x = x_(T)
    y = x.sigmoid()
    y.detach().zero_()
    y.sum().backward()
    return [x.grad]


def expand_inplace_error(T):
    x = T.ones(3)
    x.expand(2, 3).add_(1)
    return [x]


def view_of_view_inplace_grad(T):
    x = x_(T)
    y = x * 1
    y[0][1:].mul_(5)
    y.sum().backward()
    return [x.grad]


def unbind_inplace_error(T):
    x = x_(T) * 1
    a, b = x.unbind(0)
    a.mul_(2)
    return [x]


def split_inplace_error(T):
    x = x_(T) * 1
    a, b = x.split(1, 0)
    a.mul_(2)
    return [x]


PROGRAMS = [p for p in programs_of(globals()) if p is not x_]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_program_matches_torch(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_program(program)


def test_node_hooks_see_and_replace_gradients():
    x = x_(mtc)
    y = x * 2
    seen = []
    handle = y.grad_fn.register_hook(lambda gi, go: seen.append(go[0].sum().item()))
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    assert seen == [60.0]
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 20.0))
    handle.remove()
    handle.remove()  # a second remove does nothing, as in torch


def test_writing_an_output_of_unbind_in_place_is_torchs_error():
    x = x_(mtc) * 1
    a, b = x.unbind(0)
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
        b.mul_(2)
    with pytest.raises(RuntimeError, match="Output 0 of Select is a view"):
        x.split(1, 0)[0][0].mul_(2)
    with mtc.no_grad():
        a.mul_(2)  # allowed without grad mode, and for tensors that need no grad
    c, _ = mtc.ones(2, 3).unbind(0)
    c.mul_(2)


def test_functional_jacobian_and_hessian_of_a_cubic():
    x = mtc.tensor([1.0, 2.0])
    jac = mtc.autograd.functional.jacobian(lambda v: v**3, x)
    hess = mtc.autograd.functional.hessian(lambda v: (v**3).sum(), x)
    np.testing.assert_allclose(jac.numpy(), np.diag([3.0, 12.0]))
    np.testing.assert_allclose(hess.numpy(), np.diag([6.0, 12.0]))
    assert not jac.requires_grad and not x.requires_grad


def test_anomaly_flag_and_parameter_vectors():
    assert not mtc.is_anomaly_enabled()
    with mtc.autograd.detect_anomaly():
        assert mtc.is_anomaly_enabled()
    assert not mtc.is_anomaly_enabled()
    m = mtc.nn.Linear(2, 2)
    v = mtc.nn.utils.parameters_to_vector(m.parameters())
    mtc.nn.utils.vector_to_parameters(v * 0 + 3, m.parameters())
    assert v.shape == (6,) and float(m.bias.sum().item()) == 6.0
