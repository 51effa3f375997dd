"""Indirect indexing in Inductor (``inductor/index_lowering.py``, ``codegen/cpu_indirect.py``):
``x[idx]``, ``gather``, ``index_select``, ``embedding``, ``select_scatter`` and
``argmax``/``argmin`` lower to generated kernels that fuse with their neighbours.

Every case: compiled == eager (values, dtypes, gradients), no fallback kernel, and the fused
kernel's name; out-of-range indices raise eager's error type from the generated kernel;
hypothesis varies shapes, dims and index tensors; dynamic sizes compile once; kernel counts
against torch 2.13's CPU Inductor where torch is installed.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.usefixtures("strict_inductor")


def _t(a, grad=False):
    t = mtc.tensor(np.array(a))
    return t.requires_grad_() if grad else t


LOWERED = {f"aten.{op}" for op in ("embedding.default", "gather.default", "index.Tensor",
                                   "index_select.default", "select_scatter.default",
                                   "argmax.default", "argmin.default", "index_put.default",
                                   "scatter_add.default", "cat.default",
                                   "scatter.default",
                                   "embedding_dense_backward.default")}


def compiled_vs_eager(fn, *args, backward=False):
    """Run ``fn`` compiled and eagerly; return the generated kernels' names."""
    mtc.dynamo.reset()
    metrics.reset()
    start = len(inductor.compiled_graphs)
    eager_args = [a.detach().requires_grad_(a.requires_grad) for a in args]
    out = mtc.compile(fn, fullgraph=True)(*args)
    ref = fn(*eager_args)
    outs, refs = (out, ref) if isinstance(out, tuple) else ((out,), (ref,))
    for o, r in zip(outs, refs):
        assert o.dtype == r.dtype and tuple(o.shape) == tuple(r.shape)
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=1e-6,
                                   atol=1e-6)
    names = [k.name for k in metrics.kernel_records]
    fallbacks = [op for g in inductor.compiled_graphs[start:] for op, _ in g.fallbacks]
    assert not set(fallbacks) & LOWERED, fallbacks
    if backward:
        sum(o.sum() for o in outs).backward()
        sum(r.sum() for r in refs).backward()
        for a, e in zip(args, eager_args):
            if a.requires_grad:
                np.testing.assert_allclose(a.grad.numpy(), e.grad.numpy(), rtol=1e-5,
                                           atol=1e-6)
    return names


RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 16)).astype(np.float32)
W = RNG.standard_normal((10, 4)).astype(np.float32)


# ------------------------------------------------------------------ the gathers fuse


@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_embedding_fuses_with_its_consumer(itype):
    idx = _t(np.array([[1, 2, 9], [0, 9, 3]], dtype=itype))
    names = compiled_vs_eager(lambda i, w: F.embedding(i, w) * 2, idx, _t(W, True),
                              backward=True)
    assert names[0] == "fused_embedding_mul_0"


def test_gather_fuses_producer_and_consumer():
    idx = _t(RNG.integers(0, 16, (8, 5)))
    names = compiled_vs_eager(lambda x, i: (x * 2).gather(1, i).cos(), _t(X, True), idx,
                              backward=True)
    assert names == ["fused_cos_gather_mul_0"] + names[1:]  # x * 2 inlined into the gather


def test_index_select_feeds_a_reduction():
    idx = _t(np.array([3, 1, 0, 15, 3]))
    names = compiled_vs_eager(lambda x, i: (x.index_select(1, i) + 1).sum(0), _t(X, True), idx,
                              backward=True)
    assert names[0] == "fused_add_index_select_sum_0"


@pytest.mark.parametrize("key", [
    "neg", "two_broadcast", "non_adjacent", "middle", "int32",
])
def test_advanced_indexing(key):
    y = _t(RNG.standard_normal((3, 4, 5)).astype(np.float32), True)
    cases = {
        "neg": (lambda y, i: y[i] * 3, [np.array([2, -1, 0, -3])]),
        "two_broadcast": (lambda y, i, j: y[i, j] + 1, [np.array([[1], [2]]),
                                                         np.array([0, -3, 3])]),
        "non_adjacent": (lambda y, i, j: y[i, :, j], [np.array([0, 2]), np.array([1, 4])]),
        "middle": (lambda y, i: y[:, i].exp(), [np.array([[0, 3], [1, -1]])]),
        "int32": (lambda y, i: y[i], [np.array([1, 0], dtype=np.int32)]),
    }
    fn, idx = cases[key]
    names = compiled_vs_eager(fn, y, *[_t(i) for i in idx], backward=True)
    assert names[0].startswith("fused_") and "index" in names[0]


def test_empty_results_compile_and_call_no_kernel():
    """An empty result is no fallback: the kernel over no elements is never called (it would
    view the empty index input, read as a broadcast, and check one element of nothing) — the
    values, no spurious IndexError, a reduction over the empty dim still fills its identity."""
    empty = _t(np.zeros(0, dtype=np.int64))
    for fn in (lambda x, i: x[i] * 2, lambda x, i: x.index_put([i], x[0]),
               lambda x, i: x.index_put([i], x[0], True) + 1, lambda x, i: F.embedding(i, x),
               lambda x, i: x.index_select(0, i), lambda x, i: F.embedding(i, x).sum(0),
               lambda x, i: x.gather(1, i.reshape(0, 1).expand(0, 3)) * 2):
        mtc.dynamo.reset()
        out = mtc.compile(fn)(_t(X), empty)
        assert tuple(out.shape) == tuple(fn(_t(X), empty).shape)
        np.testing.assert_array_equal(out.numpy(), fn(_t(X), empty).numpy())
        assert not inductor.compiled_graphs[-1].fallbacks
    assert "no elements, no kernel" in inductor.compiled_graphs[-1].source


def test_unrealized_source_is_inlined_at_the_gathered_positions():
    """``(x + 1)[idx]``: one kernel; the source body runs at the indirect indices only."""
    idx = _t(np.array([7, 0, 7]))
    names = compiled_vs_eager(lambda x, i: (x.cos() + 1)[i], _t(X), idx)
    assert names == ["fused_add_cos_index_0"]


def test_loop_ir_prints_the_indirect_variable():
    mtc.dynamo.reset()
    mtc.compile(lambda i, w: F.embedding(i, w) * 2)(_t(np.array([1, 2])), _t(W))
    text = inductor.compiled_graphs[-1].ir_pre_fusion
    assert "indirect0 = ops.indirect_indexing(tmp0, 10, wrap_neg=False, check='embedding')" \
        in text
    assert "tmp1 = ops.load(arg1_1, i1 + 4*indirect0)" in text


# ------------------------------------------------------------------ scatters


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("key", ["rows", "broadcast_values", "two_indices", "int32"])
def test_index_put(key, accumulate):
    a = RNG.standard_normal((12, 4, 3)).astype(np.float32)
    rows = np.array([3, -1, 0, 7]) if not accumulate else np.array([3, 3, -1, 0, 11, 3])
    cases = {
        "rows": ([rows], (len(rows), 4, 3)),
        "broadcast_values": ([rows], (3,)),
        "two_indices": ([rows, np.arange(len(rows)) % 4], (len(rows), 3)),
        "int32": ([rows.astype(np.int32)], (1, 4, 1)),
    }
    idx, vshape = cases[key]
    v = RNG.standard_normal(vshape).astype(np.float32)

    def fn(a, v, *idx):
        return (a * 2).index_put(list(idx), v + 1, accumulate).sin()
    names = compiled_vs_eager(fn, _t(a, True), _t(v, True), *[_t(np.array(i)) for i in idx],
                              backward=True)
    assert any("index_put" in n for n in names)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_hypothesis_index_put(data):
    """Indexed dims anywhere (``a[:, i] = v`` walks a dim before the indexed one), values
    broadcast, repeated indices with ``accumulate``."""
    shape = data.draw(st.lists(st.integers(2, 5), min_size=2, max_size=3))
    dim = data.draw(st.integers(0, len(shape) - 1))
    accumulate = data.draw(st.booleans())
    k = data.draw(st.integers(1, 4))
    idx = RNG.integers(-shape[dim], shape[dim], k) if accumulate else \
        RNG.permutation(shape[dim])[:k]
    target = list(shape)
    target[dim] = len(idx)
    vshape = target[data.draw(st.integers(0, len(target) - 1)):]
    a = RNG.standard_normal(shape).astype(np.float32)
    v = RNG.standard_normal(vshape).astype(np.float32)

    def fn(a, v, i):
        return (a + 1).index_put([None] * dim + [i], v * 3, accumulate) * 2
    compiled_vs_eager(fn, _t(a, True), _t(v, True), _t(idx), backward=True)


def test_index_put1_fuses_its_inputs_into_the_scatter():
    """torch's ``test_index_put1`` (3 kernels in torch; 4 when this was a fallback): the
    copies fuse horizontally, ``b + 1`` and ``c + 1`` inline into the scatter."""
    a = RNG.standard_normal((64, 4, 2)).astype(np.float32)
    b = RNG.integers(0, 60, 10)
    c = RNG.standard_normal((10, 4, 2)).astype(np.float32)
    names = compiled_vs_eager(
        lambda a, b, c: (a.index_put([b], c), (a + 1).index_put_([b + 1], c + 1) + 1),
        _t(a), _t(b), _t(c))
    assert names == ["fused_add_index_put_0", "fused_add_index_put_1", "fused_add_2"]
    assert "buf3 = buf2  # written in place" in inductor.compiled_graphs[-1].source


def test_setitem_on_an_input_mutates_it():
    def fn(a, i, v):
        a[i] = v * 2
        return a + 1
    a = RNG.standard_normal((6, 3)).astype(np.float32)
    ours, theirs = _t(a), _t(a)
    i, v = _t(np.array([4, 0])), _t(np.ones((2, 3), dtype=np.float32))
    mtc.dynamo.reset()
    np.testing.assert_allclose(mtc.compile(fn)(ours, i, v).numpy(), fn(theirs, i, v).numpy())
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_scatter_and_scatter_add():
    """``scatter`` (the last write wins, as eager's kernel) and ``scatter_add``, gradients
    through both (``gather``'s backward is a ``scatter_add`` too)."""
    idx = _t(np.array([[0, 7, 5, 2], [5, 7, 5, 1]]))  # columns 1 and 2 repeat a row
    src = RNG.standard_normal((2, 4)).astype(np.float32)
    names = compiled_vs_eager(lambda x, s, i: (x.scatter(0, i, s.exp()),
                                               x.scatter_add(0, i, s * 2).cos()),
                              _t(X[:, :4].copy(), True), _t(src, True), idx, backward=True)
    assert any("scatter" in n for n in names)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_backward_is_a_scatter_add(padding_idx):
    idx = _t(np.array([[2, 5, 2], [0, 2, 9]]))
    names = compiled_vs_eager(lambda i, w: F.embedding(i, w, padding_idx).tanh(), idx,
                              _t(W, True), backward=True)
    assert any("embedding_dense_backward" in n for n in names)


# ------------------------------------------------------------------ cat


def test_cat_computes_each_input_into_its_slice():
    """torch's ``test_cat``: no copy of a fused input; slices of several cats in one kernel."""
    def fn(a):
        tmp = a * 2
        return (mtc.cat((a, a[:, :4] + 1, a + 2), -1), mtc.cat((tmp, tmp), 0),
                mtc.cat((tmp, tmp.double()), 0))
    names = compiled_vs_eager(fn, _t(X, True), backward=True)
    assert names[:2] == ["fused__to_copy_add_cat_mul_0", "fused_add_cat_1"]
    src = inductor.compiled_graphs[-2].source  # the forward graph
    assert "buf3 = strided(buf0, 288, 20, (8, 16), (36, 1))" in src


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack(dim):
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    compiled_vs_eager(lambda a, b: mtc.stack([a.cos(), b, a * b], dim).exp(), _t(a, True),
                      _t(b, True), backward=True)
    compiled_vs_eager(lambda a, b: mtc.cat([a, b.t().t(), mtc.tensor([])], dim % 2) * 2,
                      _t(a, True), _t(b, True), backward=True)


def test_cat_with_an_input_that_reads_nothing_is_one_pointwise_kernel():
    """torch's ``test_cat_uint8``: ``zeros(1).expand`` would be a kernel sharing no data, so
    the cat is one body reading each input at a clamped position (torch's pointwise cat)."""
    x = _t(RNG.integers(0, 256, (3, 255)).astype(np.uint8))
    names = compiled_vs_eager(
        lambda x: mtc.cat([x.new_zeros(1).expand(x.shape[:1] + (1,)), x], dim=-1), x)
    assert names == ["fused_cat_zeros_0"]


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("op,bad", [
    (lambda x, i: x[i], np.array([0, 8])),
    (lambda x, i: x[i], np.array([-9])),
    (lambda x, i: x.gather(0, i[:, None].expand(-1, 3)), np.array([1, -1])),
    (lambda x, i: x.index_select(1, i), np.array([16])),
    (lambda x, i: F.embedding(i, x), np.array([[3, 8]])),
    (lambda x, i: x.index_put([i], x[0] * 2), np.array([1, 8])),
    (lambda x, i: x.index_put([i], x[0], True), np.array([-9])),
    (lambda x, i: x.scatter_add(0, i[:, None].expand(-1, 16), x[:2]), np.array([1, 8])),
])
def test_out_of_range_index_raises_eagers_error(op, bad):
    x = _t(X)
    with pytest.raises(Exception) as eager:
        op(x, _t(bad))
    mtc.dynamo.reset()
    compiled = mtc.compile(op, fullgraph=True)
    good = np.zeros_like(bad)
    compiled(x, _t(good))  # compiles and runs
    with pytest.raises(type(eager.value)) as ours:
        compiled(x, _t(bad))
    assert str(ours.value) == str(eager.value)


# ------------------------------------------------------------------ index values


def test_select_scatter_uses_index_expr_not_a_constant():
    def fn(x):
        x = x.clone()
        x[:, 3] = 3.0
        x[:, -1] = x[:, 0]
        return x * 2
    names = compiled_vs_eager(fn, _t(X))
    src = inductor.compiled_graphs[-1].source
    assert len(names) == 1 and "const_" not in src and "iota(" in src


@pytest.mark.parametrize("shape,dim,keepdim", [
    ((8, 16), None, False), ((8, 16), 1, False), ((8, 16), 0, True), ((4, 1, 6), 1, False),
    ((4, 5, 6), None, True), ((4, 5, 6), -1, False),
])
@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_argmax_argmin(shape, dim, keepdim, kind):
    a = RNG.integers(-3, 3, shape).astype(np.float32)  # ties: the first index wins
    a.flat[5] = np.nan
    names = compiled_vs_eager(lambda x: getattr(x * 2, kind)(dim, keepdim), _t(a))
    assert len(names) == 1


def test_argmax_of_a_permuted_view_over_all_dims():
    a = RNG.standard_normal((5, 7)).astype(np.float32)
    compiled_vs_eager(lambda x: (x.t() + 1).argmax(), _t(a))


# ------------------------------------------------------------------ varying programs


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hypothesis_gathers(data):
    rows = data.draw(st.integers(2, 9))
    cols = data.draw(st.integers(2, 9))
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    dim = data.draw(st.sampled_from([0, 1, -1]))
    n = (rows, cols)[dim]
    k = data.draw(st.integers(1, 6))
    itype = data.draw(st.sampled_from(["int32", "int64"]))
    kind = data.draw(st.sampled_from(["gather", "index_select", "index", "embedding"]))
    if kind == "gather":
        shape = [rows, cols]
        shape[dim] = k
        idx = RNG.integers(0, n, shape)
        fn = lambda x, i: (x.sin() * x).gather(dim, i) - 1  # noqa: E731
    elif kind == "index_select":
        idx = RNG.integers(0, n, (k,))
        fn = lambda x, i: x.index_select(dim, i).exp().sum(dim)  # noqa: E731
    elif kind == "index":
        idx = RNG.integers(-rows, rows, (k, data.draw(st.integers(1, 3))))
        fn = lambda x, i: x[i] * x[0]  # noqa: E731
    else:
        idx = RNG.integers(0, rows, (k,))
        fn = lambda w, i: F.embedding(i, w).relu()  # noqa: E731
    compiled_vs_eager(fn, _t(x, True), _t(idx.astype(itype)), backward=True)


DYNAMIC = {
    "embedding": lambda w, i: F.embedding(i, w) * w.sum(),
    "gather": lambda w, i: w.gather(0, i[:, None].expand(-1, 4)).cos(),
    "index_put": lambda w, i: w.index_put([i], w[0] * 2, True) + 1,
    "x[i]": lambda w, i: w[-i - 1] * 2,
    "argmax": lambda w, i: (w.argmax(0), w.argmin()),
    "cat": lambda w, i: mtc.cat([w, w * 2], 0).sum(0),
}


@pytest.mark.parametrize("name", list(DYNAMIC))
def test_dynamic_sizes_compile_once(name):
    """``dynamic=True``: one graph for every size; the kernels take the sizes (``ks0``)."""
    fn = DYNAMIC[name]
    mtc.dynamo.reset()
    compiled = mtc.compile(fn, dynamic=True)
    start = len(inductor.compiled_graphs)
    for rows, n in [(10, 3), (20, 7), (13, 5)]:
        w = RNG.standard_normal((rows, 4)).astype(np.float32)
        i = RNG.integers(0, rows, (n,))
        out, ref = compiled(_t(w), _t(i)), fn(_t(w), _t(i))
        for o, r in zip(*[x if isinstance(x, tuple) else (x,) for x in (out, ref)]):
            np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)
    graphs = inductor.compiled_graphs[start:]
    assert len(graphs) == 1 and "ks0" in graphs[0].source and not graphs[0].fallbacks


# ------------------------------------------------------------------ against torch


TORCH_CASES = {
    "embedding * 2": (lambda L: lambda i, w: L.nn.functional.embedding(i, w) * 2,
                      [np.array([[1, 2], [0, 9]]), W]),
    "gather cos": (lambda L: lambda x, i: (x * 2).gather(1, i).cos(),
                   [X, RNG.integers(0, 16, (8, 5))]),
    "index_select sum": (lambda L: lambda x, i: (x.index_select(1, i) + 1).sum(0),
                         [X, np.array([3, 1, 0])]),
    "x[i, j]": (lambda L: lambda x, i, j: x[i, j] * 3,
                [X, np.array([[1], [-2]]), np.array([0, 5, -1])]),
    "argmax argmin": (lambda L: lambda x: (x.argmax(1), (x + 1).argmin(), x.argmax(0)), [X]),
    "select_scatter": (lambda L: lambda x: L.select_scatter(x, x[:, 0] + 1, 1, 3) * 2, [X]),
    "index_put accumulate": (lambda L: lambda x, i: (x + 1).index_put([i + 1], x[0], True) * 2,
                             [X, np.array([0, 3, 3, -2])]),
    "cat": (lambda L: lambda x: (L.cat([x.cos(), x * 2, x[:, :3]], 1) + 1,
                                 L.cat([x, x], 0).sum(0)), [X]),
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(TORCH_CASES))
def test_no_more_kernels_than_torch(name):
    torch = pytest.importorskip("torch")
    import torch._inductor.metrics as tm

    build, arrays = TORCH_CASES[name]
    try:
        torch._dynamo.reset()
        tm.reset()
        theirs = torch.compile(build(torch))(*[torch.from_numpy(np.array(a)) for a in arrays])
    except Exception as e:  # noqa: BLE001 - no C++ compiler, or another setup problem
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    names = compiled_vs_eager(build(mtc), *[_t(a) for a in arrays])
    ours = mtc.compile(build(mtc))(*[_t(a) for a in arrays])
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    ours = ours if isinstance(ours, tuple) else (ours,)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    assert len(names) <= tm.generated_kernel_count, (names, tm.generated_kernel_count)


def test_two_cats_sharing_a_clamped_index_tile_read_their_own_positions():
    """Regression: ``check_indices`` handed back the tile buffer of the clamped positions
    itself, and the kernel reused that buffer for the next cat's positions before the second
    load read it — the flipped cat came out wrong (prod's backward, tests/test_tensor_ops_*)."""
    x = mtc.tensor(np.random.default_rng(1).uniform(0.1, 1, (4, 4)).astype(np.float32))

    def f(x):
        ones = mtc.ones(4, 1)
        left = mtc.cat([ones, x.narrow(1, 0, 3)], 1).cumprod(1)
        right = mtc.cat([ones, x.flip([1]).narrow(1, 0, 3)], 1).cumprod(1)
        return left, right

    mtc.dynamo.reset()
    for got, want in zip(mtc.compile(f)(x), f(x)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
