"""Functionalization: make a traced graph free of mutation
(``torch/_subclasses/functional_tensor.py``).

Compilers reason about values, not memory.  This pass rewrites each in-place op into its
out-of-place twin and renames the mutated value from then on::

    add_ = mtc.ops.aten.add_.default(x, 1)      ->    add = mtc.ops.aten.add.default(x, 1)
    mul  = mtc.ops.aten.mul.default(x, 2)       ->    mul = mtc.ops.aten.mul.default(add, 2)

A mutated *graph input* keeps its final value as an extra graph output; the runtime copies it
back into the caller's tensor after the graph ran, as AOTAutograd does.

Limit (stated, not hidden): a mutation of a value that has *views* used after the mutation
(``y = x.view(-1); x.add_(1); use(y)``) would need torch's view replay; such graphs raise
``NotImplementedError`` instead of computing something wrong.  (``alias``/``detach`` nodes
made by autograd snapshot the pre-mutation value and are fine.)
"""

from __future__ import annotations

from ..fx.node import map_arg

_SNAPSHOT_VIEWS = {"alias", "detach"}


def _is_mutation(n) -> bool:
    schema = getattr(n.target, "schema", None)
    return n.op == "call_function" and schema is not None and schema.is_mutable


def _category(n):
    opdef = getattr(n.target, "opdef", None) if n.op == "call_function" else None
    return opdef.category if opdef is not None else None


def functionalize(gm) -> list[tuple[int, int]]:
    """Rewrite ``gm`` in place; return ``[(input index, output index)]`` of mutated inputs."""
    from .. import ops

    graph = gm.graph
    nodes = list(graph.nodes)
    if not any(_is_mutation(n) for n in nodes):
        return []
    order = {n: i for i, n in enumerate(nodes)}
    latest: dict = {}

    def resolve(x):
        while x in latest:
            x = latest[x]
        return x

    aten = ops.aten
    for n in nodes:
        if n.op == "output":
            continue
        n.args = map_arg(n.args, resolve)
        n.kwargs = map_arg(n.kwargs, resolve)
        if not _is_mutation(n):
            continue
        target = n.args[0]
        _check_no_live_views(target, n, order)
        with graph.inserting_before(n):
            if n.target.name == "copy_":
                src = n.args[1]
                shape = tuple(target.meta["val"].shape)
                new = graph.call_function(aten.expand.default, (src, shape))
                new.meta["val"] = n.meta.get("val")
                new = graph.call_function(aten._to_copy.default, (new,),
                                          {"dtype": target.meta["val"].dtype})
            else:
                functional = n.target.opdef.functional
                new = graph.call_function(functional, n.args, n.kwargs)
        new.meta = dict(n.meta)
        n.replace_all_uses_with(new)
        graph.erase_node(n)
        latest[target] = new

    out = graph.output_node()
    out.args = map_arg(out.args, resolve)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    mutated = []
    flat = list(out.args[0]) if isinstance(out.args[0], (list, tuple)) else [out.args[0]]
    for i, p in enumerate(placeholders):
        if p in latest:
            mutated.append((i, len(flat)))
            flat.append(resolve(p))
    out.args = (type(out.args[0])(flat) if isinstance(out.args[0], (list, tuple)) else
                tuple(flat),)
    graph.lint()
    gm.recompile()
    return mutated


def _check_no_live_views(target, mutation, order) -> None:
    """Refuse mutations that views created earlier would observe afterwards."""
    for user in target.users:
        if _category(user) != "view" or user.target.name in _SNAPSHOT_VIEWS:
            continue
        if order.get(user, 0) < order[mutation] and any(
                order.get(u, 1 << 30) > order[mutation] for u in user.users):
            raise NotImplementedError(
                f"functionalization: {mutation.name} mutates {target.name}, whose view "
                f"{user.name} is used after the mutation; mutations through aliases are not "
                "supported yet")
    if _category(target) == "view" and target.target.name not in _SNAPSHOT_VIEWS:
        raise NotImplementedError(
            f"functionalization: {mutation.name} mutates {target.name}, a view of another "
            "tensor; mutations through views are not supported yet")
