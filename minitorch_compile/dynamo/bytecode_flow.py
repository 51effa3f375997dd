"""The tracer's view of a code object: its instructions, and which ones can follow which.

``_instructions(code)`` decodes a code object once (cached) into the list of real
instructions the interpreter steps through and, for every jump label, the index it lands on.
``_exception_edges(code)`` reads the 3.11+ exception table: for each instruction covered by a
``try``, the index of its handler.  On those two, ``_reachable`` is a plain graph search —
fall-through (except after an unconditional jump or a return/raise), jump targets, exception
edges — and ``_reachable_reads`` collects the locals read by any reachable instruction.

The root frame uses them to decide where a graph may break: the loops (backward jumps on the
normal path), whether an instruction is inside a ``try``, and which locals are *live* at a
break — the ones its resume function must be passed (a conservative liveness: a name read on
*some* path from there).

PyTorch keeps the liveness analysis (``livevars_analysis``) and the reachability walk behind
dead-code removal in ``torch/_dynamo/bytecode_analysis.py``; our ``bytecode_analysis.py`` holds
the other half of that file, the stack check of generated code.
"""

from __future__ import annotations

import types

import bytecode
from bytecode import Bytecode, Label

_INSTRUCTION_CACHE: dict = {}


def _instructions(code: types.CodeType):
    """Real instructions of ``code`` and, for each jump label, the index it lands on."""
    hit = _INSTRUCTION_CACHE.get(code)
    if hit is not None:
        return hit
    insts, labels = [], {}
    for item in Bytecode.from_code(code):
        if isinstance(item, Label):
            labels[item] = len(insts)
        elif isinstance(item, bytecode.Instr):
            insts.append(item)
        # TryBegin/TryEnd/SetLineno: exception-table bookkeeping, not executed
    _INSTRUCTION_CACHE[code] = (insts, labels)
    return insts, labels


_EDGES_CACHE: dict = {}


def _exception_edges(code: types.CodeType) -> dict:
    """``{index of a covered instruction: index of its handler}`` from the exception table."""
    hit = _EDGES_CACHE.get(code)
    if hit is not None:
        return hit
    import dis

    entries = dis.Bytecode(code).exception_entries
    edges, index_of, n, start = {}, {}, 0, None
    offsets = []
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":  # belongs to the instruction it extends
            start = ins.offset if start is None else start
            continue
        offset = ins.offset if start is None else start
        offsets.append(offset)
        index_of[offset] = n
        n, start = n + 1, None
    for k, offset in enumerate(offsets):
        for e in entries:
            if e.start <= offset < e.end:
                edges[k] = index_of.get(e.target, k)
                break
    _EDGES_CACHE[code] = edges
    return edges


_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                  "JUMP_ABSOLUTE"}
_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
# instructions that read locals (3.13's fused pairs name two: (first, second))
_READS = {"LOAD_FAST": (0,), "LOAD_DEREF": (0,), "LOAD_CLOSURE": (0,), "DELETE_FAST": (0,),
          "LOAD_FAST_CHECK": (0,), "LOAD_FAST_AND_CLEAR": (0,), "LOAD_FAST_LOAD_FAST": (0, 1),
          "STORE_FAST_LOAD_FAST": (1,)}


def _reachable_reads(insts, labels, start: int, handlers: dict) -> set:
    """Every local name read by an instruction reachable from ``start`` (through exception
    handlers too: ``handlers`` maps a covered instruction to its handler)."""
    read = set()
    for i in _reachable(insts, labels, start, handlers):
        ins = insts[i]
        if ins.name in _READS:
            names = ins.arg if isinstance(ins.arg, tuple) else (ins.arg,)
            read.update(getattr(names[k], "name", names[k]) for k in _READS[ins.name])
    return read


def _reachable(insts, labels, start: int, handlers: dict | None = None) -> set:
    """Indices of the instructions reachable from ``start`` along jumps and fall-through (and
    exception-table edges, if ``handlers`` are given)."""
    seen, todo = set(), [start]
    while todo:
        i = todo.pop()
        if i in seen or i >= len(insts):
            continue
        seen.add(i)
        if handlers and i in handlers:
            todo.append(handlers[i])
        ins = insts[i]
        if ins.name in _TERMINAL:
            continue
        target = labels.get(ins.arg) if isinstance(ins.arg, Label) else None
        if ins.name not in _UNCONDITIONAL:
            todo.append(i + 1)
        if target is not None:
            todo.append(target)
    return seen
