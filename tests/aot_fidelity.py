"""Run one program through our AOTAutograd and torch's, and describe what each decided.

``ours(program)`` / ``theirs(program)`` return a ``Decision``: the outputs, the inputs'
gradients (of a fixed random linear loss of the outputs that require grad), the inputs after
the call (to see input mutations), and — when a backward was compiled — the saved values'
count and bytes and the ops the backward recomputes. Recomputed ops are read the same way in
both libraries: the backward graph's calls that do not depend on a tangent (factories, which
read no value, and ``detach``/``getitem`` left out).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

import minitorch_compile as mtc
from minitorch_compile.aot import aot_function, min_cut_rematerialization_partition, nop

try:
    import torch
except ImportError:  # pragma: no cover - the torch comparisons skip
    torch = None


@dataclass
class Decision:
    outputs: list
    grads: list
    inputs_after: list
    saved: list = field(default_factory=list)  # (shape, dtype name) of each saved tensor
    saved_bytes: int = 0
    recomputed: list = field(default_factory=list)  # sorted op names
    has_backward: bool = False


def _array(t):
    if t is None or not hasattr(t, "detach"):
        return t
    return (str(t.dtype).split(".")[-1], tuple(t.shape), np.asarray(t.detach().numpy()))


def _op_name(target) -> str:
    parts = str(target).split(".")
    return parts[1] if len(parts) > 2 else parts[-1]  # aten.cos.default -> cos


# not forward work done again: tuple unpacking, and torch's detach of a saved value
_NOT_RECOMPUTATION = {"getitem", "detach", "alias"}
_SAME_OP = {"t": "transpose"}  # torch's aten.t is our composite t -> transpose


def read_backward(bw_graph, fw_graph) -> tuple[list, list]:
    """(saved placeholders, recomputed op names) of a backward graph of either library.

    Recomputed: a call that depends on no tangent and whose op the forward graph also runs
    (torch's derivatives are single ops — ``sigmoid_backward(grad, out)`` — where ours are
    formulas of primitives, so the part of a formula not reading ``grad`` is not counted)."""
    forward_ops = {_op_name(n.target) for n in fw_graph.nodes if n.op == "call_function"}
    saved = [n for n in bw_graph.nodes
             if n.op == "placeholder" and not n.name.startswith("tangents")]
    tangent_dependent = {n for n in bw_graph.nodes if n.name.startswith("tangents")}
    # a saved output read through `detach` feeds only derivative formulas (torch's
    # `tanh_backward(grad, result)` is one op; ours is `grad * (1 - result * result)`)
    fw_out = fw_graph.output_node().args[0]
    fw_saved = list(fw_out)[len(fw_out) - len(saved):] if saved else []
    formula_work = {b for b, f in zip(saved, fw_saved)
                    if getattr(f, "op", None) == "call_function"
                    and _op_name(f.target) == "detach"}
    recomputed = []
    for n in bw_graph.nodes:
        if n.op != "call_function":
            continue
        if any(a in tangent_dependent for a in n.all_input_nodes):
            tangent_dependent.add(n)
        elif any(a in formula_work for a in n.all_input_nodes):
            formula_work.add(n)
        elif n.all_input_nodes and _op_name(n.target) in forward_ops - _NOT_RECOMPUTATION:
            recomputed.append(_SAME_OP.get(_op_name(n.target), _op_name(n.target)))
    return saved, sorted(recomputed)


def _nbytes(node) -> int:
    val = node.meta.get("val")
    shape = tuple(val.shape)
    itemsize = val.element_size() if hasattr(val, "element_size") else val.dtype.itemsize
    return math.prod(int(s) for s in shape) * itemsize


def _describe(node) -> tuple:
    val = node.meta.get("val")
    return tuple(int(s) for s in val.shape), str(val.dtype).split(".")[-1]


def make_inputs(T, spec):
    """``spec``: a list of ``(shape, kind)`` with kind ``"grad"`` (a float32 leaf requiring
    grad), ``"nonleaf"`` (a float32 tensor with history, as test_aotdispatch clones its inputs),
    ``"float"`` (no grad) or ``"long"`` (int64)."""
    rng = np.random.default_rng(0)
    out = []
    for shape, kind in spec:
        if kind == "long":
            out.append(T.tensor(rng.integers(0, 3, size=shape)))
            continue
        a = T.tensor(rng.standard_normal(shape).astype(np.float32))
        if kind == "grad":
            a.requires_grad_()
        elif kind == "nonleaf":
            leaf = a.requires_grad_()
            a = leaf * 1  # history, so in-place writes are allowed
            a.fidelity_leaf = leaf  # its gradient is compared
        out.append(a)
    return out


def _loss_and_backward(T, outs, inputs):
    diff = [o for o in outs if hasattr(o, "requires_grad") and o.requires_grad]
    if diff:
        rng = np.random.default_rng(1)
        loss = sum((o * T.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32))).sum()
                   for o in diff)
        loss.backward()
    leaves = [getattr(a, "fidelity_leaf", a) for a in inputs]
    return [_array(getattr(a, "grad", None)) for a in leaves]


def run(T, spec, compiled_fn) -> Decision:
    inputs = make_inputs(T, spec)
    outs = compiled_fn(*inputs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    outputs = [_array(o) for o in outs]
    after = [_array(a) for a in inputs]
    grads = _loss_and_backward(T, outs, inputs)
    return Decision(outputs, grads, after)


def ours(program, spec, partition_fn=min_cut_rematerialization_partition) -> Decision:
    compiled = aot_function(program(mtc), nop, partition_fn=partition_fn)
    d = run(mtc, spec, compiled)
    pair = compiled.last_pair
    if pair.partition is not None:
        d.has_backward = True
        saved, d.recomputed = read_backward(pair.partition.bw_module.graph,
                                            pair.partition.fw_module.graph)
        d.saved = [_describe(n) for n in saved]
        d.saved_bytes = sum(_nbytes(n) for n in saved)
    return d


def eager(program, spec) -> Decision:
    return run(mtc, spec, program(mtc))


def theirs(program, spec) -> Decision:
    from torch._functorch.aot_autograd import aot_function as torch_aot_function
    from torch._functorch.partitioners import min_cut_rematerialization_partition as mc

    graphs = {}

    def fw_compiler(gm, example_inputs):
        graphs["fw"] = gm.graph
        return gm

    def bw_compiler(gm, example_inputs):
        graphs["bw"] = gm.graph
        return gm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "compiler ... doesn't take boxed arguments"
        compiled = torch_aot_function(program(torch), fw_compiler, bw_compiler,
                                      partition_fn=mc)
        d = run(torch, spec, compiled)
    if "bw" in graphs:
        d.has_backward = True
        saved, d.recomputed = read_backward(graphs["bw"], graphs["fw"])
        d.saved = [_describe(n) for n in saved]
        d.saved_bytes = sum(_nbytes(n) for n in saved)
    return d


def assert_same_values(a: Decision, b: Decision) -> None:
    for name in ("outputs", "inputs_after", "grads"):
        xs, ys = getattr(a, name), getattr(b, name)
        assert len(xs) == len(ys), (name, xs, ys)
        for i, (x, y) in enumerate(zip(xs, ys)):
            assert (x is None) == (y is None), f"{name}[{i}]: {x} vs {y}"
            if x is None:
                continue
            assert x[:2] == y[:2], f"{name}[{i}]: dtype/shape {x[:2]} vs {y[:2]}"
            np.testing.assert_allclose(x[2], y[2], rtol=1e-4, atol=1e-5,
                                       err_msg=f"{name}[{i}]")
