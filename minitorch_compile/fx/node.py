"""``Node``: one instruction of an fx graph (``torch/fx/node.py``).

The opcodes form a closed set — every node is exactly one of:

============== ============================ ===================================================
op             target                       meaning
============== ============================ ===================================================
placeholder    the input's name             a graph input (``args`` may hold a default)
get_attr       a dotted attribute path      read a parameter/buffer/constant from the module
call_function  a callable (op, function)    ``target(*args, **kwargs)``
call_method    a method name                ``args[0].target(*args[1:], **kwargs)``
call_module    a dotted submodule path      ``module.target(*args, **kwargs)``
output         ``"output"``                 ``args[0]`` is the value the graph returns
============== ============================ ===================================================

``args``/``kwargs`` hold constants and other nodes (also inside lists, tuples, dicts, slices);
``users`` is kept up to date whenever they change, so def-use questions are O(1).
``meta`` is a free-form dict: ``meta["val"]`` holds the (fake) value a node produces.
"""

from __future__ import annotations

import operator

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

# Python's mutating operators, as Dynamo records them: ``y[0] = v`` is operator.setitem,
# ``y += 1`` on a tensor is operator.iadd (it may write through a view into an input)
_SIDE_EFFECTFUL_FUNCTIONS = {operator.setitem, operator.delitem, operator.iadd, operator.isub,
                             operator.imul, operator.itruediv, operator.ifloordiv,
                             operator.imod, operator.ipow, operator.imatmul, operator.iand,
                             operator.ior, operator.ixor, operator.ilshift, operator.irshift}


def map_arg(a, fn):
    """Apply ``fn`` to every Node inside a nested args structure."""
    if isinstance(a, Node):
        return fn(a)
    if isinstance(a, tuple):
        t = tuple(map_arg(x, fn) for x in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return [map_arg(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_arg(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_arg(a.start, fn), map_arg(a.stop, fn), map_arg(a.step, fn))
    return a


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf (node or constant) of a nested structure."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(x, fn) for x in a)
        return type(a)(*t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    return fn(a)


class Node:
    def __init__(self, graph, name: str, op: str, target, args: tuple, kwargs: dict,
                 type_expr=None):
        if op not in OPCODES:
            raise ValueError(f"unknown fx opcode {op!r}; expected one of {OPCODES}")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = type_expr
        self.users: dict[Node, None] = {}
        self.meta: dict = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # ------------------------------------------------------------ args and users
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value) -> None:
        self._update_args_kwargs(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value) -> None:
        self._update_args_kwargs(self._args, dict(value))

    def _update_args_kwargs(self, args, kwargs) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(args), self._collect)
        self._kwargs = map_arg(dict(kwargs), self._collect)

    def _collect(self, n: Node) -> Node:
        if n.graph is not self.graph:
            raise RuntimeError(f"node {n} belongs to another graph than {self}")
        self._input_nodes.setdefault(n)
        n.users.setdefault(self)
        return n

    @property
    def all_input_nodes(self) -> list[Node]:
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg) -> None:
        kwargs = dict(self._kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def replace_input_with(self, old: Node, new: Node) -> None:
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node, delete_user_cb=None) -> list[Node]:
        """Make every user of this node use ``replace_with`` instead; returns the users."""
        users = list(self.users)
        for user in users:
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
        return users

    # ------------------------------------------------------------ order
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ------------------------------------------------------------ properties
    def is_impure(self) -> bool:
        """Nodes dead-code elimination must keep: inputs, outputs, mutations, random ops,
        modules."""
        if self.op in ("placeholder", "output", "call_module"):
            return True
        if self.op == "call_function":
            if self.target in _SIDE_EFFECTFUL_FUNCTIONS:
                return True
            schema = getattr(self.target, "schema", None)
            if schema is not None and schema.is_mutable:
                return True
            # an OpOverloadPacket (``mtc.ops.aten.add_(x, 1)``) mutates if an overload does
            overloads = getattr(self.target, "__dict__", {}).get("overloads")
            if isinstance(overloads, dict) and any(
                    o.schema.is_mutable for o in overloads.values()):
                return True
            if getattr(self.target, "_mtc_side_effect", False):
                return True
            opdef = getattr(self.target, "opdef", None)
            if opdef is not None and opdef.category == "random":
                return True  # dropping a sample would shift every later random number
        return self.op == "call_method" and str(self.target).endswith("_") and \
            not str(self.target).endswith("__")

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace")

    def format_node(self) -> str:
        """torch's IR line: ``%cos : [num_users=2] = call_function[target=...](args = ...)``."""
        if self.op == "placeholder":
            default = f" = {self.args[0]!r}" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = placeholder" \
                   f"[target={self.target}]{default}"
        if self.op == "output":
            return f"return {_format(self.args[0])}"
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target="
                f"{_target_str(self.target)}](args = {_format(self.args)}, kwargs = "
                f"{_format(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name


def _target_str(target) -> str:
    from .graph import target_repr

    return target_repr(target)


def _format(a) -> str:
    return repr(map_arg(a, lambda n: _Ref(n.name)))


class _Ref:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"%{self.name}"
