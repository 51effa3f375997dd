"""Shape propagation (``torch/fx/passes/shape_prop.py``).

Run the graph with an ``Interpreter`` inside a ``FakeTensorMode``: every node computes a fake
value through the op table's meta rules, which is stored as ``node.meta["val"]`` (and a
``TensorMetadata`` record as ``node.meta["tensor_meta"]``).  Real example inputs are turned
into their fake twins first, so nothing is computed and no memory is used.
"""

from __future__ import annotations

from typing import NamedTuple

from ..._tensor import Tensor
from ..fake_tensor import FakeTensorMode
from ..interpreter import Interpreter
from ..node import map_aggregate


class TensorMetadata(NamedTuple):
    shape: tuple
    dtype: object
    stride: tuple
    requires_grad: bool
    is_contiguous: bool


def _metadata(v):
    if isinstance(v, Tensor):
        return TensorMetadata(tuple(v.shape), v.dtype, v.stride(), v.requires_grad,
                              v.is_contiguous())
    return None


class ShapeProp(Interpreter):
    def __init__(self, gm, fake_mode: FakeTensorMode | None = None):
        super().__init__(gm)
        self.fake_mode = fake_mode or FakeTensorMode(allow_non_fake_inputs=True)

    def run_node(self, n):
        with self.fake_mode:
            result = super().run_node(n)
        if n.op != "output":
            n.meta["val"] = result
            meta = map_aggregate(result, _metadata)
            n.meta["tensor_meta"] = meta
        return result

    def propagate(self, *args):
        fake_args = [self.fake_mode.from_tensor(a) if isinstance(a, Tensor) else a
                     for a in args]
        return self.run(*fake_args)
