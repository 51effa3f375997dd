"""Products and norms: ``einsum``, ``tensordot``, ``outer``, ``baddbmm``, ``linalg_cross``,
``linalg_vector_norm`` (``norm``).

Mirrors ``aten/src/ATen/native/Linear.cpp`` (einsum, tensordot, outer), ``LinearAlgebra.cpp``
(baddbmm, linalg_vector_norm, cross) and ``torch/_refs``.

All products are **composites over** ``bmm``/``mm``, as torch's ``einsum`` is (it is
``CompositeImplicitAutograd``: a traced graph shows the permutes, reshapes and ``bmm`` it
became, and Inductor runs the ``bmm`` as its extern matmul).  ``einsum`` contracts operands
left to right; for one pair ``A`` (letters ``a``) and ``B`` (letters ``b``), every letter is::

    batch      in both, still needed (in the output or a later operand)
    contracted in both, not needed                       -> summed by the bmm
    left/right in one only, needed                       -> kept
    (a letter in one only and not needed is summed out first)

    A -> permute(batch, left, contracted) -> reshape (B, L, K)
    B -> permute(batch, contracted, right) -> reshape (B, K, R)
    bmm -> (B, L, R) -> reshape (batch..., left..., right...)

and a last ``permute`` puts the output letters in the equation's order.  ``...`` stands for
the same leading dims in each operand; size-1 dims broadcast.  A letter repeated in one
operand (a diagonal, ``"ii->i"``) is not supported.

``linalg_vector_norm`` is a primitive reduction (one numpy pass) with torch's gradient:
``ord=2``: ``x / |x|`` (0 where the norm is 0), ``ord=inf``: to the maxima, shared by ties,
other ``p``: ``x |x|^(p-2) / |x|^(p-1)``.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype
from .table import (
    COMPOSITE,
    REDUCTION,
    MetaError,
    TensorMeta,
    defop,
    reduced_shape,
    reduction_dims,
    wrap_dim,
)

# ---------------------------------------------------------------- einsum


def _parse_equation(equation: str, tensors) -> tuple[list[str], str]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(tensors) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    ell_dims = max((t.ndim - (len(s) - 3) for s, t in zip(terms, tensors) if "..." in s),
                   default=0)
    ell = "".join(chr(0x3b1 + i) for i in range(ell_dims))  # Greek letters stand for "..."
    out_terms = []
    for s, t in zip(terms, tensors):
        if "..." in s:
            k = t.ndim - (len(s) - 3)
            s = s.replace("...", ell[ell_dims - k:])
        if len(s) != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(s)}) does not match the number of dimensions "
                               f"({t.ndim}) for operand {len(out_terms)}"
                               + ("" if "..." in eq else " and no ellipsis was given"))
        if len(set(s)) != len(s):
            raise NotImplementedError("einsum(): a subscript repeated within one operand "
                                      "(a diagonal) is not supported")
        out_terms.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        counts = {c: sum(s.count(c) for s in out_terms) for c in set("".join(out_terms))}
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    for c in out:
        if not any(c in s for s in out_terms):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                               "equation for any input operand")
    return out_terms, out


def _sum_out(t, letters, keep):
    dims = [i for i, c in enumerate(letters) if c not in keep]
    if dims:
        t = t.sum(dims)
    return t, "".join(c for c in letters if c in keep)


def _contract(a, la, b, lb, needed):
    a, la = _sum_out(a, la, needed | set(lb))
    b, lb = _sum_out(b, lb, needed | set(la))
    size = {}
    for t, letters in ((a, la), (b, lb)):
        for c, n in zip(letters, t.shape):
            size[c] = n if size.get(c, 1) == 1 else size[c]
    batch = [c for c in la if c in lb and c in needed]
    contracted = [c for c in la if c in lb and c not in needed]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]

    def arrange(t, letters, order):
        t = t.permute([letters.index(c) for c in order]) if letters else t
        return t.expand(tuple(size[c] for c in order)) if order else t

    def prod(cs):
        n = 1
        for c in cs:
            n *= size[c]
        return n

    nb, nl, nk, nr = prod(batch), prod(left), prod(contracted), prod(right)
    a3 = arrange(a, la, batch + left + contracted).reshape(nb, nl, nk)
    b3 = arrange(b, lb, batch + contracted + right).reshape(nb, nk, nr)
    out = a3.bmm(b3).reshape(tuple(size[c] for c in batch + left + right))
    return out, "".join(batch + left + right)


def _einsum(equation, tensors, path=None):
    tensors = list(tensors)
    terms, out = _parse_equation(equation, tensors)
    t, letters = tensors[0], terms[0]
    for k in range(1, len(tensors)):
        needed = set(out).union(*terms[k + 1:])
        t, letters = _contract(t, letters, tensors[k], terms[k], needed)
    t, letters = _sum_out(t, letters, set(out))
    return t.permute([letters.index(c) for c in out]) if out else t


einsum = defop("einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
               COMPOSITE, decomposition=_einsum)


def _tensordot(self, other, dims_self, dims_other):
    a, b = list(dims_self), list(dims_other)
    if len(a) != len(b):
        raise RuntimeError("both dimension lists should have same length")
    la = [chr(97 + i) for i in range(self.ndim)]
    lb = [chr(97 + self.ndim + i) for i in range(other.ndim)]
    for x, y in zip(a, b):
        lb[wrap_dim(y, other.ndim)] = la[wrap_dim(x, self.ndim)]
    out = "".join(c for c in la if c not in lb) + "".join(c for c in lb if c not in la)
    return _einsum(f"{''.join(la)},{''.join(lb)}->{out}", [self, other])


tensordot = defop("tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> "
                  "Tensor", COMPOSITE, decomposition=_tensordot)


def _outer(self, vec2):
    for name, v in (("self", self), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return self.reshape(-1, 1) * vec2


outer = defop("outer(Tensor self, Tensor vec2) -> Tensor", COMPOSITE, decomposition=_outer)


def _baddbmm(self, batch1, batch2, beta=1, alpha=1):
    """beta * self + alpha * (batch1 @ batch2), ``self`` ignored when ``beta == 0``."""
    if self.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input "
                           f"{_dtype.scalar_type_name(self.dtype)}, batch1: "
                           f"{_dtype.scalar_type_name(batch1.dtype)}, batch2: "
                           f"{_dtype.scalar_type_name(batch2.dtype)}")
    out = batch1.bmm(batch2)
    if alpha != 1:
        out = alpha * out
    F.broadcast_shapes(tuple(self.shape), tuple(out.shape))  # self must broadcast to it
    if beta == 0:
        return out
    return (self if beta == 1 else beta * self) + out


baddbmm = defop("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
                "Scalar alpha=1) -> Tensor", COMPOSITE, decomposition=_baddbmm)


def _cross(self, other, dim=-1):
    """``a × b`` along ``dim`` (size 3): ``roll(a, -1) * roll(b, -2) - roll(a, -2) * roll(b, -1)``
    — component ``i`` is ``a[i+1] b[i+2] - a[i+2] b[i+1]``."""
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, max(self.ndim, 1))
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{self.shape[d]} and {other.shape[d]}")
    a1, a2 = self.roll(-1, d), self.roll(-2, d)
    b1, b2 = other.roll(-1, d), other.roll(-2, d)
    return a1 * b2 - a2 * b1


linalg_cross = defop("linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
                     COMPOSITE, decomposition=_cross)

# ---------------------------------------------------------------- vector norm


def _norm_meta(self, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    if not self.dtype.is_floating_point:
        raise MetaError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                        f"input. Got {_dtype.scalar_type_name(self.dtype)}")
    dims = reduction_dims(dim, self.ndim)
    if ord < 0 or ord == float("inf") or ord == float("-inf"):
        if any(self.shape[d] == 0 for d in dims) or (not dims and self.numel() == 0):
            raise MetaError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                            "tensor because the operation does not have an identity")
    return TensorMeta(reduced_shape(tuple(self.shape), dims, keepdim), dtype or self.dtype)


def _norm_kernel(a, ord=2, dim=None, keepdim=False, dtype=None):  # noqa: A002
    if dtype is not None:
        a = a.astype(dtype.np)
    axis = reduction_dims(dim, a.ndim)
    x = np.abs(a)
    if ord == float("inf"):
        return np.amax(x, axis=axis, keepdims=keepdim)
    if ord == float("-inf"):
        return np.amin(x, axis=axis, keepdims=keepdim)
    if ord == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return np.sum(x, axis=axis, keepdims=keepdim)
    if ord == 2:
        return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdim))
    return np.sum(x ** ord, axis=axis, keepdims=keepdim) ** (1.0 / ord)


def _norm_backward(grad, self, result, ord, dim, keepdim):  # noqa: A002
    dims = reduction_dims(dim, self.ndim)
    if not keepdim:
        for d in sorted(dims):
            grad, result = grad.unsqueeze(d), result.unsqueeze(d)
    if ord == 0:
        return F.zeros_like(self)
    if ord == 1:
        return grad * self.sign()
    if ord in (float("inf"), float("-inf")):
        hit = self.abs() == result
        return grad * self.sign() * hit / hit.sum(dims, keepdim=True)
    if ord == 2:
        return F.where(result == 0, 0, grad * self / result)
    scale = self * self.abs() ** (ord - 2) / result ** (ord - 1)
    return F.where(result == 0, 0, grad * scale)


linalg_vector_norm = defop(
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", REDUCTION, kernel=_norm_kernel, meta=_norm_meta,
    derivatives={"self": _norm_backward})
