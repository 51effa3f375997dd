"""``mtc.Tensor``: a numpy array plus autograd metadata (``torch/_tensor.py``).

A tensor holds

* ``_data``   — a numpy array (for ``meta`` and fake tensors, ``meta_storage``: an array view
  with the right shape, dtype and strides over a single element, never read);
* ``_device`` — where it "lives" (selects the backend dispatch key);
* autograd state — ``requires_grad``, ``grad``, ``grad_fn`` (the node that made it),
  ``_output_nr`` (which output of that node), a version counter shared with its views.

Views share memory through numpy views (``x.view``, ``x.t()``, ``x[1:]`` alias ``x``), so an
in-place write through a view is seen by its base, as in torch.

Nearly every method (``x.cos()``, ``x.sum(dim)``, ``x + y``) is generated from the op table and
attached by ``_api.py``; this file holds what is not an op: properties, conversion, printing,
``backward``.  The autograd state (``requires_grad``, ``grad``, ``grad_fn``, the version
counter, ``detach``) is the base class ``TensorAutogradState`` in ``_tensor_autograd.py``.
"""

from __future__ import annotations

import weakref

import numpy as np

from . import _dtype
from ._device import CPU, META, as_device
from ._dtype import from_numpy_dtype
from ._size import Size
from ._tensor_autograd import TensorAutogradState

# device type -> a function called with the array of every new tensor on that device
# (``_device._register_device_module`` installs the device module's ``_track_storage``)
_STORAGE_HOOKS: dict = {}


class Tensor(TensorAutogradState):
    # class-level defaults keep tensor creation cheap: instances set only what differs
    _sym_shape = None  # symbolic sizes of a meta/fake tensor under dynamic shapes
    _requires_grad = False
    _grad = None
    _grad_fn = None
    _output_nr = 0
    _base = None
    _vc = None
    # a view records how to remake it from its base (``_view_chain``: ``((op, rest_args), ...)``,
    # torch's ``view_fn``) and the shared version it last saw (``_view_version``): after any
    # in-place write to the base or a sibling view, its ``grad_fn`` is regenerated from the
    # base's (torch's ``DifferentiableViewMeta::attr_version``).  ``_view_no_grad``: made in
    # no_grad mode from a tensor that requires grad (writing it with grad on is an error;
    # ``"nested"`` for a view of such a view, made with grad mode on).
    _view_chain = None
    # (op name, output index) of an output of unbind/split, made with grad mode on: writing it
    # in place is torch's error (``CreationMeta::MULTI_OUTPUT_NODE``); (None, 0) for its views
    _multi_output_view = None
    _view_version = 0
    _view_no_grad = False
    # a detach() (of a view) has no _base; ``_detached_from`` keeps ``(weakref to the base,
    # chain)`` anyway, so AOTAutograd can regenerate a compiled output that is one
    # (aot/functional_utils.py).  Weak: a kept ``loss.detach()`` must not keep loss's graph.
    _detached_from = None
    _retains_grad = False  # retain_grad() was called (torch's retains_grad hook)
    _grad_accumulator = None
    _has_torch_dispatch = False  # True on subclasses that define __torch_dispatch__
    _is_inference = False  # made under autograd.inference_mode (see grad_mode.py)
    __array_ufunc__ = None  # numpy defers to our reflected operators (np.float32(2) * t)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__torch_dispatch__" in cls.__dict__:
            cls._has_torch_dispatch = True

    def __init__(self, data=None, *sizes, device=None, requires_grad: bool = False):
        """``Tensor(ndarray)`` wraps an array; prefer ``mtc.tensor(data)``.  torch's legacy
        forms work too, always in the default dtype: ``Tensor([True, False])`` is
        ``tensor([1., 0.])``, ``Tensor(2, 3)`` a 2x3 tensor (zeros here; torch leaves the memory
        uninitialized), ``Tensor()`` an empty one."""
        default = _dtype.get_default_dtype().np
        if data is None:
            data = np.empty((0,), dtype=default)
        elif isinstance(data, (int, np.integer)) and not isinstance(data, bool):
            data = np.zeros((int(data),) + tuple(int(s) for s in sizes), dtype=default)
        elif sizes:
            raise TypeError(f"Tensor(): sizes must be ints, got {data!r} and {sizes!r}")
        elif isinstance(data, (list, tuple)):
            data = np.asarray(data, dtype=default)
        if not isinstance(data, np.ndarray):
            data = np.asarray(data)
        from_numpy_dtype(data.dtype)
        self._data = data
        self._device = as_device(device)
        hook = _STORAGE_HOOKS.get(self._device.type)
        if hook is not None:
            hook(data)
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, data: np.ndarray, device=CPU) -> Tensor:
        """Fast constructor used by kernels: no checks, no copies."""
        t = object.__new__(cls)
        t._data = data
        t._device = device
        if device is not CPU and _STORAGE_HOOKS and device is not None \
                and not cls._has_torch_dispatch:  # fake / wrapper tensors hold no memory
            hook = _STORAGE_HOOKS.get(device.type)
            if hook is not None:
                hook(data)  # a device allocator counting its memory (mtc.npu's GM)
        return t

    @classmethod
    def _make_meta(cls, shape, dtype) -> Tensor:
        t = cls._make(meta_storage(shape, dtype), META)
        if any(hasattr(s, "hint") for s in shape):  # symbolic sizes (dynamic shapes)
            t._sym_shape = tuple(shape)
        return t

    def _alias(self) -> Tensor:
        """A new tensor object viewing the same data and version counter (no history)."""
        t = type(self)._make(self._data.view(), self._device)
        t._vc = self._get_vc()
        t._base = self._base if self._base is not None else self
        return t

    def _set_view_of(self, parent: Tensor, op, rest: tuple) -> None:
        """Make ``self`` the view ``op(parent, *rest)``: same base, same version counter.

        ``detach`` makes a *non-differentiable* view (torch's
        ``make_variable_non_differentiable_view``): it shares the version counter but has no
        ``_base`` and no chain, so writing it never touches autograd history.
        """
        vc = parent._get_vc()
        self._vc = vc
        if parent._is_inference:  # a view (or detach) of an inference tensor is one too
            self._is_inference = True
        if op.name == "detach":
            base = parent._base if parent._base is not None else parent
            self._detached_from = (weakref.ref(base), (parent._view_chain or ()) + ((op, rest),))
            return
        # torch's ``propagate_creation_meta``: a view of an unbind/split output, or of a view
        # made in no_grad mode, inherits the rule (a view made in no_grad mode replaces it)
        if parent._multi_output_view is not None:
            self._multi_output_view = (None, 0)
        elif parent._view_no_grad:
            self._view_no_grad = "nested"
        base = parent._base
        if base is None:
            self._base, self._view_chain = parent, ((op, rest),)
        else:
            self._base = base
            self._view_chain = (parent._view_chain or ()) + ((op, rest),)
        self._view_version = vc[0]

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> Size:
        if self._sym_shape is not None:
            return Size(self._sym_shape)
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        shape = self._sym_shape if self._sym_shape is not None else self._data.shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype._FROM_NP[self._data.dtype]

    @property
    def device(self):
        return self._device

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    ndimension = dim

    def numel(self) -> int:
        if self._sym_shape is not None:
            n = 1
            for s in self._sym_shape:
                n = n * s
            return n
        return self._data.size

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim: int | None = None):
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    @property
    def is_floating_point_(self) -> bool:
        return self.dtype.is_floating_point

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Always False: mtc has no complex dtypes (torch's answer for every real tensor)."""
        return False

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    @property
    def is_npu(self) -> bool:
        return self._device.type == "npu"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def T(self) -> Tensor:  # noqa: N802 - torch's name
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self.transpose(-2, -1)

    # ------------------------------------------------------------------ autograd
    # (requires_grad, grad, grad_fn, is_leaf, detach, retain_grad ...: _tensor_autograd.py)
    def register_hook(self, hook):
        """``hook(grad) -> grad | None`` runs when this tensor's gradient is computed."""
        from .autograd.graph import gradient_edge

        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd.graph import removable_handle

        node, nr = gradient_edge(self)
        return removable_handle(node.pre_hooks.setdefault(nr, []), hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # ------------------------------------------------------------------ data access
    def _check_data(self, what: str) -> None:
        if self._device.type == "meta":
            raise NotImplementedError(f"Cannot call {what}() on a meta tensor: it has no data")

    def numpy(self, *, force: bool = False) -> np.ndarray:
        self._check_data("numpy")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def item(self):
        self._check_data("item")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        self._check_data("tolist")
        return self._data.tolist()

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is "
                               "ambiguous" if self._data.size else
                               "Boolean value of Tensor with no values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    __hash__ = object.__hash__

    def __reduce_ex__(self, proto):
        return (_rebuild, (self.detach()._data.copy(), str(self._device), self.requires_grad))

    def __repr__(self) -> str:
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if self.ndim == 0 and self._device.type != "meta":
            return self.item().__format__(spec)
        return repr(self)

    def data_ptr(self) -> int:
        return self._data.__array_interface__["data"][0]

    def untyped_storage_base(self):
        """The numpy array that owns this tensor's memory (for aliasing checks)."""
        a = self._data
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a

    @property
    def data(self) -> Tensor:
        """Same data, no history and — unlike ``detach()`` — its *own* version counter, so
        writes through ``.data`` are invisible to autograd's checks (torch's ``.data``)."""
        t = self.detach()
        t._vc = None
        return t

    def _is_view(self) -> bool:
        return self._base is not None

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._device = value._device


def meta_storage(shape, dtype, strides=None) -> np.ndarray:
    """Storage for a tensor without data (meta and fake tensors).

    A read-only array with the requested shape, dtype and strides (in elements; contiguous by
    default) laid over a single real element: metadata and *view* kernels work on it, and it
    costs one element of memory.  Its values must never be read (the Meta key guarantees that
    only view kernels ever see it).
    """
    shape = tuple(int(getattr(s, "hint", s)) for s in shape)  # a SymInt's hint: no guard
    if strides is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(strides))
    base = np.zeros(1, dtype=dtype.np)
    return np.lib.stride_tricks.as_strided(
        base, shape, tuple(s * dtype.itemsize for s in strides), writeable=False)


def _rebuild(data, device, requires_grad):
    t = Tensor(data, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim; torch's error when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim
