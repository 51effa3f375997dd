"""Cores, the kernel launch and the timing model of a simulated Ascend C kernel.

Teaches what a launch of ``block_dim`` AI cores costs (the Ascend C pipeline of ``TQue``
stages; ``kernel.py`` has the instructions that feed it).  Each core records its *tiles* — the
passes of its loop body, each with cycles per stage ``MTE2, MTE1, Cube, Vector, MTE3`` — and the
kernel's time follows from them::

    serial     = sum over tiles of (sum of its stages)
    pipelined  = the end of the pipeline schedule below; only when every queue of the core has
                 >= 2 buffers (double buffering), else = serial
    exposed    = DMA latency x (1 if the kernel reads GM) + DMA latency x (1 if it writes GM)
    kernel     = max(slowest core, total GM bytes / aggregate GM bandwidth + exposed)
                 (with ``SyncAll()``: the slowest core's tiles before it + ``sync_all_cycles``
                 + the slowest core's tiles after it, each part pipelined on its own)
    lower bound = max(min GM bytes / aggregate bandwidth, vector or cube cycles / all cores)
                  + exposed

The pipeline schedule (a flow shop, as the queues make it): stage *s* of pass *i* starts when
stage *s* has finished pass *i − 1* (one engine per stage), when the stages before it have
finished pass *i* and the passes before (its data is in the queue, or resident), and — *d*
buffers per queue — when the stage after it has finished pass *i − d* (that buffer is free
again).  *d* is the core's shallowest queue: 2 is double buffering; Ascend C's
``InitBuffer(que, num, len)`` takes more (an Atlas A2 core allows up to
``spec.max_que_buffers`` queue buffers per position, VECIN or VECOUT), which lets a stage run
further ahead of a copy out still in flight.  Its end is the steady state (about the slowest
stage per pass) plus the pipeline fill and drain, for any mix of passes: a resident copy before
the loop or an epilogue after it is one more pass.  A tile standing for ``times`` identical
passes is scheduled pass by pass up to 4,096 passes; beyond that the rest is shifted by the
cycle the last passes showed (an approximation: the tests hold it within 25 % — no kernel here
comes near that many passes).

``kernel``'s second term is the shared HBM: cores that each get their share cannot, together,
beat it.  ``exposed`` is the part of the DMA start-up no schedule can hide: until the first
read's latency has passed no core has data, so nothing moves or computes; after the last write
is issued its latency passes with nothing left to overlap.  Every kernel, eager or fused, pays
it, so it is in the bound as well as in the time (docs/npu.md, "The lower bound").
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

from . import units
from .memory import core_buffers
from .profiler import CoreTiming, KernelRecord, record_kernel
from .spec import NPUSpec, get_spec


class _State(threading.local):
    """The running kernel and core, per thread (Ascend C's implicit block context)."""

    launch: KernelLaunch | None = None
    core: CoreContext | None = None


_state = _State()



def _current_core() -> CoreContext:
    if _state.core is None:
        raise RuntimeError("Ascend C calls need a running kernel: use them inside "
                           "`with KernelLaunch(...) as k: for core in k.cores(): ...`")
    return _state.core


@dataclass
class Tile:
    """One pass of a core's loop body, standing for ``times`` identical passes."""

    times: int
    cycles: dict = field(default_factory=lambda: dict.fromkeys(units.STAGES, 0.0))
    latency: dict = field(default_factory=dict)  # stage -> DMA start-up included in cycles


class CoreContext:
    """What one AI core (or ``replicas`` identical ones) did during a launch."""

    def __init__(self, launch: KernelLaunch, index: int, replicas: int):
        self.launch, self.spec, self.index, self.replicas = launch, launch.spec, index, replicas
        self.buffers = core_buffers(launch.spec, index)
        self._tiles: list[Tile] = []
        self.queue_depths: list[int] = []
        self.que_buffers: dict[str, int] = {}  # position -> queue buffers (InitBuffer's num)
        self._tile: Tile | None = None
        self._implicit = False
        self.barrier: int | None = None  # tiles issued before SyncAll()
        self.gm_read = self.gm_write = self.l1_bytes = self.l0_bytes = 0

    def add(self, stage: str, cycles: float, *, latency: float = 0, gm_read=0, gm_write=0,
            l1=0, l0=0) -> None:
        """Count ``cycles`` on ``stage``; ``latency`` of them are a DMA's start-up, which copies
        issued back to back in one stage of one tile share (one burst, one start-up)."""
        tile = self._tile
        if tile is None:  # work outside ``tile()`` joins one implicit tile until the next
            tile = self._tile = Tile(1)
            self._tiles.append(tile)
            self._implicit = True
        t = tile.times
        latency = latency if cycles > 0 else 0  # an empty copy moves nothing, starts nothing
        if latency and tile.latency.get(stage):
            cycles -= latency
        elif latency:
            tile.latency[stage] = latency
        tile.cycles[stage] += cycles
        self.gm_read += gm_read * t
        self.gm_write += gm_write * t
        self.l1_bytes += l1 * t
        self.l0_bytes += l0 * t

    @contextlib.contextmanager
    def tile(self, times: int = 1):
        """A loop-body pass that stands for ``times`` identical passes (``times >= 1``)."""
        tile = Tile(times)
        self._tiles.append(tile)
        self._tile, self._implicit = tile, False
        try:
            yield tile
        finally:
            self._tile = None

    @contextlib.contextmanager
    def last_tile(self):
        """Work that belongs to the last loop pass (an epilogue after the loop: its copies go
        out with the last tile's), or to a new pass if the loop ran none."""
        if not self._tiles:
            with self.tile():
                yield self._tiles[-1]
            return
        self._tile, self._implicit = self._tiles[-1], False
        try:
            yield self._tile
        finally:
            self._tile = None

    def sync_all(self) -> None:
        """``SyncAll()``: the tiles so far finish on every core before any core goes on."""
        self.barrier = len(self._tiles)
        self._tile = None

    def tiles(self, n: int):
        """``for i in core.tiles(n)``: n separate tiles, the plain Ascend C loop."""
        for i in range(n):
            with self.tile():
                yield i

    def timing(self) -> CoreTiming:
        depth = min(self.queue_depths) if self.queue_depths else 1  # the shallowest queue
        double = depth >= 2
        tiles = [(t.times, dict(t.cycles)) for t in self._tiles]
        latency = [dict(t.latency) for t in self._tiles]

        def phase(lo, hi):  # (pipelined, serial) of tiles[lo:hi]; a barrier drains the pipe
            serial = sum(t.times * sum(t.cycles.values()) for t in self._tiles[lo:hi])
            if not double or lo == hi:
                return serial, serial
            return pipeline(tiles[lo:hi], depth, latency=latency[lo:hi])[1], serial
        b = len(tiles) if self.barrier is None else self.barrier
        (before, serial_before), (after, serial_after) = phase(0, b), phase(b, len(tiles))
        totals = {s: sum(t.times * t.cycles[s] for t in self._tiles) for s in units.STAGES}
        return CoreTiming(self.index, self.replicas, double, before + after,
                          serial_before + serial_after, totals, self.buffers["UB"].peak, tiles,
                          latency, self.barrier, before, serial_before, depth,
                          dict(self.que_buffers))


class KernelLaunch:
    """``with KernelLaunch(name, block_dim) as k:`` — one kernel on ``block_dim`` cores.

    ``min_read_bytes`` / ``min_write_bytes`` are the kernel's lower bound on GM traffic (each
    input read once, each output written once); by default the bytes it actually moved.
    ``counting=True`` runs the instructions for their cost only (no data in UB).
    """

    def __init__(self, name: str, block_dim: int, *, min_read_bytes: int | None = None,
                 min_write_bytes: int | None = None, counting: bool = False,
                 spec: NPUSpec | None = None, kind: str = "eager", record: bool = True):
        self.spec = spec or get_spec()
        if not 1 <= block_dim <= self.spec.num_cores:
            raise ValueError(f"kernel '{name}': block_dim {block_dim} is outside 1.."
                             f"{self.spec.num_cores} (the spec's AI cores)")
        self.name, self.block_dim, self.counting, self.kind = name, block_dim, counting, kind
        self.min_read, self.min_write = min_read_bytes, min_write_bytes
        self._publish = record  # hand the record to the active profilers on exit
        self._cores: list[CoreContext] = []
        self.record: KernelRecord | None = None

    def core(self, index: int, replicas: int = 1) -> CoreContext:
        c = CoreContext(self, index, replicas)
        self._cores.append(c)
        _state.core = c
        return c

    def cores(self):
        for i in range(self.block_dim):
            yield self.core(i)

    def __enter__(self) -> KernelLaunch:
        self._prev = (_state.launch, _state.core)
        _state.launch, _state.core = self, None
        return self

    def __exit__(self, exc_type, *exc) -> None:
        _state.launch, _state.core = self._prev
        if exc_type is None:
            self.record = self.finish()
            if self._publish:
                record_kernel(self.record)

    def finish(self) -> KernelRecord:
        spec = self.spec
        timings = [c.timing() for c in self._cores]
        n = sum(c.replicas for c in self._cores)
        if n != self.block_dim:
            raise RuntimeError(f"kernel '{self.name}': {n} cores ran, block_dim is "
                               f"{self.block_dim}")
        def total(attr):
            return sum(getattr(c, attr) * c.replicas for c in self._cores)
        read, write = total("gm_read"), total("gm_write")
        stage = {s: sum(t.stage_cycles[s] * t.replicas for t in timings) for s in units.STAGES}
        # the first read's and the last write's DMA start-up are exposed (see the docstring)
        exposed = spec.dma_latency_cycles * ((read > 0) + (write > 0))
        ceiling = (read + write) / spec.gm_bytes_per_cycle + exposed
        pipelined = max([ceiling] + [t.pipelined for t in timings])
        serial = max([ceiling] + [t.serial for t in timings])
        if any(t.barrier is not None for t in timings):  # SyncAll: the slowest core, twice
            pipelined = max(ceiling, max(t.before for t in timings) + spec.sync_all_cycles +
                            max(t.pipelined - t.before for t in timings))
            serial = max(ceiling, max(t.serial_before for t in timings) + spec.sync_all_cycles
                         + max(t.serial - t.serial_before for t in timings))
        min_bytes = (read if self.min_read is None else self.min_read) + \
            (write if self.min_write is None else self.min_write)
        mem_lb = min_bytes / spec.gm_bytes_per_cycle
        compute_lb = max(stage["Vector"], stage["Cube"]) / spec.num_cores
        launch = spec.kernel_launch_us
        return KernelRecord(
            name=self.name, kind=self.kind, block_dim=self.block_dim,
            gm_read_bytes=round(read), gm_write_bytes=round(write), min_gm_bytes=round(min_bytes),
            mte2_cycles=stage["MTE2"], mte1_cycles=stage["MTE1"], vector_cycles=stage["Vector"],
            cube_cycles=stage["Cube"], mte3_cycles=stage["MTE3"],
            l1_bytes=round(total("l1_bytes")), l0_bytes=round(total("l0_bytes")),
            time_us=spec.cycles_to_us(pipelined) + launch,
            time_us_serial=spec.cycles_to_us(serial) + launch,
            lower_bound_us=spec.cycles_to_us(max(mem_lb, compute_lb) + exposed) + launch,
            bound="memory" if mem_lb >= compute_lb else "compute",
            peak_ub_bytes=max((t.peak_ub_bytes for t in timings), default=0),
            tiles=sum(sum(n for n, _ in t.tiles) * t.replicas for t in timings),
            double_buffered=all(t.double_buffered for t in timings), cores=timings)


# --------------------------------------------------------------------------- the pipeline


def pipeline(tiles: list, buffers: int | bool, explicit: int = 4096,
             latency: list | None = None) -> tuple[list, float]:
    """Schedule one core's ``[(times, {stage: cycles})]``: ([(stage, pass, start, end)], end).

    ``buffers`` is the number of buffers per queue (``True`` = 2, double buffering; ``False``
    or 1 = one, every pass after the one before).  ``latency[i]`` is tile *i*'s DMA start-up
    per stage (part of its cycles): a copy requested at ``ready`` moves data from
    ``max(ready + latency, engine free)`` — a request queued while the engine still streams the
    one before hides its start-up.  ``explicit`` passes of a repeated tile are scheduled one by
    one (rounded so the rest is whole cycles); the others shift the schedule by the cycle the
    last passes showed — with *d* buffers per queue the schedule of identical passes repeats
    every *d* — and are not listed (``explicit=50`` draws more of them)."""
    depth = 2 if buffers is True else 1 if buffers is False else max(1, int(buffers))
    piped = depth >= 2
    spans, done = [], dict.fromkeys(units.STAGES, 0.0)
    history: list = []  # per scheduled pass: {stage: end}
    end_prev, n = 0.0, 0
    for i, (times, cycles) in enumerate(tiles):
        lat = latency[i] if latency else {}
        stages = [s for s in units.STAGES if cycles.get(s)]
        n_explicit = min(times, explicit)
        if piped and (times - n_explicit) % depth:  # shift by whole d-pass cycles
            n_explicit += (times - n_explicit) % depth
        for _ in range(n_explicit):
            t = 0.0 if piped else end_prev  # when this pass's data is ready
            ends = {}
            for s in stages:
                # data made by an earlier stage of an earlier pass (a resident copy) is used
                ready = max([t] + [done[x] for x in units.STAGES[:units.STAGES.index(s)]])
                if piped and len(history) >= depth:  # the buffer s writes is free again
                    older = history[-depth]
                    later = [older[x] for x in units.STAGES[units.STAGES.index(s) + 1:]
                             if x in older]
                    ready = max([ready] + later[:1])
                start = max(ready, done[s])
                end = max(ready + lat.get(s, 0.0), done[s]) + cycles[s] - lat.get(s, 0.0)
                spans.append((s, n, start, end))
                done[s] = ends[s] = t = end
            history.append(ends)
            end_prev = max([end_prev] + list(ends.values()))
            n += 1
        rest = times - n_explicit
        if rest and stages:
            if piped and n_explicit >= depth + 1:  # d buffers: the schedule repeats
                cycle = max(history[-1].values()) - max(history[-1 - depth].values())
                shift = rest // depth * cycle  # every d passes
            else:
                shift = rest * sum(cycles[s] for s in stages)
            # the engines this tile uses run ``rest`` passes longer
            done.update({s: done[s] + shift for s in stages})
            history[-depth:] = [{s: v + shift for s, v in h.items()} for h in history[-depth:]]
            end_prev = max([end_prev] + [done[s] for s in stages])
            n += rest
    return spans, max([end_prev] + list(done.values()))
