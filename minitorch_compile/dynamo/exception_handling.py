"""Exceptions raised and caught inside traced code (``torch/_dynamo/symbolic_convert.py``'s
``exn_vt_stack`` and ``ExceptionVariable``, after CPython 3.11's zero-cost exceptions).

When the user's code raises while being traced — ``d["k"]`` on a dict without ``"k"``, a
``raise`` statement, a callee that raises — the tracer does what CPython's unwinder does:

1. the exception becomes an ``ExceptionVariable`` (its type and arguments), carried by an
   ``ObservedException`` out of the instruction;
2. the frame's **exception table** names the handler of that instruction and the stack depth
   to cut to (plus, for ``with``/cleanup handlers, ``lasti``): the stack is cut, the exception
   pushed, and tracing jumps to the handler — ``PUSH_EXC_INFO``, ``CHECK_EXC_MATCH``,
   ``POP_EXCEPT``, ``RERAISE`` are traced like any instruction;
3. an instruction with no handler passes the exception to the caller's frame (an inlined call
   is just an instruction there), and a root frame that does not catch it runs eagerly.

Nothing is added to the graph: catching is Python-level control flow, decided while tracing,
as torch decides it (the exception depends on constants and guarded inputs only).
"""

from __future__ import annotations

import dis
import types

from .exc import ObservedException, raise_observed, unimplemented
from .variables.base import VariableTracker
from .variables.constant import ConstantVariable
from .variables.lists import TupleVariable

_ENTRY_CACHE: dict = {}


def exception_entries(code: types.CodeType) -> dict:
    """``{instruction index: (handler index, depth, lasti)}`` from ``code``'s exception table
    (indices count real instructions; an EXTENDED_ARG belongs to the one it extends)."""
    hit = _ENTRY_CACHE.get(code)
    if hit is not None:
        return hit
    offsets, index_of, prefix = [], {}, None
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            prefix = ins.offset if prefix is None else prefix
            continue
        offset = ins.offset if prefix is None else prefix
        index_of[offset] = len(offsets)
        offsets.append(offset)
        prefix = None
    out = {}
    entries = dis.Bytecode(code).exception_entries
    for k, offset in enumerate(offsets):
        for e in entries:
            if e.start <= offset < e.end:
                out[k] = (index_of.get(e.target, k), e.depth, e.lasti)
                break
    _ENTRY_CACHE[code] = out
    return out


def _is_with_handler(insts, k: int) -> bool:
    """Is instruction ``k`` the start of a ``with`` block's cleanup (``PUSH_EXC_INFO;
    WITH_EXCEPT_START``), not an ``except``/``finally``?"""
    return k + 1 < len(insts) and insts[k].name == "PUSH_EXC_INFO" and \
        insts[k + 1].name == "WITH_EXCEPT_START"


def in_try(insts, edges: dict, index: int) -> bool:
    """Is ``index`` inside a ``try`` (or an ``except``/``finally`` body) — through however many
    ``with`` blocks?  A ``with`` block's cleanup is itself covered by the handler of what
    encloses the block (its ``COPY 3; POP_EXCEPT; RERAISE`` by the enclosing ``try``'s)."""
    seen = set()
    k = edges.get(index)
    while k is not None and k not in seen:
        seen.add(k)
        if not _is_with_handler(insts, k):
            return True
        cleanup = edges.get(k + 1)  # WITH_EXCEPT_START's own handler: the cleanup block
        if cleanup is None:
            return False
        k = edges.get(cleanup)
    return False


class ExceptionVariable(VariableTracker):
    """An exception instance made (or raised) while tracing: its type and arguments."""

    def __init__(self, exc_type: type, args: list):
        super().__init__()
        self.exc_type = exc_type
        self.args = args

    def python_type(self) -> type:
        return self.exc_type

    def var_getattr(self, tx, name):
        if name == "args":
            return TupleVariable(list(self.args))
        unimplemented(f"attribute {name} of a {self.exc_type.__name__} raised in traced code")

    def constant_str(self):
        """``str(e)``: folded when its arguments are constants (else None: not supported)."""
        try:
            args = [a.as_python_constant() for a in self.args]
        except NotImplementedError:
            return None
        return ConstantVariable(str(self.exc_type(*args)))

    def reconstruct(self, codegen) -> None:
        """An exception made while tracing and still live (returned, or at a break): built
        again by calling its class on its arguments."""
        codegen.load_global_object(f"___exc_{self.exc_type.__name__}_{id(self.exc_type)}",
                                   self.exc_type)
        for arg in self.args:
            arg.reconstruct(codegen)
        codegen.call(len(self.args))

    def __repr__(self) -> str:
        return f"ExceptionVariable({self.exc_type.__name__})"


def _exception_class(vt):
    try:
        value = vt.as_python_constant()
    except Exception:  # noqa: BLE001 - not a constant: not an exception class
        return None
    return value if isinstance(value, type) and issubclass(value, BaseException) else None


def as_exception(vt) -> ExceptionVariable | None:
    """``raise X`` / ``raise X(...)``: the exception ``vt`` stands for, if the tracer knows."""
    if isinstance(vt, ExceptionVariable):
        return vt
    cls = _exception_class(vt)
    return ExceptionVariable(cls, []) if cls is not None else None


def call_exception_class(vt, args: list, kwargs: dict):
    """``ValueError("bad")`` while tracing: an ``ExceptionVariable``, or ``None`` if ``vt`` is
    not an exception class."""
    cls = _exception_class(vt)
    if cls is None or kwargs:
        return None
    return ExceptionVariable(cls, list(args))


def _matches(exc: ExceptionVariable, typ) -> bool:
    try:
        target = typ.as_python_constant()
    except Exception:  # noqa: BLE001
        unimplemented(f"`except` on {typ}, which is not a constant exception class")
    targets = target if isinstance(target, tuple) else (target,)
    if not all(isinstance(t, type) and issubclass(t, BaseException) for t in targets):
        unimplemented(f"`except` on {target!r}, which is not an exception class")
    return issubclass(exc.exc_type, targets)


class ExceptionOpcodes:
    """The handlers of CPython's exception opcodes (mixed into the translators)."""

    def handle_observed(self, e: ObservedException) -> bool:
        """Jump to the handler of the current instruction for ``e``, as CPython's unwinder;
        ``False`` if this frame has none there (the exception goes on to the caller)."""
        entry = exception_entries(self.code).get(self.ip - 1)
        if entry is None:
            return False
        target, depth, lasti = entry
        del self.stack[depth:]
        if lasti:
            self.push(ConstantVariable(self.ip - 1))
        self.push(e.exc_vt)
        self.ip = target
        return True

    def PUSH_EXC_INFO(self, inst):
        exc = self.pop()
        stack = self.__dict__.setdefault("exc_info_stack", [])
        self.push(stack[-1] if stack else ConstantVariable(None))
        stack.append(exc)
        self.push(exc)

    def POP_EXCEPT(self, inst):
        self.pop()
        stack = self.__dict__.setdefault("exc_info_stack", [])
        if stack:
            stack.pop()

    def CHECK_EXC_MATCH(self, inst):
        typ = self.pop()
        exc = self.stack[-1]
        if not isinstance(exc, ExceptionVariable):
            unimplemented(f"`except` matching {exc}")
        self.push(ConstantVariable(_matches(exc, typ)))

    def RERAISE(self, inst):
        exc = self.pop()
        if not isinstance(exc, ExceptionVariable):
            unimplemented(f"re-raising {exc}")
        raise ObservedException(exc)

    def RAISE_VARARGS(self, inst):
        if inst.arg == 0:  # bare `raise` inside an `except`
            stack = self.__dict__.get("exc_info_stack") or []
            if not stack:
                unimplemented("bare `raise` with no exception being handled")
            raise ObservedException(stack[-1])
        if inst.arg != 1:
            unimplemented("`raise ... from ...` inside traced code")
        exc = as_exception(self.pop())
        if exc is None:
            unimplemented("raise of something that is not an exception class or instance")
        raise ObservedException(exc)


__all__ = ["ExceptionOpcodes", "ExceptionVariable", "raise_observed", "exception_entries",
           "call_exception_class", "in_try"]
