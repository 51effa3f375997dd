"""A graph break inside an inlined comprehension (``torch/_dynamo/comprehension_graph_break.py``).

CPython 3.12+ compiles a list or dict comprehension *into* the function (PEP 709) — no nested
``<listcomp>`` function to break at the call of, as on 3.11::

    GET_ITER                      # [..., iter]
    LOAD_FAST_AND_CLEAR v         # save (and unbind) the frame's own `v`: [..., iter, saved_v]
    SWAP 2                        # [..., saved_v, iter]
    BUILD_LIST 0                  # <- start: [..., saved_v, iter, list]
    SWAP 2                        # [..., saved_v, list, iter]
    FOR_ITER end                  #    the loop body, LIST_APPEND 2 ...
    ...
    end: END_FOR (3.13: + POP_TOP)  # <- end: [..., saved_v, list]
    STORE_FAST vals; STORE_FAST v # the result, then the saved `v` restored

A break inside the loop cannot resume there (the loop would have to be resumed mid-way).  torch
2.13 instead breaks *before* the comprehension: the second trace stops at its ``BUILD_LIST`` /
``BUILD_MAP``, the graph so far is compiled, and the comprehension — ``start`` to ``end`` —
runs in a synthetic function, eagerly (its callees still compiled), taking the iterator and the
frame's locals the loop reads; what it returns takes the iterator's place on the stack, and the
frame continues in a resume function after ``end``.  So the comprehension acts as one
instruction, like a ``CALL``: the stack below the iterator, ``saved_v`` included, is untouched.

Only the outermost comprehension of a list or dict is handled (as torch: a set comprehension
falls back to the last checkpoint).  A walrus (``:=`` binds a local of the frame) is passed in
and handed back with the result (torch's comprehension function returns it too); at most one
such local may be unbound when the comprehension starts.  A comprehension with cells (a lambda
capturing the loop variable) is not rebuilt: the break falls back.
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass

from bytecode import Bytecode, Instr, Label, TryBegin, TryEnd

from . import bytecode_versions as versions
from .codegen import assemble
from .exc import Unsupported

_STARTS = ("BUILD_LIST", "BUILD_MAP")  # torch speculates at these (not BUILD_SET)
_CELL_OPS = {"LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "MAKE_CELL",
             "LOAD_FROM_DICT_OR_DEREF"}
_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST"}
_STORES = {"STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST", "DELETE_FAST"}


@dataclass(frozen=True)
class Comprehension:
    """The comprehension starting at instruction ``start`` (its ``BUILD_LIST``/``BUILD_MAP``)."""

    start: int
    end: int  # the last instruction of the region (END_FOR, or 3.13's POP_TOP after it)
    captured: tuple  # the frame's locals the region reads, in order of first read
    assigned: tuple = ()  # the frame's locals the region assigns (`:=`), passed in and back


def _names(ins) -> tuple:
    if ins.name in ("LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"):
        return tuple(ins.arg)
    if ins.name == "STORE_FAST_LOAD_FAST":
        return tuple(ins.arg)
    return (ins.arg,)


def find(insts: list, labels: dict, loops: list, index: int) -> int | None:
    """The ``start`` of the outermost inlined comprehension whose loop holds ``index``."""
    starts = [s - 2 for s, e in loops if s <= index <= e and s >= 2 and
              any(i.name == "LOAD_FAST_AND_CLEAR" for i in insts[max(0, s - 5):s - 2])]
    return min(starts) if starts else None


def analyze(insts: list, labels: dict, start: int) -> Comprehension | str:
    """The region of the comprehension at ``start``, or why it cannot be run on its own."""
    first = insts[start]
    if first.name not in _STARTS or first.arg != 0:
        return f"a {first.name} comprehension (torch rebuilds list and dict comprehensions only)"
    for_iter = insts[start + 2]
    if for_iter.name != "FOR_ITER" or not isinstance(for_iter.arg, Label):
        return "an unexpected comprehension layout"
    end = labels[for_iter.arg]  # END_FOR
    if versions.this("END_FOR.pops") == 1:  # 3.13: END_FOR pops the value, POP_TOP the iterator
        end += 1
    internal, captured, assigned = set(), [], []
    for k in range(start - 4, start):  # the saved loop variables
        if k >= 0 and insts[k].name == "LOAD_FAST_AND_CLEAR":
            internal.add(insts[k].arg)
    for ins in insts[start:end + 1]:  # nested comprehensions save theirs inside the region
        if ins.name == "LOAD_FAST_AND_CLEAR":
            internal.add(ins.arg)
    for ins in insts[start:end + 1]:
        if ins.name in _CELL_OPS:
            return "a comprehension with closure cells"
        if ins.name == "DELETE_FAST" and ins.arg not in internal:
            return "a comprehension that deletes a local of the frame"
        if ins.name in _STORES and ins.name != "STORE_FAST_LOAD_FAST":
            assigned += [n for n in _names(ins) if n not in internal and n not in assigned]
        if ins.name == "STORE_FAST_LOAD_FAST":
            store, load = ins.arg
            if store not in internal and store not in assigned:
                assigned.append(store)
            if load not in internal and load not in captured:
                captured.append(load)
        elif ins.name in _LOADS:
            captured += [n for n in _names(ins) if n not in internal and n not in captured]
    captured = [n for n in captured if n not in assigned]  # (those are passed in anyway)
    return Comprehension(start, end, tuple(captured), tuple(assigned))


def build_function(original: types.CodeType, comp: Comprehension, f_globals: dict,
                   name: str) -> types.CodeType:
    """``def <name>(___iter, *captured, *assigned)``: the region's instructions, unchanged, on a
    stack holding the iterator; returns what the region leaves on top (the list or dict) — or,
    when it assigns locals of the frame (``:=``), the tuple ``(result, *assigned)``: each comes
    in with the frame's value (``UNBOUND`` if it had none) and goes back out, so an empty loop
    hands back what it was given.  The region's exception-table entries are dropped: they only
    restore the saved loop variables, locals of a frame the exception leaves anyway."""
    items = list(Bytecode.from_code(original))
    body, n, inside = [], 0, False
    for item in items:
        if isinstance(item, Instr):
            inside = comp.start <= n <= comp.end
            n += 1
            if inside:
                body.append(item)
        elif isinstance(item, Label):
            if comp.start <= n <= comp.end:  # a label of an instruction in the region
                body.append(item)
        elif not isinstance(item, (TryBegin, TryEnd)) and inside:
            body.append(item)  # (SetLineno)
    lineno = original.co_firstlineno
    head = [Instr("RESUME", 0, lineno=lineno), Instr("LOAD_FAST", "___iter", lineno=lineno)]
    tail = [Instr("LOAD_FAST", n, lineno=lineno) for n in comp.assigned]
    if comp.assigned:
        tail.append(Instr("BUILD_TUPLE", 1 + len(comp.assigned), lineno=lineno))
    bc = Bytecode(head + body + tail + [Instr("RETURN_VALUE", lineno=lineno)])
    bc.name = bc.qualname = name
    bc.filename = original.co_filename
    bc.first_lineno = original.co_firstlineno
    bc.argnames = ["___iter", *comp.captured, *comp.assigned]
    bc.argcount = len(bc.argnames)
    bc.flags = 0x01 | 0x02  # OPTIMIZED, NEWLOCALS
    return assemble(bc)  # checked (bytecode_analysis.check_code) before it can run


class ComprehensionBreak(Unsupported):
    """The second trace breaks at the comprehension's start (the first broke inside it)."""

    def __init__(self, cause: Unsupported, comp: Comprehension):
        self.cause = cause
        self.comp = comp
        super().__init__(f"{cause.reason} (inside a comprehension: it runs in a function of its "
                         "own, eagerly, between two graphs)", user_line=cause.user_line)


def emit_comprehension_call(cg, tx, comp: Comprehension, offset: int, lineno: int,
                            eager_code) -> dict:
    """Append to ``cg`` the call that replaces the comprehension: the stack holds the iterator
    on top; afterwards it holds what the comprehension made in its place, and the values of
    its ``:=`` targets are in the locals the returned ``{name: local}`` names.  ``comp``'s indices
    are in ``tx.code`` (a resume function's are ``offset`` past the original's, from which the
    region is copied); ``eager_code`` routes the function's callees through the JIT."""
    original = _original(tx.code)
    fn_code = build_function(original, dataclasses.replace(
        comp, start=comp.start - offset, end=comp.end - offset), tx.f_globals,
        f"__comprehension_{original.co_name}_at_{lineno}")
    cg.store_local("___comprehension_iter")
    cg.output.globals_to_install[fn_code.co_name] = types.FunctionType(
        eager_code(fn_code), tx.f_globals, fn_code.co_name)
    cg.load_global(fn_code.co_name, push_null=True)
    cg.load_local("___comprehension_iter")
    for local in comp.captured + comp.assigned:
        if local in tx.symbolic_locals:
            cg.reconstruct(tx.symbolic_locals[local])
        elif local in comp.captured or tx.is_bound_argument(local):
            cg.load_local(local)  # an argument the traced part never read
        else:  # a `:=` target the frame has not bound yet
            cg.load_global_object(UNBOUND_GLOBAL, UNBOUND, push_null=False)
    cg.call(1 + len(comp.captured) + len(comp.assigned))
    if not comp.assigned:
        return {}
    # (result, *assigned): each value into a local of its own — the frame's local of that name
    # may still be read through a source by what the transformed code rebuilds next
    cg.append(Instr("UNPACK_SEQUENCE", 1 + len(comp.assigned)))
    cg.store_local("___comprehension_result")
    temps = {local: f"___walrus_{local}" for local in comp.assigned}
    for local in comp.assigned:
        cg.store_local(temps[local])
    cg.load_local("___comprehension_result")
    return temps


class _Unbound:
    """What a ``:=`` target the frame had not bound yet holds while its comprehension runs."""

    def __repr__(self) -> str:
        return "<unbound>"


UNBOUND = _Unbound()
UNBOUND_GLOBAL = "___mtc_unbound"


def unbound_targets(tx, comp: Comprehension) -> list:
    """The comprehension's ``:=`` targets the frame has not bound at its start."""
    return [n for n in comp.assigned if n not in tx.symbolic_locals and
            not tx.is_bound_argument(n)]


def _original(code):
    from .resume_execution import original_of

    return original_of(code)[0]
