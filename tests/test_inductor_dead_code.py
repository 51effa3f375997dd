"""Dead code is never a kernel (torch's post-grad ``eliminate_dead_code`` on the graph and the
scheduler's ``dead_node_elimination`` on buffers): ``generated_kernel_count`` counts only
kernels whose results someone reads.  Kernel counts against torch's CPU Inductor are in
``test_inductor_vs_torch.py``."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile import inductor
from minitorch_compile.inductor import metrics

pytestmark = pytest.mark.usefixtures("strict_inductor")  # conftest.py


def unused_repeat(x):
    x.repeat(2, 1)
    return x.cos()


def unused_chain(x):
    a = x.sin()
    b = (a.repeat(2, 1) * 3).exp()  # noqa: F841 - dead on purpose
    return a + 1


def unused_reduction(x):
    x.softmax(0)
    return x * 2


@pytest.mark.parametrize("fn,kernels", [(unused_repeat, 1), (unused_chain, 1),
                                        (unused_reduction, 1)],
                         ids=["repeat", "chain", "reduction"])
@pytest.mark.parametrize("grad", [False, True])
def test_dead_values_make_no_kernel(fn, kernels, grad):
    x = mtc.randn(8, 4, requires_grad=grad)
    mtc.dynamo.reset()
    metrics.reset()
    got = mtc.compile(fn)(x)
    np.testing.assert_allclose(got.detach().numpy(), fn(x).detach().numpy(), rtol=1e-6)
    fw = inductor.compiled_graphs[-1]
    assert len(fw.kernels) == kernels, fw.source
    assert "repeat" not in fw.source and "clone" not in fw.source


def test_the_scheduler_drops_a_buffer_nobody_reads():
    """Below the graph pass: a graph lowered without it still makes no kernel for a dead
    buffer (``Scheduler.removed_dead``)."""
    from minitorch_compile.fx import make_fx
    from minitorch_compile.inductor.codegen.wrapper import WrapperCodeGen
    from minitorch_compile.inductor.graph import GraphLowering
    from minitorch_compile.inductor.scheduler import Scheduler

    x = mtc.randn(8)
    gm = make_fx(lambda x: (x.repeat(2), x.cos())[1:])(x)
    assert any("repeat" in str(n.target) or "expand" in str(n.target) for n in gm.graph.nodes)
    graph = GraphLowering(gm)
    graph.run(x)
    sched = Scheduler(graph)
    assert len(sched.removed_dead) == 1
    wrapper = WrapperCodeGen(graph, sched)
    wrapper.generate()
    assert len(wrapper.kernels) == 1
