"""The tiling function of an npu kernel: its UB buffers, and how many AI cores and how many
tiles per core it runs (the host-side *tiling* of an Ascend C operator, which reads the
platform's core count and UB size and fills a ``TilingData`` for the kernel).

``NPUTiling`` is mixed into ``codegen/npu.py``'s ``NPUKernel`` and reads what its analysis
found: ``tiled_in`` / ``resident`` / ``outs`` (views and their flags), ``accs`` (partial
results), the body's instructions with their vector costs.  The algorithm (``plan``):

1. every live UB buffer at ``rows`` per tile — queues x ``nbuf`` (2: double buffering; up to
   ``config.npu_buffer_num``, ``depths``), temporaries, resident inputs, partial results, each
   32-byte aligned — must fit UB: the largest such ``rows`` per ``nbuf`` bounds the tile; if one
   row does not fit at 2, ``NPUCompileError`` names the buffers;
2. for each core count (every core at least one row), each tile count per core up to
   ``MAX_TILES_PER_CORE`` and each depth that fits (the deepest first: more buffers never slow
   the schedule, so a shallower one is kept only at the same time), estimate one core's time
   with the launch's own pipeline model
   (``npu/launch.py``: per tile MTE2 / Vector / MTE3 of its bytes and vector cycles) and the
   shared bandwidth — a split reduction on several cores adds its partials' copy out,
   ``SyncAll()`` and the last core's combine pass; the fastest wins, a tie goes to fewer
   cores, then fewer tiles, then fewer buffers;
3. a core count whose resident inputs (read once per core) and workspace partials (written
   and read back once per core) would add more than ``MAX_EXTRA_BYTES`` to the kernel's GM
   bytes is not considered.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ...npu import units
from ...npu.launch import pipeline
from ...npu.memory import round_up
from ...npu.spec import get_spec
from .. import config
from ..ir import numel
from .common import Value

# The cost model has no per-tile overhead (a real loop pass costs scalar instructions and queue
# bookkeeping), so more, smaller tiles would always look better: the tiling function stops here
# (16 tiles per core make the pipeline fill about 1/16 of a core's time).
MAX_TILES_PER_CORE = 16
# Each core reads its own copy of a resident input: the core count is kept so those copies add
# at most this fraction to the kernel's minimum GM bytes (the target for fused kernels).
MAX_EXTRA_BYTES = 0.05


@dataclass
class NPUKernelPlan:
    """What the tiling function decided for one kernel, known at compile time (the report's
    static half; the simulated times come with the first run)."""

    name: str
    block_dim: int  # AI cores
    rows_per_core: int
    rows_per_tile: int
    tiles_per_core: int
    ub_bytes: int  # every live UB buffer of one core, double buffers counted twice
    buffers: list  # [(name, count, bytes each)]
    min_gm_bytes: int  # every input read once, every output written once


class NPUCompileError(RuntimeError):
    """A kernel that cannot be generated for the npu (its tile does not fit UB)."""


class NPUTiling:
    """Buffers, core split and tile size of one npu kernel (see the module docstring)."""

    def _row_elems(self, flags) -> int:
        return numel([s for s, f in zip(self.frame.sizes[1:], flags[1:]) if f])

    def _shape(self, flags, rows: str) -> str:
        dims = [rows if k == 0 and f else str(s) if f else "1"
                for k, (f, s) in enumerate(zip(flags, self.frame.sizes))]
        return f"({', '.join(dims)},)"

    def _fixed_bytes(self, flags, dtype) -> int:
        return numel([s if f else 1 for s, f in zip(self.frame.sizes, flags)]) * \
            np.dtype(dtype).itemsize

    def buffers(self, rows: int, slots: list, nbuf: int = 2) -> list:
        """Every UB buffer of one core at ``rows`` per tile: (name, count, bytes each)."""
        spec = get_spec()
        al = spec.ub_align

        def tile_bytes(flags, dtype):
            if not flags[0] and self.frame.sizes[0] != 1:
                return round_up(self._fixed_bytes(flags, dtype), al)
            return round_up(rows * self._row_elems(flags) * np.dtype(dtype).itemsize, al)
        out = [(f"x{k}", nbuf, tile_bytes(fl, dt)) for k, (dt, fl) in self.tiled_in.items()]
        out += [(f"y{k}", nbuf if tiled else 1, tile_bytes(fl, dt))
                for k, (dt, fl, tiled) in self.outs.items()]
        out += [(f"r{k}", 1, round_up(self._fixed_bytes(fl, dt), al))
                for k, (dt, fl) in self.resident.items()]
        out += [(f"b{j}", 1, tile_bytes(fl, dt)) for j, (fl, dt) in enumerate(slots)]
        out += [(f"acc{j}", 1, round_up(self._fixed_bytes(fl, dt), al))
                for j, (_, dt, fl) in enumerate(self.accs)]
        ws = getattr(self, "ws_cores", 1)  # a multi-core split reduction: the partials read back
        out += [(f"p{j}", 1, round_up(ws * self._fixed_bytes(fl, dt), al))
                for j, (_, dt, fl) in enumerate(self.accs if ws > 1 else [])]
        return [(name, c, max(b, al)) for name, c, b in out]  # no empty allocation

    def depths(self) -> list:
        """The buffers per queue the tiling function may give this kernel: 2 (double
        buffering) and deeper, up to ``config.npu_buffer_num`` and the spec's limit of queue
        buffers per position (``max_que_buffers``; the kernel's tiled inputs share one VECIN
        queue and its tiled outputs one VECOUT queue, so each position holds one queue)."""
        deepest = min(config.npu_buffer_num, get_spec().max_que_buffers)
        return list(range(2, deepest + 1)) or [2]

    def plan(self, slots: list) -> tuple:
        """(block_dim, rows per core, rows per tile): the tiling function.  Of the core counts
        (each core at least one row), tile counts per core (at most ``MAX_TILES_PER_CORE``) and
        buffers per queue (``depths``) whose buffers fit UB, the fastest by the launch's own
        pipeline model; a tie goes to fewer cores, then fewer tiles, then fewer buffers.
        Resident inputs are read once per core, so no more cores than keep those extra reads
        within ``MAX_EXTRA_BYTES`` of the kernel's bytes.  The buffers per queue it chose are
        ``self.nbuf``."""
        spec = get_spec()
        n = self.frame.sizes[0]
        multi = self.split and config.npu_multicore_reduction
        self.ws_cores = min(spec.num_cores, n) if multi else 1  # the most partials read back
        self.nbuf = 2

        def used(rows, nbuf=2):
            return sum(c * b for _, c, b in self.buffers(rows, slots, nbuf))
        if used(1) > spec.ub_bytes:
            listing = ", ".join(f"{name}={c}x{b}" for name, c, b in self.buffers(1, slots))
            raise NPUCompileError(
                f"npu kernel '{self.name}' does not fit UB even one row per tile: needs "
                f"{used(1)} bytes ({listing}), UB has {spec.ub_bytes}")

        def largest(nbuf):  # the largest row count that fits with ``nbuf`` buffers per queue
            if used(1, nbuf) > spec.ub_bytes:
                return 0
            lo, hi = 1, n
            while lo < hi:
                mid = (lo + hi + 1) // 2
                lo, hi = (mid, hi) if used(mid, nbuf) <= spec.ub_bytes else (lo, mid - 1)
            return lo
        fits = {d: largest(d) for d in self.depths()}
        lo = fits[2]
        best = None
        for cores in [1] if self.split and not multi else range(1, min(spec.num_cores, n) + 1):
            per = math.ceil(n / cores)
            block_dim = math.ceil(n / per)
            if block_dim > 1 and self._extra_bytes(block_dim) > MAX_EXTRA_BYTES * self.num_bytes:
                break  # more cores would read the resident inputs (or the partials) too often
            for k in range(1, min(MAX_TILES_PER_CORE, per) + 1):
                rows = math.ceil(per / k)
                # more buffers never slow the schedule (each relaxes a constraint): time the
                # deepest queues that fit, then take the fewest buffers that time as well
                ok = [d for d, most in fits.items() if rows <= most and (d == 2 or k >= d)]
                if not ok:
                    continue
                t = self._estimate(rows, per, block_dim, ok[-1])
                if best is not None and t >= best[0] - 1e-9:
                    continue
                nbuf = next(d for d in ok if d == ok[-1] or
                            self._estimate(rows, per, block_dim, d) <= t + 1e-9)
                best = (t, block_dim, per, rows, nbuf)
        if best is None:  # not even a core's whole share in 16 tiles: the largest tile
            self.estimate = math.inf
            per = max(1, n if self.split else math.ceil(n / max(1, min(spec.num_cores, n))))
            return max(1, math.ceil(n / per)), per, lo
        self.estimate = best[0]  # cycles, by the model (``choose_kernel`` compares two frames)
        self.nbuf = best[4]
        return best[1:4]

    def _extra_bytes(self, block_dim: int) -> int:
        """GM bytes beyond the minimum on ``block_dim`` cores: each core's copy of the resident
        inputs after the first, and a split reduction's partials written to the workspace and
        read back (``block_dim`` of each)."""
        resident = sum(self._fixed_bytes(fl, dt) for dt, fl in self.resident.values())
        ws = 2 * block_dim * self._partial_bytes() if self.split and block_dim > 1 else 0
        return resident * (block_dim - 1) + ws

    def _partial_bytes(self) -> int:
        return sum(self._fixed_bytes(fl, dt) for _, dt, fl in self.accs)

    def _estimate(self, rows: int, per: int, block_dim: int, nbuf: int = 2) -> float:
        """One core's cycles at ``rows`` per tile and ``nbuf`` buffers per queue, from the same
        pipeline model the launch uses (``npu/launch.py``): per tile MTE2 / Vector / MTE3 of
        its bytes."""
        spec = get_spec()
        bw, lat = spec.core_bytes_per_cycle(block_dim), spec.dma_latency_cycles

        def row_bytes(flags, dtype):
            return self._row_elems(flags) * np.dtype(dtype).itemsize

        if getattr(self, "_vec_terms", None) is None:  # per instruction: (cost name, operands)
            self._vec_terms = []
            for ins in self.body.instrs:
                m = re.search(r"\nVec\('(\w+)'", ins.fmt)
                vals = [v for v in [ins.dest, *ins.args]
                        if isinstance(v, Value) and v.dtype and v.flags]
                if m and vals:
                    self._vec_terms.append((m.group(1), [(bool(v.flags[0]),
                                                          row_bytes(v.flags, v.dtype))
                                                         for v in vals]))

        def tile(r):
            vec = 0
            for name, operands in self._vec_terms:
                width = max((r if tiled else 1) * b for tiled, b in operands)
                vec += units.vector_cycles(spec, name, width)
            ins_b = r * sum(row_bytes(fl, dt) for dt, fl in self.tiled_in.values())
            out_b = r * sum(row_bytes(fl, dt) for dt, fl, t in self.outs.values() if t)
            return {"MTE2": lat + ins_b / bw if ins_b else 0.0, "Vector": float(vec),
                    "MTE3": lat + out_b / bw if out_b else 0.0}
        k, last = divmod(per, rows)
        first = tile(rows)
        resident = sum(self._fixed_bytes(fl, dt) for dt, fl in self.resident.values())
        first["MTE2"] += resident / bw
        tiles = [(1, first)] + ([(k - 1, tile(rows))] if k > 1 else []) + \
            ([(1, tile(last))] if last else [])
        multi = self.split and block_dim > 1
        # after the loop, with the last tile's copies: a split reduction's outputs (one core)
        # or its partials to the workspace (several)
        out_bytes = sum(self._fixed_bytes(fl, dt) for dt, fl, t in self.outs.values() if not t)
        tail = self._partial_bytes() if multi else out_bytes
        if tail:
            if tiles[-1][0] > 1:
                tiles[-1:] = [(tiles[-1][0] - 1, tiles[-1][1]), (1, dict(tiles[-1][1]))]
            end = tiles[-1][1]
            end["MTE3"] = (end["MTE3"] or lat) + tail / bw
        latency = [{s: lat for s in ("MTE2", "MTE3") if c[s]} for _, c in tiles]
        moved = self.num_bytes + self._extra_bytes(block_dim)
        ceiling = moved / spec.gm_bytes_per_cycle + 2 * lat
        t = pipeline(tiles, nbuf, latency=latency)[1]
        if multi:  # SyncAll, then the last core reads the partials back and combines them
            ws = block_dim * self._partial_bytes()
            vec = sum(units.vector_cycles(spec, "reduce", block_dim * self._fixed_bytes(fl, dt))
                      for _, dt, fl in self.accs)
            t += spec.sync_all_cycles + lat + ws / bw + vec + lat + out_bytes / bw
        return max(ceiling, t)

    # ---------------------------------------------------------------- writing
