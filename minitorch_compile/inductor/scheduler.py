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

A pointwise node inside a reduction's frame is placed ``full`` (it loops over ``R + RR``: a
prologue, or an epilogue like softmax's division), ``full_rfirst`` (its dims are ``RR + R``: the
producer of a column sum like ``sum(0)``, whose loop order is then reduced-dims-first) or
``outer`` (it loops over ``R``: an epilogue on the reduction's result).  Size-1 dims never
matter.  After fusion the groups are sorted topologically.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import config
from .dependencies import MemoryDep, extract_read_writes
from .ir import (Affine, ComputedBuffer, ConcatSlice, ExternKernel, MultiOutput, Reduction,
                 TensorBox, numel, strided_view)
from .sizevars import size_hint


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


class SchedulerNode:
    def __init__(self, buf: ComputedBuffer, pos: int):
        self.node = buf
        self.pos = pos
        self.name = buf.name
        data = buf.data
        self.is_reduction = isinstance(data, Reduction)
        if self.is_reduction:
            self.frame = (tuple(data.ranges), tuple(data.reduction_ranges))
        else:
            self.frame = (tuple(data.ranges), ())
        self.read_names = extract_read_writes(data).read_names
        if getattr(data, "output_indexer", None) is not None:  # a Scatter runs after it
            self.read_names = self.read_names | {data.mutated}
        self._deps: dict = {}
        self._index_exprs: dict = {}
        # a pointwise node whose sizes read both ways in a square frame (R + RR == RR + R) is
        # laid out kept-dims-first unless the CPU kernel finds it reads its inputs as the
        # group's reduction does reduced-dims-first (``codegen/cpu.py``, ``_orient_square``)
        self.rfirst = False

    def placement(self, frame) -> str:
        if self.is_reduction:
            return "reduction"
        R, RR = frame
        S = _nonone(self.frame[0])
        if S == _nonone(R + RR):
            return "full_rfirst" if self.rfirst and S == _nonone(RR + R) else "full"
        return "full_rfirst" if S == _nonone(RR + R) and S != _nonone(R) else "outer"

    def index_vars(self, frame):
        """This node's loop variables named in ``frame`` (``x*`` outer, ``r*`` reduced).

        A pointwise node's dims of size > 1 take the frame's dims of size > 1 in order; its
        size-1 dims are always index 0 (so ``[32, 1]`` runs in a ``[32]`` frame)."""
        R, RR = frame
        xs = [(f"x{k}", s) for k, s in enumerate(R)]
        rs = [(f"r{k}", s) for k, s in enumerate(RR)]
        if self.is_reduction:
            return [Affine.var(n) for n, _ in xs], [Affine.var(n) for n, _ in rs]
        order = {"full": xs + rs, "full_rfirst": rs + xs}.get(self.placement(frame), xs)
        target = iter([n for n, s in order if s != 1])
        return [Affine(0) if s == 1 else Affine.var(next(target))
                for s in self.frame[0]], None

    def deps(self, frame):
        """(reads, write index) with indices over ``frame``'s variables."""
        key = (frame, self.rfirst)
        if key not in self._deps:
            index, rindex = self.index_vars(frame)
            rw = extract_read_writes(self.node.data, index, rindex)
            write = self.node.layout.make_indexer()(index)
            reads = rw.reads
            if getattr(self.node.data, "output_indexer", None) is not None:
                # a Scatter writes at an indirect index, into (after) the buffer it mutates:
                # no consumer and not that buffer's producer can share its tiles
                write = _scatter_write(self.node.data, index)
                reads = reads | {MemoryDep(self.node.data.mutated, write)}
            self._deps[key] = (reads, write)
            self._index_exprs[key] = rw.index_exprs
        return self._deps[key]

    def index_exprs(self, frame) -> set:
        """The expressions of the body's ``ops.index_expr`` calls over ``frame``."""
        self.deps(frame)
        return self._index_exprs[(frame, self.rfirst)]

    def body_str(self, frame) -> str:
        """The body in the frame's variables (``x*`` kept, ``r*`` reduced), as the kernel
        runs it — the loop IR after fusion."""
        from .dependencies import PrintHandler
        from .virtualized import V

        h = PrintHandler()
        index, rindex = self.index_vars(frame)
        indexer = self.node.layout.make_indexer()
        with V.set_ops_handler(h):
            if rindex is not None:
                self.node.data.store_output(self.name, indexer, index, rindex)
            else:
                self.node.data.store_output(self.name, indexer, index)
        return h.render(None)

    def __repr__(self) -> str:
        return self.name


def _is_indirect(index) -> bool:
    """Does an index expression hold a data-dependent ``indirectN`` variable?"""
    return "indirect" in str(index)  # the variables print by name (``16*indirect0 + x1``)


def _scatter_write(scatter, index):
    """The index a ``Scatter`` stores at (with its indirect variables)."""
    from .dependencies import RecordLoadStore
    from .virtualized import V

    h = RecordLoadStore()
    with V.set_ops_handler(h):
        return scatter.output_indexer(index)


class ExternKernelSchedulerNode:
    is_reduction = False
    frame = None

    def __init__(self, buf, pos: int):
        self.node = buf
        self.pos = pos
        self.name = buf.name
        if isinstance(buf, MultiOutput):
            self.read_names = {buf.source.name}
        else:
            self.read_names = set()
            for a in buf.inputs:
                for v in (a if isinstance(a, list) else [a]):
                    if isinstance(v, tuple) and len(v) == 4 and hasattr(v[0], "name"):
                        self.read_names.add(v[0].name)


class FusedGroup:
    """A set of nodes that become one kernel (torch's ``FusedSchedulerNode``)."""

    def __init__(self, nodes: list, frame):
        self.nodes = sorted(nodes, key=lambda n: n.pos)
        self.frame = frame
        self.is_extern = isinstance(nodes[0], ExternKernelSchedulerNode)

    @property
    def name(self) -> str:
        return "_".join(n.name for n in self.nodes)

    @property
    def pos(self) -> int:
        return self.nodes[0].pos

    @property
    def writes(self) -> set:
        return {n.name for n in self.nodes}

    @property
    def reads(self) -> set:
        return set().union(*(n.read_names for n in self.nodes)) - self.writes

    def __repr__(self) -> str:
        return f"FusedGroup({self.name})"


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
    if S in (_nonone(red[0] + red[1]), _nonone(red[1] + red[0]), _nonone(red[0])):
        return red
    return Reject("different iteration sizes", f"{list(S)} vs {_fmt(red)}")


def _nonone(shape) -> tuple:
    return tuple(s for s in shape if s != 1)


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
        if self._would_create_cycle(a, b, writer):
            return Reject("would create a cycle")
        if not (a.writes & b.reads or b.writes & a.reads or a.reads & b.reads):
            return Reject("no shared data")
        return frame

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
