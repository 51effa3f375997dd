"""The tour's last step (``python -m minitorch_compile tour --step report``): the tutorial's
program — ``f(x, mod)`` with modules ``A`` and ``B``, ``function(inputs)`` with its graph break
and ``cos(cos(x))`` trained one step — compiled with the default backend inside
``mtc.report.trace()``, written as one HTML page (``docs/report.md`` says how to read it).
The page goes to the system's temporary directory; the step prints where."""

from __future__ import annotations

import os
import tempfile

import minitorch_compile as mtc


def step_report() -> None:
    from ._tour import _title
    from ._tour_dynamo import A, B, f, function
    from ._tour_inductor import two_cosines

    _title("9. The compile report: everything above, in one HTML page")
    mtc.dynamo.reset()
    mtc.manual_seed(0)
    with mtc.report.trace("compile report of the torch.compile tutorial's program") as t:
        jit_f = mtc.compile(f.fn)  # the tutorial's f, now through AOT and Inductor
        x = mtc.randn(10)
        jit_f(x, A())
        jit_f(x, B())  # recompile: the guard on the module fails
        jit_f(mtc.randn(8), B())  # recompile: the size changed, so it becomes dynamic
        mtc.compile(function.fn)({"x": mtc.randn(10), "y": mtc.randn(10)})  # a graph break
        w = mtc.randn(1000, requires_grad=True)
        mtc.compile(two_cosines)(w).sum().backward()
        two_cosines(w.detach().to("npu"))  # eager kernels on the simulated npu
    mtc.dynamo.reset()
    path = t.write_html(os.path.join(tempfile.gettempdir(), "minitorch_compile_report.html"))
    kinds = [e.kind for e in t.events]
    print(f"{kinds.count('dynamo_frame')} compiled frames, {kinds.count('recompile')} "
          f"recompiles, {kinds.count('inductor_graph')} Inductor graphs, "
          f"{len(t.npu_kernels)} npu kernels")
    print(f"compile report written to {path}")
    print("open it in a browser; `python -m minitorch_compile report SCRIPT.py` writes one "
          "for any script")
