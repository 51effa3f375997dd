"""Common-subexpression elimination (``torch/fx/passes/dialect/common/cse_pass.py``).

Two ``call_function``/``call_method`` nodes with the same target and the same arguments (after
earlier replacements) compute the same value — if the target is *pure*.  Keep the first and
point the second's users at it.  Not merged: in-place ops, random ops (two ``rand`` calls are
two different samples), and anything marked impure.
"""

from __future__ import annotations

from ..node import map_aggregate


def _hashable(a):
    def leaf(x):
        if isinstance(x, (list, dict, slice)):
            return ("__unhashable__", repr(x))
        return x
    value = map_aggregate(a, leaf)
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _is_pure(n) -> bool:
    if n.op not in ("call_function", "call_method") or n.is_impure():
        return False
    opdef = getattr(n.target, "opdef", None)
    return not (opdef is not None and opdef.category == "random")


def _key(n):
    def norm(a):
        if isinstance(a, list):
            return ("list", tuple(norm(x) for x in a))
        if isinstance(a, tuple):
            return ("tuple", tuple(norm(x) for x in a))
        if isinstance(a, dict):
            return ("dict", tuple((k, norm(v)) for k, v in a.items()))
        return _hashable(a)
    return (n.op, n.target, norm(n.args), norm(n.kwargs))


def cse(gm_or_graph) -> int:
    """Merge duplicate pure computations; return how many nodes were removed."""
    graph = getattr(gm_or_graph, "graph", gm_or_graph)
    seen: dict = {}
    removed = 0
    for n in list(graph.nodes):
        if not _is_pure(n):
            continue
        k = _key(n)
        first = seen.get(k)
        if first is None:
            seen[k] = n
            continue
        n.replace_all_uses_with(first)
        graph.erase_node(n)
        removed += 1
    if removed and hasattr(gm_or_graph, "recompile"):
        gm_or_graph.recompile()
    return removed
