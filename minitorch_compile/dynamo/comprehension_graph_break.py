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
falls back to the last checkpoint).  A comprehension with a walrus (``:=`` binds a local of the
frame) or cells (a lambda capturing the loop variable) is not rebuilt: the break falls back too.
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
    internal, captured = set(), []
    for k in range(start - 4, start):  # the saved loop variables
        if k >= 0 and insts[k].name == "LOAD_FAST_AND_CLEAR":
            internal.add(insts[k].arg)
    for ins in insts[start:end + 1]:  # nested comprehensions save theirs inside the region
        if ins.name == "LOAD_FAST_AND_CLEAR":
            internal.add(ins.arg)
    for ins in insts[start:end + 1]:
        if ins.name in _CELL_OPS:
            return "a comprehension with closure cells"
        if ins.name in _STORES and ins.name != "STORE_FAST_LOAD_FAST":
            if any(n not in internal for n in _names(ins)):
                return "a comprehension that assigns a local of the frame (`:=`)"
        if ins.name == "STORE_FAST_LOAD_FAST":
            store, load = ins.arg
            if store not in internal:
                return "a comprehension that assigns a local of the frame (`:=`)"
            if load not in internal and load not in captured:
                captured.append(load)
        elif ins.name in _LOADS:
            captured += [n for n in _names(ins) if n not in internal and n not in captured]
    return Comprehension(start, end, tuple(captured))


def build_function(original: types.CodeType, comp: Comprehension, f_globals: dict,
                   name: str) -> types.CodeType:
    """``def <name>(___iter, *captured)``: the region's instructions, unchanged, on a stack
    holding the iterator; returns what the region leaves on top (the list or dict).  The
    region's exception-table entries are dropped: they only restore the saved loop variables,
    locals of a frame the exception leaves anyway."""
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
    bc = Bytecode(head + body + [Instr("RETURN_VALUE", lineno=lineno)])
    bc.name = bc.qualname = name
    bc.filename = original.co_filename
    bc.first_lineno = original.co_firstlineno
    bc.argnames = ["___iter", *comp.captured]
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
                            eager_code) -> None:
    """Append to ``cg`` the call that replaces the comprehension: the stack holds the iterator
    on top; afterwards it holds what the comprehension made in its place.  ``comp``'s indices
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
    for local in comp.captured:
        if local in tx.symbolic_locals:
            cg.reconstruct(tx.symbolic_locals[local])
        else:
            cg.load_local(local)  # an argument the traced part never read
    cg.call(1 + len(comp.captured))


def _original(code):
    from .resume_execution import original_of

    return original_of(code)[0]
