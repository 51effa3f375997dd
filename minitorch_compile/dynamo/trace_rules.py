"""Which library functions the tracer inlines, skips, or leaves to a frame of their own
(``torch/_dynamo/trace_rules.py``).

The library's own Python code in ``optim`` and ``nn.utils`` is traced like user code (torch
inlines ``torch.optim`` the same way), with two exceptions taken from torch:

* **force-skipped files** — torch's ``FORCE_SKIP_FILES`` is ``torch/optim/lr_scheduler.py``:
  a call to any function defined there (``scheduler.step()``, and the wrapper a scheduler
  installs as ``optimizer.step``, see below) is never traced.  The caller graph-breaks *at the
  call* and the call runs eagerly — but torch's frame hook stays on while it runs, so a frame
  it calls (the real ``Optimizer.step``) is still compiled as a frame of its own.
  ``skipped_frame`` does the hook's job here: it runs the skipped function's code with its
  callees routed through the JIT (``eager_frame.calls_through_jit``).
* **step functions compiled as frames** — ``Optimizer.step`` is wrapped by ``_use_grad``,
  whose ``graph_break()`` calls sit inside ``try``: torch skips that wrapper's frame and
  compiles the step it calls as a frame of its own (``frame_of_its_own``).

So ``opt.step(); sched.step()`` with a scheduler attached gives the caller a graph break at
``opt.step()`` (the scheduler's wrapper, skipped), a graph for the step's own frame, and no
graph for ``sched.step()`` (skipped: its ``group["lr"]`` stores run eagerly) — torch 2.13's
two graphs over four calls of StepLR: the constant lr, then the lr as a graph input once it
changed (automatic dynamic).
"""

from __future__ import annotations

import os
import types

_OPTIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "optim")

# torch's FORCE_SKIP_FILES: the scheduler modules (ours are split over two files)
FORCE_SKIP_FILES = frozenset(os.path.join(_OPTIM_DIR, name)
                             for name in ("lr_scheduler.py", "lr_scheduler_more.py"))


_SKIPPED_CODE: dict = {}  # (code, id(backend)) -> (backend, the code with callees through the JIT)


def _code_of(fn) -> types.CodeType | None:
    """The code of a Python function or bound method (None for anything else)."""
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    return fn.__code__ if isinstance(fn, types.FunctionType) else None


def is_force_skipped(fn_or_code) -> bool:
    """Is this function (or code object) defined in a force-skipped file?"""
    code = fn_or_code if isinstance(fn_or_code, types.CodeType) else _code_of(fn_or_code)
    return code is not None and os.path.abspath(code.co_filename) in FORCE_SKIP_FILES


def frame_of_its_own(fn) -> bool:
    """A library function torch's hook compiles as a frame when a skipped frame calls it: an
    optimizer's ``step`` (the function ``_use_grad`` wraps)."""
    code = _code_of(fn)
    return (isinstance(fn, types.FunctionType) and code is not None and fn.__name__ == "step"
            and os.path.dirname(os.path.abspath(code.co_filename)) == _OPTIM_DIR
            and not is_force_skipped(code))


def skipped_frame(fn, backend):
    """``fn`` (a force-skipped function or bound method) run eagerly with its callees routed
    through the JIT — what torch's frame hook does for a skipped frame."""
    from .eager_frame import calls_through_jit

    func = getattr(fn, "__func__", fn)
    key = (func.__code__, id(backend))
    hit = _SKIPPED_CODE.get(key)
    if hit is None or hit[0] is not backend:  # (rewritten once per code and backend)
        hit = _SKIPPED_CODE[key] = (backend, calls_through_jit(func.__code__, backend))
    code = hit[1]
    if code is None:
        return fn
    new = types.FunctionType(code, func.__globals__, func.__name__, func.__defaults__,
                             func.__closure__)
    new.__kwdefaults__ = func.__kwdefaults__
    new.__dict__.update(func.__dict__)
    return types.MethodType(new, fn.__self__) if isinstance(fn, types.MethodType) else new
