"""Lowerings: each aten op → loop IR (``torch/_inductor/lowering.py``).

``lowerings`` maps an ``OpOverload`` to a function of the node's arguments, with a
``TensorBox`` in every tensor position, returning a ``TensorBox``.  The table is filled in
three ways, in this order of preference:

1. **by hand** for ops whose loop body needs thought: views (index arithmetic, in
   ``view_lowerings.py``), reductions, matmul (an extern kernel), ``full``;
2. **by category** for every other ``POINTWISE`` op of the op table: the body loads each operand
   (broadcast by index arithmetic), casts it to the op's compute dtype (the op's own promotion
   rule), applies ``ops.<name>`` — the name of the op's numpy ufunc, or ``inductor_name``
   declared on the op — or, for a kernel that is not a ufunc, ``ops.kernel(...)``, which calls the
   op's own numpy kernel on whole tiles (any elementwise numpy function is correct on a tile);
3. anything else becomes a **fallback**: an ``ExternKernel`` calling the op's eager kernel, with
   the reason recorded (``V.graph.fallbacks``) — never an error.

So an op added to the op table later lowers without any work here.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from ..ops.table import (
    OP_TABLE,
    POINTWISE,
    broadcast_shapes,
    elementwise_dtypes,
    promotion_kind,
    reduction_dims,
)
from .ir import (
    Affine,
    ExternKernel,
    FlexibleLayout,
    Pointwise,
    Reduction,
    TensorBox,
    strided_view,
)
from .sizevars import as_sizes, is_symbolic
from .virtualized import V, ops

lowerings: dict = {}

# op names whose eager kernel is not a ufunc but whose body is one ops.* call (torch's names)
_OPS_NAMES = {"add": "add", "sub": "subtract", "div": "true_divide", "neg": "negative",
              "reciprocal": "reciprocal", "abs": "absolute", "clone": "identity",
              "_to_copy": "identity"}
# ops whose eager kernel is a small numpy expression: the same expression in ops.* calls
_BODIES = {"relu": lambda a: ops.maximum(a, 0),
           "sigmoid": lambda a: ops.true_divide(1, ops.add(1, ops.exp(ops.negative(a)))),
           "rsqrt": lambda a: ops.true_divide(1, ops.sqrt(a))}


def _erf_float32(a):
    """``erf`` in float32 ops inside the kernel: the one definition eager mode runs too
    (``ops/_erf.py``'s ``tanh(x g(x²))``), 15 passes over a cache-resident tile, equal to eager
    bit for bit, instead of a call out to the eager kernel."""
    from ..ops._erf import erf_float32_body

    return erf_float32_body(ops, a)


def _gelu_float32(a):
    """``gelu`` in float32 ops (``ops/_erf.py``'s ``gelu_float32_body``, which eager mode runs
    too): 18 passes, the ``1/sqrt 2`` folded into the polynomial (the CPU code generator keeps
    ``aten::gelu`` whole for it: ``decomposition.KEPT_WHOLE``)."""
    from ..ops._erf import gelu_float32_body

    return gelu_float32_body(ops, a)


# bodies that hold only for some compute dtypes (others call the eager kernel on the tile)
_DTYPE_BODIES = {("erf", "float32"): _erf_float32, ("gelu", "float32"): _gelu_float32}


def register_lowering(*ops_):
    def register(fn):
        for op in ops_:
            lowerings[op] = fn
        return fn
    return register


def _aten(name: str, overload: str = "default"):
    from ..ops._ops import ops as namespace

    return getattr(getattr(namespace.aten, name), overload)


def _origins(*boxes) -> set:
    out = {V.graph.current_node} if V.graph and V.graph.current_node is not None else set()
    for b in boxes:
        if isinstance(b, TensorBox) and b.is_unrealized():
            out |= set(b.origins)
    return out


# --------------------------------------------------------------------------- pointwise


def broadcast_loader(box, shape):
    """A loader over ``shape`` for a tensor broadcast to it (index arithmetic)."""
    if not isinstance(box, TensorBox):
        return lambda index: box
    size = box.get_size()
    lead = len(shape) - len(size)
    inner = box.make_loader()
    keep = [(lead + k, s != 1 or shape[lead + k] == 1) for k, s in enumerate(size)]

    def loader(index):
        return inner([index[j] if full else Affine(0) for j, full in keep])
    return loader


def make_pointwise(fn, operands, dtype, shape=None) -> TensorBox:
    """A ``Pointwise`` applying ``fn`` to the loaded values of ``operands``."""
    if shape is None:
        shape = broadcast_shapes(*[tuple(o.get_size()) for o in operands
                                   if isinstance(o, TensorBox)])
    loaders = [broadcast_loader(o, shape) for o in operands]
    return TensorBox.create(Pointwise(dtype, lambda index: fn(*[ld(index) for ld in loaders]),
                                      tuple(shape), _origins(*operands)))


def reduction_index(ndim: int, kept, index, dims, rindex) -> list:
    """The input's full index from a reduction's kept-dim variables (``index``, for ``kept``)
    and reduced-dim variables (``rindex``, for ``dims``)."""
    full = [None] * ndim
    for d, i in zip(kept, index):
        full[d] = i
    for d, r in zip(dims, rindex):
        full[d] = r
    return full


def _cast(value, have, want):
    return value if have is want else ops.to_dtype(value, want)


def _ops_name(opdef):
    name = getattr(opdef, "inductor_name", None) or _OPS_NAMES.get(opdef.overload.name)
    if name is None and isinstance(opdef.kernel, np.ufunc):
        name = opdef.kernel.__name__
    return name


def pointwise_lowering(opdef):
    """The category rule: one lowering for every pointwise op of the op table."""
    op = opdef.overload
    t_idx = set(op.schema.tensor_arg_indices)
    name = _ops_name(opdef)

    def lower(*args):
        custom = _BODIES.get(op.name)
        tensors = [args[i] for i in sorted(t_idx) if isinstance(args[i], TensorBox)]
        if opdef.promotion is not None:
            typed = [2 if is_symbolic(a) else a for a in args]  # a size is an int scalar
            compute, result = elementwise_dtypes(promotion_kind(opdef.promotion, typed),
                                                 *[typed[i] for i in sorted(t_idx)
                                                   if typed[i] is not None])
        else:
            compute = result = V.graph.current_meta().dtype
        if getattr(V.graph, "device_type", "cpu") == "cpu":  # the npu has Erf as one instruction
            custom = _DTYPE_BODIES.get((op.name, compute.name), custom)
        extra = [(i, a) for i, a in enumerate(args) if i not in t_idx]
        # bool operands go through the op's own kernel: it raises torch's errors (``-`` on
        # bool) where the bare ufunc would raise numpy's
        simple = (name is not None or custom is not None) and compute is not _dtype.bool_ \
            and all(_is_default(op, i, a) for i, a in extra)
        if op.name == "_to_copy":
            compute = result = V.graph.current_meta().dtype
            simple = True
        positions = [i for i in range(len(args)) if i in t_idx and args[i] is not None]

        def body(*values):
            vals = [_cast(v, args[i].dtype, compute) if isinstance(args[i], TensorBox) else v
                    for i, v in zip(positions, values)]
            if simple:
                out = custom(*vals) if custom is not None else getattr(ops, name)(*vals)
            else:
                full = list(args)
                for i, v in zip(positions, vals):
                    full[i] = v
                out = ops.kernel(op, compute, *full)
            return _cast(out, compute, result)

        return make_pointwise(body, [args[i] for i in positions], result,
                              as_sizes(V.graph.current_meta().shape) if not tensors else None)
    return lower


@register_lowering(_aten("where"))
def where(condition, a, b):
    """``where``: the condition loads as it is (bool: the meta rule checked it) and takes no
    part in promotion; the branches are cast to the result dtype, then ``ops.where`` — the
    category rule would cast the condition too and call the eager kernel on every tile."""
    result = V.graph.current_meta().dtype

    def body(c, x, y):
        x, y = [_cast(v, o.dtype, result) if isinstance(o, TensorBox) else v
                for v, o in ((x, a), (y, b))]
        return ops.where(c, x, y)
    tensors = [o for o in (condition, a, b) if isinstance(o, TensorBox)]
    return make_pointwise(body, [condition, a, b], result,
                          None if tensors else V.graph.current_meta().shape)


def _is_default(op, i, value) -> bool:
    arg = op.schema.arguments[i]
    return arg.has_default and (value == arg.default or value is arg.default)


# --------------------------------------------------------------------------- reductions


_UPCAST_REDUCTIONS = ("sum", "prod")


def make_reduction(x, dims, keepdim, reduction_type, dtype) -> TensorBox:
    size = x.get_size()
    dims = tuple(sorted(dims))
    kept = [d for d in range(len(size)) if d not in dims]
    ranges = tuple(size[d] for d in kept)
    rranges = tuple(size[d] for d in dims)
    loader = x.make_loader()
    src = x.dtype
    # torch accumulates half-precision sums and products in float32, casting at the end
    acc = _dtype.float32 if (dtype is _dtype.float16
                             and reduction_type in _UPCAST_REDUCTIONS) else dtype

    def inner_fn(index, rindex):
        return _cast(loader(reduction_index(len(size), kept, index, dims, rindex)), src, acc)

    if not dims:  # nothing to reduce: a cast
        out = make_pointwise(lambda v: _cast(v, src, dtype), [x], dtype)
    elif all(isinstance(s, int) and s == 1 for s in rranges):
        # one element to reduce: that element (torch's ``Reduction.create`` makes such a
        # reduction pointwise too) — it fuses with its users, no second pass
        ones = [Affine(0)] * len(dims)
        out = TensorBox.create(Pointwise(acc, lambda index: inner_fn(index, ones), ranges,
                                         _origins(x)))
        if acc is not dtype:
            out = make_pointwise(lambda v: _cast(v, acc, dtype), [out], dtype)
    else:
        out = TensorBox.create(Reduction(acc, inner_fn, ranges, _origins(x), rranges,
                                         reduction_type, src))
        out.realize()
        if acc is not dtype:
            out = make_pointwise(lambda v: _cast(v, acc, dtype), [out], dtype)
    if keepdim:
        for d in dims:
            out = unsqueeze(out, d)
    return out


@register_lowering(_aten("sum"))
def sum_(x, dim=None, keepdim=False, dtype=None):
    out_dtype = V.graph.current_meta().dtype
    return make_reduction(x, reduction_dims(dim, x.ndim), keepdim, "sum", out_dtype)


def _minmax(kind):
    def lower(x, dim=(), keepdim=False):
        return make_reduction(x, reduction_dims(dim, x.ndim), keepdim, kind, x.dtype)
    return lower


register_lowering(_aten("amax"))(_minmax("max"))
register_lowering(_aten("amin"))(_minmax("min"))


def _bool_reduction(kind):
    def lower(x, dim=None, keepdim=False):
        if isinstance(dim, (tuple, list)) and len(dim) == 0:
            dims = ()
        else:
            dims = reduction_dims(dim, x.ndim)
        return make_reduction(x, dims, keepdim, kind, V.graph.current_meta().dtype)
    return lower


register_lowering(_aten("all"))(_bool_reduction("all"))
register_lowering(_aten("any"))(_bool_reduction("any"))


# --------------------------------------------------------------------------- scatters


# ``select_scatter`` (an ``ops.index_expr`` body), the gathers and argmax: index_lowering.py


# --------------------------------------------------------------------------- creation


@register_lowering(_aten("full"))
def full(size, fill_value, dtype=None, device=None):
    meta = V.graph.current_meta()
    return make_pointwise(lambda: ops.constant(fill_value, meta.dtype), [], meta.dtype,
                          as_sizes(meta.shape))


def _constant_fill(value):
    def lower(size, dtype=None, device=None):
        """``zeros``/``ones``: a ``full`` of 0/1 (a constant body that fuses into its users).
        (The value is the op's, not read from ``V.graph.current_node``: inside a
        decomposition that is still the decomposed node.)"""
        return full(size, value)
    return lower


register_lowering(_aten("zeros"))(_constant_fill(0))
register_lowering(_aten("ones"))(_constant_fill(1))


# --------------------------------------------------------------------------- extern kernels


@register_lowering(_aten("mm"), _aten("bmm"))
def mm(a, b):
    meta = V.graph.current_meta()
    return extern_kernel("extern_mm", None, [a, b], meta, "")


def extern_kernel(kernel, op, args, meta, reason) -> TensorBox:
    inputs = [strided_view(a) if isinstance(a, TensorBox) else a for a in args]
    inputs = [_list_views(a) if isinstance(a, list) else a for a in inputs]
    metas = meta if isinstance(meta, (tuple, list)) else [meta]
    layout = FlexibleLayout(metas[0].dtype, as_sizes(metas[0].shape))
    buf = ExternKernel(V.graph.new_buffer_name(), layout, _origins(), kernel, op, inputs,
                       reason, len(metas) if isinstance(meta, (tuple, list)) else 1)
    V.graph.register_buffer(buf)
    if buf.n_outputs == 1 and not isinstance(meta, (tuple, list)):
        return TensorBox.create(buf)
    from .ir import MultiOutput

    outs = []
    for k, m in enumerate(metas):
        mo = MultiOutput(V.graph.new_buffer_name(), FlexibleLayout(m.dtype, as_sizes(m.shape)),
                         _origins(), buf, k)
        V.graph.register_buffer(mo)
        outs.append(TensorBox.create(mo))
    return tuple(outs)


def _list_views(items):
    return [strided_view(a) if isinstance(a, TensorBox) else a for a in items]


def fallback(op, args, meta, reason: str):
    """An op with no lowering: call its eager numpy kernel (``FallbackKernel`` in torch)."""
    return extern_kernel("fallback", op, list(args), meta, reason)


@register_lowering(_aten("convolution"))
def convolution(*args):
    """torch's Inductor calls a library convolution (``extern_kernels.convolution``) too: an
    extern kernel by design — the op's im2col + matmul numpy kernel — not a missing lowering
    (``convolution_backward`` has no lowering, so it is a fallback, as in torch)."""
    return extern_kernel("fallback", _aten("convolution"), list(args), V.graph.current_meta(),
                         "extern_kernels.convolution, as in torch")


def lowering_for(op):
    """The lowering of ``op``, or ``None`` (the caller falls back)."""
    fn = lowerings.get(op)
    if fn is not None:
        return fn
    opdef = getattr(op, "opdef", None)
    if opdef is not None and opdef.category == POINTWISE and opdef.kernel is not None \
            and op.name + ("" if op.overload_name == "default" else "." + op.overload_name) \
            in OP_TABLE and len(op.schema.returns) == 1 and not op.name.endswith("_"):
        fn = lowerings[op] = pointwise_lowering(opdef)
        return fn
    return None


# the view lowerings register themselves on import; make_reduction uses their unsqueeze
# the indirect-indexing lowerings; arange, tril/triu, constant_pad_nd; the poolings
from . import index_lowering, iota_lowering, pool_lowering  # noqa: E402,F401
from .view_lowerings import unsqueeze  # noqa: E402 - after the helpers it imports from here
