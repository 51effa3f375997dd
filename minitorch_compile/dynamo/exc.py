"""Dynamo's exceptions (``torch/_dynamo/exc.py``).

``Unsupported`` means "this Python cannot be captured into a graph": the frame breaks the graph
there (or, where no break is possible, runs eagerly), or — with ``fullgraph=True`` — the error
reaches the user, naming the source line.  Anything else raised inside the compiler is an
internal error: it falls back to eager with a warning, because the compiler must never change
what a program computes.
"""

from __future__ import annotations


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """Code the tracer cannot capture. ``.reason`` says why; ``.user_line`` says where."""

    def __init__(self, reason: str, *, user_line: str | None = None, instruction=None):
        self.reason = reason
        self.user_line = user_line
        self.instruction = instruction
        super().__init__(self._message())

    def _message(self) -> str:
        msg = self.reason
        if self.user_line:
            msg += f"\n  from user code:\n    {self.user_line}"
        return msg

    def add_location(self, user_line: str, instruction=None) -> None:
        if self.user_line is None:
            self.user_line = user_line
            self.instruction = instruction
            self.args = (self._message(),)


class NotConstant(Unsupported, NotImplementedError):
    """``as_python_constant()`` of a value only known at run time (``range(tensor)``): code
    that asks may catch it as ``NotImplementedError``; uncaught, it is ``Unsupported``."""


class InternalTorchDynamoError(TorchDynamoException):
    pass


class BackendCompilerFailed(TorchDynamoException):
    """The backend could not compile a graph under ``fullgraph=True`` (without it, that graph
    runs eagerly with a ``CompilerFallbackWarning``).  ``inner_exception`` is the cause."""

    def __init__(self, backend_name: str, inner_exception: BaseException):
        self.backend_name = backend_name
        self.inner_exception = inner_exception
        super().__init__(f"backend={backend_name!r} raised:\n{type(inner_exception).__name__}: "
                         f"{inner_exception}")


class RestartAnalysis(TorchDynamoException):
    """A graph break happened inside an inlined call: trace the frame again from the start,
    and this time break *at the call* (``ip`` in the root frame) instead of inlining it."""

    def __init__(self, ip: int, cause: Unsupported):
        self.ip = ip
        self.cause = cause
        super().__init__(f"restart: break at instruction {ip} ({cause.reason})")


class TensorifyScalarRestartAnalysis(TorchDynamoException):
    """A float graph input no tensor op reads: trace the frame again with the floats named in
    ``sources`` specialized to constants (torch's exception of the same name)."""

    def __init__(self, sources: set):
        self.sources = sources
        super().__init__(f"restart: specialize the floats {sorted(sources)}")


class StepUnsupported(Unsupported):
    """torch's ``step_graph_break``: a break nothing can resume from (inside a ``try`` block,
    a user context manager's ``with`` block, an inlined 3.12+ set comprehension, an opcode
    without a handler) falls back to the *last checkpoint* — the latest instruction reached
    with an empty stack, outside any ``try``, after at least two ops — and the second trace
    stops there: the graph so far is compiled and the rest of the frame runs eagerly."""

    def __init__(self, cause: Unsupported):
        self.cause = cause
        super().__init__(f"compiled up to the last resumable point, the rest of the frame runs "
                         f"eagerly: {cause.reason}", user_line=cause.user_line)


class RecompileLimitExceeded(TorchDynamoException):
    pass


class CompilerFallbackWarning(UserWarning):
    """A frame the compiler meant to compile runs eagerly instead — an internal compiler error,
    a backend that raised, or the recompile limit.  The results stay right (that is the point of
    falling back), but nothing was compiled: the test suite makes this warning an error
    (``filterwarnings`` in pyproject.toml), so a test cannot pass on the eager fallback."""


def unimplemented(reason: str):
    raise Unsupported(reason)


class ObservedException(Unsupported):
    """An exception the *user's* code raised while being traced (a ``KeyError`` from a dict
    lookup, a ``raise`` statement) — torch's ``ObservedException``.  The tracer looks for a
    handler in the exception table of each frame it unwinds through (``exception_handling``);
    if the root frame does not catch it either, the frame runs eagerly (torch skips it): the
    exception is then raised by the real code, with no graph compiled for it."""

    def __init__(self, exc_vt):
        self.exc_vt = exc_vt
        super().__init__(f"{exc_vt.exc_type.__name__} raised inside traced code and not caught "
                         "there (the frame runs eagerly, as torch skips it)")


def raise_observed(exc_type: type, args: list | None = None):
    from .exception_handling import ExceptionVariable

    raise ObservedException(ExceptionVariable(exc_type, list(args or [])))


class SkipFrame(Unsupported):
    """Code torch 2.13 does not trace at all: the frame runs eagerly from now on, whatever its
    inputs (torch's ``SkipFrame``).  Raised when the frame reads a global that it created
    itself while being traced (``global g; g = ...; use(g)``): torch looks the name up in the
    frame's globals, where it does not exist yet."""
