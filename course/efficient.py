"""Reference implementations for lesson 08, the cost of attention: measuring it and taming it, in numpy.

- measuring: :func:`peak_memory` (tracemalloc sees numpy's allocations), :func:`median_seconds` and
  :func:`loglog_slope` (the exponent p of cost ~ n^p);
- exact and cheaper in memory: :func:`dense_attention` (the whole (n_q, n_k) score matrix) and
  :func:`chunked_attention` (keys in chunks, with an online softmax: the idea behind FlashAttention);
- approximations: :func:`sliding_window_mask`, :func:`sliding_window_attention` (banded, O(n w) work and
  memory), :func:`sink_window_mask` (the window plus the first keys, as in StreamingLLM), :func:`strided_mask`
  (Child et al. 2019) and :func:`linear_attention` with the feature map :func:`elu_feature_map` (Katharopoulos
  et al. 2020);
- the paper's Table 1, counted: :func:`layer_cost` runs a self-attention, a restricted (windowed)
  self-attention, a recurrent or a convolutional layer and counts its multiply-adds and its sequential steps;
  :func:`max_path_length` measures the longest shortest path between two positions in a stack of such layers.

Shapes follow :mod:`course.attention`: q (n_q, d_k), k (n_k, d_k), v (n_k, d_v), a single sequence. Importing
this module never imports torch.
"""

from __future__ import annotations

import math
import statistics
import time
import tracemalloc
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from course.attention import softmax

__all__ = [
    "LayerCost",
    "chunked_attention",
    "dense_attention",
    "elu_feature_map",
    "layer_cost",
    "linear_attention",
    "loglog_slope",
    "max_path_length",
    "median_seconds",
    "median_seconds_each",
    "online_softmax_update",
    "peak_memory",
    "sink_window_mask",
    "sliding_window_attention",
    "sliding_window_mask",
    "strided_mask",
]

Array = NDArray[np.floating]
LayerKind = Literal["self-attention", "restricted", "recurrent", "convolutional"]
_KINDS = "'self-attention', 'restricted', 'recurrent' or 'convolutional'"


# ----------------------------------------------------------------------------------------------------
# Measuring


def peak_memory(fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """``(fn(*args), peak bytes)``: the most memory that numpy (and Python) allocated during the call, above
    what was allocated before it, as tracemalloc sees it. Tracing slows the call: do not time it too."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        result = fn(*args)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, peak - before


def median_seconds(fn: Callable[..., Any], *args: Any, repeat: int = 5) -> float:
    """The median wall-clock time of ``repeat`` calls of ``fn(*args)``, after one warm-up call."""
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_seconds_each(
    fn: Callable[..., Any], calls: Sequence[tuple[Any, ...]], repeat: int = 5
) -> list[float]:
    """The median time of ``fn(*args)`` for each ``args`` in ``calls``, measured round-robin (one call of
    each, ``repeat`` times over, after one warm-up round), so that a slow spell of a shared machine hits every
    call alike rather than distorting one of them, which would bend a fitted slope."""
    times: list[list[float]] = [[] for _ in calls]
    for round_ in range(repeat + 1):
        for spent, args in zip(times, calls, strict=True):
            start = time.perf_counter()
            fn(*args)
            if round_:  # round 0 warms up
                spent.append(time.perf_counter() - start)
    return [statistics.median(spent) for spent in times]


def loglog_slope(ns: ArrayLike, costs: ArrayLike) -> float:
    """The exponent p of the least-squares fit cost ≈ c · n^p, the slope of log(cost) against log(n)."""
    slope, _ = np.polyfit(np.log(np.asarray(ns, dtype=float)), np.log(np.asarray(costs, dtype=float)), 1)
    return float(slope)


# ----------------------------------------------------------------------------------------------------
# Exact attention: dense and chunked


def dense_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> Array:
    """softmax(q kᵀ / √d_k) v with the whole (n_q, n_k) score matrix in memory, computed in place (one matrix,
    in the floating dtype :func:`chunked_attention` computes in: the inputs', at least float32, and float64
    for integers). q (n_q, d_k), k (n_k, d_k), v (n_k, d_v) -> (n_q, d_v). Without keys (n_k = 0) every
    query's output is 0, and with d_k = 0 every score is 0, as in :func:`chunked_attention`."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    dtype = np.result_type(q, k, v, np.float32)
    q, k, v = q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)
    if k.shape[0] == 0:  # no key to attend to: np.max would refuse the empty rows
        return np.zeros((q.shape[0], v.shape[-1]), dtype=dtype)
    scores = q @ k.T  # (n_q, n_k): the O(n²) matrix
    scores *= dtype.type(_scale(q.shape[-1]))
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    out: Array = scores @ v  # (n_q, d_v)
    return out


def _scale(d_k: int) -> float:
    """1/√d_k, the scale of the scores; 1 when d_k = 0 (every score is then an empty sum, 0 at any scale)."""
    return 1.0 / math.sqrt(d_k) if d_k else 1.0


def online_softmax_update(
    m: Array, total: Array, acc: Array, scores: Array, v: Array
) -> tuple[Array, Array, Array]:
    """One chunk of the online softmax. Before the chunk, row i has seen scores s with running maximum
    ``m[i]``, running sum ``total[i]`` = Σ exp(s - m[i]) and ``acc[i]`` = Σ exp(s - m[i]) v. ``scores``
    (n_q, c) are the chunk's scaled scores and ``v`` (c, d_v) its values. Returns the new ``(m, total, acc)``:
    the old sum and accumulator are rescaled by exp(m_old - m_new) so that every term shares the reference
    point m_new. Start from m = -inf, total = 0, acc = 0; the output is acc / total at the end."""
    m_new = np.maximum(m, scores.max(axis=-1))  # (n_q,)
    correction = np.exp(m - m_new)  # (n_q,): 0 on the first chunk (m = -inf)
    p = scores - m_new[:, None]  # (n_q, c): a new array, ``scores`` is left as it was
    np.exp(p, out=p)  # in place: one (n_q, c) block at a time
    total_new = total * correction + p.sum(axis=-1)  # (n_q,)
    acc_new = acc * correction[:, None] + p @ v  # (n_q, d_v)
    return m_new, total_new, acc_new


def chunked_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, chunk: int = 128) -> Array:
    """Exactly ``dense_attention(q, k, v)``, but the keys and values are read ``chunk`` at a time and only an
    (n_q, chunk) block of scores exists at once: memory O(n_q · (chunk + d_v)) instead of O(n_q · n_k).
    Each query keeps its running maximum, running sum and weighted sum of values
    (:func:`online_softmax_update`).
    q (n_q, d_k), k (n_k, d_k), v (n_k, d_v) -> (n_q, d_v)."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    dtype = np.result_type(q, k, v, np.float32)
    n_q, n_k, d_v = q.shape[0], k.shape[0], v.shape[-1]
    m = np.full(n_q, -np.inf, dtype=dtype)  # running maximum
    total = np.zeros(n_q, dtype=dtype)  # running sum of exp(s - m)
    acc = np.zeros((n_q, d_v), dtype=dtype)  # running sum of exp(s - m) v
    scale = dtype.type(_scale(q.shape[-1]))
    for start in range(0, n_k, chunk):
        scores = (q @ k[start : start + chunk].T) * scale  # (n_q, c)
        m, total, acc = online_softmax_update(m, total, acc, scores, v[start : start + chunk])
    if n_k == 0:
        return acc
    out: Array = acc / total[:, None]  # (n_q, d_v)
    return out


# ----------------------------------------------------------------------------------------------------
# Sparse attention


def sliding_window_mask(n: int, window: int) -> NDArray[np.bool_]:
    """Boolean (n, n) causal sliding-window mask: query i may attend to the ``window`` most recent keys,
    itself included, that is i - window < j <= i."""
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    i = np.arange(n)[:, None]  # (n, 1)
    j = np.arange(n)[None, :]  # (1, n)
    return (j <= i) & (j > i - window)  # (n, n)


def sink_window_mask(n: int, window: int, sinks: int) -> NDArray[np.bool_]:
    """Boolean (n, n) causal mask of a sliding window with attention sinks (StreamingLLM, Xiao et al. 2024):
    query i may attend to key j <= i when j is among its ``window`` most recent keys (itself included) or
    among the first ``sinks`` positions. ``sinks = 0`` is :func:`sliding_window_mask`, ``window = 0`` the
    sinks alone. True = may attend."""
    if window < 0 or sinks < 0:
        raise ValueError(f"window and sinks must be at least 0, got window = {window}, sinks = {sinks}")
    i = np.arange(n)[:, None]  # (n, 1)
    j = np.arange(n)[None, :]  # (1, n)
    mask: NDArray[np.bool_] = (j <= i) & ((i - j < window) | (j < sinks))  # (n, n)
    return mask


def strided_mask(n: int, stride: int) -> NDArray[np.bool_]:
    """Boolean (n, n) causal strided mask (Child et al. 2019): query i attends to key j <= i when j is among
    the ``stride`` most recent positions or i - j is a multiple of ``stride``. Two such layers connect any
    two positions; each row allows about stride + i / stride keys."""
    if stride < 1:
        raise ValueError(f"stride must be at least 1, got {stride}")
    i = np.arange(n)[:, None]  # (n, 1)
    j = np.arange(n)[None, :]  # (1, n)
    back = i - j
    mask: NDArray[np.bool_] = (back >= 0) & ((back < stride) | (back % stride == 0))  # (n, n)
    return mask


def sliding_window_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, window: int) -> Array:
    """Causal sliding-window attention without the (n, n) matrix: each query scores only its ``window`` keys,
    O(n · window · d) work and memory. Equal to masked dense attention with :func:`sliding_window_mask`.
    q, k (n, d_k), v (n, d_v) -> (n, d_v)."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    n, d_k = q.shape
    if n == 0:  # no query: sliding_window_view would refuse the empty sequence
        return np.zeros((0, v.shape[-1]), dtype=np.result_type(q, k, v, np.float64))
    pad = window - 1  # rows in front, so that query i's window is rows i .. i + window - 1 of the padded keys
    k_pad = np.concatenate([np.zeros((pad, d_k), dtype=k.dtype), k])  # (n + pad, d_k)
    v_pad = np.concatenate([np.zeros((pad, v.shape[-1]), dtype=v.dtype), v])  # (n + pad, d_v)
    k_win = np.lib.stride_tricks.sliding_window_view(k_pad, window, axis=0)  # (n, d_k, window), a view
    v_win = np.lib.stride_tricks.sliding_window_view(v_pad, window, axis=0)  # (n, d_v, window), a view
    scores = np.einsum("nd,ndw->nw", q, k_win) * _scale(d_k)  # (n, window)
    real = np.arange(window)[None, :] >= pad - np.arange(n)[:, None]  # (n, window): False on the padding
    weights = softmax(np.where(real, scores, -np.inf), axis=-1)  # (n, window)
    out: Array = np.einsum("nw,ndw->nd", weights, v_win)  # (n, d_v)
    return out


# ----------------------------------------------------------------------------------------------------
# Linear attention


def elu_feature_map(x: ArrayLike) -> Array:
    """φ(x) = elu(x) + 1: x + 1 for x > 0, exp(x) for x <= 0. Always positive, so the weights it gives are."""
    x = np.asarray(x)
    out: Array = np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    return out


def linear_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, *, causal: bool = False) -> Array:
    """Linear attention (Katharopoulos et al. 2020): the similarity exp(q·k/√d) is replaced by φ(q)·φ(k) with
    φ = :func:`elu_feature_map`, so that out_i = φ(q_i) (Σ_j φ(k_j) v_jᵀ) / (φ(q_i) · Σ_j φ(k_j)). The sums
    are computed once, (d_k, d_v) and (d_k,): O(n · d_k · d_v) work, no (n, n) matrix. With ``causal`` the
    sums run over j <= i (prefix sums, O(n · d_k · d_v) memory). q (n_q, d_k), k (n_k, d_k), v (n_k, d_v).
    Without keys (n_k = 0) every output is 0, as in :func:`chunked_attention`."""
    fq, fk, v = elu_feature_map(q), elu_feature_map(k), np.asarray(v)
    if causal:
        kv = np.cumsum(fk[:, :, None] * v[:, None, :], axis=0)  # (n, d_k, d_v): Σ_{j<=i} φ(k_j) v_jᵀ
        z = np.cumsum(fk, axis=0)  # (n, d_k)
        num = np.einsum("nd,nde->ne", fq, kv)  # (n, d_v)
        den = np.einsum("nd,nd->n", fq, z)  # (n,)
    else:
        num = fq @ (fk.T @ v)  # (n_q, d_k) @ (d_k, d_v) -> (n_q, d_v)
        den = fq @ fk.sum(axis=0)  # (n_q,)
    den = den[:, None]  # (n_q, 1): positive, as φ is, unless there are no keys
    out: Array = np.zeros(np.broadcast_shapes(num.shape, den.shape), dtype=np.result_type(num, den))
    np.divide(num, den, out=out, where=den > 0)
    return out


# ----------------------------------------------------------------------------------------------------
# The paper's Table 1, measured


@dataclass(frozen=True)
class LayerCost:
    """What running one layer over n positions of width d cost: multiply-adds and sequential steps (matrix
    products that had to wait for the previous one's result)."""

    multiply_adds: int
    sequential_steps: int


class _Counter:
    def __init__(self) -> None:
        self.multiply_adds = 0

    def matmul(self, a: Array, b: Array) -> Array:
        self.multiply_adds += int(np.prod(a.shape[:-1])) * a.shape[-1] * b.shape[-1]
        out: Array = a @ b
        return out


def layer_cost(kind: LayerKind, x: ArrayLike, kernel: int = 3, seed: int = 0) -> LayerCost:
    """Run one layer of ``kind`` on x (n, d) with random weights and count what it cost.

    - ``"self-attention"``: softmax(x xᵀ/√d) x (no projections, as the paper's n²·d counts): two (n, n, d)
      products, both independent of the sequence order: 1 sequential step.
    - ``"restricted"``: self-attention restricted to a causal window of ``kernel`` keys (the r of the paper's
      Table 1; :func:`sliding_window_mask`): each query scores only its window, 2·d multiply-adds per allowed
      pair, about 2·n·r·d (fewer for the first r - 1 queries); 1 sequential step.
    - ``"recurrent"``: the standard recurrent layer h_t = tanh(h_{t-1} W_h + x_t W_x) for t = 0..n-1: two
      products of (1, d) by (d, d) per step, 2·n·d² multiply-adds; each step waits for the previous h:
      n sequential steps.
    - ``"convolutional"``: y = Σ_{o<kernel} shift(x, o) W_o (a causal convolution of width ``kernel``, at
      least 1; a kernel wider than the sequence sees zeros before its start): ``kernel`` products of (n, d)
      by (d, d), independent: 1 sequential step.
    """
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"x must be (n, d), one sequence of n positions, got shape {x.shape}")
    n, d = x.shape
    rng = np.random.default_rng(seed)
    counter = _Counter()
    if kind == "self-attention":
        weights = softmax(counter.matmul(x, x.T) / math.sqrt(d), axis=-1)  # (n, n)
        counter.matmul(weights, x)  # (n, d)
        return LayerCost(counter.multiply_adds, 1)
    if kind == "restricted":
        if kernel < 1:
            raise ValueError(f"the window must hold at least 1 key, got {kernel}")
        for i in range(n):  # independent queries: the order does not matter
            keys = x[max(i - kernel + 1, 0) : i + 1]  # (at most r, d): the window of query i
            weights = softmax(counter.matmul(x[i : i + 1], keys.T) / math.sqrt(d), axis=-1)  # (1, r)
            counter.matmul(weights, keys)  # (1, d)
        return LayerCost(counter.multiply_adds, 1)
    if kind == "recurrent":
        w_h = rng.standard_normal((d, d)) / math.sqrt(d)
        w_x = rng.standard_normal((d, d)) / math.sqrt(d)
        h = np.zeros((1, d))
        for t in range(n):  # each step needs the previous h
            h = np.tanh(counter.matmul(h, w_h) + counter.matmul(x[t : t + 1], w_x))
        return LayerCost(counter.multiply_adds, n)
    if kind == "convolutional":
        if kernel < 1:
            raise ValueError(f"kernel must be at least 1, got {kernel}")
        y = np.zeros_like(x)
        for offset in range(kernel):  # independent products, summed
            kept = max(n - offset, 0)  # the positions t >= offset; before them the input is zero
            shifted = np.concatenate([np.zeros((n - kept, d)), x[:kept]])  # (n, d): x_{t - offset}
            y += counter.matmul(shifted, rng.standard_normal((d, d)) / math.sqrt(d))
        return LayerCost(counter.multiply_adds, 1)
    raise ValueError(f"kind must be {_KINDS}, got {kind!r}")


def max_path_length(kind: LayerKind, n: int, kernel: int = 3, dilated: bool = False) -> int:
    """The longest, over all pairs of positions (j, i) with j <= i, of the fewest edges a signal crosses from
    input j to output i in a stack of layers of ``kind`` (as many as it takes; measured by breadth-first
    search on the computation graph).

    Each edge is one layer's map, or one recurrent step: self-attention links every input to every output
    of the next layer; restricted self-attention links position t - o of one layer to position t of the next,
    for o < ``kernel`` (its window of r = ``kernel`` keys, itself included), so a signal moves r - 1
    positions a layer: ⌈(n - 1)/(r - 1)⌉ layers, O(n/r); a recurrent layer links x_t to h_t and h_t to
    h_{t+1}; a causal convolution links position t - o·s of one layer to position t of the next, for
    o < ``kernel`` (s = 1, or kernel^layer when ``dilated``, as in WaveNet). A window or a convolution needs
    ``kernel`` >= 2 to link two positions: with ``kernel`` 1 no stack does, and that raises ValueError (for
    n >= 2)."""
    if kind == "recurrent":
        # nodes: inputs 0..n-1, then hidden states n..2n-1; the outputs are the hidden states
        graph: dict[int, list[int]] = {t: [n + t] for t in range(n)}
        for t in range(n - 1):
            graph[n + t] = [n + t + 1]
        longest = 0
        for j in range(n):
            dist = _bfs(graph, j)
            longest = max(longest, max(dist[n + i] for i in range(j, n)))
        return longest
    if kind not in ("self-attention", "restricted", "convolutional"):
        raise ValueError(f"kind must be {_KINDS}, got {kind!r}")
    if kind == "restricted" and dilated:
        raise ValueError("restricted self-attention has no dilated form here: its window is contiguous")
    if kind != "self-attention" and kernel < 1:
        what = "the window must hold at least 1 key" if kind == "restricted" else "kernel must be at least 1"
        raise ValueError(f"{what}, got {kernel}")
    if kind != "self-attention" and kernel == 1 and n > 1:
        what = "a window of 1 key" if kind == "restricted" else "a convolution of width 1"
        raise ValueError(
            f"{what} links each position only to itself, so no stack of them links two positions: use "
            "kernel >= 2"
        )
    # stacked layers: reached[j] = the set of positions at the current layer that input j has reached
    reached = [{j} for j in range(n)]
    layers = 0
    while any(len(r) < n - j for j, r in enumerate(reached)):  # input j must reach every i >= j
        stride = kernel**layers if dilated else 1
        layers += 1
        for j, r in enumerate(reached):
            if kind == "self-attention":
                reached[j] = set(range(n))
            else:
                reached[j] = {p + o * stride for p in r for o in range(kernel) if p + o * stride < n}
    return layers


def _bfs(graph: dict[int, list[int]], start: int) -> dict[int, int]:
    dist = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in graph.get(node, []):
            if nxt not in dist:
                dist[nxt] = dist[node] + 1
                queue.append(nxt)
    return dist
