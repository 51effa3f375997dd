"""``mtc.library``: register operators and kernels from Python (``torch/library.py``).

The three ways torch_npu plugs a device into PyTorch, here in miniature:

1. **Implement an existing op for a backend key** — ``TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
   { m.impl("abs", ...); }`` becomes::

       lib = Library("aten", "IMPL")
       lib.impl("abs", npu_abs, "NPU")          # "PrivateUse1" is accepted as an alias

2. **Define a new op by schema in its own namespace** — ``TORCH_LIBRARY(npu, m)`` becomes::

       lib = Library("npu", "DEF")
       lib.define("fast_gelu(Tensor self) -> Tensor")
       lib.impl("fast_gelu", kernel, "CPU")
       mtc.ops.npu.fast_gelu(x)                  # through the dispatcher

3. **API redirection** — ``torch_npu.npu_fast_gelu = torch.ops.npu.npu_fast_gelu`` is plain
   Python attribute assignment of the op object.

A kernel receives the op's arguments bound positionally against its schema (tensors as
``Tensor``) and returns tensors.  ``impl(..., "Autograd")`` or ``register_autograd`` gives a
defined op a derivative; without one, backward through it raises a clear error.
"""

from __future__ import annotations

from ._dispatch import AUTOGRAD, DispatchKey, to_dispatch_key
from .ops._ops import find_overload, ops, register_overload
from .ops.schema import parse_schema

_KINDS = ("DEF", "IMPL", "FRAGMENT")


class Library:
    """A handle for defining ops in, or adding kernels to, one namespace."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind '{kind}'; expected one of {_KINDS}")
        if kind == "DEF" and ns in _defined_namespaces:
            raise RuntimeError(f"Only a single TORCH_LIBRARY can be used to register the "
                               f"namespace {ns}; please put all of your definitions in a single "
                               "TORCH_LIBRARY block (or use FRAGMENT).")
        if kind == "DEF":
            _defined_namespaces.add(ns)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._registrations: list = []

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define a new op from a schema string; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed on an IMPL library")
        s = parse_schema(schema)
        op = register_overload(self.ns, s)
        self._registrations.append(("def", op))
        return s.name

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key``."""
        op = self._resolve(op_name)
        key = to_dispatch_key(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        prev = op.composite if key == DispatchKey.CompositeImplicitAutograd else \
            op.kernels.get(key)
        if key == DispatchKey.CompositeImplicitAutograd:
            op.composite = fn
        elif key == AUTOGRAD:
            op.kernels[AUTOGRAD] = lambda _op, args: fn(*args)
        else:
            op.kernels[key] = fn
            if AUTOGRAD not in op.kernels:
                from .autograd.graph import autograd_kernel

                op.kernels[AUTOGRAD] = autograd_kernel
        self._registrations.append(("impl", op, key, prev))

    def _resolve(self, op_name):
        if not isinstance(op_name, str):
            return op_name
        name, _, overload = op_name.partition(".")
        return getattr(getattr(getattr(ops, self.ns), name), overload or "default")

    def _destroy(self) -> None:
        """Undo this library's registrations (used by tests)."""
        for reg in reversed(self._registrations):
            if reg[0] == "def":
                op = reg[1]
                packet = getattr(getattr(ops, op.namespace), op.name)
                packet.overloads.pop(op.overload_name, None)
                if not packet.overloads:
                    getattr(ops, op.namespace).packets.pop(op.name, None)
            else:  # put back the kernel this registration replaced (the device's, or none)
                _, op, key, prev = reg
                if key == DispatchKey.CompositeImplicitAutograd:
                    op.composite = prev
                elif prev is None:
                    op.kernels.pop(key, None)
                else:
                    op.kernels[key] = prev
        if self.kind == "DEF":
            _defined_namespaces.discard(self.ns)
        self._registrations.clear()


_defined_namespaces: set = set()


def register_autograd(qualname: str, backward, *, setup_context=None) -> None:
    """Give a Library-defined op a derivative (``torch.library.register_autograd``).

    ``setup_context(ctx, inputs, output)`` saves what ``backward(ctx, *grads)`` needs; the op
    then runs as a custom ``autograd.Function`` whenever an input requires grad.
    """
    from ._dispatch import dispatch_below_autograd, exclude
    from .autograd.function import Function

    op = find_overload(qualname)

    class _OpFunction(Function):
        @staticmethod
        def forward(*args):
            with exclude(AUTOGRAD):
                return dispatch_below_autograd(op, args)

        @staticmethod
        def setup_context(ctx, inputs, output):
            if setup_context is not None:
                setup_context(ctx, inputs, output)

        @staticmethod
        def backward(ctx, *grads):
            return backward(ctx, *grads)

    _OpFunction.__name__ = "".join(p.capitalize() for p in op.name.split("_"))
    op.kernels[AUTOGRAD] = lambda _op, args: _OpFunction.apply(*args)


def impl(qualname: str, dispatch_key: str, func=None, *, lib=None):
    """Decorator form: ``@mtc.library.impl("npu::fast_gelu", "CPU")``."""
    op = find_overload(qualname)

    def register(fn):
        key = to_dispatch_key(dispatch_key)
        if key == AUTOGRAD:
            op.kernels[AUTOGRAD] = lambda _op, args: fn(*args)
        else:
            op.kernels[key] = fn
        return fn

    return register(func) if func is not None else register


def get_kernel(qualname: str, dispatch_key: str):
    return find_overload(qualname).kernels.get(to_dispatch_key(dispatch_key))
