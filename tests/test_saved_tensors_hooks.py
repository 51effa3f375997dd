"""``autograd.graph.saved_tensors_hooks`` / ``save_on_cpu`` / ``disable_saved_tensors_hooks``.

Eager semantics against torch 2.13's where torch is installed (the same program, the hooks'
call log and the gradients compared), against the same program without hooks always; and
under ``mtc.compile`` a hook context inside the compiled function is a graph break (as in
torch), so values equal eager's even for hooks that change values.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.autograd.graph import (
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def program(T, x, y):
    return ((x.exp() * y).sin() * x).sum()


def arrays(seed=0, shape=(3, 4)):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(2)]


def logged_run(T, graph, xs):
    """Run ``program`` under logging hooks; the log of (event, shape, has grad_fn, grad mode)
    and the inputs' gradients."""
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), t.grad_fn is not None, T.is_grad_enabled()))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack", T.is_grad_enabled()))
        return p[1]

    x, y = (T.tensor(a, requires_grad=True) for a in xs)
    with graph.saved_tensors_hooks(pack, unpack):
        loss = program(T, x, y)
    log.append("backward")
    loss.backward()
    return log, [x.grad.numpy(), y.grad.numpy()]


@needs_torch
def test_pack_and_unpack_calls_match_torchs():
    xs = arrays()
    ours, our_grads = logged_run(mtc, mtc.autograd.graph, xs)
    theirs, their_grads = logged_run(torch, torch.autograd.graph, xs)
    assert ours == theirs
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@settings(deadline=None)
@given(st.tuples(st.integers(1, 4), st.integers(1, 4)), st.integers(0, 3))
def test_value_preserving_hooks_give_the_gradients_without_hooks(shape, seed):
    xs = arrays(seed, shape)
    _, hooked = logged_run(mtc, mtc.autograd.graph, xs)
    x, y = (mtc.tensor(a, requires_grad=True) for a in xs)
    program(mtc, x, y).backward()
    for a, b in zip(hooked, [x.grad.numpy(), y.grad.numpy()]):
        np.testing.assert_array_equal(a, b)


def test_save_on_cpu_copies_and_gives_the_same_gradients():
    xs = arrays()
    x, y = (mtc.tensor(a, requires_grad=True) for a in xs)
    with save_on_cpu():
        loss = program(mtc, x, y)
    loss.backward()
    x2, y2 = (mtc.tensor(a, requires_grad=True) for a in xs)
    program(mtc, x2, y2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    # the pack hook copied: an in-place change after the save is not seen (and not an error,
    # the version check is the hooks' business)
    a = mtc.tensor(xs[0], requires_grad=True)
    b = a * 1
    with save_on_cpu():
        c = (b * b).sum()
    with mtc.no_grad():
        b.add_(1)
    c.backward()
    np.testing.assert_allclose(a.grad.numpy(), 2 * xs[0], rtol=1e-6)


def test_an_npu_tensor_saved_on_cpu_comes_back_to_the_npu():
    seen = []
    x = mtc.tensor(arrays()[0]).to("npu").requires_grad_()
    with save_on_cpu():
        y = x.sin()
    y.grad_fn.register_prehook(lambda g: seen.append(y.grad_fn._saved_self.device.type))
    y.sum().backward()
    assert seen == ["npu"]
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.cos(arrays()[0]), rtol=1e-6)


def test_nested_hooks_innermost_wins_and_unpack_runs_at_every_access():
    log = []
    x = mtc.tensor(arrays()[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: log.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: log.append("inner") or t,
                                 lambda t: log.append("unpack") or t):
            y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert log == ["inner", "inner", "unpack", "unpack", "unpack", "unpack"]


def test_the_hooks_see_leaves_and_outputs_themselves():
    seen = []
    x = mtc.tensor(arrays()[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        y = x.exp()
    assert len(seen) == 1 and seen[0] is y and y.grad_fn is not None
    seen.clear()
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        x.sin()
    assert seen[0] is x


def test_custom_function_saved_tensors_go_through_the_hooks():
    log = []

    class Double(mtc.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 + a * 0

    x = mtc.tensor(arrays()[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: log.append("pack") or t,
                             lambda t: log.append("unpack") or t):
        y = Double.apply(x)
    y.sum().backward()
    assert log == ["pack", "unpack"]


def test_a_gradient_of_a_gradient_flows_through_unpacked_tensors():
    x = mtc.tensor(arrays()[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x * x * x).sum()
    (g,) = mtc.autograd.grad(y, x, create_graph=True)
    (gg,) = mtc.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * arrays()[0], rtol=1e-5)


def test_errors_are_torchs():
    x = mtc.tensor(arrays()[0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result "
                                        "of type int"):
        y.backward()
    a = x * 1
    with saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            a * a
    with disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks allowed"):
            with disable_saved_tensors_hooks("no hooks allowed"):
                pass


@needs_torch
def test_the_same_errors_in_torch():
    """The two contexts' ordering rules, checked on torch itself (what the test above
    mirrors)."""
    from torch.autograd.graph import disable_saved_tensors_hooks as t_disable
    from torch.autograd.graph import saved_tensors_hooks as t_hooks

    with t_disable("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with t_hooks(lambda t: t, lambda t: t):
                pass
    with t_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="no hooks allowed"):
            with t_disable("no hooks allowed"):
                pass


def doubling_hooks_inside(x, y):
    with saved_tensors_hooks(lambda t: t * 2, lambda t: t):
        return (x * y).sin()


def test_hooks_inside_a_compiled_function_break_the_graph_and_keep_eagers_values():
    """A pack hook that changes values (doubling) makes the difference visible: were the
    hooks ignored by the compiled code, the gradient would differ."""
    xs = arrays()
    mtc.dynamo.reset()
    x, y = (mtc.tensor(a, requires_grad=True) for a in xs)
    mtc.compile(doubling_hooks_inside, backend="aot_eager")(x, y).sum().backward()
    x2, y2 = (mtc.tensor(a, requires_grad=True) for a in xs)
    doubling_hooks_inside(x2, y2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6)
    entry = mtc.dynamo.cache_entries(doubling_hooks_inside)[0]
    reason = entry.reason if entry.is_eager else entry.graph_break.reason
    assert "saved_tensors_hooks" in reason


def test_hooks_around_a_compiled_function_see_its_saved_tensors():
    """As torch's: the compiled region's autograd.Function saves through the active hooks
    (its saved tensors are the partitioner's, not eager's), and value-preserving hooks keep
    the gradients."""
    log = []
    xs = arrays()
    mtc.dynamo.reset()
    f = mtc.compile(lambda x, y: (x * y).sin(), backend="aot_eager")
    x, y = (mtc.tensor(a, requires_grad=True) for a in xs)
    f(x, y)  # compile outside the hooks
    with saved_tensors_hooks(lambda t: log.append("pack") or t,
                             lambda t: log.append("unpack") or t):
        out = f(x, y)
    out.sum().backward()
    assert log and log.count("pack") == log.count("unpack")
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xs[0] * xs[1]) * xs[1], rtol=1e-5)
