"""Grouped-query and multi-query attention (lesson 04, section 6), in numpy.

Grouped-query attention (GQA, Ainslie et al. 2023) keeps ``n_heads`` query heads but only ``n_kv_heads`` key
and value heads: the query heads fall into ``n_kv_heads`` groups of ``n_heads // n_kv_heads`` consecutive
heads, and every head of group ``g`` attends with key/value head ``g``. Query head ``i`` uses key/value head
``i // (n_heads // n_kv_heads)``. Multi-query attention (MQA, Shazeer 2019) is the case ``n_kv_heads = 1``;
``n_kv_heads = n_heads`` is ordinary multi-head attention. Each head still scales by ``1/√d_head``.
:func:`kv_cache_numbers` and :func:`kv_cache_bytes` count what a decoder's key/value cache keeps (lessons 04
and 05): fewer key/value heads, a proportionally smaller cache.

The per-head function :func:`grouped_attention` computes what torch's
``scaled_dot_product_attention(q, k, v, enable_gqa=True)`` computes. Importing this module never imports
torch.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from course.attention import merge_heads, scaled_dot_product_attention, split_heads

__all__ = [
    "grouped_attention",
    "grouped_query_attention",
    "kv_cache_bytes",
    "kv_cache_numbers",
    "share_kv_heads",
]

Array = NDArray[np.floating]


def _check_groups(n_heads: int, n_kv_heads: int) -> None:
    for name, n in (("n_heads", n_heads), ("n_kv_heads", n_kv_heads)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads = {n_kv_heads} does not divide n_heads = {n_heads}")


def share_kv_heads(x: ArrayLike, n_heads: int) -> Array:
    """Give each of ``n_heads`` query heads its group's key/value head: (..., h_kv, T, d) -> (..., h, T, d).

    Each key/value head is repeated ``n_heads // h_kv`` times in place (heads 0, 0, 1, 1, … for two per
    group), like ``torch.repeat_interleave(x, n_heads // h_kv, dim=-3)``; ``np.tile`` would give the wrong
    order (0, 1, 0, 1, …). Raises ValueError when ``h_kv`` does not divide ``n_heads``.
    """
    x = np.asarray(x)
    n_kv_heads = x.shape[-3]
    _check_groups(n_heads, n_kv_heads)
    return np.repeat(x, n_heads // n_kv_heads, axis=-3)  # (..., h, T, d)


def grouped_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[Array, Array]:
    """Attention of ``h`` query heads over ``h_kv`` shared key/value heads, returning ``(output, weights)``.

    Shapes: ``q`` (..., h, T_q, d_head), ``k`` (..., h_kv, T_k, d_head), ``v`` (..., h_kv, T_k, d_v), with
    ``h_kv`` dividing ``h`` (else ValueError). Returns ``output`` (..., h, T_q, d_v) and ``weights``
    (..., h, T_q, T_k), scaled by ``1/√d_head``: torch's ``scaled_dot_product_attention(q, k, v,
    enable_gqa=True)``.
    """
    q = np.asarray(q)
    n_heads = q.shape[-3]
    k_shared = share_kv_heads(k, n_heads)  # (..., h, T_k, d_head)
    v_shared = share_kv_heads(v, n_heads)  # (..., h, T_k, d_v)
    return scaled_dot_product_attention(q, k_shared, v_shared)


def grouped_query_attention(
    x: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    n_kv_heads: int,
) -> tuple[Array, Array]:
    """Grouped-query self-attention: ``n_heads`` query heads sharing ``n_kv_heads`` key/value heads.

    Shapes: ``x`` (..., T, d_model), ``w_q`` and ``w_o`` (d_model, d_model), ``w_k`` and ``w_v``
    (d_model, n_kv_heads·d_head) with ``d_head = d_model / n_heads``; no biases, no mask.
    Returns ``output`` (..., T, d_model) and the per-query-head ``weights`` (..., h, T, T).
    ``n_kv_heads = n_heads`` gives :func:`course.attention.multi_head_attention`; ``n_kv_heads = 1`` is
    multi-query attention. Raises ValueError when ``n_kv_heads`` does not divide ``n_heads``.
    """
    _check_groups(n_heads, n_kv_heads)
    x = np.asarray(x)
    q = split_heads(x @ np.asarray(w_q), n_heads)  # (..., h, T, d_head)
    k = split_heads(x @ np.asarray(w_k), n_kv_heads)  # (..., h_kv, T, d_head)
    v = split_heads(x @ np.asarray(w_v), n_kv_heads)  # (..., h_kv, T, d_head)
    heads, weights = grouped_attention(q, k, v)  # (..., h, T, d_head), (..., h, T, T)
    out: Array = merge_heads(heads) @ np.asarray(w_o)  # (..., T, d_model)
    return out, weights


def kv_cache_numbers(n_layers: int, n_kv_heads: int, d_head: int, t: int = 1) -> int:
    """How many numbers a decoder's key/value cache holds for ``t`` tokens: a key and a value of ``d_head``
    numbers per key/value head, per layer, per token: ``2 · n_layers · n_kv_heads · d_head · t``."""
    return 2 * n_layers * n_kv_heads * d_head * t


def kv_cache_bytes(
    *, n_layers: int, tokens: int, n_kv_heads: int, d_head: int, bytes_per_number: int, batch: int = 1
) -> int:
    """Bytes of a key/value cache: :func:`kv_cache_numbers` for ``tokens`` tokens, times ``batch`` sequences
    and ``bytes_per_number``. GPT-2 small (12 layers, 12 heads of 64) at 1,024 tokens in float16 (2 bytes)
    keeps 2 · 12 · 1024 · 768 · 2 = 37,748,736 bytes per sequence."""
    for name, value in (
        ("n_layers", n_layers),
        ("tokens", tokens),
        ("n_kv_heads", n_kv_heads),
        ("d_head", d_head),
        ("bytes_per_number", bytes_per_number),
        ("batch", batch),
    ):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    return kv_cache_numbers(n_layers, n_kv_heads, d_head, tokens) * batch * bytes_per_number
