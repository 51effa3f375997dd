"""``nn.Module``: a tree of parameters, buffers and submodules (``torch/nn/modules/module.py``).

The idea: a module is an ordinary Python object whose ``__setattr__`` *sorts* what you assign
into three ordered dicts, and whose ``__getattr__`` (called only when normal lookup fails)
finds it there again::

    self.weight = Parameter(w)           ->  self._parameters["weight"]
    self.register_buffer("mean", t)      ->  self._buffers["mean"]    (also: assigning a tensor
                                                                        to an existing buffer)
    self.fc = Linear(2, 3)               ->  self._modules["fc"]
    self.p = 0.5                         ->  self.__dict__["p"]        (a plain attribute)

Everything else is a walk over that tree.  ``named_modules`` is a pre-order walk that builds
dotted prefixes (``""``, ``"fc"``, ``"blocks.0"``); ``named_parameters`` and ``state_dict``
list each module's own entries under its prefix (``"blocks.0.weight"``); ``train(mode)`` sets
``training`` on every node; ``zero_grad`` clears every parameter's ``.grad``.  Calling a
module runs its forward pre-hooks, ``forward``, then its forward hooks (``module_hooks.py``,
with the backward hooks).

Invariants (as in torch): a name lives in at most one of ``_parameters``, ``_buffers``,
``_modules`` and ``__dict__``; names never contain ``"."``; a tensor or module reachable twice
(shared weights) is listed once by the iterators (``remove_duplicate=True``) but under every
name by ``state_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Callable, Iterator

from ..._tensor import Tensor
from ..._tensor_methods import _parse_to
from ...autograd import no_grad
from ..parameter import Parameter
from . import state_dict as _state_dict
from .module_hooks import ModuleHooksMixin


def _addindent(s: str, num_spaces: int) -> str:
    """Indent every line but the first (how a child's repr nests inside its parent's)."""
    first, *rest = s.split("\n")
    if not rest:
        return s
    return first + "\n" + "\n".join(num_spaces * " " + line for line in rest)


def _forward_unimplemented(self, *input) -> None:  # noqa: A002 - torch's name
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


def _typename(value) -> str:
    """torch.typename: ``torch.FloatTensor`` for a tensor, else the type's name."""
    return value.type() if isinstance(value, Tensor) else type(value).__name__


class Module(ModuleHooksMixin):
    """Base class of every layer and model; subclasses define ``__init__`` and ``forward``."""

    training: bool
    forward: Callable = _forward_unimplemented

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        # object.__setattr__: our own __setattr__ needs these dicts to exist already
        init = super().__setattr__
        init("training", True)
        init("_parameters", {})
        init("_buffers", {})
        init("_non_persistent_buffers_set", set())
        init("_modules", {})
        self._init_hooks()

    # ------------------------------------------------------------------ registration

    def _check_name(self, kind: str, name, table: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:  # (torch's add_module names the offender; the others do not)
            got = f", got: {name}" if kind == "module" else ""
            raise KeyError(f"{kind} name can't contain \".\"{got}")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True):
        """A tensor that is state but not learnable (running stats); saved iff persistent."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> Module:
        """``get_submodule("blocks.0.fc")``: follow a dotted path through ``_modules``."""
        mod = self
        for item in target.split(".") if target else ():
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target: str):
        """``get_parameter("0.weight")``: the submodule's path, then a parameter of it."""
        return self._get_member(target, "_parameters", "nn.Parameter")

    def get_buffer(self, target: str):
        return self._get_member(target, "_buffers", "buffer")

    def _get_member(self, target: str, table: str, what: str):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        if name not in getattr(mod, table):
            raise AttributeError(f"`{name}` is not an {what}" if what[0] == "n"
                                 else f"`{name}` is not a {what}")
        return getattr(mod, name)

    # ------------------------------------------------------------------ attribute protocol

    def __getattr__(self, name: str):
        # only reached when ordinary lookup (instance __dict__, class) fails
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")

        def remove_from(*tables):
            for t in tables:
                if name in t:
                    t.discard(name) if isinstance(t, set) else t.pop(name)

        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, buffers, modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, params, buffers, self._non_persistent_buffers_set)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = value
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            buffers[name] = value
        else:
            super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(type(self)) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())  # "0" is not an identifier

    # ------------------------------------------------------------------ walking the tree

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Pre-order walk: ``("", self)``, then each child's walk under ``prefix.child``."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        """``(dotted name, member)`` for the members of each module of the walk, once each."""
        seen = set()  # ids: Tensor.__eq__ is elementwise, so tensors can't be compared by ==
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    # ------------------------------------------------------------------ modes and grads

    def train(self, mode: bool = True) -> Module:
        """Set ``training`` on this module and every descendant (Dropout reads it)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's ``.grad`` (or zero it in place when ``set_to_none=False``)."""
        from ..parameter import zero_grads

        zero_grads(self.parameters(), set_to_none)

    # ------------------------------------------------------------------ conversion

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively), then on ``self`` — e.g. custom init."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's data, grad and every buffer by ``fn`` of it.

        Parameters keep their identity (``param.data = fn(param)``), so an optimizer built
        before ``model.to(...)`` still holds the right objects.
        """
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                param.data = fn(param)
                if param.grad is not None:
                    param.grad = fn(param.grad)
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> Module:
        """``to(dtype)``, ``to(device)``, ``to(tensor)``: floating-point tensors change dtype."""
        dtype, device = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        return self._apply(lambda t: t.to(device=device,
                                          dtype=dtype if t.is_floating_point() else None))

    def _cast_floating(self, dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        from ... import _dtype

        return self._cast_floating(_dtype.float32)

    def double(self) -> Module:
        from ... import _dtype

        return self._cast_floating(_dtype.float64)

    def half(self) -> Module:
        from ... import _dtype

        return self._cast_floating(_dtype.float16)

    def cpu(self) -> Module:
        return self.to("cpu")

    # ------------------------------------------------------------------ state_dict
    # the format and the loading protocol live in state_dict.py; these are the entry points
    # (and the per-module hooks a layer may override, as in torch)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        _state_dict.save_own_state(self, destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, missing_keys, unexpected_keys,
                              error_msgs, assign) -> None:
        _state_dict.load_own_state(self, state_dict, prefix, missing_keys, unexpected_keys,
                                   error_msgs, assign)

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Flat ``{"fc.weight": tensor, ...}`` of parameters and persistent buffers."""
        return _state_dict.state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        """Copy ``state_dict`` into this module's tensors; see ``state_dict.py``."""
        return _state_dict.load_state_dict(self, state_dict, strict, assign)

    # ------------------------------------------------------------------ printing

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside ``Name(...)``; layers override it (``in_features=2, ...``)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:  # one-liners: Linear(...)
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
