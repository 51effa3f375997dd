"""User-facing markers for the compiler (``torch/_dynamo/decorators.py``).

``graph_break()`` does nothing when run eagerly; traced, it is a graph break ("a
user-inserted graph break"), so code can ask for one — ``Optimizer.step``'s ``_use_grad``
wrapper calls it around the step, as torch's does.  This module imports nothing, so the
library's eager code (``optim``) can use it without importing the compiler.
"""

from __future__ import annotations


def graph_break() -> None:
    """Eagerly a no-op; traced, a graph break (``torch._dynamo.graph_break``)."""
