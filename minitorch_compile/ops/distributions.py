"""Sampling ops: ``bernoulli``, ``normal``, ``multinomial``.

Mirrors ``aten/src/ATen/native/Distributions.cpp``.  Like ``dropout``, ``bernoulli`` and
``normal`` are composites over the table's random primitives, so they trace, differentiate and
compile with no rules of their own:

* ``bernoulli(p)`` = ``rand_like(p) < p`` as ``p``'s dtype (``bernoulli.p``: one probability
  for every element);
* ``normal(mean, std)`` = ``mean + std * randn(broadcast shape)`` — differentiable in both, as
  torch's is (``d/dstd = (result - mean) / std``, here the noise itself).

``multinomial`` is a primitive (``RANDOM``, not differentiable).  Each row of ``self`` holds
non-negative weights; the kernel is vectorized over rows:

* with replacement: inverse CDF — ``u ~ U(0, 1)`` per sample, index = how many normalized
  cumulative weights lie at or below ``u``: one ``searchsorted`` for all rows, row ``r``'s
  CDF and samples shifted by ``r`` so the rows occupy disjoint intervals;
* without: the Gumbel-top-k trick — ``argsort(log w + Gumbel noise)`` descending, first ``k``
  — which draws ``k`` distinct categories with exactly the sequential-draw probabilities.

Streams are numpy's (``_random.py``), not torch's: same seed, different numbers.
"""

from __future__ import annotations

import numpy as np

from .. import _api as F
from .. import _dtype, _random
from .table import COMPOSITE, RANDOM, MetaError, TensorMeta, defop


def _check_probability(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


def _bernoulli(self):
    if not self.dtype.is_floating_point:
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{_dtype.scalar_type_name(self.dtype)}'")
    return (F.rand_like(self) < self.detach()).to(self.dtype)


def _bernoulli_p(self, p=0.5):
    _check_probability(p)
    dtype = self.dtype if self.dtype.is_floating_point else _dtype.float32
    return (F.rand_like(self, dtype=dtype) < p).to(self.dtype)


bernoulli = defop("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", COMPOSITE,
                  decomposition=lambda self, generator=None: _bernoulli(self))
bernoulli_p = defop("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
                    COMPOSITE, decomposition=lambda self, p, generator=None:
                    _bernoulli_p(self, p))


def _normal(mean, std, generator=None):
    if not mean.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(mean.dtype)}'")
    shape = F.broadcast_shapes(tuple(mean.shape), tuple(std.shape))
    return mean + std * F.randn(tuple(shape), dtype=mean.dtype, device=mean.device)


normal = defop("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> "
               "Tensor", COMPOSITE, decomposition=_normal)


def _normal_float(mean, std, size, generator=None, dtype=None, device=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return F.randn(tuple(size), dtype=dtype, device=device) * std + mean


normal_float = defop(
    "normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, "
    "ScalarType? dtype=None, Device? device=None) -> Tensor", COMPOSITE,
    decomposition=_normal_float)

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
    rng = _random.generator()
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
