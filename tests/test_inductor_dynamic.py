"""Dynamic shapes through AOTAutograd and Inductor: one compile serves every size.

Dynamo marks a dim dynamic (automatic dynamic on the second size, or ``mark_dynamic``); AOT
then traces the joint graph once with ``s0`` (``make_fx(tracing_mode="symbolic")``) and
Inductor generates kernels that take the sizes as arguments.  The tests count compiles
(``aot_autograd.counters``, ``compile_fx.compiled_graphs``) and compare values and gradients with
eager mode; where torch is installed, kernel counts are compared with
``torch.compile(dynamic=True)``.
"""

from __future__ import annotations

import importlib
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
import minitorch_compile.nn.functional as F
from minitorch_compile.aot import aot_autograd
from minitorch_compile.fx import make_fx
from minitorch_compile.inductor import metrics
from minitorch_compile.inductor.sizevars import Affine, Expr, size_hint

compile_fx = importlib.import_module("minitorch_compile.inductor.compile_fx")  # the module

# --------------------------------------------------------------------------- helpers


@pytest.fixture(autouse=True)
def _fresh():
    mtc.dynamo.reset()
    compile_fx.compiled_graphs.clear()
    yield
    mtc.dynamo.reset()


def _np(t):
    return None if t is None else t.detach().numpy()


def run_sizes(fn, sizes, make_inputs, grad=True, atol=1e-4):
    """Run ``fn`` compiled over ``sizes``; compare with eager each time; return the number of
    AOT traces and Inductor graphs made after the first (static) compile."""
    compiled = mtc.compile(fn)
    traces = graphs = None
    for k, n in enumerate(sizes):
        args = make_inputs(n)
        ref_args = [a.detach().requires_grad_(a.requires_grad) for a in args]
        out = compiled(*args)
        ref = fn(*ref_args)
        np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-4, atol=atol, err_msg=f"n={n}")
        if grad:
            out.sum().backward()
            ref.sum().backward()
            for a, r in zip(args, ref_args):
                if r.grad is None:
                    assert a.grad is None
                else:
                    np.testing.assert_allclose(_np(a.grad), _np(r.grad), rtol=1e-4, atol=atol,
                                               err_msg=f"grad n={n}")
        if k == 0:  # the first size compiles statically; count from here
            traces = aot_autograd.counters["total"]
            graphs = len(compile_fx.compiled_graphs)
    return aot_autograd.counters["total"] - traces, len(compile_fx.compiled_graphs) - graphs


# --------------------------------------------------------------------------- sizevars.Expr


def test_expr_algebra_is_canonical():
    s0, s1 = Expr.symbol("s0"), Expr.symbol("s1")
    assert s0 * 2 + s1 * s0 == s0 * s1 + s0 + s0  # equal polynomials compare equal
    assert hash(s0 * 4 // 2) == hash(2 * s0)
    assert s0 - s0 == 0 and isinstance(s0 - s0, int)  # a constant is an int
    assert str((s0 * 3 + 1) // 2) == "((3*s0 + 1)//2)"
    assert size_hint((s0 * 3 + 1) // 2, {"s0": 5}) == 8
    with pytest.raises(TypeError):
        _ = s0 < 4  # no decision on a symbolic size
    index = Affine.var("x0") * s1 + Affine.var("x1")
    assert index.coef("x0") == s1 and str(index) == "s1*x0 + x1"


# --------------------------------------------------------------------------- make_fx


def test_make_fx_symbolic_records_size_computations():
    def f(x, y):
        return x.view(x.shape[0] * 4) * 2, y.expand(x.shape[0], 4)

    gm = make_fx(f, tracing_mode="symbolic")(mtc.randn(5, 4), mtc.randn(1, 4))
    code = gm.code
    assert "sym_size_int = mtc.fx.proxy_tensor.sym_size(x_1, 0)" in code
    assert re.search(r"view\.default\(x_1, \(mul(_\d+)?,\)\)", code), code
    assert any("s0" in g for g in gm.shape_env.guards)  # decisions on sizes are guards
    for n in (3, 9):  # the graph computes the sizes: it runs for other sizes
        x, y = mtc.randn(n, 4), mtc.randn(1, 4)
        a, b = gm(x, y), f(x, y)
        np.testing.assert_allclose(a[0].numpy(), b[0].numpy())
        assert tuple(a[1].shape) == (n, 4)


# --------------------------------------------------------------------------- AOT + Inductor


def test_sizes_3_to_64_compile_once():
    def f(x, w):
        return (x.cos() * w).softmax(-1) * x.shape[0]

    traces, graphs = run_sizes(f, range(3, 65),
                               lambda n: [mtc.randn(n, 8, requires_grad=True),
                                          mtc.randn(8, requires_grad=True)])
    assert traces == 1  # one symbolic trace (joint) after the dynamic recompile
    assert graphs == 2  # its forward and backward, compiled once each
    fw, bw = compile_fx.compiled_graphs[-2:]
    assert "s0 = primals_1.shape[0]" in fw.source
    assert re.search(r"def fused_\w+\(.*ks0\):", fw.source)  # kernels take the size
    assert re.search(r"fused_\w+\(.*, s0\)", fw.source)  # ... and the wrapper passes it


def test_backward_takes_saved_sizes_as_inputs():
    def f(x):
        return x.reshape(-1, 2).sum(1) * x.shape[0]

    run_sizes(f, [4, 6, 8], lambda n: [mtc.randn(n, 4, requires_grad=True)])
    bw = compile_fx.compiled_graphs[-1].gm
    ins = [n for n in bw.graph.nodes if n.op == "placeholder"]
    sizes = [n for n in ins if hasattr(n.meta.get("val"), "hint")]
    assert sizes, bw.code  # a size saved by the forward is a backward input, as in torch
    assert all(not hasattr(n.meta.get("val"), "shape") for n in sizes)


def test_mark_dynamic_compiles_symbolically_first_time():
    @mtc.compile
    def f(x):
        return (x.sin() + 1).sum(0)

    x = mtc.randn(6, 3)
    mtc.dynamo.mark_dynamic(x, 0)
    np.testing.assert_allclose(f(x).numpy(), (x.sin() + 1).sum(0).numpy(), rtol=1e-5)
    for n in (2, 7, 33):
        y = mtc.randn(n, 3)
        np.testing.assert_allclose(f(y).numpy(), (y.sin() + 1).sum(0).numpy(), rtol=1e-5)
    assert len(compile_fx.compiled_graphs) == 1
    assert "ks0" in compile_fx.compiled_graphs[0].source


def test_equal_symbolic_sizes_fuse_as_static_ones():
    def kernels(dynamic):
        mtc.dynamo.reset()
        metrics.reset()

        def f(x):
            return (x.cos() * 2).sum(-1) + x.sin().amax(-1)

        mtc.compile(f, dynamic=dynamic)(mtc.randn(5, 4))
        return metrics.generated_kernel_count, compile_fx.compiled_graphs[-1].source

    static, static_src = kernels(False)
    dynamic, dynamic_src = kernels(True)
    assert "ks0" in dynamic_src and "ks0" not in static_src
    assert dynamic == static == 1  # s0 == s0 as 5 == 5: the same fusion decisions


def test_not_symbolic_yet_is_specialised_with_reason():
    """The npu's code generator compiles static sizes only: a dynamic graph on the npu is
    compiled per size instead, with the reason — and stays correct."""
    mtc.npu.set_spec()
    f = mtc.compile(lambda x: x.cos() * 2)
    for n in (3, 4, 5, 4):
        x = mtc.randn(n)
        np.testing.assert_allclose(f(x.npu()).cpu().numpy(), (x.cos() * 2).numpy(),
                                   rtol=1e-5)
    spec = compile_fx.compiled_graphs[-1]
    assert isinstance(spec, compile_fx.SpecializedFxGraph)
    assert "static sizes only" in spec.reason
    assert len(spec.compiled) == 2  # sizes 4 and 5 (4 twice: one entry)


def test_trace_guards_are_checked_by_the_artifact():
    """A decision on sizes made while tracing (here ``s0 == s1``: duck sizing) is part of the
    key/guards: a call where it differs is traced again, never run with the wrong graph."""
    def f(x, y):
        return (x * 2).sum() + (y + 1).sum()

    compiled = mtc.compile(f)
    for n, m in [(3, 4), (5, 5), (6, 7), (8, 8), (9, 2)]:
        x, y = mtc.randn(n), mtc.randn(m)
        np.testing.assert_allclose(compiled(x, y).numpy(), f(x, y).numpy(), rtol=1e-5)


# --------------------------------------------------------------------------- hypothesis

_PROGRAMS = {
    "pointwise": lambda x, w: (x.cos() * x.sin() + 1).exp(),
    "reduction": lambda x, w: (x * 2).sum(1) + x.amax(1),
    "broadcast": lambda x, w: x * w + w.sin(),
    "view": lambda x, w: (x.t().reshape(-1) * 2).view(w.shape[0], -1).sum(0),
    "permute_slice": lambda x, w: x.permute(1, 0)[:, 1:] * 2 + x.t()[:, :-1],
    "matmul": lambda x, w: (x @ w.reshape(-1, 1)).relu(),
    "softmax": lambda x, w: F.softmax(x, -1) * w,
    "layer_norm": lambda x, w: F.layer_norm(x, (w.shape[0],), w, w),
    "mean_var": lambda x, w: x.mean(0) + x.var(0),
}


@settings(max_examples=12, deadline=None)
@given(name=st.sampled_from(sorted(_PROGRAMS)), cols=st.integers(2, 6),
       sizes=st.lists(st.integers(3, 40), min_size=3, max_size=5, unique=True))
def test_dynamic_programs_compile_once(name, cols, sizes):
    mtc.dynamo.reset()
    compile_fx.compiled_graphs.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback, no recompile-limit warning
        traces, graphs = run_sizes(_PROGRAMS[name], sizes,
                                   lambda n: [mtc.randn(n, cols, requires_grad=True),
                                              mtc.randn(cols, requires_grad=True)])
    assert traces == 1 and graphs == 2, (traces, graphs)
    assert not any(isinstance(g, compile_fx.SpecializedFxGraph)
                   for g in compile_fx.compiled_graphs)


# --------------------------------------------------------------------------- vs torch


_TORCH_PROGRAMS = {  # methods both libraries have
    "pointwise": _PROGRAMS["pointwise"],
    "reduction": _PROGRAMS["reduction"],
    "broadcast": _PROGRAMS["broadcast"],
    "softmax": lambda x, w: x.softmax(-1) * w,
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(_TORCH_PROGRAMS))
def test_dynamic_kernel_count_vs_torch(name):
    torch = pytest.importorskip("torch")
    import torch._inductor.metrics as tmetrics

    try:
        torch.compile(lambda x: x.cos() + 1)(torch.ones(3))
    except Exception as e:  # noqa: BLE001 - no C++ compiler
        pytest.skip(f"torch's CPU Inductor does not run here: {e}")
    fn = _TORCH_PROGRAMS[name]
    torch._dynamo.reset()
    tmetrics.reset()
    x, w = np.random.randn(7, 4).astype(np.float32), np.random.randn(4).astype(np.float32)
    expected = torch.compile(fn, dynamic=True)(torch.tensor(x), torch.tensor(w))
    theirs = tmetrics.generated_kernel_count
    metrics.reset()
    ours = mtc.compile(fn, dynamic=True)(mtc.tensor(x), mtc.tensor(w))
    assert "ks0" in compile_fx.compiled_graphs[-1].source
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    assert metrics.generated_kernel_count <= theirs


def test_sizes_as_scalar_operands_keep_eager_dtypes():
    """``i * x.shape[0]`` with an int tensor stays int64 (a size is an int scalar), and
    ``i // x.shape[1]`` is floor division of ints, as in eager mode."""
    def f(x, i):
        return i * x.shape[0] + (x * x.shape[0]).sum(0).to(mtc.int64), i // x.shape[1]

    compiled = mtc.compile(f, dynamic=True)
    for n in (3, 5, 9):
        x, i = mtc.randn(n, 4), mtc.randint(0, 10, (n, 4))
        for a, b in zip(compiled(x, i), f(x, i)):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert len(compile_fx.compiled_graphs) == 1
    assert "ks0" in compile_fx.compiled_graphs[0].source


def test_symbolic_size_as_an_index_and_a_graph_without_inputs():
    def pick(x):
        return x.cos() * x.numel() + x[x.shape[0] // 2]

    traces, graphs = run_sizes(pick, [3, 4, 7, 10], lambda n: [mtc.randn(n, 2)], grad=False)
    assert (traces, graphs) == (1, 1)

    def branch(x, y):  # size 3: the graph has no input and no op left (it used to crash)
        v = x
        if v.shape[0] > 3:
            v = v * 2
        return v

    compiled = mtc.compile(branch)
    for n in (2, 3, 5, 6):
        x = mtc.randn(n)
        np.testing.assert_allclose(compiled(x, x).numpy(), branch(x, x).numpy())


def test_aot_falls_back_to_concrete_sizes_when_symbolic_tracing_fails(monkeypatch):
    """Whatever cannot be traced symbolically is traced per size instead, with the reason in
    the ``dynamic`` log — never an error the program would not raise eagerly."""
    real = aot_autograd.create_aot_pair

    def no_symbolic(*args, **kwargs):
        if len(args) > 6 and args[6]:
            raise NotImplementedError("no symbolic meta rule (test)")
        return real(*args, **kwargs)

    monkeypatch.setattr(aot_autograd, "create_aot_pair", no_symbolic)
    traces, graphs = run_sizes(lambda x: x.sin() * 3, [3, 4, 5, 4],
                               lambda n: [mtc.randn(n, requires_grad=True)])
    assert traces == 2  # sizes 4 and 5, each traced concretely (4 again: a cache hit)
    assert all("ks0" not in g.source for g in compile_fx.compiled_graphs)


def test_exact_division_by_a_size_simplifies():
    """``x.reshape(x.shape[0], -1)`` infers ``(s0*4)//s0``: exactly ``4``, so the graph stays
    symbolic (an opaque ``//`` would not match ``4`` and the graph would be specialised)."""
    s0, s1 = Expr.symbol("s0"), Expr.symbol("s1")
    assert (s0 * s1 * 4) // s0 == 4 * s1 and (s0 * 3) % s0 == 0
    assert str((s0 * 3 + 1) // s0) == "((3*s0 + 1)//s0)"

    def f(x):
        return F.softmax((x.reshape(-1) * 2).reshape(x.shape[0], -1), -1)

    traces, graphs = run_sizes(f, [3, 5, 8], lambda n: [mtc.randn(n, 4, requires_grad=True)])
    assert (traces, graphs) == (1, 2)
    assert not any(isinstance(g, compile_fx.SpecializedFxGraph)
                   for g in compile_fx.compiled_graphs)


@settings(max_examples=10, deadline=None)
@given(name=st.sampled_from(sorted(_PROGRAMS)),
       shapes=st.lists(st.tuples(st.integers(3, 24), st.integers(2, 9)).filter(
           lambda s: s[0] != s[1]), min_size=2, max_size=4, unique=True))
def test_every_dim_dynamic_compiles_once(name, shapes):
    """``dynamic=True``: rows and columns are both symbols from the first call on."""
    mtc.dynamo.reset()
    compile_fx.compiled_graphs.clear()
    fn = _PROGRAMS[name]
    compiled = mtc.compile(fn, dynamic=True)
    traces = aot_autograd.counters["total"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for rows, cols in shapes:
            x, w = mtc.randn(rows, cols, requires_grad=True), mtc.randn(cols, requires_grad=True)
            xe, we = x.detach().requires_grad_(), w.detach().requires_grad_()
            out, ref = compiled(x, w), fn(xe, we)
            np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-4, atol=1e-4)
            out.sum().backward()
            ref.sum().backward()
            for a, e in ((x, xe), (w, we)):
                if e.grad is None:
                    assert a.grad is None
                else:
                    np.testing.assert_allclose(_np(a.grad), _np(e.grad), rtol=1e-4, atol=1e-4)
    assert aot_autograd.counters["total"] - traces == 1
    assert len(compile_fx.compiled_graphs) == 2
    assert all("ks0" in g.source for g in compile_fx.compiled_graphs)
