"""Fake tensors: shape, dtype, device and strides — no data (``torch/_subclasses/fake_tensor.py``).

A ``FakeTensor`` answers every metadata question a real tensor does, and every op on it is
computed by the op table's *meta rules* (the Meta dispatch key), so tracing a model on fake
tensors costs no memory and no arithmetic.  Its storage is a numpy array *view* over a single
element with the real strides: view ops (``transpose``, ``expand``, slicing) run their numpy
kernels on it and get exact strides without ever reading memory.

Anything that needs values — ``item()``, ``bool()``, ``numpy()``, ``tolist()``, printing the
values — raises ``DataDependentOutputException`` naming the op that produced the tensor:
control flow on tensor values cannot be traced with shapes alone.

``FakeTensorMode`` is a ``TorchDispatchMode``: inside ``with FakeTensorMode():`` every op on
fake tensors (and every factory call) returns fake tensors.  ``mode.from_tensor(t)`` makes the
fake twin of a real tensor (memoized, so aliasing inputs stay aliased).
"""

from __future__ import annotations

from .._device import as_device
from .._dispatch import DispatchKey, TorchDispatchMode
from .._tensor import Tensor, meta_storage


class DataDependentOutputException(RuntimeError):
    """A fake tensor's *values* were needed (``if x.sum() > 0:``, ``x.item()``)."""


class DynamicOutputShapeException(RuntimeError):
    """An op whose output *size* depends on input values (``nonzero``, ``x[mask]``,
    ``masked_select``) ran on fake tensors: its meta rule cannot know the size."""


class FakeTensor(Tensor):
    fake_mode: FakeTensorMode | None = None
    _source = "an input"

    @classmethod
    def _from_storage(cls, data, device, mode, source: str) -> FakeTensor:
        t = cls._make(data, device)
        t.fake_mode = mode
        t._source = source
        return t

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        mode = next((a.fake_mode for a in _flat_tensors(args, kwargs or {})
                     if isinstance(a, FakeTensor)), None)
        if mode is None:
            mode = FakeTensorMode()
        return mode.__torch_dispatch__(func, types, args, kwargs)

    # ---------------------------------------------------------------- no data
    def _no_data(self, what: str):
        raise DataDependentOutputException(
            f"{what}() needs the values of a FakeTensor produced by {self._source} "
            f"(shape {list(self.shape)}, {self.dtype.name}), but fake tensors carry only "
            "metadata. Data-dependent control flow cannot be traced with fake tensors.")

    def numpy(self, *, force=False):
        self._no_data("numpy")

    def item(self):
        self._no_data("item")

    def tolist(self):
        self._no_data("tolist")

    def __bool__(self):
        self._no_data("__bool__")

    def __float__(self):
        self._no_data("__float__")

    def __int__(self):
        self._no_data("__int__")

    def __index__(self):
        self._no_data("__index__")

    def __array__(self, dtype=None, copy=None):
        self._no_data("__array__")

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        extra = ", requires_grad=True" if self.requires_grad and self.grad_fn is None else ""
        if self.grad_fn is not None:
            extra = f", grad_fn=<{self.grad_fn.name()}>"
        return (f"FakeTensor(..., size={tuple(self.shape)}, dtype={self.dtype!r}, "
                f"device='{self.device}'{extra})")

    __str__ = __repr__


def _flat_tensors(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


class FakeTensorMode(TorchDispatchMode):
    def __init__(self, *, allow_non_fake_inputs: bool = False):
        self.allow_non_fake_inputs = allow_non_fake_inputs
        self._memo: dict[int, tuple] = {}

    def from_tensor(self, t: Tensor, sym_sizes: dict | None = None) -> FakeTensor:
        """The fake twin of ``t``: same shape, dtype, strides, device and requires_grad.

        ``sym_sizes`` maps dims to symbolic sizes (``SymInt``) for dynamic shapes."""
        if isinstance(t, FakeTensor):
            return t
        hit = self._memo.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        strides = tuple(s // t._data.itemsize for s in t._data.strides)
        fake = FakeTensor._from_storage(meta_storage(t.shape, t.dtype, strides), t._device,
                                        self, "an input")
        if sym_sizes:
            fake._sym_shape = tuple(sym_sizes.get(d, s) for d, s in enumerate(t.shape))
        if t.requires_grad:
            fake._requires_grad = True
        self._memo[id(t)] = (t, fake)
        return fake

    def _to_fake(self, a, func):
        if isinstance(a, FakeTensor) or not isinstance(a, Tensor):
            return a
        if self.allow_non_fake_inputs or a.ndim == 0:
            return self.from_tensor(a)
        raise RuntimeError(
            f"{func}: got a real tensor argument (shape {list(a.shape)}) inside FakeTensorMode. "
            "Convert it with mode.from_tensor(t) first, or create the mode with "
            "allow_non_fake_inputs=True.")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        conv = lambda a: [self._to_fake(x, func) for x in a] if isinstance(a, list) \
            else self._to_fake(a, func)  # noqa: E731
        args = tuple(conv(a) for a in args)
        kwargs = {k: conv(v) for k, v in kwargs.items()}
        meta = func.kernels.get(DispatchKey.Meta)
        if meta is None:
            raise NotImplementedError(
                f"{func} has no meta rule, so it cannot run on fake tensors; register one with "
                f"Library.impl('{func.name}', fn, 'Meta')")
        bound = func.bind(*args, **kwargs)
        out = meta(*bound)
        device = _common_device(func, bound)
        return _wrap_outputs(out, bound, device, self, str(func))


def _common_device(func, bound):
    dev = None
    for t in _flat_tensors(bound, {}):
        if dev is None or dev.type == "cpu":
            dev = t._device
    i = func.device_arg_index
    if dev is None or (i is not None and bound[i] is not None):
        # as the eager kernels do: creation ops, and _to_copy(x, device=...) moving x
        dev = as_device(bound[i] if i is not None else None)
    return dev


def _wrap_outputs(out, bound, device, mode, source):
    if isinstance(out, (tuple, list)):
        return type(out)(_wrap_outputs(o, bound, device, mode, source) for o in out)
    if not isinstance(out, Tensor) or isinstance(out, FakeTensor):
        return out  # in-place ops return their (already fake) self
    fake = FakeTensor._from_storage(out._data, device, mode, source)
    if out._sym_shape is not None:
        fake._sym_shape = out._sym_shape
    if out._vc is not None:  # a view: the base, version counter and chain of the meta view
        fake._vc, fake._base = out._vc, out._base
        fake._view_chain, fake._view_version = out._view_chain, out._view_version
        fake._view_no_grad = out._view_no_grad
        # a view of an unbind/split/chunk output keeps its rule, as in eager (_set_view_of)
        fake._multi_output_view = out._multi_output_view
        fake._detached_from = out._detached_from
    return fake
