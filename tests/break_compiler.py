"""A pytest plugin that breaks the compiler on purpose: ``-p tests.break_compiler``.

The tracer fails at its first step, so every frame falls back to eager with a
``CompilerFallbackWarning`` (``fullgraph=True`` raises).  ``tests/test_suite_self_check.py`` runs
Dynamo tests under it: a test that still passes did not check that anything was compiled.  With
``MTC_BREAK_COMPILER_REPORT=path`` the plugin writes each test's outcome and, for a failure, the
exception it failed with, as JSON.
"""

import json
import os

from minitorch_compile.dynamo import convert_frame

_OUTCOMES: dict = {}


class _BrokenTranslator(convert_frame.InstructionTranslator):
    def run(self):
        raise RuntimeError("the tracer is broken on purpose (tests/break_compiler.py)")


def pytest_configure(config):
    convert_frame.InstructionTranslator = _BrokenTranslator


def pytest_runtest_logreport(report):
    if report.when == "call" or report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        message = crash.message if crash is not None else str(report.longrepr or "")
        _OUTCOMES[report.nodeid] = (report.outcome, message if report.failed else "")


def pytest_sessionfinish(session):
    path = os.environ.get("MTC_BREAK_COMPILER_REPORT")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_OUTCOMES, f)
