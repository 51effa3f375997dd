"""Sampling ops: ``bernoulli``, ``normal``, ``multinomial``.

Mirrors ``aten/src/ATen/native/Distributions.cpp``.  The samplers are ``RANDOM`` primitives
drawing torch's bits from ``_random.py`` (``manual_seed(0)`` gives torch's numbers):

* ``bernoulli(p)``: 1 where a float32 uniform lies below ``p`` (``bernoulli.p``: one
  probability for every element, a float64 uniform — torch's ``bernoulli_(float)``);
* ``uniform``/``normal_functional``: torch's functional ``uniform_``/``normal_`` (``self`` gives
  the shape and dtype); ``normal.float_float`` is ``normal_`` of a new tensor;
* ``normal(mean, std)`` = ``randn(broadcast shape) * std + mean``, a composite —
  differentiable in both, as torch's is (``d/dstd = (result - mean) / std``, the noise itself).

``multinomial`` is a primitive (``RANDOM``, not differentiable).  Each row of ``self`` holds
non-negative weights; the kernel is vectorized over rows:

* with replacement: inverse CDF — ``u ~ U(0, 1)`` per sample, index = how many normalized
  cumulative weights lie at or below ``u``: one ``searchsorted`` for all rows, row ``r``'s
  CDF and samples shifted by ``r`` so the rows occupy disjoint intervals;
* without: the Gumbel-top-k trick — ``argsort(log w + Gumbel noise)`` descending, first ``k``
  — which draws ``k`` distinct categories with exactly the sequential-draw probabilities.

``multinomial`` draws from a numpy generator seeded by the generator (reproducible under
``manual_seed``, not torch's stream).
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype, _random
from .table import COMPOSITE, RANDOM, MetaError, TensorMeta, defop


def _check_probability(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def _same_meta(name: str, floating: bool = True):
    """The sample has ``self``'s shape and dtype (``floating``: float dtypes only)."""
    def meta(self, *args, **kwargs):
        if floating and not self.dtype.is_floating_point:
            raise MetaError(f"\"{name}\" not implemented for "
                            f"'{_dtype.scalar_type_name(self.dtype)}'")
        return TensorMeta(tuple(self.shape), self.dtype)
    return meta


def _bernoulli_p_meta(self, p=0.5, generator=None):
    _check_probability(p)
    return TensorMeta(tuple(self.shape), self.dtype)


bernoulli = defop(
    "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", RANDOM,
    kernel=lambda p, generator=None: _random.bernoulli_tensor(p, generator).astype(p.dtype),
    meta=_same_meta("bernoulli_tensor_cpu_p_"), differentiable=False,
    notes="each element 1 with probability self: a float32 uniform below it, torch's bits")
bernoulli_p = defop(
    "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor", RANDOM,
    kernel=lambda a, p, generator=None: _random.bernoulli_scalar(a.shape, p, generator)
    .astype(a.dtype), meta=_bernoulli_p_meta, differentiable=False,
    notes="self is only the shape and dtype: a float64 uniform below p (torch's bernoulli_)")
uniform = defop(
    "uniform(Tensor self, float low=0, float high=1, *, Generator? generator=None) -> Tensor",
    RANDOM, kernel=lambda a, lo=0.0, hi=1.0, generator=None: _random.uniform(
        a.shape, a.dtype, lo, hi, generator), meta=_same_meta("uniform_kernel_cpu"),
    differentiable=False, notes="torch's functional uniform_: self gives the shape and dtype")
normal_functional = defop(
    "normal_functional(Tensor self, float mean=0, float std=1, *, Generator? generator=None) "
    "-> Tensor", RANDOM, kernel=lambda a, mean=0.0, std=1.0, generator=None: _random.normal(
        a.shape, a.dtype, mean, std, generator), meta=_same_meta("normal_kernel_cpu"),
    differentiable=False, notes="torch's functional normal_: self gives the shape and dtype")


def _normal(mean, std, generator=None):
    if not mean.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(mean.dtype)}'")
    shape = F.broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    noise = F.ops.aten.normal_functional(F.empty(tuple(shape), dtype=mean.dtype,
                                                 device=mean.device), 0.0, 1.0)
    return noise * std + mean  # torch: output.normal_(0, 1).mul_(std).add_(mean)


normal = defop("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> "
               "Tensor", COMPOSITE, decomposition=_normal)


def _normal_float_meta(mean, std, size, generator=None, dtype=None, device=None):
    if std < 0:
        raise MetaError(f"normal expects std >= 0.0, but found std {std}")
    return TensorMeta(tuple(size), dtype or _dtype.get_default_dtype())


normal_float = defop(
    "normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, "
    "ScalarType? dtype=None, Device? device=None) -> Tensor", RANDOM,
    kernel=lambda mean, std, size, generator=None, dtype=None, device=None: _random.normal(
        tuple(size), (dtype or _dtype.get_default_dtype()).np, mean, std, generator),
    meta=_normal_float_meta, differentiable=False)

# ---------------------------------------------------------------- multinomial


def _multinomial_meta(self, num_samples, replacement=False, generator=None):
    if self.ndim not in (1, 2):
        raise MetaError("prob_dist must be 1 or 2 dim")
    if not self.dtype.is_floating_point:
        raise MetaError(f"multinomial only supports floating-point dtypes for input, got: "
                        f"{_dtype.scalar_type_name(self.dtype)}")
    if num_samples <= 0:
        raise MetaError("cannot sample n_sample <= 0 samples")
    n = self.shape[-1]
    if not replacement and num_samples > n:
        raise MetaError("cannot sample n_sample > prob_dist.size(-1) samples without "
                        "replacement")
    return TensorMeta(tuple(self.shape[:-1]) + (num_samples,), _dtype.int64)


def _multinomial_kernel(w, num_samples, replacement=False, generator=None):
    rows = w.reshape(-1, w.shape[-1]).astype(np.float64)
    if not np.all(np.isfinite(rows)) or np.any(rows < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _random.numpy_generator(generator)
    if replacement:
        cdf = np.cumsum(rows, -1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        # one searchsorted for every row: row r's CDF (in [0, 1]) shifted to [r, r + 1]
        r = np.arange(rows.shape[0])[:, None]
        n = rows.shape[-1]
        idx = np.searchsorted((cdf + r).reshape(-1), (u + r).reshape(-1), side="right")
        idx = np.minimum(idx.reshape(u.shape) - r * n, n - 1)
    else:
        if np.any((rows > 0).sum(-1) < num_samples):
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        with np.errstate(divide="ignore"):
            keys = np.log(rows) + rng.gumbel(size=rows.shape)
        idx = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    return idx.reshape(w.shape[:-1] + (num_samples,)).astype(np.int64)


multinomial = defop(
    "multinomial(Tensor self, int num_samples, bool replacement=False, *, "
    "Generator? generator=None) -> Tensor", RANDOM, kernel=_multinomial_kernel,
    meta=_multinomial_meta, differentiable=False)
