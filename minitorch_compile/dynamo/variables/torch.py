"""minitorch_compile's own functions and modules inside traced code (``variables/torch.py``).

``mtc.cos``, ``mtc.zeros``, ``mtc.nn.functional.relu``, ``mtc.ops.aten.mm`` ... called while
tracing become ``call_function`` nodes whose example value is computed on fake tensors.  A few
are answered at compile time instead (``mtc.is_grad_enabled()``, ``mtc.is_tensor(x)``), a few
switch the tracer's state (``mtc.no_grad``), and the ones that read tensor *values* or touch
global state (``mtc.allclose``, ``mtc.manual_seed``, ``mtc.autograd.grad``) are unsupported.
"""

from __future__ import annotations

import types

from ..decorators import graph_break
from ..exc import unimplemented
from ..source import AttrSource
from .base import VariableTracker
from .constant import ConstantVariable
from .numpy import has_ndarray


def _names(*fns) -> set:
    return {id(f) for f in fns}


def _tables():
    import minitorch_compile as mtc

    folded = {mtc.is_tensor, mtc.is_floating_point, mtc.numel, mtc.get_default_dtype,
              mtc.promote_types, mtc.result_type}
    unsupported = {mtc.allclose: "allclose() compares values", mtc.equal: "equal() compares "
                   "values", mtc.manual_seed: "manual_seed() changes global RNG state",
                   mtc.seed: "seed() changes global RNG state",
                   mtc.set_default_dtype: "set_default_dtype() changes global state",
                   mtc.autograd.grad: "autograd.grad() inside a compiled region",
                   mtc.autograd.backward: "autograd.backward() inside a compiled region",
                   mtc.isclose: "isclose() compares values"}
    # saved-tensor hooks change what autograd keeps for backward: torch 2.13 graph-breaks on
    # them too; checkpoint's recomputation is a higher-order op in torch, not implemented here
    from ...autograd import graph
    from ...utils import checkpoint

    for ctx in (graph.saved_tensors_hooks, graph.save_on_cpu, graph.disable_saved_tensors_hooks):
        unsupported[ctx] = f"autograd.graph.{ctx.__name__} (saved-tensor hooks; torch " \
                           "graph-breaks too)"
    for fn in (checkpoint.checkpoint, checkpoint.checkpoint_sequential):
        unsupported[fn] = f"utils.checkpoint.{fn.__name__} (torch traces it as the " \
                          "tag_activation_checkpoint higher-order op; ours runs it eagerly)"
    return folded, unsupported


# the library's own Python code that the tracer inlines like user code, as torch inlines
# ``torch.optim`` and ``torch.nn.utils``: optimizer steps, zero_grad, gradient clipping
_INLINED_MODULES = ("minitorch_compile.optim", "minitorch_compile.nn.parameter",
                    "minitorch_compile.nn.utils")


def is_mtc_object(value) -> bool:
    mod = getattr(value, "__module__", None) or ""
    if isinstance(value, types.FunctionType) and mod.startswith(_INLINED_MODULES):
        return False
    if isinstance(value, types.ModuleType):
        return value.__name__.split(".")[0] == "minitorch_compile"
    from ...ops._ops import OpNamespace, OpOverload, OpOverloadPacket, _Ops

    if isinstance(value, (OpOverload, OpOverloadPacket, OpNamespace, _Ops)):
        return True
    from ...autograd import grad_mode

    if any(value is c for c in (grad_mode.no_grad, grad_mode.enable_grad,
                                grad_mode.inference_mode, grad_mode.set_grad_enabled)):
        return True  # context-manager classes the tracer understands
    from ...autograd import saved_hooks

    if any(value is c for c in (saved_hooks.saved_tensors_hooks, saved_hooks.save_on_cpu,
                                saved_hooks.disable_saved_tensors_hooks)):
        return True  # ... and ones it refuses (a graph break: ``_tables``)
    return callable(value) and not isinstance(value, type) and mod.split(".")[0] == \
        "minitorch_compile"


class TorchVariable(VariableTracker):
    """An mtc function, op or (sub)module."""

    def __init__(self, value, source=None):
        super().__init__(source)
        self.value = value

    def as_python_constant(self):
        return self.value

    def python_type(self) -> type:
        return type(self.value)

    def var_getattr(self, tx, name):
        from .builder import VariableBuilder

        if not hasattr(self.value, name):
            unimplemented(f"{self.value!r} has no attribute {name!r}")
        src = AttrSource(self.source, name) if self.source is not None else None
        # the library's own functions are not guarded one by one (the module is)
        return VariableBuilder(tx, src, guard=False)(getattr(self.value, name))

    def call_function(self, tx, args, kwargs):
        import minitorch_compile as mtc

        from .ctx_manager import GradModeVariable

        fn = self.value
        if fn is mtc.no_grad or fn is mtc.inference_mode:
            return GradModeVariable(False)
        if fn is mtc.enable_grad:
            return GradModeVariable(True)
        if fn is mtc.set_grad_enabled:
            mode = args[0].as_python_constant()
            ctx = GradModeVariable(mode)
            ctx.enter(tx)  # set_grad_enabled switches at once; `with` restores on exit
            ctx.call_method = lambda tx_, name, a, k: (ConstantVariable(None) if name ==
                                                       "__enter__" else ctx.exit(tx_))
            return ctx
        if fn is mtc.is_grad_enabled:
            return ConstantVariable(tx.output.grad_enabled)
        if fn is graph_break:
            unimplemented("Call to `mtc._dynamo.graph_break()`: a user-inserted graph break")
        if any(has_ndarray(a) for a in (*args, *kwargs.values())):
            from .numpy import from_numpy_call

            return from_numpy_call(tx, fn, args, kwargs)  # variables/numpy.py
        folded, unsupported = _tables()
        if fn in unsupported:
            unimplemented(f"mtc.{unsupported[fn]} cannot be captured into a graph")
        if fn in folded:
            vals = [tx.output.example_of(a) for a in args]
            kw = {k: tx.output.example_of(v) for k, v in kwargs.items()}
            return ConstantVariable(fn(*vals, **kw))
        if isinstance(fn, type) or isinstance(fn, types.ModuleType):
            unimplemented(f"calling {fn!r} inside compiled code is not supported")
        return tx.output.call(tx, "call_function", fn, list(args), kwargs)

    def __repr__(self) -> str:
        return f"TorchVariable({getattr(self.value, '__name__', self.value)})"
