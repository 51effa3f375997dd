"""A picture of a compiled graph: the fx nodes, each fused kernel drawn as a cluster.

Every ``call_function`` node of the graph Inductor compiled is drawn inside the cluster of the
generated kernel that computes it (``fused_cos_mul_0``); extern kernels (``mm``) and fallbacks
stay outside, drawn as boxes in **orange**; inputs and outputs keep their usual styles.  A node
whose value is recomputed inside a second kernel (inlined there) is drawn in the first one and
labelled ``(also in …)``.
"""

from __future__ import annotations

from .graph_drawer import STYLES, Picture, node_kind, node_label

EXTERN = "#ffcc80"
_COLORS = ["#e3f2fd", "#e8f5e9", "#fff3e0", "#f3e5f5", "#e0f7fa", "#fce4ec"]


def draw_kernels(compiled, *, rankdir: str = "TB") -> Picture:
    """``compiled``: an ``inductor.CompiledFxGraph``."""
    graph = compiled.gm.graph
    home: dict = {}
    also: dict = {}
    for k in compiled.kernels:
        for name in k["origin_nodes"]:
            if name in home:
                also.setdefault(name, []).append(k["name"])
            else:
                home[name] = k["name"]
    pic = Picture(name="kernels", graph_attr=dict(rankdir=rankdir, fontname="Helvetica"),
                  node_attr=dict(fontname="Helvetica", fontsize="10"),
                  edge_attr=dict(fontname="Helvetica", fontsize="9"))

    def add(target, n):
        attrs = dict(STYLES.get(node_kind(n), STYLES["other"]))
        label = node_label(n)
        if n.name in also:
            label += f"\n(also in {', '.join(also[n.name])})"
        if n.op == "call_function" and n.name not in home:
            attrs.update(style="filled", fillcolor=EXTERN, shape="box")
        target.node(n.name, label, **attrs)

    for i, k in enumerate(compiled.kernels):
        with pic.subgraph(name=f"cluster_{k['name']}") as sub:
            sub.attr(label=k["name"], style="rounded,filled", color="#607d8b",
                     fillcolor=_COLORS[i % len(_COLORS)])
            for n in graph.nodes:
                if home.get(n.name) == k["name"]:
                    add(sub, n)
    for n in graph.nodes:
        if n.name not in home:
            add(pic, n)
    for n in graph.nodes:
        for u in n.users:
            pic.edge(n.name, u.name)
    return pic
