"""``nn.Module``s in the tracer (``variables/nn_module.py``).

A module read from the frame is guarded by its type (``TYPE_MATCH``), not its identity: torch
2.13 inlines modules (``inline_inbuilt_nn_modules``), its parameters are graph inputs and what
the trace reads from it is guarded where it is read, so a second instance of the same class
reuses the graph.  Its ``training`` flag is guarded (``CONSTANT_MATCH``) only where the traced
code reads it before writing it, as in torch.  An answer that depends on which module object it
is guards that: ``a is b`` by ``ID_MATCH``, a submodule shared by two attributes (one tracker,
as for any mutable object) by ``DUPLICATE_INPUT``, and distinct parameters by
``NO_TENSOR_ALIASING``.
Calling it inlines ``mod.forward`` with ``self`` bound to the tracker (guarded: the method is
the class's function, and no forward or backward hooks were registered since).  A module with
full backward hooks (or backward pre-hooks) is a graph break at its call, as in torch without
compiled autograd: the call runs eagerly, so ``_call_impl`` wraps its inputs and outputs in the
hook's identity nodes.  Its attributes
are read through torch's paths, so sources — and therefore placeholder names — match torch's:
a parameter is ``L['mod']._modules['lin']._parameters['weight']``, which becomes the graph input
``l_mod_modules_lin_parameters_weight_``.  Containers (``Sequential``, ``ModuleList``,
``ModuleDict``) iterate, index and slice over their children at compile time, guarded on the
keys of their ``_modules`` (so appending a layer recompiles); a ``ParameterList`` iterates,
indexes and counts its parameters the same way, guarded on the keys of its ``_parameters``.
"""

from __future__ import annotations

import inspect
import types

from ..exc import NotConstant, unimplemented
from ..source import AttrSource, GetItemSource
from .base import VariableTracker
from .constant import ConstantVariable
from .lists import TupleVariable

# the hook tables a call depends on: guarded by length, so a hook registered later recompiles
_HOOK_TABLES = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")


def _sub(source, container: str, key):
    return GetItemSource(AttrSource(source, container), key) if source is not None else None



def _user_defined(cls: type, name: str) -> bool:
    """Is ``cls.<name>`` a Python function of the program's (not the library's containers')?"""
    fn = getattr(cls, name, None)
    return isinstance(fn, types.FunctionType) and not (
        fn.__module__ or "").startswith("minitorch_compile")

class NNModuleVariable(VariableTracker):
    def __init__(self, module, source=None):
        super().__init__(source)
        self.module = module

    def python_type(self) -> type:
        return type(self.module)

    def as_python_constant(self):
        return self.module

    def _guard_children(self, tx) -> None:
        """Iterating, indexing or counting children depends on *which* children there are: a
        layer appended to a ModuleList later must recompile (DICT_KEYS on ``_modules``)."""
        if self.source is not None:
            tx.output.guards.add("DICT_KEYS", AttrSource(self.source, "_modules"),
                                 value=self.module._modules)

    def _child(self, tx, name):
        from .builder import VariableBuilder

        return VariableBuilder(tx, _sub(self.source, "_modules", name))(
            self.module._modules[name])

    def store_attr(self, tx, name, value) -> None:
        """``self.name = value`` on a module: recorded and replayed (``Module.__setattr__``
        then runs for real).  Parameters, submodules and ``training`` are not reassigned here."""
        from .tensor import TensorVariable

        d = self.module.__dict__
        cls_attr = inspect.getattr_static(type(self.module), name, None)
        if name in d.get("_parameters", {}) or name in d.get("_modules", {}) or \
                name == "training" or hasattr(cls_attr, "__set__") or \
                isinstance(value, NNModuleVariable) or (
                    isinstance(value, TensorVariable) and name not in d.get("_buffers", {})
                    and issubclass(value.class_type, _Parameter())):
            unimplemented(f"assigning {name!r} of a Module (a parameter, submodule, training "
                          "flag or property) inside compiled code")
        if type(self.module).__setattr__ is not _Module().__setattr__:
            unimplemented(f"assigning {name!r} of a Module with its own __setattr__")
        tx.output.side_effects.store_attr(self, name, value)

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder

        written = tx.output.side_effects.load_attr(self, name)
        if written is not None:  # assigned earlier in this trace
            return written
        m = self.module
        d = m.__dict__
        # Python's lookup order: the class's attributes and the instance dict come first;
        # Module.__getattr__ (parameters, buffers, submodules) only when both miss — so a
        # method of the class shadows a submodule of the same name, as in eager mode
        if name not in d and inspect.getattr_static(type(m), name, None) is not None:
            return self._class_attribute(tx, name)
        if name in d.get("_parameters", {}):
            return VariableBuilder(tx, _sub(self.source, "_parameters", name))(
                d["_parameters"][name])
        if name in d.get("_buffers", {}):
            return VariableBuilder(tx, _sub(self.source, "_buffers", name))(d["_buffers"][name])
        if name in d.get("_modules", {}):
            return self._child(tx, name)
        if name == "training":  # guarded only when read (torch too): a function that calls
            # model.eval() before its forward reads the flag it wrote, and guards nothing
            if self.source is None:
                return ConstantVariable(m.training)
            return VariableBuilder(tx, AttrSource(self.source, "training"))(m.training)
        src = AttrSource(self.source, name) if self.source is not None else None
        if name in d:
            return VariableBuilder(tx, src)(d[name])
        return self._class_attribute(tx, name)

    def _class_attribute(self, tx, name):
        """``name`` found on the module's class: a property's value, a method bound to the
        module, a static or class method, a data descriptor's value or a constant."""
        from .builder import VariableBuilder
        from .functions import UserFunctionVariable, UserMethodVariable

        m = self.module
        src = AttrSource(self.source, name) if self.source is not None else None
        # the class attribute as stored (getattr would turn a staticmethod into a function)
        cls_attr = inspect.getattr_static(type(m), name, None)
        if isinstance(cls_attr, property):
            return UserFunctionVariable(cls_attr.fget).call_function(tx, [self], {})
        if isinstance(cls_attr, types.FunctionType):
            if src is not None:  # the class's method could be patched, or shadowed later
                tx.output.guards.add("ID_MATCH", AttrSource(src, "__func__"), value=cls_attr)
            return UserMethodVariable(cls_attr, self)
        if isinstance(cls_attr, staticmethod):
            return VariableBuilder(tx, src)(cls_attr.__func__)
        if isinstance(cls_attr, classmethod):
            from .user_defined import UserDefinedClassVariable

            return UserMethodVariable(cls_attr.__func__, UserDefinedClassVariable(type(m)))
        if name == "__class__" or (cls_attr is not None and hasattr(type(cls_attr), "__get__")
                                   and not callable(cls_attr)):
            # a data descriptor (``__class__``, a slot): its value, not the descriptor — the
            # descriptor's own ``__name__`` would be the attribute's name
            return VariableBuilder(tx, src)(getattr(m, name))
        if cls_attr is not None and not callable(cls_attr):
            return VariableBuilder(tx, src)(cls_attr)
        unimplemented(f"attribute {name!r} of module {type(m).__name__} is not supported")

    def call_function(self, tx, args, kwargs):
        from ...nn import Module

        m = self.module
        if type(m).__call__ is not Module.__call__:
            unimplemented(f"module {type(m).__name__} overrides __call__")
        if m._forward_hooks or m._forward_pre_hooks:
            unimplemented(f"module {type(m).__name__} has forward hooks")
        if m._backward_hooks or m._backward_pre_hooks:  # torch's break (its gb0083): without
            unimplemented("Module-level backwards hooks require compiled autograd.")  # it
        if self.source is not None:  # a hook registered later must not be skipped
            for hooks in _HOOK_TABLES:
                tx.output.guards.add("DICT_LENGTH", AttrSource(self.source, hooks),
                                     value=getattr(m, hooks))
        # Module.__call__ runs self.forward: the class's, or one assigned to the instance
        return self.var_getattr(tx, "forward").call_function(tx, args, kwargs)

    def _parameter_list(self, tx) -> list:
        """A ``ParameterList``'s items: its parameters ``"0"``, ``"1"``, ... in order, each
        read as an attribute (one graph input per parameter), the keys guarded."""
        table = self.module._parameters
        if self.source is not None:
            tx.output.guards.add("DICT_KEYS", AttrSource(self.source, "_parameters"),
                                 value=table)
        return [self.var_getattr(tx, n) for n in table if table[n] is not None]

    def call_method(self, tx, name, args, kwargs):
        from ...nn import ModuleDict, ParameterList

        m = self.module
        if isinstance(m, ParameterList) and name in ("__getitem__", "__len__"):
            items = self._parameter_list(tx)
            if name == "__len__":
                return ConstantVariable(len(items))
            index = args[0].as_python_constant()
            if isinstance(index, slice):
                unimplemented("slicing a ParameterList inside compiled code")
            return items[index]
        if name in ("__getitem__", "__len__") and _user_defined(type(m), name):
            # a module class of the program's own with `self[i]` / `len(self)`: its method
            return self.var_getattr(tx, name).call_function(tx, args, kwargs)
        if name in ("__getitem__", "__len__", "children", "values", "keys", "items",
                    "named_children"):
            self._guard_children(tx)
        if name == "__getitem__":
            key = args[0].as_python_constant()
            names = list(m._modules)
            if isinstance(m, ModuleDict):
                return self._child(tx, key)
            if isinstance(key, slice):
                return ModuleSliceVariable([self._child(tx, n) for n in names[key]], type(m))
            return self._child(tx, names[key])
        if name == "__len__":
            return ConstantVariable(len(m._modules))
        if name in ("children", "values"):
            return TupleVariable([self._child(tx, n) for n in m._modules])
        if name == "keys":
            return TupleVariable([ConstantVariable(n) for n in m._modules])
        if name in ("items", "named_children"):
            return TupleVariable([TupleVariable([ConstantVariable(n), self._child(tx, n)])
                                  for n in m._modules])
        handler = _STATE_METHODS.get(name)
        if handler is not None and not isinstance(self, ModuleSliceVariable):
            return handler(self, tx, *args, **kwargs)
        if name in ("register_buffer", "to", "apply"):
            unimplemented(f"Module.{name}() inside compiled code is not supported")
        return self.var_getattr(tx, name).call_function(tx, args, kwargs)

    def has_unpack_var_sequence(self, tx) -> bool:
        from ...nn import ModuleDict, ModuleList, ParameterList, Sequential

        return isinstance(self.module, (Sequential, ModuleList, ModuleDict, ParameterList))

    def unpack_var_sequence(self, tx) -> list:
        from ...nn import ModuleDict, ParameterList

        if not self.has_unpack_var_sequence(tx):
            unimplemented(f"iterating over a {type(self.module).__name__}")
        if isinstance(self.module, ParameterList):
            return self._parameter_list(tx)
        self._guard_children(tx)
        if isinstance(self.module, ModuleDict):
            return [ConstantVariable(n) for n in self.module._modules]
        return [self._child(tx, n) for n in self.module._modules]

    def __repr__(self) -> str:
        return f"NNModuleVariable({type(self.module).__name__})"


class ModuleSliceVariable(TupleVariable):
    """``self.layers[1:]``: the children it holds, to iterate over and index (Python makes a
    new container of the same class; it is never rebuilt in the transformed code)."""

    def __init__(self, items, container_cls: type):
        super().__init__(items)
        self.container_cls = container_cls

    def python_type(self) -> type:
        return self.container_cls

    def as_python_constant(self):
        raise NotConstant("a slice of a module container is not a Python constant")

    def reconstruct(self, codegen) -> None:
        unimplemented("returning a slice of a module container from a compiled frame")


def _Module():
    from ...nn import Module

    return Module


def _Parameter():
    from ...nn import Parameter

    return Parameter


# ---------------------------------------------------------------- module state
# parameters(), buffers(), modules(), state_dict(), train()/eval() — iterated in the tracer over
# the module tree, every ``_modules``/``_parameters``/``_buffers`` dict guarded on its keys
# (``DICT_KEYS``), so adding a layer or a parameter recompiles.  The results are lists of the
# same trackers attribute reads give (same sources, same graph inputs).

def _named_modules(vt, tx, memo=None, prefix: str = "", remove_duplicate: bool = True):
    memo = set() if memo is None else memo
    if remove_duplicate and id(vt.module) in memo:
        return []
    memo.add(id(vt.module))
    vt._guard_children(tx)
    out = [(prefix, vt)]
    for name, child in vt.module._modules.items():
        if child is None:
            continue
        sub = f"{prefix}.{name}" if prefix else name
        out += _named_modules(vt._child(tx, name), tx, memo, sub, remove_duplicate)
    return out


def _named_members(vt, tx, kind: str, prefix="", recurse=True, remove_duplicate=True,
                   persistent_only=False):
    from ..source import AttrSource

    mods = _named_modules(vt, tx, prefix=prefix) if recurse else [(prefix, vt)]
    out, seen = [], set()
    for mod_prefix, mvt in mods:
        table = mvt.module.__dict__[kind]
        if mvt.source is not None:  # which members there are is part of the answer
            tx.output.guards.add("DICT_KEYS", AttrSource(mvt.source, kind), value=table)
        for name, value in table.items():
            if value is None or (remove_duplicate and id(value) in seen):
                continue
            if persistent_only and name in mvt.module._non_persistent_buffers_set:
                continue
            seen.add(id(value))
            out.append((f"{mod_prefix}.{name}" if mod_prefix else name,
                        mvt.var_getattr(tx, name)))
    return out


def _const(v):
    return v.as_python_constant() if isinstance(v, VariableTracker) else v


def _pairs(items):
    from .lists import ListIteratorVariable

    return ListIteratorVariable([TupleVariable([ConstantVariable(n), v]) for n, v in items])


def _parameters(vt, tx, recurse=True):
    from .lists import ListIteratorVariable

    return ListIteratorVariable([v for _, v in _named_members(vt, tx, "_parameters",
                                                              recurse=_const(recurse))])


def _named_parameters(vt, tx, prefix="", recurse=True, remove_duplicate=True):
    return _pairs(_named_members(vt, tx, "_parameters", _const(prefix), _const(recurse),
                                 _const(remove_duplicate)))


def _buffers(vt, tx, recurse=True):
    from .lists import ListIteratorVariable

    return ListIteratorVariable([v for _, v in _named_members(vt, tx, "_buffers",
                                                              recurse=_const(recurse))])


def _named_buffers(vt, tx, prefix="", recurse=True, remove_duplicate=True):
    return _pairs(_named_members(vt, tx, "_buffers", _const(prefix), _const(recurse),
                                 _const(remove_duplicate)))


def _modules_(vt, tx):
    from .lists import ListIteratorVariable

    return ListIteratorVariable([m for _, m in _named_modules(vt, tx)])


def _named_modules_(vt, tx, memo=None, prefix="", remove_duplicate=True):
    if memo is not None:
        unimplemented("Module.named_modules(memo=...) inside compiled code")
    return _pairs(_named_modules(vt, tx, None, _const(prefix), _const(remove_duplicate)))


def _state_dict(vt, tx, *args, **kwargs):
    """``state_dict()``: parameters and persistent buffers, detached, in an OrderedDict."""
    import collections

    from .dicts import ConstDictVariable

    if args or kwargs:
        unimplemented("Module.state_dict() with arguments inside compiled code")
    for _, m in _named_modules(vt, tx):
        if getattr(m.module, "_state_dict_hooks", None) or getattr(
                m.module, "_state_dict_pre_hooks", None):
            unimplemented("Module.state_dict() with state-dict hooks inside compiled code")
    items = _named_members(vt, tx, "_parameters") + \
        _named_members(vt, tx, "_buffers", persistent_only=True)
    return ConstDictVariable({n: v.call_method(tx, "detach", [], {}) for n, v in items}, None,
                             collections.OrderedDict)


def _train(vt, tx, mode=True):
    """``train(mode)`` / ``eval()``: a ``training`` store on every module of the tree — side
    effects, replayed after the graph; reads of ``training`` later in the trace see them."""
    mode = _const(mode)
    if not isinstance(mode, bool):
        unimplemented("ValueError: training mode is expected to be boolean")
    for _, m in _named_modules(vt, tx, remove_duplicate=True):
        if m.source is None:
            unimplemented("Module.train() on a module without a source")
        tx.output.side_effects.store_attr(m, "training", ConstantVariable(mode))
    return vt


def _eval(vt, tx):
    return _train(vt, tx, False)


_STATE_METHODS = {"parameters": _parameters, "named_parameters": _named_parameters,
                  "buffers": _buffers, "named_buffers": _named_buffers,
                  "modules": _modules_, "named_modules": _named_modules_,
                  "state_dict": _state_dict, "train": _train, "eval": _eval}
