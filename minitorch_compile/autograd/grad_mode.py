"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled`` (``torch/autograd/grad_mode.py``).

Grad mode is one flag in the dispatcher's thread-local state: when it is off, the Autograd key
is skipped and ops record nothing.  Each class works as a context manager and as a decorator.
"""

from __future__ import annotations

import functools

from .._dispatch import state


def is_grad_enabled() -> bool:
    return state.grad_enabled


class _GradModeContext:
    _enabled: bool

    def __enter__(self):
        self._prev = state.grad_enabled
        state.grad_enabled = self._enabled
        return self

    def __exit__(self, *exc):
        state.grad_enabled = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)() if not isinstance(self, set_grad_enabled) else \
                    set_grad_enabled(self._enabled):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeContext):
    """Ops inside record no autograd history."""

    _enabled = False


class enable_grad(_GradModeContext):
    """Switch recording back on inside a ``no_grad`` region."""

    _enabled = True


class inference_mode(no_grad):
    """``no_grad``, plus: every tensor made inside is an *inference tensor*
    (``t.is_inference()``), which may not be saved for backward, nor written in place, once
    inference mode is off — torch's guarantee that code outside never depends on tensors that
    skipped version counting.  (Compiled code traces ``inference_mode`` as ``no_grad``: its
    outputs are not marked.)"""

    def __init__(self, mode: bool = True):
        self._enabled = not mode
        self._inference = bool(mode)

    def __enter__(self):
        self._prev_inference = state.inference_mode
        state.inference_mode = self._inference
        return super().__enter__()

    def __exit__(self, *exc):
        state.inference_mode = self._prev_inference
        super().__exit__(*exc)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self._inference):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled() -> bool:
    return state.inference_mode


class set_grad_enabled(_GradModeContext):
    """``set_grad_enabled(False)`` switches grad mode immediately and as a context manager."""

    def __init__(self, mode: bool):
        self._enabled = bool(mode)
        self._prev = state.grad_enabled
        state.grad_enabled = self._enabled

    def __enter__(self):
        return None  # (torch's: `with set_grad_enabled(False) as g` binds None)


def _set_grad_enabled(mode: bool) -> None:
    """Switch grad mode now: what a captured graph calls at a ``with no_grad():`` boundary."""
    state.grad_enabled = bool(mode)


_set_grad_enabled._mtc_side_effect = True  # dead-code elimination must keep these calls


# ------------------------------------------------------------------ anomaly mode


_anomaly = [False]


def is_anomaly_enabled() -> bool:
    return _anomaly[0]


class set_detect_anomaly:
    """``set_detect_anomaly(mode)``: switch anomaly detection now and as a context manager.
    Only the flag is kept: the engine already names the forward op of a failing backward in
    its errors, and it records no forward stack traces."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, _anomaly[0] = _anomaly[0], bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        _anomaly[0] = self.prev


class detect_anomaly(set_detect_anomaly):
    """``with detect_anomaly():`` — ``set_detect_anomaly(True)`` for the block."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev, _anomaly[0] = _anomaly[0], True
        return self
