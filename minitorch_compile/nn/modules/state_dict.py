"""``state_dict``/``load_state_dict``: a module as a flat dict (``torch/nn/modules/module.py``).

The idea: a checkpoint is not the module, only its tensors, keyed by the dotted path the walk
``named_modules`` gives each owner::

    Sequential(Linear, ReLU, Linear)  ->  {"0.weight": ..., "0.bias": ..., "2.weight": ...,
                                           "2.bias": ...}

Saving visits every module (shared ones under *every* name) and lists its parameters and
*persistent* buffers; values are detached tensors that share memory with the module (as in
torch — ``clone()`` them for a snapshot).

Loading walks the same tree and, for each tensor a module owns, looks its key up:

* key absent                          -> *missing*;
* key present, wrong type or shape    -> an error message (always fatal);
* key present                         -> ``param.copy_(value)`` under ``no_grad`` (the
                                         Parameter object keeps its identity, so an optimizer
                                         holding it stays valid), or with ``assign=True`` the
                                         module is made to hold the given tensor;

and each key under a module's prefix that names neither one of its own tensors nor one of its
children is *unexpected*.  With ``strict=True`` missing or unexpected keys raise torch's
``Error(s) in loading state_dict for ...`` message; with ``strict=False`` they are returned.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._tensor import Tensor
from ...autograd import no_grad
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _own_state(module) -> dict:
    """A module's own saved tensors: its parameters and persistent buffers (``None`` skipped)."""
    persistent = ((k, v) for k, v in module._buffers.items()
                  if k not in module._non_persistent_buffers_set)
    return {k: v for k, v in itertools.chain(module._parameters.items(), persistent)
            if v is not None}


def save_own_state(module, destination: dict, prefix: str, keep_vars: bool) -> None:
    for name, value in _own_state(module).items():
        destination[prefix + name] = value if keep_vars else value.detach()


def state_dict(module, destination=None, prefix: str = "", keep_vars: bool = False):
    if destination is None:
        destination = OrderedDict()
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            state_dict(child, destination, prefix + name + ".", keep_vars)
    return destination


def load_own_state(module, state_dict: Mapping, prefix: str, missing_keys: list,
                   unexpected_keys: list, error_msgs: list, assign: bool) -> None:
    local_state = _own_state(module)
    for name, current in local_state.items():
        key = prefix + name
        if key not in state_dict:
            missing_keys.append(key)
            continue
        value = state_dict[key]
        if not isinstance(value, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected '
                              "torch.Tensor or Tensor-like object from checkpoint but received "
                              f"{type(value)}")
        elif value.shape != current.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{current.shape}.")
        elif assign and name in module._parameters:
            setattr(module, name, Parameter(value, requires_grad=current.requires_grad))
        elif assign:
            module._buffers[name] = value
        else:
            with no_grad():
                current.copy_(value)
    for key in state_dict:
        if not key.startswith(prefix):
            continue
        head, *rest = key[len(prefix):].split(".", 1)
        owned = head in module._modules if rest else head in local_state
        if not owned:
            unexpected_keys.append(key)


def load_state_dict(module, state_dict: Mapping, strict: bool = True,
                    assign: bool = False) -> _IncompatibleKeys:
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing_keys, unexpected_keys, error_msgs = [], [], []
    for prefix, m in module.named_modules(remove_duplicate=False):  # shared: every name
        m._load_from_state_dict(state_dict, prefix + "." if prefix else "", missing_keys,
                                unexpected_keys, error_msgs, assign)
    if strict:
        if unexpected_keys:
            error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in unexpected_keys)))
        if missing_keys:
            error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                ", ".join(f'"{k}"' for k in missing_keys)))
    if error_msgs:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
            type(module).__name__, "\n\t".join(error_msgs)))
    return _IncompatibleKeys(missing_keys, unexpected_keys)
