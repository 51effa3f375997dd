"""The checker of generated code (``dynamo/bytecode_analysis.check_code``) and the version table.

Broken code objects — each one would crash (or silently misbehave in) CPython if it ran — must
be rejected with ``InvalidBytecode`` naming the problem; every code object CPython itself
compiled (this package, the tests, a slice of the standard library) must pass, so the checker
does not turn good compiles into eager fallbacks.  Finally the compiler is made to generate a
broken code object on purpose: the frame runs eagerly with a warning (an error under
``fullgraph=True``), and nothing crashes.
"""

from __future__ import annotations

import dis
import importlib
import pkgutil
import types
import warnings

import pytest
from bytecode import Bytecode, FreeVar, Instr, Label

import minitorch_compile as mtc
from minitorch_compile.dynamo import bytecode_versions as versions
from minitorch_compile.dynamo import codegen
from minitorch_compile.dynamo.bytecode_analysis import InvalidBytecode, check_code
from minitorch_compile.dynamo.exc import InternalTorchDynamoError


def _code(instrs, argnames=(), freevars=(), stacksize=None) -> types.CodeType:
    bc = Bytecode([Instr("RESUME", 0)] + list(instrs))
    bc.argnames = list(argnames)
    bc.argcount = len(argnames)
    bc.freevars = list(freevars)
    bc.name = "broken"
    if stacksize is None:
        return bc.to_code()
    # a given size: the library neither computes nor checks it
    return bc.to_code(stacksize=stacksize, compute_exception_stack_depths=False)


def _call(n: int) -> list:
    return codegen.call_instrs(n)


def _null_and(load) -> list:
    """``load`` (a callable's instruction) with its NULL where this version wants it."""
    return [load, Instr("PUSH_NULL")] if versions.NULL_ABOVE_CALLABLE else \
        [Instr("PUSH_NULL"), load]


# ------------------------------------------------------------------ good code passes
def test_a_correct_call_passes():
    code = _code(_null_and(Instr("LOAD_GLOBAL", (False, "len"))) +
                 [Instr("LOAD_FAST", "x")] + _call(1) + [Instr("RETURN_VALUE")], ["x"])
    assert check_code(code) is code
    assert types.FunctionType(code, {"len": len})([1, 2, 3]) == 3


def _all_code_objects(module):
    loader = getattr(module, "__loader__", None)
    if loader is None or not hasattr(loader, "get_code"):
        return
    todo = [loader.get_code(module.__name__)]
    while todo:
        code = todo.pop()
        if code is None:
            continue
        yield code
        todo += [c for c in code.co_consts if isinstance(c, types.CodeType)]


def test_every_code_object_cpython_compiled_passes():
    """No false alarms: CPython's own output (comprehensions, with/try, generators, closures,
    match statements …) passes the checker on this Python."""
    names = [m.name for m in pkgutil.walk_packages(mtc.__path__, "minitorch_compile.")]
    names += ["json.decoder", "re._parser", "dis", "inspect", "dataclasses", "argparse",
              "tests.test_graph_break_programs", "tests.test_dynamo_programs"]
    checked = 0
    for name in names:
        for code in _all_code_objects(importlib.import_module(name)):
            check_code(code)
            checked += 1
    assert checked > 1000


# ------------------------------------------------------------------ broken code is rejected
def test_null_in_the_callable_slot():
    """The NULL on the wrong side of the callable: CPython would call NULL (a segfault)."""
    load = Instr("LOAD_GLOBAL", (False, "len"))
    wrong = [Instr("PUSH_NULL"), load] if versions.NULL_ABOVE_CALLABLE else \
        [load, Instr("PUSH_NULL")]
    code = _code(wrong + [Instr("LOAD_FAST", "x")] + _call(1) + [Instr("RETURN_VALUE")], ["x"])
    with pytest.raises(InvalidBytecode, match="callable of this call may be NULL"):
        check_code(code)


def test_a_null_consumed_by_an_ordinary_instruction():
    code = _code([Instr("PUSH_NULL"), Instr("POP_TOP"), Instr("LOAD_CONST", None),
                  Instr("RETURN_VALUE")])
    with pytest.raises(InvalidBytecode, match="consumes a NULL"):
        check_code(code)


def test_stack_deeper_than_co_stacksize():
    code = _code([Instr("LOAD_CONST", 1), Instr("LOAD_CONST", 2), Instr("BUILD_TUPLE", 2),
                  Instr("RETURN_VALUE")], stacksize=1)
    with pytest.raises(InvalidBytecode, match="co_stacksize"):
        check_code(code)


def test_two_paths_with_different_depths():
    join = Label()
    code = _code([Instr("LOAD_FAST", "c"), Instr("LOAD_FAST", "c"),
                  Instr(versions.this("POP_JUMP_IF_TRUE"), join),
                  Instr("LOAD_CONST", 1),  # only on the fall-through path
                  join, Instr("RETURN_VALUE")], ["c"], stacksize=4)
    with pytest.raises(InvalidBytecode, match="stack depths"):
        check_code(code)


def test_popping_an_empty_stack():
    code = _code([Instr("POP_TOP"), Instr("LOAD_CONST", None), Instr("RETURN_VALUE")],
                 stacksize=2)
    with pytest.raises(InvalidBytecode, match="pops 1 values from a stack of 0"):
        check_code(code)


def test_running_off_the_end():
    code = _code([Instr("LOAD_CONST", None), Instr("POP_TOP")])
    with pytest.raises(InvalidBytecode, match="runs off the end"):
        check_code(code)


def test_a_local_read_before_it_is_bound():
    """From 3.12 LOAD_FAST reads the slot unchecked (a NULL: a crash); 3.11 checks itself and
    raises UnboundLocalError, so there the checker lets it through."""
    code = _code([Instr("LOAD_FAST", "y"), Instr("RETURN_VALUE")])
    if versions.LOAD_FAST_CHECKED:
        check_code(code)
        with pytest.raises(UnboundLocalError):
            types.FunctionType(code, {})()
    else:
        with pytest.raises(InvalidBytecode, match="'y' .* may be unbound"):
            check_code(code)


def test_a_local_shadowing_a_free_variable():
    """A generated local with a free variable's name is a new, empty slot: on 3.13 the bytecode
    library makes one for ``LOAD_FAST 'b'`` — the bug ``codegen.load_closure`` avoids."""
    code = _code([Instr("COPY_FREE_VARS", 1), Instr("LOAD_FAST", "b"), Instr("RETURN_VALUE")],
                 freevars=["b"])
    assert code.co_varnames == ("b",) and code.co_freevars == ("b",)
    if versions.LOAD_FAST_CHECKED:
        check_code(code)  # 3.11: an UnboundLocalError at run time, not a crash
    else:
        with pytest.raises(InvalidBytecode, match="'b' .* may be unbound"):
            check_code(code)


def test_a_free_variable_read_before_copy_free_vars():
    code = _code([Instr("LOAD_DEREF", FreeVar("b")), Instr("RETURN_VALUE")], freevars=["b"])
    with pytest.raises(InvalidBytecode, match="before MAKE_CELL/COPY_FREE_VARS"):
        check_code(code)


def test_an_exception_table_entry_deeper_than_the_stack():
    """Hand-made exception table: the entry claims 3 values stay on the stack, there is 1."""
    good = _code([Instr("LOAD_CONST", 1), Instr("LOAD_CONST", 2), Instr("BINARY_OP", 0),
                  Instr("RETURN_VALUE")])
    check_code(good)
    # covered range: every instruction; handler: the last one (RETURN_VALUE), depth 3
    offsets = [i.offset for i in dis.get_instructions(good)]
    end = (offsets[-1] + 2) // 2
    entry = _varint(0) + _varint(end) + _varint(offsets[-1] // 2) + _varint(3 << 1)
    entry = bytes([entry[0] | 0x80]) + entry[1:]  # the start bit of the first varint
    bad = good.replace(co_exceptiontable=entry, co_stacksize=8)
    assert [e.depth for e in dis.Bytecode(bad).exception_entries] == [3]
    with pytest.raises(InvalidBytecode, match="exception table entry"):
        check_code(bad)


def _varint(v: int) -> bytes:
    """CPython's exception-table number encoding (6-bit chunks, bit 6 = more follow)."""
    chunks = [v & 63]
    v >>= 6
    while v:
        chunks.append(v & 63)
        v >>= 6
    chunks.reverse()
    return bytes([c | 64 for c in chunks[:-1]] + [chunks[-1]])


# ------------------------------------------------------------------ the compiler's fallback
def _broken_graph_call(self, fn_name, input_sources):
    """``call_compiled_graph`` with a deliberate bug: a NULL popped as a value."""
    self.append(Instr("PUSH_NULL"), Instr("POP_TOP"))
    _real_graph_call(self, fn_name, input_sources)


_real_graph_call = codegen.PyCodegen.call_compiled_graph


def test_a_failing_check_runs_the_frame_eagerly(monkeypatch):
    mtc.dynamo.reset()
    monkeypatch.setattr(codegen.PyCodegen, "call_compiled_graph", _broken_graph_call)

    def f(x):
        return x.cos() + 1

    x = mtc.randn(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = mtc.compile(f, backend="eager")(x)
    assert any("internal compiler error" in str(w.message) and "InvalidBytecode" in
               str(w.message) for w in caught)
    assert mtc.allclose(out, f(x))
    (entry,) = mtc.dynamo.cache_entries(f)
    assert entry.is_eager and "consumes a NULL" in entry.reason
    mtc.dynamo.reset()
    with pytest.raises(InternalTorchDynamoError, match="consumes a NULL"):
        mtc.compile(f, backend="eager", fullgraph=True)(x)
    mtc.dynamo.reset()


# ------------------------------------------------------------------ mutated generated code
# The strongest form of "never a crash": take the code objects the compiler really generates
# for programs with graph breaks (transformed code and resume functions), break the generated
# instructions at random — drop one, swap two, move a PUSH_NULL, change a call's argument
# count — and run every mutant the checker *accepts* in a forked child.  A child killed by a
# signal is a gap in the checker.  (Mutants the checker rejects are the point; mutants the
# bytecode library cannot even assemble are skipped.  A resume function's body is the original
# function's code, CPython's compiler's output, and is not mutated: the checker does not track
# operand *types* — 3.12+'s BUILD_CONST_KEY_MAP trusts that its keys are a tuple — which only
# CPython's compiler, not ours, emits.)

import os  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from minitorch_compile.dynamo.resume_execution import RESUME_INFO  # noqa: E402


def _breaks_with_a_pending_call(x):
    n = int(x.sum().item() > 0)  # a NULL and `int` wait under the .item() call
    return [x.cos(), n, print("mid")]


def _breaks_at_a_branch(x, y):
    y = y.sin()
    if x.sum() > 0:
        return {"a": x * y, "b": [y, 2]}
    return (x - y, 1)


def _generated_code_objects() -> list:
    """(code, function globals, closure, args) of every code object the compiler made."""
    mtc.dynamo.reset()
    out = []
    for fn, args in ((_breaks_with_a_pending_call, (mtc.randn(3),)),
                     (_breaks_at_a_branch, (mtc.randn(3).abs(), mtc.randn(3)))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mtc.compile(fn, backend="eager")(*args)
        for entry in mtc.dynamo.cache_entries(fn):
            out.append((entry.code, fn.__globals__, args))
            for code in entry.resume_functions.values():
                info = RESUME_INFO[code]
                out.append((code, info.globals, None))
    return out


_GENERATED = []


def _mutate(code, data):
    bc = Bytecode.from_code(code)
    positions = [k for k, item in enumerate(bc) if isinstance(item, Instr)]
    if code in RESUME_INFO:  # only the generated prologue: the body is the original's code
        jump = next(p for p in positions if bc[p].name == "JUMP_FORWARD")
        positions = [p for p in positions if p <= jump]
    kind = data.draw(st.sampled_from(["drop", "swap", "move_null", "call_arg"]))
    k = data.draw(st.sampled_from(positions[1:]))  # never the RESUME
    items = list(bc)
    if kind == "drop":
        del items[k]
    elif kind == "swap" and k + 1 < len(items):
        items[k], items[k + 1] = items[k + 1], items[k]
    elif kind == "move_null":
        nulls = [p for p in positions if items[p].name == "PUSH_NULL"]
        if not nulls:
            return None
        p = data.draw(st.sampled_from(nulls))
        null = items.pop(p)
        items.insert(max(1, p + data.draw(st.sampled_from([-2, -1, 1, 2]))), null)
    elif kind == "call_arg":
        calls = [p for p in positions if items[p].name in ("CALL", "PRECALL")]
        if not calls:
            return None
        p = data.draw(st.sampled_from(calls))
        items[p] = Instr(items[p].name, max(0, items[p].arg + data.draw(st.sampled_from([-1, 1]))),
                         location=items[p].location)
    new = Bytecode(items)
    for attr in ("argnames", "argcount", "posonlyargcount", "kwonlyargcount", "name",
                 "qualname", "filename", "first_lineno", "cellvars", "freevars", "flags"):
        setattr(new, attr, getattr(bc, attr))
    try:
        return new.to_code()
    except Exception:  # the library itself refuses (e.g. a negative stack): nothing to run
        return None


def _runs_without_a_signal(code, f_globals, args) -> bool:
    """Call ``code`` in a forked child; False if the child died of a signal (a crash)."""
    if args is None:
        args = tuple(mtc.randn(3) for _ in range(code.co_argcount))
    cells = tuple(types.CellType(mtc.randn(3)) for _ in code.co_freevars) or None
    fn = types.FunctionType(code, f_globals, code.co_name, None, cells)
    pid = os.fork()
    if pid == 0:  # the child: run, never return into pytest
        try:
            import contextlib
            import io

            with contextlib.redirect_stdout(io.StringIO()):
                fn(*args)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return not os.WIFSIGNALED(status)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork to contain a crash")
@given(st.data())
def test_mutated_generated_code_is_rejected_or_runs_without_crashing(data):
    if not _GENERATED:
        _GENERATED.extend(_generated_code_objects())
    code, f_globals, args = data.draw(st.sampled_from(_GENERATED))
    mutant = _mutate(code, data)
    if mutant is None:
        return
    try:
        check_code(mutant)
    except InvalidBytecode:
        return  # rejected: it never runs
    assert _runs_without_a_signal(mutant, f_globals, args), \
        f"the checker accepted a crashing mutant:\n{dis.Bytecode(mutant).dis()}"
