"""``mtc.Size``: the tuple subclass returned by ``Tensor.size()`` and ``Tensor.shape``.

Mirrors ``torch/Size``: slicing and concatenation keep the type, so
``x.size()[:-1] + (2, 5)`` is again a ``Size``.
"""

from __future__ import annotations


class Size(tuple):
    __slots__ = ()

    def __getitem__(self, item):
        out = tuple.__getitem__(self, item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"mtc.Size([{', '.join(str(s) for s in self)}])"
