"""Sources: where a value came from, as an expression (``torch/_dynamo/source.py``).

Every value the tracer reads from outside the frame remembers its *source* — ``L['x']`` (a
local/argument), ``G['scale']`` (a global), ``L['mod'].training`` (an attribute),
``L['inputs']['x']`` (an item).  A source serves three purposes:

* **guards** are written in terms of it: ``___check_tensor(L['inputs']['x'], ...)``;
* **graph inputs** are named after it: ``L['inputs']['x']`` becomes placeholder
  ``l_inputs_x_`` (non-identifier characters become ``_``, runs collapse, as in torch);
* **reconstruction**: the transformed bytecode reloads the value by emitting the instructions
  for the expression (``LOAD_FAST inputs; LOAD_CONST 'x'; BINARY_SUBSCR``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class Source:
    def name(self) -> str:
        raise NotImplementedError

    def reconstruct(self, codegen) -> None:
        raise NotImplementedError

    @property
    def root(self) -> Source:
        return self

    def is_local(self) -> bool:
        """Read from the frame's own variables: an argument or local, or a free variable (a
        closure cell — torch reads both through ``L[...]``, and both become dynamic alike)."""
        return isinstance(self.root, (LocalSource, FreeVarSource))

    def placeholder_name(self) -> str:
        """``L['inputs']['x']`` -> ``l_inputs_x_``."""
        s = re.sub(r"[^a-zA-Z0-9]", "_", self.name())
        s = re.sub(r"_+", "_", s)
        return s[0].lower() + s[1:]

    def __str__(self) -> str:
        return self.name()


@dataclass(frozen=True)
class LocalSource(Source):
    local_name: str

    def name(self) -> str:
        return f"L[{self.local_name!r}]"

    def reconstruct(self, codegen) -> None:
        codegen.load_local(self.local_name)


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    def name(self) -> str:
        return f"G[{self.global_name!r}]"

    def reconstruct(self, codegen) -> None:
        codegen.load_global(self.global_name)


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    member: str

    def name(self) -> str:
        return f"{self.base.name()}.{self.member}"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        self.base.reconstruct(codegen)
        codegen.load_attr(self.member)


@dataclass(frozen=True)
class GetItemSource(Source):
    base: Source
    index: object

    def name(self) -> str:
        index = tuple(self.index) if type(self.index).__name__ == "Size" else self.index
        return f"{self.base.name()}[{index!r}]"  # a Size key: the equal tuple

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        self.base.reconstruct(codegen)
        codegen.load_const(self.index)
        codegen.binary_subscr()


@dataclass(frozen=True)
class ClosureSource(Source):
    """The contents of cell ``index`` of a function's ``__closure__``."""

    base: Source
    index: int

    def name(self) -> str:
        return f"{self.base.name()}.__closure__[{self.index}].cell_contents"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        self.base.reconstruct(codegen)
        codegen.load_attr("__closure__")
        codegen.load_const(self.index)
        codegen.binary_subscr()
        codegen.load_attr("cell_contents")


@dataclass(frozen=True)
class FreeVarSource(Source):
    """A free variable of the frame being compiled (its closure cell)."""

    var_name: str

    def name(self) -> str:
        return f"L[{self.var_name!r}]"

    def reconstruct(self, codegen) -> None:
        codegen.load_deref(self.var_name)



class RebuiltIterator:
    """An iterator that was live at a graph break, rebuilt by the transformed code for the
    resume function: the items it had left to give, and its position.  Only the compiler makes
    these (one reference, handed to the resume function), so the tracer may follow it as a
    ``ListIteratorVariable`` without missing an advance made elsewhere — a user's own iterator
    stays opaque.  (torch rebuilds a ``tuple_iterator`` for the same purpose.)"""

    __slots__ = ("items", "pos", "__weakref__")

    def __init__(self, items: tuple):
        self.items = items
        self.pos = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.pos >= len(self.items):
            raise StopIteration
        self.pos += 1
        return self.items[self.pos - 1]

    def __length_hint__(self) -> int:
        return len(self.items) - self.pos


def rebuilt_iterator_getitem(it: RebuiltIterator, index: int):
    """Item ``index`` of what ``it`` has left (torch's ``tuple_iterator_getitem``)."""
    return it.items[it.pos + index]


@dataclass(frozen=True)
class RebuiltIteratorGetItemSource(Source):
    """Item ``index`` still to come from a rebuilt iterator (torch's
    ``TupleIteratorGetItemSource``)."""

    base: Source
    index: int

    def name(self) -> str:
        return f"___rebuilt_iterator_getitem({self.base.name()}, {self.index!r})"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        codegen.load_global_object("___rebuilt_iterator_getitem", rebuilt_iterator_getitem)
        self.base.reconstruct(codegen)
        codegen.load_const(self.index)
        codegen.call(2)


def _as_float_tensor(value):
    """A float argument as the 0-d float64 tensor its graph input is (torch's wrapping)."""
    from .. import float64, tensor

    return tensor(value, dtype=float64)


@dataclass(frozen=True)
class FloatTensorSource(Source):
    """A float argument made a graph input (automatic dynamic for floats): the graph is
    called with ``___as_tensor(L['lr'])``, a 0-d float64 tensor."""

    base: Source

    def name(self) -> str:
        return self.base.name()

    def reconstruct(self, codegen) -> None:
        codegen.load_global_object("___as_tensor", _as_float_tensor)
        self.base.reconstruct(codegen)
        codegen.call(1)


@dataclass(frozen=True)
class TypeSource(Source):
    """``type(obj)`` (torch's ``TypeSource``): where ``type(a).__dict__`` is read from."""

    base: Source

    def name(self) -> str:
        return f"type({self.base.name()})"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        codegen.load_global_object("___type", type)
        self.base.reconstruct(codegen)
        codegen.call(1)


@dataclass(frozen=True)
class NumpyTensorSource(Source):
    """An ndarray (or numpy scalar) of the frame made a graph input (torch's
    ``NumpyTensorSource``): the graph is called with ``___ndarray_as_tensor(L['a'])``, a
    tensor sharing its memory, which TENSOR_MATCH guards."""

    base: Source

    def name(self) -> str:
        return f"___ndarray_as_tensor({self.base.name()})"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        from .variables.numpy import ndarray_as_tensor

        codegen.load_global_object("___ndarray_as_tensor", ndarray_as_tensor)
        self.base.reconstruct(codegen)
        codegen.call(1)


@dataclass(frozen=True)
class TensorSizeSource(Source):
    """``x.size()[d]`` (torch's ``TensorPropertySource(x, SIZE, d)``): the transformed code
    passes ``x.shape[d]`` to the graph."""

    base: Source
    dim: int

    def name(self) -> str:
        return f"{self.base.name()}.size()[{self.dim}]"

    @property
    def root(self) -> Source:
        return self.base.root

    def reconstruct(self, codegen) -> None:
        self.base.reconstruct(codegen)
        codegen.load_attr("shape")
        codegen.load_const(self.dim)
        codegen.binary_subscr()
