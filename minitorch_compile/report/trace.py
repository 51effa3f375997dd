"""Compile trace events: a small log the compiler stages write while tracing is on
(``torch/_logging/_internal.py``'s ``trace_structured`` and ``TORCH_TRACE``; tlparse reads it).

Every stage reports what it made with one call, ``trace_event(kind, **payload)``; while no trace
is active that call returns at once (one list check), so instrumenting a stage costs nothing::

    dynamo   "dynamo_frame"     a finished cache entry (guards, graph, break, resume functions)
             "recompile"        the previous entries of a code object and the guard each failed
    aot      "aot_joint"        the joint graph and its partition (saved bytes), or the
                                forward-only graph when nothing needs a gradient
    inductor "inductor_graph"   a CompiledFxGraph: kernels, fusion decisions, generated code
    npu      "npu_kernel"       filled from ``mtc.npu.profile`` records (eager and compiled)
             "npu_compiled_graph"  a graph compiled for the npu, at its first run while tracing
                                (``inductor/npu_runtime.report_first_run``): ``name``, ``source``,
                                ``plans=[NPUKernelPlan…]`` (tiling) and ``kernels=[KernelRecord…]``

Each event keeps the stage's live objects (the report draws them) and the time it took.
Three ways to turn tracing on:

* ``with mtc.report.trace() as t: ...`` then ``t.write_html(path)``;
* ``python -m minitorch_compile report SCRIPT.py -o report.html``;
* ``MTC_TRACE_DIR=dir python script.py`` (as ``TORCH_TRACE``): at exit the process writes
  ``dir/report.html`` and ``dir/events.jsonl`` (one line per event: kind, time, summary).

Invariants: tracing never changes what a program computes, and an error while recording is
swallowed (a viewer must not break compilation).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

_active: list = []  # the Trace objects currently collecting (nestable)


@dataclass
class TraceEvent:
    kind: str
    time_s: float  # seconds since the trace began
    payload: dict = field(default_factory=dict)


def trace_event(kind: str, **payload) -> None:
    """Record one event in every active trace; a no-op when none is active."""
    if not _active:
        return
    for t in _active:
        t.events.append(TraceEvent(kind, time.perf_counter() - t.start, payload))


def tracing() -> bool:
    return bool(_active)


def record_recompile(code, previous: list, L: dict, entry) -> None:
    """Called by ``eval_frame`` on a recompile: which guard of each previous entry failed.

    Stored on the new entry as ``recompile_failures`` (``draw_guards`` highlights them) as
    ``[(entry index, guard index or None, message)]``."""
    from .guard_failure import first_failure

    try:
        failures = [(i, *first_failure(e.guard, L)) for i, e in enumerate(previous)]
    except Exception as e:  # noqa: BLE001 - a viewer never breaks compilation
        failures = [(None, None, f"(could not evaluate the guards: {e})")]
    entry.recompile_failures = failures
    trace_event("recompile", code=code, entry=entry, failures=failures)


class Trace:
    """The events of one traced block; ``write_html`` turns them into the report."""

    def __init__(self, title: str = "minitorch_compile compile report"):
        self.title = title
        self.events: list[TraceEvent] = []
        self.start = time.perf_counter()
        self._npu_profile = None
        self.wall_s = 0.0

    def __enter__(self) -> Trace:
        from ..dynamo import convert_frame
        from ..npu import profiler

        if _on_frame not in convert_frame.compile_listeners:
            convert_frame.compile_listeners.append(_on_frame)
        self._npu_profile = profiler.profile().__enter__()
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)
        self._npu_profile.__exit__(*exc)
        self.wall_s = time.perf_counter() - self.start

    @property
    def npu_kernels(self) -> list:
        return list(self._npu_profile.kernels) if self._npu_profile is not None else []

    def of_kind(self, kind: str) -> list[TraceEvent]:
        return [e for e in self.events if e.kind == kind]

    def html(self) -> str:
        from .html import render

        return render(self)

    def write_html(self, path: str | os.PathLike) -> str:
        """Write the self-contained report page; returns its path."""
        path = os.fspath(path)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.html())
        return path

    def write_jsonl(self, path: str | os.PathLike) -> str:
        import json

        with open(path, "w", encoding="utf-8") as f:
            for e in self.events:
                f.write(json.dumps({"kind": e.kind, "time_s": round(e.time_s, 6),
                                    "summary": _summary(e)}) + "\n")
        return os.fspath(path)


def _summary(e: TraceEvent) -> str:
    p = e.payload
    if e.kind == "dynamo_frame":
        return p["entry"].original_code.co_name
    if e.kind == "recompile":
        return p["code"].co_name
    if e.kind == "inductor_graph":
        return ", ".join(k["name"] for k in p["compiled"].kernels)
    return ""


def trace(title: str = "minitorch_compile compile report") -> Trace:
    """``with mtc.report.trace() as t:`` — collect the compile events of the block."""
    return Trace(title)


def _on_frame(entry) -> None:  # a convert_frame listener: every finished cache entry
    trace_event("dynamo_frame", entry=entry, time_s=entry.compile_time_s)


def install_from_env() -> None:
    """``MTC_TRACE_DIR``: trace the whole process, write the report at exit."""
    directory = os.environ.get("MTC_TRACE_DIR")
    if not directory:
        return
    import atexit

    t = trace(f"compile report of {os.path.basename(os.sys.argv[0] or 'python')}")
    t.__enter__()

    def finish():
        try:
            t.__exit__(None, None, None)
            os.makedirs(directory, exist_ok=True)
            t.write_jsonl(os.path.join(directory, "events.jsonl"))
            t.write_html(os.path.join(directory, "report.html"))
        except Exception as e:  # noqa: BLE001 - never fail the user's program at exit
            print(f"mtc: could not write the compile report: {e}", file=os.sys.stderr)

    atexit.register(finish)
