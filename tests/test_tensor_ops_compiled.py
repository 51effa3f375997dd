"""The tensor ops ordinary programs meet, compiled: ``inductor`` and ``aot_eager`` == eager on
small programs using them (values, dtypes, gradients), the pointwise ones fused into one
generated kernel, the others run as fallback kernels with the reason logged, dynamic sizes
compiled once, and data-dependent sizes (``bincount``, tensor ``repeat_interleave``) breaking
the graph.  A graph Inductor hands back to eager mode fails these tests (``strict_inductor``).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile import inductor


def _t(a, grad=False):
    return mtc.tensor(np.asarray(a), requires_grad=grad)


# --------------------------------------------------------------------------- compiled


def _program(x, y):
    m = x > 0.5
    a = x.masked_fill(m, 0.0) + mtc.atan2(x, y) * mtc.hypot(x, y)
    b = mtc.logaddexp(a, y).lerp(x, 0.3).addcmul(x, y, value=0.5).addcdiv(x, y.abs() + 1)
    c = b.cumsum(1) + b.sort(1).values - b.topk(2, 1).values.sum(1, keepdim=True)
    d = mtc.einsum("ij,kj->ik", c, x) + mtc.outer(x[:, 0], y[0]).sum()
    e = d.tril() + d.triu(1).roll(1, 0) + x.norm(dim=1, keepdim=True).expand_as(d)
    return (e.prod(1) + e.movedim(0, 1).sum(0)).sum() + x.repeat_interleave(2, 0).mean()


@pytest.mark.usefixtures("strict_inductor")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compiled_program_equals_eager_values_and_gradients(backend):
    rng = np.random.default_rng(1)
    xa, ya = rng.uniform(0.1, 1, (4, 4)).astype(np.float32), \
        rng.uniform(0.1, 1, (4, 4)).astype(np.float32)
    x, y = _t(xa, True), _t(ya, True)
    expected = _program(x, y)
    expected.backward()
    gx, gy = x.grad.numpy().copy(), y.grad.numpy().copy()
    mtc.dynamo.reset()
    x2, y2 = _t(xa, True), _t(ya, True)
    f = mtc.compile(_program, backend=backend, fullgraph=True)
    got = f(x2, y2)
    got.backward()
    np.testing.assert_allclose(got.item(), expected.item(), rtol=1e-4)
    np.testing.assert_allclose(x2.grad.numpy(), gx, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(y2.grad.numpy(), gy, rtol=1e-3, atol=1e-4)


def test_pointwise_ones_fuse_into_one_kernel_with_no_fallback():
    def f(x, y):
        return (mtc.atan2(x, y) + mtc.hypot(x, y)).masked_fill(x > 0, 1.0).lerp(y, 0.5) \
            .addcmul(x, y).addcdiv(x, y) + mtc.logaddexp(x, y) + x.logit(0.1)

    x, y = mtc.rand(8, 8) + 0.1, mtc.rand(8, 8) + 0.1
    start = len(inductor.compiled_graphs)
    out = mtc.compile(f, backend="inductor", fullgraph=True)(x, y)
    np.testing.assert_allclose(out.numpy(), f(x, y).numpy(), rtol=1e-5, atol=1e-6)
    (graph,) = inductor.compiled_graphs[start:]
    assert len(graph.kernels) == 1 and graph.fallbacks == []


def test_sort_cumsum_einsum_run_as_logged_fallbacks_or_extern_kernels():
    def f(x):
        return x.sort(0).values.cumsum(0) @ x + mtc.einsum("ij,jk->ik", x, x)

    x = mtc.randn(5, 5)
    start = len(inductor.compiled_graphs)
    out = mtc.compile(f, backend="inductor", fullgraph=True)(x)
    np.testing.assert_allclose(out.numpy(), f(x).numpy(), rtol=1e-5, atol=1e-5)
    (graph,) = inductor.compiled_graphs[start:]
    reasons = dict(graph.fallbacks)
    assert "aten.sort.default" in reasons and "aten.cumsum.default" in reasons
    assert all("no lowering" in r for r in reasons.values())
    assert "einsum" not in graph.source  # einsum became permute/reshape/bmm


def test_dynamic_shapes_compile_once():
    f = mtc.compile(lambda x: x.cumsum(-1).topk(2, -1).values + x.tril()[:, :2].sum(),
                    backend="aot_eager", dynamic=True)
    for n in (3, 5, 7):
        x = mtc.randn(n, n)
        np.testing.assert_allclose(
            f(x).numpy(), (x.cumsum(-1).topk(2, -1).values + x.tril()[:, :2].sum()).numpy(),
            rtol=1e-5)



# --------------------------------------------------------------------------- one op per program

_PROGRAMS = {
    "cumprod": lambda x, y: x.cumprod(-1) + y,
    "prod": lambda x, y: x.prod(0, keepdim=True) * y,
    "argsort": lambda x, y: x.gather(1, x.argsort(1, descending=True)) * y,
    "kthvalue": lambda x, y: x.kthvalue(2, 0).values + y,
    "median": lambda x, y: x.median(1, keepdim=True).values * y + x.median(),
    "diag": lambda x, y: x.diag() + y.diag(1).sum(),
    "unflatten": lambda x, y: x.unflatten(1, (2, 2)).sum(-1) * y[:, :2],
    "tile": lambda x, y: x.tile((1, 2))[:, ::2] * y,
    "stacks": lambda x, y: mtc.hstack([x, y]).sum(1) + mtc.vstack([x, y]).sum(0),
    "tensordot": lambda x, y: mtc.tensordot(x, y, dims=([1], [0])) + 1,
    "baddbmm": lambda x, y: mtc.baddbmm(x, x.unsqueeze(0), y.unsqueeze(0), beta=0.5, alpha=2),
    "cross": lambda x, y: mtc.cross(x[:3, :3], y[:3, :3], dim=1),
    "cdist": lambda x, y: mtc.cdist(x, y),
    "index_ops": lambda x, y: x.index_add(0, mtc.tensor([1, 1, 0, 3]), y, alpha=0.5)
    .index_copy(1, mtc.tensor([3, 0]), y[:, :2]).index_fill(0, mtc.tensor([2]), -1.0),
    "scatter_reduce": lambda x, y: x.scatter_reduce(0, mtc.tensor([[0, 1, 0, 1]]), y[:1],
                                                    "amax", include_self=False),
    "take_along_dim": lambda x, y: mtc.take_along_dim(x, y.argsort(1), 1),
    "count_nonzero": lambda x, y: x * mtc.count_nonzero(x > 0.5, 1).unsqueeze(1),
    "special": lambda x, y: x.erfinv() + (y + 0.5).lgamma() + (y + 1).digamma(),
    "searchsorted": lambda x, y: mtc.searchsorted(x.sort(1).values, y) + 0.5 * y,
    "meshgrid": lambda x, y: sum(g.sum() for g in mtc.meshgrid(x[0], y[0], indexing="xy")),
}


@pytest.mark.usefixtures("strict_inductor")  # a graph Inductor gave back to eager fails
@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_one_op_program_compiled_equals_eager(name):
    fn = _PROGRAMS[name]
    rng = np.random.default_rng(7)
    xa = rng.uniform(0.1, 0.9, (4, 4)).astype(np.float64)
    ya = rng.uniform(0.1, 0.9, (4, 4)).astype(np.float64)
    x, y = _t(xa, True), _t(ya, True)
    expected = fn(x, y)
    expected.sum().backward()
    mtc.dynamo.reset()
    x2, y2 = _t(xa, True), _t(ya, True)
    got = mtc.compile(fn, backend="inductor", fullgraph=True)(x2, y2)
    assert got.dtype is expected.dtype and tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    got.sum().backward()
    for a, b in ((x2, x), (y2, y)):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_data_dependent_sizes_break_the_graph_and_stay_correct():
    def f(x, r):
        y = x.cos().repeat_interleave(r, dim=0)  # the size depends on r's values
        return y.sum(0) + mtc.bincount(r).sum()

    x, r = mtc.randn(3, 2), mtc.tensor([2, 0, 3])
    reasons = [b.reason for b in mtc.dynamo.explain(f)(x, r).break_reasons]
    assert any("DynamicOutputShapeException" in s for s in reasons), reasons
    np.testing.assert_allclose(mtc.compile(f, backend="inductor")(x, r).numpy(), f(x, r).numpy(),
                               rtol=1e-6)
