"""``mtc._dynamo.config`` (``torch/_dynamo/config.py``): the knobs torch code sets.

=========================  =======  ===========================================================
option                     default  effect
=========================  =======  ===========================================================
cache_size_limit           8        entries per code object before it runs eagerly for good
automatic_dynamic_shapes   True     a size (or int argument) that changed between compiles
                                    becomes a symbol; off: only ``mark_dynamic`` / ``dynamic=True``
suppress_errors            True     an internal compiler error falls back to eager with a
                                    warning; off: it raises (torch's default is off — mtc keeps
                                    the learner's program running)
capture_scalar_outputs     False    ``.item()`` breaks the graph; on: it stays in the graph and
                                    gives an unbacked symbol (``zuf0``/``u0``), as torch's
                                    (branching on such a symbol still breaks)
trace_numpy                True     ``t.numpy()`` and numpy calls on its result are traced as
                                    tensor ops (``variables/numpy.py``); off: ``.numpy()``
                                    breaks the graph
=========================  =======  ===========================================================

Setting an option this module does not know raises ``AttributeError`` (a typo must not be
silently ignored); ``patch(**options)`` sets some for a ``with`` block.
"""

from __future__ import annotations

import contextlib
import sys
import types

cache_size_limit = 8
automatic_dynamic_shapes = True
suppress_errors = True
capture_scalar_outputs = False
trace_numpy = True

_OPTIONS = ("cache_size_limit", "automatic_dynamic_shapes", "suppress_errors",
            "capture_scalar_outputs", "trace_numpy")


@contextlib.contextmanager
def patch(**options):
    mod = sys.modules[__name__]
    saved = {k: getattr(mod, k) for k in options}
    try:
        for k, v in options.items():
            setattr(mod, k, v)
        yield
    finally:
        for k, v in saved.items():
            setattr(mod, k, v)


class _ConfigModule(types.ModuleType):
    def __setattr__(self, name, value):
        if not name.startswith("_") and name not in _OPTIONS:
            raise AttributeError(f"mtc._dynamo.config has no option {name!r} (options: "
                                 f"{', '.join(_OPTIONS)})")
        if name == "cache_size_limit" and (not isinstance(value, int) or value < 1):
            raise ValueError("cache_size_limit must be a positive int")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ConfigModule
