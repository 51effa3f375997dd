"""Every program of the Dynamo test corpus, through Inductor.

``test_dynamo_programs.py`` and ``test_graph_break_programs.py`` check each program compiled
with ``backend="eager"`` against eager mode (values, gradients, graphs, guards).  Here the same
test functions run with ``dynamo_utils``'s default backend switched to ``"inductor"`` (and
float32 tolerances for fused reductions): every graph the corpus produces goes through
AOTAutograd and Inductor, and must still agree with eager mode.  A few programs use features
Inductor's pipeline hands back to eager mode (tensors on the NPU; mutations through views,
which AOTAutograd refuses) — those still pass, with a warning saying so.
"""

from __future__ import annotations

import inspect

import pytest

from . import dynamo_utils, test_dynamo_programs, test_graph_break_programs

CASES = [(m, name) for m in (test_dynamo_programs, test_graph_break_programs)
         for name, fn in vars(m).items()
         if name.startswith("test_") and callable(fn) and not inspect.signature(fn).parameters
         and not hasattr(fn, "hypothesis")]


@pytest.mark.parametrize("module,name", CASES,
                         ids=[f"{m.__name__.rsplit('.', 1)[-1]}::{n}" for m, n in CASES])
def test_program_through_inductor(monkeypatch, module, name):
    for fn in (dynamo_utils.check, dynamo_utils.compile_and_compare):
        sig = inspect.signature(fn)
        defaults = list(fn.__defaults__ or ())
        kw = dict(fn.__kwdefaults__ or {})
        names = [p.name for p in sig.parameters.values()
                 if p.default is not inspect.Parameter.empty
                 and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
        for table, keys in ((kw, list(kw)), (None, names)):
            for key, value in (("backend", "inductor"), ("rtol", 1e-4), ("atol", 1e-5)):
                if table is not None and key in table:
                    table[key] = value
                elif table is None and key in keys:
                    defaults[keys.index(key)] = value
        monkeypatch.setattr(fn, "__defaults__", tuple(defaults))
        monkeypatch.setattr(fn, "__kwdefaults__", kw or None)
    import warnings

    import minitorch_compile as mtc

    mtc.dynamo.reset()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            getattr(module, name)()
    finally:
        mtc.dynamo.reset()
