"""Logs switched on by name: ``mtc.set_logs(graph_code=True)`` or
``MTC_LOGS=graph_code,guards,bytecode,recompiles,graph_breaks,fusion,output_code,dynamic``
(``torch/_logging``).

Each artifact has its own ``logging`` logger (``minitorch_compile.graph_code`` ...); turning one
on attaches a stderr handler at INFO level, so messages print as the compiler works.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ARTIFACTS = ("graph_code", "guards", "bytecode", "recompiles", "graph_breaks", "fusion",
             "output_code", "dynamic")


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is *now* (a notebook's, pytest's capsys), not the one
    at import time."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


_handler = _StderrHandler()
_handler.setFormatter(logging.Formatter("[mtc %(name)s] %(message)s"))


def get_logger(artifact: str) -> logging.Logger:
    return logging.getLogger(f"minitorch_compile.{artifact}")


def set_logs(**artifacts: bool) -> None:
    """``set_logs(graph_code=True, guards=True)``; unnamed artifacts are switched off."""
    unknown = set(artifacts) - set(ARTIFACTS)
    if unknown:
        raise ValueError(f"unknown log artifacts {sorted(unknown)}; known: {list(ARTIFACTS)}")
    for name in ARTIFACTS:
        logger = get_logger(name)
        on = bool(artifacts.get(name, False))
        logger.setLevel(logging.INFO if on else logging.WARNING)
        logger.propagate = False
        if on and _handler not in logger.handlers:
            logger.addHandler(_handler)
        elif not on and _handler in logger.handlers:
            logger.removeHandler(_handler)


def _from_env() -> None:
    spec = os.environ.get("MTC_LOGS", "")
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if names:
        set_logs(**{n: True for n in names if n in ARTIFACTS})


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by this module's caller point at the
    user's line: the first frame outside the package (torch's compiler warnings do the same
    with ``skip_file_prefixes``, which Python 3.11 lacks).  Transformed code and resume
    functions keep the user's file name, so they count as the user's."""
    frame, level = sys._getframe(2), 2  # the caller of our caller is stacklevel=2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep):
        frame, level = frame.f_back, level + 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` pointing at the first frame outside the package."""
    warnings.warn(message, category, stacklevel=user_stacklevel())


_from_env()
