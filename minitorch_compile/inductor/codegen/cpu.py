"""One fused group → one Python function of vectorized numpy over tiles
(``torch/_inductor/codegen/cpp.py``: where torch writes C++ loops, we write numpy calls).

A group loops over its frame ``R + RR`` (kept sizes, then reduced sizes).  For softmax on
(4096, 1024) the generated function reads::

    def fused__softmax_0(in_ptr0, out_ptr1):
        v0 = in_ptr0                                  # one view per (buffer, index)
        o0 = out_ptr1
        def chunk(c0, c1):                            # whole tiles, one chunk per thread
            s0 = np.empty((min(64, c1 - c0), 1), dtype=np.float32)   # tile buffers
            s1 = np.empty((min(64, c1 - c0), 1024), dtype=np.float32)
            for t0 in range(c0, c1, 64):              # 64 rows = 256 KiB: stays in cache
                t1 = min(t0 + 64, c1)
                b0 = s0[:t1 - t0]
                ...
                np.maximum.reduce(v0[t0:t1], axis=(1,), keepdims=True, out=b0)
                np.subtract(v0[t0:t1], b0, out=b1)
                ...
        run_tiles(chunk, 4096, 64, 4194304, row_broadcast=1024)  # numpy's buffer: a row

The algorithm:

1. run every node's body with the frame's variables and collect the index of each load from,
   and store to, a buffer that lives outside the kernel;
2. simplify the frame (torch's ``simplify_loops``): drop size-1 dims, merge neighbouring dims
   that every index walks contiguously — a contiguous pointwise chain becomes one flat loop;
3. run the bodies again under ``NumpyKernelHandler`` (``cpu_ops.py``): one numpy call per op,
   each producing an SSA ``Value``; a load of a buffer an earlier node of the group computed
   takes that node's tile value, so a fused intermediate never exists in full; equal calls are
   computed once (CSE); a stored value is computed straight into the output (``out=``) when
   it has no other use, or when the output view is dense (its other uses read it back);
4. give each temporary a tile buffer by liveness, reusing dead ones (``out=`` everywhere);
5. write the function: views, tile buffers per chunk, the tile loop, ``run_tiles``.

The frame (step 2) lives in ``simd.py``, the instruction passes (step 4) in ``cpp_utils.py``,
indirect indexing (gathers, scatters, ``index_expr``, ``argmax``) in ``cpu_indirect.py``.

Tiles run over the first frame dim.  When that dim is reduced — a group that reduces everything
(``R = ()``), or one whose memory is contiguous along a kept dim, like ``x.sum(0)``, whose loop
order is then turned reduced-dims-first (``_reduction_outer``) — the tiles split the reduction:
each chunk accumulates partial results, combined after the loop, and ``outer`` nodes
(epilogues on the result) run once at the end.  A node that reads such a finished result (var's
sum of squares reads its mean) runs in a later *pass* over the tiles (``_phases``): one chunk
function and ``run_tiles`` per pass, the partials combined in chunk order, the elementwise
nodes a later pass needs computed again in its tiles (torch makes separate kernels here).
"""

from __future__ import annotations

import re

import numpy as np

from .. import config
from ..ir import Affine, numel
from ..sizevars import is_symbolic
from ..virtualized import V
from . import cpu_indirect as ci  # indirect loads and stores, index_expr, argmax
from . import cpu_phases  # passes over the tiles
from .common import Value, np_dtype
from .cpp_utils import Instr, _finish
from .cpu_ops import NumpyKernelHandler  # one numpy call per ops.* call
from .cpu_passes import expand_row_operands, row_sums_by_blas
from .simd import Frame, _orient_square, _row_broadcast, rewrite, simplify_frame

__all__ = ["Instr", "NumpyKernel", "NumpyKernelHandler", "_finish"]  # npu.py builds on these

REDUCE_UFUNC = {"sum": "np.add", "max": "np.maximum", "min": "np.minimum",
                "any": "np.logical_or", "all": "np.logical_and"}
_IDENTITY = {"sum": "zeros", "any": "zeros", "all": "ones"}


class NumpyKernel:
    """Generates the function of one fused group (torch's ``CppKernel``)."""

    two_phase = True  # a reduction read inside its kernel: passes over the tiles (npu: False)

    def __init__(self, group, module, materialized: set, name: str):
        self.group, self.module, self.name = group, module, name
        self.materialized = materialized
        frame = group.frame
        _orient_square(group, frame)
        exprs, written = [], set()
        for n in group.nodes:
            reads, write = n.deps(frame)
            exprs += [d.index for d in reads if d.name not in written]
            if n.name in materialized:
                exprs.append(write)
            exprs += n.index_exprs(frame)  # ops.index_expr: dims it tells apart stay apart
            written.add(n.name)
        self.frame, self.rules = simplify_frame(frame, exprs)
        if self._reduction_outer(frame, [rewrite(e, self.rules) for e in exprs]) and \
                not ci.has_arg_reduction(group):
            fr = self.frame
            order = [k for k, r in enumerate(fr.reduce) if r] + \
                    [k for k, r in enumerate(fr.reduce) if not r]
            self.frame = Frame([fr.names[k] for k in order], [fr.sizes[k] for k in order],
                               [fr.reduce[k] for k in order])
        self.frame = ci.whole_frame(group, self.frame)  # argmax, scatter: one tile, one thread
        phase_of = self._phases(frame) if self.frame.reduce[0] else {}
        if max(phase_of.values(), default=0) and (
                not self._can_phase(frame) or cpu_phases.fits_one_tile(self, frame)):
            # tiles would cut a reduction that another node reads in full (a var's mean, a
            # softmax's max over dim 0 on an (N, 1) input): one tile, so each is finished
            # (and when it all fits one tile anyway: one pass, nothing computed twice)
            self.frame, phase_of = self.frame.one_tile(), {}
        # values a later pass reads: from their buffer, from a scratch buffer, or recomputed
        self.reused, self.stash = cpu_phases.stashed(self, frame, phase_of)
        self.split = self.frame.reduce[0]  # tiles cut the reduction: accumulate partials
        self.indirect: dict = {}  # cpu_indirect: indirect variable -> (index tile, size)
        self.values: dict = {}  # buffer name -> its tile Value
        self.views: dict = {}  # (buffer, index) -> view number
        self.view_lines: list = []
        self.stashed_lines: dict = {}
        self.args: list = []  # buffer names, in argument order
        self.accs: list = []  # split reductions: (reduction type, dtype, flags)
        self.phases: list = []  # per pass over the tiles: (body, epilogue, its first acc)
        self.num_bytes = 0
        self.recompute = False  # a node of an earlier phase computed again: no store
        finished: dict = {}  # reductions and epilogues of earlier phases: their final Values
        for p in range(max(phase_of.values(), default=0) + 1):
            self.body = NumpyKernelHandler(self)
            self.epilogue = NumpyKernelHandler(self, final=True)
            self.phases.append((self.body, self.epilogue, len(self.accs)))
            self.values = dict(finished)
            again = cpu_phases.recomputed(self, frame, phase_of, p)
            for n in group.nodes:
                if phase_of.get(n.name, 0) != p and n.name not in again:
                    continue
                self.recompute = n.name in again
                handler = self.epilogue if self.split and not n.is_reduction and \
                    n.placement(frame) == "outer" else self.body
                index, rindex = n.index_vars(frame)
                with V.set_ops_handler(handler):
                    if rindex is not None:
                        n.node.data.store_output(n.name, n.node.layout.make_indexer(), index,
                                                 rindex)
                    else:
                        n.node.data.store_output(n.name, n.node.layout.make_indexer(), index)
            self.recompute = False
            finished.update({n.name: self.values[n.name] for n in group.nodes
                             if phase_of.get(n.name, 0) == p and n.name in self.values and
                             n.placement(frame) in ("reduction", "outer")})

    def _phases(self, frame) -> dict:
        """Node name -> the pass over the tiles it runs in (``cpu_phases.py``)."""
        return cpu_phases.phases(self, frame)

    def _can_phase(self, frame) -> bool:
        """Passes share only finished values: a kernel that gathers or reads index values
        (whose tile values a later pass would have to recompute too) stays one tile, as does
        the npu's kernel (its tiling plans one pass)."""
        return self.two_phase and not any(
            ci.is_indirect(d.index) for n in self.group.nodes for d in n.deps(frame)[0]) and \
            not any(n.index_exprs(frame) for n in self.group.nodes)

    def _reduction_outer(self, frame, exprs) -> bool:
        """Loop over the reduced dims outermost (tiles of them, partial results accumulated)
        when memory is contiguous along a kept dim — ``x.sum(0)`` reads whole rows per tile
        instead of columns; a node that needs a finished reduction (``x - x.mean(0)``) then
        runs in a later pass over the tiles."""
        fr = self.frame
        if all(fr.reduce) or not any(fr.reduce):
            return False
        if self._needs_finished_reduction(frame) and not self._can_phase(frame):
            return False  # its readers could not run in a later pass over the tiles
        reduced = {v for v, r in zip(fr.names, fr.reduce) if r}
        unit = [v for e in exprs for v, c in e.terms if c == 1]
        return sum(v not in reduced for v in unit) > sum(v in reduced for v in unit)

    def _needs_finished_reduction(self, frame) -> bool:
        """Some node of the group, other than an epilogue run once at the end, reads a
        reduction's result (or an epilogue's): tiles must not cut the reduction."""
        kinds = {n.name: n.placement(frame) for n in self.group.nodes}
        return any(kinds[n.name] != "outer" and any(
            kinds.get(d.name) in ("reduction", "outer") for d in n.deps(frame)[0])
            for n in self.group.nodes)

    # ---------------------------------------------------------------- buffers
    def _arg(self, name: str) -> str:
        if name not in self.args:
            self.args.append(name)
            buf = self.module.buffer(name)
            self.num_bytes += numel(buf.get_size()) * buf.get_dtype().itemsize
        return f"{'out' if name in self.group.writes else 'in'}_{name}"

    def _view(self, name: str, index: Affine, prefix: str) -> tuple:
        if name in self.stash:  # the kernel's own scratch buffer, dense in frame order
            fr = self.frame  # (every access of a fused node is at the index it is written)
            if name not in self.stashed_lines:
                dtype = np_dtype(self.module.buffer(name).get_dtype())
                self.stashed_lines[name] = f"stash_{name} = empty_cpu(" \
                    f"({', '.join(str(s) for s in fr.sizes)},), np.{dtype})"
                self.view_lines.append(self.stashed_lines[name])
                self.num_bytes += 2 * numel(fr.sizes) * np.dtype(dtype).itemsize
            return f"stash_{name}", (True,) * len(fr.sizes)
        expr = rewrite(index, self.rules)
        key = (name, expr)
        if key not in self.views:
            k = len(self.views)
            self.views[key] = f"{prefix}{k}"  # a load after the store reads the same view
            buf = self.module.buffer(name)
            flags = tuple(expr.coef(v) != 0 for v in self.frame.names)
            shape = tuple(s if f else 1 for s, f in zip(self.frame.sizes, flags))
            strides = tuple(expr.coef(v) for v in self.frame.names)
            code = self.module.view_code(self._arg(name), buf, shape, strides, expr.const)
            self.view_lines.append(f"{prefix}{k} = {code}")
        flags = tuple(expr.coef(v) != 0 for v in self.frame.names)
        return self.views[key], flags

    def load(self, h, name, index):
        if ci.is_indirect(index):  # x[idx]: a gather from the tile's index values
            return ci.indirect_load(self, h, name, index)
        if name in self.values:
            return self.values[name]
        view, flags = self._view(name, index, "v")
        tiled = flags[0] and not h.final
        key = ("load", view, tiled)
        if key not in h.cache:  # the same load twice is one value (so CSE sees through it)
            h.cache[key] = Value(expr=f"{view}[t0:t1]" if tiled else view, flags=flags,
                                 dtype=np_dtype(self.module.buffer(name).get_dtype()))
        return h.cache[key]

    def _store_view(self, h, name, index, value):
        """A store's common start: (handler, output view, flags), or None when the buffer
        lives only inside the kernel (the npu kernel shares it)."""
        self.values[name] = value
        if name not in self.materialized and name not in self.stash or self.recompute:
            return None
        view, flags = self._view(name, index, "o")
        return (self.epilogue if value.final else h), view, flags

    def store(self, h, name, index, value):
        at = self._store_view(h, name, index, value)
        if at is None:
            return
        h, view, flags = at
        target = f"{view}[t0:t1]" if flags[0] and not h.final else view
        h.instrs.append(Instr(None, f"np.copyto({target}, {{0}}, casting='unsafe')", [value],
                              store=(target, flags,
                                     np_dtype(self.module.buffer(name).get_dtype())),
                              dense=name in self.stash or
                              self._dense(rewrite(index, self.rules), flags)))

    def _dense(self, expr: Affine, flags: tuple) -> bool:
        """Does a store's view walk its buffer contiguously in frame order (so a value stored
        there may be read back from it as cheaply as from a tile buffer)?"""
        step = 1
        for v, f, s in reversed(list(zip(self.frame.names, flags, self.frame.sizes))):
            if f:
                if expr.coef(v) != step:
                    return False
                step = step * s
        return True

    def reduction(self, h, dt, rtype, v):
        fr = self.frame
        rdims = [d for d, r in enumerate(fr.reduce) if r]
        if not rdims:
            return v
        if any(not v.flags[d] for d in rdims):  # reduce a broadcast value: expand it first
            shape = ", ".join("t1 - t0" if d == 0 and (v.flags[0] or fr.reduce[0]) else
                              str(s) if (v.flags[d] or fr.reduce[d]) else "1"
                              for d, s in enumerate(fr.sizes))
            v = h.new(f"{{out}} = np.broadcast_to({{0}}, ({shape},))", [v],
                      tuple(f or r for f, r in zip(v.flags, fr.reduce)), v.dtype, temp=False)
        flags = tuple(f and not r for f, r in zip(v.flags, fr.reduce))
        if rtype in ci.ARG_REDUCTIONS:
            return ci.arg_reduction(h, rtype, v, rdims, flags)
        red = h.new(f"{REDUCE_UFUNC[rtype]}.reduce({{0}}, axis={tuple(rdims)}, keepdims=True, "
                    "out={out})", [v], flags, dt)
        if not self.split:
            return red
        j = len(self.accs)
        self.accs.append((rtype, dt, flags))
        h.instrs.append(Instr(None, f"if acc{j} is None:\n    acc{j} = {{0}}.copy()\nelse:\n"
                                    f"    {REDUCE_UFUNC[rtype]}(acc{j}, {{0}}, out=acc{j})",
                              [red]))
        return Value(expr=f"acc{j}", flags=flags, dtype=dt, final=True)

    # ---------------------------------------------------------------- writing
    def itemsize(self) -> int:
        return max([np.dtype(self.module.buffer(n).get_dtype().np).itemsize
                    for n in self.args] or [4])

    def codegen(self) -> str:
        fr = self.frame
        params = ", ".join(f"{'out' if n in self.group.writes else 'in'}_{n}"
                           for n in self.args)
        out = [f"def {self.name}({params}):"]
        if any(is_symbolic(s) for s in fr.sizes):  # dynamic shapes: tiles sized at run time
            rows, single = "rows", False
            out.append(f"    rows = max(1, min({fr.sizes[0]}, {config.tile_bytes} // "
                       f"max({numel(fr.sizes[1:]) * self.itemsize()}, 1)))")
        else:
            rows = max(1, min(fr.sizes[0], config.tile_bytes //
                              max(numel(fr.sizes[1:]) * self.itemsize(), 1)))
            single = fr.sizes[0] <= rows  # one tile: no loop, no chunks, no thread pool
        # cheaper forms of some passes (cpu_passes.py): row sums by BLAS, row operands expanded
        heads = row_sums_by_blas(self.body.instrs, fr.sizes[-1]) if not self.split else []
        expand: list = []
        for body, _, _ in ([] if single else self.phases):
            expand += [line for line in expand_row_operands(body.instrs, rows)
                       if line not in expand]
        out += [f"    {line}" for line in self.view_lines + heads + expand]
        for p in range(len(self.phases)):
            out += self._pass_lines(p, rows, single)
        return self._size_args("\n".join(out))

    def _pass_lines(self, p: int, rows, single: bool) -> list:
        """One pass over the tiles: its chunk function, ``run_tiles``, its partial results
        combined in chunk order (a fixed order: the same sums on every run), its epilogue."""
        fr = self.frame
        body_h, epi_h, a0 = self.phases[p]
        a1 = self.phases[p + 1][2] if p + 1 < len(self.phases) else len(self.accs)
        later = {id(a) for bh, eh, _ in self.phases[p + 1:] for h in (bh, eh)
                 for ins in h.instrs for a in ins.args}
        body = _finish(body_h.instrs, "b", cpu=True)
        epilogue = _finish(epi_h.instrs, "e" if p == 0 else f"e{p}_", cpu=True,
                           live_out=later)  # values a later pass reads stay theirs
        chunk = "chunk" if len(self.phases) == 1 else f"chunk{p}"
        out = []
        if len(self.phases) > 1:
            out.append(f"    # pass {p + 1} of {len(self.phases)} over the tiles")
        slots = body["slots"]
        ind = "    " if single else "        "
        if single:
            out.append(f"    t0, t1 = 0, {fr.sizes[0]}  # one tile is the whole loop")
        else:
            out.append(f"    def {chunk}(c0, c1):")
        for j, (flags, dtype) in enumerate(slots):
            first = str(fr.sizes[0]) if single else f"min({rows}, c1 - c0)"
            shape = [first if k == 0 and f else str(s) if f else "1"
                     for k, (f, s) in enumerate(zip(flags, fr.sizes))]
            name = "b" if single else "s"
            out.append(f"{ind}{name}{j} = np.empty(({', '.join(shape)},), dtype=np.{dtype})")
        for j in range(a0, a1):
            out.append(f"{ind}acc{j} = None")
        if not single:
            out.append(f"        for t0 in range(c0, c1, {rows}):")
            out.append(f"            t1 = min(t0 + {rows}, c1)")
            for j, (flags, _) in enumerate(slots):
                out.append(f"            b{j} = s{j}[:t1 - t0]" if flags[0] else
                           f"            b{j} = s{j}")
        # a kernel of dead buffers only stores nothing: its tile loop still needs a body
        out += [f"{ind}    {line}" if not single else f"    {line}"
                for line in body["lines"]] or ([] if single else [f"{ind}    pass"])
        if a1 > a0 and not single:
            out.append(f"        return ({''.join(f'acc{j}, ' for j in range(a0, a1))})")
        work = numel(fr.sizes)
        row = _row_broadcast(fr, body_h.instrs)
        call = f"run_tiles({chunk}, {fr.sizes[0]}, {rows}, {work}" + \
            (f", row_broadcast={row})" if row is not None else ")")
        if a1 == a0:
            if not single:
                out.append(f"    {call}")
            return out

        def shape(flags):
            return ", ".join(str(s) if f else "1" for s, f in zip(fr.sizes, flags))
        if not single:
            out.append(f"    parts = {call}")
        for j in range(a0, a1):
            rtype, dt, aflags = self.accs[j]
            if not single:
                out.append(f"    acc{j} = parts[0][{j - a0}]")
                out.append("    for p in parts[1:]:")
                out.append(f"        acc{j} = p[{j - a0}] if acc{j} is None else "
                           f"{REDUCE_UFUNC[rtype]}(acc{j}, p[{j - a0}], out=acc{j})")
            fill = _IDENTITY.get(rtype, "zeros")
            out.append(f"    if acc{j} is None:\n        acc{j} = np.{fill}(({shape(aflags)},), "
                       f"dtype=np.{dt})")
        pre = "e" if p == 0 else f"e{p}_"
        for j, (flags, dtype) in enumerate(epilogue["slots"]):
            out.append(f"    {pre}{j} = np.empty(({shape(flags)},), dtype=np.{dtype})")
        out += [f"    {line}" for line in epilogue["lines"]]
        return out

    def _size_args(self, src: str) -> str:
        """Sizes the kernel reads (``ks0``) become its last parameters (dynamic shapes)."""
        self.size_args = sorted(set(re.findall(r"\bks\d+\b", src)), key=lambda n: int(n[2:]))
        if not self.size_args:
            return src
        head, rest = src.split("\n", 1)
        sep = ", " if not head.endswith("():") else ""
        return f"{head[:-2]}{sep}{', '.join(self.size_args)}):\n{rest}"


