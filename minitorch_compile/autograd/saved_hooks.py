"""Hooks on saved tensors: ``saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``.

Mirrors ``torch/autograd/graph.py`` (the Python side) and the hook calls of
``torch/csrc/autograd/saved_variable.cpp``.  Inside ``with saved_tensors_hooks(pack, unpack):``
every tensor autograd saves for backward (by an op's derivative, or by a custom Function's
``save_for_backward``) is handed to ``pack`` at once, and autograd keeps only what ``pack``
returns; when backward (or ``grad_fn._saved_self``) needs the tensor, ``unpack(packed)``
gives it back::

    save:    packed = pack(tensor)          under no_grad; pack must not modify tensor in place
    unpack:  tensor' = unpack(packed)        must return a Tensor (TypeError otherwise)

Rules (torch's, measured on torch 2.13):

* the innermost ``with`` wins (a stack); hooks see a leaf itself and an op's output itself;
* a tensor saved with hooks has no version check (torch cannot know what ``pack`` kept);
* ``unpack`` runs at every access — twice for two backward passes with ``retain_graph``;
* while graphs are traced (make_fx / AOTAutograd) the hooks are not called on the tracer's
  tensors: the compiled region's autograd.Function saves real tensors at run time, and those
  go through the hooks (torch's compiled regions do the same);
* ``disable_saved_tensors_hooks(msg)``: registering hooks inside it — or entering it while
  hooks are registered — raises ``RuntimeError(msg)``.

A gradient of a gradient still flows through an unpacked tensor: it is given the saved
tensor's place in the graph (its ``grad_fn``, or its leaf's accumulator), as torch's
``SavedVariable::unpack`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

_stack: list = []  # (pack_hook, unpack_hook), innermost last
_disabled: list = []  # error messages of the active disable_saved_tensors_hooks, innermost last

PACK_INPLACE = ("A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")


def current_hooks():
    """The innermost ``(pack, unpack)`` pair, or ``None``."""
    return _stack[-1] if _stack else None


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager: ``pack_hook(tensor) -> Any`` at save, ``unpack_hook(packed) -> Tensor``
    at use (see the module docstring)."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        _stack.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Keep saved tensors in host memory and move them back to their device in backward:
    an NPU tensor's activation leaves device memory until its backward needs it.  The copy is
    taken even for a CPU tensor (as torch's ``empty + copy_``), so later in-place changes to
    the original do not reach the saved value.  ``pin_memory`` is accepted and has no effect
    (there is no DMA engine to pin pages for)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            return tensor.device, tensor.detach().cpu().clone()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:  # noqa: N801 - torch's name
    """Refuse saved-tensor hooks inside (a library that must see the real saved tensors uses
    this): registering hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if _stack:
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)
        return self

    def __exit__(self, *exc) -> None:
        _disabled.pop()

    def __call__(self, fn):  # torch's is also a decorator
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


@dataclass
class Packed:
    """What a ``SavedTensor`` keeps instead of the tensor when hooks were active."""

    value: Any
    unpack_hook: Callable
    edge: tuple | None  # the saved tensor's place in the graph, for a gradient of a gradient


def pack(tensor, hooks) -> Packed:
    """Call the pack hook on ``tensor`` (under no_grad), refusing an in-place change."""
    from .._dispatch import state
    from .grad_mode import no_grad
    from .graph import gradient_edge

    pack_hook, unpack_hook = hooks
    version = tensor._version
    edge = gradient_edge(tensor) if tensor.requires_grad and state.grad_enabled else None
    with no_grad():
        value = pack_hook(tensor)
    if tensor._version != version:
        raise RuntimeError(PACK_INPLACE)
    return Packed(value, unpack_hook, edge)


def unpack(packed: Packed):
    """Call the unpack hook; give the result the saved tensor's place in the graph when grad
    mode is on (backward with ``create_graph=True``)."""
    from .._dispatch import state
    from .._tensor import Tensor

    out = packed.unpack_hook(packed.value)
    if not isinstance(out, Tensor):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(out).__name__}")
    if packed.edge is None or not state.grad_enabled or out.grad_fn is not None:
        return out
    out = out.detach()
    out._requires_grad = True
    out.grad_fn, out._output_nr = packed.edge
    return out
