"""Dead-code elimination (``Graph.eliminate_dead_code`` in torch).

Walk the nodes backwards; a node nobody uses is erased unless it is *impure* — an input, the
output, a call of an in-place op (``Tensor(a!)`` in its schema), of a random op (removing a
sample would change every later random number) or of a module.  Walking
backwards lets one pass remove whole dead chains: erasing a node frees its inputs.
"""

from __future__ import annotations


def dead_code_elimination(gm_or_graph) -> bool:
    """Erase dead nodes; recompile a GraphModule; return whether anything changed."""
    graph = getattr(gm_or_graph, "graph", gm_or_graph)
    changed = graph.eliminate_dead_code()
    if changed and hasattr(gm_or_graph, "recompile"):
        gm_or_graph.recompile()
    return changed
