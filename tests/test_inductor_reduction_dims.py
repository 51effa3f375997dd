"""A reduction over any dim fuses with its pointwise partners (``scheduler.py``'s ``_orders``,
``scheduler_node.py``'s ``interleavings``).

A reduction's frame is its kept sizes then its reduced sizes; a pointwise node over the whole
input must say which frame dim each of its dims is.  Sizes say it when the reduced dims are
last (or first); when the reduced dim is in the middle (``softmax(x, 1)`` on 3-D) or the frame
is square (``softmax(x, 0)`` on ``(N, N)``) the scheduler picks the interleaving under which
every read matches its write.  These programs used to make four kernels (``softmax``) or two
(``x - x.sum(d)``) where torch 2.13 makes two and one; now one, compiled equal to eager.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py

PROGRAMS = {
    "softmax": lambda x, d: F.softmax(x, d),
    "log_softmax": lambda x, d: F.log_softmax(x, d),
    "center": lambda x, d: x - x.sum(d, keepdim=True),
    "var": lambda x, d: x.var(d),
    "standardize": lambda x, d: (x - x.mean(d, keepdim=True)) / (x.var(d, keepdim=True) + 1)
    .sqrt(),
    "exp_sum_cos": lambda x, d: (x.exp() * 2).sum(d, keepdim=True) * x.cos(),
}


def _compiled(fn, x):
    mtc.dynamo.reset()
    metrics.reset()
    return mtc.compile(fn)(x)


@pytest.mark.parametrize("shape,dim", [((4, 3, 5), 1), ((6, 6), 0), ((2, 2, 2), 0),
                                       ((2, 2, 2), 1), ((2, 3, 2, 3), 2)])
def test_softmax_over_a_middle_or_square_dim_is_one_kernel(shape, dim):
    x = mtc.randn(*shape)
    got = _compiled(lambda x: F.softmax(x, dim), x)
    assert metrics.generated_kernel_count == 1
    np.testing.assert_allclose(got.numpy(), F.softmax(x, dim).numpy(), rtol=1e-5, atol=1e-7)
    post = inductor.compiled_graphs[-1].ir_post_fusion
    assert "(full)" in post  # the pointwise nodes run over the reduction's whole frame


def test_softmax_backward_over_dim_0_of_a_square_input():
    x = mtc.randn(8, 8, requires_grad=True)
    w = mtc.randn(8, 8)
    mtc.dynamo.reset()
    metrics.reset()
    (mtc.compile(lambda x: F.softmax(x, 0))(x) * w).sum().backward()
    assert metrics.generated_kernel_count == 2  # forward one, backward one
    x2 = x.detach().clone().requires_grad_()
    (F.softmax(x2, 0) * w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-5, atol=1e-6)


@given(shape=st.lists(st.integers(1, 5), min_size=2, max_size=4),
       dim=st.integers(0, 3), which=st.sampled_from(sorted(PROGRAMS)),
       tile=st.sampled_from([16, 64, 1 << 18]), threads=st.sampled_from([1, 2]))
def test_any_dim_any_shape_equals_eager_in_one_kernel(shape, dim, which, tile, threads):
    dim = dim % len(shape)
    c = inductor.config
    old = c.tile_bytes, c.threads, c.min_parallel_numel
    c.tile_bytes, c.threads, c.min_parallel_numel = tile, threads, 1
    try:
        fn = PROGRAMS[which]
        x = mtc.tensor(np.random.default_rng(len(shape) * 7 + dim).standard_normal(shape)
                       .astype(np.float32))
        got = _compiled(lambda x: fn(x, dim), x)
        np.testing.assert_allclose(got.numpy(), fn(x, dim).numpy(), rtol=1e-4, atol=1e-5)
        assert metrics.generated_kernel_count == 1
    finally:
        c.tile_bytes, c.threads, c.min_parallel_numel = old
