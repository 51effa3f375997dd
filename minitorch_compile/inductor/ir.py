"""Loop-level IR (``torch/_inductor/ir.py``).

A tensor in Inductor is not data but a *recipe*: ``Pointwise(ranges, inner_fn)`` says "element
``index`` of me is ``inner_fn(index)``", where ``inner_fn`` is a closure of ``ops.*`` calls
(``ops.load``, ``ops.cos``, ...).  ``Reduction(ranges, reduction_ranges, inner_fn)`` says
"element ``index`` of me reduces ``inner_fn(index, rindex)`` over ``rindex``".  Consumers call
``make_loader()`` and so *inline* the producer's body into their own: that is the first, free
level of fusion.  A recipe becomes memory only when it is *realized* into a ``ComputedBuffer``
(graph outputs, reductions, inputs of extern kernels, values reused by several consumers).

The boxes, as torch::

    TensorBox ─▶ View* ─▶ StorageBox ─▶ Pointwise | Reduction   (unrealized)
                                     └▶ ComputedBuffer | InputBuffer | ExternKernel (a Buffer)

Views (transpose, permute, expand, slice, select, unsqueeze) are ``View(data, size, reindex)``:
index arithmetic, never a copy.  Every index is an ``Affine`` expression
``offset + Σ coef·var`` over loop variables, so a load of any view of a buffer is one strided
view of that buffer in the generated numpy code.  A ``Layout`` maps an index to a flat offset;
``FlexibleLayout`` is the contiguous layout Inductor picks for the buffers it makes.

Under dynamic shapes a size, a stride or an index coefficient may be a ``sizevars.Expr``
(``s0``, ``4*s0``) instead of an int: every rule here is written with ``+``, ``*`` and ``==``,
which an ``Expr`` answers exactly, so the same code builds the IR for static and symbolic sizes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable

from .sizevars import Affine, as_index, contiguous_strides, numel
from .virtualized import V, ops

__all__ = ["Affine", "as_index", "contiguous_strides", "numel"]  # re-exported for lowering

# --------------------------------------------------------------------------- layouts


@dataclass
class Layout:
    dtype: object  # mtc dtype
    size: tuple
    stride: tuple
    offset: int = 0

    def make_indexer(self) -> Callable:
        def indexer(index):
            out = Affine(self.offset)
            for i, s, st in zip(index, self.size, self.stride):
                if s != 1:
                    out = out + as_index(i) * st
            return out
        return indexer

    def is_contiguous(self) -> bool:
        return self.offset == 0 and all(
            s == 1 or st == c for s, st, c in zip(self.size, self.stride,
                                                  contiguous_strides(self.size)))

    def nbytes(self) -> int:
        return numel(self.size) * self.dtype.itemsize


class FixedLayout(Layout):
    """A layout that must not change (inputs, views of buffers, extern outputs)."""


class FlexibleLayout(Layout):
    """The layout of a buffer Inductor makes; contiguous unless a consumer asks otherwise."""

    def __init__(self, dtype, size):
        super().__init__(dtype, tuple(size), contiguous_strides(size), 0)


# --------------------------------------------------------------------------- nodes


class IRNode:
    origins: set

    def get_size(self) -> tuple:
        raise NotImplementedError

    def get_dtype(self):
        raise NotImplementedError

    def get_numel(self) -> int:
        return numel(self.get_size())

    def make_loader(self) -> Callable:
        raise NotImplementedError

    def is_realized(self) -> bool:
        return False


@dataclass(eq=False)
class Loops(IRNode):
    dtype: object
    inner_fn: Callable
    ranges: tuple
    origins: set = field(default_factory=set)

    def get_size(self):
        return tuple(self.ranges)

    def get_dtype(self):
        return self.dtype

    def index_vars(self, prefix: str = "i") -> list:
        return [Affine.var(f"{prefix}{k}") for k in range(len(self.ranges))]

    def inner_fn_str(self) -> str:
        """The body as text: run ``inner_fn`` under the printing handler."""
        from .dependencies import PrintHandler

        h = PrintHandler()
        with V.set_ops_handler(h):
            out = self._call_inner(h)
        return h.render(out)


@dataclass(eq=False)
class Pointwise(Loops):
    def make_loader(self):
        return self.inner_fn

    def _call_inner(self, h):
        return self.inner_fn(self.index_vars())

    def store_output(self, name: str, indexer, index):
        return ops.store(name, indexer(index), self.inner_fn(index))


@dataclass(eq=False)
class Reduction(Loops):
    reduction_ranges: tuple = ()
    reduction_type: str = "sum"
    src_dtype: object = None

    def make_loader(self):
        raise RuntimeError("a Reduction must be realized before it is loaded")

    def _call_inner(self, h):
        rvars = [Affine.var(f"r{k}") for k in range(len(self.reduction_ranges))]
        return ops.reduction(self.dtype, self.src_dtype, self.reduction_type,
                             self.inner_fn(self.index_vars(), rvars))

    def store_output(self, name: str, indexer, index, rindex):
        value = ops.reduction(self.dtype, self.src_dtype, self.reduction_type,
                              self.inner_fn(index, rindex))
        return ops.store(name, indexer(index), value)


@dataclass(eq=False)
class Scatter(Pointwise):
    """``index_put``/``scatter``: element ``index`` of the values (``inner_fn``) is stored at
    ``output_indexer(index)`` — an index with indirect variables — into the buffer ``mutated``,
    in place (the ``ComputedBuffer`` holding this node shares ``mutated``'s memory); ``mode``
    ``None`` writes, ``"atomic_add"`` adds, so repeated indices accumulate (torch's
    ``ir.Scatter`` and its ``scatter_mode``)."""

    output_indexer: Callable = None
    mutated: str = ""
    mode: str | None = None

    def store_output(self, name: str, indexer, index):
        return ops.store(name, self.output_indexer(index), self.inner_fn(index), self.mode)


_buffer_ids = itertools.count()


@dataclass(eq=False)
class Buffer(IRNode):
    name: str
    layout: Layout
    origins: set = field(default_factory=set)

    def get_size(self):
        return tuple(self.layout.size)

    def get_dtype(self):
        return self.layout.dtype

    def make_loader(self):
        indexer = self.layout.make_indexer()
        name = self.name

        def loader(index):
            return ops.load(name, indexer(index))
        return loader

    def is_realized(self):
        return True


@dataclass(eq=False)
class InputBuffer(Buffer):
    pass


@dataclass(eq=False)
class ComputedBuffer(Buffer):
    data: Loops = None

    def __repr__(self) -> str:
        kind = type(self.data).__name__
        extra = (f", reduction_ranges={list(self.data.reduction_ranges)}, "
                 f"reduction_type={self.data.reduction_type!r}"
                 if isinstance(self.data, Reduction) else "")
        body = "\n".join("    " + line for line in self.data.inner_fn_str().splitlines())
        return (f"{self.name}: ComputedBuffer({kind}, size={list(self.get_size())}, "
                f"dtype={self.get_dtype()}{extra})\n{body}")


@dataclass(eq=False)
class ExternKernel(Buffer):
    """A buffer computed by a library call: ``np.matmul`` (``kernel='extern_mm'``) or, for an
    op with no lowering, the op table's own numpy kernel (a fallback, with its ``reason``)."""

    kernel: str = ""
    op: object = None  # the OpOverload of a fallback
    inputs: list = field(default_factory=list)  # args with Buffer views in tensor positions
    reason: str = ""
    n_outputs: int = 1

    def __repr__(self) -> str:
        return (f"{self.name}: ExternKernel({self.kernel}, size={list(self.get_size())}"
                + (f", reason={self.reason!r}" if self.reason else "") + ")")


@dataclass(eq=False, repr=False)
class ConcatSlice(ComputedBuffer):
    """One input of a ``cat``, computed straight into its slice of the output buffer
    ``concat`` at ``concat_offset`` (its layout: the output's strides, over the slice's
    memory) — torch's ``ConcatKernel`` with a ``NonOwningLayout``.  The output is an
    ``ExternKernel`` (``kernel='concat'``) that computes nothing but runs after its slices."""

    concat: str = ""
    concat_offset: int = 0


@dataclass(eq=False)
class MultiOutput(Buffer):
    """Output ``index`` of a multi-output extern kernel."""

    source: ExternKernel = None
    index: int = 0


# --------------------------------------------------------------------------- views and boxes


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
