"""The partitioners on joint graphs: what they save, what they recompute, and why.

Each test traces a joint graph the way AOTAutograd does (``make_fx`` of
``(primals, tangents) -> (outputs, grads)``) and calls a partitioner on it directly, as one
can call torch's ``default_partition`` / ``min_cut_rematerialization_partition``.
"""

import math
import operator

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile.aot import (
    Partition,
    default_partition,
    min_cut_rematerialization_partition,
)
from minitorch_compile.aot.partitioners import FORWARD_TAG, extract_graph, is_recomputable
from minitorch_compile.fx import make_fx

F = mtc.nn.functional


def trace_joint(fn, *inputs):
    """The joint graph of ``fn`` (one output) and its number of forward outputs."""
    out = fn(*inputs)
    tangent = mtc.zeros(tuple(out.shape), dtype=out.dtype)

    def joint(primals, tangents):
        outs = fn(*primals)
        grads = mtc.autograd.grad([outs], [p for p in primals if p.requires_grad], tangents)
        return [outs], list(grads)

    gm = make_fx(joint, tracing_mode="fake")(list(inputs), [tangent])
    gm.graph._pytree_info = None
    gm.recompile()
    return gm


def aot_partition(fn, *inputs, partition_fn=min_cut_rematerialization_partition) -> Partition:
    """The partition AOTAutograd made for ``fn`` (forward tags and all)."""
    compiled = mtc.aot.aot_function(fn, mtc.aot.nop, partition_fn=partition_fn)
    compiled(*inputs)
    return compiled.last_pair.partition


def names(nodes) -> list[str]:
    return [n.name for n in nodes]


def cos_cos(x):
    return mtc.cos(mtc.cos(x))


# ------------------------------------------------------------------------------ the network


def test_partitioners_accept_a_joint_graph_like_torchs():
    joint = trace_joint(cos_cos, mtc.randn(5, 5, 5, requires_grad=True))
    assert names(n for n in joint.graph.nodes if n.op == "placeholder") == ["primals_1",
                                                                           "tangents_1"]
    part = min_cut_rematerialization_partition(joint, None, num_fwd_outputs=1)
    fw, bw = part  # unpacks like torch's (fw_module, bw_module)
    assert names(part.saved_values) == ["primals_1"]
    x = mtc.randn(5, 5, 5)
    out, saved = fw(x)
    assert mtc.allclose(out, cos_cos(x)) and saved is x
    (grad,) = bw(saved, mtc.ones(5, 5, 5))
    assert mtc.allclose(grad, mtc.sin(mtc.cos(x)) * mtc.sin(x))


def test_cos_cos_cut_value_is_the_weighted_size_of_x():
    # saving x (an input: "materialized") costs its 500 bytes x 1.1**distance, the distance
    # being 3 uses from the backward (x -> sin_1 -> neg_1 -> mul_1); saving cos(x) instead
    # would cost twice as much (it fuses into all its users) and x would still be needed
    part = aot_partition(cos_cos, mtc.randn(5, 5, 5, requires_grad=True))
    assert part.cut_value == pytest.approx(500 * 1.1 ** 3)
    assert part.saved_bytes == 500
    assert part.banned == {"primals_1": "primal input"}
    assert names(part.recomputed) == ["cos"]


def test_recomputable_ops():
    gm = make_fx(lambda x, w: (F.dropout(mtc.cat([x @ w, x]), 0.5).sum(0)
                               + x.t().sum(1).amax() + x.argmax()), tracing_mode="fake")(
        mtc.randn(3, 3), mtc.randn(3, 3))
    verdict = {str(n.target): is_recomputable(n) for n in gm.graph.nodes
               if n.op == "call_function"}
    for op in ("aten.mm.default", "aten.bernoulli.p", "aten.cat.default",
               "aten.argmax.default"):
        assert verdict[op] is False, op
    for op in ("aten.add.default", "aten.mul.default", "aten._to_copy.default",
               "aten.transpose.default", "aten.sum.default", "aten.amax.default"):
        assert verdict[op] is True, op


def test_matmuls_are_saved_never_recomputed():
    def mlp(x, w1, w2):
        return (x @ w1).tanh() @ w2

    part = aot_partition(mlp, mtc.randn(4, 8, requires_grad=True),
                         mtc.randn(8, 16, requires_grad=True), mtc.randn(16, 2,
                                                                         requires_grad=True))
    assert part.banned["mm"] == "not recomputable"
    fw, bw = part
    assert "aten.mm.default" in {str(n.target) for n in fw.graph.nodes}
    assert "mm" not in names(n for n in bw.graph.nodes)  # the forward's mm is not redone
    assert "tanh" in names(part.saved_values)  # tanh's output feeds a matmul backward


def test_reductions_much_smaller_than_their_input_are_saved():
    # sum over 64 columns is 64x smaller than its input: save it rather than recompute it
    def f(x):
        return x.exp() / x.exp().sum(-1, keepdim=True)

    part = aot_partition(f, mtc.randn(16, 64, requires_grad=True))
    assert part.banned.get("sum_1") == "reduction"
    assert "sum_1" not in names(part.recomputed)


def test_values_a_backward_matmul_reads_are_not_recomputed():
    # exp(x) feeds mm in the forward and mm's backward reads it: it is materialized anyway
    def f(x, w):
        return x.exp() @ w

    part = aot_partition(f, mtc.randn(4, 4, requires_grad=True),
                         mtc.randn(4, 4, requires_grad=True))
    assert part.banned["exp"] == "materialized in backward"
    assert "exp" not in names(part.recomputed)


def test_random_ops_are_banned_and_their_mask_is_saved():
    part = aot_partition(lambda x: F.dropout(x, 0.3).sin(), mtc.randn(64, requires_grad=True))
    assert part.banned["bernoulli"] == "not recomputable"
    assert "bernoulli" not in names(part.recomputed)
    fw, bw = part
    assert "aten.bernoulli.p" not in {str(n.target) for n in bw.graph.nodes}


def test_views_are_never_banned():
    def f(x):
        return x.t().reshape(-1).unsqueeze(0).expand(3, -1).sin().sum(0)

    part = aot_partition(f, mtc.randn(4, 5, requires_grad=True))
    view_ops = {"transpose", "view", "unsqueeze", "expand", "detach", "alias", "permute"}
    assert not [n for n in part.banned if n.rstrip("_0123456789") in view_ops]


def test_a_pointwise_chain_saves_its_input_and_the_result_autograd_saves():
    """tanh's derivative reads tanh's result through a ``detach`` (as in torch's joint graph),
    so tanh is "materialized in the backward": saved, not recomputed — the rest of the chain
    is recomputed from the input."""
    def gelu_tanh(x):
        return 0.5 * x * (1 + mtc.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))

    x = mtc.randn(32, 32, requires_grad=True)
    by_default = aot_partition(gelu_tanh, x, partition_fn=default_partition)
    min_cut = aot_partition(gelu_tanh, x)
    assert names(min_cut.saved_values) == ["primals_1", "tanh"]
    assert min_cut.saved_bytes == 2 * 32 * 32 * 4 < by_default.saved_bytes
    assert "tanh" not in names(min_cut.recomputed) and min_cut.banned["tanh"] == \
        "materialized in backward"
    assert "mul" in names(min_cut.recomputed)


# ------------------------------------------------------------------------------ default


def test_default_partition_saves_the_forward_values_the_backward_reads():
    def f(x, y):
        return (x.sin() * y).exp().sum(0)

    part = aot_partition(f, mtc.randn(3, 4, requires_grad=True), mtc.randn(3, 4),
                         partition_fn=default_partition)
    joint = part.joint.graph
    forward = {n for n in joint.nodes if n.meta.get("partitioner_tag") == FORWARD_TAG
               or n.name.startswith("primals")}
    expected = [n for n in joint.nodes if n in forward
                and any(u not in forward and u.op != "output" for u in n.users)]
    assert part.saved_values == expected
    assert part.recomputed == [] and part.banned == {}
    for saved, user in part.cut_edges:  # each cut edge leaves a saved value for the backward
        assert saved in names(part.saved_values)
        assert user in names(n for n in part.bw_module.graph.nodes)


def test_extract_graph_names_a_value_nobody_saved():
    joint = trace_joint(cos_cos, mtc.randn(3, requires_grad=True))
    tangents = [n for n in joint.graph.nodes if n.name == "tangents_1"]
    grads = list(joint.graph.output_node().args[0])[1:]
    with pytest.raises(RuntimeError, match="backward graph needs primals_1"):
        extract_graph(joint.graph, tangents, grads, "backward")


# ------------------------------------------------------------------------------ report, picture


def test_report_lists_saved_values_recomputed_nodes_cut_and_bans():
    part = aot_partition(lambda x, w: (x @ w).cos().cos(), mtc.randn(4, 4, requires_grad=True),
                         mtc.randn(4, 4, requires_grad=True))
    report = part.report()
    lines = report.splitlines()
    assert lines[0] == (f"min_cut_rematerialization_partition: {len(part.saved_values)} "
                        f"saved value(s), {part.saved_bytes} bytes")
    for n in part.saved_values:
        assert any(ln.split()[:2] == ["saved", n.name] and ln.endswith(" bytes")
                   and "float32[4, 4]" in ln for ln in lines)
    assert "  recompute cos              aten.cos.default" in lines
    assert "  cut edge  mm -> cos" in lines
    assert "  banned    mm               (not recomputable)" in lines
    default = aot_partition(lambda x: x.cos().cos(), mtc.randn(5, requires_grad=True),
                            partition_fn=default_partition).report()
    assert default.splitlines()[0] == "default_partition: 2 saved value(s), 40 bytes"
    assert "recompute" not in default and "banned" not in default


def test_picture_marks_saved_recomputed_and_cut():
    part = aot_partition(cos_cos, mtc.randn(5, requires_grad=True))
    src = part.draw().source
    line = {ln.split()[0]: ln for ln in src.replace("\n", " ").split("\t")
            if "[label=" in ln and " -> " not in ln}
    assert "(saved)" in line["primals_1"] and "#ffd54f" in line["primals_1"]
    assert "(recomputed)" in line["cos"] and "#ef9a9a" in line["cos"]
    assert "#b3e5fc" in line["tangents_1"]
    assert "primals_1 -> cos [label=cut color=red penwidth=2 style=dashed]" in src
    assert "primals_1 -> sin_1 [label=cut" in src
    assert "subgraph cluster_forward" in src and "subgraph cluster_backward" in src
    forward = src.split("subgraph cluster_backward")[0]
    assert "\tcos_1 [label=" in forward and "\tsin [label=" not in forward


def test_picture_renders_and_degrades_without_dot(monkeypatch):
    part = aot_partition(cos_cos, mtc.randn(5, requires_grad=True))
    if mtc.viz.dot_available():
        assert part.draw().svg().lstrip().startswith("<?xml")
    monkeypatch.setenv("PATH", "/nonexistent")
    pic = part.draw()
    assert pic.svg() is None
    bundle = pic._repr_mimebundle_()
    assert set(bundle) == {"text/plain"} and "digraph partition" in bundle["text/plain"]


def test_multi_output_ops_keep_their_getitems_in_the_forward():
    # max.dim returns (values, indices); make_fx adds the getitems when they are first used,
    # some of them after the backward's first ops: they still belong to the forward
    x = mtc.randn(3, 4, requires_grad=True)
    for partition_fn in (default_partition, min_cut_rematerialization_partition):
        part = aot_partition(lambda x: x.max(dim=1)[0].exp(), x, partition_fn=partition_fn)
        getitems = [n for n in part.joint.graph.nodes if n.target is operator.getitem]
        assert getitems and all(n.meta["partitioner_tag"] == FORWARD_TAG for n in getitems)
        assert "max_1" not in names(part.saved_values)  # a tuple is never saved whole
        x2 = x.detach().requires_grad_(True)
        x2.max(dim=1)[0].exp().sum().backward()
        fw, bw = part
        outs = fw(x.detach())
        (grad,) = bw(*outs[1:], mtc.ones(3))
        np.testing.assert_allclose(grad.numpy(), x2.grad.numpy(), rtol=1e-6)
