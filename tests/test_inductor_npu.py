"""Inductor for the npu: compiled on npu == eager on cpu (values and grads) on generated
programs; the accounting invariants; UB overflow errors; the generated kernels' structure."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile import inductor
from minitorch_compile.inductor.codegen.npu import NPUCompileError
from tests.test_inductor import (
    _build,
    _close,
    check_compiled_equals_eager,
    check_edge_case,
    programs,
)


@pytest.fixture(autouse=True)
def strict_inductor():
    """Any 'inductor: could not compile' warning fails the test."""
    mtc.dynamo.reset()
    mtc.npu.set_spec()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="inductor:")
        yield
    mtc.npu.set_spec()
    mtc.dynamo.reset()


@settings(max_examples=40, deadline=None)
@given(programs(), st.booleans())
def test_compiled_on_npu_equals_eager_on_cpu(prog, with_grad):
    check_compiled_equals_eager(prog, with_grad, device="npu")


def _profile(fn, *args, compiled=True, grad=True):
    f = mtc.compile(fn) if compiled else fn
    with mtc.npu.profile() as prof:
        out = f(*args)
        if grad:
            out.sum().backward()
    return prof


PROGRAMS = {
    "cos_cos": lambda x: x.cos().cos(),
    "gelu": lambda x: mtc.nn.functional.gelu(x),
    "softmax": lambda x: mtc.softmax(x, -1),
    "layer_norm": lambda x: mtc.nn.functional.layer_norm(x, (x.shape[-1],)),
    "sum0": lambda x: x.exp().sum(0),
    "mean_all": lambda x: (x * x).mean(),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_accounting_invariants(name):
    fn = PROGRAMS[name]
    x = mtc.randn(256, 384, device="npu", requires_grad=True)
    fused = _profile(fn, x)
    eager = _profile(fn, x.detach().requires_grad_(), compiled=False)
    for k in fused.kernels:
        assert k.gm_bytes >= k.min_gm_bytes, k
        assert k.time_us <= k.time_us_serial + 1e-9, k
        assert k.time_us >= k.lower_bound_us - 1e-9, k
    f, e = fused.totals(), eager.totals()
    # eager layer norm is one kernel per direction (native_layer_norm and its backward, as in
    # torch), so fusion cannot move fewer bytes; its fused backward re-reads the row statistics
    slack = 1.005 if name == "layer_norm" else 1.0
    assert f["gm_read_bytes"] + f["gm_write_bytes"] <= \
        (e["gm_read_bytes"] + e["gm_write_bytes"]) * slack
    assert f["time_us"] <= e["time_us"] * slack
    assert any(k.kind == "inductor" for k in fused.kernels)


def test_single_buffer_is_serial_and_never_faster(monkeypatch):
    x = mtc.randn(512, 1024, device="npu")
    fn = lambda a: (a.cos() * a.sin()).exp()  # noqa: E731
    double = _profile(fn, x, grad=False)
    mtc.dynamo.reset()
    monkeypatch.setattr(inductor.config, "npu_buffer_num", 1)
    single = _profile(fn, x, grad=False)
    (d,), (s,) = double.kernels, single.kernels
    assert d.double_buffered and not s.double_buffered
    assert s.time_us == pytest.approx(s.time_us_serial)
    assert d.time_us < s.time_us
    assert d.gm_bytes == s.gm_bytes


def test_fused_pointwise_moves_the_minimum_bytes():
    x = mtc.randn(1024, 1024, device="npu")
    prof = _profile(lambda a: a.cos().cos() * 2 + 1, x, grad=False)
    (k,) = prof.kernels
    assert k.gm_bytes == k.min_gm_bytes == 2 * 1024 * 1024 * 4
    assert k.block_dim == mtc.npu.get_spec().num_cores


def test_tiles_fit_ub_and_kernel_shows_the_stages():
    x = mtc.randn(300, 2000, device="npu")
    prof = _profile(lambda a: mtc.softmax(a.cos(), -1), x, grad=False)
    (k,) = prof.kernels
    assert 0 < k.peak_ub_bytes <= mtc.npu.get_spec().ub_bytes
    src = inductor.compiled_graphs[-1].source
    for piece in ("TPipe()", "InitBuffer(q_x0, nbuf,", "GetBlockIdx()", "CopyIn(", "CopyOut(",
                  "TQue(VECIN", "TQue(VECOUT", "np.maximum.reduce"):
        assert piece in src, piece


def test_ub_overflow_is_an_error_naming_the_buffers():
    from minitorch_compile.inductor.codegen.npu import NPUKernel

    mtc.npu.set_spec(ub_bytes=4096)
    with pytest.raises(NPUCompileError, match=r"does not fit UB even one row per tile: needs "
                       r"\d+ bytes \(x0=2x4096, y\d+=2x4096.*\), UB has 4096"):
        mtc.compile(lambda a: mtc.softmax(a, -1), backend=_raising_backend)(
            mtc.randn(4, 1024, device="npu"))
    assert NPUKernel.plan  # the check lives in NPUKernel.plan


def _raising_backend(gm, example_inputs):
    """Inductor without the eager fallback: the compile error itself."""
    from minitorch_compile.aot import aot_module_simplified
    from minitorch_compile.inductor.compile_fx import compile_fx_inner

    return aot_module_simplified(gm, example_inputs, compile_fx_inner, compile_fx_inner)


def test_ub_overflow_falls_back_to_eager_with_the_reason():
    mtc.npu.set_spec(ub_bytes=4096)
    x = mtc.randn(4, 1024, device="npu")
    with pytest.warns(mtc.dynamo.exc.CompilerFallbackWarning, match="does not fit UB"):
        with warnings.catch_warnings():
            warnings.filterwarnings("default", message="inductor:")
            out = mtc.compile(lambda a: mtc.softmax(a, -1))(x)
    np.testing.assert_allclose(out.cpu().numpy(), mtc.softmax(x.cpu(), -1).numpy(), rtol=1e-6)


@pytest.fixture
def nz(monkeypatch):
    monkeypatch.setattr(inductor.config, "npu_cube_nz", True)


def test_matmul_on_nd_runs_the_cube_kernel_without_casts():
    a, b = mtc.randn(64, 32, device="npu"), mtc.randn(32, 48, device="npu")
    prof = _profile(lambda p, q: (p @ q).relu(), a, b, grad=False)
    assert [k.name for k in prof.kernels] == ["aten::mm", "fused_relu_0"]
    assert prof.kernels[0].cube_cycles > 0 and prof.kernels[0].l0_bytes > 0


def test_matmul_runs_on_the_cube_in_fractal_nz_with_visible_casts(nz):
    a, b = mtc.randn(64, 32, device="npu"), mtc.randn(32, 48, device="npu")
    prof = _profile(lambda p, q: (p @ q).relu(), a, b, grad=False)
    names = [k.name for k in prof.kernels]
    assert names == ["TransData(ND->FRACTAL_NZ)", "TransData(ND->FRACTAL_NZ)", "cube_mm",
                     "TransData(FRACTAL_NZ->ND)", "fused_relu_0"]
    mm = prof.kernels[2]
    assert mm.cube_cycles > 0 and mm.l0_bytes > 0 and mm.l1_bytes > 0


def _chain(x, w1, w2):
    return ((x @ w1) @ w2).relu() + (x @ w2.t()).sum()


def test_cast_elimination_removes_exactly_the_redundant_casts(nz):
    xs = [mtc.randn(20, 18), mtc.randn(18, 18), mtc.randn(18, 18)]
    with mtc.npu.profile() as prof:
        out = mtc.compile(_chain)(*[t.npu() for t in xs])
    np.testing.assert_allclose(out.cpu().numpy(), _chain(*xs).numpy(), rtol=1e-5, atol=1e-5)
    src = inductor.compiled_graphs[-1].source
    # three mm: 9 casts without the pass.  Removed: x's second cast (repeats), the cast of
    # x @ w1 back to NZ and its now unread ND copy (cancel); kept: w1, w2, w2.t(), two ND outs
    assert src.count("# cast removed: repeats") == 1
    assert src.count("# cast removed: cancels") == 2
    casts = [k.name for k in prof.kernels if k.name.startswith("TransData")]
    assert casts.count("TransData(ND->FRACTAL_NZ)") == 4
    assert casts.count("TransData(FRACTAL_NZ->ND)") == 2


def test_cast_elimination_keeps_needed_casts():
    from minitorch_compile.inductor.codegen.npu_cube import eliminate_casts, matmul_lines

    lines = ["buf0 = np.empty((4, 4), dtype=np.float32)", *matmul_lines("buf0", "a", "b"),
             "buf1 = np.empty((4, 4), dtype=np.float32)", *matmul_lines("buf1", "buf0", "c"),
             "fused_relu_0(buf0, buf2)", "return (buf1, )"]
    out, removed = eliminate_casts(lines)
    assert [k for k, _ in removed] == ["cancels"]  # buf0 is still read by the relu kernel
    assert "np.copyto(buf0, npu_cast(buf0_nz, ND))  # TransData(FRACTAL_NZ->ND)" in out
    out, removed = eliminate_casts([*matmul_lines("buf0", "a", "b"),
                                    *matmul_lines("buf1", "b", "a")])
    # a and b swap roles: the NZ copy of an array does not depend on its operand position
    assert [(k, ln.split(" =")[0]) for k, ln in removed] == [("repeats", "buf1_a"),
                                                             ("repeats", "buf1_b")]
    out, removed = eliminate_casts([*matmul_lines("buf0", "a", "b"),
                                    *matmul_lines("buf1", "c", "d")])
    assert removed == []


def test_benchmark_figures_in_the_readme_are_what_the_script_prints(capsys):
    """The npu figures are simulated (deterministic): the README's region must be current."""
    import sys

    from tests.doc_examples import REPO

    sys.path.insert(0, str(REPO / "benchmarks"))
    import bench_npu
    from _readme import read_figures

    text = bench_npu.main([])
    assert read_figures("bench_npu.py").strip() == "\n".join(
        line.rstrip() for line in text.strip().splitlines())
    assert "remat / default partition: 75% of the GM bytes" in text


@settings(max_examples=15, deadline=None)
@given(programs())
def test_compiled_with_nz_matmuls_equals_eager(prog):
    src, inputs, ints = prog
    if "@" not in src:
        return
    fn = _build(src)
    inductor.config.npu_cube_nz = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.filterwarnings("error", message="inductor:")
            expected = fn(*inputs, ints)
            got = mtc.compile(fn)(*[x.npu() for x in inputs], ints.npu())
    finally:
        inductor.config.npu_cube_nz = False
    for e, g in zip(expected, got):
        _close(g.cpu().numpy(), e.numpy(), e.numpy().dtype)


@pytest.mark.parametrize("name", sorted(__import__("tests.test_inductor").test_inductor.EDGE_CASES))
def test_edge_cases_on_npu(name):
    """Empty, 0-dim, int, bool, nan/inf, float64, strided inputs, views, fallbacks: compiled on
    the npu (no fallback warning) equals eager on the cpu."""
    check_edge_case(name, device="npu")


def test_a_weights_nz_copy_is_kept_across_calls_until_it_changes(nz):
    x, w = mtc.randn(32, 48, device="npu"), mtc.randn(48, 16, device="npu")
    f = mtc.compile(lambda a, b: (a @ b).relu())

    def casts():
        with mtc.npu.profile() as prof:
            out = f(x, w)
        np.testing.assert_allclose(out.cpu().numpy(), (x.cpu() @ w.cpu()).relu().numpy(),
                                   rtol=1e-5, atol=1e-5)
        return [k.name for k in prof.kernels].count("TransData(ND->FRACTAL_NZ)")

    assert casts() == 2
    assert casts() == 0  # both inputs unchanged: their NZ copies are reused
    with mtc.no_grad():
        w.mul_(0.5)  # an optimizer step writes the weight in place
    assert casts() == 1


def test_gelu_stays_one_vector_op_and_fused_is_not_slower_than_eager():
    """The npu keeps ``gelu`` whole (its vector unit has it as one instruction, as torch_npu
    does), so the fused kernel makes one pass where eager makes one: fused <= eager."""
    x = mtc.randn(256, 1024, device="npu")
    f = mtc.compile(mtc.nn.functional.gelu)
    f(x)
    with mtc.npu.profile() as eager:
        expected = mtc.nn.functional.gelu(x)
    with mtc.npu.profile() as fused:
        got = f(x)
    _close(got.cpu().numpy(), expected.cpu().numpy(), np.float32)
    (k,) = fused.kernels
    assert k.kind == "inductor" and k.time_us <= eager.kernels[0].time_us
    # one gelu pass over each tile (its cost per 256-byte repeat; tiles round up to whole
    # repeats), not the ~25 passes of an erf polynomial
    one_pass = mtc.npu.get_spec().vector_cost["gelu"] * x.numel() * 4 / 256
    assert one_pass <= k.vector_cycles <= 1.02 * one_pass


# ------------------------------------------------------------------ split reductions, many cores
SPLIT_REDUCTIONS = {
    "sum": lambda a: a.sum(),
    "mean": lambda a: a.mean(),
    "amax": lambda a: a.amax(),
    "max": lambda a: a.max(),
    "min_exp": lambda a: a.exp().min(),
    "var": lambda a: a.var(),
    "sum_sq_scaled": lambda a: (a * a).sum() * 0.5,
    "logsumexp_style": lambda a: (a - a.amax()).exp().sum(),
}


def _split_run(fn, x):
    mtc.dynamo.reset()
    g = mtc.compile(fn)
    g(x)
    with mtc.npu.profile() as prof:
        out = g(x)
    return out, [k for k in prof.kernels if k.kind == "inductor"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(SPLIT_REDUCTIONS)),
       st.lists(st.integers(1, 700), min_size=1, max_size=3).filter(
           lambda s: int(np.prod(s)) <= 300_000),
       st.sampled_from(["float32", "float16"]), st.floats(-50, 50))
def test_split_reductions_on_many_cores_equal_eager_on_cpu(name, shape, dtype, shift):
    """Whole-tensor reductions compiled on the npu (one core or several, as the tiling function
    chooses) == eager on the cpu; a shifted mean catches partial results used too early."""
    fn = SPLIT_REDUCTIONS[name]
    if dtype == "float16":  # a float16 sum overflows past 65,504 (eager too; see below)
        shape, shift = [min(s, 20) for s in shape], shift / 50
    rng = np.random.default_rng(len(shape) * 1000 + shape[0])
    data = (rng.standard_normal(shape) + shift).astype(dtype)
    want = fn(mtc.tensor(data)).numpy()
    got, _ = _split_run(fn, mtc.tensor(data).npu())
    tol = 2e-2 if dtype == "float16" else 1e-4
    np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), want.astype(np.float64),
                               rtol=tol, atol=tol * max(1.0, abs(float(want.max()))))


@pytest.mark.parametrize("name", sorted(SPLIT_REDUCTIONS))
@pytest.mark.parametrize("shape", [(2048, 1024), (999, 777), (37,)])
def test_multicore_split_reduction_never_slower_and_within_the_bytes(name, shape, monkeypatch):
    """When the tiling function chooses several cores for a split reduction, the launch's
    model times it no slower than the same kernel on one core; its GM bytes (the partials
    written to the workspace and read back included) stay within 1.05x the minimum."""
    mtc.manual_seed(0)
    x = mtc.randn(*shape, device="npu") + 3
    want = SPLIT_REDUCTIONS[name](x.cpu()).numpy()
    out, multi = _split_run(SPLIT_REDUCTIONS[name], x)
    monkeypatch.setattr(inductor.config, "npu_multicore_reduction", False)
    out1, single = _split_run(SPLIT_REDUCTIONS[name], x)
    for o in (out, out1):
        np.testing.assert_allclose(o.cpu().numpy(), want, rtol=1e-4, atol=1e-3)
    assert [k.name for k in multi] == [k.name for k in single]
    for m, s in zip(multi, single):
        assert s.block_dim == 1
        assert m.gm_bytes <= 1.05 * m.min_gm_bytes
        if m.block_dim > 1:
            assert m.time_us <= s.time_us + 1e-9, (m.name, m.time_us, s.time_us)
            assert m.gm_bytes > s.gm_bytes  # the workspace traffic is counted
    if shape == (2048, 1024):  # a large reduction: split over every core, much faster
        assert all(m.block_dim == mtc.npu.get_spec().num_cores for m in multi)
        assert sum(m.time_us for m in multi) < 0.5 * sum(s.time_us for s in single)


def test_multicore_split_reduction_shows_the_workspace_sync_and_combine():
    mtc.compile(lambda a: a.sum())(mtc.randn(1024, 1024, device="npu"))
    src = inductor.compiled_graphs[-1].source
    for line in ("# GM workspace: one partial per core", "CopyOut(w0[GetBlockIdx()], None, acc0)",
                 "SyncAll()", "if GetBlockIdx() == GetBlockNum() - 1:",
                 "p0 = CopyIn(q_p0, w0)", "np.add.reduce(p0, axis=0, out=acc0)"):
        assert line in src, line


@pytest.mark.parametrize("device", ["cpu", "npu"])
def test_a_reduction_of_a_reductions_result_is_not_computed_from_partials(device):
    """x.var() reads the mean inside its own reduction: fused into one tiled pass over the
    whole tensor, the mean would be a partial one (a wrong variance for a shifted input)."""
    x = mtc.randn(2048, 64) + 100
    x = x.npu() if device == "npu" else x
    for fn in (lambda a: a.var(), lambda a: a.var(0), lambda a: (a - a.amax()).exp().sum()):
        mtc.dynamo.reset()
        np.testing.assert_allclose(mtc.compile(fn)(x).cpu().numpy(), fn(x.cpu()).numpy(),
                                   rtol=1e-4, atol=1e-3)


def test_multicore_split_reduction_timing_has_the_sync_and_the_combine():
    """Kernel time = the slowest core before SyncAll + sync_all_cycles + the combine pass;
    the last core's timeline draws its combine after the sync."""
    from minitorch_compile.npu.report import schedule

    _, (k,) = _split_run(lambda a: a.mean(), mtc.randn(1024, 1024, device="npu"))
    spec = mtc.npu.get_spec()
    assert k.block_dim == spec.num_cores and all(c.barrier is not None for c in k.cores)
    last = k.cores[-1]
    before = max(c.before for c in k.cores)
    after = max(c.pipelined - c.before for c in k.cores)
    assert after == last.pipelined - last.before > 0  # only the last core combines
    assert spec.cycles_to_us(before + spec.sync_all_cycles + after) == pytest.approx(k.time_us)
    combine = [s for lane, n, s, e in schedule(last) if n == sum(t for t, _ in last.tiles) - 1]
    assert min(combine) >= last.before + spec.sync_all_cycles - 1e-6


NARROW = {  # reductions to fewer outputs than cores
    "bias_grad": ((4096, 10), lambda a: a.sum(0)),
    "mean0": ((4096, 3), lambda a: a.exp().mean(0)),
    "var0": ((5000, 7), lambda a: a.var(0)),
    "amax0": ((300, 9), lambda a: a.amax(0)),
    "tiny": ((64, 10), lambda a: a.sum(0)),
    "max_mid": ((40, 700, 3), lambda a: a.amax(1)),
}


@pytest.mark.parametrize("name", sorted(NARROW))
def test_narrow_reduction_takes_the_faster_frame(name, monkeypatch):
    """A reduction to fewer outputs than cores is built tiled over the kept dims and tiled over
    the reduced dims (a multi-core split reduction); the one kept is never slower in the model
    than the kept-dims one alone (``npu_multicore_reduction=False``), and both equal eager."""
    shape, fn = NARROW[name]
    mtc.manual_seed(1)
    x = mtc.randn(*shape, device="npu") + 7
    want = fn(x.cpu()).numpy()
    out, chosen = _split_run(fn, x)
    monkeypatch.setattr(inductor.config, "npu_multicore_reduction", False)
    out1, kept = _split_run(fn, x)
    for o in (out, out1):
        np.testing.assert_allclose(o.cpu().numpy(), want, rtol=1e-4, atol=1e-3)
    assert sum(k.time_us for k in chosen) <= sum(k.time_us for k in kept) + 1e-9
    assert all(k.gm_bytes <= 1.05 * k.min_gm_bytes for k in chosen)


def test_a_reduction_whose_rows_do_not_fit_ub_compiles_over_the_reduced_dim():
    """Tiled over the kept dims, one row of ``x.sum(1)`` on (3, 100000) float32 (400 KB) does
    not fit UB; tiled over the reduced dim it compiles, on every core, and equals eager."""
    x = mtc.randn(3, 100_000, device="npu")
    out, (k,) = _split_run(lambda a: a.sum(1), x)  # the fixture fails on a fallback warning
    np.testing.assert_allclose(out.cpu().numpy(), x.cpu().numpy().sum(1), rtol=1e-4, atol=1e-3)
    assert k.block_dim == mtc.npu.get_spec().num_cores
