"""The iteration space of a fused kernel (``torch/_inductor/codegen/simd.py``, whose
``SIMDKernel`` owns the range trees and the tiling; and ``ir.py``'s ``simplify_loops``).

A group loops over its frame ``R + RR`` (kept sizes, then reduced sizes).  Before any code is
written the frame is made as simple as the memory it walks allows:

* ``simplify_frame``: drop size-1 dims, merge neighbouring dims that every index walks
  contiguously — a contiguous pointwise chain becomes one flat loop, a softmax two dims;
* ``_orient_square``: in a square frame sizes cannot say which frame dim a pointwise node's dim
  is; pick the orientation that reads memory as the group's reduction does;
* ``_row_broadcast``: whether the tile loop should run with numpy's buffer set to a row (numpy's
  own "tiling": its iterator buffers operands in blocks of ``bufsize`` elements).

Invariant: a frame rewrite renames loop variables only; every index keeps addressing the same
element.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Affine
from ..sizevars import is_symbolic


@dataclass
class Frame:
    names: list  # loop variable per dim
    sizes: list
    reduce: list  # is the dim reduced

    def one_tile(self) -> "Frame":
        """This frame under a leading kept dim of size 1: tiles run over that dim, so the
        kernel is one tile on one thread and no reduction is cut."""
        return Frame(["x1_"] + self.names, [1] + self.sizes, [False] + self.reduce)


def simplify_frame(frame, exprs) -> tuple:
    """Drop size-1 dims; merge neighbours every expression walks contiguously."""
    R, RR = frame
    dims = [(f"x{k}", s, False) for k, s in enumerate(R)] + \
           [(f"r{k}", s, True) for k, s in enumerate(RR)]
    zero = {n: Affine(0) for n, s, _ in dims if s == 1}
    dims = [d for d in dims if d[1] != 1]
    exprs = [e.subs(zero) for e in exprs]
    merged: set = set()
    k = len(dims) - 2
    while k >= 0:
        (a, sa, ra), (b, sb, rb) = dims[k], dims[k + 1]
        if ra == rb and all(e.coef(a) == e.coef(b) * sb for e in exprs):
            exprs = [Affine(e.const, [(v, c) for v, c in e.terms if v != a]) for e in exprs]
            merged.add(a)
            dims[k:k + 2] = [(b, sa * sb, rb)]
        k -= 1
    if not dims:
        dims = [("x_", 1, False)]
    frame = Frame([d[0] for d in dims], [d[1] for d in dims], [d[2] for d in dims])
    return frame, (zero, merged)


def _orient_square(group, frame) -> None:
    """In a square frame (``sum(0)`` of a (1024, 1024) result fused with that result's
    pointwise producer) sizes cannot tell which frame dims a pointwise node's dims are: lay
    such a node out reduced-dims-first when that makes it read its inputs at the indices the
    group's reductions read them (so both walk memory the same way and CSE shares the loads),
    and only if it neither reads nor feeds a value computed inside the group."""
    R, RR = frame
    if not R or not RR or tuple(R) + tuple(RR) != tuple(RR) + tuple(R):
        return
    names = {n.name for n in group.nodes}
    red_reads = {(d.name, d.index) for n in group.nodes if n.is_reduction
                 for d in n.deps(frame)[0]}
    for n in group.nodes:
        if n.is_reduction or n.placement(frame) != "full" or n.read_names & names or \
                any(n.name in m.read_names for m in group.nodes):
            continue
        before = sum((d.name, d.index) in red_reads for d in n.deps(frame)[0])
        n.rfirst = True
        if sum((d.name, d.index) in red_reads for d in n.deps(frame)[0]) <= before:
            n.rfirst = False


def rewrite(expr: Affine, rules) -> Affine:
    zero, merged = rules
    expr = expr.subs(zero)
    return Affine(expr.const, [(v, c) for v, c in expr.terms if v not in merged])


def _row_broadcast(frame: Frame, instrs: list):
    """The row length of a kernel that broadcasts a per-row value along its rows (softmax's
    ``x - max``, layer norm's ``x * rstd``) — ``run_tiles`` then sets numpy's ufunc buffer to a
    row (``runtime.ufunc_bufsize``) — or None.  A static row is named only when that applies
    (512-4095 elements); a symbolic one always, and the size decides at run time."""
    last = frame.sizes[-1]
    if len(frame.sizes) < 2 or not is_symbolic(last) and not 512 <= last < 4096:
        return None
    for ins in instrs:
        d = ins.dest
        if d is None or not d.flags or not (d.flags[-1] and any(d.flags[:-1])):
            continue
        if any(a.flags and not a.flags[-1] and any(a.flags[:-1]) for a in ins.args):
            return last
    return None
