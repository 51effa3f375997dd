"""Check a generated code object before it may run (after ``torch/_dynamo/bytecode_analysis.py``).

CPython trusts its bytecode: a ``LOAD_FAST`` of an empty slot (3.12+), a ``CALL`` whose
callable slot holds the NULL, a stack deeper than ``co_stacksize`` or an exception handler that
pops below the stack's bottom is not an exception but a **segmentation fault**.  The compiler
makes new code objects — transformed code and resume functions — so it checks each one with
``check_code`` before handing it out; a failure is an internal compiler error (the frame runs
eagerly with a warning, ``fullgraph=True`` raises), never a crash.  torch checks less (its
``stacksize_analysis`` computes the stack size); we can afford the full walk because our code
objects are small.

The check is an abstract interpretation over ``dis.get_instructions(code)`` — the bytecode the
interpreter will actually see, whatever library built it:

* the **state** before an instruction is the stack as a tuple of kinds — ``v`` a value, ``c``
  a cell taken out of its slot (3.12+ ``LOAD_FAST_AND_CLEAR``, put back after a comprehension),
  ``n`` CPython's NULL, ``m`` maybe-NULL (paths disagree, or ``LOAD_FAST_AND_CLEAR`` of a
  maybe-unbound local) — the fast-locals slots bound on *every* path to it, and the slots that
  hold a cell (after ``MAKE_CELL``/``COPY_FREE_VARS``);
* each instruction's **effect** on the depth is ``dis.stack_effect`` (separately for a taken
  and a not-taken jump); which slots it consumes and what kinds it pushes come from
  ``_effect`` — exact rules for the instructions that touch NULLs or locals (calls, method and
  global loads, ``STORE_FAST``, ``SWAP``/``COPY`` …), a rule by family for the rest;
* states flow along fall-through, jump and exception-table edges (a handler starts from the
  covered instruction's stack cut to the entry's depth, plus ``lasti`` and the exception) to a
  fixpoint; two paths that reach an instruction with different depths are an error.

Not checked: operand *types* (3.12+'s ``BUILD_CONST_KEY_MAP`` trusts its keys to be a tuple):
the compiler only generates loads, calls, containers and jumps; instructions it copies from the
original function are CPython's compiler's output.

Errors found: inconsistent or negative depth, a depth over ``co_stacksize``, a NULL consumed by
anything but a call's NULL slot / ``STORE_FAST`` / ``SWAP``, a missing callable, a local read
before it is bound on some path (where ``LOAD_FAST`` does not check, 3.12+), a cell read before
``MAKE_CELL``/``COPY_FREE_VARS``, an exception-table entry deeper than the stack it covers,
running off the end of the code, 3.11's ``PRECALL n`` not paired with ``CALL n``.
"""

from __future__ import annotations

import dis
import types

from . import bytecode_versions as versions


class InvalidBytecode(Exception):
    """A generated code object failed ``check_code`` (an internal compiler error)."""


_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE",
                  "JUMP"}
# instructions that leave the stack alone
_NO_STACK = {"NOP", "RESUME", "EXTENDED_ARG", "CACHE", "MAKE_CELL", "COPY_FREE_VARS", "KW_NAMES",
             "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE",
             "DELETE_FAST", "DELETE_DEREF", "DELETE_GLOBAL", "DELETE_NAME", "SETUP_ANNOTATIONS"}
# families that pop their operands and push nothing
_PUSH_NOTHING = ("STORE_", "DELETE_", "POP_JUMP", "RETURN_VALUE", "RETURN_CONST",
                 "RAISE_VARARGS", "RERAISE", "LIST_APPEND", "SET_ADD", "MAP_ADD", "LIST_EXTEND",
                 "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "POP_TOP", "POP_EXCEPT",
                 "IMPORT_STAR", "PRINT_EXPR", "END_FOR")


_DEPTH_OVERRIDES = {"RETURN_GENERATOR": 1}
# 3.13's fused pairs of local accesses, and which of their two slots each one reads
_DUAL = {"LOAD_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"}
_READ_SLOTS = {"LOAD_FAST": slice(0, 1), "LOAD_FAST_LOAD_FAST": slice(0, 2),
               "STORE_FAST_LOAD_FAST": slice(1, 2)}


def _merge_kind(a: str, b: str) -> str:
    if a == b:
        return a
    return "v" if {a, b} == {"v", "c"} else "m"


class _Walker:
    def __init__(self, code: types.CodeType):
        self.code = code
        self.insts = [i for i in dis.get_instructions(code)]
        self.index_of = {ins.offset: k for k, ins in enumerate(self.insts)}
        self.handlers = dis.Bytecode(code).exception_entries
        self.states: dict[int, tuple] = {}
        self.max_depth = 0
        nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + \
            bool(code.co_flags & 0x08)
        self.entry_bound = frozenset(range(nargs))
        # CPython 3.11+'s fast locals: varnames, then cells that are not arguments, then frees
        self.names = list(code.co_varnames) + [c for c in code.co_cellvars
                                               if c not in code.co_varnames]
        self.free_slots = set(range(len(self.names), len(self.names) + len(code.co_freevars)))
        self.names += list(code.co_freevars)
        self.cell_slots = {i for i, n in enumerate(self.names)
                           if n in code.co_cellvars} | self.free_slots

    def fail(self, ins, problem: str):
        where = f"offset {ins.offset} {ins.opname} {ins.argrepr}".rstrip() if ins else "entry"
        raise InvalidBytecode(f"generated code {self.code.co_name!r}: {where}: {problem}")

    # ------------------------------------------------------------------ the fixpoint
    def run(self) -> None:
        if not self.insts:
            raise InvalidBytecode(f"generated code {self.code.co_name!r} is empty")
        self.flow(None, 0, ((), self.entry_bound, frozenset()))
        todo = [0]
        while todo:
            k = todo.pop()
            for target, state in self.successors(k):
                if self.flow(self.insts[k], target, state):
                    todo.append(target)
        if self.max_depth > self.code.co_stacksize:
            raise InvalidBytecode(f"generated code {self.code.co_name!r}: the stack reaches "
                                  f"{self.max_depth} > co_stacksize {self.code.co_stacksize}")

    def flow(self, src, k: int, state) -> bool:
        """Merge ``state`` into instruction ``k``'s; True if that changed it."""
        if k >= len(self.insts):
            self.fail(src, "runs off the end of the code")
        stack, bound, cells = state
        self.max_depth = max(self.max_depth, len(stack))
        old = self.states.get(k)
        if old is None:
            self.states[k] = state
            return True
        if len(old[0]) != len(stack):
            self.fail(self.insts[k], f"reached with stack depths {len(old[0])} and {len(stack)}")
        new = (tuple(map(_merge_kind, old[0], stack)), old[1] & bound, old[2] & cells)
        if new != old:
            self.states[k] = new
            return True
        return False

    def successors(self, k: int):
        ins = self.insts[k]
        state = self.states[k]
        self.check_locals(ins, state)
        if versions.HAS_PRECALL and ins.opname in ("PRECALL", "CALL"):
            # 3.11: dis books the arguments at PRECALL, but CALL n reads n + 2 slots itself: the
            # two must be adjacent and agree on n (as CPython's compiler always makes them)
            j = k + 1 if ins.opname == "PRECALL" else k - 1
            other = self.insts[j] if 0 <= j < len(self.insts) else None
            want = "CALL" if ins.opname == "PRECALL" else "PRECALL"
            if other is None or other.opname != want or other.arg != ins.arg:
                self.fail(ins, f"3.11 pairs PRECALL n with CALL n; next to it: "
                               f"{other.opname if other else 'nothing'}")
        for entry in self.handlers:  # the exception edge of a covered instruction
            if entry.start <= ins.offset < entry.end:
                if len(state[0]) < entry.depth:
                    self.fail(ins, f"the exception table entry to {entry.target} keeps "
                                   f"{entry.depth} values, the stack holds {len(state[0])}")
                stack = state[0][:entry.depth] + ("v",) * (int(entry.lasti) + 1)
                if entry.target not in self.index_of:
                    self.fail(ins, f"exception handler at {entry.target} is not an instruction")
                yield self.index_of[entry.target], (stack, state[1], state[2])
        if ins.opname in _TERMINAL:
            self.effect(ins, state, jump=False)
            return
        is_jump = ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs
        if is_jump:
            target = self.index_of.get(ins.argval)
            if target is None:
                self.fail(ins, f"jumps to {ins.argval}, not an instruction")
            yield target, self.effect(ins, state, jump=True)
            if ins.opname in _UNCONDITIONAL:
                return
        yield k + 1, self.effect(ins, state, jump=False)

    # ------------------------------------------------------------------ locals and cells
    def slots(self, ins) -> tuple:
        """The fast-locals slots (``localsplus`` indices) ``ins`` names; 3.13's fused pairs
        pack two 4-bit indices."""
        if ins.opname in _DUAL:
            return (ins.arg >> 4, ins.arg & 15)
        return (ins.arg,)

    def check_locals(self, ins, state) -> None:
        """Slots are compared by index, not name: a generated local that shadows a free variable
        (same name, a new empty slot) is exactly the kind of bug this catches."""
        _, bound, cells = state
        name = ins.opname
        if name in ("LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE") and \
                ins.arg not in cells:
            self.fail(ins, f"cell {ins.argval!r} used before MAKE_CELL/COPY_FREE_VARS")
        reads = self.slots(ins)[_READ_SLOTS[name]] if name in _READ_SLOTS else ()
        if name == "STORE_FAST_LOAD_FAST":  # the store comes first
            reads = tuple(slot for slot in reads if slot != self.slots(ins)[0])
        for slot in reads:
            if slot in cells:  # 3.13 loads a closure's cell with LOAD_FAST
                continue
            if slot not in bound and not versions.LOAD_FAST_CHECKED:
                self.fail(ins, f"local {self.names[slot]!r} (slot {slot}) may be unbound here "
                               "(LOAD_FAST does not check on this Python: it would read a NULL)")

    # ------------------------------------------------------------------ effects
    def effect(self, ins, state, jump: bool):
        stack, bound, cells = state
        name, arg = ins.opname, ins.arg
        try:
            depth_change = dis.stack_effect(ins.opcode, arg, jump=jump) if arg is not None \
                else dis.stack_effect(ins.opcode, jump=jump)
        except ValueError as e:
            self.fail(ins, f"no stack effect: {e}")
        # odd: 3.12's dis gives RETURN_GENERATOR 0, yet the POP_TOP after it pops what it left
        depth_change = _DEPTH_OVERRIDES.get(name, depth_change)
        stack = list(stack)

        def pop(n: int, allow_null=False) -> list:
            if n > len(stack):
                self.fail(ins, f"pops {n} values from a stack of {len(stack)}")
            taken = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            if not allow_null and any(t not in "vc" for t in taken):
                self.fail(ins, "consumes a NULL (only a call's NULL slot may hold one)")
            return taken

        def call_pair() -> None:  # the two slots under a call's arguments
            first, second = pop(2, allow_null=True)
            callable_kind = first if versions.NULL_ABOVE_CALLABLE else second
            if callable_kind not in "vc":
                self.fail(ins, "the callable of this call may be NULL")

        if name in _NO_STACK:
            if name == "MAKE_CELL":
                cells = cells | {arg}
            elif name == "COPY_FREE_VARS":
                cells = cells | self.free_slots
            elif name == "DELETE_FAST":
                bound = bound - {arg}
        elif name == "PUSH_NULL":
            stack.append("n")
        elif name == "LOAD_GLOBAL" and arg & 1:
            stack += ["v", "n"] if versions.NULL_ABOVE_CALLABLE else ["n", "v"]
        elif (name == "LOAD_ATTR" and versions.this("LOAD_ATTR.arg") != "name" and arg & 1) or \
                name == "LOAD_METHOD" or (name == "LOAD_SUPER_ATTR" and arg & 1):
            pop(3 if name == "LOAD_SUPER_ATTR" else 1)
            stack += ["v", "m"] if versions.NULL_ABOVE_CALLABLE else ["m", "v"]
        elif name == "PRECALL":  # 3.11: dis counts the arguments here (and the pair at CALL)
            pop(arg)
            saved = list(stack)
            call_pair()
            stack = saved
        elif name in ("CALL", "CALL_KW"):
            pop(-depth_change - 1)  # the arguments (and CALL_KW's names) still on the stack
            call_pair()
            stack.append("v")
        elif name == "CALL_FUNCTION_EX":
            pop(1 + (arg & 1))
            call_pair()
            stack.append("v")
        elif name == "STORE_FAST":
            kind = pop(1, allow_null=True)[0]
            bound = bound | {arg} if kind in "vc" else bound - {arg}
            if arg in self.cell_slots:  # a saved cell put back ("c"), or a plain loop variable
                cells = cells | {arg} if kind == "c" else cells - {arg}
        elif name == "STORE_FAST_STORE_FAST":
            pop(2)
            bound = bound | set(self.slots(ins))
        elif name == "STORE_FAST_LOAD_FAST":
            pop(1)
            bound = bound | {self.slots(ins)[0]}
            stack.append("v")
        elif name == "LOAD_FAST_CHECK":  # raises if unbound: bound on the path after it
            stack.append("v")
            bound = bound | {arg}
        elif name == "LOAD_FAST_AND_CLEAR":  # 3.12+: also takes a cell out of its slot
            stack.append("c" if arg in cells else "v" if arg in bound else "m")
            bound, cells = bound - {arg}, cells - {arg}
        elif name == "SWAP":
            if arg > len(stack):
                self.fail(ins, f"swaps with position {arg} of a stack of {len(stack)}")
            stack[-1], stack[-arg] = stack[-arg], stack[-1]
        elif name == "COPY":
            if arg > len(stack) or stack[-arg] not in "vc":
                self.fail(ins, f"copies position {arg}, which is not a value")
            stack.append("v")
        elif name == "FOR_ITER" or name.startswith("UNPACK_"):
            pop(1)  # the iterator (kept when not exhausted) / the sequence
            stack += ["v"] * (1 + depth_change)
        elif name in ("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP"):  # 3.11
            pop(1)
            stack += ["v"] * (1 + depth_change)
        elif name.startswith(_PUSH_NOTHING):
            pop(-depth_change)
        elif depth_change > 0 and (name.startswith(("LOAD_", "BUILD_")) or
                                   name == "RETURN_GENERATOR"):
            stack += ["v"] * depth_change  # a pure load (or an empty container)
        else:  # pops its operands, pushes results
            pops = max(0, -depth_change) + 1
            pop(pops)
            stack += ["v"] * (pops + depth_change)
        if len(stack) != len(state[0]) + depth_change:
            self.fail(ins, f"effect rule disagrees with dis.stack_effect ({depth_change})")
        return tuple(stack), bound, cells


def check_code(code: types.CodeType) -> types.CodeType:
    """Walk every path of ``code``; raise ``InvalidBytecode`` naming the first problem found,
    else return ``code`` unchanged."""
    _Walker(code).run()
    return code
