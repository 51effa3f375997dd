"""OpInfo: one test record per op-table entry (after ``torch/testing/_internal/opinfo``).

Each ``OpInfo`` names an op of ``OP_TABLE`` and gives

* ``sample(g, dtype) -> Sample``: random arguments for the op, built from hypothesis draws
  through a ``Gen``.  Tensors are numpy arrays in the sample (the tests turn them into mtc or
  torch tensors), so the numpy reference sees exactly what the op sees;
* ``ref(*args, **kwargs)``: an independent numpy reference (``None`` for random ops, which give
  a ``check`` of the values' properties instead);
* ``out_dtype(sample)``: torch's result dtype, worked out here from torch's rules (the
  promotion tiers in ``torch_result_type``), not read from the op table;
* ``dtypes``: the dtypes torch accepts for the op's main input;
* ``operands``: for pointwise ops, which arguments take part in type promotion — the reference
  gets them cast to the *compute* dtype first, as torch computes (``int64 == 2.5`` compares in
  float32), so references stay plain numpy.

``Gen(draw, smooth=True)`` draws values from a seeded RNG whose magnitudes stay in [0.25, 3]: no
zeros, no ties, no kinks (``abs``, ``relu``, ``max``).  Gradient checks and torch comparisons use
it; value tests use hypothesis' own elements, which like 0.0 and repeated values.

The tests that read this registry: ``test_op_table`` (every op has an entry), ``test_ops_numpy``
(values, dtypes, in-place variants, the Meta device), ``test_gradcheck`` and
``test_ops_vs_torch``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch_compile as mtc
from minitorch_compile.ops import OP_TABLE

BOOL, INT, F32, F64 = mtc.bool, mtc.int64, mtc.float32, mtc.float64
FLOATS = (F32, F64)
NUMERIC = (F32, F64, INT, mtc.uint8)
ALL = (F32, F64, INT, BOOL, mtc.uint8)
_MTC_OF_NP = {d.np: d for d in (BOOL, mtc.uint8, mtc.int32, INT, mtc.float16, F32, F64)}


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        def show(v):
            if isinstance(v, np.ndarray):
                return f"array({v.tolist()!r}, {v.dtype})"
            return repr(v)
        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"Sample({', '.join(parts)})"


def S(*args, **kwargs) -> Sample:
    return Sample(args, kwargs)


# ---------------------------------------------------------------- torch's dtype rules


def dtype_of(x) -> mtc.dtype:
    return _MTC_OF_NP[np.dtype(x.dtype)]


def _category(d: mtc.dtype) -> int:
    return 2 if d.is_floating_point else (0 if d is BOOL else 1)


def _promote(a, b):
    if a is None:
        return b
    if _category(a) != _category(b):
        return a if _category(a) > _category(b) else b
    return a if a.itemsize >= b.itemsize else b


def torch_result_type(*operands) -> mtc.dtype:
    """``torch.result_type``: dim tensors, then 0-dim tensors, then Python numbers; a later
    tier changes the result only if it is of a higher category (bool < int < float), and a
    Python number then brings its category's default dtype (bool, int64, float32)."""
    dim = zero = None
    wrapped = -1
    for x in operands:
        if isinstance(x, np.ndarray):
            if x.ndim:
                dim = _promote(dim, dtype_of(x))
            else:
                zero = _promote(zero, dtype_of(x))
        elif x is not None:
            wrapped = max(wrapped, 0 if isinstance(x, bool) else 1 if isinstance(x, int) else 2)
    result = dim
    if zero is not None and (result is None or _category(zero) > _category(result)):
        result = zero
    if wrapped >= 0 and (result is None or wrapped > _category(result)):
        result = (BOOL, INT, F32)[wrapped]
    return result


def int_to_float(d: mtc.dtype) -> mtc.dtype:
    return d if d.is_floating_point else F32


# ---------------------------------------------------------------- drawing samples


class Gen:
    """Draw the pieces of a sample (shapes, arrays, dims, scalars)."""

    def __init__(self, draw, *, smooth: bool = False, grad: bool = False):
        self.draw = draw
        self.smooth = smooth or grad
        self.grad = grad  # gradient checks: float64 operands, smaller shapes
        self.max_side = 3 if grad else 4
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1))) if self.smooth \
            else None

    # shapes
    def shape(self, min_dims=0, max_dims=3, min_side=1, max_side=None) -> tuple:
        return self.draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims,
                                          min_side=min_side,
                                          max_side=max_side or self.max_side))

    def bshapes(self, n=2, min_dims=0, max_dims=3) -> tuple:
        """``n`` mutually broadcastable shapes."""
        return self.draw(hnp.mutually_broadcastable_shapes(
            num_shapes=n, min_dims=min_dims, max_dims=max_dims, min_side=1,
            max_side=self.max_side)).input_shapes

    # values
    def array(self, shape, dtype, domain="real") -> np.ndarray:
        """``domain``: "real" [-3, 3], "positive" (0, 3], "nonzero" |x| >= 0.25 (ints >= 1)."""
        shape, npd = tuple(shape), dtype.np
        if dtype is BOOL:
            if domain != "real":
                return np.ones(shape, dtype=bool)
            if self.smooth:
                return np.asarray(self.rng.random(shape) < 0.5)
            return self.draw(hnp.arrays(bool, shape))
        if not dtype.is_floating_point:
            lo, hi = (1, 3) if domain == "positive" else (-3, 3)
            if npd.kind == "u":  # uint8: no negative values
                lo = max(lo, 0)
            if self.smooth:
                a = self.rng.integers(lo, hi + 1, shape)
            else:
                a = self.draw(hnp.arrays(npd, shape, elements=st.integers(lo, hi)))
            if domain == "nonzero":
                a = np.where(a == 0, 1, a)
            return np.asarray(a, dtype=npd)
        if self.smooth:
            a = self.rng.uniform(0.25, 3.0, shape)
            if domain != "positive":
                a = a * self.rng.choice([-1.0, 1.0], shape)
            return np.asarray(a, dtype=npd)  # 0-dim: an array, not a numpy scalar
        width = 32 if dtype is F32 else 64
        fl = lambda lo, hi: st.floats(lo, hi, width=width, allow_subnormal=False)  # noqa: E731
        elements = {"real": fl(-3, 3), "positive": fl(0.125, 3),
                    "nonzero": st.one_of(fl(-3, -0.25), fl(0.25, 3))}[domain]
        return self.draw(hnp.arrays(npd, shape, elements=elements))

    def scalar(self, dtype, domain="real"):
        """A Python number of ``dtype``'s category."""
        if dtype is BOOL:
            return True if domain != "real" else self.draw(st.booleans())
        if not dtype.is_floating_point:
            lo = 1 if domain == "positive" else (0 if dtype.np.kind == "u" else -3)
            v = self.draw(st.integers(lo, 3))
            return v if v or domain == "real" else 2
        if self.smooth:
            v = float(self.rng.uniform(0.25, 3.0))
            return v if domain == "positive" else v * float(self.rng.choice([-1, 1]))
        v = self.draw(st.sampled_from([0.5, 1.5, 2.5, -0.5, -2.5]
                                      + ([0.0] if domain == "real" else [])))
        return abs(v) if domain == "positive" else v

    def operand(self, dtypes, shape, domain="real", *, scalars=True):
        """A second operand: an array of ``shape``, a 0-dim array, or a Python number, of any
        of ``dtypes`` (gradient checks: a float64 array)."""
        if self.grad:
            return self.array(shape, F64, domain)
        kind = self.draw(st.sampled_from(["tensor", "tensor", "zero-dim"]
                                         + (["scalar"] if scalars else [])))
        dtype = self.draw(st.sampled_from(dtypes))
        if kind == "scalar":
            return self.scalar(dtype, domain)
        return self.array(shape if kind == "tensor" else (), dtype, domain)

    def other_dtype(self, dtypes, dtype):
        """The dtype of a second tensor operand (the first's, for gradient checks)."""
        return F64 if self.grad else self.draw(st.sampled_from(dtypes))

    # small choices
    def choice(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def integers(self, lo, hi) -> int:
        return self.draw(st.integers(lo, hi))

    def bool(self) -> bool:
        return self.draw(st.booleans())

    def dim(self, ndim: int) -> int:
        n = max(ndim, 1)
        return self.integers(-n, n - 1)

    def dims(self, ndim: int, *, none=True):
        """None, an int, or a list of distinct dims (possibly negative)."""
        kinds = (["none"] if none else []) + ["int", "list"]
        kind = self.choice(kinds)
        if kind == "none":
            return None
        if kind == "int":
            return self.dim(ndim)
        chosen = self.draw(st.lists(st.integers(0, max(ndim, 1) - 1), unique=True,
                                    max_size=max(ndim, 1)))
        return [d - max(ndim, 1) if self.bool() else d for d in chosen]

    def dtype_kw(self, dtypes):
        return self.choice([None, *dtypes])


# ---------------------------------------------------------------- the record


@dataclass(repr=False)
class OpInfo:
    name: str  # the OP_TABLE key: "add", "max.dim", "softmax.int"
    sample: Callable  # (Gen, dtype) -> Sample
    ref: Callable | None  # numpy reference over the sample's arguments
    out_dtype: Callable  # (Sample) -> dtype, or a tuple of dtypes for several outputs
    dtypes: tuple = FLOATS
    grad: bool = True  # gradient-check it (float64 samples)
    operands: tuple | None = None  # pointwise: argument indices promoted together
    compute: Callable | None = None  # (Sample) -> compute dtype (pointwise)
    check: Callable | None = None  # (out arrays, Sample) -> None, for random ops
    rtol32: float = 1e-4
    atol32: float = 1e-5
    torch: Callable | None = None  # (torch, *args, **kwargs) -> result; default: aten op
    torch_values: bool = True  # compare values with torch (not for random ops)
    second_order: bool = False
    # (Sample) -> bool: the output's size depends on input values (nonzero, x[mask]), so the
    # meta rule raises DynamicOutputShapeException instead of giving a shape
    dynamic_shape: Callable | None = None

    def __repr__(self) -> str:
        return f"OpInfo({self.name!r})"

    @property
    def opdef(self):
        return OP_TABLE[self.name]

    @property
    def op(self):
        return OP_TABLE[self.name].overload

    def reference(self, s: Sample):
        """Run ``ref``, promotion operands first cast to the compute dtype."""
        args = list(s.args)
        if self.operands is not None:
            npd = self.compute(s).np
            for i in self.operands:
                if isinstance(args[i], np.ndarray):
                    args[i] = args[i].astype(npd)
                elif type(args[i]) is int and npd.kind in "iu":
                    args[i] = np.array(args[i]).astype(npd)  # torch wraps (uint8: -1 -> 255)
        with np.errstate(all="ignore"):
            return self.ref(*args, **s.kwargs)


OPINFOS: dict[str, OpInfo] = {}


def opinfo(name, sample, ref, out_dtype, **kw) -> OpInfo:
    if name in OPINFOS:
        raise ValueError(f"duplicate OpInfo {name}")
    info = OPINFOS[name] = OpInfo(name, sample, ref, out_dtype, **kw)
    return info


def same(i=0):
    return lambda s: dtype_of(s.args[i])


# ---------------------------------------------------------------- pointwise

PROMOTE, TO_FLOAT, TO_BOOL = "promote", "int_to_float", "always_bool"


def _compute_and_out(kind, operands):
    def promoted(s):
        return torch_result_type(*[s.args[i] for i in operands])

    compute = (lambda s: int_to_float(promoted(s))) if kind == TO_FLOAT else promoted
    out = (lambda s: BOOL) if kind == TO_BOOL else compute
    return compute, out


def pointwise(name, sample, ref, kind=PROMOTE, operands=(0,), dtypes=ALL, **kw):
    compute, out = _compute_and_out(kind, operands)
    return opinfo(name, sample, ref, kw.pop("out_dtype", out), dtypes=dtypes,
                  operands=operands, compute=kw.pop("compute", compute), **kw)


def unary_sample(domain="real", **kwargs):
    def sample(g, dt):
        shape = g.shape(min_side=1 if g.grad else 0)
        return S(g.array(shape, dt, domain), **{k: g.choice(v) for k, v in kwargs.items()})
    return sample


def binary_sample(dtypes, domain="real", *, scalars=True):
    def sample(g, dt):
        s1, s2 = g.bshapes(2)
        return S(g.array(s1, dt), g.operand(dtypes, s2, domain, scalars=scalars))
    return sample


_erf = np.vectorize(math.erf, otypes=[np.float64])

pointwise("neg", unary_sample(), np.negative, dtypes=NUMERIC)
pointwise("abs", unary_sample(), np.abs, dtypes=NUMERIC)
pointwise("sign", unary_sample(), lambda a: a if a.dtype == bool else np.sign(a))
pointwise("relu", unary_sample(), lambda a: np.maximum(a, 0).astype(a.dtype), dtypes=NUMERIC)
pointwise("exp", unary_sample(), np.exp, TO_FLOAT, second_order=True)
pointwise("log", unary_sample("positive"), np.log, TO_FLOAT, second_order=True)
pointwise("sin", unary_sample(), np.sin, TO_FLOAT, second_order=True)
pointwise("cos", unary_sample(), np.cos, TO_FLOAT)
pointwise("tanh", unary_sample(), np.tanh, TO_FLOAT, second_order=True)
pointwise("sigmoid", unary_sample(), lambda a: 1 / (1 + np.exp(-a.astype(np.float64))),
          TO_FLOAT, second_order=True)
pointwise("sqrt", unary_sample("positive"), np.sqrt, TO_FLOAT)
pointwise("rsqrt", unary_sample("positive"), lambda a: 1 / np.sqrt(a.astype(np.float64)),
          TO_FLOAT, second_order=True)
pointwise("reciprocal", unary_sample("nonzero"), lambda a: 1 / a.astype(np.float64), TO_FLOAT)
pointwise("erf", unary_sample(), _erf, TO_FLOAT, second_order=True)


def _gelu_ref(a, approximate="none"):
    a = a.astype(np.float64)
    if approximate == "tanh":
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
    return a * 0.5 * (1 + _erf(a / math.sqrt(2)))


pointwise("gelu", unary_sample(approximate=["none", "tanh"]), _gelu_ref, TO_FLOAT,
          dtypes=FLOATS, second_order=True)
pointwise("clone", unary_sample(), np.copy)
pointwise("logical_not", unary_sample(), np.logical_not, TO_BOOL, grad=False)


def _clamp_sample(g, dt):
    shapes = g.bshapes(3)
    bounds = [g.operand(NUMERIC, s, scalars=True) for s in shapes[1:]]
    if not g.grad:
        bounds = [None if g.draw(st.integers(0, 3)) == 0 else b for b in bounds]
    if bounds[0] is None and bounds[1] is None:
        bounds[0] = g.scalar(dt)
    return S(g.array(shapes[0], dt), *bounds)


def _clamp_ref(a, min=None, max=None):  # noqa: A002
    if min is not None:
        a = np.maximum(a, min)
    if max is not None:
        a = np.minimum(a, max)
    return a


pointwise("clamp", _clamp_sample, _clamp_ref, operands=(0, 1, 2), dtypes=NUMERIC)


def _to_copy_sample(g, dt):
    shape = g.shape()
    return S(g.array(shape, dt), dtype=g.choice([None, F64] if g.grad else [None, *ALL]))


opinfo("_to_copy", _to_copy_sample,
       lambda a, dtype=None: a.astype(a.dtype if dtype is None else dtype.np),
       lambda s: s.kwargs["dtype"] or dtype_of(s.args[0]), dtypes=ALL,
       torch=lambda torch, a, dtype=None: torch.ops.aten._to_copy(a, dtype=dtype))

# binary


def _alpha_sample(dtypes):
    base = binary_sample(dtypes)

    def sample(g, dt):
        s = base(g, dt)
        out = torch_result_type(*s.args)
        alphas = [1] if out is BOOL else [1, 2, -1] if not out.is_floating_point else \
            [1, 2, 0.5]
        return S(*s.args, alpha=g.choice(alphas))
    return sample


def _alpha(a, b, alpha):
    """alpha as torch converts it to an integer computation's dtype (uint8: -1 is 255)."""
    dt = np.result_type(a, b)
    return np.array(alpha).astype(dt) if type(alpha) is int and dt.kind in "iu" else alpha


pointwise("add", _alpha_sample(ALL), lambda a, b, alpha=1: a + _alpha(a, b, alpha) * b
          if alpha != 1 else a + b, operands=(0, 1))
# torch refuses to subtract bool tensors
pointwise("sub", _alpha_sample(NUMERIC), lambda a, b, alpha=1: a - _alpha(a, b, alpha) * b,
          operands=(0, 1), dtypes=NUMERIC)
pointwise("rsub", _alpha_sample(NUMERIC), lambda a, b, alpha=1: b - _alpha(a, b, alpha) * a,
          operands=(0, 1), dtypes=NUMERIC)
pointwise("mul", binary_sample(ALL), lambda a, b: a * b, operands=(0, 1), second_order=True)


def _div_sample(g, dt):
    s1, s2 = g.bshapes(2)
    a, b = g.array(s1, dt), g.operand(ALL, s2, "nonzero")
    mode = g.choice([None] if g.grad else [None, "trunc", "floor"])
    if mode is not None and torch_result_type(a, b) is BOOL:
        mode = None
    return S(a, b, rounding_mode=mode)


def _div_ref(a, b, rounding_mode=None):
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    q = np.true_divide(a, b)
    return np.trunc(q) if rounding_mode == "trunc" else q


def _div_compute(s):
    promoted = torch_result_type(s.args[0], s.args[1])
    return promoted if s.kwargs["rounding_mode"] else int_to_float(promoted)


pointwise("div", _div_sample, _div_ref, operands=(0, 1), compute=_div_compute,
          out_dtype=_div_compute, second_order=True)


def _pow_sample(g, dt):
    s1, s2 = g.bshapes(2)
    base_domain = "positive" if g.grad else "real"
    int_exp = "real" if dt.is_floating_point else "positive"  # int ** negative int: see below
    if not g.grad and g.draw(st.integers(0, 4)) == 0:  # a Python number ** a tensor
        return S(g.scalar(g.choice(NUMERIC), "positive"), g.array(s2, dt, int_exp))
    exp_dtypes = NUMERIC if dt.is_floating_point else (INT,)
    return S(g.array(s1, dt, base_domain), g.operand(exp_dtypes, s2, int_exp))


# Not sampled: integer tensor ** negative integer *tensor*.  torch computes it (2 ** -1 == 0)
# where minitorch_compile raises "Integers to negative integer powers are not allowed" (torch's
# error for a negative Python-number exponent).


pointwise("pow", _pow_sample, lambda a, b: np.power(a, b), operands=(0, 1), dtypes=NUMERIC,
          second_order=True)
pointwise("maximum", binary_sample(ALL, scalars=False), np.maximum, operands=(0, 1))
pointwise("minimum", binary_sample(ALL, scalars=False), np.minimum, operands=(0, 1))
for _name, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                   ("logical_and", np.logical_and), ("logical_or", np.logical_or)):
    pointwise(_name, binary_sample(ALL), _fn, TO_BOOL, operands=(0, 1), grad=False)


def _where_sample(g, dt):
    sc, sa, sb = g.bshapes(3)
    cond = g.array(sc, BOOL)
    return S(cond, g.array(sa, dt), g.operand(ALL, sb))


pointwise("where", _where_sample, lambda c, a, b: np.where(c, a, b), operands=(1, 2))

# ---------------------------------------------------------------- reductions


def _axis(dim, ndim):
    """numpy's axis for a torch dim argument (None / [] mean every dim)."""
    if dim is None or ndim == 0 or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return None
    return tuple(d % ndim for d in ((dim,) if isinstance(dim, int) else dim))


def _reduce_sample(dtype_kw=(), dim_none=True):
    def sample(g, dt):
        a = g.array(g.shape(), dt)
        s = S(a, g.dims(a.ndim, none=dim_none), g.bool())
        if dtype_kw and not g.grad:
            s.kwargs["dtype"] = g.choice([None, *dtype_kw])
        return s
    return sample


def _sum_out(s):
    d = s.kwargs.get("dtype")
    a = dtype_of(s.args[0])
    return d or (a if a.is_floating_point else INT)


opinfo("sum", _reduce_sample(dtype_kw=(F64,)),
       lambda a, dim, keepdim, dtype=None: np.sum(
           a.astype(_sum_out(S(a, dtype=dtype)).np), axis=_axis(dim, a.ndim), keepdims=keepdim),
       _sum_out, dtypes=ALL)
opinfo("mean", _reduce_sample(dtype_kw=(F64,)),
       lambda a, dim, keepdim, dtype=None: np.mean(
           a.astype(np.float64), axis=_axis(dim, a.ndim), keepdims=keepdim),
       lambda s: s.kwargs.get("dtype") or dtype_of(s.args[0]))
for _name, _fn in (("amax", np.amax), ("amin", np.amin)):
    opinfo(_name, _reduce_sample(dim_none=False),
           lambda a, dim, keepdim, _fn=_fn: _fn(a, axis=_axis(dim, a.ndim), keepdims=keepdim),
           same(), dtypes=ALL)
for _name, _fn, _arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
    opinfo(_name, lambda g, dt: S(g.array(g.shape(), dt)), _fn, same(), dtypes=ALL)

    def _dim_ref(a, dim, keepdim=False, _fn=_fn, _arg=_arg):
        ax = None if a.ndim == 0 else dim % a.ndim
        idx = np.asarray(_arg(a, axis=ax, keepdims=keepdim) if ax is not None else 0)
        return _fn(a, axis=ax, keepdims=keepdim), idx

    opinfo(f"{_name}.dim", lambda g, dt: (lambda a: S(a, g.dim(a.ndim), g.bool()))(
               g.array(g.shape(), dt)),
           _dim_ref, lambda s: (dtype_of(s.args[0]), INT), dtypes=ALL)


def _argmax_ref(fn):
    def ref(a, dim=None, keepdim=False):
        if dim is None or a.ndim == 0:
            i = np.asarray(fn(a.reshape(-1)))
            return i.reshape((1,) * a.ndim) if keepdim else i
        return np.asarray(fn(a, axis=dim % a.ndim, keepdims=keepdim))
    return ref


for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin)):
    opinfo(_name, lambda g, dt: (lambda a: S(a, g.choice([None, g.dim(a.ndim)]), g.bool()))(
               g.array(g.shape(), dt)),
           _argmax_ref(_fn), lambda s: INT, dtypes=NUMERIC, grad=False)


def _var_sample(g, dt):
    # gradient checks: at least 2 distinct values per reduction, so std > 0 and N - correction
    # > 0 (at std == 0 torch's std_backward returns 0; the sqrt decomposition gives nan)
    a = g.array(g.shape(min_dims=1, min_side=2) if g.grad else g.shape(), dt)
    corrections = [None, 0, 1] if g.grad else [None, 0, 1, 2]
    return S(a, g.dims(a.ndim), correction=g.choice(corrections), keepdim=g.bool())


def _var_ref(a, dim=None, correction=None, keepdim=False):
    # squares are summed in the input's precision, as the decomposition does: in float32 the
    # square of a value near the smallest normal underflows to 0 (0/0 with no degrees of
    # freedom is then nan, not inf)
    a = a.astype(np.float64) if a.dtype == np.float64 else a.astype(np.float32)
    ax = _axis(dim, a.ndim)
    n = a.size if ax is None else int(np.prod([a.shape[d] for d in ax]))
    with np.errstate(all="ignore"):
        centered = a - np.mean(a, axis=ax, keepdims=True)
        sq = np.sum(centered * centered, axis=ax, keepdims=keepdim)
        return sq.astype(np.float64) / max(n - (1 if correction is None else correction), 0)


opinfo("var", _var_sample, _var_ref, same())
opinfo("std", _var_sample, lambda *a, **k: np.sqrt(_var_ref(*a, **k)), same())
for _name, _fn in (("all", np.all), ("any", np.any)):  # dim=[] reduces nothing here
    opinfo(_name, _reduce_sample(),
           lambda a, dim, keepdim, _fn=_fn: _fn(a, axis=() if dim == [] else _axis(dim, a.ndim),
                                                keepdims=keepdim),
           lambda s: mtc.uint8 if dtype_of(s.args[0]) is mtc.uint8 else BOOL, dtypes=ALL,
           grad=False)  # torch keeps uint8 for uint8 inputs

# ---------------------------------------------------------------- views and shapes


def _factor_shape(g, numel):
    """A random shape with ``numel`` elements, maybe with one -1."""
    dims, left = [], numel
    for _ in range(g.integers(0, 3)):
        divisors = [d for d in range(1, left + 1) if left % d == 0] or [1]
        d = g.choice(divisors)
        dims.append(d)
        left //= d
    dims.append(left)
    dims = [d for d in dims if d != 1 or g.bool()] or [left]
    if numel and g.bool():
        dims[g.integers(0, len(dims) - 1)] = -1
    return dims


def _reshape_sample(g, dt):
    a = g.array(g.shape(), dt)
    return S(a, _factor_shape(g, a.size))


opinfo("view", _reshape_sample, lambda a, size: a.reshape(size), same(), dtypes=ALL)
opinfo("reshape", _reshape_sample, lambda a, size: a.reshape(size), same(), dtypes=ALL)


def _flatten_sample(g, dt):
    a = g.array(g.shape(), dt)
    n = max(a.ndim, 1)
    s, e = sorted((g.integers(0, n - 1), g.integers(0, n - 1)))
    return S(a, s - n if g.bool() else s, e - n if g.bool() else e)


def _flatten_ref(a, s, e):
    if a.ndim == 0:
        return a.reshape(1)
    s, e = s % a.ndim, e % a.ndim
    return a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1:]) if a.size else \
        a.reshape(a.shape[:s] + (int(np.prod(a.shape[s:e + 1])),) + a.shape[e + 1:])


opinfo("flatten", _flatten_sample, _flatten_ref, same(), dtypes=ALL)
opinfo("transpose", lambda g, dt: (lambda a: S(a, g.dim(a.ndim), g.dim(a.ndim)))(
           g.array(g.shape(), dt)),
       lambda a, d0, d1: np.swapaxes(a, d0, d1) if a.ndim else a, same(), dtypes=ALL)


def _permute_sample(g, dt):
    a = g.array(g.shape(), dt)
    perm = g.draw(st.permutations(range(a.ndim)))
    return S(a, [d - a.ndim if g.bool() else d for d in perm])


opinfo("permute", _permute_sample, lambda a, dims: np.transpose(a, [d % a.ndim for d in dims])
       if a.ndim else a, same(), dtypes=ALL)
opinfo("t", lambda g, dt: S(g.array(g.shape(max_dims=2), dt)), lambda a: a.T, same(),
       dtypes=ALL)
opinfo("unsqueeze", lambda g, dt: (lambda a: S(a, g.integers(-a.ndim - 1, a.ndim)))(
           g.array(g.shape(), dt)),
       lambda a, d: np.expand_dims(a, d % (a.ndim + 1)), same(), dtypes=ALL)


def _squeeze_ref(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    dims = [d % max(a.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)]
    return np.squeeze(a, tuple(d for d in dims if a.ndim and a.shape[d] == 1))


opinfo("squeeze", lambda g, dt: (lambda a: S(a, g.dims(a.ndim)))(
           g.array(g.shape(max_side=2), dt)),
       _squeeze_ref, same(), dtypes=ALL,
       torch=lambda torch, a, dim=None: a.squeeze() if dim is None else a.squeeze(dim))


def _expand_sample(g, dt):
    a = g.array(g.shape(max_dims=2), dt)
    lead = [g.integers(1, 3) for _ in range(g.integers(0, 2))]
    size = [(g.integers(1, 3) if s == 1 else s) if g.bool() else -1 for s in a.shape]
    return S(a, lead + size)


def _expand_ref(a, size):
    lead = len(size) - a.ndim
    return np.broadcast_to(a, [a.shape[i - lead] if s == -1 else s for i, s in enumerate(size)])


opinfo("expand", _expand_sample, _expand_ref, same(), dtypes=ALL)


def _sum_to_size_sample(g, dt):
    big, small = g.bshapes(2)
    full = np.broadcast_shapes(big, small)
    return S(g.array(full, dt), list(small))


def _sum_to_size_ref(a, size):
    lead = a.ndim - len(size)
    out = a.sum(axis=tuple(range(lead))) if lead else a
    axes = tuple(i for i, s in enumerate(size) if s == 1 and out.shape[i] != 1)
    return out.sum(axis=axes, keepdims=True) if axes else out


opinfo("sum_to_size", _sum_to_size_sample, _sum_to_size_ref, same(), dtypes=FLOATS)


def _slice_args(g, a):
    dim = g.dim(a.ndim)
    n = a.shape[dim]
    bound = st.one_of(st.none(), st.integers(-n - 1, n + 1))
    return dim, g.draw(bound), g.draw(bound), g.integers(1, 3)


def _slice_ref(a, dim, start, end, step):
    return a[(slice(None),) * (dim % a.ndim) + (slice(start, end, step),)]


opinfo("slice.Tensor", lambda g, dt: (lambda a: S(a, *_slice_args(g, a)))(
           g.array(g.shape(min_dims=1), dt)),
       _slice_ref, same(), dtypes=ALL)


def _select_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    dim = g.dim(a.ndim)
    return S(a, dim, g.integers(-a.shape[dim], a.shape[dim] - 1))


opinfo("select.int", _select_sample,
       lambda a, dim, i: a[(slice(None),) * (dim % a.ndim) + (i,)], same(), dtypes=ALL)


def _slice_backward_sample(g, dt):
    sizes = g.shape(min_dims=1)
    dim, start, end, step = _slice_args(g, np.empty(sizes))
    sliced = _slice_ref(np.empty(sizes), dim, start, end, step).shape
    return S(g.array(sliced, dt), list(sizes), dim, start, end, step)


def _slice_backward_ref(grad, sizes, dim, start, end, step):
    out = np.zeros(sizes, dtype=grad.dtype)
    out[(slice(None),) * (dim % len(sizes)) + (slice(start, end, step),)] = grad
    return out


def _torch_slice_backward(torch, grad, sizes, dim, start, end, step):
    n = sizes[dim]
    start = 0 if start is None else start
    end = n if end is None else end
    return torch.ops.aten.slice_backward(grad, sizes, dim, start, end, step)


opinfo("slice_backward", _slice_backward_sample, _slice_backward_ref, same(),
       torch=_torch_slice_backward)


def _select_backward_sample(g, dt):
    s = _select_sample(g, dt)
    a, dim, index = s.args
    grad = g.array(np.take(a, index, axis=dim).shape, dt)
    return S(grad, list(a.shape), dim, index)


def _select_backward_ref(grad, sizes, dim, index):
    out = np.zeros(sizes, dtype=grad.dtype)
    out[(slice(None),) * (dim % len(sizes)) + (index,)] = grad
    return out


opinfo("select_backward", _select_backward_sample, _select_backward_ref, same())
opinfo("detach", lambda g, dt: S(g.array(g.shape(), dt)), np.copy, same(), dtypes=ALL,
       grad=False)
opinfo("alias", lambda g, dt: S(g.array(g.shape(), dt)), np.copy, same(), dtypes=ALL)
opinfo("contiguous", lambda g, dt: S(g.array(g.shape(), dt)), np.copy, same(), dtypes=ALL)


def _copy_sample(g, dt):
    dst, src = g.bshapes(2)
    dst = np.broadcast_shapes(dst, src)
    return S(g.array(dst, dt), g.array(src, g.other_dtype(ALL, dt)))


opinfo("copy_", _copy_sample,
       lambda dst, src: np.broadcast_to(src, dst.shape).astype(dst.dtype), same(), dtypes=ALL)


def _cat_sample(g, dt):
    shape = list(g.shape(min_dims=1))
    dim = g.dim(len(shape))
    tensors = []
    for i in range(g.integers(1, 3)):
        shape[dim] = g.integers(0 if i else 1, 3)
        tensors.append(g.array(shape, dt if i == 0 else g.other_dtype(ALL, dt)))
    return S(tensors, dim)


opinfo("cat", _cat_sample,
       lambda ts, dim: np.concatenate(ts, axis=dim % ts[0].ndim).astype(
           torch_result_type(*ts).np),
       lambda s: torch_result_type(*s.args[0]), dtypes=ALL)


def _stack_sample(g, dt):
    shape = g.shape()
    ts = [g.array(shape, dt if i == 0 else g.other_dtype(ALL, dt))
          for i in range(g.integers(1, 3))]
    return S(ts, g.integers(-len(shape) - 1, len(shape)))


opinfo("stack", _stack_sample,
       lambda ts, dim: np.stack(ts, axis=dim % (ts[0].ndim + 1)).astype(
           torch_result_type(*ts).np),
       lambda s: torch_result_type(*s.args[0]), dtypes=ALL)


def _split_sample(g, dt):
    a = g.array(g.shape(min_dims=1, min_side=1 if g.grad else 0), dt)
    dim = g.dim(a.ndim)
    n = a.shape[dim]
    if g.bool():
        return S(a, g.integers(1, n + 1), dim)
    cuts = sorted(g.draw(st.lists(st.integers(0, n), max_size=3)))
    return S(a, [b - e for b, e in zip(cuts + [n], [0] + cuts)], dim)


def _split_ref(a, size, dim=0):
    n = a.shape[dim]
    sizes = [min(size, n - i) for i in range(0, n, size)] if isinstance(size, int) else size
    return tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim))


def _tuple_dtypes(s, n):
    return (dtype_of(s.args[0]),) * n


opinfo("split", _split_sample, _split_ref,
       lambda s: _tuple_dtypes(s, len(_split_ref(*s.args))), dtypes=ALL)


def _chunk_ref(a, chunks, dim=0):
    n = a.shape[dim]
    return _split_ref(a, -(-n // chunks) if n else [0] * chunks, dim)


opinfo("chunk", lambda g, dt: (lambda a: S(a, g.integers(1, 4), g.dim(a.ndim)))(
           g.array(g.shape(min_dims=1, min_side=1 if g.grad else 0), dt)),
       _chunk_ref, lambda s: _tuple_dtypes(s, len(_chunk_ref(*s.args))), dtypes=ALL)
opinfo("unbind.int", lambda g, dt: (lambda a: S(a, g.dim(a.ndim)))(
           g.array(g.shape(min_dims=1, min_side=1 if g.grad else 0), dt)),
       lambda a, dim: tuple(np.moveaxis(a, dim, 0)),
       lambda s: _tuple_dtypes(s, s.args[0].shape[s.args[1]]), dtypes=ALL)

# ---------------------------------------------------------------- matrix products


def _mm_sample(batch=False):
    def sample(g, dt):
        n, k, m = (g.integers(1, g.max_side) for _ in range(3))
        b = (g.integers(1, 3),) if batch else ()
        return S(g.array(b + (n, k), dt), g.array(b + (k, m), dt))
    return sample


opinfo("mm", _mm_sample(), np.matmul, same(), dtypes=NUMERIC)
opinfo("bmm", _mm_sample(batch=True), np.matmul, same(), dtypes=NUMERIC)


def _matmul_sample(g, dt):
    n, k, m = (g.integers(1, g.max_side) for _ in range(3))
    ba, bb = g.bshapes(2, max_dims=2)
    a_shape = (k,) if g.draw(st.integers(0, 3)) == 0 else tuple(ba) + (n, k)
    b_shape = (k,) if g.draw(st.integers(0, 3)) == 0 else tuple(bb) + (k, m)
    return S(g.array(a_shape, dt), g.array(b_shape, dt))


opinfo("matmul", _matmul_sample, np.matmul, same(), dtypes=NUMERIC)


def _linear_sample(g, dt):
    lead = g.shape(max_dims=2)
    i, o = g.integers(1, 3), g.integers(1, 3)
    bias = g.choice(["none", "vector", "scalar"])
    b = None if bias == "none" else g.array((o,) if bias == "vector" else (), dt)
    return S(g.array(tuple(lead) + (i,), dt), g.array((o, i), dt), b)


opinfo("linear", _linear_sample, lambda x, w, b=None: x @ w.T + (0 if b is None else b), same())

# ---------------------------------------------------------------- neural-network ops


def _softmax_sample(g, dt):
    a = g.array(g.shape(), dt)
    return S(a, g.dim(a.ndim), g.choice([None, F64]) if not g.grad else None)


def _log_softmax_ref(a, dim, dtype=None):
    a = a.astype(np.float64)
    ax = dim % a.ndim if a.ndim else None
    shifted = a - np.max(a, axis=ax, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=ax, keepdims=True))


opinfo("softmax.int", _softmax_sample, lambda *a: np.exp(_log_softmax_ref(*a)),
       lambda s: s.args[2] or dtype_of(s.args[0]))
opinfo("log_softmax.int", _softmax_sample, _log_softmax_ref,
       lambda s: s.args[2] or dtype_of(s.args[0]))


def _norm_prim_sample(g, dt):
    a = g.array(g.shape(), dt)
    return S(a, g.dim(a.ndim), False)


opinfo("_softmax", _norm_prim_sample,
       lambda a, dim, h: np.exp(_log_softmax_ref(a, dim)).astype(a.dtype), same())
opinfo("_log_softmax", _norm_prim_sample,
       lambda a, dim, h: _log_softmax_ref(a, dim).astype(a.dtype), same())


def _norm_backward_sample(g, dt):
    shape = g.shape()
    return S(g.array(shape, dt), g.array(shape, dt), g.dim(len(shape)), dt)


def _axis_of(a, dim):
    return dim % a.ndim if a.ndim else None


opinfo("_softmax_backward_data", _norm_backward_sample,
       lambda gr, y, dim, dt: y * (gr - np.sum(gr * y, axis=_axis_of(y, dim), keepdims=True)),
       lambda s: s.args[3])
opinfo("_log_softmax_backward_data", _norm_backward_sample,
       lambda gr, y, dim, dt: gr - np.exp(y) * np.sum(gr, axis=_axis_of(y, dim), keepdims=True),
       lambda s: s.args[3])


def _layer_norm_sample(g, dt):
    a = g.array(g.shape(min_dims=1), dt)
    k = g.integers(1, a.ndim)
    norm = list(a.shape[a.ndim - k:])
    w = g.array(norm, dt) if g.bool() else None
    b = g.array(norm, dt) if g.bool() else None
    return S(a, norm, w, b, g.choice([1e-5, 0.1]))


def _layer_norm_ref(a, norm, w=None, b=None, eps=1e-5):
    x = a.astype(np.float64)
    ax = tuple(range(a.ndim - len(norm), a.ndim))
    mu = x.mean(axis=ax, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=ax, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


opinfo("layer_norm", _layer_norm_sample, _layer_norm_ref, same(), atol32=1e-3, rtol32=1e-3,
       second_order=True)


def _stats(a, norm, eps):
    x = a.astype(np.float64)
    ax = tuple(range(a.ndim - len(norm), a.ndim))
    mu = x.mean(axis=ax, keepdims=True)
    return mu, 1 / np.sqrt(((x - mu) ** 2).mean(axis=ax, keepdims=True) + eps)


def _native_layer_norm_ref(a, norm, w=None, b=None, eps=1e-5):
    return (_layer_norm_ref(a, norm, w, b, eps), *_stats(a, norm, eps))


opinfo("native_layer_norm", _layer_norm_sample, _native_layer_norm_ref,
       lambda s: (dtype_of(s.args[0]),) * 3, atol32=1e-3, rtol32=1e-3, second_order=True)


def _native_layer_norm_backward_sample(g, dt):
    a, norm, w, b, eps = _layer_norm_sample(g, dt).args
    mean, rstd = (m.astype(dt.np) for m in _stats(a, norm, eps))
    return S(g.array(a.shape, dt), a, norm, mean, rstd, w, b,
             [g.bool(), g.bool(), g.bool()])


def _native_layer_norm_backward_ref(gy, a, norm, mean, rstd, w, b, mask):
    x = a.astype(np.float64)
    axis = a.ndim - len(norm)
    inner, outer = tuple(range(axis, a.ndim)), tuple(range(axis))
    n = int(np.prod(a.shape[axis:]))
    x_hat = (x - mean) * rstd
    g = gy * (1 if w is None else w)
    empty = np.empty((0,))
    return ((rstd / n) * (n * g - g.sum(inner, keepdims=True)
                          - x_hat * (g * x_hat).sum(inner, keepdims=True)) if mask[0] else empty,
            (gy * x_hat).sum(outer) if mask[1] and w is not None else empty,
            gy.sum(outer) if mask[2] and b is not None else empty)


def _torch_native_layer_norm_backward(torch, gy, a, norm, mean, rstd, w, b, mask):
    """torch's undefined (None) gradients as our empty ones."""
    present = [True, w is not None, b is not None]
    w = torch.ones(norm, dtype=a.dtype) if w is None else w  # (torch fails without both)
    b = torch.zeros(norm, dtype=a.dtype) if b is None else b
    outs = torch.ops.aten.native_layer_norm_backward(gy, a, norm, mean, rstd, w, b,
                                                     [True, True, True])
    return tuple(o if m and p else torch.empty((0,), dtype=a.dtype)
                 for o, m, p in zip(outs, mask, present))


# no finite-difference check: as torch's layer_norm_double_backward, the derivative treats
# mean and rstd as the functions of input they are (native_layer_norm's second-order check
# above covers it); a finite difference holds them fixed
opinfo("native_layer_norm_backward", _native_layer_norm_backward_sample,
       _native_layer_norm_backward_ref, lambda s: (dtype_of(s.args[1]),) * 3, grad=False,
       atol32=1e-3, rtol32=1e-3, torch=_torch_native_layer_norm_backward)

_REDUCTIONS = ["none", "mean", "sum"]


def _reduce_ref(loss, reduction):
    return {"none": loss, "mean": np.mean(loss), "sum": np.sum(loss)}[reduction]


def _torch_f(fn_name, order):
    """Call ``torch.nn.functional.<fn_name>`` with the sample's positional args as keywords."""
    def call(torch, *args):
        return getattr(torch.nn.functional, fn_name)(**dict(zip(order, args)))
    return call


opinfo("mse_loss", lambda g, dt: (lambda shape: S(g.array(shape, dt), g.array(shape, dt),
                                                  g.choice(_REDUCTIONS)))(g.shape()),
       lambda a, b, r: _reduce_ref((a.astype(np.float64) - b) ** 2, r), same(),
       torch=_torch_f("mse_loss", ["input", "target", "reduction"]))


def _mse_backward_sample(g, dt):
    shape = g.shape()
    r = g.choice([0, 1, 2])
    return S(g.array(shape if r == 0 else (), dt), g.array(shape, dt), g.array(shape, dt), r)


def _mse_backward_ref(grad, x, y, reduction):
    d = x.astype(np.float64) - y
    return (2.0 / max(d.size, 1) if reduction == 1 else 2.0) * d * grad


opinfo("mse_loss_backward", _mse_backward_sample, _mse_backward_ref, same(1),
       torch=lambda torch, *a: torch.ops.aten.mse_loss_backward(*a))


def _class_input(g, dt):
    """An (N, C, d...) or (C,) input and a matching class-index target."""
    c = g.integers(1, 3)
    shape = g.choice([(c,), (g.integers(1, 3), c), (g.integers(1, 3), c, g.integers(1, 2))])
    target_shape = shape[:1] + shape[2:] if len(shape) > 1 else ()
    target = np.asarray(g.rng.integers(0, c, target_shape)) if g.smooth else \
        g.draw(hnp.arrays(np.int64, target_shape, elements=st.integers(0, c - 1)))
    return g.array(shape, dt), target.astype(np.int64), c


def _nll_sample(g, dt):
    x, target, c = _class_input(g, dt)
    # torch refuses a class weight that requires grad (nll_loss_forward is not
    # differentiable with respect to it), so the gradient checks leave it out
    w = g.array((c,), dt, "positive") if g.bool() and not g.grad else None
    ignore = g.choice([-100, 0])
    return S(x, target, w, g.choice(_REDUCTIONS), ignore)


def _nll_ref(x, target, weight=None, reduction="mean", ignore_index=-100):
    x = x.astype(np.float64)
    xc = np.moveaxis(x, 0 if x.ndim == 1 else 1, -1)  # classes last
    w = np.ones(xc.shape[-1]) if weight is None else weight.astype(np.float64)
    picked = np.take_along_axis(xc, target[..., None], -1)[..., 0]
    wt = np.where(target == ignore_index, 0.0, w[target])
    loss = -picked * wt
    if reduction == "mean":
        with np.errstate(all="ignore"):
            return np.sum(loss) / np.sum(wt)
    return _reduce_ref(loss, reduction)


opinfo("nll_loss", _nll_sample, _nll_ref, same(),
       torch=_torch_f("nll_loss", ["input", "target", "weight", "reduction", "ignore_index"]))


def _nll_2d_sample(g, dt):
    """``nll_loss_forward``'s own arguments: a (C,) or (N, C) input, the enum reduction."""
    x, target, c = _class_input(g, dt)
    if x.ndim == 3:
        x, target = x[..., 0], target[..., 0]
    w = g.array((c,), dt, "positive") if g.bool() and not g.grad else None
    return S(x, target, w, g.choice([0, 1, 2]), g.choice([-100, 0]))


_ENUM = ["none", "mean", "sum"]


def _nll_forward_ref(x, target, weight, reduction, ignore_index):
    wt = np.ones(x.shape[-1]) if weight is None else weight.astype(np.float64)
    total = np.sum(np.where(target == ignore_index, 0.0, wt[target]))
    out = _nll_ref(x, target, weight, _ENUM[reduction], ignore_index)
    return out, (np.zeros(()) if reduction == 0 else total)


opinfo("nll_loss_forward", _nll_2d_sample, _nll_forward_ref,
       lambda s: (dtype_of(s.args[0]), dtype_of(s.args[0])),
       torch=lambda torch, x, t, w, r, i: tuple(
           o if r else o * (k == 0) for k, o in enumerate(
               torch.ops.aten.nll_loss_forward(x, t, w, r, i))))


def _nll_backward_sample(g, dt):
    x, target, w, r, ignore = _nll_2d_sample(g, dt).args
    _, total = _nll_forward_ref(x, target, w, r, ignore)
    gshape = x.shape[:1] if r == 0 and x.ndim == 2 else ()
    return S(g.array(gshape, dt), x, target, w, r, ignore,
             np.asarray(max(float(total), 1.0), dtype=dt.np))


def _nll_backward_ref(grad, x, target, weight, reduction, ignore_index, total_weight):
    out = np.zeros(x.shape)
    xc = out.reshape(-1, x.shape[-1])
    wt = np.ones(x.shape[-1]) if weight is None else weight.astype(np.float64)
    g = np.broadcast_to(np.asarray(grad, np.float64).reshape(-1) if reduction == 0 else grad,
                        (xc.shape[0],))
    for n, t in enumerate(np.asarray(target).reshape(-1)):
        if t != ignore_index:
            xc[n, t] = -wt[t] * g[n] / (total_weight if reduction == 1 else 1.0)
    return out


opinfo("nll_loss_backward", _nll_backward_sample, _nll_backward_ref, same(1),
       torch=lambda torch, *a: torch.ops.aten.nll_loss_backward(*a))


def _cross_entropy_sample(g, dt):
    x, target, c = _class_input(g, dt)
    probabilities = g.bool()
    if probabilities:
        p = g.array(x.shape, dt, "positive")
        cls = 0 if x.ndim == 1 else 1
        target = (p / p.sum(axis=cls, keepdims=True)).astype(dt.np)
    w = g.array((c,), dt, "positive") if g.bool() and (probabilities or not g.grad) else None
    ignore = -100 if probabilities else g.choice([-100, 0])  # torch: no ignore_index for those
    return S(x, target, w, g.choice(_REDUCTIONS), ignore, g.choice([0.0, 0.25]))


def _cross_entropy_ref(x, target, weight=None, reduction="mean", ignore_index=-100,
                       label_smoothing=0.0):
    """The formulas of ``torch.nn.CrossEntropyLoss``'s docstring."""
    cls = 0 if x.ndim == 1 else 1
    logp = np.moveaxis(_log_softmax_ref(x, cls), cls, -1)  # classes last
    c = logp.shape[-1]
    w = np.ones(c) if weight is None else weight.astype(np.float64)
    if target.dtype.kind == "f":
        t = np.moveaxis(target.astype(np.float64), cls, -1)
        t = t * (1 - label_smoothing) + label_smoothing / c
        return _reduce_ref(-(w * logp * t).sum(-1), reduction)
    valid = target != ignore_index
    safe = np.where(valid, target, 0)
    wt = np.where(valid, w[safe], 0.0)
    nll = -np.take_along_axis(logp, safe[..., None], -1)[..., 0] * wt
    smooth = -(w * logp).sum(-1) * valid
    with np.errstate(all="ignore"):
        if reduction == "mean":
            nll_r = nll.sum() / wt.sum()
            smooth_r = smooth.sum() / wt.sum()
        else:
            nll_r, smooth_r = _reduce_ref(nll, reduction), _reduce_ref(smooth, reduction)
    return (1 - label_smoothing) * nll_r + label_smoothing / c * smooth_r


opinfo("cross_entropy_loss", _cross_entropy_sample, _cross_entropy_ref, same(),
       torch=_torch_f("cross_entropy", ["input", "target", "weight", "reduction",
                                        "ignore_index", "label_smoothing"]))


def _dropout_check(out, s):
    (y,), (x, p, train) = out, s.args
    if not train or p == 0:
        np.testing.assert_array_equal(y, x)
    elif p == 1:
        np.testing.assert_array_equal(y, np.zeros_like(x))
    else:
        kept = y != 0
        np.testing.assert_allclose(y[kept], (x / (1 - p))[kept], rtol=1e-5)


opinfo("dropout", lambda g, dt: S(g.array(g.shape(), dt, "nonzero"), g.choice([0.0, 0.25, 1.0]),
                                  g.bool()),
       None, same(), check=_dropout_check, torch_values=False)


def _embedding_sample(g, dt):
    v, d = g.integers(1, 4), g.integers(1, 3)
    idx_shape = g.shape(max_dims=2)
    idx = np.asarray(g.rng.integers(0, v, idx_shape)) if g.smooth else \
        g.draw(hnp.arrays(np.int64, idx_shape, elements=st.integers(0, v - 1)))
    # padding_idx's row gets no gradient by definition: not what finite differences see
    return S(g.array((v, d), dt), idx.astype(np.int64), g.choice([-1] if g.grad else [-1, 0]))


opinfo("embedding", _embedding_sample, lambda w, idx, padding_idx=-1: w[idx], same())


def _embedding_backward_sample(g, dt):
    w, idx, _ = _embedding_sample(g, dt).args
    return S(g.array(idx.shape + (w.shape[1],), dt), idx, w.shape[0], g.choice([-1, 0]))


def _embedding_backward_ref(grad, idx, num_weights, padding_idx):
    out = np.zeros((num_weights, grad.shape[-1]), dtype=np.float64)
    np.add.at(out, idx.reshape(-1), grad.reshape(-1, grad.shape[-1]))
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


opinfo("embedding_dense_backward", _embedding_backward_sample, _embedding_backward_ref,
       same(), torch=lambda torch, *a: torch.ops.aten.embedding_dense_backward(*a, False))

# ---------------------------------------------------------------- creation


def _size(g):
    return list(g.shape(max_side=3))


opinfo("full", lambda g, dt: S(_size(g), g.scalar(dt), dtype=g.choice([None, dt])),
       lambda size, v, dtype=None: np.full(size, v),
       lambda s: s.kwargs["dtype"] or torch_result_type(s.args[1]), dtypes=ALL, grad=False)
opinfo("zeros", lambda g, dt: S(_size(g), dtype=g.choice([None, dt])),
       lambda size, dtype=None: np.zeros(size), lambda s: s.kwargs["dtype"] or F32,
       dtypes=ALL, grad=False)
opinfo("ones", lambda g, dt: S(_size(g), dtype=g.choice([None, dt])),
       lambda size, dtype=None: np.ones(size), lambda s: s.kwargs["dtype"] or F32,
       dtypes=ALL, grad=False)
opinfo("empty", lambda g, dt: S(_size(g), dtype=g.choice([None, dt])), None,
       lambda s: s.kwargs["dtype"] or F32, dtypes=ALL, grad=False, check=lambda out, s: None,
       torch_values=False)


def _arange_sample(g, dt):
    num = (lambda: g.integers(-4, 4)) if not dt.is_floating_point else \
        (lambda: g.choice([-1.5, -0.5, 0.0, 0.25, 1.0, 2.5, 3.0]))
    start, end = num(), num()
    step = g.choice([1, 2, 3] if not dt.is_floating_point else [0.5, 1.0, 0.75])
    if end < start:
        step = -step
    return S(start, end, step)


def _arange_ref(start, end, step=1):
    n = max(math.ceil((end - start) / step), 0)
    return start + np.arange(n) * step


opinfo("arange", _arange_sample, _arange_ref,
       lambda s: torch_result_type(*s.args), dtypes=(INT, F32), grad=False)


def _random_check(low, high):
    def check(out, s):
        (y,) = out
        assert np.all(np.isfinite(y)) and np.all(y >= low) and np.all(y < high)
    return check


opinfo("randn", lambda g, dt: S(_size(g), dtype=g.choice([None, dt])), None,
       lambda s: s.kwargs["dtype"] or F32, grad=False, check=_random_check(-np.inf, np.inf),
       torch_values=False)
opinfo("rand", lambda g, dt: S(_size(g), dtype=g.choice([None, dt])), None,
       lambda s: s.kwargs["dtype"] or F32, grad=False, check=_random_check(0.0, 1.0),
       torch_values=False)


def _like_sample(dtypes):
    def sample(g, dt):
        return S(g.array(g.shape(), dt), dtype=g.choice([None, *dtypes]))
    return sample


def _like_out(s):
    return s.kwargs["dtype"] or dtype_of(s.args[0])


opinfo("zeros_like", _like_sample(ALL), lambda a, dtype=None: np.zeros(a.shape), _like_out,
       dtypes=ALL, grad=False)
opinfo("ones_like", _like_sample(ALL), lambda a, dtype=None: np.ones(a.shape), _like_out,
       dtypes=ALL, grad=False)
opinfo("empty_like", _like_sample(ALL), None, _like_out, dtypes=ALL, grad=False,
       check=lambda out, s: None, torch_values=False)
opinfo("randn_like", _like_sample(FLOATS), None, _like_out, grad=False,
       check=_random_check(-np.inf, np.inf), torch_values=False)
opinfo("rand_like", _like_sample(FLOATS), None, _like_out, grad=False,
       check=_random_check(0.0, 1.0), torch_values=False)
def _full_like_sample(g, dt):
    dtype = g.choice([None, *ALL])
    # the fill value must fit the result's dtype (torch raises for uint8 and -1)
    return S(g.array(g.shape(), dt), g.scalar(dtype if dtype is not None and
                                              dtype.np.kind == "u" else dt), dtype=dtype)


opinfo("full_like", _full_like_sample,
       lambda a, v, dtype=None: np.full(a.shape, v), _like_out, dtypes=ALL, grad=False)


def _class_indices_sample(g, dt):
    c = g.integers(1, 5)
    target = g.draw(hnp.arrays(np.int64, g.shape(), elements=st.sampled_from(
        list(range(c)) + [-100])))
    return S(target, c, -100)


opinfo("_check_class_indices", _class_indices_sample, lambda t, c, ignore: t, same(),
       dtypes=(INT,), grad=False, torch=lambda torch, t, c, ignore: t.clone())


def _assert_sample(g, dt):
    # a true one-element condition (a false one raises AssertionError: test_dynamo_training)
    return S(np.ones(g.choice([(), (1,)]), dtype=dt.np), "cond")


opinfo("_assert_async", _assert_sample, lambda t, msg="": np.zeros((), np.bool_),
       lambda s: BOOL, dtypes=(BOOL, INT, F32), grad=False, torch_values=False,
       # torch's returns None: it must not raise either; the result is our placeholder
       torch=lambda torch, t, msg="": (torch._assert_async(t, msg),
                                      torch.zeros((), dtype=torch.bool))[1])


# ---------------------------------------------------------------- helpers for the tests


def inplace_variants():
    """(in-place OpDef name, OpInfo of its functional op) for every ``op_`` in the table."""
    out = []
    for name, d in OP_TABLE.items():
        if d.functional is not None:
            out.append((name, OPINFOS[d.functional.opdef.name]))
    return out


def map_sample(s: Sample, fn) -> Sample:
    """Apply ``fn`` to every array of a sample (inside ``Tensor[]`` lists too)."""
    def conv(v):
        if isinstance(v, np.ndarray):
            return fn(v)
        if isinstance(v, list) and any(isinstance(a, np.ndarray) for a in v):
            return [fn(a) if isinstance(a, np.ndarray) else a for a in v]  # Tensor?[]: Nones
        return v
    return Sample(tuple(conv(a) for a in s.args), {k: conv(v) for k, v in s.kwargs.items()})


def float_leaves(s: Sample) -> list:
    """The sample's floating arrays, in order: the inputs a gradient check differentiates."""
    leaves = []
    map_sample(s, lambda a: leaves.append(a) if a.dtype.kind == "f" else None)
    return leaves


def rebuild(s: Sample, tensors, make) -> Sample:
    """The sample with its floating arrays replaced by ``tensors`` (in order) and every other
    array converted by ``make``."""
    it = iter(tensors)
    return map_sample(s, lambda a: next(it) if a.dtype.kind == "f" else make(a))


def call(info: OpInfo, s: Sample, device=None):
    """Run ``info``'s op on sample ``s`` (tensors made on ``device``)."""
    m = map_sample(s, lambda a: mtc.tensor(a.copy(order="C")) if device is None
                   else mtc.tensor(a.copy(order="C")).to(device))
    if device is not None and any(a.name == "device" for a in info.op.schema.arguments):
        m.kwargs["device"] = device
    return info.op(*m.args, **m.kwargs)


def as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def expected_list(ref_out) -> list:
    return [np.asarray(r) for r in (ref_out if isinstance(ref_out, tuple) else (ref_out,))]


def dtypes_list(info: OpInfo, s: Sample, n: int) -> list:
    d = info.out_dtype(s)
    return list(d) if isinstance(d, tuple) else [d] * n


from . import opinfo_indexing, opinfo_more, opinfo_tensorops  # noqa: E402,F401,I001 (register their OpInfos)
from . import opinfo_nn, opinfo_nn_more  # noqa: E402,F401,I001 (the nn layer ops)
from . import opinfo_math  # noqa: E402,F401,I001 (rounding, trigonometric, exp2, log10, erfc)
