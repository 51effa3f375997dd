"""Torch-like ``repr`` of tensors (``torch/_tensor_str.py``, simplified).

``tensor([[0.1000, 2.0000]], requires_grad=True)``: four decimals unless every value is
integral (``tensor([1., 2.])``), the dtype shown when it is not the default for its kind, the
device when it is not the CPU, then ``grad_fn`` or ``requires_grad``.
"""

from __future__ import annotations

import numpy as np

from . import _dtype


def _format_data(a: np.ndarray, prefix: str) -> str:
    if a.size == 0:
        return "[]" if a.ndim == 1 else f"[], size={tuple(a.shape)}"
    opts = dict(separator=", ", prefix=prefix, threshold=1000, edgeitems=3, max_line_width=80)
    if a.dtype.kind == "f":
        finite = a[np.isfinite(a)]
        if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
            return np.array2string(a, floatmode="unique", precision=0, **opts)
        return np.array2string(a, precision=4, floatmode="fixed", **opts)
    if a.dtype.kind == "b":  # torch pads to the widest element: [ True, False]
        width = 5 if a.size and not a.all() else 4
        return np.array2string(
            a, formatter={"bool": lambda v: ("True" if v else "False").rjust(width)}, **opts)
    return np.array2string(a, **opts)


def tensor_repr(t) -> str:
    prefix = "tensor("
    dt = t.dtype
    suffix = []
    if t.device.type == "meta":
        body = "..."
        suffix.append(f"size={tuple(t.shape)}")
    else:
        body = _format_data(t._data, prefix)
        if t.ndim == 0:
            body = body.strip("[]")
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if dt not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_) or \
            (t.numel() == 0 and dt is not _dtype.get_default_dtype()):
        suffix.append(f"dtype={dt!r}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffix) + ")"
