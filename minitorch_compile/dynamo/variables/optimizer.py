"""Optimizers inside compiled code (``torch/_dynamo/variables/optimizer.py``).

``opt.step()`` is ordinary Python: a loop over ``param_groups`` that reads every parameter's
``.grad`` and updates parameters and state *in place*.  The tracer inlines it like any user
method.  The library's steps are wrapped by ``_use_grad`` (``optim/optimizer.py``), whose
``graph_break()`` calls sit inside ``try``, as torch's: the caller breaks at ``opt.step()``,
the wrapper's own frame is skipped and the step it calls is compiled as a frame of its own,
already under no_grad — so the update lands in a graph of its own (``add_`` on the parameter
inputs).  A user optimizer's undecorated ``step`` is simply inlined.  What needs help is the
optimizer's bookkeeping, which torch's ``OptimizerVariable`` handles and so does this one:

* ``_init_group(group, params, grads, ...)`` of the library's optimizers — gathering the
  params that have a grad and creating their state on the first step (Adam's zeros) — is
  **run eagerly**, on the real optimizer, while tracing, as torch does.  The lists it filled
  are then mapped back to trackers by identity: a parameter to its
  ``param_groups[g]['params'][i]`` source, a grad to ``<param>.grad``, a state tensor to
  ``<opt>.state[<param>][key]``.  So state made on the first step is already there when the
  graph is traced: it becomes graph inputs, and the first call compiles once (not once more
  when the state appears).
* Guards: each parameter's ``.grad`` (``None``, or ``TENSOR_MATCH``) and the keys of each
  parameter's state dict (``DICT_KEYS``) — a step taken after a new grad appears, or after
  SGD's momentum buffer was stored, recompiles (torch's guards on ``state``/``grad`` likewise).
* ``opt.state[p]`` in traced code (SGD stores the momentum buffer it made) is the tracked dict
  at that source; a store into it is a side effect replayed after the graph.
* ``capturable``: Adam's bias corrections use ``step.item()`` unless ``capturable`` is set; the
  tracer reads every group's flag as ``True`` (the real dict is untouched, and a replayed group
  keeps its own value) so the step stays in the graph — torch's ``OptimizerCapturableVariable``.

``opt.zero_grad()`` is *not* traced: torch marks it ``@torch._disable_dynamo``, so the graph
breaks at the call and it runs in plain Python (no guard on the grads it clears).

``.grad`` itself (``read_grad`` / ``store_grad``): reading a parameter's grad is a graph input
at source ``<param>.grad`` (or the constant ``None``, guarded); ``p.grad = None``
(``zero_grad``) is an attribute store replayed after the graph.
"""

from __future__ import annotations

from ..exc import unimplemented
from ..source import AttrSource, GetItemSource, Source
from .base import VariableTracker
from .constant import ConstantVariable
from .dicts import ConstDictVariable
from .lists import ListVariable
from .user_defined import UserDefinedObjectVariable


class ParamStateSource(Source):
    """``<opt>.state[<param>]``: the state dict of one parameter (the key is a tensor, named by
    its own source)."""

    def __init__(self, state: Source, param: Source):
        self.state, self.param = state, param

    def name(self) -> str:
        return f"{self.state.name()}[{self.param.name()}]"

    @property
    def root(self) -> Source:
        return self.state.root

    def reconstruct(self, codegen) -> None:
        self.state.reconstruct(codegen)
        self.param.reconstruct(codegen)
        codegen.binary_subscr()

    def __eq__(self, other) -> bool:
        return isinstance(other, ParamStateSource) and other.name() == self.name()

    def __hash__(self) -> int:
        return hash(self.name())


def _library_function(method) -> bool:
    """A bound method whose function is the library's (``mtc.optim``), not a subclass's."""
    fn = getattr(method, "__func__", None)
    return fn is not None and (getattr(fn, "__module__", "") or "").startswith(
        "minitorch_compile.optim")


def real_value(tx, vt):
    """The real tensor behind a graph-input tracker (``None`` for computed tensors)."""
    for arg in tx.output.graphargs:
        if arg.vt is vt:
            return arg.example
    return None


# ---------------------------------------------------------------------------- .grad
def read_grad(tx, vt) -> VariableTracker:
    """``t.grad`` of an input tensor: what an earlier ``t.grad = ...`` stored in this trace, else
    the grad at source ``<t>.grad`` (a graph input, or ``None`` — both guarded)."""
    from .builder import VariableBuilder

    written = tx.output.side_effects.load_attr(vt, "grad")
    if written is not None:
        return written
    real = real_value(tx, vt) if vt.source is not None else None
    if real is None:
        unimplemented("Tensor.grad of a tensor computed inside the compiled region")
    return VariableBuilder(tx, AttrSource(vt.source, "grad"))(real.grad)


def store_grad(tx, vt, value) -> None:
    """``t.grad = value`` on an input tensor: replayed after the graph."""
    if vt.source is None or real_value(tx, vt) is None:
        unimplemented("assigning Tensor.grad of a tensor computed inside the compiled region")
    if not (value.is_python_constant() and value.as_python_constant() is None) and \
            type(value).__name__ != "TensorVariable":
        unimplemented(f"assigning {value} to Tensor.grad")
    tx.output.side_effects.store_attr(vt, "grad", value)


# ---------------------------------------------------------------------------- trackers
class CapturableFlagVariable(ConstantVariable):
    """A group's ``capturable`` as the trace sees it (``True``); rebuilt as the real value."""

    def __init__(self, orig):
        super().__init__(True)
        self.orig = orig

    def reconstruct(self, codegen) -> None:
        codegen.load_const(self.orig)


class OptimizerVariable(UserDefinedObjectVariable):
    """An ``mtc.optim.Optimizer`` read from the frame."""

    def var_getattr(self, tx, name):
        if self.source is None:
            unimplemented("an optimizer made inside the compiled region")
        if name == "zero_grad":
            unimplemented(f"{type(self.value).__name__}.zero_grad() runs eagerly, at a graph "
                          "break (torch marks Optimizer.zero_grad @torch._disable_dynamo)")
        if name == "_init_group" and _library_function(getattr(self.value, name, None)):
            return InitGroupVariable(self)  # (a user optimizer's own _init_group is inlined)
        if name == "state" and tx.output.side_effects.load_attr(self, name) is None:
            return OptimizerStateVariable(self)
        vt = super().var_getattr(tx, name)
        if name == "param_groups" and isinstance(vt, ListVariable):
            for group in vt.items:
                flag = group.items.get("capturable") if isinstance(group, ConstDictVariable) \
                    else None
                if flag is not None and not isinstance(flag, CapturableFlagVariable):
                    group.items["capturable"] = CapturableFlagVariable(flag.as_python_constant())
        return vt

    def param_trackers(self, tx, group_index: int) -> list:
        groups = self.var_getattr(tx, "param_groups")
        return groups.items[group_index].items["params"].items

    def __repr__(self) -> str:
        return f"OptimizerVariable({type(self.value).__name__})"


class OptimizerStateVariable(VariableTracker):
    """``opt.state``: indexed by a parameter tracker, gives that parameter's state dict at
    source ``<opt>.state[<param>]`` (guarded by its keys; stores into it are replayed)."""

    def __init__(self, opt: OptimizerVariable):
        super().__init__(AttrSource(opt.source, "state"))
        self.opt = opt

    def param_state(self, tx, param_vt) -> VariableTracker:
        from .builder import VariableBuilder

        param = real_value(tx, param_vt) if param_vt.source is not None else None
        if param is None:
            unimplemented("optimizer.state indexed by something other than an input parameter")
        state = self.opt.value.state[param]  # a defaultdict: eager indexing makes it too
        return VariableBuilder(tx, ParamStateSource(self.source, param_vt.source))(state)

    def call_method(self, tx, name, args, kwargs):
        if name == "__getitem__" and len(args) == 1:
            return self.param_state(tx, args[0])
        if name == "get" and args:
            return self.param_state(tx, args[0])
        unimplemented(f"optimizer.state.{name}() inside compiled code")

    def __repr__(self) -> str:
        return f"OptimizerStateVariable({self.source.name()})"


class InitGroupVariable(VariableTracker):
    """``opt._init_group``: called, it runs eagerly on the real optimizer (see the module
    docstring) and fills the traced lists with trackers of what it gathered."""

    def __init__(self, opt: OptimizerVariable):
        super().__init__()
        self.opt = opt

    def call_function(self, tx, args, kwargs):
        opt = self.opt
        if kwargs or not args:
            unimplemented("optimizer._init_group called with keywords")
        group_vt, lists = args[0], args[1:]
        src = group_vt.source
        if not (isinstance(src, GetItemSource) and isinstance(src.base, AttrSource)
                and src.base.member == "param_groups" and src.base.base == opt.source):
            unimplemented("optimizer._init_group of a group not read from param_groups")
        if not all(isinstance(v, ListVariable) and v.source is None and not v.items
                   for v in lists):
            unimplemented("optimizer._init_group needs fresh empty lists to fill")
        g = src.index
        group = opt.value.param_groups[g]
        py_lists = [[] for _ in lists]
        ret = opt.value._init_group(group, *py_lists)  # eager, as torch: may create state
        trackers = self._trackers(tx, g, group)
        for vt, items in zip(lists, py_lists):
            vt.items = [ConstantVariable(None) if x is None else self._lookup(trackers, x)
                        for x in items]
        return ConstantVariable(ret)

    def _trackers(self, tx, g: int, group: dict) -> dict:
        """``id(tensor) -> tracker`` for the group's params, their grads and their state (every
        read installs its guard)."""
        opt = self.opt
        found = {}
        state = OptimizerStateVariable(opt)
        for p, p_vt in zip(group["params"], opt.param_trackers(tx, g)):
            found[id(p)] = (p, p_vt)
            grad_vt = read_grad(tx, p_vt)
            if p.grad is not None:
                found[id(p.grad)] = (p.grad, grad_vt)
            if p in opt.value.state:
                d_vt = state.param_state(tx, p_vt)
                for key, value in opt.value.state[p].items():
                    found.setdefault(id(value), (value, d_vt.items[key]))
        return found

    @staticmethod
    def _lookup(trackers: dict, value):
        hit = trackers.get(id(value))
        if hit is None or hit[0] is not value:
            unimplemented("optimizer._init_group gathered a value that is neither a "
                          "parameter, a grad nor optimizer state")
        return hit[1]
