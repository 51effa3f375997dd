"""The dispatcher: which kernel of an operator runs for a given call.

Mirrors ``c10/core/DispatchKey.h``, ``aten/src/ATen/core/dispatch/Dispatcher.cpp`` and
``torch/utils/_python_dispatch.py``.

Every operator (an ``OpOverload``) owns a table of kernels, one per *dispatch key*.  A call
computes the set of keys that apply and runs the kernel of the highest-priority one::

    CompositeImplicitAutograd   an op defined by a decomposition runs it here, so every later
                                key (autograd, tracing, backends) only ever sees primitive ops
    Autograd                    some tensor argument requires grad and grad mode is on:
                                record a backward node, then redispatch *below* Autograd
    Python                      a TorchDispatchMode is active (make_fx, FakeTensorMode) or a
                                tensor subclass defines ``__torch_dispatch__``; it receives
                                ``(func, types, args, kwargs)`` as torch passes them:
                                keyword-only arguments in ``kwargs``, defaults left out
    NPU | CPU | Meta            the backend, chosen by the tensors' device

A kernel that handles its key and wants the rest of the work done *redispatches* with its own
key excluded (``exclude(AUTOGRAD)``), exactly like c10's ``ExcludeDispatchKeyGuard``.  That is
why ``make_fx`` (a Python-key mode) sees the ops that the autograd engine runs for the backward
pass: they are dispatched like any other op, and Python sits below Autograd.
"""

from __future__ import annotations

import enum
import numbers
import threading


class DispatchKey(enum.IntEnum):
    """Keys in priority order: a smaller value wins."""

    CompositeImplicitAutograd = 0
    Autograd = 1
    Python = 2
    NPU = 3
    CPU = 4
    Meta = 5


COMPOSITE = DispatchKey.CompositeImplicitAutograd
AUTOGRAD = DispatchKey.Autograd
PYTHON = DispatchKey.Python
BACKEND_KEYS = {"cpu": DispatchKey.CPU, "meta": DispatchKey.Meta}  # + PrivateUse1's name

# torch_npu registers its kernels under PrivateUse1; the name is accepted as an alias.
_KEY_ALIASES = {"PrivateUse1": DispatchKey.NPU, "CompositeImplicit": COMPOSITE}


def to_dispatch_key(key) -> DispatchKey:
    if isinstance(key, DispatchKey):
        return key
    if key in _KEY_ALIASES:
        return _KEY_ALIASES[key]
    try:
        return DispatchKey[key]
    except KeyError:
        raise ValueError(
            f"unknown dispatch key {key!r}; expected one of {[k.name for k in DispatchKey]}"
        ) from None


class _State(threading.local):
    """Thread-local dispatcher state: excluded keys, grad mode, the mode stack."""

    def __init__(self):
        self.excluded: frozenset = frozenset()
        self.grad_enabled: bool = True
        self.inference_mode: bool = False  # autograd.inference_mode: outputs are marked
        self.modes: list = []


state = _State()


class exclude:
    """``with exclude(AUTOGRAD): ...`` — calls inside skip the given keys (redispatch)."""

    __slots__ = ("keys", "prev")

    def __init__(self, *keys: DispatchKey):
        self.keys = frozenset(keys)

    def __enter__(self):
        self.prev = state.excluded
        state.excluded = self.prev | self.keys

    def __exit__(self, *exc):
        state.excluded = self.prev


class DispatchError(RuntimeError):
    pass


_NUMBERS = (int, float, bool, numbers.Number)  # Python and numpy scalars stand for numbers


def register_number_type(cls) -> None:
    """A scalar type that may stand in a ``Tensor`` argument (``x * n`` with a ``SymInt``)."""
    global _NUMBERS
    if cls not in _NUMBERS:
        _NUMBERS = _NUMBERS + (cls,)


def _tensors_of(op, args):
    """The tensor arguments of a call (``Tensor`` and ``Tensor[]`` parameters)."""
    schema = op.schema
    out = [args[i] for i in schema.tensor_arg_indices if args[i] is not None
           and not isinstance(args[i], _NUMBERS)]
    for i in schema.tensor_list_arg_indices:
        out.extend(t for t in args[i] if t is not None)  # ``Tensor?[]`` entries may be None
    return out


# composites whose output node takes torch's name (``autograd/node_names.py``)
NAMED_COMPOSITES: frozenset = frozenset()


def _named_composite(op, args: tuple):
    from .autograd.graph import _sequence
    from .autograd.node_names import name_composite_output

    first = next(_sequence)
    out = op.composite(*args)
    name_composite_output(op, args, out, first)
    return out


def dispatch(op, args: tuple):
    """Run ``op`` on the positional ``args`` (already bound against its schema)."""
    if op.composite is not None:
        if op.name in NAMED_COMPOSITES and state.grad_enabled:
            return _named_composite(op, args)
        return op.composite(*args)
    tensors = _tensors_of(op, args)
    st = state
    # a mutating op first (a precomputed flag), so every other op pays one attribute test
    if op.schema.is_mutable and tensors and tensors[0]._is_inference and not st.inference_mode:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")
    if st.grad_enabled and AUTOGRAD not in st.excluded:
        for t in tensors:
            if t.requires_grad:
                return op.kernels[AUTOGRAD](op, args)
        if op.schema.is_mutable and tensors and tensors[0]._view_no_grad:
            return op.kernels[AUTOGRAD](op, args)  # to raise torch's no_grad-view error
    return dispatch_below_autograd(op, args, tensors)


def dispatch_below_autograd(op, args: tuple, tensors=None):
    if tensors is None:
        tensors = _tensors_of(op, args)
    st = state
    if PYTHON not in st.excluded:
        if st.modes:
            mode = st.modes.pop()  # the mode runs with itself popped, as in torch
            try:
                types = tuple({type(t) for t in tensors})
                return mode.__torch_dispatch__(op, types, *op.split_args(args))
            finally:
                st.modes.append(mode)
        for t in tensors:
            if t._has_torch_dispatch:
                types = tuple({type(t) for t in tensors if t._has_torch_dispatch})
                return type(t).__torch_dispatch__(op, types, *op.split_args(args))
    key = backend_key(op, args, tensors)
    kernel = op.kernels.get(key)
    if kernel is None:
        raise NotImplementedError(
            f"Could not run '{op}' with arguments from the '{key.name}' backend: no kernel is "
            f"registered for it (registered: {sorted(k.name for k in op.kernels)})."
        )
    if st.inference_mode:
        return _mark_inference(kernel(*args))
    return kernel(*args)


def _mark_inference(out):
    """Outputs of an op run in inference mode are inference tensors."""
    for t in out if isinstance(out, (tuple, list)) else (out,):
        if hasattr(t, "_is_inference"):
            t._is_inference = True
    return out


def backend_key(op, args, tensors) -> DispatchKey:
    """The backend key from the tensors' common device (0-dim cpu tensors may join any)."""
    dev = None
    for t in tensors:
        d = t._device
        if dev is None or dev == d:
            dev = d
        elif t.ndim == 0 and d.type == "cpu":
            continue
        elif dev.type == "cpu" and _all_zero_dim_cpu(tensors, dev):
            dev = d
        else:
            raise RuntimeError(
                f"{op}: Expected all tensors to be on the same device, but found at least two "
                f"devices, {dev} and {d}!"
            )
    if dev is None:
        idx = op.device_arg_index
        dev = args[idx] if idx is not None else None
        if dev is None:
            from ._device import get_default_device

            return BACKEND_KEYS[get_default_device().type]
        return BACKEND_KEYS[getattr(dev, "type", str(dev).split(":")[0])]
    return BACKEND_KEYS[dev.type]


def _all_zero_dim_cpu(tensors, dev) -> bool:
    return all(t.ndim == 0 for t in tensors if t._device == dev)


# --------------------------------------------------------------------------- modes


class TorchDispatchMode:
    """Base class of Python-key modes (``make_fx``'s tracer, ``FakeTensorMode``).

    While active (``with mode:``), every op that reaches the Python key calls
    ``mode.__torch_dispatch__(func, types, args, kwargs)``; the mode is popped while its handler
    runs, so ``func(*args)`` inside the handler continues to the next mode or the backend.
    """

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        state.modes.append(self)
        return self

    def __exit__(self, *exc):
        popped = state.modes.pop()
        assert popped is self, "dispatch modes exited out of order"


def active_modes() -> tuple:
    return tuple(state.modes)
