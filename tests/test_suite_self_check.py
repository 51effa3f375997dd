"""The test suite's test of itself: break the compiler, and the compiled-behaviour tests fail.

``tests/break_compiler.py`` makes the tracer fail at its first step, so every frame falls back
to eager (with a ``CompilerFallbackWarning``, which is ignored here: the warning is the suite's
*first* net, this checks the second).  The eager fallback computes the right values, so a test
that only compares compiled with eager results would still pass; each test below claims
compiled behaviour (graphs, guards, recompiles, breaks, dynamic shapes, the named backends,
hypothesis programs), so each must fail.  A test added to this list that still passes asserts
nothing about compilation: add ``assert_compiled(fn)`` (``tests/dynamo_utils.py``) or a graph
count to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .doc_examples import REPO

MUST_FAIL = [
    # guards and the cache
    "tests/test_dynamo_guards.py::test_new_values_same_metadata_hit_the_cache",
    "tests/test_dynamo_guards.py::test_grad_mode_change_recompiles",
    "tests/test_dynamo_guards.py::test_in_place_parameter_update_is_seen",
    "tests/test_dynamo_guards.py::test_default_dtype_change_recompiles",
    "tests/test_dynamo_guards.py::test_reset_clears_entries",
    # programs: dead-code elimination with mutations, identity of returned inputs, grad mode
    "tests/test_dynamo_programs.py::test_mutating_an_input_through_a_view_is_kept",
    "tests/test_dynamo_programs.py::test_inplace_operator_on_input_returns_the_input",
    "tests/test_dynamo_programs.py::test_compiled_under_no_grad_is_guarded_on_grad_mode",
    "tests/test_dynamo_programs.py::test_return_constant_has_no_graph",
    "tests/test_dynamo_programs.py::test_return_input_list_unchanged_is_the_same_object",
    # the API, the named backends (aot_eager, inductor) compiled vs eager, explain
    "tests/test_dynamo_misc.py::test_decorator_forms_and_jit_alias",
    "tests/test_dynamo_misc.py::test_compile_method_defined_in_class",
    "tests/test_dynamo_misc.py::test_compiled_module_runs_the_hooks_of_the_original",
    "tests/test_dynamo_misc.py::test_named_backends_run_the_graph_with_grads",
    "tests/test_aot.py::test_compile_with_aot_eager_backend_end_to_end",
    "tests/test_dynamo_misc.py::test_unsupported_printing_runs_the_print",
    "tests/test_dynamo_misc.py::test_explain_leaves_the_cache_alone",
    "tests/test_dynamo_misc.py::test_eager_entry_inspection",
    # graph breaks, and the property test whose graph count is what it observed
    "tests/test_graph_breaks.py::test_the_breaking_instructions_run_once_each_in_python",
    "tests/test_graph_breaks.py::test_a_break_in_a_try_block_keeps_the_except_working",
    "tests/test_graph_break_hypothesis.py::test_generated_programs_with_breaks_match_eager",
    # hypothesis programs and dynamic shapes
    "tests/test_dynamo_hypothesis.py::test_random_call_sequences_never_return_stale_results",
    "tests/test_dynamic_shapes.py::test_random_sizes_and_programs_never_return_a_stale_result",
    "tests/test_dynamic_shapes.py::test_equal_code_objects_keep_separate_caches",
]


def test_a_broken_compiler_fails_the_compiled_behaviour_tests(tmp_path):
    report = tmp_path / "outcomes.json"
    env = dict(os.environ, HYPOTHESIS_PROFILE="self_check", MTC_BREAK_COMPILER_REPORT=str(report))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.break_compiler",
         "-W", "ignore::minitorch_compile.dynamo.exc.CompilerFallbackWarning",
         "-q", "--tb=no", *MUST_FAIL],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert report.exists(), f"the run did not finish:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    outcomes = json.loads(report.read_text())
    missing = [t for t in MUST_FAIL if t not in outcomes]
    assert not missing, f"not run: {missing}\n{proc.stdout[-3000:]}"
    passed = [t for t in MUST_FAIL if outcomes[t][0] == "passed"]
    assert not passed, f"these tests pass with the compiler broken: {passed}"
    # each failed on its own check of compilation, not on the (ignored) fallback warning
    by_warning = [t for t in MUST_FAIL if "CompilerFallbackWarning" in outcomes[t][1]]
    assert not by_warning, f"failed only because of the warning: {by_warning}"


def test_the_broken_compiler_plugin_really_breaks_it():
    """The plugin makes every frame fall back to eager with the fallback warning — the failures
    above come from a broken tracer, not from a run that could not even start."""
    code = ("import warnings, minitorch_compile as mtc\n"
            "import tests.break_compiler as b\n"
            "b.pytest_configure(None)\n"
            "f = mtc.compile(lambda x: x + 1, backend='eager')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    f(mtc.randn(2))\n"
            "e, = mtc.dynamo.cache_entries(f)\n"
            "print(e.is_eager, w[0].category.__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.split() == ["True", "CompilerFallbackWarning"], proc.stderr
