"""numpy in compiled code (``dynamo/variables/numpy.py``): generated programs compiled ==
eager — values, dtypes, ndarray vs numpy scalar — over every dtype mtc shares with numpy,
under the ``eager`` and ``inductor`` backends; the breaks (with their reasons) for what is
not traced; the guards on ndarray inputs and on numpy's module attributes.

``tests/test_dynamo_fidelity_numpy.py`` holds the programs whose counts are torch's.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch_compile as mtc

from .dynamo_utils import CountingBackend

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64"]

# numpy expressions on `a` (the ndarray of the input, 2-d); each is traced or breaks
EXPRS = ["np.sin(a)", "np.exp(a)", "np.sqrt(np.abs(a))", "np.tanh(a) * 2", "a + 1",
         "a * 2.5", "a / 2", "a // 2", "a % 3", "-a", "abs(a)", "a ** 2", "2 - a",
         "a + np.float64(1.5)", "a.sum()", "a.sum(axis=0)", "np.mean(a)",
         "np.mean(a, axis=-1, keepdims=True)", "a.max()", "np.min(a, axis=0)", "a.prod()",
         "a.T", "a.reshape(-1)", "np.transpose(a)", "a.astype(np.float64)",
         "a.astype(np.int32)", "np.where(a > 0, a, 0)", "a > 1", "(a > 0).sum()", "a @ a.T",
         "np.concatenate([a, a])", "np.stack([a, a], axis=1)", "a[0]", "a[:, 1:]",
         "a[0, 0] * 2", "a - a.mean()", "np.maximum(a, a * 2)", "np.square(a)",
         "np.sign(a)", "np.floor(a)", "np.log(a + 4)", "np.equal(a, a)", "a // a",
         "a % (a * 0)", "2 ** a", "a // 0", "a.copy()", "a.flatten()",
         "np.argsort(a)", "np.cumsum(a)"]


def _program(expr: str):
    ns = {"np": np, "mtc": mtc}
    exec(f"def f(x):\n    a = x.numpy()\n    return {expr}, x + 1\n", ns)
    return ns["f"]


def _run(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # eager's error must be the compiled one's
        return type(e)


def _same(compiled, eager, where: str) -> None:
    assert type(compiled) is type(eager), f"{where}: {type(compiled)} != {type(eager)}"
    if isinstance(eager, type):
        return
    if isinstance(eager, tuple):
        for i, (c, e) in enumerate(zip(compiled, eager)):
            _same(c, e, f"{where}[{i}]")
    elif isinstance(eager, (np.ndarray, np.generic)):
        assert compiled.dtype == eager.dtype, f"{where}: {compiled.dtype} != {eager.dtype}"
        assert np.shape(compiled) == np.shape(eager), where
        tol = 1e-3 if eager.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(np.asarray(compiled, np.float64),
                                   np.asarray(eager, np.float64), rtol=tol, atol=tol,
                                   err_msg=where)
    elif isinstance(eager, mtc.Tensor):
        assert compiled.dtype == eager.dtype, where
        np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-6, err_msg=where)


def _input(dtype: str, rows: int, cols: int, seed: int):
    values = np.random.default_rng(seed).integers(-3, 4, size=(rows, cols))
    return mtc.from_numpy(values.astype(dtype) if dtype != "bool" else values > 0)


@given(expr=st.sampled_from(EXPRS), dtype=st.sampled_from(DTYPES),
       rows=st.integers(1, 3), cols=st.integers(2, 4), seed=st.integers(0, 3),
       backend=st.sampled_from(["eager", "inductor"]))
def test_generated_numpy_programs_compiled_equal_eager(expr, dtype, rows, cols, seed, backend):
    fn = _program(expr)
    x = _input(dtype, rows, cols, seed)
    mtc.dynamo.reset()
    with np.errstate(all="ignore"):
        eager = _run(fn, x)
        compiled = _run(mtc.compile(fn, backend=backend), x)
    _same(compiled, eager, f"{expr} on {dtype}[{rows}, {cols}] ({backend})")


@pytest.mark.parametrize("expr", EXPRS)
@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_every_expression_on_three_dtypes(expr, dtype):
    """The whole table on the dtypes where numpy's promotion differs most from torch's."""
    fn = _program(expr)
    x = _input(dtype, 2, 3, 0)
    mtc.dynamo.reset()
    with np.errstate(all="ignore"):
        _same(_run(mtc.compile(fn, backend="eager"), x), _run(fn, x), f"{expr} on {dtype}")


# ---------------------------------------------------------------- what is traced, what breaks
def _reasons(fn, *args) -> list:
    """The break reasons of ``fn``'s frames after one compiled call (errors are eager's)."""
    mtc.dynamo.reset()
    _run(mtc.compile(fn, backend="eager"), *args)
    return [e.graph_break.reason for e in mtc.dynamo.cache_entries(fn)
            if e.graph_break is not None] + \
        [e.reason for e in mtc.dynamo.cache_entries(fn) if e.is_eager]


def test_numpy_calls_are_graph_ops_and_float32_needs_no_cast():
    cb = CountingBackend()

    def f(x):
        a = x.numpy()
        return np.sin(a).sum(axis=0) + 1

    mtc.compile(f, backend=cb)(mtc.ones(2, 3))
    code = cb.graphs[0].code
    assert "view_as" in code and ".sin()" in code and "sum(dim = 0)" in code
    assert ".to(" not in code


@pytest.mark.parametrize("expr, dtype, cast", [
    ("np.sin(a)", "int32", "mtc.float64"),     # numpy: int32 -> float64 for sin
    ("a / 2", "int64", "mtc.float64"),         # true division of ints
    ("a + 1.5", "int16", "mtc.float64"),       # a Python float with an int array
    ("a + np.float64(1)", "float32", "mtc.float64"),  # a numpy scalar is not weak
    ("np.mean(a)", "int32", "mtc.float64"),
])
def test_numpy_result_dtype_casts_first(expr, dtype, cast):
    """Where mtc's op would give another dtype than numpy's, the graph computes in numpy's."""
    cb = CountingBackend()
    fn = _program(expr)
    x = _input(dtype, 2, 3, 1)
    _same(mtc.compile(fn, backend=cb)(x), fn(x), expr)
    assert f".to({cast})" in cb.graphs[0].code


@pytest.mark.parametrize("body, reason", [
    ("a += 1", "iadd on an ndarray: a write to memory shared with a tensor"),
    ("a[0] = 1", "ndarray.__setitem__: a write to memory shared with a tensor"),
    ("r = a.fill(0)", "ndarray.fill() is not traced"),
    ("r = np.argsort(a)", "np.argsort is not traced"),
    ("r = float(a.sum())", "float() of an ndarray needs its values"),
    ("r = np.add(a, 1, out=a)", "numpy keyword arguments ['out'] are not traced"),
    ("r = a + x", "a numpy call mixing an ndarray with a Tensor"),
    ("r = mtc.sin(a)", "mtc.sin of an ndarray is not traced"),
    ("r = x.add(a)", "add of an ndarray is not traced"),
    ("r = a[a > 0]", "indexing an ndarray with an array"),
    ("r = mtc.from_numpy(a.sum())", "mtc.from_numpy of an ndarray is not traced"),
])
def test_unsupported_numpy_breaks_with_a_reason(body, reason):
    ns = {"np": np, "mtc": mtc}
    exec(f"def f(x):\n    y = x * 2\n    a = y.numpy()\n    {body}\n    return y, a\n", ns)
    f = ns["f"]
    x = _input("float32", 2, 3, 2)
    assert any(reason in r for r in _reasons(f, x)), _reasons(f, x)
    mtc.dynamo.reset()
    eager, compiled = _run(f, _input("float32", 2, 3, 2)), \
        _run(mtc.compile(f, backend="eager"), _input("float32", 2, 3, 2))
    _same(compiled, eager, body)


def test_numpy_of_a_tensor_requiring_grad_breaks_and_raises_as_eager():
    def f(x):
        return x.numpy() * 2

    x = mtc.ones(3, requires_grad=True)
    assert any("requires grad" in r for r in _reasons(f, x))
    with pytest.raises(RuntimeError, match="requires grad"):
        mtc.compile(f, backend="eager")(x)


def test_trace_numpy_off_breaks_at_numpy():
    def f(x):
        return np.sin(x.numpy())

    with mtc._dynamo.config.patch(trace_numpy=False):
        assert any("trace_numpy is off" in r for r in _reasons(f, mtc.ones(3)))


# ---------------------------------------------------------------- guards
def test_an_ndarray_input_is_a_graph_input_guarded_on_dtype_and_shape():
    cb = CountingBackend()

    def f(a):
        return np.cos(a) * 2

    cf = mtc.compile(f, backend=cb)
    for arr in (np.ones(3, np.float32), np.arange(3, dtype=np.float32),  # hit
                np.ones(3, np.float64), np.ones(3, np.int64)):  # dtype: recompile each
        _same(cf(arr), f(arr), str(arr.dtype))
    assert len(cb.graphs) == 3
    assert "___ndarray_as_tensor(L['a'])" in str(mtc.dynamo.cache_entries(f)[0].guard.src)


def test_a_numpy_scalar_input_stays_a_numpy_scalar():
    def f(x, s):
        return x.numpy() * s, s + 1

    x = mtc.ones(2)
    _same(mtc.compile(f, backend="eager")(x, np.float32(3)), f(x, np.float32(3)), "scalar")


def test_numpy_module_attributes_are_guarded():
    """``np.sin`` read through a global is ID_MATCH-guarded: another function under the
    same name recompiles."""
    import types

    mod = types.ModuleType("fake_numpy")
    mod.op = np.sin
    ns = {"m": mod}
    exec("def f(x):\n    return m.op(x.numpy())\n", ns)
    f = ns["f"]
    cf = mtc.compile(f, backend="eager")
    x = mtc.ones(3)
    _same(cf(x), f(x), "sin")
    mod.op = np.cos
    _same(cf(x), f(x), "cos")
    assert len(mtc.dynamo.cache_entries(f)) == 2


def test_numpy_on_dynamic_shapes_traces_without_specializing():
    """A second shape makes the size dynamic (automatic dynamic); the numpy calls still trace
    (numpy is probed with the size's hint, asking nothing of the symbol), so the third shape
    reuses the graph."""
    cb = CountingBackend()

    def f(x):
        a = x.numpy()
        return np.sin(a).sum(axis=1) / 2, a.T @ a, np.mean(a, axis=0)

    cf = mtc.compile(f, backend=cb)
    for n in (2, 3, 4, 5):
        x = _input("float32", n, 3, n)
        _same(cf(x), f(x), f"n={n}")
    assert len(cb.graphs) == 2
    assert all(e.graph_break is None for e in mtc.dynamo.cache_entries(f))
