"""The code a frame runs after its graph when it broke (``torch/_dynamo/symbolic_convert.py``:
``create_call_resume_at``; ``resume_execution.py`` builds the resume functions it calls).

The transformed code of a frame that broke at instruction I::

    graph_out = __compiled_fn_N(<graph inputs>)    # the graph captured before I
    <cells = their values>                          # only with shared cells (below)
    <rebuild the stack I expects>                  # graph outputs, constants, sources
    I                                              # in plain Python: the call, the jump ...
    ___tmp_k ... ___tmp_0 = <stack after I>        # park the stack in locals
    return __resume_at_J(___tmp_0..k, *live locals)  # continue (a jump: one return per target)

A NULL on the stack (CPython pushes one beside a callable: ``int(t.item())`` breaks with
``NULL, int`` — 3.13: ``int, NULL`` — waiting under the ``.item()`` call) cannot be passed as
an argument: it is parked in ``___null`` (STORE_FAST of a NULL leaves that local unbound; it
is never read) and the resume function's prologue pushes it again with ``PUSH_NULL``.

A 3.12+ comprehension that broke runs as one call (``comprehension_graph_break.py``); the
locals it assigns with ``:=`` come back with its result and are passed on — or, when one was
never bound (an empty loop), the resume function that does not take it is called, so reading it
raises ``UnboundLocalError`` where the program would.

**Cells** (torch's way, ``shared_cells``): when a nested function live at the break closes over
a cell variable of the frame, the transformed code keeps the frame's cells as real cells
(``MAKE_CELL``), stores their values at the break, makes the nested function with them
(``LOAD_CLOSURE``) and hands them to the resume function as its *free* variables — so a
``nonlocal`` write by either side is seen by the other.  Otherwise each cell's value is passed
on and the resume function makes cells of its own.

Where the versions differ (the NULL's side of the callable, PRECALL, KW_NAMES vs CALL_KW,
jump names, 3.13's TO_BOOL before a jump) the code generator asks ``bytecode_versions``.
"""

from __future__ import annotations

import types

from bytecode import CellVar, Instr, Label, TryBegin, TryEnd

from . import bytecode_versions as versions
from .bytecode_flow import _exception_edges, _reachable_reads
from .comprehension_graph_break import (
    UNBOUND,
    UNBOUND_GLOBAL,
    ComprehensionBreak,
    emit_comprehension_call,
    unbound_targets,
)
from .resume_execution import RESUME_INFO, make_resume, original_of


def _jit_wrap_for(backend):
    """What the break's code calls on a user callable so the callee is compiled as its own frame
    (the frame-evaluation hook would do that in torch)."""
    from .eval_frame import jit_wrap

    return lambda obj: jit_wrap(obj, backend)


def _resume_function(code, closure, backend, fresh: bool = False):
    from .eval_frame import jit_resume

    return jit_resume(code, closure, backend, cache=not fresh)


def shared_cells(tx) -> tuple:
    """The cell variables the transformed code keeps and shares with the resume function: all
    of the frame's, when a nested function live at the break (on the stack, in a local, or in a
    container there) closes over one of them; () otherwise (and for a resume function's frame,
    or a frame whose body makes a cell — 3.12's comprehension capturing its loop variable)."""
    import dis

    from .side_effects import _walk
    from .variables.functions import FrameCell, NestedUserFunctionVariable

    code, brk = tx.code, tx.graph_break
    if brk is None or not code.co_cellvars or RESUME_INFO.get(code) is not None or \
            sum(i.opname == "MAKE_CELL" for i in dis.get_instructions(code)) != \
            len(code.co_cellvars):
        return ()
    for vt in _walk(list(brk.stack) + list(tx.symbolic_locals.values())):
        if isinstance(vt, NestedUserFunctionVariable) and any(
                isinstance(c, FrameCell) and c.tx is tx for c in vt.closure.values()):
            return tuple(code.co_cellvars)
    return ()


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
    from .variables.misc import GetAttrVariable
    from .variables.nn_module import NNModuleVariable
    from .variables.user_defined import NewObjectVariable, UserDefinedObjectVariable

    if isinstance(vt, GetAttrVariable):  # (an optimizer's too: its step is its own frame)
        return _user_callable(vt.obj) or (isinstance(vt.obj, UserDefinedObjectVariable)
                                          and not isinstance(vt.obj, NewObjectVariable))
    if isinstance(vt, UserDefinedObjectVariable):  # an object with a Python __call__
        return isinstance(getattr(type(vt.value), "__call__", None), types.FunctionType)
    return isinstance(vt, (BaseUserFunctionVariable, NNModuleVariable))


def emit_graph_break(cg, tx, brk, backend) -> None:
    """Append to ``cg`` the code that finishes a frame which broke at ``brk``."""
    import dis as _dis

    from .variables.ctx_manager import WithExitFunctionVariable
    from .variables.misc import NullVariable

    inst, stack = brk.inst, brk.stack
    n_stack = len(stack)
    shared = cg.shared_cells
    for name in shared:  # the cells get the values the trace left in them
        if name in tx.symbolic_locals:
            cg.reconstruct(tx.symbolic_locals[name])
            cg.append(Instr("STORE_DEREF", CellVar(name)))
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
    # the resume function shares the cells this frame keeps — or, in a resume function's frame,
    # the cells it was itself given (its free variables that are cells of the original)
    resume_cells = shared or tuple(n for n in tx.code.co_freevars if n in original.co_cellvars)
    lineno = inst.lineno or tx.code.co_firstlineno

    def resume_at(index: int, depth: int, pushed: int, eager: bool = False,
                  walrus: dict | None = None) -> None:
        # positions below what the instruction pushed are the untouched part of `stack`
        nulls = tuple(i for i in range(depth - pushed) if isinstance(stack[i], NullVariable))
        kept = tuple((i, mode) for i, mode in withs if i < depth - pushed)
        live = tuple(n for n in tx.live_locals(index) if n not in resume_cells)
        walrus = walrus or {}
        if walrus:  # a comprehension's `:=` targets: in locals of their own (if read later)
            reads = _reachable_reads(tx.insts, tx.labels, index, _exception_edges(tx.code))
            live = tuple(n for n in tx.code.co_varnames if n in live or (
                n in walrus and n in reads))
        target = index - offset
        code = make_resume(original, target, depth, live, tx.f_globals, nulls, kept,
                           resume_cells)
        if withs:  # leave the blocks: the resume function enters them again
            restore_grad_mode()
        skip = set(nulls) | {i for i, _ in kept}
        for i in reversed(range(depth)):
            cg.store_local("___null" if i in skip else f"___tmp_{i}")
        make = _eager_rest_function if eager else _resume_function
        cells = resume_cells + tuple(original.co_freevars)
        if not cells:  # the common case: a global, as torch names it
            cg.output.globals_to_install[code.co_name] = make(code, None, backend)
            cg.load_global(code.co_name, push_null=True)
        else:  # the resume function needs this frame's closure cells: build it here
            fresh = bool(shared)  # (cells made by every call: no function cached per cell)
            cg.load_global_object(
                f"___make{code.co_name}", lambda cells, c=code: make(c, cells, backend, fresh)
                if make is _resume_function else make(c, cells, backend))
            for fv in cells:
                cg.load_closure(fv)
            cg.append(Instr("BUILD_TUPLE", len(cells)))
            cg.call(1)
            cg.store_local(code.co_name)  # a local of that name: the decompiled view reads well
            cg.load_callable(lambda: cg.load_local(code.co_name))
        for i in range(depth):
            if i not in skip:
                cg.load_local(f"___tmp_{i}")
        for local in live:
            if local in walrus:
                cg.load_local(walrus[local])
            elif local in tx.symbolic_locals:
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
        unbound = unbound_targets(tx, comp)  # (at most one: break_verdict.py)
        walrus = emit_comprehension_call(cg, tx, comp, offset, lineno, _eager_code(backend))
        end_try()
        if unbound:  # still unbound after an empty loop: resume without it (reading it raises)
            label = Label()
            cg.load_local(walrus[unbound[0]])
            cg.load_global_object(UNBOUND_GLOBAL, UNBOUND, push_null=False)
            cg.append(Instr("IS_OP", 0))
            cg.jump_if(True, label, lineno=lineno)
            resume_at(comp.end + 1, n_stack, 1, walrus=walrus)
            cg.append(label)
            del walrus[unbound[0]]
        resume_at(comp.end + 1, n_stack, 1, walrus=walrus)
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
