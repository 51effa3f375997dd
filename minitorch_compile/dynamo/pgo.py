"""Automatic dynamic: which inputs of a compile become symbols, decided from earlier compiles.

The first compile of a frame specializes on every size and number it sees.  After each
compile, ``record_frame_state`` remembers the input sizes (and int/float arguments) in the
code's *frame state*; the next compile of the same code compares against it:

* a tensor dim whose size changed (or was marked with ``mark_dynamic``) becomes a symbol
  (``dynamic_dims``; ``dynamic=True`` makes every dim of size >= 2 one, ``dynamic=False`` none);
* an int argument whose value changed becomes a ``SymInt`` graph input (``dynamic_int``; 0 and
  1 stay constants, as torch specializes them);
* a float argument whose value changed becomes a 0-d float64 tensor input read with ``item()``
  into a backed ``SymFloat`` (``dynamic_float``, torch 2.13's automatic dynamic for floats).

So a second size recompiles once, into a graph general enough for all later sizes.

``AutomaticDynamic`` is a mixin of ``OutputGraph`` (whose ``graph``, ``guards``, ``shape_env``,
``frame_state`` and ``new_placeholder`` it uses).  PyTorch keeps the frame state and the "did
it change?" decision in ``torch/_dynamo/pgo.py`` (``FrameStateSizeEntry``,
``process_automatic_dynamic``) and applies it in ``torch/_dynamo/variables/builder.py`` when a
graph input is wrapped.
"""

from __future__ import annotations

from .._tensor import Tensor
from .variables.tensor import SymNodeVariable, TensorVariable


def _same_float(a, b) -> bool:
    return a == b or (a != a and b != b)  # NaN is the same NaN


def _float_tensor(value: float) -> Tensor:
    from .. import float64, tensor

    return tensor(value, dtype=float64)


class AutomaticDynamic:
    """The automatic-dynamic methods of ``OutputGraph``."""

    def dynamic_dims(self, source, value: Tensor) -> tuple:
        """Which dims of an input tensor become symbols.

        ``dynamic=False``: none.  ``dynamic=True``: every dim of size >= 2.  Otherwise
        *automatic dynamic*: a dim becomes dynamic once this code was compiled before with a
        different size at that dim (the first compile is static), or when
        ``mark_dynamic(t, dim)`` asked for it.
        """
        from . import config

        if self.dynamic is False:
            return ()
        shape = tuple(value._data.shape)
        marked = set(getattr(value, "_dynamo_dynamic_indices", ()))
        if self.dynamic is True:
            marked |= set(range(len(shape)))
        prev = self.frame_state.get(source.name())
        if prev is not None and len(prev[0]) == len(shape) and config.automatic_dynamic_shapes:
            old_shape, old_dynamic = prev
            marked |= {d for d, (a, b) in enumerate(zip(old_shape, shape)) if a != b}
            marked |= set(old_dynamic)
        return tuple(sorted(d for d in marked if shape[d] >= 2))

    def dynamic_int(self, tx, source, value: int):
        """An int argument becomes a symbol (a graph input) once this code was compiled before
        with another value for it — torch's automatic dynamic for ints; None keeps it static."""
        key = f"int {source.name()}"
        prev = self.frame_state.get(key)
        self.int_inputs[key] = value
        from . import config
        from .output_graph import GraphArg  # (output_graph.py imports this module)

        if self.dynamic is False or (self.dynamic is not True and (
                prev is None or prev == value or not config.automatic_dynamic_shapes)):
            return None
        self.guards.add("TYPE_MATCH", source, value=value)
        name = source.placeholder_name()
        node = self.new_placeholder(name)
        sym = self.shape_env.create_int_symbol(source.name(), value)
        node.meta["example_value"] = sym
        node.meta["grapharg"] = source
        vt = SymNodeVariable(node, sym)
        self.expr_to_proxy[sym.expr] = vt
        self.graphargs.append(GraphArg(source, value, node, sym, vt))
        self.int_inputs[key] = "dynamic"
        return vt

    def dynamic_float(self, tx, source, value: float):
        """A float argument becomes a graph input once this code was compiled before with
        another value for it (torch 2.13's automatic dynamic for floats); None keeps it a
        constant.  As torch, the graph takes it as a 0-d float64 tensor (the call wraps the
        float) and reads it with ``item()`` into a backed ``SymFloat`` (``zf0``), so every
        backend gets a tensor; a decision on it is guarded (``L['lr'] > 1.0``)."""
        from . import config
        from .output_graph import GraphArg
        from .source import FloatTensorSource

        key = f"float {source.name()}"
        prev = self.frame_state.get(key)
        self.int_inputs[key] = value
        if self.dynamic is False or source.name() in getattr(self, "specialized_floats", ()) \
                or (self.dynamic is not True and (prev is None or _same_float(prev, value) or
                                                  not config.automatic_dynamic_shapes)):
            return None
        self.guards.add("TYPE_MATCH", source, value=value)
        wrapped = FloatTensorSource(source)
        example = _float_tensor(value)
        node = self.new_placeholder(source.placeholder_name())
        fake = self.fake_mode.from_tensor(example)
        node.meta["example_value"] = fake
        node.meta["grapharg"] = source
        self.graphargs.append(GraphArg(wrapped, example, node, fake,
                                       TensorVariable(node, fake)))
        sym = self.scalar_env.create_float_symbol(source.name(), value)
        item = self.graph.call_method("item", (node,))
        item.meta["example_value"] = sym
        item.meta["stack_trace"] = tx.current_user_line()
        self.int_inputs[key] = "dynamic"
        return SymNodeVariable(item, sym)

    def record_frame_state(self) -> None:
        """Remember the input sizes (and int arguments) of this compile for automatic
        dynamic."""
        for key, value in self.int_inputs.items():
            self.frame_state[key] = value
        for arg in self.graphargs:
            if not hasattr(arg.example, "_data") or type(arg.source).__name__ == \
                    "FloatTensorSource":  # recorded under "float <source>"
                continue
            dyn = tuple(d for d, s in enumerate(arg.fake.shape) if hasattr(s, "hint"))
            self.frame_state[arg.source.name()] = (tuple(arg.example._data.shape), dyn)
