"""Passes over the tiles: which node of a kernel runs in which pass, and what a later pass
reads of an earlier one (torch's C++ kernel writes one loop nest per such pass, inside one
kernel function; ``torch/_inductor/codegen/cpp.py``'s ``CppKernelProxy``).

When a kernel's tiles cut a reduction — every dim of its frame is reduced (``x.var(0)``,
``softmax(x, 0)`` on ``(N, 1)``) or its loop runs reduced-dims-first (``x - x.mean(0)``) — a
node that reads the *finished* result cannot run in the same loop.  ``phases``: a node runs
one pass after the last reduction whose finished value it reads (an epilogue on the result
right after its reduction's pass).  Values flow between passes three ways:

1. a reduction's (or epilogue's) finished value: a broadcast constant in the later pass;
2. an elementwise node that is stored anyway (another kernel or the graph reads it): the later
   pass loads it from its buffer (``reused``);
3. any other elementwise node a later pass reads: either **stored** by its own pass into a
   full-size scratch buffer of the kernel (``stash``: computed straight into it, the tile
   buffer's pass becomes a write to memory) and loaded back, or **recomputed** in the later
   pass's tiles (``recomputed``) — stored when recomputing costs more than the store and the
   load, i.e. when it takes more than ``STASH_MIN_OPS`` numpy passes or a transcendental one
   (softmax's ``exp(x - max)``: two passes, one of them ``exp``, 0.75 ns per element on a
   cached tile, against ~0.3 for writing it out and reading it back).

A kernel whose whole frame fits one tile keeps the one-tile form instead (``fits_one_tile``):
one tile holds the whole reduction, so nothing is cut and every node runs in one pass.
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..ir import numel
from ..sizevars import is_symbolic
from .common import np_dtype

# recompute, rather than store and load, an elementwise value made of at most this many ops
# and none of them transcendental; measured on softmax(x, 0) at (4 M, 1), one thread
STASH_MIN_OPS = 2
_TRANSCENDENTAL = {"exp", "log", "sin", "cos", "tan", "tanh", "sigmoid", "erf", "pow", "log1p",
                   "expm1", "exp2", "log2", "log10", "atan", "asin", "acos", "sinh", "cosh",
                   "atan2", "gelu"}
_FREE = {"load", "constant", "index_expr", "to_dtype", "store", "reduction"}


def phases(kernel, frame) -> dict:
    """Node name -> the pass over the tiles it runs in."""
    kinds = {n.name: n.placement(frame) for n in kernel.group.nodes}
    phase: dict = {}
    for n in kernel.group.nodes:
        p = 0
        for d in n.deps(frame)[0]:
            if d.name in phase and d.name != n.name:
                finished = kinds[d.name] in ("reduction", "outer") and kinds[n.name] != "outer"
                p = max(p, phase[d.name] + finished)
        phase[n.name] = p
    return phase


def fits_one_tile(kernel, frame) -> bool:
    """Is the kernel's (static) frame one tile of ``config.tile_bytes``?"""
    fr = kernel.frame
    if any(is_symbolic(s) for s in fr.sizes):
        return False
    names = {n.name for n in kernel.group.nodes} | \
        {d.name for n in kernel.group.nodes for d in n.deps(frame)[0]}
    item = max(np.dtype(np_dtype(kernel.module.buffer(m).get_dtype())).itemsize for m in names)
    return numel(fr.sizes) * item <= config.tile_bytes


def _kinds(kernel, frame) -> dict:
    return {n.name: n.placement(frame) for n in kernel.group.nodes}


def _earlier(kernel, frame, phase_of: dict, n, p: int, skip=()) -> list:
    """The elementwise nodes of passes before ``p`` that node ``n`` reads (not in ``skip``)."""
    written = {m.name: m for m in kernel.group.nodes}
    kinds = _kinds(kernel, frame)
    out = []
    for d in n.deps(frame)[0]:
        m = written.get(d.name)
        if m is not None and phase_of.get(m.name, 0) < p and m.name not in skip \
                and m not in out and kinds[m.name] not in ("reduction", "outer"):
            out.append(m)
    return out


def _closure(kernel, frame, phase_of: dict, roots: list, p: int, skip) -> list:
    """``roots`` and every elementwise node of passes before ``p`` they read, transitively
    (stopping at ``skip``): what recomputing ``roots`` in pass ``p`` computes."""
    seen, stack = [], list(roots)
    while stack:
        m = stack.pop()
        if m in seen:
            continue
        seen.append(m)
        stack += _earlier(kernel, frame, phase_of, m, p, skip)
    return seen


def _costly(nodes) -> bool:
    from ..dependencies import extract_read_writes

    work: dict = {}
    for n in nodes:
        for op, k in extract_read_writes(n.node.data).op_counts.items():
            if op not in _FREE:
                work[op] = work.get(op, 0) + k
    return sum(work.values()) > STASH_MIN_OPS or any(op in _TRANSCENDENTAL for op in work)


def stashed(kernel, frame, phase_of: dict) -> tuple:
    """(reused, stash): the elementwise nodes later passes read, loaded from their own buffer
    (they are stored anyway) or from a scratch buffer their pass stores them into."""
    reused, stash = set(), set()
    if not config.passes_store_values:
        return reused, stash
    for n in kernel.group.nodes:
        p = phase_of.get(n.name, 0)
        for m in _earlier(kernel, frame, phase_of, n, p):
            if m.name in kernel.materialized:
                reused.add(m.name)
            elif _costly(_closure(kernel, frame, phase_of, [m], p, kernel.materialized)):
                stash.add(m.name)
    return reused, stash


def recomputed(kernel, frame, phase_of: dict, p: int) -> set:
    """Elementwise nodes of earlier passes that pass ``p``'s nodes read and that are neither
    stored nor stashed: computed again in this pass's tiles (their tile values died with
    their pass), stored only once."""
    if p == 0:
        return set()
    kept = kernel.reused | kernel.stash
    roots = [m for n in kernel.group.nodes if phase_of.get(n.name, 0) == p
             for m in _earlier(kernel, frame, phase_of, n, p, kept)]
    return {m.name for m in _closure(kernel, frame, phase_of, roots, p, kept)}


__all__ = ["STASH_MIN_OPS", "fits_one_tile", "phases", "recomputed", "stashed"]
