"""Draw an fx graph with graphviz (``torch/fx/passes/graph_drawer.py``).

Each node is a box labelled with its name, its op and its value's ``dtype[shape]``.  Shapes
and colours say what kind of node it is — the categories of the op table:

========================= ==================================
kind                      drawn as
========================= ==================================
placeholder (input)       green ellipse
output                    grey double octagon
get_attr (parameter)      tan cylinder
pointwise                 white box
reduction                 blue inverted house
view                      dashed box
matmul                    orange 3-D box
creation / random         pink component
indexing                  purple hexagon
other calls               yellow box
========================= ==================================

Edges run from a value to each of its users.  Callers may pass ``highlight={node_name: color}``
and ``edge_style={(src, dst): attrs}`` (AOTAutograd uses them to show saved values and the cut).
"""

from __future__ import annotations

import shutil

import graphviz

from ..fx._codegen import type_str
from ..fx.graph import target_repr

STYLES = {
    "placeholder": dict(shape="ellipse", style="filled", fillcolor="#c8e6c9"),
    "output": dict(shape="doubleoctagon", style="filled", fillcolor="#e0e0e0"),
    "get_attr": dict(shape="cylinder", style="filled", fillcolor="#f5deb3"),
    "pointwise": dict(shape="box", style="filled", fillcolor="#ffffff"),
    "reduction": dict(shape="invhouse", style="filled", fillcolor="#bbdefb"),
    "view": dict(shape="box", style="dashed"),
    "matmul": dict(shape="box3d", style="filled", fillcolor="#ffcc80"),
    "creation": dict(shape="component", style="filled", fillcolor="#f8bbd0"),
    "random": dict(shape="component", style="filled", fillcolor="#f8bbd0"),
    "indexing": dict(shape="hexagon", style="filled", fillcolor="#e1bee7"),
    "composite": dict(shape="box", style="filled,rounded", fillcolor="#fff9c4"),
    "other": dict(shape="box", style="filled", fillcolor="#fff9c4"),
}

_HINT = ("(graphviz's `dot` program is not installed — showing the DOT source; "
         "`apt-get install graphviz` to see the picture)")


def dot_available() -> bool:
    return shutil.which("dot") is not None


class Picture(graphviz.Digraph):
    """A Digraph that shows as SVG where ``dot`` exists, and as DOT source where it does not."""

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        try:
            return super()._repr_mimebundle_(include, exclude, **kwargs)
        except (graphviz.ExecutableNotFound, graphviz.CalledProcessError, OSError):
            return {"text/plain": f"{_HINT}\n{self.source}"}

    def svg(self) -> str | None:
        """The SVG text, or None without ``dot``."""
        try:
            return self.pipe(format="svg").decode()
        except (graphviz.ExecutableNotFound, graphviz.CalledProcessError, OSError):
            return None

    def __repr__(self) -> str:
        return f"<mtc.viz.Picture of {self.source.count(' -> ')} edges; display it in Jupyter>"


def node_kind(n) -> str:
    if n.op in ("placeholder", "output", "get_attr"):
        return n.op
    if n.op == "call_function":
        op = n.target if hasattr(n.target, "opdef") else getattr(n.target, "_mtc_op", None)
        opdef = getattr(op, "opdef", None)
        if opdef is not None:
            return opdef.category
    return "other"


def node_label(n) -> str:
    val = n.meta.get("val", n.meta.get("example_value"))
    if isinstance(val, (tuple, list)):
        ts = ", ".join(filter(None, (type_str(v) for v in val)))
    else:
        ts = type_str(val) or ""
    if n.op == "call_function":
        what = target_repr(n.target).replace("mtc.ops.", "")
    elif n.op in ("call_method", "call_module", "get_attr"):
        what = f"{n.op.replace('call_', '')} {n.target}"
    else:
        what = n.op
    lines = [n.name] if n.op == "output" else [n.name, what]
    if ts:
        lines.append(ts)
    return "\n".join(lines)


def draw(graph_or_module, *, name: str = "graph", highlight: dict | None = None,
         edge_style: dict | None = None, rankdir: str = "TB") -> Picture:
    """A picture of an fx ``Graph`` or ``GraphModule``."""
    graph = getattr(graph_or_module, "graph", graph_or_module)
    highlight = highlight or {}
    edge_style = edge_style or {}
    pic = Picture(name=name, graph_attr=dict(rankdir=rankdir, fontname="Helvetica"),
                  node_attr=dict(fontname="Helvetica", fontsize="11"),
                  edge_attr=dict(fontname="Helvetica", fontsize="9"))
    for n in graph.nodes:
        attrs = dict(STYLES[node_kind(n)] if node_kind(n) in STYLES else STYLES["other"])
        if n.name in highlight:
            attrs.update(style="filled,bold", fillcolor=highlight[n.name], penwidth="2")
        pic.node(n.name, node_label(n), **attrs)
    for n in graph.nodes:
        for user in n.users:
            pic.edge(n.name, user.name, **edge_style.get((n.name, user.name), {}))
    return pic
