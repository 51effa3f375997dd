"""Sizes as graph inputs: every symbol is a placeholder, and a size is read from it.

torch 2.13 does not compute a dynamic size inside the graph (``l_x_.size(0)``); it passes it
in.  When an input tensor with a symbolic size becomes a graph input, each new symbol of its
sizes is *lifted* as a graph input of its own, placed just before the tensor, named after the
symbol and fed from the tensor by the transformed code (``x.shape[0]``)::

    def forward(self, s0: "Sym(s0)", l_x_: "f32[s0]"):      # called as fn(x.shape[0], x)

Then every symbolic number in the graph is *hash-consed* by its expression
(``expr_to_proxy``, as torch's ``insert_deferred_runtime_asserts`` does after tracing):

* ``x.shape[0]`` of an input is the placeholder ``s0`` itself — no node;
* a number whose expression was computed before is the earlier node (``x.shape[0] * 2``
  twice: one ``mul``);
* a size of a tensor the graph made (``y = x.repeat(2); y.shape[0]``) is computed from the
  input symbols (``mul = 2 * s0``), not read from ``y``.

A symbol placeholder stays in the graph while a tensor input it sizes does, even when no op
reads it (torch's ``remove_unused_graphargs``): a backend sees every size its inputs vary by.

Mirrors ``SubgraphTracer._lift_basic_symbols`` / ``bound_symbols`` in
``torch/_dynamo/output_graph.py`` and the CSE of ``torch/fx/passes/runtime_assert.py``.
``BoundSymbols`` is a mixin of ``OutputGraph``.
"""

from __future__ import annotations

import operator

from .source import TensorSizeSource
from .symbolic_scalars import is_sym_scalar
from .symbolic_shapes import is_symbolic, walk_expr

_APPLY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
          "%": operator.mod}


def _cons_key(value):
    """The key a symbolic number is hash-consed by: a ``SymInt``'s expression, or a
    ``SymScalar``'s type and expression (``-zf0`` computed twice for an lr that became a graph
    input is one ``neg`` node, as in torch's graph)."""
    if is_symbolic(value):
        return value.expr
    if is_sym_scalar(value):
        return (value.pytype.__name__, value.expr)
    return None


class BoundSymbols:
    """The symbol-lifting methods of ``OutputGraph`` (whose ``graph``, ``graphargs`` and
    ``call`` they use), and the pruning of its unused inputs."""

    def lift_size_symbols(self, source, value, sizes: tuple, tensor_node) -> None:
        """A placeholder before ``tensor_node`` for each symbol of ``sizes`` not bound yet."""
        from .output_graph import GraphArg
        from .variables.tensor import SymNodeVariable

        for d, s in enumerate(sizes):
            if not is_symbolic(s) or s.expr in self.expr_to_proxy:
                continue  # a static size, or duck-sized onto a symbol already bound
            with self.graph.inserting_before(tensor_node):
                node = self.graph.placeholder(s.expr)
            node.meta["example_value"] = s
            src = TensorSizeSource(source, d)
            node.meta["grapharg"] = src
            vt = SymNodeVariable(node, s)
            self.expr_to_proxy[s.expr] = vt
            self.graphargs.append(GraphArg(src, int(value._data.shape[d]), node, s, vt))

    def sym_size(self, tx, tensor_vt, dim: int):
        """``t.size(dim)`` of a dynamic dim: the bound symbol, an earlier node with the same
        expression, or — for a tensor the graph made — the expression computed from the
        input symbols; a ``size`` node only when that cannot be done."""
        from .variables.constant import ConstantVariable

        s = tensor_vt.example_value.shape[dim]
        known = self.expr_to_proxy.get(s.expr)
        if known is not None:
            return known
        try:
            vt = self.reify(tx, s.expr)
        except (KeyError, NotImplementedError):  # a symbol this graph does not bind
            vt = self.call(tx, "call_method", "size", [tensor_vt, ConstantVariable(dim)], {})
        return vt

    def reify(self, tx, expr: str):
        """Nodes computing ``expr`` from the bound symbols (each sub-expression hash-consed
        by ``call``)."""
        from .variables.constant import ConstantVariable

        def wrap(v):
            return ConstantVariable(v) if isinstance(v, int) else v

        apply = {op: (lambda fn: lambda a, b: self.call(
            tx, "call_function", fn, [wrap(a), wrap(b)], {}))(fn) for op, fn in _APPLY.items()}
        apply["neg"] = lambda a: self.call(tx, "call_function", operator.neg, [wrap(a)], {})
        return wrap(walk_expr(expr, lambda name: self.expr_to_proxy[name], apply))

    def hash_consed(self, example):
        """The tracker already computing the symbolic number ``example``, if any."""
        key = _cons_key(example)
        known = None if key is None else self.expr_to_proxy.get(key)
        if known is not None and is_sym_scalar(example):
            # a tracker of its own on the same node: torch's SymNodeVariables differ, only the
            # node is shared (each returned one becomes a scalar_tensor output of its own)
            return type(known)(known.proxy, known.sym)
        return known

    def remember_symbolic(self, vt) -> None:
        key = _cons_key(getattr(vt, "sym", None))
        if key is not None:
            self.expr_to_proxy.setdefault(key, vt)

    def prune_unused_inputs(self) -> None:
        """The graph takes only the inputs its ops read, as torch's does: a tensor read only for
        its metadata (``y.shape[0]``, ``y.dtype``) is guarded (``TENSOR_MATCH``, shape guards)
        but not passed — nor is every live local a resume function receives.  Its size still
        counts for automatic dynamic (``record_frame_state`` reads every ``graphargs``)."""
        used = [a for a in self.graphargs if a.node.users]
        sizing = self.symbols_sizing(used)  # a symbol stays while a tensor input it sizes does
        self.graph_inputs = [a for a in self.graphargs if a in used or (
            isinstance(a.source, TensorSizeSource) and a.node.name in sizing)]
        for arg in self.graphargs:
            if arg not in self.graph_inputs:
                self.graph.erase_node(arg.node)
        order = {n: i for i, n in enumerate(self.graph.nodes)}
        self.graph_inputs.sort(key=lambda a: order[a.node])  # the placeholders' order

    def symbols_sizing(self, inputs) -> set:
        """The symbols in the sizes of the tensor graph inputs ``inputs``."""
        out = set()
        for arg in inputs:
            for s in getattr(arg.fake, "shape", ()):
                if is_symbolic(s):
                    out.update(_symbols(s.expr))
        return out


def _symbols(expr: str) -> set:
    from .symbolic_shapes import _SYMBOL

    return {m.group(0) for m in _SYMBOL.finditer(expr)}
