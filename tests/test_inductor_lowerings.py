"""Lowerings that were fallback kernels (``inductor/iota_lowering.py``,
``inductor/pool_lowering.py``): ``arange``, ``tril``/``triu``, ``constant_pad_nd``,
``max_pool2d_with_indices`` and its backward, ``avg_pool2d`` and its backward,
``_adaptive_avg_pool2d``.

Every case: compiled == eager (values, dtypes, gradients), no fallback kernel for the lowered
ops, and the fused kernel's name or a named fusion decision; sizes that change compile once
(symbolic sizes); kernel counts against torch 2.13's CPU Inductor where torch is installed.
The ops torch keeps as fallbacks on the CPU (``sort``, ``topk``, ``cumsum``,
``_adaptive_avg_pool2d_backward``, ``convolution_backward``) stay fallbacks here: checked too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.usefixtures("strict_inductor")

LOWERED = {f"aten.{op}.default" for op in (
    "arange", "tril", "triu", "constant_pad_nd", "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward", "avg_pool2d", "avg_pool2d_backward",
    "_adaptive_avg_pool2d")}
RNG = np.random.default_rng(0)


def _t(a, grad=False):
    t = mtc.tensor(np.array(a))
    return t.requires_grad_() if grad else t


def compiled_vs_eager(fn, *arrays, grad=True, tol=1e-5, allowed=()) -> list:
    """Run ``fn`` compiled and eagerly on copies of ``arrays`` (float ones require grad when
    ``grad``), compare outputs and the gradients of a random weighting of the float outputs;
    return the generated kernels' names."""
    mtc.dynamo.reset()
    metrics.reset()
    start = len(inductor.compiled_graphs)
    wants = [grad and np.asarray(a).dtype.kind == "f" for a in arrays]
    ours = [_t(a, w) for a, w in zip(arrays, wants)]
    theirs = [_t(a, w) for a, w in zip(arrays, wants)]
    out, ref = mtc.compile(fn, fullgraph=True)(*ours), fn(*theirs)
    outs, refs = (out, ref) if isinstance(out, tuple) else ((out,), (ref,))
    for o, r in zip(outs, refs):
        assert o.dtype == r.dtype and tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=tol, atol=tol)
    if any(wants):
        weights = [_t(RNG.standard_normal(tuple(o.shape)).astype(np.float32)) for o in outs]
        for results in (outs, refs):
            sum((o * w).sum() for o, w in zip(results, weights)
                if o.dtype.is_floating_point and o.requires_grad).backward()
        for a, b in zip(ours, theirs):
            if a.requires_grad:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    fallbacks = {op for g in inductor.compiled_graphs[start:] for op, _ in g.fallbacks}
    assert not fallbacks & LOWERED - set(allowed), fallbacks
    return [k.name for k in metrics.kernel_records]


X4 = RNG.standard_normal((2, 3, 9, 10)).astype(np.float32)
X3 = RNG.standard_normal((3, 7, 8)).astype(np.float32)
SPECIAL = X4.copy()  # NaN wins a max; a window of -inf keeps its first in-bounds position
SPECIAL[0, 0, :3, :3] = np.nan
SPECIAL[0, 1, :4, :4] = -np.inf
SPECIAL[1, 2] = 1.0  # ties keep the first


# ------------------------------------------------------------------ index values


@pytest.mark.parametrize("args", [(8,), (0, 53, 4), (512, -512, -1.0), (0.0, 4.0, 0.5),
                                  (3, 11)])
@pytest.mark.parametrize("dtype", [None, "float64", "int32"])
def test_arange_is_a_pointwise_that_fuses(args, dtype):
    dt = None if dtype is None else getattr(mtc, dtype)
    names = compiled_vs_eager(lambda x: (x[:1] * 0).sum() + mtc.arange(*args, dtype=dt) * 2,
                              X3, grad=False)
    assert "arange" in " ".join(names)
    names = compiled_vs_eager(lambda x: x + mtc.arange(8), X3, grad=False)
    assert names == ["fused_add_arange_0"]


@pytest.mark.parametrize("diagonal", [-2, 0, 1, 5])
@pytest.mark.parametrize("which", ["tril", "triu"])
@pytest.mark.parametrize("array", [X3, RNG.integers(0, 5, (4, 6)),
                                   RNG.integers(0, 2, (5, 3)).astype(bool)],
                         ids=["float32", "int64", "bool"])
def test_tril_triu_fuse_with_producer_and_consumer(diagonal, which, array):
    if array.dtype.kind == "f":
        names = compiled_vs_eager(lambda x: getattr(x + 1, which)(diagonal) * 2, array)
        assert names[0] == f"fused_add_mul_{which}_0"  # then the backward's ``tril(grad)``
    else:
        compiled_vs_eager(lambda x: getattr(x, which)(diagonal), array)


@pytest.mark.parametrize("pad", [(1, 2), (1, 2, 0, 1), (-1, 2, 2, -1), (0, 0, 3, 3, 1, 1),
                                 (-2, -1)])
@pytest.mark.parametrize("value", [0, 1.5])
@pytest.mark.parametrize("array", [X3, RNG.integers(0, 9, (3, 4, 5))], ids=["float32", "int64"])
def test_constant_pad_nd(pad, value, array):
    names = compiled_vs_eager(lambda x: F.pad(x * 2, pad, value=value) + 1, array)
    assert names[0] == "fused_add_constant_pad_nd_mul_0"


def test_pad_fuses_into_a_reduction():
    names = compiled_vs_eager(lambda x: F.pad(x.exp(), (1, 1)).sum(-1), X3, grad=False)
    assert names == ["fused_constant_pad_nd_exp_sum_0"]


# ------------------------------------------------------------------ pooling


MAX_CASES = [(k, s, p, d, c) for k, s, p, d, c in itertools.product(
    [1, 2, 3], [1, 2, 3], [0, 1], [1, 2], [False, True]) if p <= ((k - 1) * d + 1) // 2]


@pytest.mark.parametrize("k,s,p,d,ceil", MAX_CASES)
def test_max_pool2d_values_indices_and_grad(k, s, p, d, ceil):
    def fn(x):
        return F.max_pool2d(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
    # a dilated window's backward is a fallback kernel, as in torch
    allowed = () if d == 1 else ("aten.max_pool2d_with_indices_backward.default",)
    for array in (X4, X3):
        compiled_vs_eager(fn, array, allowed=allowed)
    compiled_vs_eager(fn, SPECIAL, grad=False)


@pytest.mark.parametrize("k,s,p,ceil", [(k, s, p, c) for k, s, p, _, c in MAX_CASES if _ == 1])
@pytest.mark.parametrize("count_include_pad,divisor_override",
                         [(True, None), (False, None), (True, 3)])
def test_avg_pool2d_and_backward(k, s, p, ceil, count_include_pad, divisor_override):
    def fn(x):
        return F.avg_pool2d(x + 1, k, s, p, ceil, count_include_pad, divisor_override)
    for array in (X4, X3):
        compiled_vs_eager(fn, array)


@pytest.mark.parametrize("size", [(3, 3), (3, 4), (1, 1), (4, 5), (9, 10), (2, 7)])
def test_adaptive_avg_pool2d(size):
    mtc.dynamo.reset()
    compiled_vs_eager(lambda x: F.adaptive_avg_pool2d(x * 2, size), X4, grad=False)
    start = len(inductor.compiled_graphs)
    compiled_vs_eager(lambda x: F.adaptive_avg_pool2d(x * 2, size), X4)
    fallbacks = {op for g in inductor.compiled_graphs[start:] for op, _ in g.fallbacks}
    assert fallbacks <= {"aten._adaptive_avg_pool2d_backward.default"}  # as torch's


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hypothesis_pooling_and_padding(data):
    """Random image sizes, windows, strides, paddings and modes, each pool with a producer
    and a consumer fused around it, and its gradient; a random pad of the same input."""
    h, w = data.draw(st.integers(3, 9)), data.draw(st.integers(3, 9))
    shape = ([data.draw(st.integers(1, 3))] if data.draw(st.booleans()) else []) + [2, h, w]
    k = [data.draw(st.integers(1, min(3, h))), data.draw(st.integers(1, min(3, w)))]
    s = [data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))]
    p = [data.draw(st.integers(0, kk // 2)) for kk in k]
    ceil = data.draw(st.booleans())
    kind = data.draw(st.sampled_from(["max", "avg", "adaptive"]))
    x = RNG.standard_normal(shape).astype(np.float32)
    if kind == "max":
        def fn(x):
            return F.max_pool2d(x.cos(), k, s, p, ceil_mode=ceil) * 2
    elif kind == "avg":
        cip = data.draw(st.booleans())

        def fn(x):
            return F.avg_pool2d(x.cos(), k, s, p, ceil, cip) * 2
    else:
        out = (data.draw(st.integers(1, h)), data.draw(st.integers(1, w)))

        def fn(x):
            return F.adaptive_avg_pool2d(x.cos(), out) * 2
    compiled_vs_eager(fn, x, grad=kind != "adaptive")
    pad = [data.draw(st.integers(-1, 2)) for _ in range(2 * data.draw(st.integers(1, 3)))]
    compiled_vs_eager(lambda x: F.pad(x + 1, pad, value=0.5).exp(), x)


def test_values_and_indices_fuse_horizontally_and_the_pool_into_its_consumer():
    names = compiled_vs_eager(lambda x: F.max_pool2d(x, 2, return_indices=True), X4, grad=False)
    assert names == ["fused_max_pool2d_with_indices_0"]
    decisions = [d for d in inductor.compiled_graphs[-1].decisions if d.fused]
    assert [(d.node1, d.node2) for d in decisions] == [("buf0", "buf1")]
    names = compiled_vs_eager(lambda x: F.avg_pool2d(x.relu(), 3, 2, 1).sum(-1), X4)
    assert names[0] == "fused_avg_pool2d_relu_sum_0"


def test_a_window_over_25_elements_stays_a_fallback_as_in_torch():
    mtc.dynamo.reset()
    mtc.compile(lambda x: F.max_pool2d(x, 6))(_t(RNG.standard_normal((1, 1, 12, 12))))
    (op, reason), = inductor.compiled_graphs[-1].fallbacks
    assert op == "aten.max_pool2d_with_indices.default" and "25" in reason


def test_max_pool_backward_is_one_pointwise_kernel_over_the_input():
    names = compiled_vs_eager(lambda x: F.max_pool2d(x, 3, 2, 1) * 2, X4)
    assert names[1:] == ["fused_max_pool2d_with_indices_backward_mul_0"]


# ------------------------------------------------------------------ what stays a fallback


@pytest.mark.parametrize("name", ["sort", "topk", "cumsum"])
def test_torchs_cpu_fallbacks_stay_fallbacks(name):
    fn = {"sort": lambda x: mtc.sort(x + 1, -1)[0] * 2,
          "topk": lambda x: mtc.topk(x + 1, 3, -1)[0] * 2,
          "cumsum": lambda x: mtc.cumsum(x + 1, -1) * 2}[name]
    compiled_vs_eager(fn, X3)
    assert f"aten.{name}.default" in {op for op, _ in inductor.compiled_graphs[-2].fallbacks}


# ------------------------------------------------------------------ dynamic sizes


DYNAMIC = {
    "arange": lambda x: x + mtc.arange(x.shape[0]).unsqueeze(1),
    "tril": lambda x: (x * 2).tril(1),
    "pad": lambda x: F.pad(x, (1, 2)) * 2,
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_sizes_compile_once(name):
    fn = DYNAMIC[name]
    compiled = mtc.compile(fn, dynamic=True)
    start = len(inductor.compiled_graphs)
    for rows in (4, 6, 10):
        x = _t(RNG.standard_normal((rows, 12)).astype(np.float32))
        np.testing.assert_allclose(compiled(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
    graphs = inductor.compiled_graphs[start:]
    assert len(graphs) == 1 and "ks0" in graphs[0].source and not graphs[0].fallbacks


@pytest.mark.parametrize("name", ["max", "avg"])
def test_pooling_with_a_symbolic_batch(name):
    """Automatic dynamic shapes: the batch becomes ``s0`` at the second size, forward and
    backward compile once more and serve every later batch (spatial sizes stay static)."""
    fn = {"max": lambda x: F.max_pool2d(x * 1, 3, 2, 1),
          "avg": lambda x: F.avg_pool2d(x, 2, 1, 1)}[name]
    compiled = mtc.compile(fn)
    start = len(inductor.compiled_graphs)
    for batch in (2, 4, 6, 10):
        a = RNG.standard_normal((batch, 3, 8, 8)).astype(np.float32)
        x, y = _t(a, True), _t(a, True)
        out, ref = compiled(x), fn(y)
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        out.sum().backward()
        ref.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-6)
    graphs = inductor.compiled_graphs[start:]
    assert len(graphs) == 4 and "ks0" in graphs[-1].source
    assert not [f for g in graphs for f in g.fallbacks]


# ------------------------------------------------------------------ against torch


TORCH_CASES = {
    "arange": (lambda L: lambda x: x + L.arange(8), [RNG.standard_normal((4, 8))]),
    "tril": (lambda L: lambda x: (x + 1).tril() * 2, [RNG.standard_normal((6, 6))]),
    "triu[bw]": (lambda L: lambda x: (x + 1).triu(1) * 2, [RNG.standard_normal((3, 5, 6))]),
    "pad[bw]": (lambda L: lambda x: L.nn.functional.pad(x + 1, (1, 2, 0, 1)) * 2,
                [RNG.standard_normal((3, 4, 5))]),
    "max_pool2d[bw]": (lambda L: lambda x: L.nn.functional.max_pool2d(x + 1, 2) * 2,
                       [RNG.standard_normal((2, 3, 8, 8))]),
    "max_pool2d k3s2p1[bw]": (lambda L: lambda x: L.nn.functional.max_pool2d(x, 3, 2, 1),
                              [RNG.standard_normal((2, 3, 9, 9))]),
    "avg_pool2d[bw]": (lambda L: lambda x: L.nn.functional.avg_pool2d(x + 1, 2) * 2,
                       [RNG.standard_normal((2, 3, 8, 8))]),
    "avg_pool2d k3s2p1[bw]": (lambda L: lambda x: L.nn.functional.avg_pool2d(x, 3, 2, 1),
                              [RNG.standard_normal((2, 3, 9, 9))]),
    "adaptive_avg_pool2d[bw]": (lambda L: lambda x: L.nn.functional.adaptive_avg_pool2d(
        x, (3, 4)), [RNG.standard_normal((2, 3, 10, 7))]),
    "sort": (lambda L: lambda x: L.sort(x + 1, -1)[0] * 2, [RNG.standard_normal((4, 8))]),
    "cumsum[bw]": (lambda L: lambda x: L.cumsum(x + 1, 0) * 2, [RNG.standard_normal((4, 8))]),
}


def _count(L, fn, arrays, backward: bool) -> int:
    is_torch = L.__name__ == "torch"
    tensors = [(L.from_numpy(a.astype(np.float32)) if is_torch else _t(a.astype(np.float32)))
               .requires_grad_(backward) for a in arrays]
    if is_torch:
        import torch._inductor.metrics as m
        L._dynamo.reset()
    else:
        m = metrics
        L.dynamo.reset()
    m.reset()
    out = L.compile(fn)(*tensors)
    if backward:
        out.sum().backward()
    return m.generated_kernel_count


@pytest.mark.torch
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_no_more_kernels_than_torch(name):
    torch = pytest.importorskip("torch")
    build, arrays = TORCH_CASES[name]
    backward = name.endswith("[bw]")
    try:
        theirs = _count(torch, build(torch), arrays, backward)
    except Exception as e:  # noqa: BLE001 - no C++ compiler, or another setup problem
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    compiled_vs_eager(build(mtc), *[a.astype(np.float32) for a in arrays], grad=backward)
    ours = _count(mtc, build(mtc), arrays, backward)
    assert ours <= theirs, (ours, theirs)
