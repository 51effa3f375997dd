"""Matrix products: ``mm`` and ``bmm`` are primitives; ``matmul`` and ``linear`` decompose.

``matmul`` follows torch's rules (``aten/src/ATen/native/LinearAlgebra.cpp``): 1-D x 1-D is a
dot product, 2-D x 2-D is ``mm``, a 1-D operand gets a dimension added and removed again, and
anything batched broadcasts its batch dims, folds them into one and calls ``bmm``.
"""

from __future__ import annotations

import numpy as np

from .. import _dtype
from .table import COMPOSITE, MATMUL, MetaError, TensorMeta, broadcast_shapes, defop

# caffe2's TypeMeta names, which torch's "m1 and m2" message prints (``double != float``)
_TYPE_META_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
                    "int64": "long int", "int32": "int", "int16": "short int",
                    "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _same_dtype(name, a, b):
    if a.dtype is not b.dtype:
        raise MetaError(f"{name}: expected m1 and m2 to have the same dtype, but got: "
                        f"{_TYPE_META_NAMES[a.dtype.name]} != {_TYPE_META_NAMES[b.dtype.name]}")


def _mm_meta(self, mat2):
    if self.ndim != 2 or mat2.ndim != 2:
        raise MetaError(f"mm: expected 2D tensors, got {self.ndim}D and {mat2.ndim}D")
    if self.shape[1] != mat2.shape[0]:
        raise MetaError(f"mm: mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x"
                        f"{self.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype("mm", self, mat2)
    return TensorMeta((self.shape[0], mat2.shape[1]), self.dtype)


def _column_major(sizes, strides) -> bool:
    return len(strides) == 2 and strides[0] == 1 and strides[1] == sizes[0]


def _mm_mat1_backward(grad, mat2, self_sizes, self_strides):
    """torch's ``mm_mat1_backward``: a column-major ``self`` (a transposed weight) gets its
    gradient computed transposed, so it comes out in its own layout (no copy at accumulation)."""
    if _column_major(self_sizes, self_strides):
        return mat2.mm(grad.t()).t()
    return grad.mm(mat2.t())


def _mm_mat2_backward(grad, self, mat2_sizes, mat2_strides):
    """torch's ``mm_mat2_backward``: ``linear``'s ``weight.t()`` is column-major, so the
    weight's gradient is ``grad.t() @ input``, row-major like the weight."""
    if _column_major(mat2_sizes, mat2_strides):
        return grad.t().mm(self).t()
    return self.t().mm(grad)


mm = defop("mm(Tensor self, Tensor mat2) -> Tensor", MATMUL, kernel=np.matmul, meta=_mm_meta,
           derivatives={"self": _mm_mat1_backward, "mat2": _mm_mat2_backward})


def _bmm_meta(self, mat2):
    if self.ndim != 3 or mat2.ndim != 3:
        raise MetaError(f"bmm: batch1 must be a 3D tensor (got {self.ndim}D and {mat2.ndim}D)")
    if self.shape[0] != mat2.shape[0]:
        raise MetaError(f"bmm: batch1 and batch2 must have same number of batches, got "
                        f"{self.shape[0]} and {mat2.shape[0]}")
    if self.shape[2] != mat2.shape[1]:
        raise MetaError(f"bmm: Expected size for first two dimensions of batch2 tensor to be: "
                        f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, "
                        f"{mat2.shape[1]}].")
    if self.dtype is not mat2.dtype:  # (torch's bmm reports it as a scalar type check)
        raise MetaError(f"bmm: expected scalar type {_dtype.scalar_type_name(self.dtype)} but "
                        f"found {_dtype.scalar_type_name(mat2.dtype)}")
    return TensorMeta((self.shape[0], self.shape[1], mat2.shape[2]), self.dtype)


bmm = defop("bmm(Tensor self, Tensor mat2) -> Tensor", MATMUL, kernel=np.matmul, meta=_bmm_meta,
            derivatives={"self": lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                         "mat2": lambda grad, self: self.transpose(1, 2).bmm(grad)})


def _matmul(self, other):
    a, b = self.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"matmul: both arguments to matmul need to be at least 1D, but they "
                           f"are {a}D and {b}D")
    if a == 1 and b == 1:
        if self.shape[0] != other.shape[0]:
            raise RuntimeError(f"matmul: inconsistent tensor size, expected tensor "
                               f"[{self.shape[0]}] and src [{other.shape[0]}] to have the same "
                               "number of elements,"
                               " but got different")
        if self.dtype is not other.dtype:
            raise RuntimeError(f"matmul: dot : expected both vectors to have same dtype, but "
                               f"found {self.dtype.name} and {other.dtype.name}")
        return (self * other).sum(dtype=self.dtype)  # a dot product keeps the dtype (int32)
    if a == 2 and b == 2:
        return self.mm(other)  # torch too: 2-D @ 2-D is mm, and mm reports its errors
    # checked here, so errors name matmul and the shapes it was given (not the mm/bmm inside,
    # which see reshaped operands)
    if self.shape[-1] != other.shape[-2 if b > 1 else 0]:
        raise RuntimeError(f"matmul: mat1 and mat2 shapes cannot be multiplied "
                           f"({_dims(self.shape)} and {_dims(other.shape)})")
    if self.dtype is not other.dtype:
        raise RuntimeError(f"matmul: expected m1 and m2 to have the same dtype, but got: "
                           f"{_TYPE_META_NAMES[self.dtype.name]} != "
                           f"{_TYPE_META_NAMES[other.dtype.name]}")
    if a == 2 and b == 1:
        return self.mm(other.unsqueeze(1)).squeeze(1)
    if a == 1 and b == 2:
        return self.unsqueeze(0).mm(other).squeeze(0)
    # batched: broadcast the batch dims, fold them, bmm, unfold
    x = self.unsqueeze(0) if a == 1 else self
    y = other.unsqueeze(1) if b == 1 else other
    n, k = x.shape[-2], x.shape[-1]
    m = y.shape[-1]
    try:
        batch = broadcast_shapes(tuple(x.shape[:-2]), tuple(y.shape[:-2]))
    except MetaError as e:
        raise RuntimeError(f"matmul: {e} (shapes {_dims(self.shape)} and "
                           f"{_dims(other.shape)})") from None
    nb = _numel(batch)
    xb = x.expand(batch + (n, k)).reshape((nb, n, k))
    yb = y.expand(batch + (k, m)).reshape((nb, k, m))
    out = xb.bmm(yb).view(batch + (n, m))
    if a == 1:
        out = out.squeeze(-2)
    if b == 1:
        out = out.squeeze(-1)
    return out


def _dims(shape) -> str:
    return "x".join(map(str, shape))


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


matmul = defop("matmul(Tensor self, Tensor other) -> Tensor", COMPOSITE, decomposition=_matmul)


def _linear(input, weight, bias=None):  # noqa: A002 - torch's name
    """``input @ weight.T + bias``."""
    if bias is not None and input.dtype is not weight.dtype:  # torch's linear is an addmm then
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{_dtype.scalar_type_name(input.dtype)} and "
                           f"{_dtype.scalar_type_name(weight.dtype)}")
    out = _matmul(input, weight.t())
    return out if bias is None else out + bias


linear = defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", COMPOSITE,
               decomposition=_linear)


def _expand_shape(shape, size):
    from .views import _expand_shape as expand_shape

    return expand_shape(shape, size)


def _addmm(self, mat1, mat2, beta=1, alpha=1):
    """beta * self + alpha * (mat1 @ mat2); with beta == 0, ``self`` is ignored (nan and inf
    in it do not propagate), as torch's decomposition does."""
    if mat1.dtype is not mat2.dtype:  # (torch checks the operands first)
        raise RuntimeError(f"addmm: mat1 and mat2 must have the same dtype, but got "
                           f"{_dtype.scalar_type_name(mat1.dtype)} and "
                           f"{_dtype.scalar_type_name(mat2.dtype)}")
    if self.dtype is not mat1.dtype:
        raise RuntimeError(f"addmm: self and mat2 must have the same dtype, but got "
                           f"{_dtype.scalar_type_name(self.dtype)} and "
                           f"{_dtype.scalar_type_name(mat1.dtype)}")
    out = mat1.mm(mat2)
    if tuple(self.shape) != tuple(out.shape):  # self must expand to the product's shape
        try:
            _expand_shape(tuple(self.shape), tuple(out.shape))
        except MetaError as e:
            raise RuntimeError(f"addmm: {e}") from None
    if alpha != 1:
        out = alpha * out
    if beta == 0:
        return out
    return (self if beta == 1 else beta * self) + out


addmm = defop("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) "
              "-> Tensor", COMPOSITE, decomposition=_addmm)
