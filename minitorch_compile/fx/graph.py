"""``Graph``: an ordered list of ``Node``s that prints as Python (``torch/fx/graph.py``).

The builder methods are named after the opcodes they create — ``placeholder``, ``get_attr``,
``call_function``, ``call_method``, ``call_module``, ``output`` — as are the ``Interpreter``'s
handlers, so a graph reads the same way it is built and run.  Nodes live in a doubly linked
list (cheap insertion and erasure anywhere); ``inserting_before``/``inserting_after`` move the
insertion point.  ``python_code()`` turns the graph into the source of a ``forward`` function
(``_codegen.py``); ``lint()`` checks its invariants.
"""

from __future__ import annotations

import builtins
import contextlib
import keyword
import operator
import re

from .node import Node, map_arg

_RESERVED = set(dir(builtins)) | set(keyword.kwlist) | {"self", "mtc", "operator", "device",
                                                          "inf", "nan", "fx_pytree", "pytree"}


class _Namespace:
    """Unique, valid Python identifiers: ``cos``, ``cos_1``, ``cos_2``; builtins avoided."""

    def __init__(self):
        self._used: set = set()
        self._counts: dict = {}

    def create_name(self, candidate: str) -> str:
        base = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if base[0].isdigit():
            base = f"_{base}"
        name = base
        if name in self._used or name in _RESERVED:
            n = self._counts.get(base, 0)
            while True:
                n += 1
                name = f"{base}_{n}"
                if name not in self._used:
                    break
            self._counts[base] = n
        self._used.add(name)
        return name

    def discard(self, name: str) -> None:
        self._used.discard(name)


def target_repr(target) -> str:
    """How a call target prints: ``mtc.ops.aten.cos.default``, ``operator.add``, ``mtc.cos``."""
    from ..ops._ops import OpOverload, OpOverloadPacket

    if isinstance(target, str):
        return target
    if isinstance(target, OpOverload):
        return f"mtc.ops.{target.namespace}.{target.name}.{target.overload_name}"
    if isinstance(target, OpOverloadPacket):
        return f"mtc.ops.{target.namespace}.{target.name}"
    name = getattr(target, "__name__", None)
    if getattr(operator, str(name), None) is target:
        return f"operator.{name}"
    if _is_mtc_function(target):
        return f"mtc.{name}"
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", name or repr(target))
    if module.split(".")[0] == "minitorch_compile" and "<" not in qual:
        import sys

        mod = sys.modules.get(module)
        if mod is not None and getattr(mod, qual, None) is target:
            return "mtc" + module[len("minitorch_compile"):] + "." + qual
    if module == "builtins":
        return qual
    return f"{module}.{qual}" if module else str(qual)


def _is_mtc_function(target) -> bool:
    import minitorch_compile as mtc

    name = getattr(target, "__name__", None)
    return isinstance(name, str) and getattr(mtc, name, None) is target


class _InsertPoint(contextlib.AbstractContextManager):
    def __init__(self, graph, new_point):
        self.graph, self.new_point = graph, new_point

    def __enter__(self):
        self.prev = self.graph._insert
        self.graph._insert = self.new_point

    def __exit__(self, *exc):
        self.graph._insert = self.prev


class _NodeList:
    def __init__(self, root, reverse=False):
        self.root, self.reverse = root, reverse

    def __iter__(self):
        cur = self.root._prev if self.reverse else self.root._next
        while cur is not self.root:
            nxt = cur._prev if self.reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __len__(self) -> int:
        return self.root._len

    def __reversed__(self):
        return iter(_NodeList(self.root, not self.reverse))

    def __getitem__(self, i):
        return list(self)[i]


class Graph:
    def __init__(self):
        root = Node.__new__(Node)
        root._prev = root._next = root
        root._erased = False
        root._len = 0
        root.op = "root"
        self._root = root
        self._insert = root.prepend  # append at the end by default
        self._namespace = _Namespace()
        self._pytree_info = None  # (orig arg names, in_spec, out_spec) for make_fx graphs
        self.owning_module = None

    # ------------------------------------------------------------ access
    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self._root)

    def find_nodes(self, *, op: str, target=None) -> list[Node]:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def output_node(self) -> Node:
        for n in reversed(self.nodes):
            if n.op == "output":
                return n
        raise RuntimeError("graph has no output node")

    # ------------------------------------------------------------ building
    def create_node(self, op: str, target, args=(), kwargs=None, name: str | None = None,
                    type_expr=None) -> Node:
        candidate = name or self._candidate_name(op, target)
        n = Node(self, self._namespace.create_name(candidate), op, target, tuple(args),
                 dict(kwargs or {}), type_expr)
        self._insert(n)
        self._root._len += 1
        return n

    @staticmethod
    def _candidate_name(op, target) -> str:
        if op == "output":
            return "output"
        if isinstance(target, str):
            return target.replace(".", "_")
        name = getattr(target, "name", None)
        if isinstance(name, str) and hasattr(target, "schema"):
            return name  # OpOverload: aten.cos.default -> cos
        return getattr(target, "__name__", "fn")

    def placeholder(self, name: str, type_expr=None, default_value=None) -> Node:
        args = () if default_value is None else (default_value,)
        return self.create_node("placeholder", name, args, name=name, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name: str, args=(), kwargs=None, type_expr=None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        return _InsertPoint(self, (n or self._root._next).prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        return _InsertPoint(self, (n or self._root._prev).append)

    def erase_node(self, n: Node) -> None:
        if n.users:
            raise RuntimeError(f"Tried to erase Node {n} but it still had {len(n.users)} users "
                               f"in the graph: {n.users}!")
        n._update_args_kwargs((), {})
        n._remove_from_list()
        n._erased = True
        self._root._len -= 1
        self._namespace.discard(n.name)

    def node_copy(self, node: Node, arg_transform=lambda x: x) -> Node:
        """Copy ``node`` (from any graph) into this one, mapping its input nodes."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = dict(node.meta)
        return new

    def graph_copy(self, other: Graph, val_map: dict) -> object:
        """Copy ``other``'s nodes (but its output) into this graph; return its output value."""
        for n in other.nodes:
            if n.op == "output":
                return map_arg(n.args[0], lambda x: val_map[x])
            val_map[n] = self.node_copy(n, lambda x: val_map[x])
        return None

    # ------------------------------------------------------------ passes
    def eliminate_dead_code(self) -> bool:
        """Erase nodes whose value is never used and that have no side effects."""
        changed = False
        for n in reversed(self.nodes):
            if not n.users and not n.is_impure():
                self.erase_node(n)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the invariants: unique names, defs before uses, consistent users, one output."""
        seen: set = set()
        names: set = set()
        outputs = 0
        for n in self.nodes:
            if n.graph is not self:
                raise RuntimeError(f"node {n} does not belong to this graph")
            if n.name in names:
                raise RuntimeError(f"node name {n.name!r} is not unique")
            names.add(n.name)
            for inp in n.all_input_nodes:
                if inp not in seen:
                    raise RuntimeError(f"argument {inp} of node {n} is used before it is "
                                       "defined (or is not in the graph)")
                if n not in inp.users:
                    raise RuntimeError(f"{inp}.users does not list its user {n}")
            for u in n.users:
                if u._erased or u.graph is not self:
                    raise RuntimeError(f"{n}.users lists {u}, which is not in the graph")
            if n.op == "output":
                outputs += 1
            elif outputs:
                raise RuntimeError(f"node {n} comes after the output node")
            seen.add(n)
        if outputs != 1:
            raise RuntimeError(f"a graph needs exactly one output node, found {outputs}")

    # ------------------------------------------------------------ printing
    def python_code(self, root_module: str = "self", *, verbose: bool = False):
        from ._codegen import python_code

        return python_code(self, root_module, verbose=verbose)

    def __str__(self) -> str:
        lines = ["graph():"]
        lines += ["    " + n.format_node() for n in self.nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self.nodes:
            rows.append((n.op, n.name, target_repr(n.target), repr(n.args), repr(n.kwargs)))
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        for i, r in enumerate(rows):
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
            if i == 0:
                print("  ".join("-" * w for w in widths))
