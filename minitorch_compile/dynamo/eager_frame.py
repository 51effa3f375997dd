"""A skipped frame still compiles what it calls (torch's frame-evaluation hook stays on).

When torch skips a frame — a graph break inside a ``for``/``while`` loop, inside a ``try``
block, an exception nothing catches — it runs that frame's *code* eagerly, but its PEP 523 hook
is still installed: every Python frame the skipped frame calls (the model's ``forward``, a user
loss function, ``optimizer.step``) is a frame of its own that torch compiles.  So torch 2.13
reports three graphs for a training step whose ``loss.backward()`` sits in a ``for`` loop: the
step itself is skipped, its callees are not (``torch/_dynamo/eval_frame.py``,
``convert_frame.py``: ``SkipFrame`` only skips that code object).

Pure Python has no frame hook, so mtc does the hook's job at the call sites of the skipped
frame: ``calls_through_jit`` rewrites the *original* bytecode so that every callable the code
loads *in order to call it* passes through ``___mtc_callee`` (``jit_callee``), which returns the
JIT-compiled function for a user function, user method, ``nn.Module`` or optimizer method, and
the object itself for anything else (builtins, classes, mtc's own ops).  Nothing else changes:
same instructions, same line numbers, same exception table, so the frame computes exactly what
it computed before.

Where CPython loads a callable for a call (the NULL/self pair of ``CALL``):

======================  =============================================  ======================
CPython                 the callable is loaded by                      rewritten as
======================  =============================================  ======================
3.11                    ``LOAD_GLOBAL (NULL +) f``; ``PUSH_NULL``      the load, then *wrap*
                        then a load; ``LOAD_METHOD m``                 ``LOAD_ATTR m`` +
                                                                       ``PUSH_NULL; SWAP 2``
3.12                    the same, with ``LOAD_ATTR (method) m``        the same
3.13                    ``LOAD_GLOBAL (+ NULL) f``; a load then        *wrap* before the
                        ``PUSH_NULL``; ``LOAD_ATTR (method) m``        NULL is pushed
======================  =============================================  ======================

*wrap* calls ``___mtc_callee`` on the value on top of the stack, leaving the NULL under it
where it was.  A method call becomes a call of the bound method (``obj.m`` is read once, as the
method form reads it).  Calls whose callable is computed some other way (``fs[0](x)``,
``super().m()``, a generator expression's function) are left alone: their callee runs eagerly,
as before.  If the rewrite fails for any reason the frame simply runs its original code.
"""

from __future__ import annotations

import os
import types

from bytecode import Bytecode, Instr

from . import bytecode_versions as versions
from .bytecode_analysis import check_code

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOT_PLAIN = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async gen
_SIMPLE_LOADS = {"LOAD_FAST", "LOAD_DEREF", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_FAST_CHECK",
                 "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"}
# a load followed by one of these was not the whole callable (``fs[0](x)``, ``a.b.c(x)``)
_CONTINUES = {"LOAD_ATTR", "LOAD_METHOD", "BINARY_SUBSCR", "LOAD_SUPER_ATTR", "BINARY_OP"}


def _user_function(fn) -> bool:
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code.co_flags & _NOT_PLAIN:
        return False
    module = getattr(fn, "__module__", None) or ""  # (mtc's generated methods: no real file)
    return not (module == "minitorch_compile" or module.startswith("minitorch_compile.")
                or os.path.abspath(code.co_filename).startswith(_PACKAGE_DIR))


def jit_callee(obj, backend):
    """What a skipped frame calls instead of ``obj``: the JIT-compiled callee when torch's hook
    would compile the callee's frame (user code, a module's ``forward``, ``optimizer.step``),
    else ``obj``."""
    from ..nn import Module
    from ..optim.optimizer import Optimizer
    from .eval_frame import jit_wrap
    from .trace_rules import frame_of_its_own

    if isinstance(obj, types.MethodType):
        owner_is_optimizer = isinstance(obj.__self__, Optimizer) and \
            obj.__func__.__name__ in ("step", "zero_grad")
        if _user_function(obj.__func__) or owner_is_optimizer:
            return jit_wrap(obj, backend)
        return obj
    if _user_function(obj) or frame_of_its_own(obj):
        return jit_wrap(obj, backend)
    if isinstance(obj, Module) and not hasattr(type(obj), "__getitem__"):
        # (3.11/3.12 load a callable after its NULL: ``layers[0](x)`` loads ``layers`` first,
        # so a container module is left as it is — it is subscripted, not called)
        return jit_wrap(obj, backend)
    return obj


def _wrap_top(callee, loc) -> list:
    """Instructions replacing the top of the stack by ``callee(top)`` (a NULL below it stays)."""
    if versions.NULL_ABOVE_CALLABLE:  # 3.13: CALL takes [callable, self_or_null, args]
        seq = [Instr("LOAD_CONST", callee), Instr("SWAP", 2), Instr("PUSH_NULL"),
               Instr("SWAP", 2)]
    else:  # 3.11 / 3.12: [NULL_or_method, callable_or_self, args]
        seq = [Instr("PUSH_NULL"), Instr("SWAP", 2), Instr("LOAD_CONST", callee),
               Instr("SWAP", 2)]
    if versions.HAS_PRECALL:
        seq.append(Instr("PRECALL", 1))
    seq.append(Instr("CALL", 1))
    return [_located(i, loc) for i in seq]


def _located(ins: Instr, loc) -> Instr:
    ins.location = loc
    return ins


def _is_method_load(ins) -> bool:
    if ins.name == "LOAD_METHOD":
        return True
    return ins.name == "LOAD_ATTR" and isinstance(ins.arg, tuple) and ins.arg[0] is True


def _is_null_global(ins) -> bool:
    return ins.name == "LOAD_GLOBAL" and isinstance(ins.arg, tuple) and ins.arg[0] is True


def calls_through_jit(code: types.CodeType, backend) -> types.CodeType | None:
    """``code`` with every callable it loads for a call passed through ``jit_callee`` (None if
    the code cannot be rewritten: the frame then runs its original code)."""
    try:
        return _rewrite(code, backend)
    except Exception:  # never worse than running the original
        return None


def _rewrite(code, backend):
    callee = _Callee(backend)
    original = Bytecode.from_code(code)
    items = list(original)
    out = []
    null_above = versions.NULL_ABOVE_CALLABLE
    changed = False
    for k, ins in enumerate(items):
        if not isinstance(ins, Instr):
            out.append(ins)
            continue
        loc = ins.location
        if _is_method_load(ins):
            name = ins.arg if ins.name == "LOAD_METHOD" else ins.arg[1]
            out.append(_located(Instr("LOAD_ATTR", name if ins.name == "LOAD_METHOD"
                                      else (False, name)), loc))
            if null_above:
                out += _wrap_top(callee, loc) + [_located(Instr("PUSH_NULL"), loc)]
            else:
                out += [_located(Instr("PUSH_NULL"), loc), _located(Instr("SWAP", 2), loc)]
                out += _wrap_top(callee, loc)
            changed = True
        elif _is_null_global(ins):
            if null_above:
                out.append(_located(Instr("LOAD_GLOBAL", (False, ins.arg[1])), loc))
                out += _wrap_top(callee, loc) + [_located(Instr("PUSH_NULL"), loc)]
            else:
                out.append(ins)
                out += _wrap_top(callee, loc)
            changed = True
        elif ins.name == "PUSH_NULL" and null_above:
            out += _wrap_top(callee, loc)  # the callable is exactly what is on top
            out.append(ins)
            changed = True
        elif ins.name in _SIMPLE_LOADS and not null_above and k and \
                isinstance(items[k - 1], Instr) and items[k - 1].name == "PUSH_NULL":
            nxt = next((p for p in items[k + 1:] if isinstance(p, Instr)), None)
            out.append(ins)
            if nxt is None or nxt.name not in _CONTINUES:
                out += _wrap_top(callee, loc)
                changed = True
        else:
            out.append(ins)
    if not changed:
        return None
    new = Bytecode(out)
    for attr in ("argcount", "posonlyargcount", "kwonlyargcount", "name", "qualname",
                 "filename", "first_lineno", "flags", "argnames", "docstring", "cellvars",
                 "freevars"):
        if hasattr(original, attr):
            setattr(new, attr, getattr(original, attr))
    return check_code(new.to_code())  # a bad rewrite raises here: the original code runs


class _Callee:
    """The object the rewritten code calls (a constant of it): ``jit_callee`` for one backend."""

    __slots__ = ("backend",)

    def __init__(self, backend):
        self.backend = backend

    def __call__(self, obj):
        return jit_callee(obj, self.backend)

    def __repr__(self) -> str:
        return "___mtc_callee"
