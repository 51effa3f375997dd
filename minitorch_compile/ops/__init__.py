"""The op table (``ops/``) and the ``mtc.ops`` namespaces.

Importing this package declares every aten op: ``pointwise``, ``bitwise`` (remainder, fmod,
``& | ^ ~``), ``reductions``, ``views``, ``joining`` (cat, stack, split, narrow, repeat),
``gather_scatter`` (flip, index_select, gather, scatter_add), ``indexing`` (advanced
indexing: index, index_put, masked_select, nonzero, take), ``view_replay`` (slice_scatter,
select_scatter; replaying and scattering through views), ``matmul``, ``creation``,
``nn_ops``, ``activations`` (silu, hardtanh, ...), ``batch_norm``, ``conv``, ``padding``,
``pooling``, ``activations_more`` (leaky_relu, elu, softplus, ...), ``losses`` (bce, smooth l1,
...), ``normalization`` (group_norm, rms_norm) and ``attention`` each hold one family,
every op declared once with all of its rules (see ``table.py``).  ``mtc.ops.aten.<name>``
reaches them through the dispatcher.
"""

from . import (  # noqa: F401  # noqa: F401,E402,I001 - nn layers: conv, pad, pooling  # noqa: F401,E402,I001
    activations,
    activations_more,
    attention,
    batch_norm,
    bitwise,
    conv,
    creation,
    gather_scatter,
    indexing,  # advanced indexing: index, index_put, masked_select, nonzero, take
    joining,
    losses,
    matmul,
    nn_ops,
    normalization,
    padding,
    pointwise,
    pooling,
    reductions,
    view_replay,  # slice_scatter, select_scatter; replaying and scattering through views
    views,
)
from ._ops import OpOverload, OpOverloadPacket, all_overloads, find_overload, ops
from .table import CATEGORIES, OP_TABLE, OpDef, TensorMeta, defop

aten = ops.aten

__all__ = ["ops", "aten", "OpOverload", "OpOverloadPacket", "OpDef", "OP_TABLE", "CATEGORIES",
           "TensorMeta", "defop", "find_overload", "all_overloads"]
