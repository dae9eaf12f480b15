"""course.efficient against torch and dense attention: random shapes, chunk sizes, windows, dtypes, edges."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.attention import scaled_dot_product_attention
from course.efficient import (
    LayerCost,
    chunked_attention,
    dense_attention,
    elu_feature_map,
    layer_cost,
    linear_attention,
    loglog_slope,
    max_path_length,
    median_seconds,
    median_seconds_each,
    online_softmax_update,
    peak_memory,
    sink_window_mask,
    sliding_window_attention,
    sliding_window_mask,
    strided_mask,
)


def _qkv(rng: np.random.Generator, n_q: int, n_k: int, d: int, d_v: int, dtype: type = np.float64):
    return (
        rng.standard_normal((n_q, d)).astype(dtype),
        rng.standard_normal((n_k, d)).astype(dtype),
        rng.standard_normal((n_k, d_v)).astype(dtype),
    )


def _torch(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    t = [torch.from_numpy(np.ascontiguousarray(a)) for a in (q, k, v)]
    m = None if mask is None else torch.from_numpy(mask)
    return F.scaled_dot_product_attention(*t, attn_mask=m).numpy()


@pytest.mark.parametrize("seed", range(6))
def test_dense_and_chunked_equal_torch_in_float64(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_q, n_k, d, d_v, chunk = (int(x) for x in rng.integers(1, 40, size=5))
    q, k, v = _qkv(rng, n_q, n_k, d, d_v)
    want = _torch(q, k, v)
    assert np.abs(dense_attention(q, k, v) - want).max() <= 1e-12
    assert np.abs(chunked_attention(q, k, v, chunk) - want).max() <= 1e-12


def test_chunked_in_float32_stays_float32_and_close() -> None:
    q, k, v = _qkv(np.random.default_rng(1), 50, 70, 16, 8, np.float32)
    out = chunked_attention(q, k, v, 16)
    assert out.dtype == np.float32 and dense_attention(q, k, v).dtype == np.float32
    assert np.abs(out - _torch(q, k, v)).max() <= 1e-5


def test_chunked_survives_large_scores_and_chunk_edges() -> None:
    q, k, v = _qkv(np.random.default_rng(2), 5, 9, 8, 3)
    q, k = 40 * q, 40 * k  # scores in the hundreds: exp overflows without the running maximum
    want = scaled_dot_product_attention(q, k, v)[0]
    for chunk in (1, 2, 4, 9, 100):
        assert np.abs(chunked_attention(q, k, v, chunk) - want).max() <= 1e-12
    with pytest.raises(ValueError, match="chunk"):
        chunked_attention(q, k, v, 0)
    assert chunked_attention(q, k[:0], v[:0]).shape == (5, 3)


def test_one_online_update_from_the_empty_state_is_a_softmax() -> None:
    rng = np.random.default_rng(3)
    s, v = rng.standard_normal((4, 6)), rng.standard_normal((6, 2))
    m, total, acc = online_softmax_update(np.full(4, -np.inf), np.zeros(4), np.zeros((4, 2)), s, v)
    assert np.allclose(m, s.max(axis=1)) and np.allclose(
        acc / total[:, None], torch.softmax(torch.from_numpy(s), 1).numpy() @ v
    )


def test_chunked_memory_is_linear_and_dense_quadratic() -> None:
    rng = np.random.default_rng(4)
    dense, chunked = [], []
    ns = [256, 512, 1024]
    for n in ns:
        q, k, v = _qkv(rng, n, n, 32, 32)
        dense.append(peak_memory(dense_attention, q, k, v)[1])
        chunked.append(peak_memory(chunked_attention, q, k, v, 64)[1])
    assert 1.8 <= loglog_slope(ns, dense) <= 2.2
    assert 0.8 <= loglog_slope(ns, chunked) <= 1.2


def test_measuring_helpers() -> None:
    assert loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]) == pytest.approx(2.0)
    result, peak = peak_memory(np.zeros, 1000)
    assert result.shape == (1000,) and peak >= 8000
    assert median_seconds(sum, [1, 2], repeat=3) >= 0


@pytest.mark.parametrize(("n", "window"), [(1, 1), (5, 1), (7, 3), (6, 6), (9, 20)])
def test_sliding_window_attention_equals_masked_torch(n: int, window: int) -> None:
    q, k, v = _qkv(np.random.default_rng(n * window), n, n, 4, 3)
    mask = sliding_window_mask(n, window)
    assert mask.sum() == sum(min(i + 1, window) for i in range(n))
    assert np.abs(sliding_window_attention(q, k, v, window) - _torch(q, k, v, mask)).max() <= 1e-12
    if window >= n:
        assert np.array_equal(mask, np.tril(np.ones((n, n), dtype=bool)))
    with pytest.raises(ValueError):
        sliding_window_mask(n, 0)


def test_sink_window_mask_adds_the_first_keys_to_the_window() -> None:
    expected = np.array(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [1, 0, 1, 1, 0, 0],
            [1, 0, 0, 1, 1, 0],
            [1, 0, 0, 0, 1, 1],
        ],
        dtype=bool,
    )
    assert np.array_equal(sink_window_mask(6, 2, 1), expected)
    assert np.array_equal(sink_window_mask(9, 3, 0), sliding_window_mask(9, 3))
    assert np.array_equal(sink_window_mask(5, 1, 5), np.tril(np.ones((5, 5), dtype=bool)))
    assert int(sink_window_mask(1024, 128, 4).sum()) == 122_944 + 3_578  # the window's pairs, plus the sinks'
    sinks_alone = np.tril(np.ones((4, 4), dtype=bool)) & (np.arange(4) < 2)  # (4, 4): keys 0 and 1 only
    assert np.array_equal(sink_window_mask(4, 0, 2), sinks_alone)
    with pytest.raises(ValueError) as raised:
        sink_window_mask(4, 2, -1)
    assert str(raised.value) == "window and sinks must be at least 0, got window = 2, sinks = -1"


def test_strided_mask_connects_everything_in_two_steps() -> None:
    n, stride = 16, 4
    mask = strided_mask(n, stride)
    assert not np.triu(mask, 1).any() and mask.diagonal().all()
    assert mask[9, 8] and mask[9, 1] and not mask[9, 3]
    two = (mask.astype(int) @ mask.astype(int)) > 0
    assert np.array_equal(two, np.tril(np.ones((n, n), dtype=bool)))
    assert np.array_equal(strided_mask(5, 1), np.tril(np.ones((5, 5), dtype=bool)))


def test_linear_attention_equals_its_explicit_weights() -> None:
    q, k, v = _qkv(np.random.default_rng(5), 6, 6, 4, 3)
    sim = elu_feature_map(q) @ elu_feature_map(k).T  # (6, 6), all positive
    assert (sim > 0).all()
    weights = sim / sim.sum(axis=1, keepdims=True)
    assert np.abs(linear_attention(q, k, v) - weights @ v).max() <= 1e-12
    causal = np.tril(sim)
    causal_w = causal / causal.sum(axis=1, keepdims=True)
    assert np.abs(linear_attention(q, k, v, causal=True) - causal_w @ v).max() <= 1e-12
    x = torch.linspace(-3, 3, 13, dtype=torch.float64)
    assert np.allclose(elu_feature_map(x.numpy()), (F.elu(x) + 1).numpy())


def test_layer_costs_follow_table_1() -> None:
    n, d, kernel = 32, 8, 3
    x = np.random.default_rng(6).standard_normal((n, d))
    attention, recurrent, conv = (
        layer_cost(kind, x, kernel) for kind in ("self-attention", "recurrent", "convolutional")
    )
    assert attention.multiply_adds == 2 * n * n * d and attention.sequential_steps == 1
    # the standard recurrent layer, h_t = tanh(h_{t-1} W_h + x_t W_x): two (d, d) products a step
    assert recurrent.multiply_adds == 2 * n * d * d and recurrent.sequential_steps == n
    assert conv.multiply_adds == kernel * n * d * d and conv.sequential_steps == 1
    with pytest.raises(ValueError, match="kind must be 'self-attention', 'restricted', 'recurrent' or"):
        layer_cost("pooling", x)  # type: ignore[arg-type]


def test_attention_is_cheaper_than_the_recurrent_layer_exactly_while_n_is_below_d() -> None:
    d = 8
    for n in (4, 7, 8, 9, 16):
        x = np.random.default_rng(n).standard_normal((n, d))
        cheaper = layer_cost("self-attention", x).multiply_adds < layer_cost("recurrent", x).multiply_adds
        assert cheaper == (n < d)


@pytest.mark.parametrize(("n", "window"), [(1, 1), (5, 1), (9, 3), (12, 12), (16, 30)])
def test_restricted_attention_scores_only_its_window(n: int, window: int) -> None:
    d = 4
    x = np.random.default_rng(n + window).standard_normal((n, d))
    cost = layer_cost("restricted", x, window)
    pairs = int(sliding_window_mask(n, window).sum())
    assert cost == LayerCost(multiply_adds=2 * d * pairs, sequential_steps=1)
    assert cost.multiply_adds <= 2 * n * window * d
    if window >= n:
        assert pairs == n * (n + 1) // 2  # the whole causal triangle
    with pytest.raises(ValueError, match="the window must hold at least 1 key, got 0"):
        layer_cost("restricted", x, 0)


@pytest.mark.parametrize("n", [2, 9, 16, 64])
def test_max_path_lengths_follow_table_1(n: int) -> None:
    assert max_path_length("self-attention", n) == 1
    assert max_path_length("recurrent", n) == n
    assert max_path_length("convolutional", n, kernel=3) == math.ceil((n - 1) / 2)
    assert max_path_length("convolutional", n, kernel=2, dilated=True) == math.ceil(math.log2(n))
    assert max_path_length("self-attention", 1) == 0
    for window in (2, 3, 8):  # a window of r keys moves a signal r - 1 positions a layer: O(n / r)
        assert max_path_length("restricted", n, kernel=window) == math.ceil((n - 1) / (window - 1))


def test_restricted_attention_refuses_a_window_that_links_nothing_and_dilation() -> None:
    with pytest.raises(ValueError, match="a window of 1 key links each position only to itself"):
        max_path_length("restricted", 4, kernel=1)
    with pytest.raises(ValueError, match="the window must hold at least 1 key, got 0"):
        max_path_length("restricted", 4, kernel=0)
    with pytest.raises(ValueError, match="no dilated form"):
        max_path_length("restricted", 4, kernel=2, dilated=True)
    assert max_path_length("restricted", 1, kernel=1) == 0


def test_round_robin_timing_gives_one_median_per_call() -> None:
    calls = [(np.ones(10),), (np.ones(1000),)]
    seconds = median_seconds_each(np.sum, calls, repeat=3)
    assert len(seconds) == 2 and all(s >= 0 for s in seconds)


def test_dense_takes_what_chunked_takes_integers_lists_and_empty_axes() -> None:
    rng = np.random.default_rng(7)
    q, k, v = (rng.integers(-3, 4, size=shape) for shape in ((3, 4), (5, 4), (5, 2)))  # int64
    assert dense_attention(q, k, v).dtype == chunked_attention(q, k, v, 2).dtype == np.float64
    assert np.abs(dense_attention(q, k, v) - chunked_attention(q, k, v, 2)).max() <= 1e-12
    assert np.abs(dense_attention(q, k, v) - scaled_dot_product_attention(q, k, v)[0]).max() <= 1e-12
    lists = ([[1, 2]], [[1, 0], [0, 1]], [[1], [2]])
    assert np.array_equal(dense_attention(*lists), chunked_attention(*lists))
    half = [a.astype(np.float16) for a in (q, k, v)]
    assert dense_attention(*half).dtype == chunked_attention(*half).dtype == np.float32
    no_keys = (q.astype(float), np.zeros((0, 4)), np.zeros((0, 2)))  # no key: a zero output, as chunked
    assert np.array_equal(dense_attention(*no_keys), np.zeros((3, 2)))
    assert np.array_equal(chunked_attention(*no_keys), np.zeros((3, 2)))
    width_0 = (np.zeros((3, 0)), np.zeros((5, 0)), v.astype(float))  # d_k = 0: every score 0, the mean of v
    for out in (dense_attention(*width_0), chunked_attention(*width_0, 2)):
        assert np.allclose(out, v.mean(axis=0)) and out.shape == (3, 2)


def test_sliding_window_and_linear_attention_take_empty_sequences_without_nan() -> None:
    q, k, v = _qkv(np.random.default_rng(8), 3, 0, 4, 2)
    assert sliding_window_attention(np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 2)), 2).shape == (0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in divide"
        assert np.array_equal(linear_attention(q, k, v), np.zeros((3, 2)))
    assert np.allclose(sliding_window_attention(np.zeros((4, 0)), np.zeros((4, 0)), np.ones((4, 1)), 2), 1.0)


def test_a_convolution_wider_than_the_sequence_sees_zeros_before_it() -> None:
    x = np.random.default_rng(9).standard_normal((3, 4))  # n = 3 < kernel = 5
    wide = layer_cost("convolutional", x, kernel=5)
    assert wide == LayerCost(multiply_adds=5 * 3 * 4 * 4, sequential_steps=1)
    assert layer_cost("convolutional", x[:0], kernel=2) == LayerCost(0, 1)  # no position at all
    for kind in ("self-attention", "convolutional"):
        with pytest.raises(ValueError, match=r"x must be \(n, d\)"):
            layer_cost(kind, [1.0, 2.0])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kernel must be at least 1, got 0"):
        layer_cost("convolutional", x, kernel=0)


@pytest.mark.timeout(10)
def test_a_convolution_of_width_1_is_refused_rather_than_stacked_forever() -> None:
    assert max_path_length("convolutional", 3, kernel=5) == 1  # wider than the sequence: one layer
    for dilated in (False, True):
        with pytest.raises(ValueError, match="a convolution of width 1 links each position only to itself"):
            max_path_length("convolutional", 3, kernel=1, dilated=dilated)
    assert max_path_length("convolutional", 1, kernel=1) == 0  # one position: nothing to link
    with pytest.raises(ValueError, match="kernel must be at least 1, got 0"):
        max_path_length("convolutional", 4, kernel=0)
