"""``make_fx``: trace a function into a graph of aten ops
(``torch/fx/experimental/proxy_tensor.py``).

``make_fx(fn, tracing_mode="fake")(*args)`` runs ``fn`` once with a ``TorchDispatchMode`` (the
*proxy mode*) on the dispatcher's Python key.  Every op that reaches that key becomes a
``call_function`` node whose arguments are the nodes of the tensors it was given:

* the Python key sits *below* Autograd, so composite ops arrive already decomposed and — when
  ``fn`` calls ``mtc.autograd.grad`` — the backward formulas the engine runs are recorded too:
  tracing ``forward + grad`` yields the **joint graph** AOTAutograd partitions;
* with ``tracing_mode="fake"`` the inputs are swapped for fake tensors first (a
  ``FakeTensorMode`` sits under the proxy mode), so nothing is computed; with ``"real"`` the
  real kernels run and ``node.meta["val"]`` holds real values;
* a tensor the trace did not produce (``mtc.tensor([...])`` inside ``fn``) becomes a constant
  read with ``get_attr`` (``_tensor_constant0``).

**Symbolic tracing** (``tracing_mode="symbolic"``, torch's, with a ``ShapeEnv``): the inputs
become fake tensors whose sizes are ``SymInt`` symbols (every dim >= 2 of a real input, duck
sized; a fake input keeps the symbols it has), the op table's meta rules propagate them
(``s0``, ``2*s0``), and a size that reaches an op as an argument (``view(x, [s0, 4])``,
``expand(g, [s0, s1])``) is *computed in the graph* from the inputs, as torch's graphs show it::

    sym_size_int = sym_size(x_1, 0)          # torch.ops.aten.sym_size.int(x_1, 0)
    mul = sym_size_int * 4
    view = mtc.ops.aten.view.default(x_1, [mul])

Decisions taken on sizes while tracing (``s0 == s1``, a size used as a plain int) are guards in
the ``ShapeEnv`` (``gm.shape_env.guards``): the traced graph is valid only where they hold.

The graph's placeholders are named after ``fn``'s parameters (``x_1``, ``inputs_1``); its code
accepts the same nested arguments as ``fn`` and returns the same structure (pytree specs).
"""

from __future__ import annotations

import inspect
import operator

from .._dispatch import TorchDispatchMode
from .._tensor import Tensor
from ..dynamo.symbolic_shapes import _SYMBOL, ShapeEnv, is_symbolic, walk_expr
from . import _pytree
from .fake_tensor import FakeTensor, FakeTensorMode
from .graph import Graph
from .graph_module import GraphModule
from .node import map_aggregate


def sym_size(t: Tensor, dim: int):
    """``torch.ops.aten.sym_size.int``: the size of ``t`` at ``dim`` (a SymInt while tracing
    symbolically, an int when the graph runs)."""
    return t.size(dim)


_SYM_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
            "//": operator.floordiv, "%": operator.mod}


class _Tracer:
    """Maps traced tensors (and symbolic sizes) to the graph nodes that produced them."""

    def __init__(self):
        self.graph = Graph()
        self.tensor_nodes: dict[int, tuple[Tensor, object]] = {}
        self.constants: dict[str, Tensor] = {}
        self.sym_sources: dict[str, tuple] = {}  # symbol -> (SymInt, node, dim or None)
        self.sym_nodes: dict[str, object] = {}  # expression text -> node computing it

    def add_sym_source(self, value, node, dim=None) -> None:
        """``value`` (a SymInt) is ``node``'s size at ``dim`` (or ``node`` itself)."""
        if is_symbolic(value) and _SYMBOL.fullmatch(value.expr) and \
                value.expr not in self.sym_sources:
            self.sym_sources[value.expr] = (value, node, dim)

    def sym_node(self, v):
        """The node computing the SymInt ``v`` from the inputs (made on first use)."""
        hit = self.sym_nodes.get(v.expr)
        if hit is not None:
            return hit

        def leaf(name):
            if name in self.sym_nodes:
                return self.sym_nodes[name]
            if name not in self.sym_sources:
                raise NotImplementedError(f"the size symbol {name} is no input's size")
            val, node, dim = self.sym_sources[name]
            if dim is not None:
                node = self.graph.create_node("call_function", sym_size, (node, dim),
                                              name="sym_size_int")
                node.meta["val"] = val
            self.sym_nodes[name] = node
            return node

        def binary(op):
            def make(a, b):
                fn = _SYM_OPS[op]
                n = self.graph.call_function(fn, (a, b))
                n.meta["val"] = fn(_val(a), _val(b))
                return n
            return make

        def neg(a):
            n = self.graph.call_function(operator.neg, (a,))
            n.meta["val"] = -_val(a)
            return n

        node = walk_expr(v.expr, leaf, {**{op: binary(op) for op in _SYM_OPS}, "neg": neg})
        self.sym_nodes[v.expr] = node
        return node

    def track(self, value, node) -> None:
        if isinstance(value, Tensor):
            self.tensor_nodes[id(value)] = (value, node)
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                if isinstance(v, Tensor):
                    self.tensor_nodes[id(v)] = (v, (node, i))

    def node_of(self, t: Tensor):
        hit = self.tensor_nodes.get(id(t))
        if hit is None or hit[0] is not t:
            name = f"_tensor_constant{len(self.constants)}"
            self.constants[name] = t
            node = self.graph.get_attr(name)
            node.meta["val"] = t
            self.track(t, node)
            return node
        node = hit[1]
        if isinstance(node, tuple):  # the i-th output of a multi-output op: getitem on demand
            import operator

            parent, i = node
            node = self.graph.call_function(operator.getitem, (parent, i))
            node.meta["val"] = t
            self.tensor_nodes[id(t)] = (t, node)
        return node

    def to_arg(self, a):
        return map_aggregate(a, lambda x: self.node_of(x) if isinstance(x, Tensor) else
                             self.sym_node(x) if is_symbolic(x) else x)


def _val(a):
    return a.meta["val"] if hasattr(a, "meta") else a


class ProxyTorchDispatchMode(TorchDispatchMode):
    def __init__(self, tracer: _Tracer, decomposition_table: dict | None = None,
                 fake_mode: FakeTensorMode | None = None):
        self.tracer = tracer
        self.decomposition_table = decomposition_table or {}
        self.fake_mode = fake_mode

    def _lift_constants(self, a):
        """Under fake tracing, a real tensor made inside ``fn`` (``mtc.tensor([...])``) is
        recorded as a constant and computed with as its fake twin."""
        if self.fake_mode is None:
            return a
        def lift(x):
            if isinstance(x, Tensor) and not isinstance(x, FakeTensor):
                node = self.tracer.node_of(x)
                fake = self.fake_mode.from_tensor(x)
                self.tracer.track(fake, node)
                return fake
            return x
        return map_aggregate(a, lift)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        decomposition = self.decomposition_table.get(func) or \
            self.decomposition_table.get(func.packet)
        if decomposition is not None:
            with self:  # record the ops the decomposition calls
                return decomposition(*args, **kwargs)
        args, kwargs = self._lift_constants(args), self._lift_constants(kwargs)
        out = func(*args, **kwargs)
        node = self.tracer.graph.call_function(func, self.tracer.to_arg(args),
                                               self.tracer.to_arg(kwargs))
        node.meta["val"] = out
        self.tracer.track(out, node)
        return out


def _arg_names(fn, n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"arg{i}")
    return names


def make_fx(fn, decomposition_table: dict | None = None, tracing_mode: str = "real",
            *, pre_dispatch: bool = False, shape_env: ShapeEnv | None = None):
    """Return a function that traces ``fn`` on given arguments into a ``GraphModule``.

    ``tracing_mode``: ``"real"`` (run the kernels), ``"fake"`` (fake tensors, concrete sizes)
    or ``"symbolic"`` (fake tensors with symbolic sizes; ``gm.shape_env`` holds the symbols
    and the guards the trace relied on)."""
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise NotImplementedError(
            f"tracing_mode={tracing_mode!r}: use 'real', 'fake' or 'symbolic'")

    def wrapped(*args):
        tracer = _Tracer()
        graph = tracer.graph
        fake_mode = FakeTensorMode() if tracing_mode != "real" else None
        env = shape_env or ShapeEnv() if tracing_mode == "symbolic" else None
        names = _arg_names(fn, len(args))
        traced_args = []
        for name, a in zip(names, args):
            leaves, spec = _pytree.tree_flatten(a)
            new_leaves = []
            for k, leaf in enumerate(leaves, 1):
                ph = graph.placeholder(f"{name}_{k}")
                if isinstance(leaf, Tensor):
                    if env is not None and not isinstance(leaf, FakeTensor):
                        leaf = fake_mode.from_tensor(leaf, {
                            d: env.create_symbol(ph.name, d, s)
                            for d, s in enumerate(leaf._data.shape)})
                    leaf = fake_mode.from_tensor(leaf) if fake_mode else leaf
                    tracer.track(leaf, ph)
                    for d, size in enumerate(leaf.shape):
                        tracer.add_sym_source(size, ph, d)
                tracer.add_sym_source(leaf, ph)
                ph.meta["val"] = leaf
                new_leaves.append(leaf)
            traced_args.append(_pytree.tree_unflatten(new_leaves, spec))
        proxy_mode = ProxyTorchDispatchMode(tracer, decomposition_table, fake_mode)
        if fake_mode is not None:
            with fake_mode, proxy_mode:
                out = fn(*traced_args)
        else:
            with proxy_mode:
                out = fn(*traced_args)
        flat_out, out_spec = _pytree.tree_flatten(out)
        graph.output([tracer.node_of(o) if isinstance(o, Tensor) else
                      tracer.sym_node(o) if is_symbolic(o) else o for o in flat_out])
        _, in_spec = _pytree.tree_flatten(list(args))
        graph._pytree_info = (names, in_spec, out_spec)
        name = getattr(fn, "__name__", "fn")
        gm = GraphModule(dict(tracer.constants), graph, class_name=name)
        object.__setattr__(gm, "_in_spec", in_spec)
        object.__setattr__(gm, "_out_spec", out_spec)
        object.__setattr__(gm, "shape_env", env)
        return gm

    return wrapped
