"""Split a joint forward+backward graph in two (``torch/_functorch/partitioners.py``).

The joint graph computes ``(primals, tangents) -> (outputs, grads)``.  A partition chooses
which forward values to **save** for the backward; everything else the backward needs it must
**recompute** from saved values.  Both partitioners return a ``Partition``: unpacked, it is
``(fw_module, bw_module)`` as in torch — the forward returns ``outputs + saved``, the backward
takes ``saved + tangents``.

``default_partition`` keeps the original program's split: the nodes traced before
``autograd.grad`` are the forward, and every forward value the backward uses is saved.

``min_cut_rematerialization_partition`` minimises the bytes saved, by a minimum cut:

* every node ``n`` becomes two vertices ``n_in -> n_out`` joined by an edge whose capacity is
  the cost of saving ``n`` (its size in bytes, doubled if it is *not materialized* — it would
  fuse into all its users anyway — and scaled by ``1.1 ** distance-from-backward``);
* a data edge ``n_out -> user_in`` of infinite capacity for every use;
* ``source -> n_in`` (infinite) for nodes that must be computed in the forward: the primal
  inputs, and forward nodes that may not be recomputed (not in the recomputable set —
  pointwise, views, cheap reductions, factories —, or materialized in the backward anyway, or
  a reduction whose output is 4x smaller than its inputs);
* ``n_in -> sink`` (infinite) for nodes that depend on tangents (they are backward by nature),
  and ``n_out -> sink`` for other nodes the backward requires.

A cut of this network separates "computed in forward" from "computed in backward"; the cut
``n_in -> n_out`` edges are exactly the saved values, and the cut's value their cost.  Max-flow
gives the cheapest one (``maxflow.py``).  For ``cos(cos(x))``: saving ``x`` (materialized, the
input) is cheaper than saving ``cos(x)`` (fusible, so weighted x2), so the backward recomputes
``cos(x)`` and one tensor is saved instead of two — the tutorial's ``AOTTransformedTwoCosine``.

The ``Partition`` keeps the flow network (``network``: ``(u, v, capacity)`` edges), the cut's
value (``cut_value``), why each banned node may not be recomputed (``banned``), and the data
edges from a saved value into the backward (``cut_edges``, drawn red by ``Partition.draw()``).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

from ..fx import Graph, GraphModule
from ..fx.node import map_arg
from .maxflow import min_cut

RECOMPUTABLE_CATEGORIES = {"pointwise", "view", "creation"}
CHEAP_REDUCTIONS = {"sum", "mean", "amax", "amin"}
# torch's recomputable list leaves out ``detach``: the backward reads a saved *output* (tanh's,
# exp's) through one, so that output is "materialized in the backward" and is saved
NOT_RECOMPUTABLE = {"detach"}
FORWARD_TAG = "is_forward"


# ------------------------------------------------------------------------------ helpers


def _is_primal(n) -> bool:
    return n.op == "placeholder" and n.target.startswith("primals")


def _is_tangent(n) -> bool:
    return n.op == "placeholder" and n.target.startswith("tangents")


def _val(n):
    return n.meta.get("val", n.meta.get("example_value"))


def _is_sym(n) -> bool:
    """A size (a SymInt of symbolic tracing): saved for the backward as an int, for free."""
    return hasattr(_val(n), "hint") and not hasattr(_val(n), "shape")


def size_of(n) -> int:
    """Bytes of a node's tensor value (0 for non-tensors); a symbolic size counts its hint."""
    v = _val(n)
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        numel = 1
        for s in v.shape:
            numel *= getattr(s, "hint", s)  # no int(): that would guard the size
        return numel * v.dtype.itemsize
    if isinstance(v, (tuple, list)):
        return sum(size_of_value(x) for x in v)
    return 0


def size_of_value(v) -> int:
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        numel = 1
        for s in v.shape:
            numel *= getattr(s, "hint", s)
        return numel * v.dtype.itemsize
    return 0


def _category(n) -> str | None:
    opdef = getattr(n.target, "opdef", None) if n.op == "call_function" else None
    return opdef.category if opdef is not None else None


def is_recomputable(n) -> bool:
    if n.op != "call_function":
        return False
    if n.target is operator.getitem:
        return True
    cat = _category(n)
    if n.target.name in NOT_RECOMPUTABLE:
        return False
    if cat in RECOMPUTABLE_CATEGORIES:
        return not n.target.schema.is_mutable
    return cat == "reduction" and n.target.name in CHEAP_REDUCTIONS


def is_view(n) -> bool:
    return _category(n) == "view"


def is_fusible(a, b) -> bool:
    """Both ends are cheap elementwise-like work a code generator would fuse."""
    def fusible(n):
        return is_recomputable(n) or _category(n) == "random"
    return fusible(a) and fusible(b)


def output_lists(joint: GraphModule, num_fwd_outputs: int) -> tuple[list, list]:
    outs = joint.graph.output_node().args[0]
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return outs[:num_fwd_outputs], outs[num_fwd_outputs:]


def extract_graph(joint_graph: Graph, inputs: list, outputs: list, name: str,
                  keep: list = ()) -> Graph:
    """A new graph computing ``outputs`` from ``inputs`` with the joint graph's nodes (and the
    side-effecting nodes in ``keep``, e.g. run-time asserts, which no output needs).

    Walk the joint graph in order; copy a node if some output needs it.  Reaching a node that
    is neither an input nor computable from inputs means the partition is wrong: say so.
    """
    needed: set = set()
    stack = [o for o in outputs if hasattr(o, "op")] + list(keep)
    input_set = set(inputs)
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        if n in input_set:
            continue
        if n.op == "placeholder":
            raise RuntimeError(f"{name} graph needs {n.name}, which is not one of its inputs "
                               "(the partition does not save it)")
        stack.extend(n.all_input_nodes)
    g = Graph()
    env = {}
    for n in inputs:
        env[n] = g.placeholder(n.name)
        env[n].meta = dict(n.meta)
    for n in joint_graph.nodes:
        if n in needed and n not in env and n.op != "output":
            env[n] = g.node_copy(n, lambda x: env[x])
    g.output(tuple(map_arg(o, lambda x: env[x]) if o is not None else None for o in outputs))
    g.eliminate_dead_code()
    return g


# ------------------------------------------------------------------------------ result


@dataclass
class Partition:
    """The outcome of a partitioner; iterating it gives ``(fw_module, bw_module)``."""

    joint: GraphModule
    fw_module: GraphModule
    bw_module: GraphModule
    saved_values: list  # joint nodes saved by the forward for the backward
    num_fwd_outputs: int
    method: str
    recomputed: list = field(default_factory=list)  # joint nodes computed again in backward
    cut_edges: list = field(default_factory=list)  # (saved, backward user) data edges
    cut_value: float = 0.0  # min-cut: the weighted cost of the saved values
    banned: dict = field(default_factory=dict)  # min-cut: node name -> why not recomputable
    network: list = field(default_factory=list)  # min-cut: the flow network's (u, v, capacity)

    def __iter__(self):
        return iter((self.fw_module, self.bw_module))

    @property
    def saved_bytes(self) -> int:
        return sum(size_of(n) for n in self.saved_values)

    def report(self) -> str:
        lines = [f"{self.method}: {len(self.saved_values)} saved value(s), "
                 f"{self.saved_bytes} bytes"]
        for n in self.saved_values:
            v = _val(n)
            what = f"{v.dtype.name}{list(v.shape)}" if hasattr(v, "shape") else type(v).__name__
            lines.append(f"  saved     {n.name:<16} {what:<22} {size_of(n):>10} bytes")
        for n in self.recomputed:
            lines.append(f"  recompute {n.name:<16} {str(n.target)}")
        for a, b in self.cut_edges:
            lines.append(f"  cut edge  {a} -> {b}")
        for name, why in self.banned.items():
            if why != "primal input":
                lines.append(f"  banned    {name:<16} ({why})")
        return "\n".join(lines)

    def draw(self, **kwargs):
        from ..viz.partition_drawer import draw_partition

        return draw_partition(self, **kwargs)


def _extract_fwd_bwd(joint: GraphModule, saved: list, num_fwd_outputs: int, method: str,
                     **extra) -> Partition:
    graph = joint.graph
    fwd_outs, bwd_outs = output_lists(joint, num_fwd_outputs)
    # saved sizes (ints) after the saved tensors: the runtime keeps them apart (ctx.symints)
    saved = [n for n in saved if not _is_sym(n)] + [n for n in saved if _is_sym(n)]
    primals = [n for n in graph.nodes if _is_primal(n)]
    tangents = [n for n in graph.nodes if _is_tangent(n)]
    # run-time checks (``_assert_async``) have no users: the forward keeps those it can compute
    tangent_side: set = set()
    for n in graph.nodes:
        if _is_tangent(n) or any(i in tangent_side for i in n.all_input_nodes):
            tangent_side.add(n)
    checks = [n for n in graph.nodes if n.op == "call_function" and n not in tangent_side
              and getattr(n.target, "opdef", None) is not None
              and getattr(n.target, "_mtc_side_effect", False)]
    fw = extract_graph(graph, primals, list(fwd_outs) + list(saved), "forward", keep=checks)
    bw = extract_graph(graph, list(saved) + tangents, list(bwd_outs), "backward")
    unused = {n.name for n in bw.nodes if n.op == "placeholder" and not n.users}
    if any(_is_sym(n) and n.name in unused for n in saved):  # a size the backward never reads
        saved = [n for n in saved if not (_is_sym(n) and n.name in unused)]
        fw = extract_graph(graph, primals, list(fwd_outs) + list(saved), "forward")
        bw = extract_graph(graph, list(saved) + tangents, list(bwd_outs), "backward")
    fw_names = {n.name for n in fw.nodes if n.op == "call_function"}
    bw_names = {n.name for n in bw.nodes if n.op == "call_function"}
    recomputed = [n for n in graph.nodes if n.name in fw_names and n.name in bw_names]
    # where the data crosses from forward to backward: a saved value into a backward node
    cut_edges = [(n.name, u.name) for n in saved for u in n.users if u.name in bw_names]
    # the joint module is the root: both halves find its constants (``get_attr``) there
    return Partition(joint, GraphModule(joint, fw, "GraphModule"),
                     GraphModule(joint, bw, "GraphModule"), list(saved), num_fwd_outputs, method,
                     recomputed, cut_edges, **extra)


# ------------------------------------------------------------------------------ default


def default_partition(joint_module: GraphModule, _joint_inputs=None, *,
                      num_fwd_outputs: int) -> Partition:
    """Save every forward value the backward uses (the program's own split)."""
    graph = joint_module.graph
    forward = [n for n in graph.nodes if n.meta.get("partitioner_tag") == FORWARD_TAG or
               _is_primal(n)]
    forward_names = {n.name for n in forward}
    saved = []
    for n in forward:
        if n.op == "output" or all(u.target is operator.getitem for u in n.users) and n.users:
            continue  # a tuple is saved through its getitems
        if n.op == "get_attr":
            continue  # a constant: the backward reads it from the module too
        if any(u.name not in forward_names and u.op != "output" for u in n.users):
            saved.append(n)
    return _extract_fwd_bwd(joint_module, saved, num_fwd_outputs, "default_partition")


# ------------------------------------------------------------------------------ min-cut


def classify(joint: GraphModule, num_fwd_outputs: int):
    graph = joint.graph
    tangents_closure: set = set()
    for n in graph.nodes:
        if _is_tangent(n) or any(i in tangents_closure for i in n.all_input_nodes):
            if n.op != "output":
                tangents_closure.add(n)
    fwd_outs, bwd_outs = output_lists(joint, num_fwd_outputs)
    required_bw = set(tangents_closure) | {o for o in bwd_outs if hasattr(o, "op")
                                           and o.op != "output"}
    primals = [n for n in graph.nodes if _is_primal(n)]
    required_fw = set(extract_graph_nodes(fwd_outs, set(primals)))
    return primals, required_fw, required_bw, tangents_closure


def extract_graph_nodes(outputs, stop: set) -> list:
    seen, stack = set(), [o for o in outputs if hasattr(o, "op")]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in stop:
            stack.extend(n.all_input_nodes)
    return list(seen)


def min_cut_rematerialization_partition(joint_module: GraphModule, _joint_inputs=None, *,
                                        num_fwd_outputs: int) -> Partition:
    """Save the cheapest set of values from which the backward can recompute the rest."""
    graph = joint_module.graph
    primals, required_fw, required_bw, tangents_closure = classify(joint_module,
                                                                   num_fwd_outputs)
    nodes = [n for n in graph.nodes if n.op != "output"]

    # distance (in uses) to the nearest backward node: nearer values are cheaper to keep
    dist: dict = {}
    for n in reversed(nodes):
        if n in required_bw:
            dist[n] = 0
        else:
            dist[n] = min((dist[u] + 1 for u in n.users if u in dist), default=1000)

    def materialized_backwards(n) -> bool:
        if is_view(n):
            return False
        todo, seen = [n], set()
        while todo:
            cur = todo.pop()
            for u in cur.users:
                if u.op != "output" and u not in required_fw and not is_fusible(cur, u):
                    return True
                if is_view(u) and u not in seen:
                    seen.add(u)
                    todo.append(u)
        return False

    def ban_reason(n) -> str | None:
        if _is_sym(n):
            return "a size: saved as an int"
        if n.op != "call_function" or n.target is operator.getitem:
            return None
        if is_view(n):
            return None
        if not is_recomputable(n):
            return "not recomputable"
        if materialized_backwards(n):
            return "materialized in backward"
        inputs = sum(size_of(i) for i in n.all_input_nodes)
        if size_of(n) * 4 < inputs:
            return "reduction"
        return None

    def weight(n) -> float:
        v = _val(n)
        if _is_sym(n):
            return 0.0  # an int costs nothing to save
        if not (hasattr(v, "shape") and hasattr(v, "dtype")):
            return math.inf  # only tensors can be saved
        w = size_of(n) * (1.1 ** max(min(dist[n], 100), 1))
        fusible_everywhere = n.op != "placeholder" and n.users and all(
            is_fusible(n, u) for u in n.users)
        return w * 2 if fusible_everywhere else w

    network: list = []  # (u, v, capacity): the flow network, kept for learners
    banned: dict = {}  # node name -> why it may not be recomputed
    for n in nodes:
        if n in required_bw:
            if n in tangents_closure:
                network.append((f"{n.name}_in", "sink", math.inf))
                continue
            network.append((f"{n.name}_out", "sink", math.inf))
        reason = "primal input" if _is_primal(n) else ban_reason(n) \
            if n in required_fw or _is_sym(n) else None
        if reason and not is_view(n):
            banned[n.name] = reason
            network.append(("source", f"{n.name}_in", math.inf))
        network.append((f"{n.name}_in", f"{n.name}_out", weight(n)))
        for u in n.users:
            if u.op != "output":
                network.append((f"{n.name}_out", f"{u.name}_in", math.inf))

    value, side_s, _ = min_cut(network, "source", "sink")
    if value == math.inf:
        raise RuntimeError("min-cut partitioner: no finite cut (a value the backward needs "
                           "can be neither saved nor recomputed)")
    saved = [n for n in nodes if f"{n.name}_in" in side_s and f"{n.name}_out" not in side_s]
    return _extract_fwd_bwd(joint_module, saved, num_fwd_outputs,
                            "min_cut_rematerialization_partition", cut_value=value,
                            banned=banned, network=network)
