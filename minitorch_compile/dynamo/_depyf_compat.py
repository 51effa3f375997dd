"""Teach depyf 0.20 (the newest release) CPython 3.13's bytecode — for the *viewer* only.

depyf decompiles our transformed code and resume functions into Python for ``decompiled()``.
Its 0.20 release predates 3.13: it has no handlers for ``CALL_KW``, ``TO_BOOL``, the fused
``LOAD_FAST_LOAD_FAST`` family or the split f-string opcodes, reads jump targets from
``argrepr`` (3.13 prints labels, ``to L1``), and models the NULL of a call *below* the
callable (its ``PUSH_NULL`` pushes ``None``, its ``CALL`` pops the callable then a ``None``),
while 3.13 pushes it above.  ``patch(depyf)`` adds the missing handlers, each written in terms
of depyf's own (``LOAD_FAST_LOAD_FAST`` is two ``LOAD_FAST``s), and is a no-op on versions
depyf already understands.  Nothing here affects what runs: only how it is shown.
"""

from __future__ import annotations

import dataclasses

from . import bytecode_versions as versions

_PATCHED = False


def patch(depyf_module) -> None:
    global _PATCHED
    if _PATCHED or versions.PY < (3, 13):
        return
    from depyf import code_transform
    from depyf.decompiler import Decompiler

    _PATCHED = True
    original_target = code_transform.Instruction.get_jump_target

    def get_jump_target(self):  # 3.13's argrepr says "to L1"; argval is the target offset
        if self.is_jump() and isinstance(self.argval, int):
            return self.argval
        return original_target(self)

    code_transform.Instruction.get_jump_target = get_jump_target

    def as_(inst, opname, argval):
        return dataclasses.replace(inst, opname=opname, argval=argval, argrepr=str(argval))

    def push_null(self, inst):
        """3.13's NULL sits above the callable, where depyf's CALL does not look for it; the
        decompiled source has no use for it: leave it out."""

    def call_kw(self, inst):
        names = self.state.stack.pop()
        args = [self.state.stack.pop() for _ in range(inst.argval)][::-1]
        kw_names = eval(names) if isinstance(names, str) else tuple(names)
        pos = args[:len(args) - len(kw_names)]
        kws = [f"{k}={v}" for k, v in zip(kw_names, args[len(args) - len(kw_names):])]
        func = self.state.stack.pop()
        if self.state.stack and self.state.stack[-1] is None:
            self.state.stack.pop()
        self.state.stack.append(f"{func}({', '.join(pos + kws)})")
        self.replace_mutable_tos_with_temp()

    def load_fast_load_fast(self, inst):
        for name in inst.argval:
            self.LOAD_FAST(as_(inst, "LOAD_FAST", name))

    def store_fast_store_fast(self, inst):
        for name in inst.argval:
            self.STORE_FAST(as_(inst, "STORE_FAST", name))

    def store_fast_load_fast(self, inst):
        store, load = inst.argval
        self.STORE_FAST(as_(inst, "STORE_FAST", store))
        self.LOAD_FAST(as_(inst, "LOAD_FAST", load))

    def to_bool(self, inst):  # only before a jump or `not`, which read the truth themselves
        pass

    def convert_value(self, inst):
        func = {1: "str", 2: "repr", 3: "ascii"}[inst.arg]
        self.state.stack.append(f"{func}({self.state.stack.pop()})")

    def format_simple(self, inst):
        self.state.stack.append(f"format({self.state.stack.pop()}, '')")

    def format_with_spec(self, inst):
        spec = self.state.stack.pop()
        self.state.stack.append(f"format({self.state.stack.pop()}, {spec})")

    for name, fn in {"PUSH_NULL": push_null, "CALL_KW": call_kw, "TO_BOOL": to_bool,
                     "LOAD_FAST_LOAD_FAST": load_fast_load_fast,
                     "STORE_FAST_STORE_FAST": store_fast_store_fast,
                     "STORE_FAST_LOAD_FAST": store_fast_load_fast,
                     "CONVERT_VALUE": convert_value, "FORMAT_SIMPLE": format_simple,
                     "FORMAT_WITH_SPEC": format_with_spec}.items():
        setattr(Decompiler, name, fn)
