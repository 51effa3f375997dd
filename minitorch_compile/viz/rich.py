"""Rich notebook views: the ``_repr_html_`` of every compiler artifact, in one table.

Jupyter shows an object by calling its ``_repr_html_``; evaluating a cache entry, an
``explain()`` result, a graph, an AOT partition, an Inductor compiled graph or an npu profile in
a cell shows it as ``viz.html`` draws it (guards grouped and coloured, graph SVG, bytecode side by
side, kernels and fusion decisions, timeline).  The classes live in other stages' modules; this
table attaches the views to them at import (``install()``, called by ``mtc/__init__``), so the
stages stay free of HTML::

    class                       view
    dynamo CacheEntry           cache_entry_html
    dynamo ExplainOutput        explain_html
    fx GraphModule              graph_html
    aot Partition               partition_html
    inductor CompiledFxGraph    compiled_graph_html
    npu profile                 npu_profile_html (of its kernels)

A view that fails shows the object's plain text instead (a viewer never raises in a notebook).
"""

from __future__ import annotations

from . import html as H


def _views() -> dict:
    from ..aot.partitioners import Partition
    from ..dynamo.convert_frame import CacheEntry
    from ..dynamo.explain import ExplainOutput
    from ..fx import GraphModule
    from ..inductor.compile_fx import CompiledFxGraph
    from ..npu.profiler import profile

    return {
        CacheEntry: H.cache_entry_html,
        ExplainOutput: H.explain_html,
        GraphModule: H.graph_html,
        Partition: H.partition_html,
        CompiledFxGraph: H.compiled_graph_html,
        profile: lambda p: H.npu_profile_html(p.kernels),
    }


def _make_repr(view):
    def _repr_html_(self) -> str:
        try:
            return H.wrap(view(self))
        except Exception as e:  # noqa: BLE001 - fall back to text, never raise in a notebook
            return H.wrap(H.pre(f"{self!s}\n\n(html view failed: {type(e).__name__}: {e})"))
    return _repr_html_


def install() -> None:
    for cls, view in _views().items():
        if "_repr_html_" not in cls.__dict__:
            cls._repr_html_ = _make_repr(view)
