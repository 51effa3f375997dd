"""The op table: every operator declared once, with all of its rules side by side.

Mirrors ``native_functions.yaml`` + ``derivatives.yaml`` + ``torch/_meta_registrations.py`` +
``torch/_decomp``, folded into one declaration per op (the JAX ``lax.py`` habit)::

    defop("cos(Tensor self) -> Tensor", POINTWISE, promotion=INT_TO_FLOAT,
          kernel=np.cos,                                         # eager numpy kernel
          derivatives={"self": lambda grad, self: grad * -self.sin()})

From a declaration the table registers, on the op's ``OpOverload``:

========================  ===============================================================
dispatch key              kernel
========================  ===============================================================
CompositeImplicitAutograd the ``decomposition`` (composite ops only — they need nothing else)
Autograd                  ``autograd.graph.autograd_kernel``, reading ``derivatives``
CPU, NPU                  the numpy ``kernel`` wrapped by ``numpy_kernel`` (dtype promotion,
                          clear errors, wrapping arrays as tensors, view bookkeeping); NPU
                          starts with the same numpy kernel — the simulated device computes
                          on the host — and a ``Library("aten", "IMPL")`` may replace it
Meta                      the ``meta`` rule: output shapes and dtypes from input metadata
========================  ===============================================================

Pointwise ops get their meta rule from their category (broadcast + type promotion); other
categories must declare one.  A pointwise op that declares its own (to check more than shapes,
like ``where``'s bool condition) has it run by the eager kernel too.
``tests/test_op_table.py`` fails if an op lacks a rule.
Meta rules receive the bound arguments (tensors only for their ``shape``/``dtype``) and return a
``TensorMeta`` (or a tuple of them); they raise torch's errors for bad input, and eager mode runs
them too (as torch's structured kernels do), so eager and traced code fail the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import _dtype
from .._device import META, as_device
from .._dispatch import AUTOGRAD, DispatchKey
from .._dispatch import state as _dispatch_state
from .._tensor import Tensor
from ._ops import OpOverload, register_overload
from ._prims_common import (  # noqa: F401 - re-exported: the op modules import them from here
    ALWAYS_BOOL,
    DEFAULT,
    INT_TO_FLOAT,
    NO_PROMOTION,
    MetaError,
    TensorMeta,
    broadcast_shapes,
    check_int_fits,
    elementwise_dtypes,
    promotion_kind,
    reduced_shape,
    reduction_dims,
    wrap_dim,
)

POINTWISE = "pointwise"
REDUCTION = "reduction"
VIEW = "view"
MATMUL = "matmul"
CREATION = "creation"
COMPOSITE = "composite"
INDEXING = "indexing"  # gathers/scatters: embedding, slice/select backward
RANDOM = "random"
CATEGORIES = (POINTWISE, REDUCTION, VIEW, MATMUL, CREATION, COMPOSITE, INDEXING, RANDOM)

@dataclass
class OpDef:
    """One row of the op table."""

    overload: OpOverload
    category: str
    kernel: Callable | None = None
    meta: Callable | None = None
    derivatives: dict | None = None
    decomposition: Callable | None = None
    promotion: str | Callable | None = None
    differentiable: bool = True
    functional: OpOverload | None = None  # for in-place variants: the out-of-place op
    inplace: OpOverload | None = None  # for out-of-place ops: the in-place variant
    notes: str = ""
    tags: set = field(default_factory=set)
    nondifferentiable_outputs: tuple = ()  # output indices without grad_fn (total_weight)

    @property
    def name(self) -> str:
        return self.overload.schema.qualified_name


OP_TABLE: dict[str, OpDef] = {}  # "cos", "add.Tensor", ... -> OpDef


# --------------------------------------------------------------------------- meta rules
# (the helpers they use: ``_prims_common.py``)


def pointwise_meta(opdef: OpDef):
    idx = opdef.overload.schema.tensor_arg_indices
    promotion = opdef.promotion

    def meta(*args):
        operands = [args[i] for i in idx]
        # a Python number is a 0-d operand (torch wraps it): broadcasting against it still
        # asks each size whether it is 1 (a guard on a symbolic size not known >= 2)
        shapes = [tuple(a.shape) if isinstance(a, Tensor) else () for a in operands
                  if a is not None and not isinstance(a, (str, list, tuple))]
        _, result = elementwise_dtypes(promotion_kind(promotion, args), *operands)
        return TensorMeta(broadcast_shapes(*shapes), result)

    meta.generic = True  # the eager kernel's own promotion makes running it unnecessary
    return meta


def _prefix_error(op, e: Exception):
    msg = str(e.args[0]) if e.args else str(e)
    if isinstance(e, KeyError):
        return RuntimeError(f"{op.name}: {msg}")
    if msg.startswith(f"{op.name}:"):
        return e
    err = type(e)(f"{op.name}: {msg}")
    return err


def run_meta(opdef: OpDef, args: tuple):
    try:
        return opdef.meta(*args)
    except (MetaError, IndexError, TypeError, ValueError) as e:
        raise _prefix_error(opdef.overload, e) from None


# --------------------------------------------------------------------------- kernels


class InternalAssertError(AssertionError):
    pass


# A Python int passed where the schema takes a Scalar (or a number for a Tensor) becomes a C++
# ``int64_t`` in torch: outside that range torch raises ``OverflowError: int too big to convert``
# (``ones(2) + 10**40``; numpy would make it ``inf``).  Inside it, the number is cast to the
# op's integer dtype with C++'s wrap-around (``int32 + 2**40`` adds 0, as in torch; numpy would
# raise).
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _scalar_indices(schema) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(schema.arguments)
                 if a.type.base in ("Scalar", "Tensor") and not a.type.is_list)


def check_int_scalars(args, indices) -> None:
    for i in indices:
        if i < len(args) and type(args[i]) is int and \
                not _INT64_MIN <= args[i] <= _INT64_MAX:
            raise OverflowError("int too big to convert")


def numpy_kernel(opdef: OpDef):
    """Wrap an op-table numpy kernel as a backend kernel over tensors."""
    op = opdef.overload
    schema = op.schema
    t_idx = schema.tensor_arg_indices
    l_idx = schema.tensor_list_arg_indices
    kernel = opdef.kernel
    nrets = len(schema.returns)
    is_view = opdef.category == VIEW
    s_idx = _scalar_indices(schema)

    if opdef.category == POINTWISE and opdef.promotion is not None:
        promotion = opdef.promotion
        declared_meta = not getattr(opdef.meta, "generic", False)

        def pointwise_kernel(*args):
            check_int_scalars(args, s_idx)
            if declared_meta:
                run_meta(opdef, args)
            compute, result = elementwise_dtypes(promotion_kind(promotion, args),
                                                 *[args[i] for i in t_idx])
            a = list(args)
            device = None
            for i in t_idx:
                v = a[i]
                if isinstance(v, Tensor):
                    if device is None or device.type == "cpu":  # 0-dim cpu tensors join others
                        device = v._device
                    d = v._data
                    a[i] = d if d.dtype == compute.np else d.astype(compute.np)
                elif type(v) is int and compute.category == _dtype.INTEGRAL:
                    a[i] = _dtype.wrap_int(v, compute.np)
            try:
                with np.errstate(all="ignore"):
                    out = kernel(*a)
            except (ValueError, MetaError) as e:  # a kernel's own check, or numpy's
                run_meta(opdef, args)  # raises torch's broadcasting error
                raise _prefix_error(op, e) from None
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            if out.dtype != result.np:
                out = out.astype(result.np)
            if not out.flags.c_contiguous:  # the meta's strides (see ``_wrap``)
                out = np.ascontiguousarray(out)
            return Tensor._make(out, device)

        return pointwise_kernel

    def kernel_with_meta(*args):
        check_int_scalars(args, s_idx)
        meta = run_meta(opdef, args)
        a = list(args)
        device = None
        for i in t_idx:
            v = a[i]
            if isinstance(v, Tensor):
                if device is None or device.type == "cpu":
                    device = v._device
                a[i] = v._data
        for i in l_idx:
            present = [t for t in a[i] if t is not None]  # ``Tensor?[]`` entries may be None
            if present and (device is None or device.type == "cpu"):
                device = present[0]._device
            a[i] = [None if t is None else t._data for t in a[i]]
        dev_i = op.device_arg_index
        if dev_i is not None and (device is None or args[dev_i] is not None):
            device = as_device(args[dev_i])  # creation ops, and _to_copy(device=...)
        with np.errstate(all="ignore"):
            out = kernel(*a)
        if nrets == 1:
            res = _wrap(out, meta, device, op, is_view)
            if is_view:
                res._set_view_of(args[0], op, tuple(args[1:]))
                if not _dispatch_state.grad_enabled and args[0]._requires_grad and (
                        op.name != "detach"):  # (a detach is no autograd view)
                    res._view_no_grad = True
            return res
        return tuple(_wrap(o, m, device, op) for o, m in zip(out, meta))

    return kernel_with_meta


def _wrap(out, meta: TensorMeta, device, op, is_view: bool = False) -> Tensor:
    """The kernel's array as a Tensor of the meta's dtype — and, unless the op is a view, of
    the meta's strides: contiguous.  A numpy ufunc keeps its input's layout (``x.t().cos()``
    comes out transposed), while the Meta kernel, and so every fake tensor a graph is traced
    with, says contiguous; a graph traced so (``reshape`` of it recorded as a ``view``) would
    fail on the real strides."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != meta.dtype.np:
        out = out.astype(meta.dtype.np)
    if not is_view and not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    if out.shape != tuple(meta.shape):
        raise InternalAssertError(
            f"{op}: the numpy kernel returned shape {out.shape} but the meta rule says "
            f"{tuple(meta.shape)} — the op table disagrees with itself")
    return Tensor._make(out, device)


def meta_kernel(opdef: OpDef):
    """The Meta-key kernel: run the meta rule, return data-less tensors.

    View ops also run their numpy kernel on the data-less storage: a view never reads memory,
    and that gives the output the exact strides a real run would have.
    """
    view_kernel = opdef.kernel if opdef.category == VIEW else None
    t_idx = opdef.overload.schema.tensor_arg_indices
    s_idx = _scalar_indices(opdef.overload.schema)

    def kernel(*args):
        check_int_scalars(args, s_idx)  # as eager: traced code fails where eager code does
        m = run_meta(opdef, args)
        if isinstance(m, TensorMeta):
            if view_kernel is not None:
                a = [_hints(v) for v in args]  # symbolic sizes: the storage uses the hints
                for i in t_idx:
                    if isinstance(a[i], Tensor):
                        a[i] = a[i]._data
                out = Tensor._make(np.asarray(view_kernel(*a)), META)
                if any(hasattr(s, "hint") for s in m.shape):
                    out._sym_shape = tuple(m.shape)
                out._set_view_of(args[0], opdef.overload, tuple(args[1:]))
                if not _dispatch_state.grad_enabled and args[0]._requires_grad and (
                        opdef.overload.name != "detach"):  # (a detach is no autograd view)
                    out._view_no_grad = True
                return out
            return Tensor._make_meta(m.shape, m.dtype)
        return tuple(Tensor._make_meta(x.shape, x.dtype) for x in m)

    return kernel


def _hints(v):
    """Replace symbolic sizes by their hints (numpy needs plain ints)."""
    if hasattr(v, "hint") and not isinstance(v, Tensor):
        return v.hint
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_hints(x) for x in v)
    return v


def check_writable(self: Tensor) -> None:
    """torch's ``assert_no_internal_overlap``: an expanded view cannot be written — a read-only
    numpy broadcast, or any array with a stride-0 dim of size > 1 (torch's ``has_internal_overlap``
    rule; a compiled kernel's expanded output is such an array)."""
    a = self._data
    if not a.flags.writeable or (a.size > 1 and any(st == 0 and n > 1 for st, n in
                                                   zip(a.strides, a.shape))):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")


def inplace_kernel(opdef: OpDef, key: DispatchKey):
    """``x.add_(y)``: compute out of place, check the result fits ``x``, write it into ``x``."""
    functional = opdef.functional

    def kernel(*args):
        self = args[0]
        out = functional.kernels[key](*args)
        if tuple(out.shape) != tuple(self.shape):
            raise RuntimeError(
                f"{opdef.overload.name}: output with shape {list(self.shape)} doesn't match the "
                f"broadcast shape {list(out.shape)}")
        if out.dtype.category > self.dtype.category:
            raise RuntimeError(
                f"{opdef.overload.name}: result type {_dtype.scalar_type_name(out.dtype)} "
                f"can't be cast to the desired output type "
                f"{_dtype.scalar_type_name(self.dtype)}")
        if key != DispatchKey.Meta:
            check_writable(self)
            np.copyto(self._data, out._data, casting="unsafe")
        self._bump_version()
        return self

    return kernel


# --------------------------------------------------------------------------- declaring


def defop(schema: str, category: str, *, kernel=None, meta=None, derivatives=None,
          decomposition=None, promotion=None, differentiable=True, inplace=False,
          namespace: str = "aten", notes: str = "",
          nondifferentiable_outputs: tuple = ()) -> OpOverload:
    """Declare an op; register its kernels; return its ``OpOverload``."""
    from ..autograd.graph import autograd_kernel

    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}")
    op = register_overload(namespace, schema)
    d = OpDef(op, category, kernel, meta, derivatives, decomposition, promotion,
              differentiable, notes=notes, nondifferentiable_outputs=nondifferentiable_outputs)
    op.opdef = d
    OP_TABLE[d.name] = d
    if category == COMPOSITE:
        op.composite = decomposition
        return op
    if category == POINTWISE and meta is None:
        d.meta = pointwise_meta(d)
    if kernel is not None:
        k = numpy_kernel(d)
        op.kernels[DispatchKey.CPU] = k
        op.kernels[DispatchKey.NPU] = k
    if d.meta is not None:
        op.kernels[DispatchKey.Meta] = meta_kernel(d)
    op.kernels[AUTOGRAD] = autograd_kernel
    if inplace:
        _define_inplace(d)
    return op


def _define_inplace(d: OpDef) -> OpOverload:
    """Derive ``name_`` (``Tensor(a!) self ... -> Tensor(a!)``) from an out-of-place op."""
    from ..autograd.graph import autograd_kernel

    s = d.overload.schema
    text = str(s)
    head, _, rest = text.partition("(")
    name, _, ov = head.partition(".")
    args, _, _ret = rest.rpartition(") -> ")
    args = args.replace("Tensor self", "Tensor(a!) self", 1)
    op = register_overload(d.overload.namespace,
                           f"{name}_{'.' + ov if ov else ''}({args}) -> Tensor(a!)")
    ip = OpDef(op, d.category, None, d.meta, d.derivatives, None, d.promotion,
               d.differentiable, functional=d.overload)
    op.opdef = ip
    d.inplace = op
    OP_TABLE[ip.name] = ip
    for key in (DispatchKey.CPU, DispatchKey.NPU, DispatchKey.Meta):
        op.kernels[key] = inplace_kernel(ip, key)
    op.kernels[AUTOGRAD] = autograd_kernel
    return op
