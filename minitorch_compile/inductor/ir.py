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

(the boxes and views are in ``ir_views.py``; this module re-exports them).

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


# views and boxes (``View``, ``ReinterpretView``, ``StorageBox``, ``TensorBox``) live in
# ir_views.py and are re-exported here, so ``from .ir import TensorBox`` keeps working
from .ir_views import ReinterpretView, StorageBox, TensorBox, View, strided_view  # noqa: E402

__all__ += ["ReinterpretView", "StorageBox", "TensorBox", "View", "strided_view"]
