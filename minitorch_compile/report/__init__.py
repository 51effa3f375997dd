"""``mtc.report``: compile trace events → one self-contained HTML page (tlparse, ``TORCH_TRACE``).

``with mtc.report.trace() as t: …`` collects what every stage made (``trace.py``);
``t.write_html("report.html")`` renders it (``html.py``); ``python -m minitorch_compile report
SCRIPT.py`` and ``MTC_TRACE_DIR`` do both for a whole script.  See ``docs/report.md``.
"""

from .trace import Trace, TraceEvent, install_from_env, trace, trace_event, tracing

__all__ = ["trace", "trace_event", "tracing", "install_from_env", "Trace", "TraceEvent"]
