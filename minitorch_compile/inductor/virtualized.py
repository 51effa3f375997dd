"""``V.ops``: one name for whichever ops handler is installed (``torch/_inductor/virtualized.py``).

A loop body (``inner_fn``) is written once, as calls like ``ops.load("buf0", i)``,
``ops.cos(x)``, ``ops.reduction(...)``.  What those calls *do* depends on the handler installed
with ``V.set_ops_handler(h)``: the IR printer returns text, the dependency extractor records
reads, the CPU code generator emits numpy lines.  Swapping handlers is how one IR gets printed,
analysed and compiled without three copies of each op.

Handlers are stacked (a ``with`` block restores the previous one); the stack is per thread.
"""

from __future__ import annotations

import contextlib
import threading


class _State(threading.local):
    def __init__(self):
        self.handlers: list = []
        self.graph = None


_state = _State()


class _OpsProxy:
    """``ops.name(*args)`` calls ``name`` on the current handler."""

    def __getattr__(self, name: str):
        if not _state.handlers:
            raise RuntimeError(f"ops.{name}: no ops handler installed (use V.set_ops_handler)")
        return getattr(_state.handlers[-1], name)


ops = _OpsProxy()


class _Virtualized:
    ops = ops

    @staticmethod
    @contextlib.contextmanager
    def set_ops_handler(handler):
        _state.handlers.append(handler)
        try:
            yield handler
        finally:
            _state.handlers.pop()

    @staticmethod
    def get_ops_handler():
        """The handler ``ops.*`` calls go to now (a wrapper handler delegates to it)."""
        return _state.handlers[-1]

    @staticmethod
    @contextlib.contextmanager
    def set_graph_handler(graph):
        prev, _state.graph = _state.graph, graph
        try:
            yield graph
        finally:
            _state.graph = prev

    @property
    def graph(self):
        return _state.graph


V = _Virtualized()
