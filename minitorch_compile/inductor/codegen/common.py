"""Pieces every code generator shares (``torch/_inductor/codegen/common.py``): the SSA value a
handler returns, and safe literals for generated source — a constant is written with ``repr``
of plain Python values only, so no user text ever lands in the code unescaped."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(eq=False)
class Value:
    """One value of a kernel body: a tile buffer, a view of an input, or a literal."""

    expr: str | None = None  # how the code names it (set at allocation for temporaries)
    flags: tuple = ()  # per frame dim: does the value vary along it (else size 1)
    dtype: str | None = None  # numpy dtype name; None for a Python literal
    temp: bool = False  # needs a tile buffer
    final: bool = False  # a split reduction's result, valid only after the tile loop
    slot: int | None = None
    neg_of: Value | None = None  # this value is ``-neg_of``, computed only when needed
    pending: bool = False  # a ``neg_of`` value not computed yet

    def __str__(self) -> str:
        return self.expr


def np_dtype(dtype) -> str:
    """mtc dtype (or numpy dtype) -> numpy dtype name (``float32``)."""
    return str(np.dtype(getattr(dtype, "np", dtype)))


def const_repr(v) -> str:
    """A Python literal for ``v``; anything else is refused (the caller falls back)."""
    if v is None or isinstance(v, (bool, int, str)):
        return repr(v)
    from ..sizevars import Expr

    if isinstance(v, Expr):  # a size (``ks0`` in a kernel, ``s0`` in the wrapper)
        return f"({v})"
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, (np.bool_, np.integer, np.floating)):
        return f"np.{np.dtype(type(v))}({const_repr(v.item())})"
    if isinstance(v, (list, tuple)):
        inner = ", ".join(const_repr(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' if len(v) == 1 else ''})"
    from ..._dtype import dtype as mtc_dtype

    if isinstance(v, mtc_dtype):
        return f"mtc.{v.name}"
    if type(v).__name__ == "device":
        return f"mtc.device({str(v)!r})"
    raise NotImplementedError(f"cannot write the constant {v!r} ({type(v).__name__}) into "
                              "generated code")
