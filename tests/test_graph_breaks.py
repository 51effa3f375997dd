"""Dynamo II: graph breaks and resume functions, construct by construct.

A graph break ends the graph at an instruction the tracer cannot capture: the graph so far is
compiled, the instruction runs in plain Python, and a **resume function** — a code object
built from the original bytecode — continues under the JIT.  Each test here compiles a small
program with a counting backend and checks it against eager (values, gradients and printed
output), then checks *how* it was compiled: the number of graphs, the break reason and line,
the resume functions (built from the original code, one per jump target, compiled with cache
entries of their own), where no break is possible (loops, ``with`` and ``try`` blocks: the
frame runs eagerly with the reason), breaks inside inlined calls (the callee is then compiled
as its own frame), ``explain()`` and ``fullgraph=True``.

The helpers at the top (``run_both``, ``check_breaks``, ``frames_of``) are shared with
``test_graph_break_programs.py`` and ``test_graph_break_hypothesis.py``.
"""

from __future__ import annotations

import contextlib
import dis
import io
import itertools
import linecache
import math
import os
import sys
import types

import numpy as np
import pytest

import minitorch_compile as mtc
from minitorch_compile import nn
from minitorch_compile.dynamo import bytecode_versions as versions
from minitorch_compile.dynamo.convert_frame import decompile
from minitorch_compile.dynamo.resume_execution import RESUME_INFO, byte_offset

from .dynamo_utils import (
    CountingBackend,
    assert_compiled,
    assert_same,
    clone_input,
    function,
    run_and_grads,
)


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()


def rg(*shape):
    return mtc.randn(*shape, requires_grad=True)


def pos(*shape):
    """A leaf whose every element is > 1 (sums and means are positive)."""
    return (mtc.rand(*shape) + 1).requires_grad_(True)


def neg(*shape):
    """A leaf whose every element is < -1."""
    return (-mtc.rand(*shape) - 1).requires_grad_(True)


# ============================================================== helpers (shared)
class Call:
    """One call's arguments, keywords included: ``Call(x, scale=2.0)``."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _clone_keeping_modules(v):
    """Like ``clone_input``, but a module stays the same object (its gradients reset), so the
    compiled function's guards on it keep holding from one call to the next."""
    if isinstance(v, nn.Module):
        for p in v.parameters():
            p.grad = None
        return v
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_clone_keeping_modules(i) for i in v)
    if isinstance(v, dict):
        return {k: _clone_keeping_modules(i) for k, i in v.items()}
    return clone_input(v)


def run_both(fn, compiled, args, kwargs=None, rtol=1e-5, atol=1e-6):
    """Eager ``fn`` and ``compiled`` on copies of the inputs: same values, same gradients of
    every input leaf, same printed output.  Returns the compiled run's output text.  (Eager
    runs on deep copies of modules; the compiled run on the modules themselves.)"""
    kwargs = kwargs or {}
    runs = []
    for f, clone in ((fn, clone_input), (compiled, _clone_keeping_modules)):
        a, k = clone(list(args)), clone(kwargs)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            value, grads = run_and_grads(f, a, k)
        runs.append((value, grads, out.getvalue()))
    (e_val, e_grads, e_out), (c_val, c_grads, c_out) = runs
    assert_same(c_val, e_val, rtol=rtol, atol=atol)
    assert c_out == e_out, f"printed output differs:\ncompiled: {c_out!r}\neager:    {e_out!r}"
    assert (c_grads is None) == (e_grads is None)
    for i, (c, e) in enumerate(zip(c_grads or (), e_grads or ())):
        assert (c is None) == (e is None), f"grad {i}: {c} vs {e}"
        if e is not None:
            np.testing.assert_allclose(c, e, rtol=rtol, atol=atol, err_msg=f"grad {i}")
    return c_out


_sources = itertools.count()


def from_source(src: str, name: str, **namespace):
    """Define function ``name`` from source text (registered with ``linecache``, so break reasons
    quote its lines).  Also how a test module gets an ``assert`` pytest does not rewrite."""
    filename = f"<graph-break program {next(_sources)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"mtc": mtc, **namespace}
    exec(compile(src, filename, "exec"), ns)
    return ns[name]


def frames_of(fn) -> list[types.CodeType]:
    """``fn``'s code and every resume function built from it, oldest first."""
    code = getattr(fn, "__code__", fn)
    return [code] + [c for c, info in RESUME_INFO.items() if info.original is code]


def entries_of(fn) -> list:
    """The cache entries of ``fn``'s code and of its resume functions."""
    return [e for c in frames_of(fn) for e in mtc.dynamo.cache_entries(c)]


def break_reasons(fn) -> list[str]:
    """The graph-break reasons of ``fn``'s frames (its own and its resume functions')."""
    return [e.graph_break.reason for e in entries_of(fn) if e.graph_break is not None]


def check_breaks(fn, *calls, graphs: int | None, breaks: int | None = None, kwargs=None,
                 rtol=1e-5, atol=1e-6) -> CountingBackend:
    """Compiled vs eager on each call in ``calls`` (tuples of arguments, or ``Call``s): values,
    grads and printed output.  ``graphs`` graphs are compiled over all the calls, and
    ``breaks`` entries of ``fn``'s frames broke their graph; running every call again compiles
    nothing (each frame — the function and each resume function — hits its cache)."""
    cb = CountingBackend()
    compiled = mtc.compile(fn, backend=cb)
    calls = [c if isinstance(c, Call) else Call(*c, **(kwargs or {})) for c in calls]
    for c in calls:
        run_both(fn, compiled, c.args, c.kwargs, rtol, atol)
    if graphs is None:  # not predicted (generated programs): only the second round is checked,
        graphs = cb.frame_count  # and that something was compiled, or no break was possible
        why = [e.reason for e in entries_of(fn) if e.is_eager]
        assert graphs >= 1 or (why and all("the frame runs eagerly" in r for r in why)), \
            f"nothing was compiled: {why}"
    assert cb.frame_count == graphs, \
        f"expected {graphs} graphs, got {cb.frame_count}; breaks: {break_reasons(fn)}; " \
        f"eager: {[e.reason for e in entries_of(fn) if e.is_eager]}"
    if breaks is not None:
        assert len(break_reasons(fn)) == breaks, break_reasons(fn)
    before = [len(mtc.dynamo.cache_entries(c)) for c in frames_of(fn)]
    for c in calls:
        run_both(fn, compiled, c.args, c.kwargs, rtol, atol)
    assert cb.frame_count == graphs, "a second run of the same calls compiled again"
    assert [len(mtc.dynamo.cache_entries(c)) for c in frames_of(fn)] == before
    return cb


# ============================================================== the tutorial's function(inputs)


def test_tutorial_function_breaks_at_the_data_dependent_branch():
    inputs = {"x": rg(10), "y": rg(10)}
    check_breaks(function, (inputs,), graphs=2, breaks=1)
    entry = mtc.dynamo.cache_entries(function)[0]
    assert "cos_1 = cos.cos()" in entry.graph_code and "gt = mean > 0.5" in entry.graph_code
    brk = entry.graph_break
    assert "data-dependent branching" in brk.reason
    assert "in function" in brk.user_line and "if x.mean() > 0.5:" in brk.user_line
    # POP_JUMP_FORWARD_IF_FALSE on 3.11, POP_JUMP_IF_FALSE from 3.12 (bytecode_versions)
    assert brk.instruction.name == versions.this("POP_JUMP_IF_FALSE")
    # one resume function per jump target, named after the target's offset in dis.dis(function)
    # (torch names them the same way) and built from the original code
    assert len(entry.resume_functions) == 2
    taken, skipped = entry.resume_functions.values()
    offsets = {i.offset for i in dis.get_instructions(function)}
    for code in (taken, skipped):
        info = RESUME_INFO[code]
        assert info.original is function.__code__
        offset = byte_offset(function.__code__, info.target)
        assert offset in offsets and code.co_name.startswith(f"__resume_at_{offset}_")
        assert code.co_varnames[:code.co_argcount] == ("x", "y")  # no stack, the live locals
    assert "x = x / 1.1" in decompile(taken) and "return x * y" in decompile(taken)
    assert "1.1" not in decompile(skipped) and "return x * y" in decompile(skipped)
    src = entry.decompiled()
    t, s = entry.resume_functions
    assert "if ___graph_out[0]:" in src
    assert f"return {t}(___graph_out[1], inputs['y'])" in src
    assert f"return {s}(___graph_out[1], inputs['y'])" in src
    # cos(cos(x)) >= cos(1) > 0.5: only the taken branch ever runs, so only its resume function
    # was compiled (on its first call), with a guard of its own on its own arguments
    (resumed,) = mtc.dynamo.cache_entries(taken)
    assert mtc.dynamo.cache_entries(skipped) == []
    assert "truediv = l_x_ / 1.1" in resumed.graph_code
    assert "L['x']" in resumed.guard_source and "L['inputs']" not in resumed.guard_source
    assert resumed.graph_break is None and resumed.resume_functions == {}


def branch_on_x(x, y):
    x = x.cos()
    if x.mean() > 0.5:
        x = x / 1.1
    return x * y


def test_both_branches_compile_their_own_resume_function():
    big, small = mtc.zeros(6, requires_grad=True), mtc.full((6,), 3.0, requires_grad=True)
    cb = check_breaks(branch_on_x, (big, rg(6)), (small, rg(6)), graphs=3, breaks=1)
    entry, = mtc.dynamo.cache_entries(branch_on_x)  # one entry serves both directions
    taken, skipped = entry.resume_functions.values()
    assert len(mtc.dynamo.cache_entries(taken)) == len(mtc.dynamo.cache_entries(skipped)) == 1
    assert [sorted(n.target.__name__ for n in g.graph.nodes if n.op == "call_function")
            for g in cb.graphs[1:]] == [["mul", "truediv"], ["mul"]]


# ============================================================== each construct that breaks
def b_item(x):
    y = x.sin()
    s = y.sum().item()
    return y * s


def b_tolist(x):
    y = x * 2
    values = y.tolist()
    return y + values[0]


def b_print(x):
    y = x.cos()
    print("between", y.shape)
    return y.sin()


def b_repr(x):
    y = x.cos()
    text = repr(y)  # a builtin the tracer cannot model on a tensor
    return y * len(text) / len(text)


def b_sorted(x):
    y = x.cos()
    parts = sorted(y)  # compares the values: a C function run in Python
    return parts[0] * 2 + y


def b_math_of_tensor(x):
    y = x.cos().abs()
    n = math.sqrt(y.sum())  # a C function that needs the tensor's value
    return y * n


def b_store_attr(x, obj):
    y = x.cos()
    obj.seen = 3
    return y * obj.seen


LAST_SHAPE = None


def b_store_global(x):
    global LAST_SHAPE
    y = x.cos()
    LAST_SHAPE = tuple(y.shape)
    return y + len(LAST_SHAPE)


def b_store_subscr(x, box):
    y = x.cos()
    box[0] = y  # mutating an input list
    return y * 2


def b_format(x):
    y = x.cos()
    text = f"{y.sum()}"
    return y * len(text) / len(text)


def b_bool(x):
    y = x.cos()
    b = bool(y.sum() > 0)
    return y * b


def b_int(x):
    y = x.cos()
    return y * int(y.sum() > 0)


def b_float(x):
    y = x.cos()
    return y * float(y.mean())


def b_not(x):
    y = x.sin()
    flag = not (y.sum() > 0)  # UNARY_NOT of a tensor
    return y * 2, flag


def b_and(x):
    y = x.sin()
    ok = (y.sum() > 0) and (y.mean() < 5)  # JUMP_IF_FALSE_OR_POP on a tensor
    return y * 2, ok


def b_or(x):
    y = x.sin()
    v = (y.sum() > 10) or y.mean()  # JUMP_IF_TRUE_OR_POP on a tensor
    return y * 2, v


def b_ternary(x):
    y = x.sin()
    z = y * 2 if y.sum() > 0 else y * 3
    return z + 1


# pytest rewrites `assert` in test modules (into locals named `@py_assert1`): from source
b_assert = from_source("def b_assert(x):\n"
                       "    y = x.cos()\n"
                       "    assert y.sum() > -100, 'impossible'\n"
                       "    return y * 2\n", "b_assert")


def test_assert_on_a_tensor_does_not_break():
    """torch 2.13 traces it (``_assert_async``); more in test_dynamo_training.py."""
    counter = CountingBackend()
    x = rg(4)
    mtc.dynamo.reset()
    out = mtc.compile(b_assert, backend=counter)(x)
    assert counter.frame_count == 1 and mtc.allclose(out, b_assert(x))


def b_while_condition(x):
    y = x.cos()
    while y.sum() > 0:  # the first test is outside the loop: the graph breaks there
        y = y - 1
    return y


class Box:
    pass


BREAKS = [
    # fn, args, graphs, the reason, the breaking line
    (b_item, lambda: (rg(4),), 2, "Tensor.item()", "s = y.sum().item()"),
    (b_tolist, lambda: (rg(4),), 2, "Tensor.tolist()", "values = y.tolist()"),
    (b_print, lambda: (rg(4),), 2, "print()", 'print("between", y.shape)'),
    (b_repr, lambda: (rg(4),), 2, "repr()", "text = repr(y)"),
    (b_sorted, lambda: (rg(4),), 2, "sorted()", "parts = sorted(y)"),
    (b_math_of_tensor, lambda: (rg(4),), 2, "sqrt()", "n = math.sqrt(y.sum())"),
    (b_format, lambda: (rg(4),), 2, "into a string", 'text = f"{y.sum()}"'),
    (b_bool, lambda: (rg(4),), 2, "bool() of a tensor", "b = bool(y.sum() > 0)"),
    (b_int, lambda: (rg(4),), 2, "int() of a tensor", "return y * int(y.sum() > 0)"),
    (b_float, lambda: (rg(4),), 2, "float() of a tensor", "return y * float(y.mean())"),
    (b_not, lambda: (rg(4),), 2, "data-dependent branching", "flag = not (y.sum() > 0)"),
    (b_and, lambda: (pos(4),), 2, "data-dependent branching", "ok = (y.sum() > 0) and"),
    (b_or, lambda: (rg(4),), 2, "data-dependent branching", "v = (y.sum() > 10) or"),
    (b_ternary, lambda: (rg(4),), 2, "data-dependent branching", "z = y * 2 if y.sum() > 0"),
    # the resume function holds the loop: a break there is impossible, so it runs eagerly
    (b_while_condition, lambda: (pos(4) * 2,), 1, "data-dependent branching",
     "while y.sum() > 0:"),
]


@pytest.mark.parametrize("fn, args, graphs, reason, line", BREAKS,
                         ids=[b[0].__name__ for b in BREAKS])
def test_each_construct_breaks_the_graph(fn, args, graphs, reason, line):
    check_breaks(fn, args(), graphs=graphs)
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert not entry.is_eager and entry.graph_module is not None
    brk = entry.graph_break
    assert brk is not None and reason in brk.reason, brk
    assert f"in {fn.__name__}" in brk.user_line and line in brk.user_line
    assert entry.resume_functions  # the frame continues in a resume function
    for code in entry.resume_functions.values():
        assert RESUME_INFO[code].original is fn.__code__


@pytest.mark.parametrize("fn, args", [(b_store_attr, lambda: (rg(4), Box())),
                                      (b_store_global, lambda: (rg(4),)),
                                      (b_store_subscr, lambda: (rg(4), [None]))],
                         ids=["b_store_attr", "b_store_global", "b_store_subscr"])
def test_stores_are_side_effects_replayed_not_breaks(fn, args):
    """Attribute, global and item stores on objects from outside the frame are recorded and
    replayed after the one graph (``side_effects.py``), as torch does."""
    check_breaks(fn, args(), graphs=1)
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.graph_break is None and entry.side_effects


COUNTER = 0


def b_count(x):
    global COUNTER
    y = x.cos()
    COUNTER = COUNTER + 1
    print("call", COUNTER)
    return y + COUNTER


def test_the_breaking_instructions_run_once_each_in_python(capsys):
    global COUNTER
    COUNTER = 0
    fn = mtc.compile(b_count, backend="eager")
    x = rg(3)
    assert mtc.allclose(fn(x), x.cos() + 1) and COUNTER == 1
    assert mtc.allclose(fn(x), x.cos() + 2) and COUNTER == 2  # the resume sees the new global
    assert capsys.readouterr().out == "call 1\ncall 2\n"
    assert_compiled(b_count)  # the frame broke its graph; it did not fall back to eager
    box = Box()
    mtc.compile(b_store_attr, backend="eager")(rg(3), box)
    assert box.seen == 3
    assert_compiled(b_store_attr)


def test_item_value_reaches_the_resume_function_as_a_guarded_constant():
    # graph before .item(), the resume's graph, and the resume again for a new value
    check_breaks(b_item, (rg(3),), (rg(3),), graphs=3)
    (resume,) = [c for c in mtc.dynamo.cache_entries(b_item)[0].resume_functions.values()]
    entries = mtc.dynamo.cache_entries(resume)
    assert len(entries) == 2
    assert "L['___stack0']" in entries[0].guard_source  # the .item() value, a stack argument


# ============================================================== C functions from modules
def c_getpid(x):
    y = x.cos()
    n = os.getpid()
    return y * (n > 0)


def c_perf_counter(x):
    import time  # a module imported inside the frame: no source, rebuilt through a global

    y = x.cos()
    time.sleep(0)  # returns None: the resume function's guard on it keeps passing
    return y * 2


@pytest.mark.parametrize("fn", [c_getpid, c_perf_counter])
def test_a_c_function_from_a_module_breaks_at_the_call(fn):
    check_breaks(fn, (rg(3),), graphs=2, breaks=1)
    assert "cannot be traced" in mtc.dynamo.cache_entries(fn)[0].graph_break.reason


def b_numpy(x):
    y = x * 2
    a = y.detach().numpy()
    return y + float(a.sum())


def test_numpy_is_traced_and_breaks_at_float():
    """.numpy() and ``a.sum()`` are traced (config.trace_numpy, as torch's); ``float(...)``
    of the array breaks, and the resume function compiles the rest."""
    check_breaks(b_numpy, (rg(3),), graphs=2, breaks=1)
    assert "float() of an ndarray" in mtc.dynamo.cache_entries(b_numpy)[0].graph_break.reason


def test_numpy_breaks_with_trace_numpy_off():
    """config.trace_numpy off: .numpy() breaks; the resume function receives the array,
    breaks at the C method ``a.sum`` and at ``float(...)``, and compiles the rest: no internal
    error anywhere."""
    import warnings

    with warnings.catch_warnings(), mtc._dynamo.config.patch(trace_numpy=False):
        warnings.simplefilter("error")
        check_breaks(b_numpy, (rg(3),), graphs=2, breaks=3)
    assert "Tensor.numpy()" in mtc.dynamo.cache_entries(b_numpy)[0].graph_break.reason


# ============================================================== breaks inside inlined calls
def leaf(t):
    print("leaf")
    return t.sin()


def outer(x):
    y = x.cos()
    z = leaf(y)  # inlining leaf breaks at its print: restart, and break at this call
    return z * 2


def test_a_break_in_an_inlined_call_breaks_the_caller_at_the_call():
    # graphs: outer before the call (cos), leaf's resume after its print (sin), outer's resume
    # (mul); leaf's own first graph would be empty (nothing before the print)
    cb = check_breaks(outer, (rg(4),), graphs=3, breaks=1)
    entry = mtc.dynamo.cache_entries(outer)[0]
    assert "cos" in entry.graph_code and "sin" not in entry.graph_code  # nothing half-inlined
    assert "print()" in entry.graph_break.reason and "in leaf" in entry.graph_break.user_line
    assert "___mtc_jit(leaf)(___graph_out[0])" in entry.decompiled()
    # the callee ran through the JIT as a frame of its own: it has cache entries and breaks
    (callee,) = mtc.dynamo.cache_entries(leaf)
    assert callee.graph_break is not None and "print()" in callee.graph_break.reason
    assert break_reasons(leaf) == [callee.graph_break.reason]
    assert [sorted(n.target for n in g.graph.nodes if n.op == "call_method")
            for g in cb.graphs] == [["cos"], ["sin"], []]


def middle(t):
    u = t * 3
    return leaf(u) + 1


def outermost(x):
    return middle(x.cos()) * 2


def test_a_break_two_calls_deep_compiles_each_level_as_a_frame():
    # outermost breaks at middle(...), middle breaks at leaf(...), leaf breaks at print
    check_breaks(outermost, (rg(4),), graphs=5)
    for fn in (outermost, middle, leaf):
        (entry,) = mtc.dynamo.cache_entries(fn)
        assert entry.graph_break is not None
        assert "print()" in entry.graph_break.reason
    assert "in leaf" in mtc.dynamo.cache_entries(outermost)[0].graph_break.user_line
    out = mtc.dynamo.explain(outermost)(rg(4))
    assert out.graph_count == 5 and out.graph_break_count == 4  # torch: graph_count - 1
    # one per graph that reached the backend with a break after it (torch 2.13 lists 2 too):
    # leaf breaks before any op, so its break comes with no graph and no reason
    assert len(out.break_reasons) == 2


def sign_branch(t):
    if t.sum() > 0:
        return t * 2
    return -t


def calls_branchy(x, y):
    a = x.sin()
    b = sign_branch(a)
    return b + y


def test_a_data_dependent_branch_in_a_callee_takes_both_ways():
    check_breaks(calls_branchy, (pos(4), rg(4)), (neg(4), rg(4)), graphs=5, breaks=1)
    (callee,) = mtc.dynamo.cache_entries(sign_branch)
    assert len(callee.resume_functions) == 2
    assert all(len(mtc.dynamo.cache_entries(c)) == 1 for c in callee.resume_functions.values())


def scaled_leaf(t, k=1.0):
    print("scaled_leaf", k)
    return t * k


def calls_with_star_star(x, *args):
    opts = {"k": 3.0}
    return scaled_leaf(x.cos(), **opts) + scaled_leaf(*args)


def test_a_break_in_a_callee_called_with_star_args_compiles_the_callee():
    # CALL_FUNCTION_EX: the callee still runs through the JIT as its own frame (it used to run
    # as plain Python)
    # the frame (cos); scaled_leaf's resume for k=3 (mul); the frame's resume breaks again at the
    # second call, with nothing new to compute before it; scaled_leaf's resume for k=1 (mul, k
    # now a graph input: its second value — automatic dynamic for floats); the last resume
    # (add).  5, as torch 2.13
    check_breaks(calls_with_star_star, (rg(3), rg(3)), graphs=5)
    entries = mtc.dynamo.cache_entries(scaled_leaf)
    assert len(entries) == 2 and all(e.graph_break is not None for e in entries)  # k=3.0, k
    assert "___mtc_jit(scaled_leaf)" in mtc.dynamo.cache_entries(calls_with_star_star)[0] \
        .decompiled()


def comprehension_that_breaks(x):
    y = x.cos()
    values = [v.item() for v in y]  # CPython 3.11: the comprehension is a nested function
    return y * sum(values)


def test_a_comprehension_that_breaks():
    # 3.11: the comprehension is a nested function called by the frame: the graph breaks at
    # its call (the function, made for the purpose, is rebuilt for the break's code; the
    # iterator over y is rebuilt too), the comprehension runs through the JIT as its own frame
    # (a break in its loop: eager) and a resume function continues — 2 graphs, as torch 2.13.
    # 3.12+ inlines it (PEP 709): as torch 2.13, the frame breaks *before* it, the
    # comprehension runs eagerly in a synthetic function and a resume function continues after
    # it — 2 graphs too
    check_breaks(comprehension_that_breaks, (rg(3),), graphs=2, breaks=1)
    assert "Tensor.item()" in break_reasons(comprehension_that_breaks)[0]
    if sys.version_info >= (3, 12):
        (entry,) = mtc.dynamo.cache_entries(comprehension_that_breaks)
        assert "inside a comprehension" in entry.graph_break.reason
        assert any(n.startswith("__comprehension_comprehension_that_breaks_at_")
                   for n in entry.code.co_names)


class Helper:
    def __init__(self, k):
        self.k = k

    def scale(self, t):
        print("scaling by", self.k)
        return t * self.k


def calls_method(x, helper):
    return helper.scale(x.cos()) + 1


def test_a_break_in_a_method_compiles_the_method_as_its_own_frame():
    check_breaks(calls_method, (rg(3), Helper(2.0)), graphs=3, breaks=1)
    (entry,) = mtc.dynamo.cache_entries(Helper.scale)
    assert "print()" in entry.graph_break.reason


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        print("noisy", tuple(h.shape))
        return h.relu()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.noisy = Noisy()
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        return self.out(self.noisy(x.tanh()))


def test_a_break_in_a_submodule_forward():
    net = Net()
    compiled = mtc.compile(net, backend="eager")
    x = rg(3, 4)
    run_both(net, compiled, (x,))
    (sub,) = mtc.dynamo.cache_entries(Noisy.forward)
    assert "print()" in sub.graph_break.reason
    (top,) = mtc.dynamo.cache_entries(Net.forward)
    assert "print()" in top.graph_break.reason and "in forward" in top.graph_break.user_line
    # parameters got their gradients through all three graphs
    loss = compiled(x).sum()
    loss.backward()
    assert all(p.grad is not None for p in net.parameters())


# ============================================================== where no break is possible
def loop_print(x):
    for i in range(3):
        x = x + 1
        print("step", i)
    return x


def loop_data_dependent(x):
    total = x * 0
    for i in range(3):
        if (x * i).sum() > 1:
            total = total + x
    return total


def with_block_print(x):
    with mtc.no_grad():
        y = x * 2
        print("inside")
    return y + x


def with_block_branch(x):
    with mtc.enable_grad():
        y = x.cos()
        if y.sum() > 0:
            y = y * 2
    return y


def raises_after_print(t):
    print("about to fail")
    raise ValueError("no")


def try_block(x):
    y = x.cos()
    try:
        v = raises_after_print(y)
    except ValueError:
        v = y * 2
    return v


@pytest.mark.parametrize("fn, where", [
    (loop_print, "inside a loop"), (loop_data_dependent, "inside a loop"),
    (try_block, "inside a `try` block")])  # (one op before the `try`: no checkpoint, as torch)
def test_no_break_inside_loops_and_try_blocks_the_frame_runs_eagerly(fn, where):
    check_breaks(fn, (pos(3),), (neg(3),), graphs=0, breaks=0)
    (entry,) = mtc.dynamo.cache_entries(fn)
    assert entry.is_eager and entry.graph_module is None
    assert f"a graph break {where} cannot be resumed from" in entry.reason
    assert f"in {fn.__name__}" in entry.user_line or "in raises_after_print" in entry.user_line
    out = mtc.dynamo.explain(fn)(pos(3))
    # torch skips such a frame: no graph, no break reason, graph_break_count -1
    assert out.graph_count == 0 and out.graph_break_count == -1 and out.break_reasons == []


@pytest.mark.parametrize("fn", [with_block_print, with_block_branch])
def test_a_break_inside_a_grad_mode_with_block_resumes_inside_it(fn):
    # as torch: the graph before, the instruction in the block's grad mode, and a resume
    # function that enters the block again (BEFORE_WITH in its prologue)
    check_breaks(fn, (pos(3),), (neg(3),), graphs=None)
    (entry,) = mtc.dynamo.cache_entries(fn)
    assert not entry.is_eager and entry.graph_break is not None
    for code in entry.resume_functions.values():
        assert "BEFORE_WITH" in {i.opname for i in dis.get_instructions(code)}


def try_block_after_two_ops(x):
    y = x.cos() * 2
    try:
        print("trying")
        v = y + 1
    except ValueError:
        v = y
    return v.sin()


def test_a_break_in_a_try_block_falls_back_to_the_last_checkpoint():
    # torch's step_graph_break: no resume inside the `try` (the breaking call would run outside
    # it: its `except` could not catch); the graph up to the last empty-stack instruction
    # before it, once it holds 2 ops, is compiled and the rest of the frame runs eagerly
    # (torch 2.13: 1 graph, explain's graph_break_count 0; with 1 op: no checkpoint, eager)
    check_breaks(try_block_after_two_ops, (pos(3),), (neg(3),), graphs=1, breaks=1)
    (entry,) = mtc.dynamo.cache_entries(try_block_after_two_ops)
    assert not entry.is_eager and entry.graph_module is not None
    assert "a graph break inside a `try` block cannot be resumed from" in entry.graph_break.reason
    (rest,) = entry.resume_functions.values()
    assert mtc.dynamo.cache_entries(rest) == []  # run eagerly, never compiled
    out = mtc.dynamo.explain(try_block_after_two_ops)(pos(3))
    assert out.graph_count == 1 and out.graph_break_count == 0


def try_block_raising_after_two_ops(x):
    y = x.cos() * 2
    try:
        v = raises_after_print(y)
    except ValueError:
        v = y * 3
    return v


def test_a_break_in_a_try_block_keeps_the_except_working():
    # regression: the breaking call used to run outside the `try`, so the ValueError escaped;
    # now the graph before the `try` is compiled and the rest — the `try` — runs eagerly
    fn = mtc.compile(try_block, backend="eager")
    x = rg(3)
    assert mtc.allclose(fn(x), x.cos() * 2)
    cb = CountingBackend()
    fn = mtc.compile(try_block_raising_after_two_ops, backend=cb)
    assert mtc.allclose(fn(x), x.cos() * 2 * 3)
    assert cb.frame_count == 1
    (entry,) = mtc.dynamo.cache_entries(try_block_raising_after_two_ops)
    assert not entry.is_eager


def test_a_loop_after_the_break_is_fine():
    def f(x):
        y = x.cos()
        n = int(y.sum().item() > 0) + 2
        for _ in range(n):  # the loop is in the resume function, with no break inside it
            y = y * 2
        return y

    check_breaks(f, (pos(3),), graphs=2, breaks=1)


# ============================================================== returns inside branches
def returns_in_branches(x):
    y = x.sin()
    if y.sum() > 1:
        return y * 10
    elif y.sum() < -1:
        return {"neg": y - 1}
    return (y, 0)


def test_returns_inside_branches():
    # the frame (sin, sum, gt); `return y * 10`; the elif's test (sum, lt); `return {"neg": y - 1}`;
    # `return (y, 0)` has no tensor op, so no graph
    check_breaks(returns_in_branches, (pos(4),), (neg(4),), (mtc.zeros(4, requires_grad=True),),
                 graphs=4, breaks=2)
    first, = mtc.dynamo.cache_entries(returns_in_branches)
    src = first.decompiled()
    assert src.count("return __resume_at_") == 2  # one per target; each returns what it returns


# ============================================================== a resume of a resume
def two_breaks(x):
    y = x.cos()
    print("first")
    y = y * 2
    if y.sum() > 0:
        y = y.sin()
    return y + 1


def test_a_resume_of_a_resume_is_built_from_the_original_code():
    # the frame (cos); after the print (mul, sum, gt); each branch's continuation (sin, add / add)
    check_breaks(two_breaks, (pos(3) * 0,), (mtc.full((3,), 3.0, requires_grad=True),),
                 graphs=4, breaks=2)
    first, = mtc.dynamo.cache_entries(two_breaks)
    (after_print,) = first.resume_functions.values()
    second, = mtc.dynamo.cache_entries(after_print)
    assert "data-dependent" in second.graph_break.reason
    for code in second.resume_functions.values():
        info = RESUME_INFO[code]
        assert info.original is two_breaks.__code__  # not after_print's code
        assert code.co_filename == two_breaks.__code__.co_filename
    # the break is reported at the user's line, not somewhere in a resume function's prologue
    assert "if y.sum() > 0:" in second.graph_break.user_line
    assert len(frames_of(two_breaks)) == 1 + 3  # the frame and three resume functions


def chain_of_prints(x, n_calls=0):
    y = x.cos()
    print("a")
    y = y + 1
    print("b")
    y = y * 2
    print("c")
    y = y - 3
    print("d")
    return y


def test_sequential_breaks_make_one_resume_function_each():
    check_breaks(chain_of_prints, (rg(3),), graphs=4, breaks=4)  # after "d": no tensor op
    assert len(frames_of(chain_of_prints)) - 1 == 4
    depths = [len(mtc.dynamo.cache_entries(c)) for c in frames_of(chain_of_prints)]
    assert depths == [1, 1, 1, 1, 1]


SIGNS_SRC = "def signs(x, a, b, c, d):\n    y = x * 1\n" + "".join(
    f"    if {v}.sum() > 0:\n        y = y + {v}\n    else:\n        y = y - {v}\n"
    for v in "abcd") + "    return y\n"
signs = from_source(SIGNS_SRC, "signs")


def test_resume_functions_stay_linear_in_the_number_of_branches():
    # 4 data-dependent ifs, all 16 sign patterns: 2 resume functions per `if` (one per target),
    # shared by every path that reaches it — not 2 + 4 + 8 + 16
    compiled = mtc.compile(signs, backend="eager")
    x = rg(3)
    for pattern in range(16):
        args = [pos(3) if pattern >> k & 1 else neg(3) for k in range(4)]
        run_both(signs, compiled, (x, *args))
    resumes = frames_of(signs)[1:]
    assert len(resumes) == 2 * 4
    assert all(RESUME_INFO[c].original is signs.__code__ for c in resumes)
    assert len({RESUME_INFO[c].target for c in resumes}) == 8


# ============================================================== what the stack holds at a break
def null_below_a_call(x):
    y = x.cos()
    n = int(y.sum().item() > 0)  # CPython's NULL and `int` wait under the .item() call
    return y * (n + 1)


def nulls_in_nested_calls(x):
    y = x.cos()
    return mtc.stack([y, x * y.sum().item()])  # two calls pending below the break


def null_below_a_jump(x, y):
    print(x if x.sum() > 0 else y)  # NULL, print wait under the data-dependent jump
    return x * y


def list_being_built(x):
    parts = [x.cos(), print("in the middle"), x.sin()]
    return parts[0] + parts[2]


def call_argument_pending(x):
    return mtc.add(x.cos(), x * float(x.sum()))


@pytest.mark.parametrize("fn, args, graphs, breaks", [
    (null_below_a_call, lambda: (rg(3),), 2, 1),
    (nulls_in_nested_calls, lambda: (rg(3),), 2, 1),
    (null_below_a_jump, lambda: (pos(3), rg(3)), 2, 2),  # the jump, then the print
    (null_below_a_jump, lambda: (neg(3), rg(3)), 2, 2),
    (list_being_built, lambda: (rg(3),), 2, 1),
    (call_argument_pending, lambda: (rg(3),), 2, 1)])
def test_the_stack_at_the_break_reaches_the_resume_function(fn, args, graphs, breaks):
    check_breaks(fn, args(), graphs=graphs, breaks=breaks)


def test_a_null_on_the_stack_is_pushed_again_by_the_resume_prologue():
    check_breaks(null_below_a_call, (rg(3),), graphs=2)
    (code,) = mtc.dynamo.cache_entries(null_below_a_call)[0].resume_functions.values()
    info = RESUME_INFO[code]
    # NULL, int, the .item() value — 3.13 puts the NULL above the callable: int, NULL, value
    null_at = 1 if versions.NULL_ABOVE_CALLABLE else 0
    assert info.stack_size == 3 and info.nulls == (null_at,)
    stack_args = tuple(f"___stack{i}" for i in range(3) if i != null_at)
    assert code.co_varnames[:code.co_argcount] == stack_args + ("y",)
    assert [i.opname for i in dis.get_instructions(code)][:4] == \
        ["RESUME"] + ["PUSH_NULL" if i == null_at else "LOAD_FAST" for i in range(3)]


# ============================================================== closures and nested functions
def make_scaled(scale, w):
    def scaled(x):
        y = x * scale + w
        if y.sum() > 0:  # a frame with free variables breaks: its resume functions get its cells
            return y.sin() * scale
        return y.cos() - w
    return scaled


def test_a_closure_breaks_and_its_resume_functions_share_its_cells():
    fn = make_scaled(3.0, mtc.ones(4))
    check_breaks(fn, (pos(4),), (neg(4) * 5,), graphs=3, breaks=1)
    entry, = mtc.dynamo.cache_entries(fn)
    src = entry.decompiled()
    assert len(entry.resume_functions) == 2
    for name, code in entry.resume_functions.items():
        assert code.co_freevars == ("scale", "w")
        assert f"{name} = ___make{name}((scale, w))" in src  # bound to this frame's cells
        assert f"return {name}(___graph_out[1])" in src


def nested_function_live_at_break(x):
    k = x.cos()

    def add_k(t):
        return t + k
    print("made add_k")
    return add_k(x) * 2


def nested_function_after_break(x):
    k = x.cos()
    print("before add_k")

    def add_k(t):  # created in the resume function: k is a cell there
        return t + k
    return add_k(x) * 2


def test_a_nested_function_created_after_the_break():
    check_breaks(nested_function_after_break, (rg(3),), graphs=2, breaks=1)
    (code,) = mtc.dynamo.cache_entries(nested_function_after_break)[0].resume_functions.values()
    assert "k" in code.co_cellvars and "k" in code.co_varnames[:code.co_argcount]


def test_a_nested_function_live_at_the_break_is_made_again():
    # a function object made while tracing is made again by the transformed code (torch's
    # MAKE_FUNCTION) from the values of its free variables — `k`, a tensor the frame itself no
    # longer reads, is a graph output for it — and passed to the resume function: 2 graphs,
    # the frame's own, as torch 2.13
    check_breaks(nested_function_live_at_break, (rg(3),), graphs=2, breaks=1)
    (entry,) = mtc.dynamo.cache_entries(nested_function_live_at_break)
    assert not entry.is_eager and "___make_add_k_" in entry.decompiled()


def nested_function_writing_its_cell(x):
    n = 0

    def bump(t):
        nonlocal n
        n += 1
        return t * n
    print("made bump")
    return bump(x) + n


def test_a_nested_function_assigning_its_free_variable_shares_the_frames_cell():
    # a new cell would not be the frame's (`n` read after the call would miss the write): the
    # transformed code keeps the frame's cells, makes `bump` with them and hands them to the
    # resume function as its free variables (torch's way)
    check_breaks(nested_function_writing_its_cell, (rg(3),), graphs=None)
    (entry,) = mtc.dynamo.cache_entries(nested_function_writing_its_cell)
    assert entry.reason is None and "___make_bump_cells_" in entry.decompiled()
    (resume,) = entry.resume_functions.values()
    assert resume.co_freevars == ("n",) and "n" not in resume.co_cellvars


def nested_function_setting_a_cell_after_the_break(x, flag):
    def set_k():
        nonlocal k
        k = 2
    print("made set_k")
    if flag:
        set_k()
    return x * k  # noqa: F821 (bound by set_k, or unbound: the error eager raises)
    k = 0  # (never runs: it makes `k` a cell of this function, bound only by set_k)


def test_a_shared_cell_written_after_the_break_or_never():
    # the cell `k` is empty at the break; set_k, live there, writes the cell the resume
    # function reads — or nobody does, and reading it raises eager's UnboundLocalError (not the
    # NameError of an empty free variable)
    f = nested_function_setting_a_cell_after_the_break
    cf = mtc.compile(f, backend="eager")
    x = rg(3)
    assert mtc.allclose(cf(x, True), f(x, True))
    with pytest.raises(UnboundLocalError, match="'k'"):
        f(x, False)
    with pytest.raises(UnboundLocalError, match="'k'"):
        cf(x, False)
    assert all(e.reason is None for e in mtc.dynamo.cache_entries(f))


# ============================================================== explain, cache views, logs
def test_explain_counts_graphs_and_breaks_with_their_lines():
    out = mtc.dynamo.explain(function)({"x": rg(10), "y": rg(10)})
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert out.ops_per_graph == [["Tensor.cos", "Tensor.cos", "Tensor.mean", "operator.gt"],
                                 ["operator.truediv", "operator.mul"]]
    (reason,) = out.break_reasons
    assert "data-dependent branching" in reason.reason
    assert "in function" in reason.user_stack and "if x.mean() > 0.5:" in reason.user_stack
    text = str(out)
    assert "Graph Count: 2" in text and "Graph Break Count: 1" in text
    assert "Break Reason 1:" in text and "if x.mean() > 0.5:" in text
    assert "function: " in out.compile_times and "__resume_at_" in out.compile_times
    assert mtc.dynamo.cache_entries(function) == []  # explain leaves the cache as it found it


@pytest.mark.parametrize("fn, args, graphs, reasons", [
    (chain_of_prints, (rg(3),), 4, 4),
    (outer, (rg(3),), 3, 1),  # outer breaks at the call; leaf at its print, before any op
    (returns_in_branches, (neg(3),), 3, 2),
    (loop_print, (rg(3),), 0, 0),  # no graph: a skipped frame is no break (torch: -1 breaks)
])
def test_explain_on_break_programs(fn, args, graphs, reasons):
    out = mtc.dynamo.explain(fn)(*args)
    # torch 2.13: graph_break_count is graph_count - 1; break_reasons lists every break made
    assert out.graph_count == graphs and out.graph_break_count == graphs - 1
    assert len(out.break_reasons) == reasons
    assert all(r.user_stack and "line" in r.user_stack for r in out.break_reasons)


def test_cache_entries_list_resume_functions_and_their_source():
    fn = mtc.compile(two_breaks, backend="eager")
    fn(pos(3))
    first, = mtc.dynamo.cache_entries(two_breaks)
    (name, code), = first.resume_functions.items()
    assert name in first.decompiled()
    src = decompile(code)
    assert src.startswith(f"def {name}(___stack0, y):")  # print's result, then the live local
    assert "y = y * 2" in src and "if y.sum() > 0:" in src
    second, = mtc.dynamo.cache_entries(code)  # compiled on its first call
    assert second.original_code is code and "mul = l_y_ * 2" in second.graph_code
    assert len(second.resume_functions) == 2 and second.dis().count("__resume_at_") >= 2
    # an entry without a break has none; an eager entry neither
    taken = [c for c in second.resume_functions.values() if mtc.dynamo.cache_entries(c)]
    assert [mtc.dynamo.cache_entries(c)[0].resume_functions for c in taken] == [{}]


def test_fullgraph_still_raises_at_the_first_break():
    built = len(RESUME_INFO)
    for fn, args, line in [(function, ({"x": rg(4), "y": rg(4)},), "if x.mean() > 0.5:"),
                           (b_print, (rg(4),), 'print("between", y.shape)'),
                           (outer, (rg(4),), 'print("leaf")')]:
        with pytest.raises(mtc.dynamo.exc.Unsupported) as err:
            mtc.compile(fn, backend="eager", fullgraph=True)(*args)
        assert line in str(err.value)
    assert len(RESUME_INFO) == built  # no resume function was even built


def test_graph_break_logs_name_the_reason_and_the_line(capsys):
    mtc.set_logs(graph_breaks=True)
    try:
        mtc.compile(b_print, backend="eager")(rg(2))
    finally:
        mtc.set_logs()
    err = capsys.readouterr().err
    assert "Graph break in b_print: print()" in err and 'print("between", y.shape)' in err


def rewritten_assert(x):
    y = x.cos()
    assert y.sum() > -100  # pytest rewrites this: the frame gets locals named `@py_assert1` ...
    return y * 2


def test_a_resume_function_with_non_identifier_locals_compiles():
    if all(n.isidentifier() for n in rewritten_assert.__code__.co_varnames):
        pytest.skip("assertion rewriting is off")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_breaks(rewritten_assert, (rg(3),), graphs=2, breaks=1)


# ============================================================== graphs take only what they use


def shape_after_break(x, y):
    a = x.cos()
    print("break")
    return a * y.shape[0]


def test_graphs_take_only_the_inputs_their_ops_read(capsys):
    """The resume function receives every live local (``a`` and ``y``), but its graph takes only
    ``a``: ``y`` is read for its size alone, which its ``TENSOR_MATCH`` guard pins (torch's
    graphs take the same inputs)."""
    cb = CountingBackend()
    fn = mtc.compile(shape_after_break, backend=cb)
    x = rg(3)
    for y in (mtc.randn(4), mtc.randn(4), mtc.randn(6)):
        assert_same(fn(x, y), shape_after_break(x, y))
    placeholders = [[n.name for n in g.graph.nodes if n.op == "placeholder"] for g in cb.graphs]
    assert placeholders[:2] == [["l_x_"], ["l_a_"]]
    resume = [c for c in frames_of(shape_after_break)[1:] if mtc.dynamo.cache_entries(c)]
    resume_entries = mtc.dynamo.cache_entries(resume[0])
    assert len(resume_entries) == 2  # y of size 6 fails the size guard of y: a recompile
    assert ("TENSOR_MATCH", "L['y']") in {(g.kind, g.source_name)
                                          for g in resume_entries[0].guard.guard_set.guards}
    assert_compiled(resume[0])
