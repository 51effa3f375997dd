"""``mtc.fx``: graphs that print as Python (``torch/fx``), fake tensors and ``make_fx``.

* ``Graph``/``Node`` (``graph.py``, ``node.py``) — the IR every compiler stage speaks;
* ``GraphModule`` (``graph_module.py``) — a graph with generated ``forward`` code;
* ``Interpreter`` (``interpreter.py``) — run a graph node by node;
* ``passes/`` — dead-code elimination, common-subexpression elimination, shape propagation;
* ``FakeTensor``/``FakeTensorMode`` (``fake_tensor.py``) — metadata-only tensors;
* ``make_fx`` (``proxy_tensor.py``) — trace the ops that reach the dispatcher into a graph.
"""

from . import passes
from ._pytree import tree_flatten, tree_map, tree_unflatten
from .fake_tensor import (
    DataDependentOutputException,
    DynamicOutputShapeException,
    FakeTensor,
    FakeTensorMode,
)
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Node, map_arg
from .proxy_tensor import make_fx

__all__ = ["Graph", "Node", "GraphModule", "Interpreter", "make_fx", "FakeTensor",
           "FakeTensorMode", "DataDependentOutputException", "DynamicOutputShapeException",
           "map_arg", "passes",
           "tree_flatten", "tree_unflatten", "tree_map"]
