"""User functions, methods and closures (``variables/functions.py``).

Calling a Python function while tracing *inlines* it: a child interpreter runs the callee's
bytecode on the caller's graph, with the arguments bound to its parameters (defaults,
``*args``, ``**kwargs`` and keyword-only arguments included).  Three kinds of callee:

* ``UserFunctionVariable`` — a real function object read from the frame (guarded by identity);
  its closure cells are read through their source;
* ``UserMethodVariable`` — a function bound to a tracked object (``self.helper(x)``,
  ``mod.forward``);
* ``NestedUserFunctionVariable`` — a function *created* while tracing (``def inner():`` and
  every comprehension in CPython 3.11, which is a hidden nested function); its closure reads
  and writes the creating frame's variables through cells.
"""

from __future__ import annotations

import dis
import functools
import inspect
import itertools
import types

from ..exc import unimplemented
from ..source import AttrSource, ClosureSource, GetItemSource
from .base import VariableTracker
from .dicts import ConstDictVariable
from .lists import TupleVariable


class ValueCell:
    """A closure cell of a real function: a write (``nonlocal x; x = ...``) is a side effect,
    recorded under the cell's source and replayed after the graph."""

    def __init__(self, vt, tx=None, name: str = "", source=None):
        self.vt, self.tx, self.name = vt, tx, name
        self.source = source if source is not None else vt.source  # (a dynamic int has none)

    def get(self):
        if self.tx is not None:
            written = self.tx.output.side_effects.load_cell(self.source)
            if written is not None:
                return written
        return self.vt

    def set(self, vt):
        if self.tx is None or self.source is None:
            unimplemented("assigning to a closure variable of a function without a source "
                          "(nonlocal side effect)")
        self.tx.output.side_effects.store_cell(self.source, self.name, vt)


def value_cell(tx, cell, name: str, source, value) -> ValueCell:
    """The ``ValueCell`` of the real cell ``cell`` — one per cell for the whole trace: a cell
    reached two ways (the frame's free variable, and the closure of a function the frame calls)
    is one variable, so a write through one is read through the other."""
    from .builder import VariableBuilder

    table = tx.output.__dict__.setdefault("value_cells", {})  # id(cell) -> (cell, ValueCell)
    hit = table.get(id(cell)) if cell is not None else None
    if hit is not None and hit[0] is cell:
        return hit[1]
    vc = ValueCell(VariableBuilder(tx, source)(value), tx, name, source)
    if cell is not None:
        table[id(cell)] = (cell, vc)
    return vc


class FrameCell:
    """A cell shared with the frame that created a nested function."""

    def __init__(self, tx, name: str):
        self.tx, self.name = tx, name

    def get(self):
        if self.name not in self.tx.symbolic_locals:
            self.tx.materialize_local(self.name)  # an argument not read yet, or an error
        return self.tx.symbolic_locals[self.name]

    def set(self, vt):
        self.tx.symbolic_locals[self.name] = vt


class LocalCell:
    """A cell made while tracing (3.12+'s MAKE_CELL inside an inlined comprehension)."""

    def __init__(self, name: str):
        self.name, self.vt = name, None

    def get(self):
        if self.vt is None:
            unimplemented(f"NameError: free variable {self.name!r} referenced before "
                          "assignment")
        return self.vt

    def set(self, vt) -> None:
        self.vt = vt


def bind_args(tx, fn_obj, args, kwargs, default_vt) -> dict:
    """Bind tracker arguments to ``fn_obj``'s parameters; defaults via ``default_vt(kind, i)``."""
    sig = inspect.signature(fn_obj, follow_wrapped=False)  # its own (not @wraps's)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        unimplemented(f"calling {fn_obj.__qualname__}: {e}")
    result = {}
    params = list(sig.parameters.values())
    code = fn_obj.__code__
    n_args = code.co_argcount + code.co_kwonlyargcount
    # inspect renames a comprehension's ".0" parameter; the code object has the real names
    real = list(code.co_varnames[:n_args])
    if code.co_flags & 0x04:
        real.append(code.co_varnames[n_args])
    if code.co_flags & 0x08:
        real.append(code.co_varnames[n_args + bool(code.co_flags & 0x04)])
    order = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)] + \
        [p for p in params if p.kind == p.KEYWORD_ONLY] + \
        [p for p in params if p.kind == p.VAR_POSITIONAL] + \
        [p for p in params if p.kind == p.VAR_KEYWORD]
    real_name = {p.name: r for p, r in zip(order, real)}
    n_pos_defaults = len(fn_obj.__defaults__ or ())
    n_positional = sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    for i, p in enumerate(params):
        key = real_name.get(p.name, p.name)
        if p.name in bound.arguments:
            v = bound.arguments[p.name]
            if p.kind == p.VAR_POSITIONAL:
                v = TupleVariable(list(v))
            elif p.kind == p.VAR_KEYWORD:
                v = ConstDictVariable(dict(v))
            result[key] = v
        elif p.kind == p.VAR_POSITIONAL:
            result[key] = TupleVariable([])
        elif p.kind == p.VAR_KEYWORD:
            result[key] = ConstDictVariable({})
        elif p.kind == p.KEYWORD_ONLY:
            result[key] = default_vt("kwdefaults", p.name)
        else:
            result[key] = default_vt("defaults", i - (n_positional - n_pos_defaults))
    return result


class BaseUserFunctionVariable(VariableTracker):
    def get_code(self):
        raise NotImplementedError

    def get_globals(self) -> dict:
        raise NotImplementedError

    def bind(self, tx, args, kwargs) -> dict:
        raise NotImplementedError

    def closure_cells(self, tx) -> dict:
        return {}

    def call_function(self, tx, args, kwargs):
        return tx.inline_user_function_return(self, args, kwargs)


class UserFunctionVariable(BaseUserFunctionVariable):
    def __init__(self, fn, source=None):
        super().__init__(source)
        if not isinstance(fn, types.FunctionType):
            unimplemented(f"{fn!r} is not a Python function")
        self.fn = fn

    def python_type(self) -> type:
        return types.FunctionType

    def as_python_constant(self):
        return self.fn

    def get_code(self):
        return self.fn.__code__

    def get_globals(self) -> dict:
        return self.fn.__globals__

    def _default(self, tx, kind, key):
        from .builder import VariableBuilder

        value = (self.fn.__defaults__[key] if kind == "defaults"
                 else self.fn.__kwdefaults__[key])
        src = None
        if self.source is not None:
            src = GetItemSource(AttrSource(self.source, f"__{kind}__"), key)
        return VariableBuilder(tx, src)(value)

    def bind(self, tx, args, kwargs):
        return bind_args(tx, self.fn, args, kwargs, lambda k, i: self._default(tx, k, i))

    def closure_cells(self, tx) -> dict:

        cells = {}
        for i, (name, cell) in enumerate(zip(self.fn.__code__.co_freevars,
                                             self.fn.__closure__ or ())):
            src = ClosureSource(self.source, i) if self.source is not None else None
            try:
                value = cell.cell_contents
            except ValueError:
                unimplemented(f"free variable {name!r} of {self.fn.__qualname__} is empty")
            cells[name] = value_cell(tx, cell, name, src, value)
        return cells

    def __repr__(self) -> str:
        return f"UserFunctionVariable({self.fn.__qualname__})"


class UserMethodVariable(UserFunctionVariable):
    """``obj.method`` where ``method`` is a Python function: call with ``obj`` first."""

    def __init__(self, fn, obj_vt, source=None):
        super().__init__(fn, source)
        self.obj = obj_vt

    def call_function(self, tx, args, kwargs):
        return tx.inline_user_function_return(self, [self.obj] + list(args), kwargs)

    def python_type(self) -> type:
        return types.MethodType

    def as_python_constant(self):
        return types.MethodType(self.fn, self.obj.as_python_constant())

    def reconstruct(self, codegen) -> None:
        """Rebuild the *bound* method: ``MethodType(fn, obj)``.  Loading ``fn`` alone would
        drop ``self``, so a call at a graph break (``obj.m(*args)``) would shift every
        argument by one."""
        if self.source is not None:
            self.source.reconstruct(codegen)
            return
        codegen.load_global_object("___MethodType", types.MethodType)
        codegen.reconstruct(UserFunctionVariable(self.fn))
        codegen.reconstruct(self.obj)
        codegen.call(2)

    def __repr__(self) -> str:
        return f"UserMethodVariable({self.fn.__qualname__})"


_COMPREHENSIONS = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


def _make_nested(code, qualname, f_globals, defaults, *values):
    """The nested function, made at run time (the transformed code calls this)."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults,
                            tuple(types.CellType(v) for v in values) or None)
    fn.__qualname__ = qualname
    return fn


_CODE_NUMBERS: dict = {}  # id(code) -> (code, n): a short stable name per nested code object
_next_code_number = itertools.count()


def _code_number(code) -> int:
    hit = _CODE_NUMBERS.get(id(code))
    if hit is None or hit[0] is not code:
        hit = _CODE_NUMBERS[id(code)] = (code, next(_next_code_number))
    return hit[1]


def _make_with_cells(code, qualname, f_globals, defaults, *cells):
    """The nested function, made at run time with the frame's own cells."""
    fn = types.FunctionType(code, f_globals, code.co_name, defaults, cells)
    fn.__qualname__ = qualname
    return fn


def _writes_cell_after(tx, start: int, name: str) -> bool:
    from ..bytecode_flow import _reachable

    return any(tx.insts[k].name in ("STORE_DEREF", "DELETE_DEREF") and
               getattr(tx.insts[k].arg, "name", tx.insts[k].arg) == name
               for k in _reachable(tx.insts, tx.labels, start))


class NestedUserFunctionVariable(BaseUserFunctionVariable):
    """A function made by MAKE_FUNCTION during tracing (closures, comprehensions, lambdas)."""

    def __init__(self, code, qualname, f_globals, defaults=None, kwdefaults=None, closure=None):
        super().__init__()
        self.code = code
        self.qualname = qualname
        self.f_globals = f_globals
        self.defaults = defaults  # TupleVariable or None
        self.kwdefaults = kwdefaults  # ConstDictVariable or None
        self.closure = closure or {}  # free var name -> cell

    def python_type(self) -> type:
        return types.FunctionType

    def get_code(self):
        return self.code

    def get_globals(self) -> dict:
        return self.f_globals

    def closure_cells(self, tx) -> dict:
        return dict(self.closure)

    def bind(self, tx, args, kwargs):
        n_def = len(self.defaults.items) if self.defaults else 0
        kwd = dict(self.kwdefaults.items) if self.kwdefaults else {}
        dummy = types.FunctionType(self.code, {}, self.code.co_name,
                                   tuple(range(n_def)) or None,
                                   tuple(types.CellType() for _ in self.code.co_freevars) or None)
        dummy.__kwdefaults__ = {k: None for k in kwd} or None

        def default(kind, key):
            return self.defaults.items[key] if kind == "defaults" else kwd[key]

        return bind_args(tx, dummy, args, kwargs, default)

    def reconstruct(self, codegen) -> None:
        """A comprehension's hidden function (3.11: on the stack when its body breaks the
        graph, under its call) is made now and loaded as a global: user code cannot hold it,
        so one object for every run is not observable.

        Any other nested function (a lambda, a ``def`` — torch's ``MAKE_FUNCTION`` in the
        transformed code) is made again at run time from its code, its defaults and the values
        of its free variables, each in a new cell.  A new cell is the frame's cell only while
        nobody writes it: the function must not assign its free variables (``nonlocal``) and the
        frame must not assign them in the code that runs after the break; and each must be a
        cell of the frame being compiled.  Anything else is not rebuilt (``Unsupported``)."""
        if self.code.co_name in _COMPREHENSIONS and not self.closure and not self.defaults \
                and not self.kwdefaults:
            fn = types.FunctionType(self.code, self.f_globals, self.code.co_name)
            fn.__qualname__ = self.qualname
            codegen.load_global_object(f"___{self.code.co_name[1:-1]}_{id(self.code)}", fn,
                                       push_null=False)
            return
        if self._uses_shared_cells(codegen):  # made with the transformed code's own cells
            make = functools.partial(_make_with_cells, self.code, self.qualname, self.f_globals)
            codegen.load_global_object(
                f"___make_{self.code.co_name.strip('<>')}_cells_{_code_number(self.code)}", make)
            if self.defaults:
                codegen.reconstruct(self.defaults)
            else:
                codegen.load_const(None)
            for name in self.code.co_freevars:
                codegen.load_closure(self.closure[name].name)
            codegen.call(1 + len(self.code.co_freevars))
            return
        why = self._not_rebuilt()
        if why:
            unimplemented(f"rebuilding the nested function {self.qualname}: {why}")
        make = functools.partial(_make_nested, self.code, self.qualname, self.f_globals)
        codegen.load_global_object(f"___make_{self.code.co_name.strip('<>')}_{id(self.code)}",
                                   make)
        if self.defaults:
            codegen.reconstruct(self.defaults)
        else:
            codegen.load_const(None)
        for name in self.code.co_freevars:
            codegen.reconstruct(self.closure[name].get())
        codegen.call(1 + len(self.code.co_freevars))

    def _uses_shared_cells(self, codegen) -> bool:
        """Every free variable is a cell the transformed code holds: one of the frame's cells it
        keeps (``shared_cells``) or one of the frame's own free variables."""
        if self.kwdefaults or not self.code.co_freevars or not codegen.shared_cells:
            return False
        from ..source import FreeVarSource

        for name in self.code.co_freevars:
            cell = self.closure.get(name)
            if isinstance(cell, FrameCell) and cell.tx.depth == 0 and \
                    cell.name in codegen.shared_cells:
                continue
            if isinstance(cell, ValueCell) and isinstance(cell.source, FreeVarSource) and \
                    cell.name == cell.source.var_name:
                continue
            return False
        return True

    def _not_rebuilt(self) -> str | None:
        if self.kwdefaults:
            return "keyword-only defaults"
        writes = {"STORE_DEREF", "DELETE_DEREF"}
        if any(i.opname in writes for i in dis.get_instructions(self.code)):
            return "it assigns a free variable (nonlocal)"
        for name in self.code.co_freevars:
            cell = self.closure.get(name)
            if not isinstance(cell, FrameCell) or cell.tx.depth != 0:
                return f"its free variable {name!r} is not a cell of the compiled frame"
            brk = getattr(cell.tx, "graph_break", None)
            if brk is not None and _writes_cell_after(cell.tx, brk.index + 1, name):
                return f"the frame assigns its free variable {name!r} after the break"
        return None

    def __repr__(self) -> str:
        return f"NestedUserFunctionVariable({self.qualname})"

