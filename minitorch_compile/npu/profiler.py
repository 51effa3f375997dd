"""``mtc.npu.profile()``: every kernel the device ran, with its bytes and cycles.

Teaches ``torch_npu.profiler`` / ``torch.profiler``: ``with mtc.npu.profile() as prof:``
collects one ``KernelRecord`` per kernel launched on the npu — an eager op (one kernel per op)
or a compiled kernel alike, so eager and fused runs compare field by field::

    prof.kernels          # [KernelRecord(name='aten::mul', gm_read_bytes=..., time_us=...)]
    prof.totals()         # the same numeric fields, summed
    prof.table()          # like key_averages().table(): one row per kernel name
    prof.timeline()       # one kernel's MTE2 / Vector / Cube / MTE3 lanes (npu/report.py)
    prof.roofline()       # every kernel: intensity, time, lower bound, fraction of the roof

Invariants every record keeps (``tests/test_npu_memory.py`` checks them):
``gm_read_bytes + gm_write_bytes >= min_gm_bytes``, ``time_us >= lower_bound_us`` and
``time_us <= time_us_serial`` (double buffering never slows a kernel down).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CoreTiming:
    """One core's (or ``replicas`` identical cores') share of a kernel, in cycles."""

    index: int
    replicas: int
    double_buffered: bool
    pipelined: float
    serial: float
    stage_cycles: dict  # stage -> cycles summed over the core's tiles
    peak_ub_bytes: int
    tiles: list  # [(times, {stage: cycles})] in loop order: what a timeline draws
    latency: list = field(default_factory=list)  # per tile: {stage: DMA start-up cycles}
    barrier: int | None = None  # tiles before ``SyncAll()``; the rest run after every core's
    before: float = 0.0  # pipelined cycles of the tiles before the barrier
    serial_before: float = 0.0
    buffers: int = 2  # buffers of the core's shallowest queue (1: serial, 2: double buffering)
    que_buffers: dict = field(default_factory=dict)  # position -> queue buffers on it


@dataclass
class KernelRecord:
    name: str
    kind: str  # "eager" (one op), "cast" (a format change) or a compiler's kernel kind
    block_dim: int
    gm_read_bytes: int
    gm_write_bytes: int
    min_gm_bytes: int
    mte2_cycles: float
    mte1_cycles: float
    vector_cycles: float
    cube_cycles: float
    mte3_cycles: float
    l1_bytes: int
    l0_bytes: int
    time_us: float  # pipelined (double-buffered where the kernel's queues allow)
    time_us_serial: float  # every stage of every tile one after the other
    lower_bound_us: float  # min GM bytes at full bandwidth, or compute at peak on all cores
    bound: str  # "memory" or "compute"
    peak_ub_bytes: int
    tiles: int
    double_buffered: bool
    cores: list = field(default_factory=list, repr=False)

    @property
    def gm_bytes(self) -> int:
        return self.gm_read_bytes + self.gm_write_bytes


SUMMED = ("gm_read_bytes", "gm_write_bytes", "min_gm_bytes", "mte2_cycles", "mte1_cycles",
          "vector_cycles", "cube_cycles", "mte3_cycles", "l1_bytes", "l0_bytes", "time_us",
          "time_us_serial", "lower_bound_us", "tiles")

_active: list = []


def record_kernel(rec: KernelRecord) -> None:
    for prof in _active:
        prof.kernels.append(rec)


class profile:
    """Collect the kernels launched on the npu while the block runs (nestable)."""

    def __init__(self):
        self.kernels: list[KernelRecord] = []

    def __enter__(self) -> profile:
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)

    def totals(self) -> dict:
        """The numeric fields summed over every kernel, plus ``kernels`` (the count) and the
        largest ``peak_ub_bytes``."""
        out = {f: sum(getattr(k, f) for k in self.kernels) for f in SUMMED}
        out["peak_ub_bytes"] = max((k.peak_ub_bytes for k in self.kernels), default=0)
        out["kernels"] = len(self.kernels)
        return out

    def key_averages(self) -> list[dict]:
        """One row per kernel name (first-seen order): calls and summed fields."""
        rows: dict[str, dict] = {}
        for k in self.kernels:
            r = rows.get(k.name)
            if r is None:
                r = rows[k.name] = {"name": k.name, "calls": 0, "bound": k.bound,
                                    **dict.fromkeys(SUMMED, 0)}
            r["calls"] += 1
            for f in SUMMED:
                r[f] += getattr(k, f)
        return list(rows.values())

    def table(self, sort_by: str | None = None, row_limit: int = 100) -> str:
        """A text table like ``prof.key_averages().table()``; times in µs, bytes in bytes."""
        rows = self.key_averages()
        if sort_by is not None:
            rows.sort(key=lambda r: r[sort_by], reverse=True)
        cols = [("Name", "name", "{}"), ("Calls", "calls", "{}"),
                ("GM read B", "gm_read_bytes", "{:,}"), ("GM write B", "gm_write_bytes", "{:,}"),
                ("MTE2 cyc", "mte2_cycles", "{:,.0f}"), ("Vector cyc", "vector_cycles", "{:,.0f}"),
                ("Cube cyc", "cube_cycles", "{:,.0f}"), ("MTE3 cyc", "mte3_cycles", "{:,.0f}"),
                ("Time us", "time_us", "{:.3f}"), ("Serial us", "time_us_serial", "{:.3f}"),
                ("Lower us", "lower_bound_us", "{:.3f}"), ("Bound", "bound", "{}")]
        body = [[fmt.format(r[key]) for _, key, fmt in cols] for r in rows[:row_limit]]
        t = self.totals()
        total = ["Total", str(t["kernels"])] + [
            fmt.format(t[key]) if key in t else "" for _, key, fmt in cols[2:]]
        header = [c[0] for c in cols]
        widths = [max(len(x) for x in col) for col in zip(header, *body, total)]

        def line(cells):
            first = cells[0].ljust(widths[0])
            return "  ".join([first] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])

        sep = "-" * len(line(header))
        return "\n".join([sep, line(header), sep, *map(line, body), sep, line(total), sep])

    def timeline(self, kernel=None, core: int = 0):
        """One kernel's pipeline per lane (``npu/report.py``): a figure, or text."""
        from .report import timeline

        return timeline(self, kernel, core)

    def roofline(self):
        """Every kernel against the roofline (``npu/report.py``): a figure, or text."""
        from .report import roofline

        return roofline(self)

    def __repr__(self) -> str:
        return f"<mtc.npu.profile: {len(self.kernels)} kernels>"

