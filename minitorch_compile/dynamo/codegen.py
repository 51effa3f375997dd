"""``PyCodegen``: emit CPython bytecode with the ``bytecode`` library
(``torch/_dynamo/codegen.py``).

The transformed code of a cache entry is built instruction by instruction:

1. load every graph input from its source (``LOAD_FAST inputs; LOAD_CONST 'x'; BINARY_SUBSCR``)
   and call the compiled graph, stored as a global ``__compiled_fn_N`` in the frame's module;
2. store the graph's output tuple in a local;
3. rebuild the value the frame returns — constants, containers, graph outputs
   (``graph_out[i]``), values reloaded from their sources — and ``RETURN_VALUE``.

Calls follow the running CPython's convention — 3.11: ``PUSH_NULL`` (or ``LOAD_GLOBAL`` with
its NULL bit), the callable, the arguments, ``PRECALL n``, ``CALL n``; 3.12 without
``PRECALL``; 3.13 with the NULL *above* the callable.  The methods below ask
``bytecode_versions`` (the one table of version differences), so callers write the same
sequence on every version: ``push_null_before`` / ``load_global(push_null=True)``, the
arguments, ``call(n)``.  Every code object the compiler makes is then checked by
``bytecode_analysis.check_code`` before it can run.
"""

from __future__ import annotations

import types

from bytecode import Bytecode, Instr

from . import bytecode_versions as versions
from .bytecode_analysis import check_code
from .exc import unimplemented
from .symbolic_scalars import is_float_output

GRAPH_OUT = "___graph_out"


class PyCodegen:
    def __init__(self, tx=None, output=None):
        self.tx = tx
        self.output = output
        self.instructions: list = []
        self.graph_output_index: dict[int, int] = {}  # id(node) -> index in graph outputs
        # id(tracker) -> local holding its value: a new list/dict is built once and shared
        # (identity), and values a side-effect replay would change are loaded before it
        self.tempvars: dict[int, str] = {}
        self._n_temps = 0
        # cell variables the transformed code keeps as real cells (graph_break_codegen)
        self.shared_cells: tuple = ()

    def append(self, *instrs) -> None:
        self.instructions.extend(instrs)

    # ---------------------------------------------------------------- loads
    def load_const(self, value) -> None:
        self.append(Instr("LOAD_CONST", value))

    def load_local(self, name: str) -> None:
        if name in self.shared_cells:  # an argument the transformed code keeps in a cell
            from bytecode import CellVar

            self.append(Instr("LOAD_DEREF", CellVar(name)))
            return
        self.append(Instr("LOAD_FAST", name))

    def store_local(self, name: str) -> None:
        self.append(Instr("STORE_FAST", name))

    def load_deref(self, name: str) -> None:
        from bytecode import FreeVar

        self.append(Instr("LOAD_DEREF", FreeVar(name)))

    def load_closure(self, name: str) -> None:
        """Push the frame's cell ``name`` (for a closure tuple): one of its free variables, or
        one of the cells the transformed code keeps (``shared_cells``)."""
        from bytecode import CellVar, FreeVar

        var = CellVar(name) if name in self.shared_cells else FreeVar(name)
        self.append(Instr(versions.this("LOAD_CLOSURE"), var))

    def load_global(self, name: str, push_null: bool = False) -> None:
        self.append(Instr("LOAD_GLOBAL", (push_null, name)))

    def load_global_object(self, name: str, value, push_null: bool = True) -> None:
        """Load ``value`` through a global installed in the frame's module (with a NULL below
        it, ready to be called, unless ``push_null=False``)."""
        if self.output is None:
            unimplemented("no output graph to install a global")
        self.output.globals_to_install[name] = value
        self.load_global(name, push_null=push_null)

    def load_attr(self, name: str) -> None:
        # 3.12+: LOAD_ATTR's argument carries the method bit, here unset
        arg = name if versions.this("LOAD_ATTR.arg") == "name" else (False, name)
        self.append(Instr("LOAD_ATTR", arg))

    def push_null(self) -> None:
        self.append(Instr("PUSH_NULL"))

    def load_callable(self, load) -> None:
        """``load()`` emits the callable; a NULL goes below it (3.11/3.12) or above (3.13)."""
        if versions.NULL_ABOVE_CALLABLE:
            load()
            self.push_null()
        else:
            self.push_null()
            load()

    def binary_subscr(self) -> None:
        self.append(Instr("BINARY_SUBSCR"))

    # ---------------------------------------------------------------- building
    def build(self, cls: type, n: int) -> None:
        if cls is tuple:
            self.append(Instr("BUILD_TUPLE", n))
        elif cls is list:
            self.append(Instr("BUILD_LIST", n))
        elif cls is dict:
            self.append(Instr("BUILD_MAP", n))
        else:
            unimplemented(f"cannot build a {cls.__name__} in bytecode")

    def call(self, n: int, kw_names: tuple = ()) -> None:
        """Call the callable (and its NULL) below ``n`` arguments, the last ``len(kw_names)``
        of them passed by keyword."""
        self.append(*call_instrs(n, kw_names))

    def jump_if(self, truth: bool, label, lineno=None) -> None:
        """Pop the top of the stack and jump to ``label`` if its truth is ``truth``."""
        if versions.NEEDS_TO_BOOL:  # 3.13: the jump reads an exact bool
            self.append(Instr("TO_BOOL", lineno=lineno))
        name = versions.this("POP_JUMP_IF_TRUE" if truth else "POP_JUMP_IF_FALSE")
        self.append(Instr(name, label, lineno=lineno))

    def new_temp(self) -> str:
        self._n_temps += 1
        return f"___tmp_var_{self._n_temps}"

    def stash(self, vt) -> None:
        """Pop the value of ``vt`` into a new local; later ``reconstruct(vt)`` reloads it."""
        name = self.new_temp()
        self.store_local(name)
        self.tempvars[id(vt)] = name

    def reconstruct(self, vt) -> None:
        name = self.tempvars.get(id(vt))
        if name is not None:
            self.load_local(name)
            return
        vt.reconstruct(self)

    def stash_new_containers(self, vts: list) -> None:
        """Build every list/dict made while tracing that ``vts`` reach more than once, once,
        into a local (inner ones first): every use — in either branch after a graph break too
        — is then the same object, as in the program (``a.append(new); return new``)."""
        uses = _count_uses(vts)
        for vt in _post_order(vts):
            if _is_new_mutable(vt) and (uses[id(vt)] > 1 or _is_new_object(vt)) and \
                    id(vt) not in self.tempvars:  # (a new object gets its stores replayed)
                self.reconstruct(vt)
                self.stash(vt)

    def reconstruct_tensor(self, vt) -> None:
        idx = self.graph_output_index.get(id(vt.proxy))
        if idx is not None and is_float_output(vt):  # a 0-d tensor out of the graph: .item()
            def load_item():
                self.load_local(GRAPH_OUT)
                self.load_const(idx)
                self.binary_subscr()
                self.load_attr("item")
            self.load_callable(load_item)
            self.call(0)
        elif idx is not None:
            self.load_local(GRAPH_OUT)
            self.load_const(idx)
            self.binary_subscr()
        elif vt.source is not None:
            vt.source.reconstruct(self)
        elif vt.proxy.op == "placeholder" and vt.proxy.meta.get("grapharg") is not None:
            vt.proxy.meta["grapharg"].reconstruct(self)  # a dynamic int input: from its source
        else:
            unimplemented("a tensor with neither a graph output nor a source")

    def call_compiled_graph(self, fn_name: str, input_sources: list) -> None:
        self.load_global(fn_name, push_null=True)
        for src in input_sources:
            src.reconstruct(self)
        self.call(len(input_sources))
        self.store_local(GRAPH_OUT)


def _is_new_mutable(vt) -> bool:
    from .variables.dicts import ConstDictVariable, DefaultDictVariable
    from .variables.lists import DequeVariable, ListVariable
    from .variables.sets import SetVariable

    return (type(vt) in (ListVariable, ConstDictVariable, DefaultDictVariable, DequeVariable,
                         SetVariable) and vt.source is None) or _is_new_object(vt)


def _is_new_object(vt) -> bool:
    from .variables.user_defined import NewObjectVariable

    return isinstance(vt, NewObjectVariable)


def _count_uses(vts) -> dict:
    """How many times each tracker is reached from ``vts`` (through sourceless containers)."""
    from collections import Counter


    uses, todo, expanded = Counter(), list(vts), set()
    while todo:
        vt = todo.pop()
        uses[id(vt)] += 1
        if id(vt) in expanded or getattr(vt, "source", None) is not None:
            continue
        expanded.add(id(vt))
        todo.extend(_parts(vt))
    return uses


def _parts(vt) -> list:
    """The trackers a sourceless tracker is rebuilt from: a container's items, a dict view's
    dict, the object of a bound method not called yet (``out.append`` on the stack at a break,
    with ``out`` live: one list, built once)."""
    from .variables.base import VariableTracker
    from .variables.dicts import ConstDictVariable, DictViewVariable
    from .variables.lists import BaseListVariable

    if isinstance(vt, DictViewVariable):  # `d.items()`: a view of the one rebuilt `d`
        return [vt.dict_vt]
    if isinstance(vt, BaseListVariable):
        return list(vt.items)
    if isinstance(vt, ConstDictVariable):
        return list(vt.items.values())
    obj = getattr(vt, "obj", None)
    return [obj] if isinstance(obj, VariableTracker) else []


def _post_order(vts) -> list:

    out, seen = [], set()

    def visit(vt):
        if id(vt) in seen:
            return
        seen.add(id(vt))
        if getattr(vt, "source", None) is None:
            for i in _parts(vt):
                visit(i)
        out.append(vt)

    for v in vts:
        visit(v)
    return out


def assemble(bc: Bytecode, keep_try_depths: bool = False,
             min_stacksize: int = 0) -> types.CodeType:
    """The code object of ``bc``, checked (``bytecode_analysis.check_code``) before anything
    can run it: a bad one raises ``InvalidBytecode`` — an internal compiler error — instead of
    crashing the interpreter later.  ``keep_try_depths``: the exception-table depths are the
    original code's (a resume function jumps into a ``with`` block; the library's flow analysis
    would not reach the block's ``TryBegin``)."""
    if not keep_try_depths:
        return check_code(bc.to_code())
    size = max(bc.compute_stacksize(check_pre_and_post=False), min_stacksize)
    return check_code(bc.to_code(stacksize=size, compute_exception_stack_depths=False))


def call_instrs(n: int, kw_names: tuple = ()) -> list:
    """The instructions of a call with ``n`` arguments already on the stack."""
    out = []
    if kw_names and versions.this("CALL.kw_names") == "KW_NAMES":
        out.append(Instr("KW_NAMES", tuple(kw_names)))
    if versions.HAS_PRECALL:
        out.append(Instr("PRECALL", n))
    if kw_names and versions.this("CALL.kw_names") == "CALL_KW":  # 3.13: names on the stack
        return out + [Instr("LOAD_CONST", tuple(kw_names)), Instr("CALL_KW", n)]
    return out + [Instr("CALL", n)]
