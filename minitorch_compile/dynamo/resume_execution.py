"""Resume functions: continue a frame after a graph break (``torch/_dynamo/resume_execution.py``).

At a graph break the transformed code runs the graph captured so far, then the breaking
instruction in plain Python, then must *continue* the original function from the next
instruction — with the values the stack and the live locals hold at that point.  That
continuation is a new code object built from the original one:

    def __resume_at_158_1(___stack0, ___stack2, x, y):    # stack values, then live locals
        MAKE_CELL ... / COPY_FREE_VARS ...                # the original's cell prologue (or
                                                          #  its cells shared: free variables)
        RESUME 0
        LOAD_FAST ___stack0                               # rebuild the value stack
        PUSH_NULL                                         # (a NULL is not a value: not an
        LOAD_FAST ___stack2                               #  argument, pushed again here)
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

from bytecode import Bytecode, CellVar, FreeVar, Instr, Label, TryBegin

from ._identity import IdentityDict
from .codegen import assemble

_counter = itertools.count(1)


@dataclass(frozen=True)
class ResumeInfo:
    globals: dict
    original: types.CodeType
    target: int  # index of the instruction to continue at, in the original's instructions
    prologue: int  # instructions before the original body in the resume code
    stack_size: int
    live_locals: tuple
    nulls: tuple = ()  # stack positions holding CPython's NULL (below a pending call)
    withs: tuple = ()  # (stack position, grad mode) of each `with` block re-entered


# resume code -> how it was made; (original, target, stack, locals) -> resume code
RESUME_INFO = IdentityDict()  # resume code -> ResumeInfo (identity: code compares by value)
_BUILT: dict[tuple, types.CodeType] = {}


def original_of(code: types.CodeType) -> tuple[types.CodeType, int]:
    """(original code, offset to subtract from instruction indices) for any code object."""
    info = RESUME_INFO.get(code)
    if info is None:
        return code, 0
    return info.original, info.prologue


def byte_offset(code: types.CodeType, index: int) -> int:
    """The offset ``dis.dis(code)`` shows for instruction ``index`` (as torch names resume
    functions: ``__resume_at_<offset>``); CACHE entries are skipped, EXTENDED_ARG prefixes
    belong to the instruction they extend."""
    import dis

    n = 0
    prefix = None
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            prefix = ins.offset if prefix is None else prefix
            continue
        if n == index:
            return ins.offset if prefix is None else prefix
        n, prefix = n + 1, None
    return 2 * index


def _instruction_offsets(code: types.CodeType) -> list[int]:
    """The offset of each real instruction (an EXTENDED_ARG prefix belongs to its instruction)."""
    import dis

    out, prefix = [], None
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            prefix = ins.offset if prefix is None else prefix
            continue
        out.append(ins.offset if prefix is None else prefix)
        prefix = None
    return out


def _set_try_depths(original: types.CodeType, items: list) -> None:
    """Give each ``TryBegin`` the depth of its entry in the original's exception table: a resume
    function keeps the original's stack layout, and jumps past the ``TryBegin`` of a ``with``
    block it re-enters, so the depths cannot be recomputed from the resume function's flow."""
    import dis

    depth_at = {e.start: e.depth for e in dis.Bytecode(original).exception_entries}
    offsets = _instruction_offsets(original)
    pending, n = [], 0
    for item in items:
        if isinstance(item, TryBegin):
            pending.append(item)
        elif isinstance(item, Instr):
            for tb in pending:
                tb.stack_depth = depth_at.get(offsets[n], 0) if n < len(offsets) else 0
            pending, n = [], n + 1


def _prologue_end(items) -> int:
    """Items up to and including the first RESUME: the cell/free-variable prologue (a later
    MAKE_CELL — 3.12's inlined comprehension capturing its loop variable — is body)."""
    for k, item in enumerate(items):
        if isinstance(item, Instr) and item.name == "RESUME":
            return k + 1
    return 0


# the global through which a resume function re-enters a grad-mode `with` block
GRAD_MODE_GLOBAL = "___mtc_set_grad_enabled"


def _reenter_with(mode: bool, lineno: int) -> list:
    """torch's ``ReenterWith``: ``set_grad_enabled(mode)``, ``BEFORE_WITH``, drop what
    ``__enter__`` returned — leaving the block's ``__exit__`` in the stack slot the original's
    exception table (the block's cleanup handler) expects it in."""
    from .codegen import call_instrs

    return [Instr("LOAD_GLOBAL", (True, GRAD_MODE_GLOBAL), lineno=lineno),
            Instr("LOAD_CONST", bool(mode), lineno=lineno),
            *[Instr(i.name, i.arg, lineno=lineno) for i in call_instrs(1)],
            Instr("BEFORE_WITH", lineno=lineno), Instr("POP_TOP", lineno=lineno)]


def make_resume(original: types.CodeType, target: int, stack_size: int,
                live_locals: tuple, f_globals: dict, nulls: tuple = (),
                withs: tuple = (), shared_cells: tuple = ()) -> types.CodeType:
    """The code of a function continuing ``original`` at instruction ``target``; the stack
    position ``i`` is the argument ``___stack<i>``, or a NULL pushed again if ``i in nulls``,
    or the ``__exit__`` of a grad-mode ``with`` block entered again if ``(i, mode) in withs``.
    ``shared_cells``: cell variables of ``original`` the resume function *shares* with the
    transformed code (torch's way: a nested function live at the break writes them) — they
    become its free variables, in front of the original's, instead of cells of its own."""
    key = (id(original), id(f_globals), target, stack_size, live_locals, nulls, withs,
           shared_cells)
    hit = _BUILT.get(key)
    if hit is not None:
        return hit
    bc = Bytecode.from_code(original)
    items = list(bc)
    _set_try_depths(original, items)
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
    with_modes = dict(withs)
    stack_args = [f"___stack{i}" for i in range(stack_size)
                  if i not in nulls and i not in with_modes]
    prologue = [Instr("MAKE_CELL", CellVar(c), lineno=lineno) for c in original.co_cellvars
                if c not in shared_cells]
    freevars = list(shared_cells) + list(original.co_freevars)
    if freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(freevars), lineno=lineno))
    prologue.append(Instr("RESUME", 0, lineno=lineno))
    for i in range(stack_size):
        if i in nulls:
            prologue.append(Instr("PUSH_NULL", lineno=lineno))
        elif i in with_modes:
            prologue += _reenter_with(with_modes[i], lineno)
        else:
            prologue.append(Instr("LOAD_FAST", f"___stack{i}", lineno=lineno))
    if withs:
        from ..autograd.grad_mode import set_grad_enabled

        f_globals[GRAD_MODE_GLOBAL] = set_grad_enabled
    prologue.append(Instr("JUMP_FORWARD", label, lineno=lineno))
    # the original's own cell prologue would run twice: drop it from the body
    n_head = _prologue_end(items)
    dropped = sum(1 for ins in items[:n_head] if isinstance(ins, Instr))
    body = body[_prologue_end(body):]
    if shared_cells:  # the shared cells are read and written as free variables here
        for ins in body:
            if isinstance(ins, Instr) and isinstance(ins.arg, CellVar) and \
                    ins.arg.name in shared_cells:
                ins.arg = FreeVar(ins.arg.name)
    new = Bytecode(prologue + body)
    name = f"__resume_at_{byte_offset(original, target)}_{next(_counter)}"
    new.name = name
    new.qualname = name
    new.filename = original.co_filename
    new.first_lineno = original.co_firstlineno
    new.argnames = stack_args + list(live_locals)
    new.argcount = len(new.argnames)
    new.posonlyargcount = 0
    new.kwonlyargcount = 0
    new.cellvars = [c for c in original.co_cellvars if c not in shared_cells]
    new.freevars = freevars
    new.flags = original.co_flags & (0x01 | 0x02 | 0x10)  # OPTIMIZED, NEWLOCALS, NESTED
    # the original's handlers keep its stack layout: its stack size covers them
    code = assemble(new, keep_try_depths=True,  # checked: it must not crash
                    min_stacksize=max(original.co_stacksize, stack_size + 4))
    n_prologue = sum(1 for ins in prologue if isinstance(ins, Instr))
    RESUME_INFO[code] = ResumeInfo(f_globals, original, target, n_prologue - dropped,
                                   stack_size, tuple(live_locals), nulls, withs)
    _BUILT[key] = code
    return code
