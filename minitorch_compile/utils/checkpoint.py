"""Activation checkpointing: keep fewer activations, recompute them in backward.

Mirrors ``torch/utils/checkpoint.py``.  ``checkpoint(fn, *args, use_reentrant=False)`` returns
``fn(*args)`` but keeps none of the tensors ``fn``'s ops save for backward; backward runs
``fn`` again to get them.  Gradients equal those without checkpointing — the recomputation
replays the same RNG stream (``preserve_rng_state``), so a dropout mask is the same mask.

Non-reentrant (``use_reentrant=False``, what torch recommends) — saved-tensor hooks::

    forward:   with saved_tensors_hooks(pack, unpack): out = fn(*args)
               pack(t)   -> a handle: t's position k in the save order (t's metadata kept)
    backward:  unpack(k) -> on the first unpack, recompute: run fn(*args) again under
               enable_grad with the forward's RNG state, with hooks that collect every saved
               tensor in order; check their count and metadata against the forward's
               (torch's CheckpointError); hand out tensor k and drop it from the cache
               (another backward with retain_graph recomputes again)

The outputs keep their ordinary ``grad_fn``s, so ``autograd.grad``, hooks on the outputs and
a gradient of a gradient work as without checkpointing.

Reentrant (``use_reentrant=True``, torch's default when the argument is left out — with its
warning) — an ``autograd.Function`` whose forward runs ``fn`` under ``no_grad`` and whose
backward runs ``fn`` again on detached inputs and calls ``autograd.backward`` inside the
outer backward; so it only supports ``.backward()`` (not ``autograd.grad`` or
``backward(inputs=...)``) and keyword arguments are refused, as in torch.

``checkpoint_sequential(functions, segments, input)`` checkpoints each of the first
``segments - 1`` runs of consecutive functions and runs the last segment normally.

Under ``mtc.compile`` a call is a graph break (torch 2.13 traces the non-reentrant form as the
``tag_activation_checkpoint`` higher-order op and its partitioner recomputes the region; ours
runs the call eagerly, with the same values).  Not implemented: early stopping of the
recomputation, ``debug=True``'s op-by-op report, nested non-reentrant checkpoints' own
recompute order (they work, recomputing their inner region once more).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation did not save what the forward saved (torch's class)."""


_TIP = ("\n\nTip: To see a more detailed error message, either pass `debug=True` to "
        "`torch.utils.checkpoint.checkpoint(...)` or wrap the code block with "
        "`with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to enable "
        "checkpoint-debug mode globally.")
_REENTRANT_GRAD = ("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                   "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                   "can either set use_reentrant=False, or call .backward() without passing the "
                   "`inputs` argument.")
_PASS_REENTRANT = ("torch.utils.checkpoint: the use_reentrant parameter should be passed "
                   "explicitly. Starting in PyTorch 2.9, calling checkpoint without "
                   "use_reentrant will raise an exception. use_reentrant=False is recommended, "
                   "but if you need to preserve the current default behavior, you can pass "
                   "use_reentrant=True. Refer to docs for more details on the differences between "
                   "the two variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, **kwargs) -> Any:
    """``function(*args, **kwargs)``, its activations recomputed in backward."""
    if use_reentrant is None:
        warnings.warn(_PASS_REENTRANT, stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _reentrant(function, preserve_rng_state, args)
    return _non_reentrant(function, preserve_rng_state, context_fn, determinism_check, args,
                          kwargs)


# ---------------------------------------------------------------- non-reentrant


def _metadata(t) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _Frame:
    """One checkpointed call: what the forward saved (metadata) and the recomputed tensors."""

    def __init__(self, recompute: Callable, check: bool):
        self.recompute_fn = recompute
        self.check = check
        self.saved_metadata: list[dict] = []
        self.recomputed: list = []  # position -> tensor, or None once handed out

    def pack(self, tensor) -> int:
        self.saved_metadata.append(_metadata(tensor))
        return len(self.saved_metadata) - 1

    def unpack(self, k: int):
        if k >= len(self.recomputed) or self.recomputed[k] is None:
            self.recomputed = self.recompute()
        t, self.recomputed[k] = self.recomputed[k], None
        return t

    def recompute(self) -> list:
        from ..autograd.graph import saved_tensors_hooks

        tensors: list = []

        def never_unpacked(_):
            raise CheckpointError("torch.utils.checkpoint: a recomputed graph was "
                                  "backpropagated through")

        with saved_tensors_hooks(lambda t: tensors.append(t.detach() if t.requires_grad else t),
                                 never_unpacked):
            self.recompute_fn()
        if not self.check:
            return tensors
        if len(tensors) != len(self.saved_metadata):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.saved_metadata)}\nNumber of tensors saved during recomputation: "
                f"{len(tensors)}." + _TIP)
        bad = [(k, m, _metadata(t)) for k, (m, t) in enumerate(zip(self.saved_metadata,
                                                                  tensors))
               if m != _metadata(t)]
        if bad:
            lines = "".join(f"tensor at position {k}:\nsaved metadata: {m}\nrecomputed "
                            f"metadata: {r}\n" for k, m, r in bad)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following "
                                  "tensors have different metadata than during the forward "
                                  "pass.\n" + lines + _TIP)
        return tensors


@contextlib.contextmanager
def _rng_state(state):
    """Run the block with the RNG at ``state``; afterwards the stream continues where it was
    (torch's ``fork_rng``)."""
    from .. import _random

    if state is None:
        yield
        return
    now = _random.get_rng_state()
    _random.set_rng_state(state)
    try:
        yield
    finally:
        _random.set_rng_state(now)


def _non_reentrant(function, preserve_rng_state, context_fn, determinism_check, args, kwargs):
    from .. import _random
    from ..autograd.grad_mode import enable_grad
    from ..autograd.graph import saved_tensors_hooks

    state = _random.get_rng_state() if preserve_rng_state else None
    forward_ctx, recompute_ctx = context_fn()

    def recompute():
        with _rng_state(state), enable_grad(), recompute_ctx:
            function(*args, **kwargs)

    frame = _Frame(recompute, check=determinism_check == "default")
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_ctx:
        return function(*args, **kwargs)


# ---------------------------------------------------------------- reentrant


def _reentrant(function, preserve_rng_state, args):
    from .._tensor import Tensor

    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=3)
    return _checkpoint_function().apply(function, preserve_rng_state, *args)


_FUNCTION = []


def _checkpoint_function():
    """The ``autograd.Function`` (made on first use: ``autograd`` imports after ``utils``)."""
    if _FUNCTION:
        return _FUNCTION[0]
    from .. import _random, autograd
    from .._tensor import Tensor
    from ..autograd.engine import graph_tasks
    from ..autograd.grad_mode import enable_grad, no_grad

    class CheckpointFunction(autograd.Function):
        @staticmethod
        def forward(ctx, run_function, preserve_rng_state, *args):
            ctx.run_function = run_function
            ctx.rng_state = _random.get_rng_state() if preserve_rng_state else None
            ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
            ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
            ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
            with no_grad():
                return run_function(*args)

        @staticmethod
        def backward(ctx, *grads):
            if not graph_tasks or not graph_tasks[-1]:
                raise RuntimeError(_REENTRANT_GRAD)
            inputs = list(ctx.inputs)
            for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
                inputs[i] = t.detach().requires_grad_(t.requires_grad)
            with _rng_state(ctx.rng_state), enable_grad():
                outputs = ctx.run_function(*inputs)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            pairs = [(o, g) for o, g in zip(outputs, grads)
                     if isinstance(o, Tensor) and o.requires_grad and g is not None]
            if not pairs:
                raise RuntimeError("none of output has requires_grad=True, this checkpoint() "
                                   "is not necessary")
            autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
            return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None
                                        for a in inputs)

    _FUNCTION.append(CheckpointFunction)
    return CheckpointFunction


# ---------------------------------------------------------------- checkpoint_sequential


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs):
    """Run ``functions`` (a list or ``nn.Sequential``) in order on ``input``, checkpointing
    each of the first ``segments - 1`` segments of ``len(functions) // segments`` functions."""
    if use_reentrant is None:
        warnings.warn(_PASS_REENTRANT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input,  # noqa: A001
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
