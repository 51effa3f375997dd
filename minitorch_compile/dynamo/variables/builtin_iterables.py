"""Builtins that consume an iterable: ``zip``, ``enumerate``, ``iter``/``next``, ``sorted``,
``list``/``tuple``/``set``/``dict``, ``min``/``max``, ``any``/``all``, ``sum``.

Outcome 3 of ``builtin.py``: these are answered *structurally*, by asking the argument's tracker
for its items (``unpack_var_sequence``) and building a new tracker from them, in the tracer —
no graph node is made unless the items themselves are tensors (``sum`` of tensors adds ``add``
nodes, ``max`` of a one-element tensor and a number becomes ``clamp``).

Invariants: items are asked for in the order Python asks for them, and no further — ``any``/
``all`` stop at the deciding item and ``zip`` over a lazy iterator stays lazy, so a generator
never runs ahead of its consumer (``zip``/``enumerate`` over a generator are refused for that
reason).

PyTorch keeps these in ``torch/_dynamo/variables/builtin.py`` (``BuiltinVariable.call_zip``,
``call_min`` ...) and, for ``all``/``any``/``enumerate``/``sum``, as Python polyfills traced
like user code in ``torch/_dynamo/polyfills/builtins.py``.  Here they are the
``IterableBuiltinsMixin`` of ``BuiltinVariable``, found by the same ``_call_<name>`` lookup.
"""

from __future__ import annotations

import builtins
import operator

from ..exc import raise_observed, unimplemented
from .constant import ConstantVariable
from .dicts import ConstDictVariable
from .lists import (
    BaseListVariable,
    GeneratorVariable,
    ListIteratorVariable,
    ListVariable,
    TupleVariable,
)
from .tensor import SymNodeVariable, TensorVariable


def _is_tensor(v) -> bool:
    return isinstance(v, TensorVariable)


class IterableBuiltinsMixin:
    """The ``_call_<builtin>`` handlers of ``BuiltinVariable`` that take an iterable."""

    def _call_enumerate(self, tx, seq, start=None):
        s = start.as_python_constant() if start is not None else 0
        if isinstance(seq, GeneratorVariable):  # lazy: the generator runs as it is consumed
            from .iter import LazyIteratorVariable

            count = [s]

            def step(tx):
                item = seq.next_variable(tx)
                if item is None:
                    return None
                count[0] += 1
                return TupleVariable([ConstantVariable(count[0] - 1), item])
            return LazyIteratorVariable("enumerate", step)
        items = seq.unpack_var_sequence(tx)
        it = ListIteratorVariable([TupleVariable([ConstantVariable(i + s), v])
                                   for i, v in enumerate(items)])
        it.made_by = "enumerate"  # torch cannot rebuild it at a graph break: skips the frame
        return it

    def _call_zip(self, tx, *seqs, **kwargs):
        from .iter import LazyIteratorVariable, next_of_all, to_iter

        if any(isinstance(s, (LazyIteratorVariable, GeneratorVariable)) for s in seqs):
            # lazy: count() may be infinite, map() and a generator run when asked — one item
            # from each in turn, stopping at the first exhausted one, as CPython's zip does
            its = [to_iter(tx, s) for s in seqs]

            def step(tx):
                items = next_of_all(tx, its)
                return None if items is None else TupleVariable(items)
            return LazyIteratorVariable("zip", step)
        lists = [s.unpack_var_sequence(tx) for s in seqs]
        return ListIteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])

    def _call_iter(self, tx, obj):
        if isinstance(obj, ListIteratorVariable):
            return obj
        return ListIteratorVariable(obj.unpack_var_sequence(tx))

    def _call_next(self, tx, it, *default):
        item = it.next_variable(tx) if isinstance(it, ListIteratorVariable) else None
        if item is None:
            if default:
                return default[0]
            raise_observed(StopIteration)  # catchable (contextlib's __exit__ catches it)
        return item

    def _call_reversed(self, tx, seq):
        return ListIteratorVariable(list(reversed(seq.unpack_var_sequence(tx))))

    def _call_tuple(self, tx, seq=None):
        return TupleVariable(seq.unpack_var_sequence(tx) if seq is not None else [])

    def _call_sorted(self, tx, seq, **kwargs):
        """``sorted(d)`` of a dict whose values are tensors (its keys are constants), or of a
        list with a key function: a new list, sorted as ``list.sort`` sorts it."""
        from .sets import SetVariable

        if seq.is_python_constant() and all(v.is_python_constant() for v in kwargs.values()):
            return None  # fold
        if not isinstance(seq, (BaseListVariable, ConstDictVariable, SetVariable)):
            return None
        out = ListVariable(seq.unpack_var_sequence(tx))
        out._sort(tx, kwargs)
        return out

    def _call_list(self, tx, seq=None):
        return ListVariable(seq.unpack_var_sequence(tx) if seq is not None else [])

    def _call_set(self, tx, seq=None):
        from .sets import SetVariable

        return SetVariable.of(tx, seq.unpack_var_sequence(tx) if seq is not None else [])

    def _call_frozenset(self, tx, seq=None):
        from .sets import SetVariable

        return SetVariable.of(tx, seq.unpack_var_sequence(tx) if seq is not None else [], True)

    def _call_dict(self, tx, *args, **kwargs):
        items = {}
        if args:
            src = args[0]
            if isinstance(src, ConstDictVariable):
                items.update(src.items)
            else:
                for pair in src.unpack_var_sequence(tx):
                    k, v = pair.unpack_var_sequence(tx)
                    items[k.as_python_constant()] = v
        items.update(kwargs)
        return ConstDictVariable(items)

    def _reduce_minmax(self, tx, args, kwargs, pick):
        from .builtin import BuiltinVariable  # (builtin.py imports this module)

        items = args[0].unpack_var_sequence(tx) if len(args) == 1 else args
        if any(map(_is_tensor, items)) and not kwargs and items:
            acc = items[0]  # pairwise, into the graph, as torch traces it
            for item in items[1:]:
                acc = _minmax_pair(tx, pick, acc, item)
            return acc
        if any(map(_is_tensor, items)):
            unimplemented(f"{pick.__name__}() over tensors compares their values")
        if len(args) == 1:  # one iterable (a generator, maybe): fold over its items
            return BuiltinVariable(pick)._fold([TupleVariable(items)], kwargs)
        return None

    def _call_min(self, tx, *args, **kwargs):
        return self._reduce_minmax(tx, args, kwargs, builtins.min)

    def _call_max(self, tx, *args, **kwargs):
        return self._reduce_minmax(tx, args, kwargs, builtins.max)

    def _call_any(self, tx, seq):
        return self._short_circuit(tx, seq, True)

    def _call_all(self, tx, seq):
        return self._short_circuit(tx, seq, False)

    def _short_circuit(self, tx, seq, stop_at: bool):
        """``any``/``all`` ask for items one at a time and stop early, as Python does (a
        generator after the deciding item must not run)."""
        it = seq if isinstance(seq, ListIteratorVariable) else \
            ListIteratorVariable(seq.unpack_var_sequence(tx))
        while (item := it.next_variable(tx)) is not None:
            if item.bool_value(tx) is stop_at:
                return ConstantVariable(stop_at)
        return ConstantVariable(not stop_at)

    def _call_sum(self, tx, seq, start=None):
        from .builtin import BuiltinVariable, _wrap_const

        items = seq.unpack_var_sequence(tx)
        if any(map(_is_tensor, items)):
            acc = start if start is not None else ConstantVariable(0)
            for item in items:
                acc = BuiltinVariable(operator.add).call_function(tx, [acc, item], {})
            return acc
        return _wrap_const(builtins.sum([i.as_python_constant() for i in items],
                                        start.as_python_constant() if start else 0))


def _minmax_pair(tx, pick, a, b):
    """``max(a, b)`` with a tensor: ``clamp(t, min=n)`` against a number, ``maximum(a, b)``
    between tensors — as torch's ``BuiltinVariable`` traces it.  Only for one-element tensors
    of static shape (the same shape, for two tensors), where eager's comparison is defined and
    picks a value equal to the traced one; otherwise eager raises, so it is not traced."""
    import minitorch_compile as mtc

    tensors = [v for v in (a, b) if _is_tensor(v)]
    for t in tensors:
        if any(is_symbolic_size(s) for s in t.example_value.shape) or \
                t.example_value.numel() != 1:
            unimplemented(f"{pick.__name__}() of a tensor with more than one element (the "
                          "comparison is ambiguous)")
    if len(tensors) == 2:
        if tuple(a.example_value.shape) != tuple(b.example_value.shape):
            unimplemented(f"{pick.__name__}() of tensors of different shapes")
        fn = mtc.maximum if pick is builtins.max else mtc.minimum
        return tx.output.call(tx, "call_function", fn, [a, b], {})
    t, n = (a, b) if _is_tensor(a) else (b, a)
    if not n.is_python_constant() and not isinstance(n, SymNodeVariable):
        unimplemented(f"{pick.__name__}() of a tensor and {n}")
    key = "min" if pick is builtins.max else "max"
    return tx.output.call(tx, "call_function", mtc.clamp, [t], {key: n})


def is_symbolic_size(s) -> bool:
    return hasattr(s, "hint")
