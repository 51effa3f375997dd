"""A picture of a partitioned joint graph: forward, backward, saved, recomputed, cut.

The joint graph is drawn with two clusters — the forward (nodes traced before
``autograd.grad``) and the backward — and

* saved values filled **gold** (the forward keeps them alive for the backward),
* recomputed nodes filled **light red** (the backward computes them again from saved values),
* tangents filled light blue,
* cut edges (data flowing from a saved value into a recomputation or the backward) drawn
  **red and dashed**: these are the edges of the minimum cut.
"""

from __future__ import annotations

from .graph_drawer import STYLES, Picture, node_kind, node_label

SAVED, RECOMPUTED, TANGENT = "#ffd54f", "#ef9a9a", "#b3e5fc"


def draw_partition(partition, *, rankdir: str = "TB") -> Picture:
    joint = partition.joint.graph
    saved = {n.name for n in partition.saved_values}
    recomputed = {n.name for n in partition.recomputed}
    fw_names = {n.name for n in partition.fw_module.graph.nodes}
    cut = set(partition.cut_edges)
    pic = Picture(name="partition", graph_attr=dict(rankdir=rankdir, fontname="Helvetica",
                                                    compound="true"),
                  node_attr=dict(fontname="Helvetica", fontsize="10"),
                  edge_attr=dict(fontname="Helvetica", fontsize="9"))
    clusters = {"forward": [], "backward": []}
    for n in joint.nodes:
        is_fw = n.meta.get("partitioner_tag") == "is_forward" or (
            n.op == "placeholder" and n.name.startswith("primals"))
        clusters["forward" if is_fw and n.op != "output" else "backward"].append(n)
    for title, nodes in clusters.items():
        with pic.subgraph(name=f"cluster_{title}") as sub:
            sub.attr(label=title, style="rounded", color="#9e9e9e")
            for n in nodes:
                attrs = dict(STYLES.get(node_kind(n), STYLES["other"]))
                label = node_label(n)
                if n.name in saved:
                    attrs.update(style="filled,bold", fillcolor=SAVED, penwidth="2")
                    label += "\n(saved)"
                elif n.name in recomputed:
                    attrs.update(style="filled", fillcolor=RECOMPUTED)
                    label += "\n(recomputed)"
                elif n.op == "placeholder" and n.name.startswith("tangents"):
                    attrs.update(style="filled", fillcolor=TANGENT)
                elif n.op == "call_function" and n.name not in fw_names and title == "forward":
                    attrs.update(style="filled,dashed", fillcolor="#f5f5f5")
                sub.node(n.name, label, **attrs)
    for n in joint.nodes:
        for u in n.users:
            if (n.name, u.name) in cut:
                pic.edge(n.name, u.name, color="red", style="dashed", penwidth="2",
                         label="cut")
            else:
                pic.edge(n.name, u.name)
    return pic
