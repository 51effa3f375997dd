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


RESHAPES = [((35,), (5, 7)), ((5, 7), (35,)), ((50, 20), (10, 5, 20)), ((10, 5, 20), (50, 20)),
            ((10, 1, 10, 1, 10), (10, 100)), ((10, 100), (10, 1, 10, 1, 10)),
            ((2, 3, 4, 5, 6, 7), (6, 4, 5, 42)), ((6, 4, 5, 42), (2, 3, 4, 5, 6, 7)),
            ((2, 2, 2, 2), (4, -1))]


@pytest.mark.usefixtures("strict_inductor")
@pytest.mark.parametrize("have,want", RESHAPES, ids=[f"{h}->{w}" for h, w in RESHAPES])
def test_view_of_a_pointwise_is_index_arithmetic(have, want):
    """``(x + 1).view(...) + y`` is one kernel, as in torch (``test_views1``/``test_views2``):
    the reshape of an unrealized recipe is a ``ReshapeView``, not a copy."""
    from minitorch_compile.inductor import metrics

    def fn(x, y):
        return (x * 2 + 1).view(want) + y, x.view(want) + 1

    x = mtc.randn(*have)
    y = mtc.randn(*x.view(want).shape)
    metrics.reset()
    got = mtc.compile(fn)(x, y)
    for g, w in zip(got, fn(x, y)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert metrics.generated_kernel_count == 1


@pytest.mark.usefixtures("strict_inductor")
def test_view_of_a_broadcast_read_through_merged_dims_is_copied():
    """``(x + b).view(-1)`` with ``b`` broadcast along a merged dim reads ``b[j % 5]``: not
    affine, so the recipe is computed into a buffer first — and the values stay right."""
    def fn(x, b):
        return ((x + b).view(-1) * 2, (x.t() + 1).reshape(-1))

    x, b = mtc.randn(4, 5), mtc.randn(5)
    for g, w in zip(mtc.compile(fn)(x, b), fn(x, b)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)


@pytest.mark.usefixtures("strict_inductor")
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_with_a_full_bool_mask_is_a_masked_fill(accumulate):
    """``a[mask] = v`` (mask of ``a``'s shape, one value) decomposes to ``where``: one kernel
    with its producers, as torch's ``index_put_as_masked_fill`` (was a fallback plus two)."""
    from minitorch_compile.inductor import metrics

    def fn(a, b, c):
        a = a.clone()
        a.index_put_([b > 0], c, accumulate)
        a[b < -1] = 2.0
        return a

    a, b, c = mtc.randn(16, 4), mtc.randn(16, 4), mtc.tensor(0.5)
    metrics.reset()
    np.testing.assert_allclose(mtc.compile(fn)(a, b, c).numpy(), fn(a, b, c).numpy())
    assert metrics.generated_kernel_count == 1 and metrics.fallback_kernel_count == 0
    idx = mtc.tensor([0, 2])  # integer indices: a real scatter, still a fallback
    mtc.dynamo.reset()
    g = mtc.compile(lambda a, i: a.index_put([i], mtc.tensor(1.0), accumulate))
    np.testing.assert_allclose(g(a, idx).numpy(), a.index_put([idx], mtc.tensor(1.0),
                                                              accumulate).numpy())


@pytest.mark.usefixtures("strict_inductor")
def test_select_scatter_is_pointwise():
    """``x[:, 3] = 3.0`` (a ``select_scatter`` after functionalization) is a pointwise body, so
    the zeros, the writes and the reads fuse (``test_slice_mutation1``: 6 kernels, torch 4).
    The condition is ``ops.index_expr(i1) == 3`` as in torch: ``x + 1`` and ``clone(x)`` read no
    buffer, so they share no data with the others and stay kernels of their own (3; with the
    former constant mask, a module buffer every body read, it was 2)."""
    from minitorch_compile.inductor import compiled_graphs, metrics

    def fn(a):
        x = mtc.zeros_like(a)
        b = x + 1
        x[:, 3] = 3.0
        c = mtc.clone(x)
        x[4, :] = a[0] * 2
        x[-1] = 7.0
        return x, b, c, x + a

    a = mtc.randn(8, 8)
    metrics.reset()
    for g, w in zip(mtc.compile(fn)(a), fn(a)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
    assert metrics.fallback_kernel_count == 0 and metrics.generated_kernel_count <= 3
    assert "const_" not in compiled_graphs[-1].source


@pytest.mark.usefixtures("strict_inductor")
def test_flip_zeros_and_ones_lower_instead_of_falling_back():
    """``flip`` is a reversed read (a negative stride) that fuses into its users; ``zeros`` and
    ``ones`` are ``full`` (``test_flip``, ``test_zeros``: fallback kernels before).  A flipped
    output is a buffer of its own, never an alias of the input (eager flip copies)."""
    from minitorch_compile.inductor import metrics

    def fn(x):
        return (mtc.flip(x, (-1,)), mtc.flip(x, (0, 2)) - 2, (mtc.flip(x * 2, (1,)) + x).sum(1),
                mtc.zeros(3, 4) + 1, mtc.ones(4, dtype=mtc.int64) * 3)

    x = mtc.randn(40, 300, 3)
    metrics.reset()
    got = mtc.compile(fn)(x)
    for g, w in zip(got, fn(x)):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-5)
    assert metrics.fallback_kernel_count == 0
    before = x.clone()
    got[0].add_(1)
    np.testing.assert_array_equal(x.numpy(), before.numpy())


@pytest.mark.usefixtures("strict_inductor")
def test_reduction_over_one_element_is_pointwise():
    """``t.mean(0)`` of a ``[1]`` tensor reduces one element: a pointwise body that fuses with
    the division (2 kernels before, torch 1; found by test_inductor_torch_hypothesis)."""
    from minitorch_compile.inductor import metrics

    def fn(t1, t0, b):
        return (t1.mean(0), t0.sum(1, keepdim=True) * 2, t0.amax(1) + t1, b.any(1), b.all(1),
                t0.to(mtc.float16).sum(1))

    t1, t0 = mtc.randn(1), mtc.randn(5, 1)
    b = mtc.tensor(np.array([[0.0], [1.0], [0.5], [0.0], [2.0]], dtype=np.float32))
    metrics.reset()
    assert mtc.compile(lambda t: t.mean(0))(t1).shape == ()
    assert metrics.generated_kernel_count == 1
    for g, w in zip(mtc.compile(fn)(t1, t0, b), fn(t1, t0, b)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g.numpy(), w.numpy())
