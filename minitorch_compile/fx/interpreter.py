"""``Interpreter``: run a graph node by node (``torch/fx/interpreter.py``).

``run(*args)`` walks the nodes in order; each node goes to the handler named after its opcode
(``placeholder``, ``get_attr``, ``call_function``, ``call_method``, ``call_module``,
``output``) with its args/kwargs already looked up in ``env``.  Override a handler to observe or
change execution — ``ShapeProp`` is an Interpreter that runs on fake tensors.  Values are
dropped from ``env`` after their last use, like the generated code does.
"""

from __future__ import annotations

from .graph_module import _get_path
from .node import Node, map_arg


class Interpreter:
    def __init__(self, module, garbage_collect_values: bool = True, graph=None):
        self.module = module
        self.graph = graph if graph is not None else module.graph
        self.env: dict[Node, object] = {}
        self.garbage_collect_values = garbage_collect_values
        self._last_use: dict[Node, list[Node]] = {}
        seen: set = set()
        for n in reversed(list(self.graph.nodes)):
            for inp in n.all_input_nodes:
                if inp not in seen:
                    seen.add(inp)
                    self._last_use.setdefault(n, []).append(inp)

    def run(self, *args, initial_env: dict | None = None):
        self.env = dict(initial_env or {})
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            self.env[node] = self.run_node(node)
            if self.garbage_collect_values:
                for dead in self._last_use.get(node, ()):
                    self.env.pop(dead, None)
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node):
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    def fetch_args_kwargs_from_env(self, n: Node):
        return (map_arg(n.args, lambda x: self.env[x]), map_arg(n.kwargs, lambda x: self.env[x]))

    # ---------------------------------------------------------------- opcodes
    def placeholder(self, target, args, kwargs):
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               "was not passed in!") from None

    def get_attr(self, target, args, kwargs):
        return _get_path(self.module, target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target, args, kwargs):
        return _get_path(self.module, target)(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]
