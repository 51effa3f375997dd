"""AOTAutograd against torch's (optional: skipped without torch and networkx).

The programs are the benchmark's (``benchmarks/bench_aot.py``), so its table and these
assertions cannot drift apart: gradients equal torch's, and our min-cut saves no more bytes
than torch's min-cut (``KNOWN_GAPS`` would list a program where it does not, with the
reason).
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile.aot import (
    aot_function,
    default_partition,
    min_cut_rematerialization_partition,
    nop,
)

pytestmark = pytest.mark.torch

_spec = importlib.util.spec_from_file_location(
    "bench_aot", Path(__file__).resolve().parents[1] / "benchmarks" / "bench_aot.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
CASES = {name: (builder, shapes) for name, builder, shapes in bench.CASES}

KNOWN_GAPS: dict = {}


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("networkx", reason="torch's min-cut partitioner needs networkx")
    return torch


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[name]))
    if name in KNOWN_GAPS else name for name in CASES])
def test_min_cut_saves_no_more_than_torchs(torch, name):
    builder, shapes = CASES[name]
    _, ours, _ = bench.ours(builder, shapes, min_cut_rematerialization_partition)
    _, theirs = bench.torch_min_cut(builder, shapes)
    assert ours <= theirs


@pytest.mark.parametrize("name", list(CASES))
def test_gradients_equal_torchs(torch, name):
    builder, shapes = CASES[name]
    arrays = bench.inputs(shapes)
    ours_in = [mtc.tensor(a, requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    compiled = aot_function(builder(mtc), nop, partition_fn=min_cut_rematerialization_partition)
    out = compiled(*ours_in)
    ref = builder(torch)(*theirs_in)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-4)
    tangent = np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(np.float32)
    (out * mtc.tensor(tangent)).sum().backward()
    (ref * torch.tensor(tangent)).sum().backward()
    for a, b in zip(ours_in, theirs_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Your compiler for AOTAutograd")
def test_cos_cos_joint_graph_and_partitions_match_torchs(torch):
    from torch._functorch.aot_autograd import aot_function as torch_aot_function
    from torch._functorch.partitioners import default_partition as torch_default
    from torch._functorch.partitioners import min_cut_rematerialization_partition as torch_mc

    def ops(graph):
        # op names without overloads: torch's mul.Tensor is our mul.default
        return [str(n.target).split(".")[1] for n in graph.nodes if n.op == "call_function"]

    saved_by = {}
    for ours_fn, theirs_fn in ((default_partition, torch_default),
                               (min_cut_rematerialization_partition, torch_mc)):
        def spy(joint, inputs, *, num_fwd_outputs, _p=theirs_fn, **kw):
            fw, bw = _p(joint, inputs, num_fwd_outputs=num_fwd_outputs, **kw)
            saved_by[_p] = ([n.name for n in bw.graph.nodes if n.op == "placeholder"
                             and not n.name.startswith("tangents")], ops(joint.graph))
            return fw, bw

        x = torch.randn(5, 5, 5, requires_grad=True)
        torch_aot_function(lambda x: torch.cos(torch.cos(x)), nop, nop,
                           partition_fn=spy)(x).sum().backward()
        compiled = aot_function(bench.cos_cos(mtc), nop, partition_fn=ours_fn)
        compiled(mtc.randn(5, 5, 5, requires_grad=True))
        pair = compiled.last_pair
        theirs_saved, theirs_ops = saved_by[theirs_fn]
        assert [n.name for n in pair.partition.saved_values] == theirs_saved
        assert ops(pair.joint_graph.graph) == theirs_ops
    assert saved_by[torch_mc][0] == ["primals_1"]
