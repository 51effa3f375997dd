"""Where the time goes: a pipeline timeline per core and each kernel on the roofline
(``prof.timeline()``, ``prof.roofline()``; torch_npu's profiler shows the same in MindStudio
Insight's timeline and its roofline view).

Timeline: a core's tiles are scheduled stage after stage (``MTE2 → MTE1 → Cube → Vector →
MTE3``) by the timing model itself (``npu/launch.py``'s ``pipeline``).  With *d* ≥ 2 buffers per
queue, stage *s* of tile *i* starts when stage *s* of tile *i − 1*, stage *s − 1* of tile *i*
and (its buffer free again) stage *s + 1* of tile *i − d* are done — copies overlap compute;
with one buffer per queue, tile *i* starts after tile *i − 1* finished.  (Its length is the
core's time; the kernel's ``time_us`` is the slowest core's, or the shared bandwidth's when
that is longer.)
Each lane is a row of characters; the character is the tile's number (mod 10).

Roofline: a kernel's *arithmetic intensity* is its compute cycles (vector or cube, whichever is
larger, spread over the cores it ran on) per GM byte; the roof is ``min(peak, intensity ×
bandwidth)``, so its best time is its ``lower_bound_us``.  ``of roof`` is
``lower_bound_us / time_us``: how close the kernel came.  With matplotlib installed both draw a
figure; without it (the default install) they return the text.
"""

from __future__ import annotations

from .launch import pipeline
from .spec import get_spec

LANES = ("MTE2", "MTE1", "Cube", "Vector", "MTE3")


def schedule(core) -> list:
    """[(lane, tile number, start, end)] in cycles for one core's ``CoreTiming``: the timing
    model's own schedule (``launch.pipeline``), drawing at most 50 repeats of a tile.  Tiles
    after a ``SyncAll()`` start ``sync_all_cycles`` after this core's tiles before it (the
    kernel's time waits for the slowest core instead)."""
    b = len(core.tiles) if getattr(core, "barrier", None) is None else core.barrier
    spans, end = pipeline(core.tiles[:b], _depth(core), explicit=50,
                          latency=core.latency[:b])
    if b == len(core.tiles):
        return spans
    first = sum(t for t, _ in core.tiles[:b])
    start = end + get_spec().sync_all_cycles
    after = pipeline(core.tiles[b:], _depth(core), explicit=50,
                     latency=core.latency[b:])[0]
    return spans + [(lane, n + first, s + start, e + start) for lane, n, s, e in after]


def _depth(core) -> int:
    return getattr(core, "buffers", 2) if core.double_buffered else 1


def timeline_text(rec, core: int = 0, width: int = 72) -> str:
    c = rec.cores[min(core, len(rec.cores) - 1)]
    sched = schedule(c)
    end = max((e for *_, e in sched), default=0.0) or 1.0
    spec = get_spec()
    buffering = ("one buffer per queue" if not c.double_buffered else "double-buffered"
                 if _depth(c) == 2 else f"{_depth(c)} buffers per queue")
    head = (f"{rec.name}  core {c.index}  ({buffering}"
            f", {sum(t for t, _ in c.tiles)} tiles, {spec.cycles_to_us(end):.2f} us drawn; "
            f"kernel {rec.time_us:.2f} us, serial {rec.time_us_serial:.2f} us)")
    lines = [head]
    for lane in LANES:
        row = [" "] * width
        spans = [(n, s, e) for ln, n, s, e in sched if ln == lane]
        if not spans:
            continue
        for n, s, e in spans:
            a, b = int(s / end * width), max(int(s / end * width) + 1, int(e / end * width))
            for k in range(a, min(b, width)):
                row[k] = str(n % 10)
        lines.append(f"{lane:<7}|{''.join(row)}|")
    lines.append(f"{'':7}0{'cycles':>{width // 2}}{end:>{width - width // 2}.0f}")
    return "\n".join(lines)


def roofline_rows(kernels: list) -> list:
    spec = get_spec()
    rows = []
    for k in kernels:
        compute = max(k.vector_cycles, k.cube_cycles) / max(k.block_dim, 1)
        rows.append({"name": k.name, "kind": k.kind, "gm_bytes": k.gm_bytes,
                     "intensity": compute / max(k.gm_bytes, 1),
                     "time_us": k.time_us, "serial_us": k.time_us_serial,
                     "lower_us": k.lower_bound_us, "bound": k.bound,
                     "of_roof": k.lower_bound_us / k.time_us if k.time_us else 1.0,
                     "peak_ub": k.peak_ub_bytes, "min_bytes": k.min_gm_bytes})
    ridge = 1 / spec.gm_bytes_per_cycle  # cycles per byte where memory and compute meet
    for r in rows:
        r["ridge"] = ridge
    return rows


def roofline_text(kernels: list) -> str:
    rows = roofline_rows(kernels)
    cols = [("Kernel", "name", "{}"), ("Kind", "kind", "{}"), ("GM B", "gm_bytes", "{:,}"),
            ("x min B", None, None), ("cyc/B", "intensity", "{:.4f}"),
            ("Time us", "time_us", "{:.3f}"), ("Serial us", "serial_us", "{:.3f}"),
            ("Lower us", "lower_us", "{:.3f}"), ("of roof", "of_roof", "{:.2f}"),
            ("Bound", "bound", "{}"), ("Peak UB", "peak_ub", "{:,}")]
    body = []
    for r in rows:
        cells = []
        for _, key, fmt in cols:
            if key is None:
                cells.append(f"{r['gm_bytes'] / max(r['min_bytes'], 1):.2f}")
            else:
                cells.append(fmt.format(r[key]))
        body.append(cells)
    header = [c[0] for c in cols]
    widths = [max(len(x) for x in col) for col in zip(header, *body)]

    def line(cells):
        return "  ".join([cells[0].ljust(widths[0]), cells[1].ljust(widths[1])] +
                         [c.rjust(w) for c, w in zip(cells[2:], widths[2:])])
    sep = "-" * len(line(header))
    ridge = rows[0]["ridge"] if rows else 1 / get_spec().gm_bytes_per_cycle
    foot = (f"ridge point: {ridge:.4f} compute cycles per GM byte (below it a kernel is "
            "memory-bound)")
    return "\n".join([sep, line(header), sep, *map(line, body), sep, foot])


def _plt():
    try:
        import matplotlib.pyplot as plt  # optional dependency
    except ImportError:
        return None
    return plt


def timeline(prof, kernel=None, core: int = 0):
    """The pipeline of one kernel's core (default: the slowest kernel), lanes MTE2 / MTE1 /
    Cube / Vector / MTE3; a matplotlib figure where installed, else text."""
    if not prof.kernels:
        return "(no kernels)"
    if kernel is None:
        rec = max(prof.kernels, key=lambda k: k.time_us)
    elif isinstance(kernel, int):
        rec = prof.kernels[kernel]
    else:
        rec = next(k for k in prof.kernels if k.name == kernel)
    plt = _plt()
    if plt is None:
        return timeline_text(rec, core)
    c = rec.cores[min(core, len(rec.cores) - 1)]
    fig, ax = plt.subplots(figsize=(9, 2.5))
    for lane_no, lane in enumerate(LANES):
        for ln, n, s, e in schedule(c):
            if ln == lane:
                ax.broken_barh([(s, e - s)], (lane_no - 0.4, 0.8), color=f"C{n % 10}")
    ax.set_yticks(range(len(LANES)), LANES)
    ax.set_xlabel("cycles")
    ax.set_title(f"{rec.name}, core {c.index}")
    return fig


def roofline(prof):
    """Every kernel on the spec's roofline; a matplotlib figure where installed, else text."""
    plt = _plt()
    if plt is None:
        return roofline_text(prof.kernels)
    spec = get_spec()
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in roofline_rows(prof.kernels):
        ax.scatter(max(r["intensity"], 1e-5), r["lower_us"] / max(r["time_us"], 1e-12),
                   label=r["name"])
    ax.set_xscale("log")
    ax.axvline(1 / spec.gm_bytes_per_cycle, ls="--", color="grey")
    ax.set_xlabel("compute cycles per GM byte")
    ax.set_ylabel("fraction of the roof reached")
    ax.legend(fontsize=6)
    return fig
