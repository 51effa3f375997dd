"""Functionalization: make a traced graph free of mutation
(``torch/_subclasses/functional_tensor.py``).

Compilers reason about values, not memory.  This pass rewrites each in-place op into its
out-of-place twin and renames the mutated value from then on::

    add_ = mtc.ops.aten.add_.default(x, 1)      ->    add = mtc.ops.aten.add.default(x, 1)
    mul  = mtc.ops.aten.mul.default(x, 2)       ->    mul = mtc.ops.aten.mul.default(add, 2)

Views make it harder: memory written through one name is read through others.  Every view
node is described by its *base* (a node that is not a view) and its *view chain* — the view
ops that make it from the base (``ops/view_replay.py``).  Each base has a version, bumped by
every write to it or to any of its views.  The walk, in graph order::

    a write  op_(t, ...)      new = op(t, ...)                      (the functional twin)
                              t a base:  latest[t] = new
                              t a view of b with chain c:
                                         latest[b] = scatter(latest[b], new, c)
                              version[b] += 1
    a read of a base b        -> latest[b]
    a read of a view v of b,  -> replay(latest[b], chain(v)) emitted just before the reader
      made before b's last       (torch's view regeneration), cached until b changes again
      write

The value of an in-place op is its ``self``, so its users read ``t`` (and so get the new
value).  A mutated *graph input* keeps its final value as an extra graph output; the runtime
copies it back into the caller's tensor after the graph ran, as AOTAutograd does.
"""

from __future__ import annotations

from ..dynamo.symbolic_shapes import is_symbolic
from ..fx.node import Node, map_arg
from ..ops.view_replay import replay, scatter


def _is_mutation(n) -> bool:
    schema = getattr(n.target, "schema", None)
    return n.op == "call_function" and schema is not None and schema.is_mutable


def _is_view(n) -> bool:
    opdef = getattr(n.target, "opdef", None) if n.op == "call_function" else None
    return opdef is not None and opdef.category == "view"


def _shape_text(node) -> list:
    val = node.meta.get("val")
    return None if val is None else [str(d) for d in val.shape]


class _Walk:
    """The state of one functionalization walk over ``graph``."""

    def __init__(self, graph):
        self.graph = graph
        self.view_of: dict = {}  # view node -> (base node, chain, base version when made)
        self.latest: dict = {}  # base node -> node holding its current value
        self.version: dict = {}  # base node -> number of writes so far
        self.fresh: dict = {}  # view node -> (base version, node of its current value)
        self.tag = None  # partitioner tag of the node being rewritten

    def emit(self, op, *args, **kwargs):
        """A new ``call_function`` node (at the insertion point) with a fake ``val``."""
        return self.emit_bound(op, *op.bind(*args, **kwargs))

    def emit_bound(self, op, *bound):
        """``emit`` from a full positional tuple (a view chain's step, which holds keyword-only
        arguments such as ``expand``'s ``implicit`` by position)."""
        from ..autograd.grad_mode import no_grad

        a, kw = op.split_args(bound)
        node = self.graph.call_function(op, a, kw)
        vals = map_arg(a, lambda x: x.meta.get("val"))
        kvals = map_arg(kw, lambda x: x.meta.get("val"))
        with no_grad():
            node.meta["val"] = op(*vals, **kvals)
        if self.tag is not None:
            node.meta["partitioner_tag"] = self.tag
        return node

    @staticmethod
    def shape_of(node):
        return list(node.meta["val"].shape)

    def _sizes_of(self, node) -> list:
        """``node``'s sizes as graph arguments: a symbolic size is a ``sym_size`` node read
        from ``node`` at run time (never the symbol itself, which would be baked into the
        graph as the first trace's value)."""
        from ..fx.proxy_tensor import sym_size

        sizes = []
        for d, size in enumerate(self.shape_of(node)):
            if is_symbolic(size):
                size_node = self.graph.call_function(sym_size, (node, d))
                size_node.meta["val"] = size
                if self.tag is not None:
                    size_node.meta["partitioner_tag"] = self.tag
                size = size_node
            sizes.append(size)
        return sizes

    def record_view(self, n) -> None:
        parent = n.args[0]
        step = (n.target, tuple(n.target.bind(*n.args, **n.kwargs)[1:]))
        if parent in self.view_of:
            base, chain, _ = self.view_of[parent]
            chain = chain + (step,)
        else:
            base, chain = parent, (step,)
        self.view_of[n] = (base, chain, self.version.get(base, 0))

    def current(self, x):
        """The node holding ``x``'s value now (see the module docstring)."""
        if x in self.view_of:
            base, chain, made = self.view_of[x]
            now = self.version.get(base, 0)
            if now == made:
                return x
            hit = self.fresh.get(x)
            if hit is not None and hit[0] == now:
                return hit[1]
            value = replay(self.latest.get(base, base), chain, self.emit_bound)
            self.fresh[x] = (now, value)
            return value
        return self.latest.get(x, x)

    def write(self, target, new) -> None:
        if target in self.view_of:
            base, chain, _ = self.view_of[target]
            # sizes as graph arguments (``view(src, [sym_size(x, 0), 4])``), never the symbols
            self.latest[base] = scatter(self.current(base), new, chain, self.emit,
                                        self._sizes_of)
        else:
            base = target
            self.latest[base] = new
        self.version[base] = self.version.get(base, 0) + 1
        if target in self.view_of:
            self.fresh[target] = (self.version[base], new)

    def functional_twin(self, n):
        """The out-of-place op computing what ``n`` writes (``copy_``: an expand + cast)."""
        from .. import ops

        if n.target.name == "copy_":
            dst, src = n.args[0], n.args[1]
            new = src
            if not isinstance(src, Node) or _shape_text(src) != _shape_text(dst):
                new = self.emit(ops.aten.expand.default, src, self._sizes_of(dst))
            return self.emit(ops.aten._to_copy.default, new, dtype=dst.meta["val"].dtype)
        functional = n.target.opdef.functional
        new = self.graph.call_function(functional, n.args, n.kwargs)
        new.meta = dict(n.meta)
        # an in-place op keeps its self's dtype (``f32.add_(f64)`` is float32); the twin
        # promotes (float64), so its value is cast back, as the copy_ of torch's
        # functionalization does
        want = getattr(n.meta.get("val"), "dtype", None)
        got = self._functional_val(functional, n)
        if want is not None and got is not None and got.dtype is not want:
            new.meta["val"] = got
            return self.emit(ops.aten._to_copy.default, new, dtype=want)
        return new

    @staticmethod
    def _functional_val(functional, n):
        """The fake value ``functional`` gives on ``n``'s fake arguments (None: unknown)."""
        from .._tensor import Tensor
        from ..autograd.grad_mode import no_grad

        vals = map_arg(n.args, lambda x: x.meta.get("val"))
        kvals = map_arg(n.kwargs, lambda x: x.meta.get("val"))
        try:
            with no_grad():
                out = functional(*vals, **kvals)
        except Exception:  # noqa: BLE001 - the meta rule refuses: keep the twin as it is
            return None
        return out if isinstance(out, Tensor) else None


def functionalize(gm) -> list[tuple[int, int]]:
    """Rewrite ``gm`` in place; return ``[(input index, output index)]`` of mutated inputs."""
    graph = gm.graph
    nodes = list(graph.nodes)
    if not any(_is_mutation(n) for n in nodes):
        return []
    walk = _Walk(graph)
    for n in nodes:
        if n.op == "output":
            break
        walk.tag = n.meta.get("partitioner_tag")
        target = n.args[0] if _is_mutation(n) else None
        if _is_view(n):  # from its original parent, before the parent is renamed
            walk.record_view(n)
        with graph.inserting_before(n):
            n.args = map_arg(n.args, walk.current)
            n.kwargs = map_arg(n.kwargs, walk.current)
            if target is None:
                continue
            new = walk.functional_twin(n)
            walk.write(target, new)
        n.replace_all_uses_with(target)  # an in-place op's value is its (now new) self
        graph.erase_node(n)

    out = graph.output_node()
    with graph.inserting_before(out):
        walk.tag = None
        out.args = map_arg(out.args, walk.current)
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        flat = list(out.args[0]) if isinstance(out.args[0], (list, tuple)) else [out.args[0]]
        mutated = []
        for i, p in enumerate(placeholders):
            if walk.version.get(p):
                mutated.append((i, len(flat)))
                flat.append(walk.current(p))
    out.args = (type(out.args[0])(flat) if isinstance(out.args[0], (list, tuple)) else
                tuple(flat),)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return mutated
