"""Eager ops on the npu: one Ascend C kernel per aten op, costed through ``kernel.py``.

Teaches torch_npu's eager path: ``TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)`` routes each op to
an ``aclnn``/``aclop`` kernel that is launched on the AI cores by itself — so every op pays a
full trip GM -> UB -> GM.  Here the *values* come from the op table's numpy kernel (so npu ==
cpu, bit for bit), and the *cost* from running the op's Ascend C skeleton in counting mode:

=============  ===========================================================================
category       kernel skeleton (per core: its share, in UB-sized, double-buffered tiles)
=============  ===========================================================================
pointwise      CopyIn every input tile -> vector instructions -> CopyOut; an input smaller
               than the output (broadcast) is loaded once into UB when it fits
indexing       the same stream; an input is read at most once per output element (gathers)
creation,      CopyOut only (``Duplicate`` / a random-number instruction per tile)
random
reduction      rows of the reduced extent: whole rows per tile when one fits UB, else chunks
               (multi-pass ops such as softmax then read a row ``passes`` times)
matmul         128x128 output blocks, K in L0A-sized steps: GM -> L1 (MTE2) -> L0A/L0B (MTE1)
               -> Cube -> FixPipe to GM
view           no kernel: a view is metadata
=============  ===========================================================================

The skeletons live in ``eager_kernels.py``.  The iteration space is split over
``ceil(bytes / min_core_bytes)`` cores (at most all of them);
cores with equal shares are simulated once (``replicas``) and equal tiles once (``times``), so
the accounting costs the same for a 10-element and a 10-million-element tensor.
"""

from __future__ import annotations

import threading
import warnings

from .._dispatch import DispatchKey
from .._tensor import Tensor
from ..ops.table import CREATION, INDEXING, MATMUL, POINTWISE, RANDOM, REDUCTION, VIEW
from .eager_kernels import matmul_kernel, reduction_kernel, stream_kernel

# op name -> the vector instructions one element goes through (default: [op name])
INSTRUCTIONS = {
    "clone": ["copy"], "_to_copy": ["cast"], "copy_": ["copy"], "cat": ["copy"],
    "embedding": ["copy"], "embedding_dense_backward": ["add"], "slice_backward": ["copy"],
    "select_backward": ["copy"], "_check_class_indices": ["compare", "compare"],
    "eq": ["compare"], "ne": ["compare"], "lt": ["compare"], "le": ["compare"],
    "gt": ["compare"], "ge": ["compare"], "where": ["select"], "clamp": ["max", "min"],
    "maximum": ["max"], "minimum": ["min"], "logical_not": ["not"], "logical_and": ["and"],
    "logical_or": ["or"], "rsub": ["sub"], "full": ["duplicate"], "zeros": ["duplicate"],
    "ones": ["duplicate"], "empty": [], "arange": ["duplicate", "add"],
    "randn": ["random"], "rand": ["random"],
    # reductions: per input element
    "sum": ["reduce"], "mean": ["reduce"], "amax": ["reduce"], "amin": ["reduce"],
    "max": ["reduce", "compare"], "min": ["reduce", "compare"], "argmax": ["reduce", "compare"],
    "argmin": ["reduce", "compare"], "all": ["reduce"], "any": ["reduce"],
    "std": ["reduce", "sub", "mul", "reduce"],
    "_softmax": ["reduce", "sub", "exp", "reduce", "div"],
    "_log_softmax": ["reduce", "sub", "exp", "reduce", "log", "sub"],
    "_softmax_backward_data": ["mul", "reduce", "sub", "mul"],
    "_log_softmax_backward_data": ["exp", "reduce", "mul", "sub"],
}
WRITE_ONLY_SELF = {"copy_"}  # in-place ops that overwrite self without reading it
# "reductions" whose output is as large as their input (batch norm with its statistics, the
# norms' and losses' backward ops): costed as one stream over the output (native_layer_norm
# keeps the row model: its rows fit UB)
STREAMED_REDUCTIONS = {"mse_loss_backward", "nll_loss_backward", "native_layer_norm_backward",
                       "_native_batch_norm_legit", "native_batch_norm_backward"}


def _tensor_args(op, args) -> list[Tensor]:
    s = op.schema
    out = [args[i] for i in s.tensor_arg_indices if isinstance(args[i], Tensor)]
    for i in s.tensor_list_arg_indices:
        out.extend(t for t in args[i] if isinstance(t, Tensor))
    return out


def _outputs(out) -> list[Tensor]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor)]


# --------------------------------------------------------------------------- the op kernel

class _Depth(threading.local):
    value = 0  # > 0 while an npu kernel runs: ops it calls internally are part of it


_depth = _Depth()


def npu_kernel(op, base=None):
    """The PrivateUse1 kernel of ``op``: the table's numpy kernel, then the op's Ascend C
    skeleton in counting mode.  Inputs in a private format are cast to ND first, as torch_npu
    does for an op that does not take the format (a visible ``TransData`` kernel)."""
    from . import formats

    base = base if base is not None else op.kernels[DispatchKey.NPU]
    opdef = op.opdef
    category = opdef.category if opdef is not None else POINTWISE
    name = f"{op.namespace}::{op.name}"
    key = op.name.rstrip("_") if op.name not in INSTRUCTIONS else op.name
    instructions = INSTRUCTIONS.get(op.name, INSTRUCTIONS.get(key, [key]))

    def kernel(*args):
        if _depth.value or category == VIEW:
            return base(*args)
        inputs = _tensor_args(op, args)
        for t in inputs:
            if getattr(t, "_npu_format", formats.ND) != formats.ND:
                formats.trans_data(t)
        _depth.value += 1
        try:
            out = base(*args)
        finally:
            _depth.value -= 1
        outputs = [o for o in _outputs(out) if o._device.type == "npu"]
        if not outputs and any(o._device.type != "npu" for o in _outputs(out)):
            return out  # a copy to the host (``x.cpu()``) is a DMA, not a kernel
        if outputs and all(o.numel() == 0 for o in outputs):
            return out  # nothing to write (``topk(x, 0)``): no kernel is launched
        if op.name in WRITE_ONLY_SELF:
            inputs = inputs[1:]
        try:
            if category == MATMUL and len(inputs) >= 2 and inputs[0].ndim >= 2:
                matmul_kernel(name, inputs[0], inputs[1], outputs)
            elif category == REDUCTION and inputs and op.name not in STREAMED_REDUCTIONS:
                reduction_kernel(name, op, args, inputs, outputs, instructions)
            elif category in (CREATION, RANDOM):
                if instructions:
                    stream_kernel(name, [], outputs, instructions)
            else:
                stream_kernel(name, inputs, outputs, instructions, gather=category == INDEXING)
        except Exception as e:  # the values are right; only the cost model failed: say so
            warnings.warn(f"npu: no cost recorded for {name} ({type(e).__name__}: {e})",
                          RuntimeWarning, stacklevel=2)
        return out

    kernel.__name__ = f"npu_{op.name}"
    kernel.__qualname__ = kernel.__name__
    return kernel


def table_overloads(category: str) -> list:
    """The op-table overloads of ``category`` that have a backend kernel to wrap."""
    from ..ops.table import OP_TABLE

    return [d.overload for d in OP_TABLE.values()
            if d.category == category and DispatchKey.NPU in d.overload.kernels]
