"""Convolution: ``convolution`` and ``convolution_backward`` are primitives; ``conv1d``,
``conv2d`` and ``conv_transpose1d/2d`` decompose into ``convolution``.

Mirrors ``aten/src/ATen/native/Convolution.cpp`` (``_convolution``, ``check_shape_forward``,
``_convolution_mode``) and ``derivatives.yaml``'s ``convolution_backward``.  Inductor keeps
both primitives as extern kernels (torch's ``extern_kernels.convolution`` and its fallback for
``convolution_backward``): they are matrix products, not loops worth generating.

The kernel, for input ``x (N, C, *spatial)``, weight ``w (C_out, C/G, *k)`` and ``G`` groups::

    cols = windows(pad(x))          (G, N*P, C/G * K)   "im2col": one row per output position
    y    = cols @ w_g^T             (G, N*P, C_out/G)   one batched matmul for all groups

where ``P`` is the number of output positions and ``K = prod(k)`` (``_sliding.py`` has the
window view).  Its backward is two more products of the same matrices:

    grad_w = grad_y_g^T @ cols              (the windows weighted by the output gradients)
    grad_x = scatter(grad_y_g @ w_g)        (each window's gradient added back where it was read)

``grad_x`` is the *adjoint* of the convolution in ``x``, and that adjoint is exactly a
**transposed convolution** — so a transposed convolution's forward is that scatter, and its
backward swaps the roles: ``grad_x`` is an ordinary convolution of ``grad_y`` with ``w``, and
``grad_w`` is the weight gradient with ``grad_y`` as input and ``x`` as output gradient.
Three numpy functions (``_conv``, ``_conv_adjoint``, ``_conv_weight_grad``) cover all six.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _api as F
from .. import _dtype
from ._sliding import crop_spatial, out_sizes, pad_spatial, scatter_windows, windows
from .table import COMPOSITE, MATMUL, TensorMeta, defop

# ---------------------------------------------------------------- numpy kernels


def _im2col(x, kernel, stride, padding, dilation, groups, out=None):
    """(G, N*P, C/G * K): the windows of ``x``, one row per output position, per group."""
    n, c, nd = x.shape[0], x.shape[1], len(kernel)
    xp = pad_spatial(x, padding, padding)
    if out is None:
        out = out_sizes(xp.shape[2:], kernel, stride, dilation)
    win = windows(xp, kernel, stride, dilation, out).reshape(n, groups, c // groups,
                                                             *out, *kernel)
    perm = (1, 0, *range(3, 3 + nd), 2, *range(3 + nd, 3 + 2 * nd))
    return win.transpose(perm).reshape(groups, n * math.prod(out),
                                       c // groups * math.prod(kernel)), list(out)


def _group_rows(y, groups):
    """(N, C, *out) -> (G, N*P, C/G)."""
    n, c = y.shape[:2]
    p = math.prod(y.shape[2:])
    return y.reshape(n, groups, c // groups, p).transpose(1, 0, 3, 2).reshape(
        groups, n * p, c // groups)


def _ungroup(rows, n, out):
    """(G, N*P, C/G) -> (N, C, *out)."""
    g, _, cg = rows.shape
    return rows.reshape(g, n, math.prod(out), cg).transpose(1, 0, 3, 2).reshape(
        n, g * cg, *out)


def _conv(x, w, stride, padding, dilation, groups, out=None):
    cols, out = _im2col(x, w.shape[2:], stride, padding, dilation, groups, out)
    wg = w.reshape(groups, w.shape[0] // groups, -1)
    return _ungroup(cols @ wg.transpose(0, 2, 1), x.shape[0], out)


def _conv_adjoint(gy, w, in_spatial, stride, padding, dilation, groups):
    """The gradient of ``_conv`` in ``x`` (= a transposed convolution of ``gy``)."""
    n, nd = gy.shape[0], gy.ndim - 2
    out, kernel = gy.shape[2:], w.shape[2:]
    cg = w.shape[1]
    dcols = _group_rows(gy, groups) @ w.reshape(groups, w.shape[0] // groups, -1)
    dwin = dcols.reshape(groups, n, *out, cg, *kernel)
    perm = (1, 0, 2 + nd, *range(2, 2 + nd), *range(3 + nd, 3 + 2 * nd))
    dwin = dwin.transpose(perm).reshape(n, groups * cg, *out, *kernel)
    padded = [i + 2 * p for i, p in zip(in_spatial, padding)]
    return crop_spatial(scatter_windows(dwin, padded, stride, dilation), padding, in_spatial)


def _conv_weight_grad(x, gy, kernel, stride, padding, dilation, groups):
    cols, _ = _im2col(x, kernel, stride, padding, dilation, groups, list(gy.shape[2:]))
    gw = _group_rows(gy, groups).transpose(0, 2, 1) @ cols
    return gw.reshape(gw.shape[0] * gw.shape[1], x.shape[1] // groups, *kernel)


def _transposed_size(i, k, s, p, d, op):
    return (i - 1) * s - 2 * p + d * (k - 1) + op + 1


def _with_bias(y, b):
    return y if b is None else y + b.reshape((1, -1) + (1,) * (y.ndim - 2))


def _convolution_kernel(x, w, b, stride, padding, dilation, transposed, output_padding,
                        groups):
    stride, padding, dilation, output_padding = _params(w.ndim - 2, stride, padding, dilation,
                                                        output_padding)
    if not transposed:
        y = _conv(x, w, stride, padding, dilation, groups)
    else:
        size = [_transposed_size(*a) for a in zip(x.shape[2:], w.shape[2:], stride, padding,
                                                  dilation, output_padding)]
        y = _conv_adjoint(x, w, size, stride, padding, dilation, groups)
    # contiguous, as the meta rule promises (a traced reshape of it becomes a view)
    return np.ascontiguousarray(_with_bias(y, b))


def _convolution_backward_kernel(gy, x, w, bias_sizes, stride, padding, dilation, transposed,
                                 output_padding, groups, output_mask):
    stride, padding, dilation, _ = _params(w.ndim - 2, stride, padding, dilation,
                                           output_padding)
    empty = np.empty((0,), dtype=gy.dtype)  # a masked-off gradient (undefined in torch)
    k = w.shape[2:]
    gx = gw = gb = empty
    if output_mask[0]:
        gx = _conv(gy, w, stride, padding, dilation, groups, list(x.shape[2:])) if transposed \
            else _conv_adjoint(gy, w, x.shape[2:], stride, padding, dilation, groups)
    if output_mask[1]:
        gw = _conv_weight_grad(gy, x, k, stride, padding, dilation, groups) if transposed \
            else _conv_weight_grad(x, gy, k, stride, padding, dilation, groups)
    if output_mask[2]:
        gb = gy.sum(axis=(0, *range(2, gy.ndim)))
    return tuple(np.ascontiguousarray(g) for g in (gx, gw, gb))


# ---------------------------------------------------------------- meta rules (torch's checks)


def _expand(name, value, n):
    """torch's ``expand_param_if_needed``: an int or a 1-list repeats for every spatial dim."""
    if isinstance(value, int):
        return [value] * n
    value = list(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={value}")
    return value


def _params(nd, stride, padding, dilation, output_padding):
    return (_expand("stride", stride, nd), _expand("padding", padding, nd),
            _expand("dilation", dilation, nd), _expand("output_padding", output_padding, nd))


def _sizes(t) -> str:
    return f"[{', '.join(map(str, t.shape))}]"


# the C++ type names torch's messages print
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "uint8": "unsigned char", "bool": "bool"}


def _type_name(d) -> str:
    return _dtype.scalar_type_name(d)


def _check_convolution(input, weight, bias, stride, padding, dilation,  # noqa: A002, C901
                       transposed, output_padding, groups):
    nd = weight.ndim - 2
    stride, padding, dilation, output_padding = _params(nd, stride, padding, dilation,
                                                        output_padding)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    checks = ((padding, "negative padding is not supported", lambda v: v < 0),
              (output_padding, "negative output_padding is not supported", lambda v: v < 0),
              (stride, "non-positive stride is not supported", lambda v: v <= 0),
              (dilation, "non-positive dilation is not supported", lambda v: v <= 0))
    for values, msg, bad in checks:
        if any(bad(v) for v in values):
            raise RuntimeError(msg)
    ws = _sizes(weight)
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-"
                           f"dimensional weight {ws}, but got {input.ndim}-dimensional input "
                           f"of size {_sizes(input)} instead")
    if weight.shape[0] < groups or weight.shape[0] % groups:
        word = "at least" if weight.shape[0] < groups else "divisible by"
        raise RuntimeError(f"Given groups={groups}, expected weight to be {word} {groups} at "
                           f"dimension 0, but got weight of size [{ws}] instead")
    if input.dtype is not weight.dtype:
        if input.dtype is _dtype.float32:  # torch's float32 path checks (mkldnn) say it so
            raise RuntimeError(f"Input type (torch.{_type_name(input.dtype)}Tensor) and weight "
                               f"type (torch.{_type_name(weight.dtype)}Tensor) should be the "
                               "same or input should be a MKLDNN tensor and weight is a dense "
                               "tensor")
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(weight.dtype)}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_C_NAMES.get(input.dtype.name)}) and bias type "
                           f"({_C_NAMES.get(bias.dtype.name)}) should be the same")
    if not transposed:
        cin, nbias = weight.shape[1] * groups, weight.shape[0]
        if input.shape[1] != cin:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input"
                               f"{_sizes(input)} to have {cin} channels, but got "
                               f"{input.shape[1]} channels instead")
        _check_bias(bias, nbias, f"Given weight of size {ws}")
        padded = [input.shape[2 + i] + 2 * padding[i] for i in range(nd)]
        kernel = [dilation[i] * (weight.shape[2 + i] - 1) + 1 for i in range(nd)]
        if any(p < k for p, k in zip(padded, kernel)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater "
                "than actual input size")
        out = out_sizes(padded, weight.shape[2:], stride, dilation)
        return TensorMeta((input.shape[0], weight.shape[0], *out), input.dtype)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input"
                           f"{_sizes(input)} to have {weight.shape[0]} channels, but got "
                           f"{input.shape[1]} channels instead")
    _check_bias(bias, weight.shape[1] * groups, f"Given transposed=1, weight of size {ws}")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           f"got output_padding={output_padding}, stride={stride}, dilation="
                           f"{dilation}")
    out = [_transposed_size(*a) for a in zip(input.shape[2:], weight.shape[2:], stride,
                                             padding, dilation, output_padding)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: {list(input.shape[2:])}. Calculated "
                           f"output size per channel: {out}. Output size is too small")
    return TensorMeta((input.shape[0], weight.shape[1] * groups, *out), input.dtype)


def _check_bias(bias, n, prefix):
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != n):
        raise RuntimeError(f"{prefix}, expected bias to be 1-dimensional with {n} elements, but "
                           f"got bias of size {_sizes(bias)} instead")


def _convolution_backward_meta(grad_output, input, weight, bias_sizes, stride,  # noqa: A002
                               padding, dilation, transposed, output_padding, groups,
                               output_mask):
    shapes = (input.shape, weight.shape, (weight.shape[1] * groups if transposed
                                          else weight.shape[0],))
    return tuple(TensorMeta(tuple(s) if m else (0,), grad_output.dtype)
                 for s, m in zip(shapes, output_mask))


# ---------------------------------------------------------------- derivatives


def _conv_args_backward(which):
    """The formula for one input: ``convolution_backward`` with only its output wanted."""
    mask = [which == 0, which == 1, False]

    def formula(grad, input, weight, stride, padding, dilation, transposed,  # noqa: A002
                output_padding, groups):
        return convolution_backward(grad, input, weight, None, stride, padding, dilation,
                                    transposed, output_padding, groups, mask)[which]
    return formula


def _bias_grad(grad):
    return grad.sum([0, *range(2, grad.ndim)])


def _conv_double_backward(which):
    """convolution is bilinear in (input, weight), so convolution_backward is linear in each
    of its three tensors: the gradients of (grad_input, grad_weight, grad_bias) w.r.t. them."""
    def formula(grads, grad_output, input, weight, stride, padding, dilation,  # noqa: A002
                transposed, output_padding, groups):
        # a masked-off output's gradient arrives as an empty (0,) tensor: it contributes 0
        ggx, ggw, ggb = (g if g.ndim == len(s) and g.numel() else None
                         for g, s in zip(grads, (input.shape, weight.shape, (1,))))
        args = (stride, padding, dilation, transposed, output_padding, groups)
        if which == "grad_output":
            out = F.zeros_like(grad_output)
            if ggx is not None:
                out = out + convolution(ggx, weight, None, *args)
            if ggw is not None:
                out = out + convolution(input, ggw, None, *args)
            if ggb is not None:
                out = out + ggb.reshape([1, -1] + [1] * (out.ndim - 2))
            return out
        if which == "input":
            return F.zeros_like(input) if ggw is None else convolution_backward(
                grad_output, input, ggw, None, *args, [True, False, False])[0]
        return F.zeros_like(weight) if ggx is None else convolution_backward(
            grad_output, ggx, weight, None, *args, [False, True, False])[1]
    return formula


convolution = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    MATMUL, kernel=_convolution_kernel, meta=_check_convolution,
    derivatives={"input": _conv_args_backward(0), "weight": _conv_args_backward(1),
                 "bias": _bias_grad})
convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, "
    "SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)", MATMUL, kernel=_convolution_backward_kernel,
    meta=_convolution_backward_meta,
    derivatives={"grad_output": _conv_double_backward("grad_output"),
                 "input": _conv_double_backward("input"),
                 "weight": _conv_double_backward("weight")})

# ---------------------------------------------------------------- conv1d/2d, transposed


def _same_padding(input, weight, stride, dilation, nd):  # noqa: A002
    """torch's ``_convolution_mode`` for ``padding='same'``: pad ``d (k - 1)`` in total, half
    on each side; an odd total puts the extra element on the right (a padded copy)."""
    if any(s != 1 for s in _expand("stride", stride, nd)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    dilation = _expand("dilation", dilation, nd)
    totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
    left = [t // 2 for t in totals]
    extra = [t - 2 * lo for t, lo in zip(totals, left)]
    if any(extra):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", stacklevel=6)
        pad = []
        for e in reversed(extra):  # constant_pad_nd lists the last dim first
            pad += [0, e]
        from .._api import ops

        input = ops.aten.constant_pad_nd(input, pad, 0)  # noqa: A001
    return input, left


def _conv_composite(nd, name, string_padding=False):
    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                               f"to {name}, but got input of size: {_sizes(input)}")
        batched = input.ndim == nd + 2
        x = input if batched else input.unsqueeze(0)
        if string_padding:
            if padding == "valid":
                padding = 0
            elif padding == "same":
                x, padding = _same_padding(x, weight, stride, dilation, nd)
            else:
                raise RuntimeError(f"Invalid padding string: '{padding}'")
        out = convolution(x, weight, bias, _as_list(stride, nd), _as_list(padding, nd),
                          _as_list(dilation, nd), False, [0] * nd, groups)
        return out if batched else out.squeeze(0)
    return conv


def _conv_transpose_composite(nd, name):
    def conv_t(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
               output_padding=0, groups=1, dilation=1):
        if input.ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input "
                               f"to {name}, but got input of size: {_sizes(input)}")
        batched = input.ndim == nd + 2
        x = input if batched else input.unsqueeze(0)
        out = convolution(x, weight, bias, _as_list(stride, nd), _as_list(padding, nd),
                          _as_list(dilation, nd), True, _as_list(output_padding, nd), groups)
        return out if batched else out.squeeze(0)
    return conv_t


def _as_list(v, nd):
    """A schema's ``int[2]`` default: an int fills every spatial dim."""
    return [v] * nd if isinstance(v, int) else list(v)


_CONV_ARGS = "Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1"
for _nd in (1, 2):
    _head = _CONV_ARGS.format(n=_nd)
    defop(f"conv{_nd}d({_head}, SymInt[{_nd}] padding=0, SymInt[{_nd}] dilation=1, "
          "SymInt groups=1) -> Tensor", COMPOSITE,
          decomposition=_conv_composite(_nd, f"conv{_nd}d"))
    defop(f"conv{_nd}d.padding({_head}, str padding=\"valid\", SymInt[{_nd}] dilation=1, "
          "SymInt groups=1) -> Tensor", COMPOSITE,
          decomposition=_conv_composite(_nd, f"conv{_nd}d", string_padding=True))
    defop(f"conv_transpose{_nd}d{'.input' if _nd == 2 else ''}({_head}, SymInt[{_nd}] padding=0, "
          f"SymInt[{_nd}] output_padding=0, SymInt groups=1, SymInt[{_nd}] dilation=1) "
          "-> Tensor", COMPOSITE,
          decomposition=_conv_transpose_composite(_nd, f"conv_transpose{_nd}d"))
