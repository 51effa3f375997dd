"""``scaled_dot_product_attention``: torch's *math* path, as a composite.

Mirrors ``aten/src/ATen/native/transformers/attention.cpp`` (``_scaled_dot_product_attention_math``
with ``_safe_softmax``)::

    scores = q @ k^T * scale                        (scale = 1 / sqrt(E) unless given)
    scores += mask                                  (bool mask: False -> -inf; is_causal:
                                                     key j > query i is masked, combined with
                                                     attn_mask by AND)
    attn = softmax(scores, -1), 0 on rows with every key masked ("safe softmax")
    out = dropout(attn, dropout_p) @ v

``enable_gqa``: grouped-query attention, each key/value head shared by H_q / H_kv query heads
(``repeat_interleave`` written as unsqueeze + expand + reshape).  A row with every key masked
goes through the softmax as zeros (so no NaN reaches the gradient) and is then set to 0.
"""

from __future__ import annotations

import math

from .. import _api as F
from .. import _dtype
from .conv import _C_NAMES
from .table import COMPOSITE, defop


def _repeat_heads(t, times):
    if times == 1:
        return t
    shape = list(t.shape)
    expanded = t.unsqueeze(-3).expand(shape[:-3] + [shape[-3], times] + shape[-2:])
    return expanded.reshape(shape[:-3] + [shape[-3] * times] + shape[-2:])


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_C_NAMES[query.dtype.name]} key.dtype: "
                           f"{_C_NAMES[key.dtype.name]} and value.dtype: "
                           f"{_C_NAMES[value.dtype.name]} instead.")
    if attn_mask is not None and attn_mask.dtype is not _dtype.bool_ and \
            attn_mask.dtype is not query.dtype and not attn_mask.dtype.is_floating_point:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_C_NAMES[attn_mask.dtype.name]} "
                           f"and  query.dtype: {_C_NAMES[query.dtype.name]} instead.")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key = _repeat_heads(key, query.shape[-3] // key.shape[-3])
        value = _repeat_heads(value, query.shape[-3] // value.shape[-3])
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = F.matmul(query, key.transpose(-2, -1)) * scale
    mask = attn_mask
    if is_causal:
        n, s = query.shape[-2], key.shape[-2]
        causal = F.arange(n, device=query.device).unsqueeze(-1) >= F.arange(s, device=query.device)
        mask = causal if mask is None else (
            mask & causal if mask.dtype is _dtype.bool_ else mask + F.where(causal, 0.0,
                                                                              -math.inf))
    if mask is not None:
        scores = F.where(mask, scores, -math.inf) if mask.dtype is _dtype.bool_ \
            else scores + mask
    dead = (scores == -math.inf).all(-1, keepdim=True)  # every key masked: the row is 0
    attn = F.where(dead, 0.0, scores).softmax(-1)
    attn = F.where(dead, 0.0, attn)
    if dropout_p > 0.0:
        attn = F.ops.aten.dropout(attn, dropout_p, True)
    return F.matmul(attn, value)


scaled_dot_product_attention = defop(
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
    "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
    "bool enable_gqa=False) -> Tensor", COMPOSITE, decomposition=_sdpa)
