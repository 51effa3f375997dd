"""torch's names for backward nodes (``grad_fn``): ``MulBackward0``, ``DivBackward2``,
``SiluBackward0``.

torch generates one node class per entry of ``tools/autograd/derivatives.yaml`` and names it
``<Op>Backward<n>``: ``<Op>`` is the op's name title-cased part by part (``log1p`` ->
``Log1P``, ``max_pool2d`` -> ``MaxPool2D``), ``n`` counts the entries of the same name before it
(``div.Tensor`` 0, ``div.Scalar`` 1, ``div.Tensor_mode`` 2).  Our op table has fewer overloads —
``div`` takes an optional ``rounding_mode``, a Python number where torch has a ``.Scalar``
overload — so the number torch would use is read from the call's arguments (``OVERLOAD_NUMBER``).

Composites: torch runs ``silu``, ``layer_norm``, ``mse_loss``, ``max()`` ... as ops with their own
derivative; ours decompose into primitives, so the output's node is the last primitive's
(``MulBackward0``).  ``name_composite_output`` renames that node — only a node made by this very
call, never an input's — after torch's (``TORCH_COMPOSITE_NAMES``), as ``t()`` became
``TBackward0``.  The graph behind it stays ours (its ``next_functions`` are the primitives').
Measured against torch 2.13 (``tests/test_autograd_node_names.py``).
"""

from __future__ import annotations

from typing import Callable


def camel(name: str) -> str:
    """torch's spelling of an op in a node name: each ``_``-separated part title-cased."""
    return "".join(p.title() for p in name.strip("_").split("_"))


def _is_tensor(v) -> bool:
    return hasattr(v, "grad_fn")


def _given(arg: str) -> Callable:
    """Overload 1 when ``arg`` is given (``sum(dim)``, ``mean(dim)``)."""
    return lambda a: 0 if a.get(arg) is None else 1


def _tensor(arg: str) -> Callable:
    """Overload 1 when ``arg`` is a tensor, 0 for a Python number (torch's ``.Scalar``)."""
    return lambda a: 1 if _is_tensor(a.get(arg)) else 0


def _pow(a) -> int:  # pow.Tensor_Scalar, pow.Tensor_Tensor, pow.Scalar
    return 2 if not _is_tensor(a.get("self")) else 1 if _is_tensor(a.get("exponent")) else 0


def _squeeze(a) -> int:  # squeeze, squeeze.dim, squeeze.dims
    dim = a.get("dim")
    return 0 if dim is None else 1 if isinstance(dim, int) else 2


def _clamp(a) -> int:  # clamp.Tensor first, then clamp (Scalar)
    return 0 if _is_tensor(a.get("min")) or _is_tensor(a.get("max")) else 1


# op name -> the numbering rule over the call's arguments (by schema name); absent: 0
OVERLOAD_NUMBER: dict[str, Callable] = {
    "div": lambda a: 2 if a.get("rounding_mode") is not None else 0,
    "pow": _pow,
    "sum": _given("dim"),
    "mean": _given("dim"),
    "remainder": _tensor("other"),
    "fmod": _tensor("other"),
    "lerp": _tensor("weight"),
    "masked_fill": _tensor("value"),
    "index_fill": _tensor("value"),
    "sort": lambda a: 1 if a.get("stable") else 0,
    "squeeze": _squeeze,
    "clamp": _clamp,
    "rsub": lambda a: 0 if _is_tensor(a.get("other")) else 1,
}
# overloads of our table that are a numbered torch entry of their own
OVERLOAD_NODE = {"round.decimals": "RoundBackward1", "median.dim": "MedianBackward1",
                 "prod.dim_int": "ProdBackward1", "max.dim": "MaxBackward0",
                 "min.dim": "MinBackward0"}


# primitives torch names after another op for some arguments (``diag`` of a vector is
# ``diag_embed``)
PRIMITIVE_RENAMES: dict[str, Callable] = {
    "diag": lambda a: "DiagEmbedBackward0" if a["self"].ndim == 1 else None,
}


_FIXED: dict = {}  # op -> its name, for ops whose name does not depend on the call


def torch_node_name(op, args) -> str:
    """The ``grad_fn`` name torch gives a call of primitive ``op`` with bound ``args`` (read
    once per op unless a rule looks at the arguments: this runs for every recorded op)."""
    fixed = _FIXED.get(op)
    if fixed is not None:
        return fixed
    base = op.name.rstrip("_")
    rule = OVERLOAD_NUMBER.get(base)
    if base in PRIMITIVE_RENAMES or rule is not None:
        bound = {a.name: v for a, v in zip(op.schema.arguments, args)}
        renamed = PRIMITIVE_RENAMES[base](bound) if base in PRIMITIVE_RENAMES else None
        return renamed or f"{camel(base)}Backward{rule(bound) if rule is not None else 0}"
    name = OVERLOAD_NODE.get(f"{base}.{op.overload_name}") or f"{camel(base)}Backward0"
    _FIXED[op] = name
    return name


def _always(name: str) -> Callable:
    return lambda a: name


def _two_d_input(name: str, arg: str = "input") -> Callable:
    """torch's ``linear`` is ``addmm`` for a 2-D input with a bias (``mm`` without one)."""
    def rule(a):
        x = a.get(arg)
        if x is not None and x.ndim == 1:
            return "SqueezeBackward4"  # unsqueeze, mm, squeeze_
        if x is None or x.ndim != 2:
            return None
        return name if a.get("bias") is not None else "MmBackward0"
    return rule


def _clamp_bound(op: str, arg: str) -> Callable:
    return lambda a: f"{op}Backward{1 if _is_tensor(a.get(arg)) else 0}"


def _matmul(a) -> str | None:
    """torch's ``matmul`` picks ``dot``/``mv``/``mm`` by rank, and folds batches through an
    ``_unsafe_view``."""
    x, y = a["self"].ndim, a["other"].ndim
    if x == 1 and y == 1:
        return "DotBackward0"
    if x == 2 and y == 1:
        return "MvBackward0"
    if x == 1 and y == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0" if x >= 3 and y <= 2 or x >= 3 and y >= 3 else None


def _nll(a) -> str | None:
    x = a.get("input", a.get("self"))
    if x is None:
        return None
    if x.ndim <= 2:
        return "NllLossBackward0"
    return "NllLoss2DBackward0" if a.get("reduction") != "none" else None  # (N, C, d...)


# composite op name -> rule(arguments by schema name) -> torch's node name (None: keep ours)
TORCH_COMPOSITE_NAMES: dict[str, Callable] = {
    "max": _always("MaxBackward1"), "min": _always("MinBackward1"),
    "median": _always("MedianBackward0"),
    "var": _always("VarBackward0"), "var_mean": _always("VarMeanBackward0"),
    "stack": _always("StackBackward0"), "logsumexp": _always("LogsumexpBackward0"),
    "repeat": _always("RepeatBackward0"), "tile": _always("RepeatBackward0"),
    "addmm": _always("AddmmBackward0"), "baddbmm": _always("BaddbmmBackward0"),
    "linear": _two_d_input("AddmmBackward0"), "matmul": _matmul,
    "clamp_min": _clamp_bound("ClampMin", "min"), "clamp_max": _clamp_bound("ClampMax", "max"),
    "silu": _always("SiluBackward0"), "mish": _always("MishBackward0"),
    "hardtanh": _always("HardtanhBackward0"), "hardswish": _always("HardswishBackward0"),
    "hardsigmoid": _always("HardsigmoidBackward0"), "leaky_relu": _always("LeakyReluBackward0"),
    "elu": _always("EluBackward0"), "selu": _always("EluBackward0"),
    "celu": _always("CeluBackward0"), "softplus": _always("SoftplusBackward0"),
    "threshold": _always("ThresholdBackward0"), "glu": _always("GluBackward0"),
    "softshrink": _always("SoftshrinkBackward0"), "hardshrink": _always("HardshrinkBackward0"),
    "log_sigmoid": _always("LogSigmoidBackward0"), "prelu": _always("PreluKernelBackward0"),
    "linalg_cross": _always("LinalgCrossBackward0"),
    "layer_norm": _always("NativeLayerNormBackward0"),
    "group_norm": _always("NativeGroupNormBackward0"),
    "batch_norm": _always("NativeBatchNormBackward0"),
    "mse_loss": _always("MseLossBackward0"), "nll_loss": _nll, "cross_entropy_loss": _nll,
    "binary_cross_entropy": _always("BinaryCrossEntropyBackward0"),
    "binary_cross_entropy_with_logits": _always("BinaryCrossEntropyWithLogitsBackward0"),
    "smooth_l1_loss": _always("SmoothL1LossBackward0"),
    "huber_loss": _always("HuberLossBackward0"),
}


def name_composite_output(op, args, out, first_sequence_nr: int) -> None:
    """Rename the node of ``out`` (a tensor or a tuple of them) after torch's, when the node
    was made by this call (its sequence number is at least ``first_sequence_nr``)."""
    from .graph import OpBackward, node_class

    rule = TORCH_COMPOSITE_NAMES.get(op.name)
    name = rule({a.name: v for a, v in zip(op.schema.arguments, args)}) if rule else None
    if name is None:
        return
    for t in out if isinstance(out, (tuple, list)) else (out,):
        fn = getattr(t, "__dict__", {}).get("_grad_fn")
        if isinstance(fn, OpBackward) and fn.sequence_nr >= first_sequence_nr:
            fn.__class__ = node_class(OpBackward, name)
            fn._name = name


def _install() -> None:
    from .. import _dispatch

    _dispatch.NAMED_COMPOSITES = frozenset(TORCH_COMPOSITE_NAMES)


_install()
