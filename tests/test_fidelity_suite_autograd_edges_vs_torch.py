"""Autograd edge cases against torch — programs modelled on pytorch's ``test/test_autograd.py``:
``retain_graph`` errors, nested grad modes and decorators, inference tensors,
``requires_grad_``/``detach_`` rules, hooks and ``retain_grad``, ``autograd.grad``
arguments, version counters, and the names and ``output_nr`` of common nodes

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




def ag_retain_graph_false_error(T):
    x = _l(T)
    y = (x * x).sum()
    y.backward()
    y.backward()


def ag_retain_graph_true_twice(T):
    x = _l(T)
    y = (x.exp()).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [x.grad]


def ag_grad_then_backward_freed(T):
    x = _l(T)
    y = (x * x).sum()
    T.autograd.grad(y, x)
    y.backward()


def ag_set_grad_enabled_nested(T):
    x = _l(T)
    with T.set_grad_enabled(False):
        with T.enable_grad():
            a = x * 2
        b = x * 2
        with T.set_grad_enabled(True):
            c = x * 2
    return [a.requires_grad, b.requires_grad, c.requires_grad, T.is_grad_enabled()]


def ag_no_grad_decorator_on_function(T):
    @T.no_grad()
    def f(x):
        return x * 2

    @T.enable_grad()
    def g(x):
        return x * 2

    x = _l(T)
    with T.no_grad():
        r = g(x)
    return [f(x).requires_grad, r.requires_grad]


def ag_inference_mode_nested_false(T):
    x = _l(T)
    with T.inference_mode():
        with T.inference_mode(False):
            y = x * 2
        z = x * 2
    return [
        y.requires_grad,
        z.requires_grad,
        T.is_inference_mode_enabled(),
        z.is_inference(),
        y.is_inference(),
    ]


def ag_inference_tensor_requires_grad_error(T):
    with T.inference_mode():
        x = T.ones(2)
    x.requires_grad_()


def ag_inference_tensor_view_inplace(T):
    with T.inference_mode():
        x = T.ones(3)
        v = x[1:]
        v.add_(1)
    return [x, v.is_inference()]


def ag_views_of_inference_tensors_are_inference(T):
    with T.inference_mode():
        x = T.ones(2)
    return [x.detach().is_inference(), x[0:1].is_inference(), (x * 1).is_inference()]


def ag_requires_grad_nonfloat_error(T):
    return [T.tensor([1, 2], requires_grad=True)]


def ag_requires_grad_false_on_nonleaf(T):
    x = _l(T)
    y = x * 2
    y.requires_grad_(False)


def ag_requires_grad_true_on_nonleaf_fine(T):
    x = _l(T)
    y = x * 2
    y.requires_grad_(True)
    return [y.requires_grad, y.is_leaf]


def ag_detach_inplace_leaf(T):
    x = _l(T)
    y = x * 2
    y.detach_()
    return [y.requires_grad, y.grad_fn, y.is_leaf]


def ag_detach_shares_version(T):
    x = _l(T) * 1
    d = x.detach()
    d.add_(1)
    return [x._version, d._version, x]


def ag_hook_return_none_keeps(T):
    x = _l(T)
    x.register_hook(lambda g: None)
    (x * 3).sum().backward()
    return [x.grad]


def ag_hook_on_leaf_twice_backward(T):
    x = _l(T)
    seen = []
    x.register_hook(lambda g: seen.append(g.sum().item()))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return [seen, x.grad]


def ag_retain_grad_twice_accumulates(T):
    x = _l(T)
    y = x * 2
    y.retain_grad()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return [y.grad, y.retains_grad, x.retains_grad]


def ag_retain_grad_on_leaf_noop(T):
    x = _l(T)
    x.retain_grad()
    x.sum().backward()
    return [x.grad, x.retains_grad]


def ag_hook_modifies_then_retain_grad(T):
    x = _l(T)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    return [y.grad, x.grad]


def ag_register_hook_no_grad_error(T):
    T.ones(2).register_hook(lambda g: g)


def ag_backward_non_scalar_error(T):
    x = _l(T)
    (x * 2).backward()


def ag_backward_grad_wrong_shape(T):
    x = _l(T)
    (x * 2).backward(T.ones(3))


def ag_grad_allow_unused_materialize(T):
    x = _l(T)
    z = _l(T)
    y = (x * 2).sum()
    return [T.autograd.grad(y, [x, z], allow_unused=True, materialize_grads=True)]


def ag_grad_create_graph_requires(T):
    x = _l(T)
    (g,) = T.autograd.grad((x**3).sum(), x, create_graph=True)
    return [g.requires_grad, type(g.grad_fn).__name__, T.autograd.grad(g.sum(), x)[0]]


def ag_grad_of_leaf_itself(T):
    x = _l(T)
    return [T.autograd.grad(x.sum(), x)]


def ag_grad_input_not_requiring_error(T):
    x = _l(T)
    z = T.ones(2, 3)
    T.autograd.grad((x * z).sum(), z)


def ag_version_inplace_counts(T):
    x = T.ones(3)
    v0 = x._version
    x.add_(1)
    x[0] = 2
    x.zero_()
    y = x[1:]
    y.fill_(3)
    return [v0, x._version, y._version]


def ag_saved_tensor_modified_message(T):
    x = _l(T)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def ag_leaf_inplace_no_grad_ok(T):
    x = _l(T)
    with T.no_grad():
        x.mul_(2)
    x.sum().backward()
    return [x, x.grad, x._version]


def ag_grad_accumulate_then_none(T):
    x = _l(T)
    x.sum().backward()
    g = x.grad
    (2 * x).sum().backward()
    return [g is x.grad, x.grad]


def ag_is_leaf_of_detach_and_params(T):
    x = _l(T)
    return [x.detach().is_leaf, (x * 1).is_leaf, T.ones(2).is_leaf, x.detach().requires_grad]


def ag_backward_inputs_arg(T):
    x = _l(T)
    w = _l(T)
    (x * w).sum().backward(inputs=[w])
    return [x.grad, w.grad]


def ag_clone_keeps_graph(T):
    x = _l(T)
    y = x.clone()
    y.sum().backward()
    return [type(y.grad_fn).__name__, x.grad]


def ag_output_nr_and_next_functions(T):
    x = _l(T)
    a, b = x.unbind(0)
    return [a.output_nr, b.output_nr, [type(f[0]).__name__ for f in (a * b).grad_fn.next_functions]]


def ag_grad_fn_name_common(T):
    x = _l(T)
    outs = [
        x.sum(),
        x.mean(),
        x.t(),
        x[0],
        x.view(6),
        x.reshape(3, 2),
        x.expand(2, 2, 3),
        x.permute(1, 0),
        x.squeeze(),
        x.unsqueeze(0),
        x.transpose(0, 1),
        x.flatten(),
        x.narrow(1, 0, 2),
        x.contiguous(),
        x.to(T.float64),
        x.abs(),
        x.relu(),
        x.sigmoid(),
        x.tanh(),
        x.softmax(1),
        x.log_softmax(1),
        x @ x.t(),
        x.max(),
        x.amax(1),
        x.sort(1)[0],
        x.cumsum(1),
        x.clamp(0, 3),
        x.where(x > 2, 0.0),
    ]
    return [[type(o.grad_fn).__name__ for o in outs]]


def ag_double_backward_no_create_error(T):
    x = _l(T)
    (g,) = T.autograd.grad((x**2).sum(), x)
    g.sum().backward()


PROGRAMS = programs_of(globals())


test_program_matches_torch = program_tests(PROGRAMS)


def test_requires_grad_on_an_inference_tensor_only_inside_inference_mode():
    with mtc.inference_mode():
        x = mtc.ones(2)
        x.requires_grad_()  # allowed inside
    assert x.detach().is_inference() and x[1:].is_inference()  # views of one are too
    with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
        x.detach().requires_grad_()


def test_multi_output_nodes_are_named_and_numbered_like_torchs():
    x = mtc.arange(8.0).reshape(4, 2).requires_grad_() * 1
    for outs, name in ((x.unbind(), "UnbindBackward0"), (x.chunk(2), "SplitBackward0"),
                       (x.split([1, 3]), "SplitWithSizesBackward0")):
        assert [type(o.grad_fn).__name__ for o in outs] == [name] * len(outs)
        assert [o.output_nr for o in outs] == list(range(len(outs)))
    x.unbind()[2].sum().backward()  # (the renamed nodes backpropagate as before)


def test_a_weight_gradient_is_accumulated_in_place():
    m = mtc.nn.Linear(2, 1)
    m(mtc.ones(1, 2)).sum().backward()
    g = m.weight.grad
    assert g._base is None  # owns its memory (it was computed as a transpose)
    m(mtc.ones(1, 2)).sum().backward()
    assert m.weight.grad is g
    np.testing.assert_array_equal(g.numpy(), [[2.0, 2.0]])
