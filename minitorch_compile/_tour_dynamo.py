"""The tour's compiler steps (``python -m minitorch_compile tour --step dynamo``): the tutorial's
``f(x, mod)`` and ``function(inputs)`` under ``mtc.compile`` — cache entries, guards, graphs,
transformed code, the graph break with its resume functions, and the recompile to ``[s0]``.
The eager steps and the driver are in ``_tour.py``.
"""

from __future__ import annotations

import io
import logging
import os
import re

import minitorch_compile as mtc

from ._tour import _title

# --------------------------------------------------------------------------- 7. Dynamo
# The tutorial's JIT example, with ``torch`` replaced by ``mtc``.


class A(mtc.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return mtc.exp(2 * x)


class B(mtc.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return mtc.exp(-x)


@mtc.compile(backend="eager")
def f(x, mod):
    y = mod(x)
    z = mtc.log(y)
    return z


@mtc.compile(backend="eager")
def function(inputs):
    x = inputs["x"]
    y = inputs["y"]
    x = x.cos().cos()
    if x.mean() > 0.5:
        x = x / 1.1
    return x * y


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(mtc.__file__)))


def _guarded_objects(entries) -> dict:
    """Objects the guards compare by id, named for a reader: ``A.forward``, ``list``."""
    named = {}
    for entry in entries:
        kept = getattr(getattr(entry.guard, "guard_set", None), "ids", {})
        for obj in kept.values():
            named.setdefault(obj, getattr(obj, "__qualname__", None) or
                             getattr(obj, "__name__", None) or f"{type(obj).__name__} object")
    return named


def _stable(text: str, names: dict) -> str:
    """Make compiler output repeatable: object ids become ``id(name)``, paths get shorter."""
    for obj, name in names.items():
        text = text.replace(str(id(obj)), f"id({name})")
    text = re.sub(r"\b\d{9,}\b", "<id>", text)  # any id not named above
    text = text.replace(_PACKAGE_DIR + os.sep, "")
    # a module's repr in a guard comment carries its file path: keep the module's name only
    return re.sub(r"\[<module '([\w.]+)' from [^\]]*\]", r"[module \1]", text)


def _indented(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.rstrip().splitlines())


def step_dynamo() -> None:
    """The tutorial's f(x, mod) JIT-compiled: cache hits, guards, transformed code."""
    _title("7. Dynamo: mtc.compile is a JIT with guards and transformed code")
    mtc.dynamo.reset()  # start from an empty cache
    mtc.manual_seed(0)
    a, b = A(), B()
    x = mtc.randn(5, 5, 5)
    names = {a: "a", b: "b", mtc: "mtc"}
    print("@mtc.compile(backend=\"eager\")\ndef f(x, mod):\n    y = mod(x)\n    z = mtc.log(y)"
          "\n    return z\n")
    print(f"  {'call':<10}{'entries':<9}{'what happened':<48}the tutorial's simplification")
    for mod, name in ((a, "a"), (a, "a"), (b, "b"), (b, "b")):
        before = len(mtc.dynamo.cache_entries(f))
        out = f(x, mod)
        after = len(mtc.dynamo.cache_entries(f))
        expected = 2 * x if mod is a else -x  # the tutorial's hand-simplified f
        what = (f"miss: traced and compiled entry {after - 1}" if after > before
                else "hit: a guard passed; transformed code ran")
        same = mtc.allclose(out, expected, atol=1e-5)
        print(f"  {'f(x, ' + name + ')':<10}{after:<9}{what:<48}"
              f"equals {'2 * x' if mod is a else '-x'}: {same}")

    names = {**_guarded_objects(mtc.dynamo.cache_entries(f)), **names}
    for i, entry in enumerate(mtc.dynamo.cache_entries(f)):
        print(f"\n-- cache entry {i} " + "-" * 60)
        print("guard source (runs on every call, before the transformed code):")
        print(_indented(_stable(entry.guard_source, names)))
        print("graph code (the GraphModule handed to the backend):")
        print(_indented(entry.graph_code.strip()))
        print("transformed code, decompiled by depyf (entry.decompiled()):")
        print(_indented(entry.decompiled()))
        print("transformed code, as this CPython's bytecode (entry.dis(); 3.11, 3.12 and 3.13 "
              "differ: docs/dynamo.md):")
        print(_indented(entry.dis()))

    print("\nf(x4, a) with x4 of shape [4, 5, 5]: no guard passes, so f is compiled again.")
    print("The recompiles log (mtc.set_logs(recompiles=True), or MTC_LOGS=recompiles) says why:")
    x4 = mtc.randn(4, 5, 5)
    log = logging.getLogger("minitorch_compile.recompiles")
    saved = log.level, log.propagate
    captured = io.StringIO()
    handler = logging.StreamHandler(captured)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    try:
        f(x4, a)
    finally:
        log.removeHandler(handler)
        log.setLevel(saved[0])
        log.propagate = saved[1]
    print(_indented(_stable(captured.getvalue(), names)))
    first = mtc.dynamo.cache_entries(f)[0]
    print("entry 0's guard.failure_reason({'x': x4, 'mod': a}) ->",
          repr(first.guard.failure_reason({"x": x4, "mod": a})))
    print("entries now:", len(mtc.dynamo.cache_entries(f)), "(the new entry treats dim 0 as a "
          "symbol s0: it was seen with two sizes)")

    print("\nThe tutorial's function(inputs) branches on a tensor's value (if x.mean() > 0.5).")
    inputs = {"x": mtc.randn(10), "y": mtc.randn(10)}
    function(inputs)
    entry = mtc.dynamo.cache_entries(function)[0]
    print("The graph breaks there: the graph so far computes the condition, Python takes the")
    print("branch, and a resume function continues (compiled on its first call):")
    print("  graph break:", entry.graph_break.reason)
    print(_indented(_stable(entry.decompiled(), {})))
    print("  graph before the break:")
    print(_indented(entry.graph_code.strip()))
    from minitorch_compile.dynamo.convert_frame import decompile

    for name in entry.code.co_names:  # one resume function per branch
        if name.startswith("__resume_at_"):
            resume = _tour_globals()[name]
            print(f"  {name} (a new code object, compiled by the JIT on its first call):")
            print(_indented(_stable(decompile(resume.fn.__code__), {}), "      "))

    print("\nShapes 10, 8 then 6: the size change recompiles once, to a symbolic [s0]")
    for n in (8, 6):
        function({"x": mtc.randn(n), "y": mtc.randn(n)})
    entries = mtc.dynamo.cache_entries(function)
    print("  entries of function:", len(entries), "(static [10], then dynamic [s0])")
    dynamic = entries[-1]
    print(_indented(dynamic.graph_module.print_readable(print_output=False).strip()))
    shape_guards = [g.value_repr for g in dynamic.guard.guard_set.guards if g.kind == "SHAPE_ENV"]
    print("  shape guards:", "; ".join(shape_guards))
    mtc.dynamo.reset()


def _tour_globals() -> dict:
    return globals()


