"""Regression tests for the bugs the torch-suite fidelity sweep found
(``tests/test_inductor_torch_suite.py``): each runs the smallest program that showed the bug,
compiled against eager mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc

BACKENDS = ["eager", "aot_eager", "inductor"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_op_called_through_the_ops_namespace_is_kept(backend):
    """``mtc.ops.aten.index_put_(a, ...)`` with its result unused: the graph node's target is an
    ``OpOverloadPacket`` (no schema of its own), and dead-code elimination dropped the
    mutation (from ``test_index_put_as_masked_fill``)."""
    def fn(a, b, c):
        a = a.clone()
        mtc.ops.aten.index_put_(a, [b > 0], c, True)
        mtc.ops.aten.add_(a, 1)
        return a

    a, b, c = mtc.randn(8, 2), mtc.randn(8, 2), mtc.tensor(0.5)
    mtc.dynamo.reset()
    got = mtc.compile(fn, backend=backend)(a, b, c)
    np.testing.assert_allclose(got.numpy(), fn(a, b, c).numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_inplace_op_keeps_its_dtype_under_functionalization(backend):
    """``f32.add_(f64)`` is float32; its functional twin ``add`` is float64, and the graph
    returned float64 (from ``test_inplace_mixed_dtype_ops``)."""
    def fn(x, y):
        z = x + y.float()
        return z.add_(y).mul_(y), x.add_(y)

    x, y = mtc.randn(4, 4), mtc.randn(4, 4, dtype=mtc.float64)
    want = fn(x.clone(), y)
    mtc.dynamo.reset()
    x2 = x.clone()
    got = mtc.compile(fn, backend=backend)(x2, y)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == mtc.float32
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert x2.dtype == mtc.float32
    np.testing.assert_allclose(x2.numpy(), want[1].numpy(), rtol=1e-6)
