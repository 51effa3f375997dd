"""The nodes the scheduler fuses (``torch/_inductor/scheduler.py``'s ``SchedulerNode``,
``ExternKernelSchedulerNode`` and ``FusedSchedulerNode``, here ``FusedGroup``).

A ``SchedulerNode`` wraps one realized buffer with its *iteration frame* ``(R, RR)``, its reads
(``dependencies.py``) and, per frame it may run in, the loop variables of its body.

A pointwise node inside a reduction's frame is placed ``full`` (it loops over ``R + RR``: a
prologue, or an epilogue like softmax's division), ``full_rfirst`` (its dims are ``RR + R``: the
producer of a column sum like ``sum(0)``, whose loop order is then reduced-dims-first) or
``outer`` (it loops over ``R``: an epilogue on the reduction's result).  Size-1 dims never
matter.  When a reduction keeps dims on both sides of the reduced one (``softmax(x, 1)`` on a
3-D ``x``) or its frame is square (``softmax(x, 0)`` on ``(N, N)``), sizes alone do not say
which frame dim each of the pointwise node's dims is: the scheduler then picks one of the
interleavings of ``R`` and ``RR`` (``interleavings``), the one under which the node reads and
is read at the indices its partners write, and records it on the node (``order``).
"""

from __future__ import annotations

from itertools import combinations

from .dependencies import MemoryDep, extract_read_writes
from .ir import Affine, ComputedBuffer, MultiOutput, Reduction


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
        # (frame, loop variables): the frame dims this pointwise node's dims of size > 1 are,
        # in order, when the scheduler chose them among the interleavings (None: by placement)
        self.order = None

    def placement(self, frame) -> str:
        if self.is_reduction:
            return "reduction"
        if self.order is not None and self.order[0] == frame:
            return "full"
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
        if self.order is not None and self.order[0] == frame:
            target = iter(self.order[1])
        else:
            order = {"full": xs + rs, "full_rfirst": rs + xs}.get(self.placement(frame), xs)
            target = iter([n for n, s in order if s != 1])
        return [Affine(0) if s == 1 else Affine.var(next(target))
                for s in self.frame[0]], None

    def deps(self, frame):
        """(reads, write index) with indices over ``frame``'s variables."""
        key = self._key(frame)
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
        return self._index_exprs[self._key(frame)]

    def _key(self, frame) -> tuple:
        order = self.order[1] if self.order is not None and self.order[0] == frame else None
        return frame, self.rfirst, order

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


def _nonone(shape) -> tuple:
    return tuple(s for s in shape if s != 1)


def interleavings(sizes, frame) -> list:
    """The ways a pointwise node of ``sizes`` can run in the reduction frame ``(R, RR)`` over
    all of it: each an order of the frame's loop variables (``x*`` kept, ``r*`` reduced) of
    size > 1 that keeps the kept dims in their order and the reduced ones in theirs — the dims
    a reduction over the middle of a tensor leaves — and matches the node's sizes."""
    R, RR = frame
    xs = [(f"x{k}", s) for k, s in enumerate(R) if s != 1]
    rs = [(f"r{k}", s) for k, s in enumerate(RR) if s != 1]
    S, n = _nonone(sizes), len(xs) + len(rs)
    if len(S) != n or not xs or not rs:
        return []
    out = []
    for pos in combinations(range(n), len(xs)):
        ix, ir = iter(xs), iter(rs)
        dims = [next(ix) if k in pos else next(ir) for k in range(n)]
        if tuple(s for _, s in dims) == S:
            out.append(tuple(v for v, _ in dims))
    return out
