"""One fused group → one Ascend-C-style kernel for the simulated npu
(``torch_npu``'s Inductor backend emits AscendC/Triton; the structure follows the Ascend C
vector operator samples, ``KernelAdd::Init/Process/CopyIn/Compute/CopyOut``).

It starts from exactly what the CPU code generator builds (``codegen/cpu.py``: the simplified
frame, the SSA instructions of the bodies, tile buffers by liveness) and changes where the data
lives.  For softmax on (4096, 1024) float32 the kernel reads::

    def fused__softmax_0(in_arg0_1, out_buf3):
        v0 = in_arg0_1                                    # GM views
        o0 = out_buf3
        nbuf = buffer_num(2)                              # 2: double buffering
        with KernelLaunch('fused__softmax_0', 24, ...) as k:
            for core in k.cores():                        # one pass per AI core
                pipe = TPipe()
                q_x0 = TQue(VECIN, name='x0'); pipe.InitBuffer(q_x0, nbuf, 36864)
                q_y0 = TQue(VECOUT, name='y0'); pipe.InitBuffer(q_y0, nbuf, 36864)
                t_b0 = TBuf('b0'); pipe.InitBuffer(t_b0, 36864)
                c0, c1 = block_range(GetBlockIdx(), 4096, 171)   # this core's rows
                for t0, t1 in Tiles(core, c0, c1, 9):     # 9 rows per tile
                    x0 = CopyIn(q_x0, v0[t0:t1])          # CopyIn  (MTE2)
                    b0 = Alloc(t_b0, (t1 - t0, 1024), np.float32)
                    np.maximum.reduce(x0, ..., out=b1); Vec('reduce', x0, b1)   # Compute
                    ...
                    CopyOut(o0[t0:t1], q_y0, y0)          # CopyOut (MTE3)

The algorithm:

1. build the CPU kernel (frame, views, instructions), but a load of a GM view becomes a UB
   tile ``x<k>`` filled by ``CopyIn`` through a VECIN queue (a view constant along the tile
   dim is copied once per core and stays resident, ``r<k>``), and a store becomes a write into a
   VECOUT queue buffer ``y<k>`` that ``CopyOut`` sends to GM; several tiled inputs (outputs)
   share one queue, ``q_in`` (``q_out``), each at its offset in the queue's buffers — an Atlas A2
   core holds at most ``spec.max_que_buffers`` queue buffers per position;
2. every instruction is followed by ``Vec(cost name, operands)``: its vector cycles;
3. the tiling (``npu_tiling.py``): rows of the first frame dim; every live UB buffer — queues ×
   ``nbuf``, temporaries (``TBuf``), resident inputs, each 32-byte aligned — must fit UB (if one
   row does not: ``NPUCompileError`` naming every buffer and its bytes); the core count
   (``GetBlockIdx()``), the tile count per core and the buffers per queue (``nbuf``: 2 is
   double buffering, a small compute-bound kernel may get more) are the fastest by the
   launch's pipeline model.  A pointwise frame is tiled over the dim every input varies
   along, so a broadcast input (a bias) is not read once per core.  A group whose tiles cut a
   reduction (a *split* reduction: ``x.sum()``) keeps its partial results in UB across tiles;
   on several cores each core then copies its partials to a GM workspace, ``SyncAll()`` waits
   for all, and the last core reads them back, combines them and runs the epilogue;
4. inputs constant along the tile dim are copied with the first tile (one DMA burst) and stay
   resident; an epilogue after the loop runs in the last tile's pass, its copies going out
   with that tile's.

The module around the kernels (``call``, the cube's matmuls, npu tensors out) is
``codegen/npu_wrapper.py``'s.
"""

from __future__ import annotations

import math
import re

from ...npu.spec import get_spec
from .. import config
from ..ir import numel
from .common import Value, np_dtype
from .cpu import REDUCE_UFUNC, Frame, Instr, NumpyKernel, _finish
from .npu_tiling import (  # noqa: F401 - NPUCompileError: the error this target raises
    NPUCompileError,
    NPUKernelPlan,
    NPUTiling,
)

# numpy function in an instruction -> the vector cost-table entry (npu/spec.py)
COST_NAME = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "div", "divide": "div",
    "floor_divide": "div", "negative": "neg", "maximum": "max", "minimum": "min", "fmax": "max",
    "fmin": "min", "absolute": "abs", "abs": "abs", "reciprocal": "reciprocal", "sqrt": "sqrt",
    "exp": "exp", "log": "log", "tanh": "tanh", "sin": "sin", "cos": "cos", "power": "pow",
    "square": "mul", "sign": "sign", "where": "select", "copyto": "cast",
    "broadcast_to": "copy", "greater": "compare", "greater_equal": "compare",
    "less": "compare", "less_equal": "compare", "equal": "compare", "not_equal": "compare",
    "logical_and": "and", "logical_or": "or", "logical_not": "not", "isnan": "compare",
}
_FUNC = re.compile(r"np\.(\w+)(\.reduce)?\(")


class NPUKernel(NPUTiling, NumpyKernel):
    """The CPU kernel's analysis, emitted as CopyIn → Compute → CopyOut over UB tiles."""

    two_phase = False  # its tiling plans one pass: a reduction read inside stays one tile

    def __init__(self, group, module, materialized: set, name: str,
                 reduced_first: bool = False):
        self.reduced_first = reduced_first  # tiles over the reduced dims (``choose_kernel``)
        self.tiled_in: dict = {}  # view name -> (dtype, flags)
        self.resident: dict = {}
        self.outs: dict = {}  # store view -> (dtype, flags, tiled)
        super().__init__(group, module, materialized, name)

    # ---------------------------------------------------------------- loads and stores
    def load(self, h, name, index):
        if name in self.values:
            return self.values[name]
        view, flags = self._view(name, index, "v")
        dtype = np_dtype(self.module.buffer(name).get_dtype())
        tiled = (flags[0] or self.frame.sizes[0] == 1) and not h.final
        k = view[1:]
        key = ("load", view, tiled)
        if key not in h.cache:
            if tiled:
                self.tiled_in[k] = (dtype, flags)
                expr = f"x{k}"
            else:
                self.resident[k] = (dtype, flags)
                expr = f"r{k}"
            h.cache[key] = Value(expr=expr, flags=flags, dtype=dtype)
        return h.cache[key]

    def store(self, h, name, index, value):
        at = self._store_view(h, name, index, value)
        if at is None:
            return
        h, view, flags = at
        k = view[1:]
        dtype = np_dtype(self.module.buffer(name).get_dtype())
        tiled = (flags[0] or self.frame.sizes[0] == 1) and not h.final
        self.outs[k] = (dtype, flags, tiled)
        h.instrs.append(Instr(None, f"np.copyto(y{k}, {{0}}, casting='unsafe')", [value],
                              store=(f"y{k}", flags, dtype)))

    def _reduction_outer(self, frame, exprs) -> bool:
        """The npu's choice of loop order (the CPU's hook turns ``sum(0)`` reduced-dims-first).

        Never reduced-dims-first here: the tiles stay over the kept dims (every core takes its
        columns, the reduced dim is read by a strided ``DataCopy``), so no partial results need
        combining across cores.  A pointwise frame instead puts first the dim along which
        every input varies, if the first does not: an input constant along the tile dim (a
        bias over rows) is resident in every core and read from GM once *per core*; tiled
        over its own dim, each core reads only its slice (a strided copy of the others)."""
        fr = self.frame
        if self.reduced_first and any(fr.reduce) and not all(fr.reduce):
            # as the CPU's hook: not when a node needs a finished reduction inside the loop
            kinds = {n.name: n.placement(frame) for n in self.group.nodes}
            return not any(kinds[n.name] != "outer" and kinds.get(d.name) in ("reduction",
                                                                              "outer")
                           for n in self.group.nodes for d in n.deps(frame)[0])
        if any(fr.reduce) or len(fr.sizes) < 2:
            return False

        def copies(d):  # elements read more than once when dim d is the tile dim
            return sum(numel([s for v, s in zip(fr.names, fr.sizes) if e.coef(v)])
                       for e in exprs if not e.coef(fr.names[d]))
        best = min(range(len(fr.sizes)), key=lambda d: (copies(d), d))
        if copies(best) < copies(0) and fr.sizes[best] >= get_spec().num_cores:
            order = [best] + [d for d in range(len(fr.sizes)) if d != best]
            self.frame = Frame([fr.names[d] for d in order], [fr.sizes[d] for d in order],
                               [fr.reduce[d] for d in order])
        return False

    # ---------------------------------------------------------------- sizes
    def codegen(self) -> str:
        fr = self.frame
        if not self.split and any(not t for *_, t in self.outs.values()):
            raise NPUCompileError(f"npu kernel '{self.name}': an output constant along the "
                                  "tile dim")
        refs = {ref: op.name for op, ref in self.module.kernel_refs.items()}
        for h in (self.body, self.epilogue):
            # a vector op the kernel calls (Gelu, Erf) writes its destination in UB itself:
            # storing its result in the output's queue buffer is no second pass on the device
            made = {id(i.dest): i.dest.dtype for i in h.instrs
                    if i.dest is not None and re.search(r"_kernel\d+\(", i.fmt)}
            h.instrs = [i if i.store and i.args and made.get(id(i.args[0]), "-") == i.store[2]
                        else _with_cost(i, refs) for i in h.instrs]
        body = _finish(self.body.instrs, "b")
        epilogue = _finish(self.epilogue.instrs, "e")
        slots = [(fl, dt) for fl, dt in body["slots"]]
        eslots = [(fl, dt) for fl, dt in epilogue["slots"]]
        block_dim, per, rows = self.plan(slots + eslots)
        n = fr.sizes[0]
        self.block_dim, self.rows = block_dim, rows
        self.ws_cores = block_dim if self.split else 1  # partials in the GM workspace
        nbuf = self.nbuf  # buffers per queue (the tiling function's choice)
        self.ub_bytes = sum(c * b for _, c, b in self.buffers(rows, slots + eslots, nbuf))
        self.plan_record = NPUKernelPlan(
            self.name, block_dim, per, rows, math.ceil(per / rows), self.ub_bytes,
            [(name, c, b) for name, c, b in self.buffers(rows, slots + eslots, nbuf)],
            self.num_bytes)
        self.module.npu_plans.append(self.plan_record)
        min_read = sum(numel(self.module.buffer(a).get_size()) *
                       self.module.buffer(a).get_dtype().itemsize
                       for a in self.args if a not in self.group.writes)
        params = ", ".join(f"{'out' if a in self.group.writes else 'in'}_{a}"
                           for a in self.args)
        out = [f"def {self.name}({params}):"]
        out += [f"    {line}" for line in self.view_lines]
        out.append(f"    nbuf = buffer_num({nbuf})  # buffers per queue: 2 = double buffering")
        multi = self.split and block_dim > 1
        for j, (_, dt, aflags) in enumerate(self.accs if multi else []):
            out.append(f"    w{j} = np.empty(({block_dim},) + {self._shape(aflags, '1')}, "
                       f"dtype=np.{dt})  # GM workspace: one partial per core")
        out.append(f"    with KernelLaunch({self.name!r}, {block_dim}, kind='inductor', "
                   f"min_read_bytes={min_read}, min_write_bytes={self.num_bytes - min_read}"
                   ") as k:")
        out.append("        for core in k.cores():  # one pass per AI core")
        ind = " " * 12
        out.append(f"{ind}pipe = TPipe()")
        bufs = self.buffers(rows, slots + eslots, nbuf)
        # several tiled inputs (outputs) share one queue, each at its offset in its buffers:
        # a position holds at most ``spec.max_que_buffers`` queue buffers (Ascend C's advice)
        merged = {}
        for kind, position, que in (("x", "VECIN", "in"), ("y", "VECOUT", "out")):
            parts = [(name, b) for name, c, b in bufs if name[0] == kind and c > 1]
            if len(parts) > 1:
                offsets = [sum(b for _, b in parts[:i]) for i in range(len(parts))]
                merged[kind] = ([name for name, _ in parts], tuple(offsets))
                where = ", ".join(f"{name} at {o}" for (name, _), o in zip(parts, offsets))
                out.append(f"{ind}q_{que} = TQue({position}, name={que!r}); pipe.InitBuffer("
                           f"q_{que}, nbuf, {sum(b for _, b in parts)})  # {where}")
        for name, count, nbytes in bufs:
            kind = name[0]
            if kind in merged and name in merged[kind][0]:
                continue
            if kind == "x":
                out.append(f"{ind}q_{name} = TQue(VECIN, name={name!r}); "
                           f"pipe.InitBuffer(q_{name}, nbuf, {nbytes})")
            elif kind == "y" and count > 1:
                out.append(f"{ind}q_{name} = TQue(VECOUT, name={name!r}); "
                           f"pipe.InitBuffer(q_{name}, nbuf, {nbytes})")
            elif kind in "yp":  # used once, after the loop: no queue, so not in the pipeline
                out.append(f"{ind}q_{name} = TBuf({name!r}); pipe.InitBuffer(q_{name}, {nbytes})")
            else:
                out.append(f"{ind}t_{name} = TBuf({name!r}); pipe.InitBuffer(t_{name}, {nbytes})")
        for j in range(len(self.accs)):
            out.append(f"{ind}acc{j} = None  # partial result, kept in UB across tiles")
        out.append(f"{ind}c0, c1 = block_range(GetBlockIdx(), {n}, {per})  # this core's rows")
        out.append(f"{ind}for t0, t1 in Tiles(core, c0, c1, {rows}):  # {rows} rows per tile")
        ind2 = ind + "    "
        out.append(f"{ind2}# CopyIn (MTE2: GM -> UB)")
        if self.resident:  # issued with the first tile's copies: one DMA burst, one latency
            out.append(f"{ind2}if t0 == c0:  # inputs resident for the whole core")
            out += [f"{ind2}    r{k} = CopyIn(t_r{k}, v{k})" for k in self.resident]
        if "x" in merged:
            names, at = merged["x"]
            out.append(f"{ind2}{', '.join(names)} = CopyIn(q_in, "
                       f"{', '.join(f'v{x[1:]}[t0:t1]' for x in names)}, at={at})")
        else:
            for k, (dt, fl) in self.tiled_in.items():
                out.append(f"{ind2}x{k} = CopyIn(q_x{k}, v{k}[t0:t1])")
        out.append(f"{ind2}# Compute (Vector, in UB)")
        for j, (fl, dt) in enumerate(slots):
            out.append(f"{ind2}b{j} = Alloc(t_b{j}, {self._shape(fl, 't1 - t0')}, np.{dt})")
        if "y" in merged:
            names, at = merged["y"]
            parts = ", ".join(f"({self._shape(fl, 't1 - t0')}, np.{dt})"
                              for k, (dt, fl, tiled) in self.outs.items() if f"y{k}" in names)
            out.append(f"{ind2}{', '.join(names)} = AllocParts(q_out, ({parts}), at={at})")
        else:
            for k, (dt, fl, tiled) in self.outs.items():
                if tiled:
                    out.append(f"{ind2}y{k} = Alloc(q_y{k}, {self._shape(fl, 't1 - t0')}, "
                               f"np.{dt})")
        out += [f"{ind2}{line}" for line in body["lines"]]
        out.append(f"{ind2}# CopyOut (MTE3: UB -> GM)")
        for k, (dt, fl, tiled) in self.outs.items():
            if tiled:
                que = "q_out" if "y" in merged else f"q_y{k}"
                out.append(f"{ind2}CopyOut(o{k}[t0:t1], {que}, y{k})")
        if multi:
            out.append(f"{ind}# after the last tile, in its pass: this core's partial results "
                       "-> its row of the workspace")
            out.append(f"{ind}with core.last_tile():")
            out += [f"{ind}    CopyOut(w{j}[GetBlockIdx()], None, acc{j})"
                    for j in range(len(self.accs))]
            out.append(f"{ind}SyncAll()  # every core's partials are in GM")
            out.append(f"{ind}if GetBlockIdx() == GetBlockNum() - 1:  # the last core combines")
            out.append(f"{ind}    with core.tile():")
            ind += "        "
            for j, (rtype, dt, aflags) in enumerate(self.accs):
                out.append(f"{ind}p{j} = CopyIn(q_p{j}, w{j})  # {block_dim} partials")
                out.append(f"{ind}{REDUCE_UFUNC[rtype]}.reduce(p{j}, axis=0, out=acc{j})")
                out.append(f"{ind}Vec('reduce', p{j})")
        elif self.split or any(not t for *_, t in self.outs.values()):
            out.append(f"{ind}# after the last tile, in its pass: the epilogue on the partial "
                       "results")
            out.append(f"{ind}with core.last_tile():")
            ind += "    "
        if self.split or any(not t for *_, t in self.outs.values()):
            for j, (rtype, dt, aflags) in enumerate([] if multi else self.accs):
                fill = "ones" if rtype == "all" else "zeros"
                out.append(f"{ind}if acc{j} is None:\n{ind}    acc{j} = "
                           f"np.{fill}({self._shape(aflags, '1')}, dtype=np.{dt})")
            for j, (fl, dt) in enumerate(eslots):
                out.append(f"{ind}e{j} = Alloc(t_b{len(slots) + j}, "
                           f"{self._shape(fl, str(n))}, np.{dt})")
            for k, (dt, fl, tiled) in self.outs.items():
                if not tiled:
                    out.append(f"{ind}y{k} = Alloc(q_y{k}, {self._shape(fl, str(n))}, np.{dt})")
            out += [f"{ind}{line}" for line in epilogue["lines"]]
            for k, (dt, fl, tiled) in self.outs.items():
                if not tiled:
                    out.append(f"{ind}CopyOut(o{k}, q_y{k}, y{k})")
        return "\n".join(out)


def choose_kernel(group, module, materialized: set, name: str) -> NPUKernel:
    """The group's kernel; a reduction to fewer outputs than cores (a narrow layer's bias
    gradient ``grad.sum(0)``) is built both ways — tiled over the kept dims (at most one core
    per output) and tiled over the reduced dims (a split reduction on up to every core,
    partials combined) — and the faster by the tiling function's model is kept (a tie, or a
    frame that does not fit UB, goes to the other)."""
    kern = NPUKernel(group, module, materialized, name)
    fr = kern.frame
    kept = numel([s for s, r in zip(fr.sizes, fr.reduce) if not r])
    if not config.npu_multicore_reduction or all(fr.reduce) or not any(fr.reduce) or \
            kept >= get_spec().num_cores:
        return kern
    alt = NPUKernel(group, module, materialized, name, reduced_first=True)
    if not alt.split:
        return kern
    built, error = [], None
    for k in (kern, alt):
        try:
            built.append((k.estimate if (src := k.codegen()) else 0, k, src))
        except NPUCompileError as e:
            error = e
    if not built:
        raise error
    _, best, src = min(built, key=lambda b: b[0])
    for _, k, _ in built:
        if k is not best:
            module.npu_plans.remove(k.plan_record)
    best.codegen = lambda: src
    return best


def _with_cost(ins: Instr, refs: dict) -> Instr:
    """Append ``Vec(cost name, operands)`` to an instruction (its vector cycles)."""
    m = _FUNC.search(ins.fmt)
    kernel = re.search(r"(_kernel\d+)\(", ins.fmt)
    if m is None:
        return ins
    if m.group(2):
        name = "reduce"
    elif kernel:
        name = refs.get(kernel.group(1), "kernel")
    else:
        name = COST_NAME.get(m.group(1), m.group(1))
    operands = ", ".join(["{out}"] if ins.dest is not None else []) + \
        "".join(f", {{{i}}}" for i in range(len(ins.args)))
    if ins.fmt.startswith("if acc"):  # a split reduction combining a tile's partial
        cost = f"Vec({'add' if 'np.add' in ins.fmt else 'max'!r}, {{0}})"
    else:
        cost = f"Vec({name!r}, {operands.lstrip(', ')})"
    return Instr(ins.dest, ins.fmt + "\n" + cost, ins.args, ins.inplace, ins.store)
