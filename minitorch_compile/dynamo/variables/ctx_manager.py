"""Context managers in ``with`` blocks (``variables/ctx_manager.py``): grad-mode contexts,
which switch the mode of the ops traced inside and record the switch in the graph, and the
``__exit__`` that ``BEFORE_WITH`` leaves on the stack — of those, or of a user object whose
``__enter__``/``__exit__`` are inlined.
"""

from __future__ import annotations

from ..exc import unimplemented
from .base import VariableTracker
from .constant import ConstantVariable


class GradModeVariable(VariableTracker):
    """``with mtc.no_grad():`` / ``enable_grad()`` / ``set_grad_enabled(b)``.

    Entering switches grad mode for the ops traced inside *and* records a
    ``_set_grad_enabled`` node, so the graph itself switches at run time, as in torch.
    """

    def __init__(self, target_mode: bool, initially_set: bool = False):
        super().__init__()
        self.target_mode = target_mode
        self.prev = None

    def enter(self, tx):
        self.prev = tx.output.grad_enabled
        tx.output.set_grad_mode(tx, self.target_mode)
        return ConstantVariable(None)

    def exit(self, tx):
        tx.output.set_grad_mode(tx, self.prev)
        return ConstantVariable(None)

    def call_method(self, tx, name, args, kwargs):
        if name == "__enter__":
            return self.enter(tx)
        if name == "__exit__":
            return self.exit(tx)
        unimplemented(f"grad-mode context method {name}")

    def call_function(self, tx, args, kwargs):
        # used as a decorator: @mtc.no_grad() def f(...)
        unimplemented("grad-mode objects used as decorators inside compiled code")


class WithExitFunctionVariable(VariableTracker):
    """The bound ``__exit__`` that BEFORE_WITH leaves on the stack."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def call_function(self, tx, args, kwargs):
        return self.ctx.call_method(tx, "__exit__", args, kwargs)


class UserContextExitVariable(VariableTracker):
    """The bound ``__exit__`` of a user object used in ``with`` (torch's
    ``GenericContextWrappingVariable``): ``__enter__`` was inlined at BEFORE_WITH, calling this
    inlines ``__exit__``.  A graph break inside the block cannot leave and re-enter it: not
    rebuilt (the frame runs eagerly)."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx

    def call_function(self, tx, args, kwargs):
        from .functions import UserMethodVariable

        return UserMethodVariable(type(self.ctx.value).__exit__, self.ctx).call_function(
            tx, args, kwargs)

    def reconstruct(self, codegen) -> None:
        unimplemented(f"a graph break inside `with` on a {type(self.ctx.value).__name__} (a "
                      "user context manager cannot be left and entered again)")
