"""Views and boxes of the loop-level IR (``torch/_inductor/ir.py``'s ``View``,
``ReinterpretView``, ``StorageBox`` and ``TensorBox``).

A lowering returns a ``TensorBox``; under it, zero or more ``View``s — index arithmetic, never a
copy — over a ``StorageBox``, which holds a recipe (``Pointwise``, ``Reduction``) until it is
*realized* into a buffer.  ``strided_view`` describes any chain of views of a buffer as one
strided view ``(buffer, size, stride, offset)``: every view here is affine.  Re-exported by
``ir.py``, where the nodes and layouts are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .ir import (
    Affine,
    Buffer,
    ComputedBuffer,
    FlexibleLayout,
    IRNode,
    Layout,
    Loops,
)
from .virtualized import V, ops


@dataclass(eq=False)
class View(IRNode):
    """``data`` seen through index arithmetic: element ``i`` of me is ``data[reindex(i)]``."""

    data: IRNode
    size: tuple
    reindex: Callable
    kind: str = "view"

    def get_size(self):
        return tuple(self.size)

    def get_dtype(self):
        return self.data.get_dtype()

    def make_loader(self):
        inner = self.data.make_loader()
        reindex = self.reindex
        return lambda index: inner(reindex(index))

    @property
    def origins(self):
        return self.data.origins


@dataclass(eq=False)
class ReinterpretView(View):
    """A buffer's memory read through another layout (``view`` of a contiguous tensor)."""

    layout: Layout = None

    def make_loader(self):
        indexer, name = self.layout.make_indexer(), self.data.name
        return lambda index: ops.load(name, indexer(index))


class StorageBox(IRNode):
    """Holds a recipe until it is realized, then the buffer it became."""

    def __init__(self, data: IRNode):
        self.data = data

    def get_size(self):
        return self.data.get_size()

    def get_dtype(self):
        return self.data.get_dtype()

    def make_loader(self):
        return self.data.make_loader()

    @property
    def origins(self):
        return self.data.origins

    def is_realized(self):
        return isinstance(self.data, Buffer)

    def realize(self) -> Buffer:
        if isinstance(self.data, Buffer):
            return self.data
        buf = ComputedBuffer(V.graph.new_buffer_name(), FlexibleLayout(
            self.data.get_dtype(), self.data.get_size()), set(self.data.origins), self.data)
        V.graph.register_buffer(buf)
        self.data = buf
        return buf

    def num_reads(self) -> int:
        from .dependencies import extract_read_writes

        if isinstance(self.data, Loops):
            return len(extract_read_writes(self.data).reads)
        return 1


class TensorBox(IRNode):
    """What a lowering returns for a tensor: a StorageBox, or views of one."""

    def __init__(self, data: IRNode):
        self.data = data

    @staticmethod
    def create(data: IRNode) -> TensorBox:
        return TensorBox(StorageBox(data))

    def get_size(self):
        return self.data.get_size()

    def get_dtype(self):
        return self.data.get_dtype()

    @property
    def dtype(self):
        return self.get_dtype()

    @property
    def shape(self):
        return self.get_size()

    @property
    def ndim(self) -> int:
        return len(self.get_size())

    def make_loader(self):
        return self.data.make_loader()

    @property
    def origins(self):
        return self.data.origins

    def storage(self) -> StorageBox:
        d = self.data
        while isinstance(d, View):
            d = d.data
        return d

    def realize(self) -> None:
        store = self.storage()
        if isinstance(store, StorageBox):
            store.realize()

    def is_unrealized(self) -> bool:
        d = self.storage()
        return isinstance(d, StorageBox) and not d.is_realized()

    def __repr__(self) -> str:
        return f"TensorBox({type(self.data).__name__}, size={list(self.get_size())})"


def strided_view(box: TensorBox) -> tuple:
    """Realize ``box`` and describe it as ``(buffer, size, stride, offset)``: every view of this
    IR is affine, so any chain of them is one strided view of a buffer."""
    box.realize()
    size = box.get_size()
    vars_ = [Affine.var(f"v{k}") for k in range(len(size))]
    index = _compose_index(box.data, vars_)
    buf = index[0]
    flat = index[1]
    stride = tuple(flat.coef(f"v{k}") for k in range(len(size)))
    return buf, tuple(size), stride, flat.const


def _compose_index(node, index):
    """Walk down views to the buffer: returns (buffer, flat Affine)."""
    while True:
        if isinstance(node, ReinterpretView):
            return node.data, node.layout.make_indexer()(index)
        if getattr(node, "rules", None) is not None:  # a ReshapeView (``reshape.py``)
            from .reshape import substitute_merged

            found = node.rules(index)
            buf, flat = _compose_index(node.data, node.reindex(index))
            return buf, substitute_merged(flat, found)
        if isinstance(node, View):
            index = node.reindex(index)
            node = node.data
        elif isinstance(node, (StorageBox, TensorBox)):
            node = node.data
        elif isinstance(node, Buffer):
            return node, node.layout.make_indexer()(index)
        else:
            raise RuntimeError(f"cannot take a strided view of {type(node).__name__}")
