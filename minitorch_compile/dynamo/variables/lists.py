"""Mutable sequences — lists and deques — and the iterators over known items and generators.
The immutable ones (tuples, ``Size``, namedtuples, ranges, slices) are in ``tuples.py``
(re-exported here).

Containers hold trackers, not values, so a list can mix constants and graph tensors.  A list
built during tracing may be mutated freely; mutating a list that came from the frame's inputs
(it has a source) is a side effect: ``side_effects.py`` records it and the transformed code
replays it (``lst[:] = [...]``) after the graph.
"""

from __future__ import annotations

from bytecode import Instr

from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable


class BaseListVariable(VariableTracker):
    python_cls: type = list

    def __init__(self, items, source=None):
        super().__init__(source)
        self.items = list(items)
        self.mutated = False

    def python_type(self) -> type:
        return self.python_cls

    def as_python_constant(self):
        return self.python_cls([v.as_python_constant() for v in self.items])

    def has_unpack_var_sequence(self, tx) -> bool:
        return True

    def unpack_var_sequence(self, tx) -> list:
        return list(self.items)

    def bool_value(self, tx) -> bool:
        return bool(self.items)

    def getitem(self, tx, index_vt) -> VariableTracker:
        index = index_vt.as_python_constant()
        if isinstance(index, slice):
            return self.new_like(self.items[index])
        try:
            return self.items[index]
        except IndexError:
            unimplemented(f"{self.python_cls.__name__} index {index} out of range")
        except TypeError:
            unimplemented(f"{self.python_cls.__name__} index of type {type(index).__name__}")

    def new_like(self, items) -> BaseListVariable:
        return type(self)(items)

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__":
            return self.getitem(tx, args[0])
        if name == "__len__":
            return ConstantVariable(len(self.items))
        if name == "__contains__":
            return ConstantVariable(self._contains(args[0]))
        if name in ("index", "count"):
            consts = [i.as_python_constant() for i in self.items]
            return ConstantVariable(getattr(consts, name)(args[0].as_python_constant()))
        unimplemented(f"{self.python_cls.__name__}.{name} is not supported")

    def _contains(self, target) -> bool:
        """``target in items`` as Python does it: ``item is target or item == target``, item by
        item; comparing with a tensor by value needs its data."""
        proxy = getattr(target, "proxy", None)
        for item in self.items:
            if item is target or (proxy is not None and getattr(item, "proxy", None) is proxy):
                return True
            if not (item.is_python_constant() and target.is_python_constant()):
                unimplemented(f"`in` compares {target} with {item} by value (data-dependent)")
            if item.as_python_constant() == target.as_python_constant():
                return True
        return False

    def reconstruct(self, codegen) -> None:
        if self.source is not None:  # keep the identity of an input container (its
            self.source.reconstruct(codegen)  # mutations are replayed: side_effects.py
            return
        for item in self.items:
            codegen.reconstruct(item)
        codegen.build(self.python_cls, len(self.items))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.items!r})"


class ListVariable(BaseListVariable):
    python_cls = list

    def _mutate(self, tx) -> None:
        self.mutated = True
        tx.output.side_effects.mutation(self, "list")

    def _sort(self, tx, kwargs) -> None:
        """``sort(key=None, reverse=False)`` of constants (a key function is inlined)."""
        key = kwargs.get("key")
        rev = kwargs.get("reverse", ConstantVariable(False)).as_python_constant()
        keys = [key.call_function(tx, [i], {}) if key is not None and not (
            key.is_python_constant() and key.as_python_constant() is None) else i
            for i in self.items]
        if not all(k.is_python_constant() for k in keys):
            unimplemented("list.sort() over values not known at compile time")
        order = sorted(range(len(self.items)), key=lambda i: keys[i].as_python_constant(),
                       reverse=rev)
        self._mutate(tx)
        self.items[:] = [self.items[i] for i in order]

    def call_method(self, tx, name, args, kwargs):
        if name == "append":
            self._mutate(tx)
            self.items.append(args[0])
            return ConstantVariable(None)
        if name == "extend":
            self._mutate(tx)
            self.items.extend(args[0].unpack_var_sequence(tx))
            return ConstantVariable(None)
        if name == "insert":
            self._mutate(tx)
            self.items.insert(args[0].as_python_constant(), args[1])
            return ConstantVariable(None)
        if name == "pop":
            self._mutate(tx)
            return self.items.pop(args[0].as_python_constant() if args else -1)
        if name == "__setitem__":
            self._mutate(tx)
            index = args[0].as_python_constant()
            if isinstance(index, slice):
                self.items[index] = args[1].unpack_var_sequence(tx)
            else:
                self.items[index] = args[1]
            return ConstantVariable(None)
        if name == "reverse":
            self._mutate(tx)
            self.items.reverse()
            return ConstantVariable(None)
        if name == "clear":
            self._mutate(tx)
            self.items.clear()
            return ConstantVariable(None)
        if name == "__delitem__":
            index = args[0].as_python_constant()
            self._mutate(tx)
            del self.items[index]
            return ConstantVariable(None)
        if name == "remove":
            target = args[0]
            for i, item in enumerate(self.items):
                if BaseListVariable([item])._contains(target):
                    self._mutate(tx)
                    del self.items[i]
                    return ConstantVariable(None)
            unimplemented("ValueError: list.remove(x): x not in list, inside traced code")
        if name == "sort":
            self._sort(tx, kwargs)
            return ConstantVariable(None)
        if name == "copy":
            return ListVariable(list(self.items))
        return super().call_method(tx, name, args, kwargs)


class DequeVariable(ListVariable):
    """``collections.deque(items, maxlen)`` made while tracing.

    With a ``maxlen``, a full deque drops from the other end, as Python's does: ``append`` and
    ``extend`` drop from the left, ``appendleft`` and ``extendleft`` from the right; ``insert``
    into a full deque is the user's ``IndexError`` (eager mode raises it)."""

    import collections as _c
    python_cls = _c.deque
    del _c

    def __init__(self, items, source=None, maxlen: int | None = None):
        super().__init__(items, source)
        self.maxlen = maxlen
        self._trim(left=True)

    def new_like(self, items):
        return DequeVariable(items, maxlen=self.maxlen)

    def _trim(self, left: bool) -> None:
        """Drop items beyond ``maxlen`` from the left (or the right)."""
        if self.maxlen is not None and len(self.items) > self.maxlen:
            extra = len(self.items) - self.maxlen
            self.items[:] = self.items[extra:] if left else self.items[:self.maxlen]

    def var_getattr(self, tx, name):
        if name == "maxlen":
            return ConstantVariable(self.maxlen)
        return super().var_getattr(tx, name)

    def call_method(self, tx, name, args, kwargs):
        if name == "insert" and self.maxlen is not None and len(self.items) >= self.maxlen:
            unimplemented("IndexError: deque already at its maximum size, inside traced code")
        result = self._call_method(tx, name, args, kwargs)
        if name in ("append", "extend", "__iadd__"):
            self._trim(left=True)
        elif name in ("appendleft", "extendleft"):
            self._trim(left=False)
        return result

    def _call_method(self, tx, name, args, kwargs):
        if name == "appendleft":
            self._mutate(tx)
            self.items.insert(0, args[0])
            return ConstantVariable(None)
        if name == "popleft":
            if not self.items:
                unimplemented("IndexError: pop from an empty deque, inside traced code")
            self._mutate(tx)
            return self.items.pop(0)
        if name == "extendleft":
            self._mutate(tx)
            for item in args[0].unpack_var_sequence(tx):
                self.items.insert(0, item)
            return ConstantVariable(None)
        if name == "rotate":
            n = args[0].as_python_constant() if args else 1
            self._mutate(tx)
            if self.items:
                n %= len(self.items)
                self.items[:] = self.items[-n:] + self.items[:-n] if n else self.items
            return ConstantVariable(None)
        if name == "copy":
            return DequeVariable(list(self.items), maxlen=self.maxlen)
        if name in ("insert", "sort", "index") or (name == "__getitem__" and isinstance(
                args[0].as_python_constant(), slice)):
            if name == "sort" or name == "__getitem__":
                unimplemented(f"deque.{name} is not supported")
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, codegen) -> None:
        if self.source is not None:
            self.source.reconstruct(codegen)
            return
        codegen.load_global_object("___deque", self.python_cls)
        for item in self.items:
            codegen.reconstruct(item)
        codegen.build(list, len(self.items))
        codegen.load_const(self.maxlen)
        codegen.call(2)  # deque(items, maxlen)


class ListIteratorVariable(VariableTracker):
    """An iterator over known items (lists, ranges, dict keys, zip, enumerate, ...)."""

    def __init__(self, items, index: int = 0):
        super().__init__()
        self.items = list(items)
        self.index = index
        self.made_by = None  # "enumerate": torch 2.13 skips a frame breaking with it live

    def python_type(self) -> type:  # for isinstance checks: an iterator, not a container
        return type(iter(()))

    def next_variable(self, tx):
        """The next item, or ``None`` when exhausted (the tracer ends the loop)."""
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        self.index += 1
        return item

    def has_unpack_var_sequence(self, tx) -> bool:
        return True

    def unpack_var_sequence(self, tx) -> list:
        rest = self.items[self.index:]
        self.index = len(self.items)
        return rest

    def call_method(self, tx, name, args, kwargs):
        if name == "__next__":
            item = self.next_variable(tx)
            if item is None:
                unimplemented("StopIteration raised by next() inside traced code")
            return item
        return super().call_method(tx, name, args, kwargs)

    def reconstruct(self, codegen) -> None:
        """Live at a graph break: rebuilt at its position as a ``RebuiltIterator`` over what it
        had left to give (torch's ``ListIteratorVariable.reconstruct`` builds a tuple
        iterator), which the resume function's tracer follows again."""
        if type(self) is not ListIteratorVariable:
            super().reconstruct(codegen)
            return
        rebuilt = codegen.__dict__.setdefault("rebuilt_iterators", set())
        if id(self) in rebuilt:  # two names for one iterator: two copies would diverge
            unimplemented("an iterator live at a graph break under two names")
        rebuilt.add(id(self))
        from ..source import RebuiltIterator

        rest = self.items[self.index:]
        codegen.load_global_object("___rebuilt_iterator", RebuiltIterator)
        for item in rest:
            item.reconstruct(codegen)
        codegen.append(Instr("BUILD_TUPLE", len(rest)))
        codegen.call(1)

    def __repr__(self) -> str:
        return f"ListIteratorVariable({len(self.items) - self.index} left)"


class GeneratorVariable(ListIteratorVariable):
    """A generator being traced lazily: each ``next`` resumes its inlined bytecode until the
    next ``yield`` — so a consumer that stops early never traces the rest, as in Python."""

    def __init__(self, gen_tx):
        super().__init__([])
        self.gen_tx = gen_tx  # an InliningGeneratorInstructionTranslator

    def next_variable(self, tx):
        return self.gen_tx.next_item()

    def unpack_var_sequence(self, tx) -> list:
        items = []
        while (item := self.next_variable(tx)) is not None:
            items.append(item)
        return items

    def __repr__(self) -> str:
        return f"GeneratorVariable({self.gen_tx.code.co_name})"


from .tuples import (  # noqa: E402, F401 - they subclass BaseListVariable above
    NamedTupleVariable,
    RangeVariable,
    SizeVariable,
    SliceVariable,
    TupleVariable,
)
