"""The ops handler of the CPU code generator: one numpy call per ``ops.*`` call
(``torch/_inductor/codegen/cpp.py``'s ``CppOverrides`` / ``CppVecOverrides``, which write one C++
expression per op).

``NumpyKernelHandler`` runs as ``V.ops`` while a fused group's bodies execute (``cpu.py``, step 3
of its algorithm): every op becomes an ``Instr`` — a numpy call with ``out={out}`` — producing an
SSA ``Value``; loads, stores and reductions are the kernel's (``NumpyKernel``), which knows the
buffers and their views.  Two rules live here:

* **CSE**: equal calls compute one value — literals and views compare by their text,
  temporaries by identity (``_cse_key``);
* **signs travel**: ``negative`` of a float value is not computed until a use needs it, and
  ``(-a) * b`` is ``-(a * b)`` (exact in IEEE arithmetic), so ``g * -sin(c) * -sin(x)`` makes no
  ``negative`` pass at all.
"""

from __future__ import annotations

import numpy as np

from . import cpu_indirect as ci  # indirect loads and stores, index_expr, argmax
from .common import Value, const_repr, np_dtype
from .cpp_utils import Instr

_BOOL_OPS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
             "logical_and", "logical_or", "logical_not", "logical_xor", "isnan", "isinf",
             "isfinite", "signbit"}


def _cse_key(v: Value):
    """Equal calls compute one value: literals and views compare by text, temporaries by
    identity."""
    return ("text", v.expr) if v.expr is not None and not v.temp else id(v)


class NumpyKernelHandler:
    """The ops handler that writes numpy: one ``Instr`` per op."""

    def __init__(self, kernel, final: bool = False):
        self.k = kernel
        self.final = final  # the epilogue after a split reduction's loop
        self.instrs: list = []
        self.cache: dict = {}

    def new(self, fmt, args, flags, dtype, inplace=False, key=None, temp=True):
        if key is not None and key in self.cache:
            return self.cache[key]
        v = Value(flags=tuple(flags), dtype=dtype, temp=temp)
        self.instrs.append(Instr(v, fmt, list(args), inplace))
        if key is not None:
            self.cache[key] = v
        return v

    def flags(self, args) -> tuple:
        flags = [False] * len(self.k.frame.sizes)
        for a in args:
            if isinstance(a, Value) and a.flags:
                flags = [x or y for x, y in zip(flags, a.flags)]
        return tuple(flags)

    def lit(self, a) -> Value:
        if not isinstance(a, Value):
            return Value(expr=const_repr(a))
        if a.pending:  # a negation some use finally needs: compute it here
            a.pending = False
            self.instrs.append(Instr(a, "np.negative({0}, out={out})", [a.neg_of], inplace=True))
        return a

    # Signs travel (exact in IEEE arithmetic): ``negative`` of a float value is not computed
    # until a use needs it, and ``(-a) * b`` is ``-(a * b)``, ``(-a) * (-b)`` is ``a * b`` (the
    # same for ``/``), so ``g * -sin(c) * -sin(x)`` — cos(cos(x))'s backward — makes no
    # ``negative`` pass at all.
    def negative(self, x):
        if isinstance(x, Value) and x.neg_of is not None:
            return x.neg_of  # --a is a
        x = self.lit(x)
        if x.dtype is None or np.dtype(x.dtype).kind != "f":
            return self._ufunc("negative", [x])
        return Value(flags=x.flags, dtype=x.dtype, temp=True, neg_of=x, pending=True)

    def _signed(self, name, args):
        negs = [isinstance(a, Value) and a.neg_of is not None for a in args]
        out = self._ufunc(name, [a.neg_of if n else a for a, n in zip(args, negs)])
        return self.negative(out) if sum(negs) == 1 else out

    def multiply(self, a, b):
        return self._signed("multiply", [a, b])

    def true_divide(self, a, b):
        return self._signed("true_divide", [a, b])

    # ---------------------------------------------------------------- memory
    def load(self, name, index):
        return self.k.load(self, name, index)

    def store(self, name, index, value, mode=None):
        if ci.is_indirect(index):  # index_put / scatter: into the mutated buffer, in place
            return ci.indirect_store(self.k, self, name, index, self.lit(value), mode)
        self.k.store(self, name, index, self.lit(value))

    def reduction(self, dtype, src_dtype, reduction_type, value):
        return self.k.reduction(self, np_dtype(dtype), reduction_type, self.lit(value))

    def indirect_indexing(self, value, size, wrap_neg=True, check="index", dim=0):
        return ci.indirect_indexing(self.k, self, self.lit(value), size, wrap_neg, check, dim)

    def index_expr(self, index, dtype):
        return ci.index_expr(self.k, self, index, np_dtype(dtype))

    # ---------------------------------------------------------------- ops
    def constant(self, value, dtype):
        d = np_dtype(dtype)
        return Value(expr=f"np.{d}({const_repr(value)})", dtype=d,
                     flags=(False,) * len(self.k.frame.sizes))

    def to_dtype(self, x, dtype):
        x, d = self.lit(x), np_dtype(dtype)
        if x.dtype == d:
            return x
        return self.new("np.copyto({out}, {0}, casting='unsafe')", [x], self.flags([x]), d,
                        key=("to_dtype", _cse_key(x), d))

    def identity(self, x):
        return self.lit(x)

    def where(self, c, a, b):
        args = [self.lit(v) for v in (c, a, b)]
        dt = next((v.dtype for v in args[1:] if v.dtype is not None), None)
        return self.new("{out} = np.where({0}, {1}, {2})", args, self.flags(args), dt,
                        key=("where",) + tuple(map(_cse_key, args)), temp=False)

    def kernel(self, op, dtype, *args):
        vals = [self.lit(a) for a in args]
        ref = self.k.module.kernel_ref(op)
        d = np_dtype(dtype)
        call = ", ".join("{%d}" % i for i in range(len(vals)))
        return self.new(f"{{out}} = np.asarray({ref}({call}), dtype=np.{d})", vals,
                        self.flags(vals), d, temp=False)

    def _ufunc(self, name, args):
        vals = [self.lit(a) for a in args]
        arrays = [np.dtype(v.dtype) for v in vals if v.dtype is not None]
        dt = "bool" if name in _BOOL_OPS else str(np.result_type(*arrays)) if arrays \
            else "float64"
        call = ", ".join("{%d}" % i for i in range(len(vals)))
        return self.new(f"np.{name}({call}, out={{out}})", vals, self.flags(vals), dt,
                        inplace=True, key=(name,) + tuple(map(_cse_key, vals)))

    def __getattr__(self, name):
        if not isinstance(getattr(np, name, None), np.ufunc):
            raise NotImplementedError(f"ops.{name}: no numpy ufunc of that name")
        return lambda *args: self._ufunc(name, args)


__all__ = ["NumpyKernelHandler"]
