"""Dynamo I around the tracer: the ``mtc.compile`` API, backends, ``fullgraph``, fault injection,
``explain()``, logs and the inspection of cache entries (guard source, graph code, ``dis`` and
depyf's decompiled transformed code).
"""

import inspect
import os
import subprocess
import sys
import warnings

import pytest

import minitorch_compile as mtc
from minitorch_compile import nn
from minitorch_compile.dynamo import exc
from minitorch_compile.dynamo.codegen import PyCodegen
from minitorch_compile.dynamo.output_graph import OutputGraph
from minitorch_compile.dynamo.symbolic_convert import InstructionTranslatorBase

from .dynamo_utils import CountingBackend, assert_compiled, assert_same


@pytest.fixture(autouse=True)
def _reset():
    mtc.dynamo.reset()
    yield
    mtc.dynamo.reset()
    mtc.set_logs()


def two_ops(x, y):
    return (x.cos() + y) * 2


def branchy(x):
    y = x.cos()
    if y.sum() > 0:  # data-dependent: the graph breaks here
        return y
    return -y


def printing(x):
    print("side effect")
    return x + 1


# ============================================================== the compile API
def test_decorator_forms_and_jit_alias():
    assert mtc.jit is mtc.compile

    @mtc.compile
    def a(x):
        return x + 1

    @mtc.compile(backend="eager")
    def b(x):
        return x * 2

    x = mtc.randn(3)
    with warnings.catch_warnings():
        # "inductor" may still be a placeholder that says so
        warnings.filterwarnings("ignore", "mtc.compile: backend 'inductor' is not implemented")
        assert mtc.allclose(a(x), x + 1)
    assert mtc.allclose(b(x), x * 2)
    assert len(assert_compiled(a, graphs=1)) == len(assert_compiled(b, graphs=1)) == 1
    assert a.__name__ == "a" and "backend='eager'" in repr(b)


def test_compile_method_defined_in_class():
    class Holder:
        k = 3.0

        @mtc.compile(backend="eager")
        def scale(self, x):
            return x * self.k

    h, x = Holder(), mtc.randn(2)
    assert mtc.allclose(h.scale(x), x * 3.0)
    assert mtc.allclose(Holder.scale(h, x), x * 3.0)
    assert len(assert_compiled(Holder.scale, graphs=1)) == 1


def test_compile_module_returns_optimized_module():
    mod = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    opt = mtc.compile(mod, backend="eager")
    x = mtc.randn(2, 3, requires_grad=True)
    out = opt(x)
    assert_same(out, mod(x))
    assert opt._orig_mod is mod and opt.training is mod.training
    out.sum().backward()
    assert mod[0].weight.grad is not None
    entry = mtc.dynamo.cache_entries(opt)[0]
    assert "l_self_modules_0_parameters_weight_" in entry.graph_code


def test_compiled_module_runs_the_hooks_of_the_original():
    mod = nn.Linear(2, 2)
    opt = mtc.compile(mod, backend="eager")
    x = mtc.randn(1, 2)
    handle = mod.register_forward_hook(lambda m, args, out: out * 100)
    assert mtc.allclose(opt(x), mod(x))
    handle.remove()
    mod.forward = lambda t: t * 3
    assert mtc.allclose(opt(x), x * 3)
    del mod.forward
    assert mtc.allclose(opt(x), mod(x))
    assert len(assert_compiled(opt, graphs=1)) == 1


def test_disable_and_bad_argument():
    def f(x):
        return x

    assert mtc.compile(f, disable=True) is f
    with pytest.raises(TypeError, match="expects a Python function"):
        mtc.compile(42)


def test_disable_compilation_runs_eagerly():
    fn = mtc.compile(two_ops, backend="eager")
    with mtc.dynamo.disable_compilation():
        fn(mtc.randn(2), mtc.randn(2))
    assert mtc.dynamo.cache_entries(fn) == []


def test_compiled_fn_is_a_global_of_the_module():
    fn = mtc.compile(two_ops, backend="eager")
    fn(mtc.randn(2), mtc.randn(2))
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.compiled_fn_name.startswith("__compiled_fn_")
    assert callable(two_ops.__globals__[entry.compiled_fn_name])
    assert entry.compile_time_s > 0
    assert entry.original_code is two_ops.__code__
    assert entry.code.co_varnames[:2] == ("x", "y") and entry.code.co_name == "two_ops"


# ============================================================== backends
def test_backend_registry():
    assert {"eager", "aot_eager", "inductor"} <= set(mtc.dynamo.list_backends())
    with pytest.raises(ValueError, match="unknown backend 'nope'"):
        mtc.compile(two_ops, backend="nope")

    @mtc.dynamo.register_backend(name="test_counting_registry")
    def counting(gm, example_inputs):
        counting.calls.append([tuple(t.shape) for t in example_inputs])
        return gm.forward

    counting.calls = []
    try:
        assert mtc.dynamo.lookup_backend("test_counting_registry") is counting
        fn = mtc.compile(two_ops, backend="test_counting_registry")
        fn(mtc.randn(2), mtc.randn(2))
        assert counting.calls == [[(2,), (2,)]]
        with pytest.raises(RuntimeError, match="duplicate name"):
            mtc.dynamo.register_backend(lambda gm, ex: gm.forward, name="test_counting_registry")
    finally:
        mtc.dynamo.backends.registry._BACKENDS.pop("test_counting_registry")


def test_backend_return_value_is_what_runs():
    calls = []

    def wrapping(gm, example_inputs):
        def run(*args):
            calls.append(len(args))
            return gm.forward(*args)
        return run

    fn = mtc.compile(two_ops, backend=wrapping)
    x, y = mtc.randn(2), mtc.randn(2)
    assert mtc.allclose(fn(x, y), two_ops(x, y))
    fn(x, y)
    assert calls == [2, 2]


def test_named_backends_run_the_graph_with_grads():
    for name in ("aot_eager", "inductor"):
        fn = mtc.compile(two_ops, backend=name)
        x, y = mtc.randn(3, requires_grad=True), mtc.randn(3)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "mtc.compile: backend 'inductor' is not implemented")
            out = fn(x, y)
        assert mtc.allclose(out, two_ops(x, y))
        out.sum().backward()
        assert mtc.allclose(x.grad, -2 * x.detach().sin())
        assert_compiled(two_ops, graphs=1)
        mtc.dynamo.reset()


def test_backend_that_raises_falls_back_with_a_warning():
    def broken(gm, example_inputs):
        raise RuntimeError("backend exploded")

    fn = mtc.compile(two_ops, backend=broken)
    x, y = mtc.randn(2), mtc.randn(2)
    with pytest.warns(exc.CompilerFallbackWarning,
                      match="internal compiler error .*backend exploded") as caught:
        assert mtc.allclose(fn(x, y), two_ops(x, y)); line = inspect.currentframe().f_lineno  # noqa: E702
    # the warning points at the user's call, not at the compiler's internals
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    with pytest.raises(exc.InternalTorchDynamoError, match="backend exploded"):
        mtc.compile(two_ops, backend=broken, fullgraph=True)(mtc.randn(5), mtc.randn(5))


# ============================================================== fullgraph and unsupported code
def test_a_data_dependent_branch_breaks_the_graph_with_the_reason_recorded():
    fn = mtc.compile(branchy, backend="eager")
    for x in (mtc.randn(3), -mtc.ones(3) * 5):
        assert mtc.allclose(fn(x), branchy(x))
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert not entry.is_eager and "cos" in entry.graph_code and "gt" in entry.graph_code
    brk = entry.graph_break
    assert "data-dependent branching" in brk.reason
    assert "in branchy" in brk.user_line and "if y.sum() > 0:" in brk.user_line
    assert len(mtc.dynamo.cache_entries(fn)) == 1  # the same entry serves both branches
    assert "__resume_at_" in entry.decompiled()


def test_fullgraph_unsupported_names_the_source_line():
    fn = mtc.compile(branchy, backend="eager", fullgraph=True)
    with pytest.raises(exc.Unsupported) as info:
        fn(mtc.randn(3))
    msg = str(info.value)
    assert "data-dependent branching" in msg
    assert "from user code" in msg and "if y.sum() > 0:" in msg
    assert f'File "{__file__}"' in msg and "in branchy" in msg
    assert info.value.user_line and info.value.instruction is not None


def test_fullgraph_unsupported_in_an_inlined_function():
    def inner(t):
        return t.item()

    def outer(x):
        return inner(x.sum()) * 2

    with pytest.raises(exc.Unsupported, match=r"Tensor.item\(\)[\s\S]*return t.item\(\)"):
        mtc.compile(outer, backend="eager", fullgraph=True)(mtc.randn(3))


def test_fullgraph_print_is_unsupported():
    with pytest.raises(exc.Unsupported, match=r"print\(\)[\s\S]*print\(\"side effect\"\)"):
        mtc.compile(printing, backend="eager", fullgraph=True)(mtc.randn(2))


def test_unsupported_printing_runs_the_print(capsys):
    fn = mtc.compile(printing, backend="eager")
    fn(mtc.randn(2))
    fn(mtc.randn(2))
    assert capsys.readouterr().out == "side effect\nside effect\n"
    entry, = assert_compiled(printing)  # the graph broke at print(); nothing ran whole-eagerly
    assert entry.graph_break.reason.startswith("print() writes output")


def test_user_errors_are_raised_as_in_eager():
    def bad_shapes(x, y):
        return x @ y

    fn = mtc.compile(bad_shapes, backend="eager")
    with pytest.raises(Exception) as eager_err:
        bad_shapes(mtc.randn(2, 3), mtc.randn(2, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the user's error is not an internal compiler error
        with pytest.raises(type(eager_err.value)):
            fn(mtc.randn(2, 3), mtc.randn(2, 3))
    entry = mtc.dynamo.cache_entries(fn)[0]  # the matmul broke the graph and ran in Python
    assert "raised" in (entry.reason or entry.graph_break.reason)


# ============================================================== fault injection
def _raise(*args, **kwargs):
    raise RuntimeError("injected fault")


@pytest.mark.parametrize("cls,method", [
    (InstructionTranslatorBase, "BINARY_OP"),
    (InstructionTranslatorBase, "LOAD_FAST"),
    (InstructionTranslatorBase, "CALL"),
    (OutputGraph, "call"),
    (OutputGraph, "compile_subgraph"),
    (PyCodegen, "reconstruct"),
])
def test_internal_error_falls_back_to_eager(monkeypatch, cls, method):
    monkeypatch.setattr(cls, method, _raise)
    fn = mtc.compile(two_ops, backend="eager")
    x, y = mtc.randn(3, requires_grad=True), mtc.randn(3)
    with pytest.warns(UserWarning, match="internal compiler error while compiling two_ops "
                                         r"\(RuntimeError: injected fault\); running it eagerly"):
        out = fn(x, y)
    assert_same(out, two_ops(x, y))
    out.sum().backward()
    assert mtc.allclose(x.grad, -2 * x.detach().sin())
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.is_eager and entry.reason == "internal error: RuntimeError: injected fault"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the eager entry is reused: no new warning
        fn(x, y)


@pytest.mark.parametrize("cls,method", [(InstructionTranslatorBase, "BINARY_OP"),
                                        (OutputGraph, "call")])
def test_internal_error_with_fullgraph_raises(monkeypatch, cls, method):
    monkeypatch.setattr(cls, method, _raise)
    fn = mtc.compile(two_ops, backend="eager", fullgraph=True)
    with pytest.raises(exc.InternalTorchDynamoError,
                       match="internal error while compiling two_ops: RuntimeError: injected"):
        fn(mtc.randn(3), mtc.randn(3))


def test_internal_error_leaves_grad_mode_alone(monkeypatch):
    def f(x):
        with mtc.no_grad():
            y = x * 2
        return y + x

    monkeypatch.setattr(OutputGraph, "compile_subgraph", _raise)
    fn = mtc.compile(f, backend="eager")
    with pytest.warns(UserWarning):
        fn(mtc.randn(2, requires_grad=True))
    assert mtc.is_grad_enabled()


@pytest.mark.parametrize("method", ["_build_TENSOR_MATCH", "_build_NO_TENSOR_ALIASING"])
def test_internal_error_in_guard_generation(monkeypatch, method):
    # while tracing (TENSOR_MATCH) or when the guard function is built (NO_TENSOR_ALIASING)
    from minitorch_compile.dynamo.guards import GuardSet

    monkeypatch.setattr(GuardSet, method, _raise)
    fn = mtc.compile(two_ops, backend="eager")
    x, y = mtc.randn(2), mtc.randn(2)
    with pytest.warns(UserWarning, match="injected fault"):
        assert_same(fn(x, y), two_ops(x, y))
    assert mtc.dynamo.cache_entries(fn)[0].is_eager
    fn(x, y)
    assert len(mtc.dynamo.cache_entries(fn)) == 1


# ============================================================== explain
def test_explain_captured_function():
    x, y = mtc.randn(3), mtc.randn(3)
    out = mtc.dynamo.explain(two_ops)(x, y)
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.break_reasons == []
    assert out.op_count == 3
    assert out.ops_per_graph == [["Tensor.cos", "operator.add", "operator.mul"]]
    kinds = {(g.kind, g.source_name) for g in out.out_guards}
    assert ("TENSOR_MATCH", "L['x']") in kinds and ("GRAD_MODE", "") in kinds
    assert len(out.graphs) == 1 and "cos" in out.graphs[0].code
    text = str(out)
    assert text.startswith("Graph Count: 1\nGraph Break Count: 0\nOp Count: 3\n")
    assert "Ops per Graph:\n  Ops 1:\n    Tensor.cos\n" in text
    assert "Guard Type: TENSOR_MATCH" in text and "Compile Times: two_ops:" in text


def test_explain_unsupported_function():
    out = mtc.dynamo.explain(branchy, mtc.ones(3))  # the direct-call form
    # one graph (cos, sum, gt) before the break; the branch taken (`return y`) has no ops
    # torch 2.13: graph_break_count = graph_count - 1, while the reason is listed
    assert out.graph_count == 1 and out.graph_break_count == 0 and out.op_count == 3
    assert len(out.break_reasons) == 1
    reason = out.break_reasons[0]
    assert "data-dependent branching" in reason.reason
    assert "if y.sum() > 0:" in reason.user_stack
    assert "Break Reason 1:" in str(out) and "if y.sum() > 0:" in str(out)


def test_explain_leaves_the_cache_alone():
    fn = mtc.compile(two_ops, backend="eager")
    x, y = mtc.randn(2), mtc.randn(2)
    fn(x, y)
    before = assert_compiled(fn)
    report = mtc.dynamo.explain(fn)(mtc.randn(4), mtc.randn(4))  # on the compiled wrapper too
    assert mtc.dynamo.cache_entries(fn) == before and report.graph_count == 1


def test_explain_module_with_submodules():
    mod = nn.Sequential(nn.Linear(2, 2), nn.Tanh())

    def f(x, m):
        return m(x) * 2

    out = mtc.dynamo.explain(f)(mtc.randn(1, 2), mod)
    assert out.ops_per_graph[0] == ["mtc.nn.functional.linear", "mtc.nn.functional.tanh",
                                 "operator.mul"]
    assert ("TYPE_MATCH", "L['m']._modules['0']") in {(g.kind, g.source_name)
                                                   for g in out.out_guards}


def test_explain_and_cache_entries_of_modules():
    mod = nn.Linear(2, 2)
    out = mtc.dynamo.explain(mod)(mtc.randn(1, 2))
    assert out.graph_count == 1 and out.ops_per_graph == [["mtc.nn.functional.linear"]]
    opt = mtc.compile(mod, backend="eager")
    opt(mtc.randn(1, 2))
    assert mtc.dynamo.cache_entries(opt) == mtc.dynamo.cache_entries(mod)
    assert len(mtc.dynamo.cache_entries(mod)) == 1
    assert mtc.dynamo.explain(opt)(mtc.randn(3, 2)).graph_count == 1
    assert len(mtc.dynamo.cache_entries(opt)) == 1  # explain leaves the cache alone


# ============================================================== logs
def _all_logs():
    mtc.set_logs(graph_code=True, guards=True, bytecode=True, recompiles=True, graph_breaks=True)


def test_set_logs_prints_every_artifact(capsys):
    _all_logs()
    fn = mtc.compile(two_ops, backend="eager")
    fn(mtc.randn(2), mtc.randn(2))
    fn(mtc.randn(3), mtc.randn(3))
    mtc.compile(branchy, backend="eager")(mtc.randn(2))
    err = capsys.readouterr().err
    assert "[mtc minitorch_compile.graph_code] TRACED GRAPH of two_ops" in err
    assert 'def forward(self, l_x_: "f32[2]", l_y_: "f32[2]"):' in err
    assert "[mtc minitorch_compile.guards] GUARDS of two_ops\ndef guard(L):" in err
    assert "[mtc minitorch_compile.bytecode] MODIFIED BYTECODE of two_ops" in err
    assert "LOAD_GLOBAL" in err and "__compiled_fn_" in err
    assert "[mtc minitorch_compile.recompiles] Recompiling function two_ops" in err
    assert "tensor 'x' size mismatch at index 0. expected 2, actual 3" in err
    assert "[mtc minitorch_compile.graph_breaks] Graph break in branchy: data-dependent" in err


def test_set_logs_off_and_unknown_names(capsys):
    _all_logs()
    mtc.set_logs(guards=True)
    mtc.compile(two_ops, backend="eager")(mtc.randn(2), mtc.randn(2))
    err = capsys.readouterr().err
    assert "GUARDS of two_ops" in err and "TRACED GRAPH" not in err
    mtc.set_logs()
    mtc.dynamo.reset()
    mtc.compile(two_ops, backend="eager")(mtc.randn(2), mtc.randn(2))
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="unknown log artifacts"):
        mtc.set_logs(graphs=True)


def test_logs_reach_an_attached_handler():
    import logging

    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append((record.name, record.getMessage()))

    logger = logging.getLogger("minitorch_compile.guards")
    handler = Keep()
    logger.addHandler(handler)
    mtc.set_logs(guards=True)
    try:
        mtc.compile(two_ops, backend="eager")(mtc.randn(2), mtc.randn(2))
    finally:
        logger.removeHandler(handler)
    assert records and records[0][0] == "minitorch_compile.guards"
    assert records[0][1].startswith("GUARDS of two_ops")


def test_mtc_logs_environment_variable():
    code = ("import minitorch_compile as mtc\n"
            "f = mtc.compile(lambda x: x.sin() * 2, backend='eager')\n"
            "f(mtc.randn(2)); f(mtc.randn(3))\n")
    env = dict(os.environ, MTC_LOGS="graph_code,recompiles")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "TRACED GRAPH of <lambda>" in proc.stderr
    assert "Recompiling function <lambda>" in proc.stderr
    assert "GUARDS of" not in proc.stderr and proc.stdout == ""


# ============================================================== inspection
def test_cache_entry_inspection():
    fn = mtc.compile(two_ops, backend="eager")
    fn(mtc.randn(2), mtc.randn(2))
    fn(mtc.randn(3), mtc.randn(3))
    e0, e1 = mtc.dynamo.cache_entries(fn)
    assert mtc.dynamo.cache_entries(two_ops) == [e0, e1]  # the plain function works too
    assert e0.guard_source.startswith("def guard(L):")
    assert "# TENSOR_MATCH L['x']  [float32[2] cpu requires_grad=False]" in e0.guard_source
    assert e0.graph_code.strip().startswith("def forward(self, l_x_, l_y_):")
    dis = e0.dis()
    assert "LOAD_GLOBAL" in dis and e0.compiled_fn_name in dis and "RETURN_VALUE" in dis
    src = e0.decompiled()
    assert "def two_ops(x, y):" in src
    assert f"{e0.compiled_fn_name}(x, y)" in src
    assert e0.guard(dict(x=mtc.randn(2), y=mtc.randn(2)))
    assert not e0.guard(dict(x=mtc.randn(3), y=mtc.randn(3)))
    assert e0.guard.failure_reason(dict(x=mtc.randn(2), y=mtc.randn(2))) == "(all guards pass)"


def test_decompiled_code_runs_like_the_transformed_code():
    def f(x, d):
        return {"a": x.cos(), "b": [d["y"], 3]}, x

    fn = mtc.compile(f, backend="eager")
    x, d = mtc.randn(2), {"y": mtc.randn(2)}
    fn(x, d)
    entry = mtc.dynamo.cache_entries(fn)[0]
    ns = dict(f.__globals__)
    exec(entry.decompiled(), ns)
    assert_same(ns["f"](x, d), f(x, d))


def test_eager_entry_inspection():
    def reads_grad_fn(x):
        return x.grad_fn  # autograd state: no break is possible at an attribute read

    fn = mtc.compile(reads_grad_fn, backend="eager")
    fn(mtc.randn(2))
    entry = mtc.dynamo.cache_entries(fn)[0]
    assert entry.is_eager and "grad_fn" in entry.reason
    assert "def reads_grad_fn" in entry.decompiled() and "LOAD_ATTR" in entry.dis()
    assert entry.guard_source.startswith("def guard(L):")


def test_counting_backend_graph_meta():
    cnt = CountingBackend()

    def f(inputs):
        return inputs["x"].cos() * inputs["y"]

    mtc.compile(f, backend=cnt)({"x": mtc.randn(4), "y": mtc.randn(4)})
    gm = cnt.graphs[0]
    placeholders = gm.graph.find_nodes(op="placeholder")
    assert [p.name for p in placeholders] == ["l_inputs_x_", "l_inputs_y_"]
    for node in gm.graph.nodes:
        if node.op != "output":
            ex = node.meta["example_value"]
            assert isinstance(ex, mtc.fx.FakeTensor) and tuple(ex.shape) == (4,)
    assert all("stack_trace" in n.meta for n in gm.graph.nodes
               if n.op in ("call_function", "call_method"))


def test_fullgraph_wrapper_never_reuses_an_eager_fallback_entry():
    def branchy(x):
        if x.mean() > 0.5:
            return x
        return -x

    x = mtc.randn(4)
    mtc.compile(branchy, backend="eager")(x)  # leaves an eager fallback entry
    with pytest.raises(mtc.dynamo.exc.Unsupported):
        mtc.compile(branchy, backend="eager", fullgraph=True)(x)


def test_wrong_arity_errors_name_the_function():
    def add2(x, y):
        return x + y

    with pytest.raises(TypeError, match=r"add2\(\) missing 1 required positional argument"):
        mtc.compile(add2, backend="eager")(mtc.ones(2))


def test_fullgraph_raises_the_eager_error_for_bad_input():
    def bad(x, y):
        return x @ y

    x, y = mtc.randn(2, 3), mtc.randn(2, 3)
    with pytest.raises(RuntimeError) as eager:
        bad(x, y)
    with pytest.raises(type(eager.value), match=r"mm: mat1 and mat2 shapes cannot be multiplied"):
        mtc.compile(bad, backend="eager", fullgraph=True)(x, y)


def test_compiler_warnings_point_at_the_users_line():
    """Fallback and backend warnings carry the stack level of the user's call."""
    def broken(gm, example_inputs):
        raise RuntimeError("backend exploded")

    def scale(x, k):
        return x * k

    fn = mtc.compile(two_ops, backend=broken)
    with pytest.warns(exc.CompilerFallbackWarning, match="internal compiler error") as caught:
        fn(mtc.randn(2), mtc.randn(2)); line = inspect.currentframe().f_lineno  # noqa: E702
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    limited = mtc.compile(scale, backend="eager")
    with mtc._dynamo.config.patch(automatic_dynamic_shapes=False):  # one entry per float
        for k in range(mtc.dynamo.RECOMPILE_LIMIT):
            limited(mtc.randn(2), k + 0.5)
        with pytest.warns(exc.CompilerFallbackWarning, match="recompile limit") as caught:
            limited(mtc.randn(2), 0.25); line = inspect.currentframe().f_lineno  # noqa: E702
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mtc.compile(scale)(mtc.randn(2), 2.0); line = inspect.currentframe().f_lineno  # noqa: E702
    inductor = [w for w in caught if "backend 'inductor' is not implemented" in str(w.message)]
    for w in inductor:  # (until the inductor backend lands)
        assert (w.filename, w.lineno) == (__file__, line)
