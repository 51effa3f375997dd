"""Kernel counts against torch's CPU Inductor (optional: skipped without torch).

The same source runs through ``mtc.compile`` and ``torch.compile``; after forward (and
backward) ``generated_kernel_count`` of ours must be no larger than
``torch._inductor.metrics.generated_kernel_count``, forward and in total (issue 9's fidelity
target), and the
results must agree.  torch's CPU Inductor compiles C++, so this file is slow-ish (seconds per
program the first time; torch caches the kernels on disk).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    try:
        f = torch.compile(lambda x: x.cos() + 1)
        f(torch.ones(3))
    except Exception as e:  # noqa: BLE001 - no C++ compiler, or another setup problem
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    return torch


def chain(L):
    return lambda x: ((x.cos() * 2 + 1).sin() * x).exp() - 1


def cos_cos(L):
    return lambda x: x.cos().cos()


def softmax(L):
    return lambda x: L.softmax(x, -1)


def softmax_dim(dim):
    def build(L):
        return lambda x: L.softmax(x, dim)
    return build


def layer_norm(L):
    return lambda x, w, b: L.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def mlp(L):
    def f(x, w1, b1, w2):
        return L.nn.functional.linear(L.relu(L.nn.functional.linear(x, w1, b1)), w2).sum()
    return f


def attention(L):
    return lambda q, k, v: L.softmax(q @ k.t() / 4.0, -1) @ v


def gelu(L):
    return lambda x: L.nn.functional.gelu(x) * 2


CASES = [("pointwise chain", chain, [(64, 32)], False),
         ("cos(cos(x)) fw+bw", cos_cos, [(64, 32)], True),
         ("softmax", softmax, [(64, 32)], False),
         ("softmax fw+bw", softmax, [(64, 32)], True),
         # the reduced dim in the middle, and dim 0 of a square: the pointwise nodes' dims
         # are an interleaving of the frame's (scheduler.py, ``_orders``)
         ("softmax(x, 1) of 3-D", softmax_dim(1), [(8, 6, 16)], False),
         ("softmax(x, 0) of a square fw+bw", softmax_dim(0), [(32, 32)], True),
         ("layer_norm", layer_norm, [(64, 32), (32,), (32,)], False),
         ("mlp fw+bw", mlp, [(16, 8), (32, 8), (32,), (4, 32)], True),
         ("attention fw+bw", attention, [(8, 16), (8, 16), (8, 16)], True),
         ("gelu fw+bw", gelu, [(64, 32)], True)]


def _run(lib, compile_fn, counter, builder, arrays, backward, to_tensor):
    """(output, forward kernels, all kernels, grads)."""
    tensors = [to_tensor(a, backward) for a in arrays]
    counter_reset, counter_read = counter
    counter_reset()
    out = compile_fn(builder(lib))(*tensors)
    n_fw = counter_read()
    if backward:
        out.sum().backward()
    return out, n_fw, counter_read(), [t.grad for t in tensors]


@pytest.mark.parametrize("name,builder,shapes,backward", CASES, ids=[c[0] for c in CASES])
def test_no_more_kernels_than_torch(torch, name, builder, shapes, backward):
    import torch._inductor.metrics as tm

    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    torch._dynamo.reset()
    mtc.dynamo.reset()
    t_out, t_fw, t_all, t_grads = _run(
        torch, torch.compile, (tm.reset, lambda: tm.generated_kernel_count), builder, arrays,
        backward, lambda a, g: torch.from_numpy(a.copy()).requires_grad_(g))
    start = len(inductor.compiled_graphs)
    m_out, _, m_all, m_grads = _run(
        mtc, mtc.compile, (metrics.reset, lambda: metrics.generated_kernel_count), builder,
        arrays, backward, lambda a, g: mtc.tensor(a.copy()).requires_grad_(g))
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-4,
                               atol=1e-4)
    for mg, tg in zip(m_grads, t_grads):
        if tg is not None:
            np.testing.assert_allclose(mg.numpy(), tg.numpy(), rtol=1e-4, atol=1e-4)
    m_fw = len(inductor.compiled_graphs[start].kernels)  # AOT compiles ours both at once
    assert m_all <= t_all, (name, m_all, t_all)
    assert m_fw <= t_fw, (name, m_fw, t_fw)


def dead_repeat(L):
    def f(x):
        x.repeat(2, 1)
        return x.cos()
    return f


def dead_chain(L):
    def f(x):
        a = x.sin()
        (a.repeat(2, 1) * 3).exp()
        return a + 1
    return f


def dead_softmax(L):
    def f(x):
        L.softmax(x, 0)
        return x * 2
    return f


@pytest.mark.parametrize("builder", [dead_repeat, dead_chain, dead_softmax],
                         ids=lambda b: b.__name__)
def test_dead_code_makes_as_many_kernels_as_torch(torch, builder):
    """A value nobody reads is no kernel, in torch (graph DCE, the scheduler's
    ``dead_node_elimination``) and here: the counts are equal, not just no larger."""
    import torch._inductor.metrics as tm

    a = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    torch._dynamo.reset()
    mtc.dynamo.reset()
    t_out, t_fw, _, _ = _run(torch, torch.compile, (tm.reset, lambda: tm.generated_kernel_count),
                             builder, [a], False, lambda a, g: torch.from_numpy(a.copy()))
    m_out, m_fw, _, _ = _run(mtc, mtc.compile,
                             (metrics.reset, lambda: metrics.generated_kernel_count), builder,
                             [a], False, lambda a, g: mtc.tensor(a.copy()))
    np.testing.assert_allclose(m_out.numpy(), t_out.numpy(), rtol=1e-5, atol=1e-6)
    assert m_fw == t_fw, (builder.__name__, m_fw, t_fw)
