"""Logs switched on by name: ``mtc.set_logs(graph_code=True)`` or
``MTC_LOGS=graph_code,guards,bytecode,recompiles,graph_breaks,fusion,output_code``
(``torch/_logging``).

Each artifact has its own ``logging`` logger (``minitorch_compile.graph_code`` ...); turning one
on attaches a stderr handler at INFO level, so messages print as the compiler works.
"""

from __future__ import annotations

import logging
import os
import sys

ARTIFACTS = ("graph_code", "guards", "bytecode", "recompiles", "graph_breaks", "fusion",
             "output_code")


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


_from_env()
