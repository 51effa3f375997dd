"""Hypothesis: generated programs, compiled == eager.

1. Straight-line programs over the op table: hypothesis draws a few inputs (shape, which ones
   require grad) and a sequence of steps — unary pointwise ops taken from the op table (as a
   function ``mtc.cos(v)`` or a method ``v.cos()``), binary ops (Python operators, ``mtc``
   functions), reductions with ``keepdim`` and view round-trips — and emits them as Python
   source.  The source is exec'd into a function, compiled with a counting backend, and must
   give one graph with exactly the ops emitted, and eager's values and gradients.
2. Programs with Python structure (loops, branches on constants, containers, calls with
   ``*args``/``**kwargs``, comprehensions, lambdas, ``no_grad``) around tensor code: one graph,
   eager's values and gradients.
3. Guard soundness under random call sequences: a function is called on inputs of randomly
   drawn shapes, dtypes and ``requires_grad``; every call matches eager and there is exactly
   one cache entry per distinct input kind.
"""

import itertools
import linecache

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc
from minitorch_compile.ops.table import OP_TABLE

from .dynamo_utils import (
    CountingBackend,
    assert_compiled,
    assert_same,
    compile_and_compare,
    ops_of,
)


def _unary_ops() -> list[str]:
    """Pointwise one-tensor ops of the op table that are both ``mtc.<name>`` and a method."""
    names = []
    probe = mtc.randn(2)
    for name, op in sorted(OP_TABLE.items()):
        if op.category != "pointwise" or name.endswith("_") or "." in name:
            continue
        if not (hasattr(mtc, name) and hasattr(mtc.Tensor, name)):
            continue
        try:
            out = getattr(mtc, name)(probe)
        except (TypeError, NotImplementedError, RuntimeError):  # needs more arguments
            continue
        if isinstance(out, mtc.Tensor) and out.is_floating_point():
            names.append(name)
    return names


UNARY = _unary_ops()

# template, graph ops it emits; {a} {b} are earlier values, {d} a dim, {c} a float constant
BINARY = [("{a} + {b}", 1), ("{a} - {b}", 1), ("{a} * {b}", 1), ("{a} / ({b}.abs() + 1)", 3),
          ("mtc.maximum({a}, {b})", 1), ("mtc.minimum({a}, {b})", 1),
          ("mtc.where({a} > {b}, {a}, {b})", 2), ("{a} * {c}", 1), ("{c} - {a}", 1),
          ("{a} ** 2", 1)]
REDUCTIONS = [("{a}.sum(dim={d}, keepdim=True)", 1), ("mtc.mean({a}, dim={d}, keepdim=True)", 1),
              ("{a}.amax(dim={d}, keepdim=True)", 1), ("{a}.sum()", 1)]
VIEWS = [("{a}.transpose(0, -1).transpose(0, -1)", 2), ("{a}.unsqueeze(0).squeeze(0)", 2),
         ("{a}.reshape({a}.shape)", 1), ("{a}.flatten().reshape({a}.shape)", 2),
         ("{a}[...]", 1), ("{a}.clone()", 1), ("{a}.contiguous()", 1)]


def test_the_op_table_gives_unary_ops():
    assert {"cos", "exp", "tanh", "relu"} <= set(UNARY)


@st.composite
def programs(draw):
    shape = draw(st.sampled_from([(3,), (2, 3), (2, 1, 3)]))
    n_inputs = draw(st.integers(1, 3))
    grads = [draw(st.booleans()) for _ in range(n_inputs)]
    names = [f"x{i}" for i in range(n_inputs)]
    lines, n_ops = [], 0
    for i in range(draw(st.integers(1, 8))):
        a = draw(st.sampled_from(names))
        b = draw(st.sampled_from(names))
        kind = draw(st.sampled_from(["unary", "binary", "reduction", "view"]))
        if kind == "unary":
            op = draw(st.sampled_from(UNARY))
            expr = f"mtc.{op}({a})" if draw(st.booleans()) else f"{a}.{op}()"
            n = 1
        else:
            table = {"binary": BINARY, "reduction": REDUCTIONS, "view": VIEWS}[kind]
            template, n = draw(st.sampled_from(table))
            expr = template.format(a=a, b=b, d=draw(st.integers(-1, 0)),
                                   c=draw(st.sampled_from([0.5, 2.0, -1.25])))
        lines.append(f"    v{i} = {expr}")
        names.append(f"v{i}")
        n_ops += n
    outs = names[n_inputs:]
    ret = draw(st.sampled_from(["tuple", "dict", "last"]))
    if ret == "tuple":
        lines.append(f"    return ({', '.join(outs)},)")
    elif ret == "dict":
        lines.append("    return {" + ", ".join(f"{o!r}: {o}" for o in outs) + "}")
    else:
        lines.append(f"    return {outs[-1]}")
        n_ops = None  # earlier values may be dead code
    src = f"def prog({', '.join(names[:n_inputs])}):\n" + "\n".join(lines) + "\n"
    return src, shape, grads, n_ops


_counter = itertools.count()


def make_function(src: str):
    filename = f"<generated program {next(_counter)}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"mtc": mtc}
    exec(compile(src, filename, "exec"), ns)
    return ns["prog"]


@given(programs(), st.integers(0, 2**16))
def test_generated_straight_line_programs(program, seed):
    src, shape, grads, n_ops = program
    mtc.dynamo.reset()
    rng = np.random.default_rng(seed)
    args = [mtc.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=g)
            for g in grads]
    fn = make_function(src)
    cnt = CountingBackend()
    compile_and_compare(fn, *args, backend=cnt, rtol=1e-4, atol=1e-5)
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.reason is None, f"{entry.reason}\n{src}"
    assert cnt.frame_count == 1, src
    if n_ops is not None:
        assert len(ops_of(cnt.graphs[0])) == n_ops, (src, entry.graph_code)


def helper(t, k=2.0, *, shift=0.0):
    return t * k + shift


# statements with Python structure around tensor code; {a} {b} name earlier values, {v} the
# new one, {n} a small constant; each must be captured without a break
STATEMENTS = [
    "{v} = {a}\n    for i in range({n}):\n        {v} = {v} * 0.5 + i",
    "if {n} > 1:\n        {v} = {a}.cos()\n    else:\n        {v} = {a}.sin()",
    "{v} = sum([{a}, {b}, {a}])",
    "{v} = helper({a}, {n}, shift=1.0)",
    "{v} = helper(*({a},), **{{'k': 3.0}})",
    "_p, _q = {a}, {b}\n    {v} = _q - _p",
    "_d = {{'p': {a}, 'q': {b}}}\n    {v} = _d['p'] * _d.get('q')",
    "{v} = [t * w for t, w in zip(({a}, {b}), (1.0, 2.0))][-1]",
    "{v} = {a} if isinstance({a}, mtc.Tensor) and {a}.dim() > 0 else {b}",
    "with mtc.no_grad():\n        _s = {a} * 2\n    {v} = {b} + _s",
    "_xs = [{a}]\n    _xs.append({b})\n    {v} = mtc.stack(_xs).sum(0)",
    "{v} = (lambda t: t.exp() / (1 + t.exp()))({a})",
]


@st.composite
def structured_programs(draw):
    n_inputs = draw(st.integers(1, 3))
    names = [f"x{i}" for i in range(n_inputs)]
    lines = []
    for i in range(draw(st.integers(1, 6))):
        template = draw(st.sampled_from(STATEMENTS))
        lines.append("    " + template.format(v=f"v{i}", a=draw(st.sampled_from(names)),
                                               b=draw(st.sampled_from(names)),
                                               n=draw(st.integers(0, 3))))
        names.append(f"v{i}")
    src = (f"def prog({', '.join(names[:n_inputs])}):\n" + "\n".join(lines) +
           f"\n    return ({', '.join(names[n_inputs:])},)\n")
    return src, n_inputs, [draw(st.booleans()) for _ in range(n_inputs)]


@given(structured_programs(), st.integers(0, 2**16))
def test_generated_programs_with_python_structure(program, seed):
    src, n_inputs, grads = program
    mtc.dynamo.reset()
    rng = np.random.default_rng(seed)
    args = [mtc.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=g)
            for g in grads]
    fn = make_function(src)
    fn.__globals__["helper"] = helper
    cnt = CountingBackend()
    compile_and_compare(fn, *args, backend=cnt, rtol=1e-4, atol=1e-5)
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.reason is None and not entry.is_eager, f"{entry.reason}\n{src}"
    assert cnt.frame_count == (entry.graph_module is not None)  # none if no tensor op ran


def kinded(x, y, scale=2.0):
    return (x * scale).sum(dim=-1) + y.cos().mean(), x.shape[0]


input_kinds = st.tuples(st.sampled_from([(2, 3), (4, 3), (2, 5)]),
                        st.sampled_from([mtc.float32, mtc.float64]), st.booleans(),
                        st.sampled_from([2.0, 3.0]))


@given(st.lists(input_kinds, min_size=1, max_size=6))
def test_random_call_sequences_never_return_stale_results(kinds):
    mtc.dynamo.reset()
    fn = mtc.compile(kinded, backend="eager")
    for shape, dtype, rg, scale in kinds:
        x = mtc.randn(*shape, dtype=dtype, requires_grad=rg)
        y = mtc.randn(3, dtype=dtype)
        assert_same(fn(x, y, scale), kinded(x, y, scale))
    # at most one entry per kind (automatic dynamic shapes can make one entry serve several
    # sizes), and never more than the recompile limit
    assert 1 <= len(assert_compiled(kinded)) <= len(set(kinds))


# ============================================================== 4. symbolic numbers
# steps over a float argument ``a`` and numbers read with ``.item()``: Python arithmetic on the
# numbers, tensor ops taking them
NUMBER_STEPS = ["{n} * 2 + 1", "{n} / 3 - {m}", "-{n} + {m} * {m}", "{n} ** 2"]
TENSOR_STEPS = ["{t} * {n}", "{t} - {n} * {t}.cos()", "mtc.full((3,), {n}) + {t}",
                "({t} > {n}).float() * {t}", "{n} - {t}"]


@st.composite
def number_programs(draw):
    """``prog(x, a)``: tensor and number values built from ``x``, the float ``a`` and (with
    ``capture_scalar_outputs``) ``.item()`` of tensors; returns the last tensor and a number."""
    numbers, tensors, lines = ["a"], ["x"], []
    for i in range(draw(st.integers(2, 6))):
        kind = draw(st.sampled_from(["number", "tensor", "item"]))
        n, m = draw(st.sampled_from(numbers)), draw(st.sampled_from(numbers))
        t = draw(st.sampled_from(tensors))
        if kind == "number":
            lines.append(f"    n{i} = " + draw(st.sampled_from(NUMBER_STEPS)).format(n=n, m=m))
            numbers.append(f"n{i}")
        elif kind == "item":
            lines.append(f"    n{i} = {t}.mean().item()")
            numbers.append(f"n{i}")
        else:
            lines.append(f"    t{i} = " + draw(st.sampled_from(TENSOR_STEPS)).format(n=n, t=t))
            tensors.append(f"t{i}")
    lines.append(f"    return {tensors[-1]}, {numbers[-1]}")
    return "def prog(x, a):\n" + "\n".join(lines) + "\n"


@given(number_programs(), st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=5),
       st.booleans(), st.sampled_from(["eager", "aot_eager"]))
def test_generated_programs_over_floats_and_items(src, values, capture, backend):
    """Every call equals eager; the float turns into a graph input on its second value, so the
    frame never compiles more than twice (nothing here decides on a number)."""
    mtc.dynamo.reset()
    fn = make_function(src)
    cnt = CountingBackend()
    with mtc._dynamo.config.patch(capture_scalar_outputs=capture):
        compiled = mtc.compile(fn, backend=cnt if backend == "eager" else backend)
        for v in values:
            x = mtc.tensor([0.5, -1.0, 2.0])
            got, want = compiled(x, v), fn(x, v)
            assert type(got[1]) is type(want[1]), src
            assert np.allclose(got[0].numpy(), want[0].numpy(), rtol=1e-5, atol=1e-5,
                               equal_nan=True), src
            assert np.isclose(got[1], want[1], rtol=1e-6, atol=1e-9, equal_nan=True), src
    if backend == "eager" and (capture or ".item()" not in src):
        assert cnt.frame_count <= 2, src
