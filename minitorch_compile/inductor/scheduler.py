"""The scheduler: which buffers are computed together, and why not others
(``torch/_inductor/scheduler.py``).

Every realized buffer is a ``SchedulerNode`` with an *iteration frame* ``(R, RR)``: the sizes it
loops over and, for a reduction, the sizes it reduces over (a pointwise node has ``RR = ()``) —
torch groups nodes by ``(numel, rnumel)`` the same way.  Extern kernels are
``ExternKernelSchedulerNode``s and never fuse.

Fusion, as torch's ``fuse_nodes``:

1. candidates are pairs of nodes that touch a common buffer; each is scored by the bytes it
   would save (the shared buffers' sizes) — torch's ``score_fusion_memory``;
2. best score first, a pair fuses if every rule of ``can_fuse`` allows it; a rejected pair is
   recorded as a ``FusionDecision`` with its category, and logged (``MTC_LOGS=fusion``);
3. repeat until nothing changes.

``can_fuse(a, b)`` — the rules, in order, each with its category:

=========================  ==================================================================
extern kernel              either side is a library call
different iteration sizes  pointwise frames differ, or a pointwise node is neither the
                           reduction's whole loop (``R + RR``) nor its output (``R``)
reduction mismatch         two reductions over different frames
index mismatch             the consumer reads the producer's buffer at another index than
                           the producer writes it: the value would come from another tile
needs a second pass        a full reduction (``R = ()``) feeding an elementwise node over
                           the same data: the reduction must finish first
too large                  more than ``config.max_fusion_size`` nodes
would create a cycle       a third node sits between the two in the dependency graph
no shared data             horizontal fusion of nodes sharing no input (not worth it)
=========================  ==================================================================

Nodes and their placement in a fused frame: ``scheduler_node.py``.  After fusion the groups
are sorted topologically.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import config
from .ir import ComputedBuffer, ConcatSlice, ExternKernel, TensorBox, numel, strided_view
from .scheduler_node import (
    ExternKernelSchedulerNode,
    FusedGroup,
    SchedulerNode,
    _is_indirect,
    _nonone,
    interleavings,
)
from .sizevars import size_hint

__all__ = ["ExternKernelSchedulerNode", "FusedGroup", "FusionDecision", "Reject", "Scheduler",
           "SchedulerNode"]


@dataclass
class FusionDecision:
    node1: str
    node2: str
    fused: bool
    category: str
    detail: str = ""

    def __str__(self) -> str:
        verb = "fused" if self.fused else f"not fused: {self.category}"
        return f"{self.node1} + {self.node2}: {verb}" + (f" ({self.detail})" if self.detail
                                                        else "")


@dataclass
class Reject:
    category: str
    detail: str = ""


def merge_frames(f1, f2):
    """The frame two groups would share, or a rejection (category, detail)."""
    (R1, RR1), (R2, RR2) = f1, f2
    if RR1 and RR2:
        return f1 if f1 == f2 else Reject("reduction mismatch", f"{_fmt(f1)} vs {_fmt(f2)}")
    if not RR1 and not RR2:  # sizes equal but for 1s: same loops
        return (f1 if len(R1) >= len(R2) else f2) if _nonone(R1) == _nonone(R2) else \
            Reject("different iteration sizes", f"{list(R1)} vs {list(R2)}")
    red, pw = (f1, f2) if RR1 else (f2, f1)
    S = _nonone(pw[0])
    if S in (_nonone(red[0] + red[1]), _nonone(red[1] + red[0]), _nonone(red[0])) or \
            interleavings(pw[0], red):
        return red
    return Reject("different iteration sizes", f"{list(S)} vs {_fmt(red)}")


def _fmt(frame) -> str:
    R, RR = frame
    return f"{list(R)} reducing {list(RR)}" if RR else str(list(R))


class Scheduler:
    def __init__(self, graph):
        self.graph = graph
        self.nodes = []
        for pos, buf in enumerate(graph.buffers):
            cls = SchedulerNode if isinstance(buf, ComputedBuffer) else ExternKernelSchedulerNode
            self.nodes.append(cls(buf, pos))
        self.dead_node_elimination()
        self.groups = [FusedGroup([n], n.frame) for n in self.nodes]
        self.decisions: list = []
        self.fuse_nodes()
        self.groups = self._topological(self.groups)

    def dead_node_elimination(self) -> None:
        """Drop computed buffers nobody reads (torch's ``Scheduler.dead_node_elimination``):
        not an output, not read by a live node, no side effect (a ``Scatter`` writes its input,
        a ``ConcatSlice`` its cat's output; extern kernels are kept).  Reverse order, so a
        chain of dead buffers goes at once."""
        g = self.graph
        live = {strided_view(o)[0].name for o in g.graph_outputs if isinstance(o, TensorBox)}
        kept = []
        for n in reversed(self.nodes):
            data = getattr(n.node, "data", None)
            if n.name in live or not isinstance(n, SchedulerNode) or \
                    isinstance(n.node, ConcatSlice) or \
                    getattr(data, "output_indexer", None) is not None:
                kept.append(n)
                live |= n.read_names
        self.removed_dead = [n.name for n in self.nodes if n not in kept]
        self.nodes = kept[::-1]

    # ---------------------------------------------------------------- fusion
    def fuse_nodes(self) -> None:
        for _ in range(10):
            if not self._fuse_once():
                break

    def _fuse_once(self) -> bool:
        writer = {n: g for g in self.groups for n in g.writes}
        users: dict = {}
        for g in self.groups:
            for name in g.reads | g.writes:
                users.setdefault(name, []).append(g)
        pairs: dict = {}
        for name, gs in users.items():
            for i, a in enumerate(gs):
                for b in gs[i + 1:]:
                    a2, b2 = (a, b) if a.pos <= b.pos else (b, a)
                    pairs.setdefault((id(a2), id(b2)), [a2, b2, 0])[2] += self._nbytes(name)
        order = sorted(pairs.values(), key=lambda p: (-p[2], p[0].pos, p[1].pos))
        alive = {id(g) for g in self.groups}
        changed = False
        for a, b, score in order:
            if id(a) not in alive or id(b) not in alive:
                continue
            result = self.can_fuse(a, b, writer)
            if isinstance(result, Reject):
                self._record(a, b, False, result.category, result.detail)
                continue
            fused = FusedGroup(a.nodes + b.nodes, result)
            self._record(a, b, True, "fused", f"saves {score} bytes")
            self.groups = [g for g in self.groups if g is not a and g is not b] + [fused]
            alive -= {id(a), id(b)}
            alive.add(id(fused))
            for n in fused.writes:
                writer[n] = fused
            changed = True
        return changed

    def _record(self, a, b, fused, category, detail="") -> None:
        from ..dynamo._logging import get_logger
        from . import metrics

        d = FusionDecision(a.name, b.name, fused, category, detail)
        if any(x == d for x in self.decisions):
            return
        self.decisions.append(d)
        if not fused:
            metrics.fusion_rejections.append(d)
        get_logger("fusion").info("%s", d)

    def _nbytes(self, name: str) -> int:
        buf = self.graph.name_to_buffer.get(name)
        if buf is None or isinstance(buf, ExternKernel) and buf.n_outputs > 1:
            return 0
        # a symbolic size scores with its value for the example inputs (torch: size hints)
        return size_hint(numel(buf.get_size()) * buf.get_dtype().itemsize, self.graph.hints)

    def can_fuse(self, a: FusedGroup, b: FusedGroup, writer: dict):
        """The merged frame, or a ``Reject`` (category, detail)."""
        if a.is_extern or b.is_extern:
            return Reject("extern kernel",
                          getattr((a if a.is_extern else b).nodes[0].node, "kernel", "output"))
        frame = merge_frames(a.frame, b.frame)
        if isinstance(frame, Reject):
            return frame
        if len(a.nodes) + len(b.nodes) > config.max_fusion_size:
            return Reject("too large", f"{len(a.nodes) + len(b.nodes)} nodes")
        nodes = sorted(a.nodes + b.nodes, key=lambda n: n.pos)
        first, placed = None, []
        for order in self._orders(a, b, frame):
            placed = [n for g in (a, b) if not g.frame[1] for n in g.nodes] \
                if order is not None else []
            for n in placed:
                n.order = (frame, order)
            reject = self._check_indices(nodes, frame)
            if reject is None:
                break
            first = first or reject
            for n in placed:
                n.order = None
        else:
            return first
        if self._would_create_cycle(a, b, writer):
            reject = Reject("would create a cycle")
        elif not (a.writes & b.reads or b.writes & a.reads or a.reads & b.reads):
            reject = Reject("no shared data")
        if reject is not None:
            for n in placed:
                n.order = None
            return reject
        return frame

    @staticmethod
    def _orders(a, b, frame) -> list:
        """How a pointwise group joining a reduction frame may lay its dims in it: by size
        (``None``: its nodes' placement) when the sizes say, then every interleaving of the
        kept and reduced dims that fits its sizes, tried in turn (first that matches wins)."""
        pw = [g for g in (a, b) if not g.frame[1]]
        if not frame[1] or len(pw) != 1:
            return [None]
        R, RR = frame
        S = _nonone(pw[0].frame[0])
        default = [None] if S in (_nonone(R + RR), _nonone(RR + R), _nonone(R)) else []
        return default + interleavings(pw[0].frame[0], frame)

    @staticmethod
    def _check_indices(nodes, frame):
        """None if every node reads each producer of the group at the index it writes, else
        the ``Reject``."""
        written = {n.name: n for n in nodes}
        for n in nodes:
            reads, _ = n.deps(frame)
            for dep in reads:
                producer = written.get(dep.name)
                if producer is None or producer.pos >= n.pos:
                    continue
                _, write = producer.deps(frame)
                if _is_indirect(dep.index) or _is_indirect(write):
                    # ``indirect0`` names a different loaded value in each node: equal text is
                    # no proof of the same element (torch realizes a buffer read or written
                    # at a data-dependent index)
                    return Reject("index mismatch", f"{n.name} reads {dep.name}[{dep.index}], "
                                  f"written at [{write}]: an indirect index")
                if dep.index != write:
                    return Reject("index mismatch",
                            f"{n.name} reads {dep.name}[{dep.index}], written at [{write}]")
                # all reduced (R = ()): tiles cut the reduction, so a reduction's result is
                # finished only after the loop; an element or a second reduction needing it
                # (``x.var()``: the sum of squares reads the mean) needs a second pass
                if not frame[0] and n.placement(frame) != "outer" and \
                        not producer.placement(frame).startswith("full"):
                    return Reject("needs a second pass",
                            f"{n.name} needs all of {dep.name} (a full reduction) per element")
        return None

    def _would_create_cycle(self, a, b, writer) -> bool:
        """Is there a path a -> c -> b (or b -> c -> a) through a third group c?"""
        def producers(g, src, dst):
            return [p for n in g.reads if (p := writer.get(n)) is not None
                    and p is not src and p is not dst]

        def reaches(src, dst) -> bool:
            stack, seen = producers(dst, src, dst), set()
            while stack:
                g = stack.pop()
                if id(g) in seen:
                    continue
                seen.add(id(g))
                if g.reads & src.writes:
                    return True
                stack.extend(producers(g, src, dst))
            return False
        return reaches(a, b) or reaches(b, a)

    def _topological(self, groups) -> list:
        writer = {n: g for g in groups for n in g.writes}
        done, out = set(), []

        def visit(g):
            if id(g) in done:
                return
            for name in sorted(g.reads):
                p = writer.get(name)
                if p is not None and p is not g:
                    visit(p)
            done.add(id(g))
            out.append(g)
        for g in sorted(groups, key=lambda g: g.pos):
            visit(g)
        return out

    # ---------------------------------------------------------------- views for learners
    def debug_str(self) -> str:
        lines = []
        for g in self.groups:
            if g.is_extern:
                lines.append(repr(g.nodes[0].node))
                continue
            lines.append(f"{g.name}: loops {_fmt(g.frame)}")
            for n in g.nodes:
                lines.append(f"  {n.name} ({n.placement(g.frame)}):")
                lines += [f"    {line}" for line in n.body_str(g.frame).splitlines()]
        return "\n".join(lines)

    def why_not_fused(self) -> str:
        rows = [d for d in self.decisions if not d.fused]
        if not rows:
            return "(every candidate pair fused)"
        w1 = max(len(f"{d.node1} + {d.node2}") for d in rows)
        w2 = max(len(d.category) for d in rows)
        return "\n".join(f"{d.node1 + ' + ' + d.node2:<{w1}}  {d.category:<{w2}}  {d.detail}"
                         .rstrip() for d in rows)
