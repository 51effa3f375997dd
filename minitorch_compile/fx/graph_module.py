"""``GraphModule``: a graph plus the attributes it reads, runnable as a module.

Mirrors ``torch/fx/graph_module.py``.  Its ``forward`` is *generated*: ``recompile()`` asks the
graph for Python source (``Graph.python_code``), executes it, and installs the function on a
class made for this one instance (as torch does), so ``gm.code`` is exactly what runs.  The
source is registered with ``linecache``: a traceback through ``forward`` shows the generated
line.  Constructed from a module, it copies every parameter, buffer and submodule the graph's
``get_attr``/``call_module`` nodes name; from a dict, it takes the dict's values.
"""

from __future__ import annotations

import itertools
import linecache

from ..nn import Module
from .graph import Graph

_counter = itertools.count()


def _exec_with_source(src: str, globals_: dict):
    key = f"<eval_with_key>.{next(_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    namespace = dict(globals_)
    exec(compile(src, key, "exec"), namespace)
    return namespace["forward"]


def _get_path(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _set_path(module, path: str, value) -> None:
    from .._tensor import Tensor
    from ..nn import Parameter

    *prefix, last = path.split(".")
    for part in prefix:
        if not hasattr(module, part):
            setattr(module, part, Module())
        module = getattr(module, part)
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        module.register_buffer(last, value)
    else:
        setattr(module, last, value)


class GraphModule(Module):
    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so the generated forward can live on the class
        for base in cls.__mro__:
            if base.__dict__.get("_is_instance_class"):
                return super().__new__(cls)
        impl = type("GraphModuleImpl", (cls,), {"_is_instance_class": True})
        return super().__new__(impl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        super().__init__()
        self.__class__.__name__ = self.__class__.__qualname__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for n in graph.nodes:
                if n.op in ("get_attr", "call_module"):
                    _set_path(self, n.target, _get_path(root, n.target))
        elif isinstance(root, dict):
            for n in graph.nodes:
                if n.op in ("get_attr", "call_module"):
                    if n.target not in root:
                        raise RuntimeError(f"Node {n} referenced target {n.target} but that "
                                           "target was not provided in the dict")
                    _set_path(self, n.target, root[n.target])
        else:
            raise RuntimeError(f"Unsupported type {type(root).__name__} passed for root")
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    def recompile(self):
        code = self._graph.python_code(root_module="self")
        object.__setattr__(self, "_code", code.src)
        type(self).forward = _exec_with_source(code.src, code.globals)
        return code

    @property
    def code(self) -> str:
        return self._code

    def print_readable(self, print_output: bool = True) -> str:
        """The module as a class with typed lines (``cos: "f32[5]" = ...``)."""
        src = self._graph.python_code(root_module="self", verbose=True).src
        body = "\n".join("    " + line if line.strip() else "" for line in src.strip("\n")
                         .splitlines())
        out = f"class {type(self).__name__}(mtc.nn.Module):\n{body}\n"
        if print_output:
            print(out)
        return out

    def __str__(self) -> str:
        return super().__repr__() + "\n\n\n" + self._code.strip() + "\n"

    def __reduce__(self):
        raise TypeError("GraphModule pickling is not supported")
