"""Resume functions: continue a frame after a graph break (``torch/_dynamo/resume_execution.py``).

At a graph break the transformed code runs the graph captured so far, then the breaking
instruction in plain Python, then must *continue* the original function from the next
instruction — with the values the stack and the live locals hold at that point.  That
continuation is a new code object built from the original one:

    def __resume_at_158_1(___stack0, ___stack2, x, y):    # stack values, then live locals
        MAKE_CELL ... / COPY_FREE_VARS ...                # the original's cell prologue
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

from bytecode import Bytecode, CellVar, Instr, Label, TryBegin, TryEnd

from . import bytecode_versions as versions
from ._identity import IdentityDict
from .codegen import assemble
from .comprehension_graph_break import ComprehensionBreak, emit_comprehension_call

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
                withs: tuple = ()) -> types.CodeType:
    """The code of a function continuing ``original`` at instruction ``target``; the stack
    position ``i`` is the argument ``___stack<i>``, or a NULL pushed again if ``i in nulls``,
    or the ``__exit__`` of a grad-mode ``with`` block entered again if ``(i, mode) in withs``."""
    key = (id(original), id(f_globals), target, stack_size, live_locals, nulls, withs)
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
    prologue = [Instr("MAKE_CELL", CellVar(c), lineno=lineno) for c in original.co_cellvars]
    if original.co_freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(original.co_freevars), lineno=lineno))
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
    new.cellvars = list(original.co_cellvars)
    new.freevars = list(original.co_freevars)
    new.flags = original.co_flags & (0x01 | 0x02 | 0x10)  # OPTIMIZED, NEWLOCALS, NESTED
    # the original's handlers keep its stack layout: its stack size covers them
    code = assemble(new, keep_try_depths=True,  # checked: it must not crash
                    min_stacksize=max(original.co_stacksize, stack_size + 4))
    n_prologue = sum(1 for ins in prologue if isinstance(ins, Instr))
    RESUME_INFO[code] = ResumeInfo(f_globals, original, target, n_prologue - dropped,
                                   stack_size, tuple(live_locals), nulls, withs)
    _BUILT[key] = code
    return code



# ------------------------------------------------------------------------------ the break itself
#
# The transformed code of a frame that broke at instruction I:
#
#     graph_out = __compiled_fn_N(<graph inputs>)    # the graph captured before I
#     <rebuild the stack I expects>                  # graph outputs, constants, sources
#     I                                              # in plain Python: the call, the jump ...
#     ___tmp_k ... ___tmp_0 = <stack after I>        # park the stack in locals
#     return __resume_at_J(___tmp_0..k, *live locals)  # continue (a jump: one return per target)
#
# A NULL on the stack (CPython pushes one beside a callable: ``int(t.item())`` breaks with
# ``NULL, int`` — 3.13: ``int, NULL`` — waiting under the ``.item()`` call) cannot be passed as
# an argument: it is parked in ``___null`` (STORE_FAST of a NULL leaves that local unbound; it
# is never read) and the resume function's prologue pushes it again with ``PUSH_NULL``.
#
# Where the versions differ (the NULL's side of the callable, PRECALL, KW_NAMES vs CALL_KW,
# jump names, 3.13's TO_BOOL before a jump) the code generator asks ``bytecode_versions``.


def _jit_wrap_for(backend):
    """What the break's code calls on a user callable so the callee is compiled as its own frame
    (the frame-evaluation hook would do that in torch)."""
    from .eval_frame import jit_wrap

    return lambda obj: jit_wrap(obj, backend)


def _resume_function(code, closure, backend):
    from .eval_frame import jit_resume

    return jit_resume(code, closure, backend)


def _eager_code(backend):
    """Code -> the same code with its callees routed through the JIT (run eagerly, as torch runs
    a skipped frame: its callees still compiled)."""
    from .eager_frame import calls_through_jit

    return lambda code: calls_through_jit(code, backend) or code


def _eager_rest_function(code, closure, backend):
    """The rest of a frame after its last checkpoint: the resume code run *eagerly* (torch
    appends the original instructions to the transformed code), its callees still compiled."""
    return types.FunctionType(_eager_code(backend)(code), RESUME_INFO[code].globals,
                              code.co_name, None, closure)


def _user_callable(vt) -> bool:
    from .variables.functions import BaseUserFunctionVariable
    from .variables.misc import GetAttrVariable, NewObjectVariable, UserDefinedObjectVariable
    from .variables.nn_module import NNModuleVariable

    if isinstance(vt, GetAttrVariable):  # (an optimizer's too: its step is its own frame)
        return _user_callable(vt.obj) or (isinstance(vt.obj, UserDefinedObjectVariable)
                                          and not isinstance(vt.obj, NewObjectVariable))
    if isinstance(vt, UserDefinedObjectVariable):  # an object with a Python __call__
        return isinstance(getattr(type(vt.value), "__call__", None), types.FunctionType)
    return isinstance(vt, (BaseUserFunctionVariable, NNModuleVariable))


def emit_graph_break(cg, tx, brk, backend) -> None:
    """Append to ``cg`` the code that finishes a frame which broke at ``brk``."""
    import dis as _dis

    from .variables.misc import NullVariable, WithExitFunctionVariable

    inst, stack = brk.inst, brk.stack
    n_stack = len(stack)
    # grad-mode `with` blocks open at the break: the instruction runs inside them (in the mode
    # the innermost set), under a `try` whose handler restores the mode from before the
    # outermost block, as their `__exit__`s would; the resume function enters them again
    withs = tuple((i, vt.ctx.target_mode) for i, vt in enumerate(stack)
                  if isinstance(vt, WithExitFunctionVariable))
    outer_mode = stack[withs[0][0]].ctx.prev if withs else None
    handler = Label()

    def restore_grad_mode() -> None:
        cg.load_global_object("___set_grad_enabled", _set_grad_enabled_fn())
        cg.load_const(bool(outer_mode))
        cg.call(1)
        cg.append(Instr("POP_TOP"))

    if withs:
        try_begin = TryBegin(handler, push_lasti=False)
        cg.append(try_begin)
    wrap_at = None  # the stack position of a user callable the graph broke inside of
    if getattr(brk.reason, "inlined", False):
        if inst.name in ("CALL", "CALL_KW"):  # [pair of callable and NULL/self], args[, names]
            top = n_stack - inst.arg - (inst.name == "CALL_KW")
            first = stack[top - 2]
            wrap_at = top - 1 if isinstance(first, NullVariable) else top - 2
        elif inst.name == "CALL_FUNCTION_EX":  # NULL, fn (3.13: fn, NULL), args[, kwargs]
            wrap_at = n_stack - 2 - (inst.arg & 1) - \
                (versions.this("CALL_FUNCTION_EX.null") == "above")
        if wrap_at is not None and not _user_callable(stack[wrap_at]):
            wrap_at = None
    for i, vt in enumerate(stack):
        if i == wrap_at:
            cg.load_global_object("___mtc_jit", _jit_wrap_for(backend))
            cg.reconstruct(vt)
            cg.call(1)
        elif isinstance(vt, WithExitFunctionVariable):
            cg.load_const(None)  # a placeholder: the resume function enters the block again
        else:
            cg.reconstruct(vt)
    name = inst.name
    original, offset = original_of(tx.code)
    lineno = inst.lineno or tx.code.co_firstlineno

    def resume_at(index: int, depth: int, pushed: int, eager: bool = False) -> None:
        # positions below what the instruction pushed are the untouched part of `stack`
        nulls = tuple(i for i in range(depth - pushed) if isinstance(stack[i], NullVariable))
        kept = tuple((i, mode) for i, mode in withs if i < depth - pushed)
        live = tuple(tx.live_locals(index))
        target = index - offset
        code = make_resume(original, target, depth, live, tx.f_globals, nulls, kept)
        if withs:  # leave the blocks: the resume function enters them again
            restore_grad_mode()
        skip = set(nulls) | {i for i, _ in kept}
        for i in reversed(range(depth)):
            cg.store_local("___null" if i in skip else f"___tmp_{i}")
        make = _eager_rest_function if eager else _resume_function
        if not tx.code.co_freevars:  # the common case: a global, as torch names it
            cg.output.globals_to_install[code.co_name] = make(code, None, backend)
            cg.load_global(code.co_name, push_null=True)
        else:  # the resume function needs this frame's closure cells: build it here
            cg.load_global_object(f"___make{code.co_name}",
                                  lambda cells, c=code: make(c, cells, backend))
            for fv in tx.code.co_freevars:
                cg.load_closure(fv)
            cg.append(Instr("BUILD_TUPLE", len(tx.code.co_freevars)))
            cg.call(1)
            cg.store_local(code.co_name)  # a local of that name: the decompiled view reads well
            cg.load_callable(lambda: cg.load_local(code.co_name))
        for i in range(depth):
            if i not in skip:
                cg.load_local(f"___tmp_{i}")
        for local in live:
            if local in tx.symbolic_locals:
                cg.reconstruct(tx.symbolic_locals[local])
            else:
                cg.load_local(local)  # an argument the traced part never read
        cg.call(depth - len(skip) + len(live))
        cg.append(Instr("RETURN_VALUE"))

    def end_try() -> None:
        if withs:
            cg.append(TryEnd(try_begin))

    if brk.at_checkpoint:  # torch's step_graph_break: the rest of the frame, eagerly
        resume_at(brk.index, n_stack, 0, eager=True)
    elif isinstance(brk.reason, ComprehensionBreak):  # 3.12+: the comprehension, as a call
        comp = brk.reason.comp
        emit_comprehension_call(cg, tx, comp, offset, lineno, _eager_code(backend))
        end_try()
        resume_at(comp.end + 1, n_stack, 1)
    elif name in ("CALL", "CALL_KW", "CALL_FUNCTION_EX"):
        if name == "CALL":
            cg.call(inst.arg, brk.kw_names)
            depth = n_stack - inst.arg - 2 + 1
        elif name == "CALL_KW":  # 3.13: the names tuple is already on the stack
            cg.append(Instr("CALL_KW", inst.arg, lineno=lineno))
            depth = n_stack - inst.arg - 3 + 1
        else:
            cg.append(Instr("CALL_FUNCTION_EX", inst.arg))
            depth = n_stack - (2 + (inst.arg & 1)) - 1 + 1
        end_try()
        resume_at(brk.index + 1, depth, 1)
    elif name.startswith("POP_JUMP"):
        label = Label()
        cg.jump_if(name.endswith("TRUE"), label, lineno=lineno)
        end_try()
        resume_at(brk.index + 1, n_stack - 1, 0)
        cg.append(label)
        resume_at(tx.labels[inst.arg], n_stack - 1, 0)
    elif name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):
        label = Label()  # 3.11 only (3.12 compiles `a or b` to COPY; POP_JUMP_IF_TRUE)
        cg.append(Instr("COPY", 1))
        cg.jump_if("TRUE" in name, label, lineno=lineno)
        end_try()
        cg.append(Instr("POP_TOP"))
        resume_at(brk.index + 1, n_stack - 1, 0)
        cg.append(label)
        resume_at(tx.labels[inst.arg], n_stack, 1)
    else:
        if name == "UNARY_NOT" and versions.NEEDS_TO_BOOL:  # 3.13: `not` reads an exact bool
            cg.append(Instr("TO_BOOL", lineno=lineno))
        cg.append(Instr(name, inst.arg, lineno=lineno) if inst.require_arg() else
                  Instr(name, lineno=lineno))
        if not inst.require_arg():  # STORE_SUBSCR, UNARY_NOT: no oparg allowed
            effect = _dis.stack_effect(inst.opcode)
        else:
            effect = _dis.stack_effect(inst.opcode, inst.arg if isinstance(inst.arg, int) else
                                       _oparg(inst), jump=False)
        pushed = 0 if name in ("STORE_ATTR", "STORE_GLOBAL", "STORE_SUBSCR", "STORE_SLICE") \
            else 1
        end_try()
        resume_at(brk.index + 1, n_stack + effect, pushed)
    if withs:  # the instruction raised: leave the blocks as their `__exit__`s would, re-raise
        cg.append(handler)
        restore_grad_mode()
        cg.append(Instr("RERAISE", 0))


def _set_grad_enabled_fn():
    from ..autograd.grad_mode import _set_grad_enabled

    return _set_grad_enabled


def _oparg(inst) -> int:
    """A numeric oparg for ``dis.stack_effect`` (only its shape matters for these opcodes)."""
    if inst.name in ("BINARY_OP", "COMPARE_OP"):
        return int(inst.arg)
    return 0
