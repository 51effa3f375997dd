"""``itertools``, ``functools``, ``map``/``filter`` and ``operator`` getters while tracing
(``torch/_dynamo/variables/iter.py``, ``functions.py: FunctoolsPartialVariable``).

Nothing here runs the real ``itertools``: each call becomes a tracker of the iterator it would
return, and the tracer produces its items itself — so items can be tensors (graph values) and a
function passed in (``map(lambda t: t * 2, xs)``) is inlined like any other call.

* Iterators are **lazy**, as in Python: ``LazyIteratorVariable`` computes its next item only
  when its consumer asks (``next``, a ``for`` loop, ``list``), so a function mapped over items
  runs in the order the program asks for them, and ``itertools.count()`` may be infinite — as
  long as nothing asks for all of it (``zip(range(3), count())`` stops after three).
* ``functools.partial`` is a ``PartialVariable``: its call adds the bound arguments and calls
  the function (inlined); it rebuilds as ``functools.partial(fn, *args, **kwargs)``.
* ``functools.reduce`` folds by calling the function item by item.

``HANDLERS`` maps each supported callable (by identity) to its implementation; the builder
wraps those callables in ``StdlibVariable`` (guarded by identity).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import operator

from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import ListIteratorVariable, TupleVariable


class LazyIteratorVariable(ListIteratorVariable):
    """An iterator whose items are made on demand by ``step(tx)`` (``None`` when exhausted)."""

    def __init__(self, name: str, step, infinite: bool = False):
        super().__init__([])
        self.name, self.step, self.infinite, self.done = name, step, infinite, False

    def next_variable(self, tx):
        if self.done:
            return None
        item = self.step(tx)
        if item is None:
            self.done = True
        return item

    def unpack_var_sequence(self, tx) -> list:
        if self.infinite:
            unimplemented(f"iterating the infinite itertools.{self.name}() to its end")
        items = []
        while (item := self.next_variable(tx)) is not None:
            items.append(item)
        return items

    def reconstruct(self, codegen) -> None:
        unimplemented(f"a live {self.name} iterator cannot be rebuilt in the transformed code")

    def __repr__(self) -> str:
        return f"LazyIteratorVariable({self.name})"


def to_iter(tx, vt) -> ListIteratorVariable:
    """``iter(vt)`` as a tracker (an iterator stays itself)."""
    if isinstance(vt, ListIteratorVariable):
        return vt
    return ListIteratorVariable(vt.unpack_var_sequence(tx))


def call(tx, fn, *args):
    return fn.call_function(tx, list(args), {})


# ---------------------------------------------------------------- builtins map / filter
def next_of_all(tx, its) -> list | None:
    """One item from each iterator, in order — ``None`` once any is exhausted (zip and map)."""
    items = []
    for it in its:
        item = it.next_variable(tx)
        if item is None:
            return None
        items.append(item)
    return items


def _map(tx, fn, *seqs):
    its = [to_iter(tx, s) for s in seqs]

    def step(tx):
        items = next_of_all(tx, its)
        return None if items is None else fn.call_function(tx, items, {})
    return LazyIteratorVariable("map", step)


def _filter(tx, fn, seq):
    it = to_iter(tx, seq)
    identity = fn.is_python_constant() and fn.as_python_constant() is None

    def step(tx):
        while (item := it.next_variable(tx)) is not None:
            keep = item if identity else call(tx, fn, item)
            if keep.bool_value(tx):
                return item
        return None
    return LazyIteratorVariable("filter", step)


# ---------------------------------------------------------------- itertools
def _chain(tx, *seqs):
    its = [to_iter(tx, s) for s in seqs]
    state = {"k": 0}

    def step(tx):
        while state["k"] < len(its):
            item = its[state["k"]].next_variable(tx)
            if item is not None:
                return item
            state["k"] += 1
        return None
    return LazyIteratorVariable("chain", step)


def _islice(tx, seq, *bounds):
    values = [b.as_python_constant() for b in bounds]
    s = slice(*values)
    start, stop, stride = s.start or 0, s.stop, s.step or 1
    it = to_iter(tx, seq)
    state = {"i": 0, "next": start}

    def step(tx):
        if stop is not None and state["next"] >= stop:
            return None
        while True:
            item = it.next_variable(tx)
            if item is None:
                return None
            i = state["i"]
            state["i"] += 1
            if i == state["next"]:
                state["next"] += stride
                return item
    return LazyIteratorVariable("islice", step)


def _product(tx, *seqs, repeat=None):
    pools = [s.unpack_var_sequence(tx) for s in seqs] * (
        repeat.as_python_constant() if repeat is not None else 1)
    return ListIteratorVariable([TupleVariable(list(t)) for t in itertools.product(*pools)])


def _choose(kind):
    """``itertools.combinations``/``permutations``: tuples of the trackers themselves (the
    choice depends only on positions, never on values)."""
    def make(tx, seq, r=None):
        pool = seq.unpack_var_sequence(tx)
        n = None if r is None or r.as_python_constant() is None else r.as_python_constant()
        picks = kind(range(len(pool)), *(() if n is None else (n,)))
        return ListIteratorVariable([TupleVariable([pool[i] for i in t]) for t in picks])
    return make


def _accumulate(tx, seq, func=None, initial=None):
    from .builtin import BuiltinVariable

    fn = func if func is not None and not (
        func.is_python_constant() and func.as_python_constant() is None) else \
        BuiltinVariable(operator.add)
    it = to_iter(tx, seq)
    state = {"acc": None if initial is None or (
        initial.is_python_constant() and initial.as_python_constant() is None) else initial,
        "first": True}

    def step(tx):
        if state["first"] and state["acc"] is not None:
            state["first"] = False
            return state["acc"]
        state["first"] = False
        item = it.next_variable(tx)
        if item is None:
            return None
        state["acc"] = item if state["acc"] is None else call(tx, fn, state["acc"], item)
        return state["acc"]
    return LazyIteratorVariable("accumulate", step)


def _count(tx, start=None, step_=None):
    from .builtin import BuiltinVariable

    state = {"v": start if start is not None else ConstantVariable(0)}
    inc = step_ if step_ is not None else ConstantVariable(1)

    def step(tx):
        v = state["v"]
        state["v"] = call(tx, BuiltinVariable(operator.add), v, inc)
        return v
    return LazyIteratorVariable("count", step, infinite=True)


def _repeat(tx, obj, times=None):
    n = times.as_python_constant() if times is not None else None
    state = {"i": 0}

    def step(tx):
        if n is not None and state["i"] >= n:
            return None
        state["i"] += 1
        return obj
    return LazyIteratorVariable("repeat", step, infinite=n is None)


def _zip_longest(tx, *seqs, fillvalue=None):
    fill = fillvalue if fillvalue is not None else ConstantVariable(None)
    lists = [s.unpack_var_sequence(tx) for s in seqs]
    n = max((len(items) for items in lists), default=0)
    return ListIteratorVariable([TupleVariable([items[i] if i < len(items) else fill
                                                for items in lists]) for i in range(n)])


# ---------------------------------------------------------------- functools
def _reduce(tx, fn, seq, *initial):
    it = to_iter(tx, seq)
    if initial:
        acc = initial[0]
    else:
        acc = it.next_variable(tx)
        if acc is None:
            unimplemented("TypeError: reduce() of empty iterable with no initial value")
    while (item := it.next_variable(tx)) is not None:
        acc = call(tx, fn, acc, item)
    return acc


class PartialVariable(VariableTracker):
    """``functools.partial(fn, *args, **kwargs)`` made while tracing, or read from the frame
    (``source``: rebuilt by reading it again)."""

    def __init__(self, fn, args, kwargs, source=None):
        super().__init__(source)
        self.fn, self.args, self.kwargs = fn, list(args), dict(kwargs)

    def python_type(self) -> type:
        return functools.partial

    def call_function(self, tx, args, kwargs):
        return self.fn.call_function(tx, self.args + list(args), {**self.kwargs, **kwargs})

    def var_getattr(self, tx, name):
        if name == "func":
            return self.fn
        if name == "args":
            return TupleVariable(self.args)
        if name == "keywords":
            from .dicts import ConstDictVariable

            return ConstDictVariable(self.kwargs)
        unimplemented(f"functools.partial attribute {name!r}")

    def reconstruct(self, codegen) -> None:
        if self.source is not None:
            self.source.reconstruct(codegen)
            return
        codegen.load_global_object("___functools_partial", functools.partial)
        codegen.reconstruct(self.fn)
        for a in self.args:
            codegen.reconstruct(a)
        for v in self.kwargs.values():
            codegen.reconstruct(v)
        codegen.call(1 + len(self.args) + len(self.kwargs), tuple(self.kwargs))

    def __repr__(self) -> str:
        return f"PartialVariable({self.fn!r})"


def _partial(tx, fn, *args, **kwargs):
    if isinstance(fn, PartialVariable):  # partial(partial(f, a), b) flattens, as in Python
        return PartialVariable(fn.fn, fn.args + list(args), {**fn.kwargs, **kwargs})
    return PartialVariable(fn, args, kwargs)


# ---------------------------------------------------------------- operator getters
class GetterVariable(VariableTracker):
    """``operator.itemgetter(*keys)`` / ``attrgetter(*names)``: calling it reads them."""

    def __init__(self, kind: str, keys: list):
        super().__init__()
        self.kind, self.keys = kind, keys

    def call_function(self, tx, args, kwargs):
        from .builtin import BuiltinVariable

        (obj,) = args
        if self.kind == "item":
            get = [BuiltinVariable(operator.getitem).call_function(tx, [obj, ConstantVariable(k)],
                                                                   {}) for k in self.keys]
        else:
            get = []
            for name in self.keys:
                v = obj
                for part in name.split("."):
                    v = v.var_getattr(tx, part)
                get.append(v)
        return get[0] if len(get) == 1 else TupleVariable(get)

    def as_python_constant(self):
        make = operator.itemgetter if self.kind == "item" else operator.attrgetter
        return make(*self.keys)


def _getter(kind):
    def make(tx, *keys):
        return GetterVariable(kind, [k.as_python_constant() for k in keys])
    return make


HANDLERS = {
    builtins.map: _map, builtins.filter: _filter,
    itertools.chain: _chain, itertools.islice: _islice, itertools.product: _product,
    itertools.accumulate: _accumulate, itertools.count: _count, itertools.repeat: _repeat,
    itertools.zip_longest: _zip_longest,
    itertools.combinations: _choose(itertools.combinations),
    itertools.permutations: _choose(itertools.permutations),
    functools.reduce: _reduce, functools.partial: _partial,
    operator.itemgetter: _getter("item"), operator.attrgetter: _getter("attr"),
}


class StdlibVariable(VariableTracker):
    """One of ``HANDLERS``' callables, read from the frame (guarded by identity)."""

    def __init__(self, fn, source=None):
        super().__init__(source)
        self.fn = fn

    def as_python_constant(self):
        return self.fn

    def call_function(self, tx, args, kwargs):
        try:
            return HANDLERS[self.fn](tx, *args, **kwargs)
        except TypeError as e:  # wrong arguments: eager mode raises the same
            unimplemented(f"TypeError calling {self.fn.__qualname__}: {e}")

    def var_getattr(self, tx, name):
        if self.fn is itertools.chain and name == "from_iterable":
            return _FromIterable()
        return super().var_getattr(tx, name)

    def __repr__(self) -> str:
        return f"StdlibVariable({self.fn.__qualname__})"


class _FromIterable(VariableTracker):
    def call_function(self, tx, args, kwargs):
        return _chain(tx, *args[0].unpack_var_sequence(tx))
