"""``optim.Optimizer``: param groups, per-param state, checkpoints (``torch/optim/optimizer.py``).

The idea: an optimizer is a loop over parameters that updates each one *in place* from its
``.grad`` — ``param -= lr * grad`` for plain SGD — plus two pieces of bookkeeping:

* ``param_groups``: a list of dicts, each ``{"params": [...], "lr": ..., ...}``; a group's
  hyper-parameters apply to its params, and any the group omits come from ``defaults``.  So
  ``SGD([{"params": body}, {"params": head, "lr": 1e-2}], lr=1e-3)`` trains two groups at two
  rates.  (An LR scheduler just edits ``group["lr"]``.)
* ``state``: a dict keyed *by the parameter tensor itself* holding whatever the algorithm
  carries between steps (SGD's ``momentum_buffer``; Adam's ``step``, ``exp_avg``,
  ``exp_avg_sq``).

``state_dict()`` replaces the parameter objects by their position (0, 1, 2, ... across groups)
so a checkpoint can be loaded into a fresh optimizer over a fresh model with parameters in the
same order.  Updates run under ``no_grad``: they are not part of any graph.

Differences from torch, kept on purpose: the ``foreach``/``fused`` implementation switches are
accepted and recorded in each group (as torch's ``state_dict`` and ``repr`` show them) but there
is one, readable, per-tensor loop; ``differentiable=True`` is refused with a clear error;
``load_state_dict`` *copies* the loaded state tensors (torch may alias them, so two
optimizers loaded from one in-memory dict would share momentum buffers).
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from itertools import chain
from typing import Any, Callable

from .._tensor import Tensor


class _RequiredParameter:
    """Marks a hyper-parameter without default (every group must give it)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class: subclasses pass their ``defaults`` and implement ``step``."""

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Append a group; fill omitted hyper-parameters from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(p).__name__)
            if not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in param_group["params"]]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if not existing.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every ``.grad`` (``set_to_none``), or zero them in place."""
        from ..nn.parameter import zero_grads

        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None):
        """Update every parameter that has a ``.grad``; subclasses implement it."""
        raise NotImplementedError

    @staticmethod
    def _evaluate_closure(closure):
        """``step(closure)``: re-evaluate the loss (with grad on) before updating."""
        if closure is None:
            return None
        from ..autograd import enable_grad

        with enable_grad():
            return closure()

    # ------------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load hyper-parameters and state saved by ``state_dict``, matching params by index."""
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Tensor, dict] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: _cast(param, key, value) for key, value in v.items()}
            else:
                state[k] = v
        for new, old in zip(saved_groups, groups):
            new["params"] = old["params"]
        self.__dict__.update(state=state, param_groups=saved_groups)

    def __repr__(self) -> str:
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"


def _use_grad_for_differentiable(func: Callable) -> Callable:
    """``step`` runs with grad mode set to the group's ``differentiable`` (off: the update is
    not recorded), as torch's decorator of the same name — including its two
    ``graph_break()`` calls: compiled, the wrapper's frame is skipped (a break inside ``try``)
    and the step it calls is compiled as a frame of its own, already under no_grad, so its
    graph holds only the update (no grad-mode switches)."""

    def _use_grad(self, *args, **kwargs):
        from ..autograd import is_grad_enabled, set_grad_enabled
        from ..dynamo.decorators import graph_break

        prev_grad = is_grad_enabled()
        try:
            set_grad_enabled(self.defaults.get("differentiable", False))
            graph_break()
            ret = func(self, *args, **kwargs)
        finally:
            graph_break()
            set_grad_enabled(prev_grad)
        return ret

    functools.update_wrapper(_use_grad, func)
    return _use_grad


def implementation_switches(foreach, fused, differentiable: bool) -> dict[str, Any]:
    """torch's ``foreach``/``fused``/``differentiable`` group keys.  Every switch runs the same
    per-tensor loop here; ``differentiable=True`` (an update autograd records) is not
    implemented, so it is refused rather than ignored."""
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported by mtc.optim: the "
                                  "update always runs under no_grad")
    return dict(foreach=foreach, fused=fused, differentiable=differentiable)


def _cast(param: Tensor, key: str, value):
    """A loaded state value, copied, on the param's device (and dtype, except ``step``)."""
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if key != "step" and param.is_floating_point():
        value = value.to(dtype=param.dtype, device=param.device)
    else:
        value = value.to(device=param.device)
    return value.clone()
