"""A kernel writes its output over an input buffer that dies at it (``codegen/inplace.py``,
torch's ``config.inplace_buffers``): compiled equal to eager with and without it, and only
where each element is read before it is overwritten."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import inductor

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py


def _run(fn, *args):
    mtc.dynamo.reset()
    out = mtc.compile(fn)(*args)
    return out, inductor.compiled_graphs[-1].source


def test_bias_relu_writes_over_the_matmul():
    x, w, b = mtc.randn(32, 16), mtc.randn(24, 16), mtc.randn(24)
    fn = lambda x, w, b: F.relu(F.linear(x, w, b)) * 2  # noqa: E731
    out, src = _run(fn, x, w, b)
    assert "buf1 = buf0  # in place" in src
    np.testing.assert_allclose(out.numpy(), fn(x, w, b).numpy(), rtol=1e-5, atol=1e-6)


def test_training_step_in_place_forward_and_backward():
    x, t = mtc.randn(64, 32), mtc.randn(64, 8)
    params = [mtc.randn(48, 32) * 0.2, mtc.zeros(48), mtc.randn(8, 48) * 0.2, mtc.zeros(8)]

    def step(x, t, w1, b1, w2, b2):
        return F.mse_loss(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), t)
    grads = []
    for compiled in (True, False):
        ps = [p.detach().clone().requires_grad_() for p in params]
        mtc.dynamo.reset()
        f = mtc.compile(step) if compiled else step
        f(x, t, *ps).backward()
        grads.append([p.grad.numpy() for p in ps])
    fw, bw = inductor.compiled_graphs[-2:]
    assert "# in place" in fw.source and "# in place" in bw.source
    for g, e in zip(*grads):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)


def test_no_write_over_an_input_read_at_another_index():
    """``(a @ b).t() + (a @ b)``: the kernel reads the product at two indices, so its output
    must not overwrite it."""
    a, b = mtc.randn(16, 16), mtc.randn(16, 16)
    fn = lambda a, b: (lambda y: y.t() + y)(a @ b)  # noqa: E731
    out, src = _run(fn, a, b)
    assert "# in place" not in src
    np.testing.assert_allclose(out.numpy(), fn(a, b).numpy(), rtol=1e-5, atol=1e-5)


def test_no_write_over_a_buffer_read_later_or_a_graph_input():
    a, b = mtc.randn(16, 16), mtc.randn(16, 16)
    fn = lambda a, b: (lambda y: (y.cos() @ y, a.sin()))(a @ b)  # noqa: E731
    out, src = _run(fn, a, b)
    assert "# in place" not in src  # the product is read again by the second matmul
    for o, e in zip(out, fn(a, b)):
        np.testing.assert_allclose(o.numpy(), e.numpy(), rtol=1e-4, atol=1e-4)


def test_turned_off_by_config():
    x, w, b = mtc.randn(8, 4), mtc.randn(6, 4), mtc.randn(6)
    inductor.config.inplace_buffers = False
    try:
        _, src = _run(lambda x, w, b: F.relu(F.linear(x, w, b)), x, w, b)
    finally:
        inductor.config.inplace_buffers = True
    assert "# in place" not in src


BODIES = [lambda y: y.cos() * 2, lambda y: y - y.sum(-1, keepdim=True),
          lambda y: F.softmax(y, -1), lambda y: y * y.amax(0), lambda y: (y > 0).float() * y,
          lambda y: y.t().contiguous() * 3, lambda y: F.softmax(y, 0),
          lambda y: y[:, :1] + y]


@given(st.integers(0, len(BODIES) - 1), st.integers(2, 40), st.integers(2, 40),
       st.sampled_from([16, 256, 1 << 18]), st.sampled_from([1, 2]))
def test_matmul_then_any_body_equals_eager(which, n, m, tile, threads):
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.threads, c.min_parallel_numel = tile, threads, 1
    try:
        rng = np.random.default_rng(n * 41 + m)
        a = mtc.tensor(rng.standard_normal((n, 8)).astype(np.float32))
        b = mtc.tensor(rng.standard_normal((8, m)).astype(np.float32))
        fn = lambda a, b: BODIES[which](a @ b)  # noqa: E731
        out, _ = _run(fn, a, b)
        np.testing.assert_allclose(out.numpy(), fn(a, b).numpy(), rtol=1e-4, atol=1e-5)
    finally:
        c.tile_bytes, c.threads, c.min_parallel_numel = old
