"""``mtc.utils.checkpoint``: ``checkpoint`` (non-reentrant and reentrant) and
``checkpoint_sequential``.

Gradients with checkpointing equal those without (hypothesis over shapes; a dropout inside
replays its mask), the forward really is recomputed in backward, the errors are torch's, the
same programs give torch's gradients where torch is installed, and a checkpoint inside a
compiled function is a graph break with a reason and eager's values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def block(T):
    F = T.nn.functional
    return lambda x, w: F.dropout((x @ w).tanh(), 0.25).sin() * x


def inputs(shape, seed=0):
    rng = np.random.default_rng(seed)
    n, k = shape
    return rng.standard_normal((n, k)).astype(np.float32), \
        rng.standard_normal((k, k)).astype(np.float32)


def run(arrays, use_reentrant, T=mtc, seed=3):
    """The block's output and its inputs' gradients; ``use_reentrant=None``: no checkpoint."""
    x, w = (T.tensor(a, requires_grad=True) for a in arrays)
    T.manual_seed(seed)
    fn = block(T)
    if use_reentrant is None:
        y = fn(x, w)
    elif T is mtc:
        y = checkpoint(fn, x, w, use_reentrant=use_reentrant)
    else:
        y = T.utils.checkpoint.checkpoint(fn, x, w, use_reentrant=use_reentrant)
    y.sum().backward()
    return [y.detach().numpy(), x.grad.numpy(), w.grad.numpy()]


@pytest.mark.parametrize("use_reentrant", [False, True])
@settings(deadline=None, max_examples=10)
@given(shape=st.tuples(st.integers(1, 5), st.integers(1, 5)), seed=st.integers(0, 3))
def test_gradients_equal_those_without_checkpointing(use_reentrant, shape, seed):
    arrays = inputs(shape, seed)
    for a, b in zip(run(arrays, use_reentrant), run(arrays, None)):
        np.testing.assert_array_equal(a, b)


@needs_torch
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_equal_torchs_without_dropout(use_reentrant):
    def fn(T):
        return lambda x, w: (x @ w).tanh().sin() * x

    arrays = inputs((4, 5))
    grads = []
    for T, ck in ((mtc, checkpoint), (torch, torch.utils.checkpoint.checkpoint)):
        x, w = (T.tensor(a, requires_grad=True) for a in arrays)
        ck(fn(T), x, w, use_reentrant=use_reentrant).sum().backward()
        grads.append([x.grad.numpy(), w.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_the_forward_runs_again_in_backward(use_reentrant):
    calls = []

    def fn(x):
        calls.append(mtc.is_grad_enabled())
        return x.exp().sin()

    x = mtc.tensor(inputs((2, 3))[0], requires_grad=True)
    y = checkpoint(fn, x, use_reentrant=use_reentrant)
    assert len(calls) == 1
    y.sum().backward()
    assert len(calls) == 2 and calls[1] is True  # recomputed with grad mode on
    np.testing.assert_allclose(x.grad.numpy(), np.cos(np.exp(x.detach().numpy())) *
                               np.exp(x.detach().numpy()), rtol=1e-5)


def test_non_reentrant_keeps_no_activation_between_forward_and_backward():
    """What the graph holds for the checkpointed ops are handles (ints), not tensors."""
    x = mtc.tensor(inputs((2, 3))[0], requires_grad=True)
    y = checkpoint(lambda t: t.exp().sin(), x, use_reentrant=False)
    saved = y.grad_fn.saved["self"]
    assert saved.packed is not None and isinstance(saved.packed.value, int)


def test_non_reentrant_supports_autograd_grad_retain_graph_and_double_backward():
    a = mtc.tensor(inputs((2, 3))[0], requires_grad=True)
    y = checkpoint(lambda t: (t * t * t).sum(), a, use_reentrant=False)
    (g,) = mtc.autograd.grad(y, a, create_graph=True)
    (gg,) = mtc.autograd.grad(g.sum(), a)
    np.testing.assert_allclose(gg.numpy(), 6 * a.detach().numpy(), rtol=1e-5)
    b = mtc.tensor(inputs((2, 3))[0], requires_grad=True)
    z = checkpoint(lambda t: t.exp().sin().sum(), b, use_reentrant=False)
    z.backward(retain_graph=True)
    first = b.grad.clone()
    z.backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * first.numpy(), rtol=1e-6)


def test_errors_are_torchs():
    x = mtc.tensor(inputs((2, 3))[0], requires_grad=True)
    y = checkpoint(lambda t: t.sin(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="incompatible with .grad()"):
        mtc.autograd.grad(y.sum(), x)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lambda t: t.sin(), x)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        checkpoint(lambda t: t.sin(), x.detach(), use_reentrant=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments"):
        checkpoint(lambda t, s: t * s, x, use_reentrant=True, s=2)
    calls = []

    def changes_shape(t):
        calls.append(1)
        return t.sin() if len(calls) == 1 else t[:1].sin()

    y = checkpoint(changes_shape, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="different metadata"):
        y.sum().backward()
    calls.clear()

    def saves_less(t):
        calls.append(1)
        return t.sin().cos() if len(calls) == 1 else t.sin()

    y = checkpoint(saves_less, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        y.sum().backward()


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_gives_the_gradients_of_the_plain_run(use_reentrant, segments):
    mtc.manual_seed(0)
    model = mtc.nn.Sequential(mtc.nn.Linear(5, 5), mtc.nn.Tanh(), mtc.nn.Linear(5, 5),
                              mtc.nn.Tanh(), mtc.nn.Linear(5, 2))
    x = mtc.tensor(inputs((4, 5))[0], requires_grad=True)
    checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant).sum().backward()
    got = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    model.zero_grad()
    x.grad = None
    model(x).sum().backward()
    want = [p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def dropout_block(x, w):
    return mtc.nn.functional.dropout((x @ w).tanh(), 0.25).sin() * x


def checkpointed_step(x, w):
    return checkpoint(dropout_block, x, w, use_reentrant=False).sum()


def test_under_compile_a_checkpoint_is_a_graph_break_with_eagers_values():
    arrays = inputs((4, 5))
    mtc.dynamo.reset()
    grads = []
    for fn in (mtc.compile(checkpointed_step, backend="aot_eager"), checkpointed_step):
        x, w = (mtc.tensor(a, requires_grad=True) for a in arrays)
        mtc.manual_seed(1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no internal-error fallback
            fn(x, w).backward()
        grads.append([x.grad.numpy(), w.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
    entry = mtc.dynamo.cache_entries(checkpointed_step)[0]
    reason = entry.reason if entry.is_eager else entry.graph_break.reason
    assert "checkpoint" in reason and "tag_activation_checkpoint" in reason
