"""What differs between CPython 3.11, 3.12 and 3.13 for a bytecode tracer — in one table.

torch spreads these facts over ``torch/_dynamo/bytecode_transformation.py``
(``create_call_function``, ``add_push_null``, ``create_load_method``, ``create_dup_top`` …)
and ``symbolic_convert.py`` behind ``sys.version_info`` checks.  Here they are rows of
``TABLE``: one row per opcode (or per opcode property), one column per CPython version, a
comment on every entry that is odd.  The opcode handlers (``opcodes.py``), the code generator
(``codegen.py``), resume functions (``resume_execution.py``) and the checker of generated code
(``bytecode_analysis.py``) ask this module instead of testing the version themselves, so they
read the same on every version — and 3.14 is one more column.

The facts, in short (``docs/dynamo.md`` shows ``dis`` output side by side):

* **calls** — 3.11: ``PUSH_NULL; <callable>; <args>; PRECALL n; CALL n``.  3.12 drops
  ``PRECALL``.  3.13 moves the NULL *above* the callable (``<callable>; PUSH_NULL``), and
  keyword names travel as a tuple constant on the stack into ``CALL_KW`` instead of a
  ``KW_NAMES`` instruction before ``CALL``.
* **method loads** — 3.11's ``LOAD_METHOD name`` becomes 3.12's ``LOAD_ATTR`` with the low
  bit of its argument set (the ``bytecode`` library spells the argument ``(True, name)``);
  both push ``NULL, bound`` (our tracker of the bound method) below 3.13 and ``bound, NULL``
  on 3.13.
* **conditions** — 3.11's jumps carry a direction (``POP_JUMP_FORWARD_IF_FALSE``); 3.12's do
  not.  3.13's ``POP_JUMP_IF_TRUE/FALSE`` and ``UNARY_NOT`` only accept an exact ``bool``: the
  compiler puts ``TO_BOOL`` (or ``COMPARE_OP`` with its cast bit) in front.
* **loops** — 3.12's ``FOR_ITER`` jumps to an ``END_FOR`` that pops two values (the
  iterator and a dummy); on 3.13 ``END_FOR`` pops one and a ``POP_TOP`` follows.
* **comprehensions** — inlined into the function on 3.12+ (PEP 709): ``LOAD_FAST_AND_CLEAR``
  saves the loop variable (pushing ``NULL`` when it was unbound), an exception-table entry
  restores it on error.
* **locals** — 3.11's ``LOAD_FAST`` checks for an unbound slot; from 3.12 it trusts the
  compiler and ``LOAD_FAST_CHECK`` is the checked form (a generated ``LOAD_FAST`` of an unbound
  local would read a NULL: a crash).  3.13 fuses pairs: ``LOAD_FAST_LOAD_FAST`` …
"""

from __future__ import annotations

import sys

PY: tuple[int, int] = sys.version_info[:2]
SUPPORTED: tuple[tuple[int, int], ...] = ((3, 11), (3, 12), (3, 13))

_311, _312, _313 = (3, 11), (3, 12), (3, 13)

# row -> {version: value}.  Rows named after an opcode describe that opcode; "OP.property"
# rows describe one aspect of it.
TABLE: dict[str, dict[tuple[int, int], object]] = {
    # --------------------------------------------------------------- calls
    # where CALL expects the NULL of a plain call: below the callable ([NULL, fn, args]) or,
    # 3.13, above it ([fn, NULL, args]); a method call fills that slot with `self` instead
    "CALL.null": {_311: "below", _312: "below", _313: "above"},
    # 3.11 prefixes every CALL with PRECALL (same oparg; a specialisation hook); gone in 3.12
    "PRECALL": {_311: True, _312: False, _313: False},
    # keyword names: a KW_NAMES instruction (tuple constant) right before CALL; 3.13: the
    # tuple is pushed with LOAD_CONST after the arguments and CALL_KW takes it off the stack
    "CALL.kw_names": {_311: "KW_NAMES", _312: "KW_NAMES", _313: "CALL_KW"},
    # the NULL of CALL_FUNCTION_EX (f(*args, **kw)): below the callable, 3.13 above it
    "CALL_FUNCTION_EX.null": {_311: "below", _312: "below", _313: "above"},
    # --------------------------------------------------------------- attributes
    # a method load: 3.11 LOAD_METHOD; 3.12+ LOAD_ATTR whose argument carries a method bit,
    # which the bytecode library spells (is_method, name)
    "LOAD_ATTR.arg": {_311: "name", _312: "(is_method, name)", _313: "(is_method, name)"},
    # odd: the instruction that pushes a cell for a closure tuple — 3.13 made LOAD_CLOSURE a
    # pseudo-op and loads the cell with LOAD_FAST (the bytecode library wants a FreeVar/CellVar
    # argument then: a plain name would make a new, empty local of that name — a crash)
    "LOAD_CLOSURE": {_311: "LOAD_CLOSURE", _312: "LOAD_CLOSURE", _313: "LOAD_FAST"},
    # --------------------------------------------------------------- jumps and conditions
    # the conditional jump the code generator emits (3.11 jumps carry their direction)
    "POP_JUMP_IF_FALSE": {_311: "POP_JUMP_FORWARD_IF_FALSE", _312: "POP_JUMP_IF_FALSE",
                          _313: "POP_JUMP_IF_FALSE"},
    "POP_JUMP_IF_TRUE": {_311: "POP_JUMP_FORWARD_IF_TRUE", _312: "POP_JUMP_IF_TRUE",
                         _313: "POP_JUMP_IF_TRUE"},
    # odd: 3.13's POP_JUMP_IF_TRUE/FALSE and UNARY_NOT read an exact bool (anything else
    # silently counts as False): generated code must put TO_BOOL in front of them
    "TO_BOOL": {_311: False, _312: False, _313: True},
    # odd: 3.13's COMPARE_OP has a "cast to bool" bit (16) in its argument (Compare.LT_CAST)
    "COMPARE_OP.cast_bit": {_311: 0, _312: 0, _313: 16},
    # --------------------------------------------------------------- loops
    # values END_FOR pops (3.12: the iterator and a dummy — FOR_ITER jumps *past* it at run
    # time but the tracer runs it; 3.13: one, a POP_TOP after it pops the iterator)
    "END_FOR.pops": {_311: None, _312: 2, _313: 1},
    # `yield from`: when the delegate is exhausted, 3.11's SEND replaces it with its return
    # value; 3.12+ keeps it below that value and END_SEND drops it
    "SEND.keeps_receiver": {_311: False, _312: True, _313: True},
    # --------------------------------------------------------------- locals
    # odd: only 3.11's LOAD_FAST raises UnboundLocalError on an empty slot; from 3.12 an
    # unbound LOAD_FAST reads a NULL (the compiler emits LOAD_FAST_CHECK where unsure)
    "LOAD_FAST.checked": {_311: True, _312: False, _313: False},
    # --------------------------------------------------------------- functions
    # MAKE_FUNCTION's flags say which of defaults/kwdefaults/annotations/closure lie below
    # the code object; 3.13 makes a bare function and SET_FUNCTION_ATTRIBUTE adds each
    "MAKE_FUNCTION.flags": {_311: True, _312: True, _313: False},
    # --------------------------------------------------------------- strings
    # f-strings: 3.11/3.12 FORMAT_VALUE (flags: conversion | has-spec); 3.13 splits it into
    # CONVERT_VALUE, FORMAT_SIMPLE and FORMAT_WITH_SPEC
    "FORMAT_VALUE": {_311: True, _312: True, _313: False},
}

# opcodes that exist only from some version on (or until some version), for the docs and the
# tests: name -> (first version, last version or None)
LIFETIME: dict[str, tuple[tuple[int, int], tuple[int, int] | None]] = {
    "PRECALL": (_311, _311), "KW_NAMES": (_311, _312), "LOAD_METHOD": (_311, _311),
    "JUMP_IF_TRUE_OR_POP": (_311, _311), "JUMP_IF_FALSE_OR_POP": (_311, _311),
    "POP_JUMP_FORWARD_IF_FALSE": (_311, _311), "POP_JUMP_FORWARD_IF_TRUE": (_311, _311),
    "BINARY_SLICE": (_312, None), "STORE_SLICE": (_312, None), "RETURN_CONST": (_312, _313),
    "LOAD_FAST_CHECK": (_312, None), "LOAD_FAST_AND_CLEAR": (_312, None),
    "END_FOR": (_312, None), "CALL_INTRINSIC_1": (_312, None),
    "CALL_INTRINSIC_2": (_312, None), "LOAD_SUPER_ATTR": (_312, None),
    "LOAD_FROM_DICT_OR_DEREF": (_312, None), "LOAD_FAST_LOAD_FAST": (_313, None),
    "STORE_FAST_STORE_FAST": (_313, None), "STORE_FAST_LOAD_FAST": (_313, None),
    "CALL_KW": (_313, None), "TO_BOOL": (_313, None), "CONVERT_VALUE": (_313, None),
    "FORMAT_SIMPLE": (_313, None), "FORMAT_WITH_SPEC": (_313, None),
    "SET_FUNCTION_ATTRIBUTE": (_313, None), "FORMAT_VALUE": (_311, _312),
    "END_SEND": (_312, None),
}


def this(row: str, version: tuple[int, int] = PY):
    """The entry of ``row`` for ``version`` (the running one by default); a version newer
    than the table reads the newest column (and is reported as unsupported elsewhere)."""
    column = TABLE[row]
    if version in column:
        return column[version]
    return column[max(v for v in column if v <= version)] if version > _313 else column[_311]


NULL_ABOVE_CALLABLE: bool = this("CALL.null") == "above"
HAS_PRECALL: bool = this("PRECALL")
NEEDS_TO_BOOL: bool = this("TO_BOOL")
LOAD_FAST_CHECKED: bool = this("LOAD_FAST.checked")


def callable_and_null(fn, null) -> list:
    """``fn`` and the NULL of a call in the order this version pushes them (bottom first)."""
    return [fn, null] if NULL_ABOVE_CALLABLE else [null, fn]


def split_callable(first, second, is_null) -> tuple[object, object | None]:
    """The two stack entries under a call's arguments -> ``(callable, self or None)``."""
    fn, other = (first, second) if NULL_ABOVE_CALLABLE else (second, first)
    if is_null(other):
        return fn, None
    # below 3.13 a method call reads [method, self]: `first` is the callable, `second` self
    return (first, second)


def attr_arg(arg) -> tuple[bool, str]:
    """``(is_method, name)`` from LOAD_ATTR's argument (a plain name before 3.12)."""
    return arg if isinstance(arg, tuple) else (False, arg)


def super_attr_arg(arg) -> tuple[bool, bool, str]:
    """LOAD_SUPER_ATTR's ``(is_method, two_args, name)`` as the bytecode library spells it
    (``(load_method, class_arg, name)``)."""
    return arg


# ------------------------------------------------------------------ the same code, side by side
_DUMP = """
import dis, json, sys
ns = {}
exec(compile(sys.stdin.read(), "<example>", "exec"), ns)
code = ns[sys.argv[1]].__code__
print(json.dumps([(i.positions.lineno, i.offset, i.opname, i.argrepr)
                  for i in dis.get_instructions(code)]))
"""


def find_pythons(versions: tuple = SUPPORTED) -> dict:
    """``{(3, 11): '/path/to/python', ...}`` for the CPythons on this machine (the running one,
    ``python3.X`` on the PATH, pyenv's installs) — the versions ``.ci/run`` looks for too."""
    import glob
    import os
    import shutil
    import subprocess

    found = {PY: sys.executable}
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for v in versions:
        if v in found:
            continue
        dotted = f"{v[0]}.{v[1]}"
        candidates = [shutil.which(f"python{dotted}")] + sorted(
            glob.glob(os.path.join(root, "versions", f"{dotted}.*", "bin", "python")),
            reverse=True)
        for exe in filter(None, candidates):
            probe = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                                   capture_output=True, text=True)
            if probe.returncode == 0 and probe.stdout.strip() == str(v):
                found[v] = exe
                break
    return dict(sorted(found.items()))


def side_by_side(source: str, name: str, pythons: dict | None = None, width: int = 33) -> str:
    """``dis`` of function ``name`` defined by ``source``, as each CPython in ``pythons``
    compiles it: one column per version, rows grouped by source line (``docs/dynamo.md``
    shows ``side_by_side(EXAMPLE, "f")``)."""
    import json
    import subprocess

    pythons = find_pythons() if pythons is None else pythons
    listings = {}
    for v, exe in pythons.items():
        out = subprocess.run([exe, "-c", _DUMP, name], input=source, capture_output=True,
                             text=True, check=True).stdout
        listings[v] = json.loads(out)
    lines = source.splitlines()
    cols = list(listings)
    out = ["  ".join(f"{'CPython %d.%d' % v:<{width}}" for v in cols).rstrip()]
    linenos = sorted({ln for rows in listings.values() for ln, *_ in rows if ln is not None})
    for ln in linenos + [None]:
        per = [[f"{off:>3} {op} {arg}".rstrip()[:width] for lno, off, op, arg in listings[v]
                if lno == ln] for v in cols]
        if not any(per):
            continue
        out.append(f"# line {ln}: {lines[ln - 1].strip()}" if ln else
                   "# (no line: the comprehension's exception handler)")
        for k in range(max(map(len, per))):
            out.append("  ".join(f"{col[k] if k < len(col) else '':<{width}}"
                                 for col in per).rstrip())
    return "\n".join(out)


EXAMPLE = '''\
def f(x, ys):
    y = x.cos()
    zs = [t * 2 for t in ys]
    if y.sum() > 0:
        return mtc.sum(y, dim=0)
    return x[1:]
'''
