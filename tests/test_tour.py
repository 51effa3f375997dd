"""The guided tour (``python -m minitorch_compile tour``) runs, says what it should, and leaves
no registration behind."""

import re

import pytest

import minitorch_compile as mtc
from minitorch_compile import _tour
from minitorch_compile.__main__ import main
from minitorch_compile.dynamo import bytecode_versions as versions
from minitorch_compile.ops import all_overloads


def _run(capsys, steps=None) -> str:
    _tour.run_tour(steps)
    return capsys.readouterr().out


def test_tour_prints_every_step(capsys):
    out = _run(capsys)
    for title in ("1. tensors", "2. one row of the op table", "3. dispatch keys",
                  "4. custom autograd Functions", "5. how torch_npu plugs in", "6. a tiny MLP",
                  "7. Dynamo", "9. The compile report"):
        assert title in out


def test_tour_promotion_table(capsys):
    out = _run(capsys, ["tensors"])
    line = next(ln for ln in out.splitlines() if "int64[3] * 2.5" in ln)
    assert line.split()[-2:] == ["float32", "float64"]  # torch's rule vs numpy's
    line = next(ln for ln in out.splitlines() if "(0-dim)" in ln)
    assert line.split()[-2:] == ["float32", "float64"]


def test_tour_op_table_row(capsys):
    out = _run(capsys, ["op_table"])
    assert "cos(Tensor self) -> Tensor" in out
    assert "pointwise" in out and "np.cos" in out
    assert "lambda grad, self: grad * -self.sin()" in out
    assert "Autograd, CPU, Meta, NPU" in out


def test_tour_dispatch_keys(capsys):
    out = _run(capsys, ["dispatch"])
    lines = [ln.strip() for ln in out.splitlines()]
    assert "CompositeImplicitAutograd  aten.linear.default" in lines
    assert "Autograd                   aten.mm.default" in lines
    assert "CPU                        aten.mm.default" in lines
    backward = out.split("backward (run by the autograd engine")[1]
    assert backward.count("aten.sin.default") == 2  # cos' formula, once per cos
    assert "aten.mul.default" in backward


def test_dispatch_tracer_restores_kernels():
    before = {op: (op.kernels, op.composite) for op in all_overloads("aten")}
    x = mtc.randn(2, 2, requires_grad=True)
    with _tour.ShowDispatchKeys() as keys:
        (x @ x).sum()
    assert keys.lines
    after = {op: (op.kernels, op.composite) for op in all_overloads("aten")}
    assert all(after[op][0] is k and after[op][1] is c for op, (k, c) in before.items())


def test_tour_custom_functions(capsys):
    out = _run(capsys, ["functions"])
    assert out.count("saving tensor of size mtc.Size([5, 5, 5])") == 3
    for pair in ("output1, output2", "output1, output3", "grad_input1, grad_input2",
                 "grad_input1, grad_input3"):
        assert f"allclose({pair}): True" in out


def test_tour_registration_paths_and_cleanup(capsys):
    out = _run(capsys, ["registration"])
    assert "npu_abs kernel runs on npu:0" in out
    assert "mtc.ops.custom.fast_gelu(x) -> [-0.1542, 0.3504, -0.0643]" in out
    assert "on npu:0" in out
    assert "its grad, from register_autograd: [-0.0678, 0.8792, -0.0738]" in out
    assert "custom::fast_gelu defined? False" in out
    # nothing left behind: the npu abs is the op table's kernel again, custom is free to define
    assert not hasattr(mtc.ops.custom, "fast_gelu")
    assert mtc.tensor([-1.0]).to("npu").abs().tolist() == [1.0]
    assert "npu_abs" not in capsys.readouterr().out
    lib = mtc.library.Library("custom", "DEF")
    lib._destroy()


def test_tour_training_or_skip(capsys):
    out = _run(capsys, ["training"])
    if hasattr(mtc.nn, "Linear") and hasattr(mtc.optim, "SGD"):
        assert "step 19" in out and "loss falls" in out
    else:
        assert "skipped: mtc.nn / mtc.optim are not available yet" in out


def test_tour_dynamo_cache_hits_and_entries(capsys):
    out = _run(capsys, ["dynamo"])
    calls = [ln.split() for ln in out.splitlines() if ln.strip().startswith("f(x, ")]
    # f(x, a), f(x, a), f(x, b), f(x, b): the second call of each hits the cache
    assert [(c[1], c[2], c[3]) for c in calls] == [("a)", "1", "miss:"), ("a)", "1", "hit:"),
                                                    ("b)", "2", "miss:"), ("b)", "2", "hit:")]
    assert all(c[-1] == "True" for c in calls)  # log(exp(2x)) == 2x, log(exp(-x)) == -x
    assert out.count("-- cache entry") == 2
    entry0, entry1 = out.split("-- cache entry")[1:3]
    for entry, mod, op in ((entry0, "a", "mul = 2 * l_x_"), (entry1, "b", "neg = -l_x_")):
        assert "def guard(L):" in entry
        assert "# TENSOR_MATCH L['x']  [float32[5, 5, 5] cpu requires_grad=False]" in entry
        # modules are guarded by type (torch 2.13 inlines them); ids shown by name
        assert f"___check_type_id(L['mod'], id({mod.upper()}))" in entry
        assert "def forward(self, l_x_):" in entry and op in entry
        assert "log = mtc.log(exp)" in entry
        assert re.search(r"___graph_out = __compiled_fn_\d+\(x\)", entry)  # depyf
        assert "return ___graph_out[0]" in entry
        # dis shows the NULL bit where this CPython pushes it: below the callable, 3.13 above
        loaded = r"__compiled_fn_\d+ \+ NULL" if versions.NULL_ABOVE_CALLABLE else \
            r"NULL \+ __compiled_fn_\d+"
        assert re.search(rf"LOAD_GLOBAL +1 \({loaded}\)", entry)  # dis
        assert "RETURN_VALUE" in entry
    assert not re.search(r"\d{9,}", out)  # no raw object ids: the output is repeatable


def test_tour_dynamo_recompile_reason_and_fallback(capsys):
    out = _run(capsys, ["dynamo"])
    assert "Recompiling function f in" in out
    assert "- 0: tensor 'x' size mismatch at index 0. expected 5, actual 4" in out
    assert "- 1: ___check_type_id(L['mod'], id(B))" in out
    assert "entries now: 3" in out
    assert "graph break: data-dependent branching" in out
    assert "if ___graph_out[0]:" in out and "__resume_at_" in out
    assert mtc.dynamo.cache_entries(_tour.f) == []  # the step leaves the cache empty


def test_tour_is_deterministic(capsys):
    def masked(text):  # graph numbers count on across runs in one process
        return re.sub(r"__compiled_fn_\d+", "__compiled_fn_N", text)

    assert masked(_run(capsys)) == masked(_run(capsys))


def test_cli(capsys):
    assert main(["tour", "--step", "tensors", "--step", "op_table"]) == 0
    out = capsys.readouterr().out
    assert "1. tensors" in out and "2. one row" in out and "3. dispatch" not in out
    assert main(["tour", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "registration" in listed and "dynamo" in listed
    with pytest.raises(SystemExit):
        main(["tour", "--step", "nope"])


def test_tour_ends_with_a_compile_report(capsys):
    import os
    import re

    from minitorch_compile.report.html import SECTIONS

    out = _run(capsys, ["report"])
    path = re.search(r"compile report written to (\S+)", out).group(1)
    assert os.path.isfile(path)
    html = open(path, encoding="utf-8").read()
    assert all(f'<section id="{s}">' in html for s in SECTIONS)
    frames, recompiles, graphs, npu = map(int, re.search(
        r"(\d+) compiled frames, (\d+) recompiles, (\d+) Inductor graphs, (\d+) npu kernels",
        out).groups())
    assert frames == html.count('<div class="entry">') and recompiles == 2 and npu == 2
    assert graphs == html.count("<h3>compiled graph ")
    assert "__resume_at" in html and "exp" in html  # the break of function(), f's graph
