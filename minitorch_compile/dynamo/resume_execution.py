"""Resume functions: continue a frame after a graph break (``torch/_dynamo/resume_execution.py``).

At a graph break the transformed code runs the graph captured so far, then the breaking
instruction in plain Python, then must *continue* the original function from the next
instruction — with the values the stack and the live locals hold at that point.  That
continuation is a new code object built from the original one:

    def __resume_at_30_1(___stack0, ___stack1, x, y):     # stack values, then live locals
        MAKE_CELL ... / COPY_FREE_VARS ...                # the original's cell prologue
        RESUME 0
        LOAD_FAST ___stack0                               # rebuild the value stack
        LOAD_FAST ___stack1
        JUMP_FORWARD  <target>                            # into the original bytecode
        ... the original instructions, unchanged ...
    target: ...

Because it is an ordinary function, the JIT compiles it on its first call like any other
frame, with its own cache entries and guards.  A conditional jump on a tensor gets one resume
function per target.  Resume functions are always built from the *original* code (an index in
a resume function maps back to the original instruction), so a second break inside a resume
function makes a sibling, not a resume-of-a-resume — no 2^n blow-up.
"""

from __future__ import annotations

import itertools
import types
from dataclasses import dataclass

from bytecode import Bytecode, CellVar, Instr, Label

_counter = itertools.count(1)


@dataclass(frozen=True)
class ResumeInfo:
    original: types.CodeType
    target: int  # index of the instruction to continue at, in the original's instructions
    prologue: int  # instructions before the original body in the resume code
    stack_size: int
    live_locals: tuple


# resume code -> how it was made; (original, target, stack, locals) -> resume code
RESUME_INFO: dict[types.CodeType, ResumeInfo] = {}
_BUILT: dict[tuple, types.CodeType] = {}


def original_of(code: types.CodeType) -> tuple[types.CodeType, int]:
    """(original code, offset to subtract from instruction indices) for any code object."""
    info = RESUME_INFO.get(code)
    if info is None:
        return code, 0
    return info.original, info.prologue


def _is_prologue(ins) -> bool:
    return isinstance(ins, Instr) and ins.name in ("MAKE_CELL", "COPY_FREE_VARS", "RESUME")


def make_resume(original: types.CodeType, target: int, stack_size: int,
                live_locals: tuple) -> types.CodeType:
    """The code of a function continuing ``original`` at instruction ``target``."""
    key = (original, target, stack_size, live_locals)
    hit = _BUILT.get(key)
    if hit is not None:
        return hit
    bc = Bytecode.from_code(original)
    items = list(bc)
    # label the target instruction
    label = Label()
    body, n = [], 0
    for item in items:
        if isinstance(item, Instr):
            if n == target:
                body.append(label)
            n += 1
        body.append(item)
    lineno = original.co_firstlineno
    stack_args = [f"___stack{i}" for i in range(stack_size)]
    prologue = [Instr("MAKE_CELL", CellVar(c), lineno=lineno) for c in original.co_cellvars]
    if original.co_freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(original.co_freevars), lineno=lineno))
    prologue.append(Instr("RESUME", 0, lineno=lineno))
    prologue += [Instr("LOAD_FAST", a, lineno=lineno) for a in stack_args]
    prologue.append(Instr("JUMP_FORWARD", label, lineno=lineno))
    # the original's own cell prologue would run twice: drop it from the body
    body = [ins for ins in body if not _is_prologue(ins)]
    new = Bytecode(prologue + body)
    name = f"__resume_at_{target}_{next(_counter)}"
    new.name = name
    new.qualname = name
    new.filename = original.co_filename
    new.first_lineno = original.co_firstlineno
    new.argnames = stack_args + list(live_locals)
    new.argcount = len(new.argnames)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.cellvars = list(original.co_cellvars)
    new.freevars = list(original.co_freevars)
    new.flags = original.co_flags & (0x01 | 0x02 | 0x10)  # OPTIMIZED, NEWLOCALS, NESTED
    code = new.to_code()
    n_prologue = sum(1 for ins in prologue if isinstance(ins, Instr))
    n_dropped = sum(1 for ins in items if _is_prologue(ins))
    RESUME_INFO[code] = ResumeInfo(original, target, n_prologue - n_dropped, stack_size,
                                   tuple(live_locals))
    _BUILT[key] = code
    return code

