"""A pytest plugin that breaks the compiler on purpose: ``-p tests.break_compiler``.

The tracer fails at its first step, so every frame falls back to eager with a
``CompilerFallbackWarning`` (``fullgraph=True`` raises).  ``tests/test_suite_self_check.py`` runs
Dynamo tests under it: a test that still passes did not check that anything was compiled.
"""

from minitorch_compile.dynamo import convert_frame


class _BrokenTranslator(convert_frame.InstructionTranslator):
    def run(self):
        raise RuntimeError("the tracer is broken on purpose (tests/break_compiler.py)")


def pytest_configure(config):
    convert_frame.InstructionTranslator = _BrokenTranslator
