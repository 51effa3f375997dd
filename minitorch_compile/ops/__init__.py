"""The op table (``ops/``) and the ``mtc.ops`` namespaces.

Importing this package declares every aten op: ``pointwise``, ``bitwise`` (remainder, fmod,
``& | ^ ~``), ``reductions``, ``views``, ``joining`` (cat, stack, split, narrow, repeat),
``gather_scatter`` (flip, index_select, gather, scatter_add), ``indexing`` (advanced
indexing: index, index_put, masked_select, nonzero, take), ``view_replay`` (slice_scatter,
select_scatter; replaying and scattering through views), ``matmul``, ``creation``,
``nn_ops``, ``activations`` (silu, hardtanh, ...), ``batch_norm``; the nn layers ``conv``,
``padding``, ``pooling``, ``activations_more`` (leaky_relu, elu, softplus, ...), ``losses`` (bce,
smooth l1, ...), ``normalization`` (group_norm, rms_norm) and ``attention``; and the tensor ops
ordinary programs meet: ``pointwise_more``, ``scan``, ``sorting``, ``tensor_transformations``,
``linalg``, ``index_ops``, ``distributions``, ``special``, ``bucketization`` — each hold one family,
every op declared once with all of its rules (see ``table.py``).  ``mtc.ops.aten.<name>``
reaches them through the dispatcher.
"""

from . import (  # noqa: F401
    activations,
    activations_more,
    attention,
    batch_norm,
    batch_norm_ops,  # _native_batch_norm_legit.no_stats and its backward (torch's single ops)
    bitwise,
    bucketization,  # searchsorted, bucketize, bincount
    conv,
    creation,
    distributions,  # bernoulli, normal, multinomial
    gather_scatter,
    index_ops,  # index_add, index_copy, index_fill, scatter_reduce; scatter_, scatter_add_
    indexing,  # advanced indexing: index, index_put, masked_select, nonzero, take
    joining,
    layer_norm,  # native_layer_norm and its backward (single ops, as torch's)
    linalg,  # einsum, tensordot, outer, baddbmm, linalg_cross, linalg_vector_norm
    loss_ops,  # mse_loss, nll_loss_forward and their backward ops (single ops, as torch's)
    losses,
    matmul,
    nn_ops,
    normalization,
    padding,
    pointwise,
    pointwise_math,  # square, sgn
    pointwise_more,  # atan2, hypot, logaddexp, logit, lerp, addcmul, addcdiv, masked_fill
    pointwise_trig,  # asin ... atanh, tan, log10, exp2, erfc, sinc, deg2rad, rad2deg
    pooling,
    reductions,
    rounding,  # floor, ceil, trunc, round (decimals), frac
    scan,  # cumsum, cumprod, prod
    sorting,  # sort, argsort, topk, kthvalue, median
    special,  # erfinv, lgamma, digamma, polygamma
    tensor_transformations,  # roll, tril/triu, diag, movedim, tile, repeat_interleave, ...
    view_replay,  # slice_scatter, select_scatter; replaying and scattering through views
    views,
)
from ._ops import OpOverload, OpOverloadPacket, all_overloads, find_overload, ops
from .table import CATEGORIES, OP_TABLE, OpDef, TensorMeta, defop

aten = ops.aten

__all__ = ["ops", "aten", "OpOverload", "OpOverloadPacket", "OpDef", "OP_TABLE", "CATEGORIES",
           "TensorMeta", "defop", "find_overload", "all_overloads"]
