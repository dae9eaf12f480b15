"""Reference implementations of the attention pieces built in lessons 01-05, in numpy.

Conventions used throughout:
- the last axis holds features and the one before it holds sequence positions; any leading axes are batch axes
  and broadcast, so a single sequence is ``(T, d)`` and a batch is ``(B, T, d)`` or ``(B, h, T, d)``;
- projections multiply on the right, as in the paper: ``Q = X @ W_Q`` with ``W_Q`` of shape ``(d_model, d_k)``
  (``torch.nn.Linear`` stores the transpose);
- a boolean mask holds True where a query **may attend** to a key (the convention of torch's
  ``scaled_dot_product_attention``; ``torch.nn.MultiheadAttention`` uses the opposite one);
- a query row with no key it may attend to gets all-zero weights and a zero output, never NaN (torch's
  ``scaled_dot_product_attention`` does the same; ``torch.softmax`` of an all ``-inf`` row gives NaN).

Importing this module never imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "KVCache",
    "causal_mask",
    "decode_step",
    "merge_heads",
    "mha_flop_count",
    "mha_param_count",
    "multi_head_attention",
    "naive_softmax",
    "padding_mask",
    "scaled_dot_product_attention",
    "self_attention",
    "sinusoidal_positions",
    "softmax",
    "split_heads",
]

Array = NDArray[np.floating]


# ----------------------------------------------------------------------------------------------------
# Softmax


def softmax(x: ArrayLike, axis: int = -1, *, temperature: float = 1.0) -> Array:
    """Softmax along ``axis``: exponentiate each score and divide by their sum: positive weights summing to 1.

    Numerically stable: the maximum along ``axis`` is subtracted first, which changes nothing mathematically
    (the factor ``exp(-max)`` cancels) but keeps every exponent ≤ 0, so ``exp`` cannot overflow.
    ``temperature`` divides the scores first: below 1 sharpens the distribution, above 1 flattens it.
    A slice with no finite score (every position masked with ``-inf``) gives all zeros instead of NaN.
    An empty ``axis`` (a query with no keys) gives an empty result of the same shape, as in ``torch.softmax``.
    """
    if not temperature > 0:  # also refuses NaN
        raise ValueError(f"temperature must be positive, got {temperature}")
    x = np.asarray(x)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(axis, x.ndim)
    if temperature != 1.0:
        x = x / temperature
    if x.shape[axis] == 0:  # no scores to normalise; np.max would refuse the empty axis
        return np.exp(x)  # empty, with the floating dtype the general case gives
    m = np.max(x, axis=axis, keepdims=True)  # same shape as x, size 1 along axis
    m = np.where(np.isfinite(m), m, 0.0)  # an all -inf slice: subtract nothing, exp gives zeros
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(s == 0, 1, s)


def naive_softmax(x: ArrayLike, axis: int = -1) -> Array:
    """Softmax straight from the definition, ``exp(x) / sum(exp(x))``, to show how it breaks.

    ``exp`` overflows to ``inf`` above about 709 in float64 (88 in float32), and ``inf / inf`` is NaN; scores
    below about -745 underflow to 0 and give ``0 / 0``, NaN again. numpy's warnings are silenced so the
    demonstration prints only its result.
    """
    x = np.asarray(x)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x)
        weights: Array = e / np.sum(e, axis=axis, keepdims=True)
    return weights


# ----------------------------------------------------------------------------------------------------
# Scaled dot-product attention


def scaled_dot_product_attention(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    mask: ArrayLike | None = None,
    *,
    scale: float | None = None,
) -> tuple[Array, Array]:
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V, returning ``(output, weights)``.

    Each query is compared with every key by a dot product, the scores are scaled by ``1/√d_k`` (or by
    ``scale``), turned into weights by a softmax over the keys, and the output is the weighted average of the
    values.

    Shapes: ``q`` (..., T_q, d_k), ``k`` (..., T_k, d_k), ``v`` (..., T_k, d_v); leading axes broadcast.
    Returns ``output`` (..., T_q, d_v) and ``weights`` (..., T_q, T_k).

    ``mask`` broadcasts to (..., T_q, T_k). Boolean: True where the query may attend to the key; the other
    scores become ``-inf`` before the softmax. Floating: added to the scores (an additive mask, as in torch).
    A query that may attend to no key gets zero weights and a zero output, and so does every query when there
    are no keys at all (T_k = 0), as in torch's ``scaled_dot_product_attention``. With d_k = 0 every score is
    0, so each query gets the plain mean of the values, as in torch.
    """
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    d_k = q.shape[-1]
    if scale is None:
        scale = 1.0 / math.sqrt(d_k) if d_k else 1.0  # d_k = 0: the scores are empty sums, 0 at any scale
    scores = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., T_q, T_k)
    if mask is not None:
        mask = np.asarray(mask)
        if mask.dtype == np.bool_:
            scores = np.where(mask, scores, -np.inf)
        elif np.issubdtype(mask.dtype, np.floating):
            scores = scores + mask
        else:  # 0/1 integers would silently be added: refuse them
            raise TypeError(f"mask must be boolean (True = may attend) or floating (added), got {mask.dtype}")
    weights = softmax(scores, axis=-1)  # (..., T_q, T_k), each row sums to 1 (or is all 0)
    return weights @ v, weights  # (..., T_q, d_v), (..., T_q, T_k)


def self_attention(
    x: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    mask: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """Self-attention: queries, keys and values all project one sequence, Q = X W_Q, K = X W_K, V = X W_V.

    Shapes: ``x`` (..., T, d_model), ``w_q`` and ``w_k`` (d_model, d_k), ``w_v`` (d_model, d_v).
    Returns ``output`` (..., T, d_v) and ``weights`` (..., T, T).
    """
    x = np.asarray(x)
    q = x @ np.asarray(w_q)  # (..., T, d_k)
    k = x @ np.asarray(w_k)  # (..., T, d_k)
    v = x @ np.asarray(w_v)  # (..., T, d_v)
    return scaled_dot_product_attention(q, k, v, mask)


# ----------------------------------------------------------------------------------------------------
# Multi-head attention


def _check_heads(d_model: int, n_heads: int) -> None:
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
    if d_model % n_heads:
        raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")


def split_heads(x: ArrayLike, n_heads: int) -> Array:
    """Cut the feature axis into ``n_heads`` equal slices and move the head axis before the sequence axis.

    (..., T, d_model) -> reshape (..., T, h, d_head) -> swap axes -> (..., h, T, d_head), d_head = d_model/h.
    Head ``i`` holds features ``i*d_head`` to ``(i+1)*d_head - 1`` of every position.
    """
    x = np.asarray(x)
    *lead, t, d_model = x.shape
    _check_heads(d_model, n_heads)
    x = x.reshape(*lead, t, n_heads, d_model // n_heads)  # (..., T, h, d_head)
    return np.swapaxes(x, -3, -2)  # (..., h, T, d_head)


def merge_heads(x: ArrayLike) -> Array:
    """Undo :func:`split_heads`: concatenate the heads' features position by position.

    (..., h, T, d_head) -> swap axes -> (..., T, h, d_head) -> reshape (..., T, h*d_head).
    """
    x = np.swapaxes(np.asarray(x), -3, -2)  # (..., T, h, d_head)
    *lead, t, h, d_head = x.shape
    return x.reshape(*lead, t, h * d_head)  # (..., T, h*d_head)


def _project(x: Array, w: ArrayLike, b: ArrayLike | None) -> Array:
    y: Array = x @ np.asarray(w)
    return y if b is None else y + np.asarray(b)


def _project_heads(
    x_q: Array,
    x_kv: Array,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    n_heads: int,
    b_q: ArrayLike | None,
    b_k: ArrayLike | None,
    b_v: ArrayLike | None,
) -> tuple[Array, Array, Array]:
    q = split_heads(_project(x_q, w_q, b_q), n_heads)  # (..., h, T_q, d_head)
    k = split_heads(_project(x_kv, w_k, b_k), n_heads)  # (..., h, T_k, d_head)
    v = split_heads(_project(x_kv, w_v, b_v), n_heads)  # (..., h, T_k, d_head)
    return q, k, v


def multi_head_attention(
    x_q: ArrayLike,
    x_kv: ArrayLike,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    *,
    b_q: ArrayLike | None = None,
    b_k: ArrayLike | None = None,
    b_v: ArrayLike | None = None,
    b_o: ArrayLike | None = None,
    mask: ArrayLike | None = None,
) -> tuple[Array, Array]:
    """MultiHead(Q, K, V) = Concat(head_1, …, head_h) W_O with head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i).

    All heads are projected at once with the full-width matrices, split into ``n_heads`` slices of
    ``d_head = d_model / n_heads`` features, attended separately (each scaled by ``1/√d_head``), concatenated
    and projected by ``W_O``. Self-attention passes the same array as ``x_q`` and ``x_kv``.

    Shapes: ``x_q`` (..., T_q, d_model), ``x_kv`` (..., T_k, d_kv); ``w_q`` (d_model, d_model),
    ``w_k`` and ``w_v`` (d_kv, d_model), ``w_o`` (d_model, d_model); biases (d_model,).
    ``mask`` broadcasts to (..., h, T_q, T_k): a (T_q, T_k) mask applies everywhere; a per-batch mask of shape
    (B, T_q, T_k) needs a head axis, ``mask[:, None]``.
    Returns ``output`` (..., T_q, d_model) and the per-head ``weights`` (..., h, T_q, T_k).
    """
    x_q, x_kv = np.asarray(x_q), np.asarray(x_kv)
    q, k, v = _project_heads(x_q, x_kv, w_q, w_k, w_v, n_heads, b_q, b_k, b_v)
    heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (..., h, T_q, d_head), (..., h, T_q, T_k)
    out = _project(merge_heads(heads), w_o, b_o)  # (..., T_q, d_model)
    return out, weights


def mha_param_count(d_model: int, n_heads: int, bias: bool = True) -> int:
    """Number of parameters of multi-head self-attention: four d_model x d_model matrices (W_Q, W_K, W_V,
    W_O), plus four bias vectors of d_model if ``bias``.

    It does not depend on ``n_heads``: the heads share out the width instead of adding to it. It equals the
    sum of ``p.numel()`` over ``nn.MultiheadAttention(d_model, n_heads, bias=bias).parameters()``.
    """
    _check_heads(d_model, n_heads)
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def mha_flop_count(t_q: int, t_k: int, d_model: int, n_heads: int) -> int:
    """Floating-point operations of one multi-head attention call, counting the matrix products only
    (one multiply-add = 2 FLOPs; softmax, scaling and biases left out).

    Projections: 2·T_q·d² (Q) + 2·2·T_k·d² (K, V) + 2·T_q·d² (W_O). Scores Q Kᵀ and the weighted sum of
    values: 2·T_q·T_k·d_head each, for each of the h heads, i.e. 2·T_q·T_k·d each. Like the parameter count,
    the total does not depend on ``n_heads``.
    """
    _check_heads(d_model, n_heads)
    d_head = d_model // n_heads
    projections = 2 * t_q * d_model * d_model + 4 * t_k * d_model * d_model + 2 * t_q * d_model * d_model
    attention = n_heads * (2 * t_q * t_k * d_head + 2 * t_q * t_k * d_head)
    return projections + attention


# ----------------------------------------------------------------------------------------------------
# Masks and positions


def causal_mask(
    t_q: int, t_k: int | None = None, *, align: Literal["bottom-right", "top-left"] = "bottom-right"
) -> NDArray[np.bool_]:
    """Boolean (t_q, t_k) mask, True where query i may attend to key j: a position sees itself and the past.

    With ``t_k = t_q`` (the default) it is the lower triangle, ``j <= i``. With ``t_q != t_k`` the alignment
    matters. ``"bottom-right"`` (default) treats the queries as the *last* t_q positions of the t_k keys, so
    ``j <= i + (t_k - t_q)``: what a decoder needs when new queries attend to cached keys. ``"top-left"``
    keeps ``j <= i``, which is what torch's ``scaled_dot_product_attention(..., is_causal=True)`` does.
    With t_q > t_k bottom-right leaves the first t_q - t_k rows fully masked.
    """
    t_k = t_q if t_k is None else t_k
    if align == "bottom-right":
        offset = t_k - t_q
    elif align == "top-left":
        offset = 0
    else:
        raise ValueError(f"align must be 'bottom-right' or 'top-left', got {align!r}")
    i = np.arange(t_q)[:, None]  # (t_q, 1)
    j = np.arange(t_k)[None, :]  # (1, t_k)
    return j <= i + offset  # (t_q, t_k)


def padding_mask(lengths: ArrayLike, t: int) -> NDArray[np.bool_]:
    """Boolean (B, t) mask, True at the real tokens: position j of sequence b is real when ``j < lengths[b]``.

    It describes keys; to use it in :func:`scaled_dot_product_attention` give it a query axis,
    ``mask[:, None, :]`` (B, 1, t), and in :func:`multi_head_attention` a head axis too,
    ``mask[:, None, None, :]``. ``nn.MultiheadAttention``'s ``key_padding_mask`` has the same (B, t) shape but
    the opposite meaning (True = padding): pass ``~mask``.
    """
    lengths = np.asarray(lengths)
    return np.arange(t)[None, :] < lengths[:, None]  # (B, t)


def sinusoidal_positions(t: int, d_model: int) -> Array:
    """The paper's positional encoding, shape (t, d_model):
    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)).

    Each pair of features is a sine and cosine of the position at one frequency; the wavelengths grow
    geometrically from 2π to 10000·2π. It is added to the token embeddings. An odd ``d_model`` drops the last
    cosine.
    """
    pos = np.arange(t, dtype=np.float64)[:, None]  # (t, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # (1, ceil(d_model/2))
    angle = pos / 10000.0 ** (two_i / d_model)  # (t, ceil(d_model/2))
    pe = np.empty((t, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])
    return pe


# ----------------------------------------------------------------------------------------------------
# Key/value cache for autoregressive decoding


@dataclass(frozen=True, eq=False)
class KVCache:
    """The keys and values of every position decoded so far, already split into heads.

    ``k`` and ``v``: (..., h, T_past, d_head). Grows by the new positions at each :func:`decode_step`.
    """

    k: Array
    v: Array

    @property
    def length(self) -> int:
        """Number of cached positions, T_past."""
        return int(self.k.shape[-2])


def decode_step(
    x_new: ArrayLike,
    cache: KVCache | None,
    w_q: ArrayLike,
    w_k: ArrayLike,
    w_v: ArrayLike,
    w_o: ArrayLike,
    n_heads: int,
    *,
    b_q: ArrayLike | None = None,
    b_k: ArrayLike | None = None,
    b_v: ArrayLike | None = None,
    b_o: ArrayLike | None = None,
) -> tuple[Array, KVCache]:
    """Causal multi-head self-attention of new positions only, reusing the cached keys and values of the past.

    Only the new positions are projected; their keys and values are appended to the cache, and their queries
    attend to every cached position and to the new ones up to themselves (a bottom-right causal mask).
    Feeding a sequence one position at a time (or in chunks) gives exactly the rows of
    ``multi_head_attention(x, x, ..., mask=causal_mask(T))``, with O(T) work per step instead of O(T²).

    Shapes: ``x_new`` (..., T_new, d_model), usually T_new = 1; ``cache`` None for an empty one.
    Returns ``output`` (..., T_new, d_model) and the new cache, (..., h, T_past + T_new, d_head). The old
    cache is left unchanged.
    """
    x_new = np.asarray(x_new)
    q, k, v = _project_heads(x_new, x_new, w_q, w_k, w_v, n_heads, b_q, b_k, b_v)  # (..., h, T_new, d_head)
    if cache is not None:
        k = np.concatenate([cache.k, k], axis=-2)  # (..., h, T_past + T_new, d_head)
        v = np.concatenate([cache.v, v], axis=-2)  # (..., h, T_past + T_new, d_head)
    mask = causal_mask(q.shape[-2], k.shape[-2])  # (T_new, T_past + T_new), bottom-right
    heads, _ = scaled_dot_product_attention(q, k, v, mask)  # (..., h, T_new, d_head)
    out = _project(merge_heads(heads), w_o, b_o)  # (..., T_new, d_model)
    return out, KVCache(k, v)
