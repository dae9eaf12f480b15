"""course.grouped against torch: scaled_dot_product_attention(enable_gqa=True), repeat_interleave, and
multi-head attention as the case n_kv_heads = n_heads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course.attention import multi_head_attention
from course.grouped import grouped_attention, grouped_query_attention, kv_cache_numbers, share_kv_heads

F = torch.nn.functional


@pytest.mark.parametrize(
    ("b", "h", "h_kv", "t_q", "t_k", "d"),
    [(2, 8, 2, 3, 5, 4), (1, 6, 3, 4, 4, 2), (3, 4, 1, 2, 6, 8), (2, 4, 4, 3, 3, 4), (1, 2, 1, 1, 1, 1)],
)
def test_grouped_attention_equals_torch_sdpa_with_enable_gqa(
    b: int, h: int, h_kv: int, t_q: int, t_k: int, d: int
) -> None:
    rng = np.random.default_rng(h * 10 + h_kv)
    q = rng.standard_normal((b, h, t_q, d))
    k, v = rng.standard_normal((2, b, h_kv, t_k, d))
    out, weights = grouped_attention(q, k, v)
    expected = F.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), enable_gqa=True
    ).numpy()
    assert out.shape == (b, h, t_q, d) and weights.shape == (b, h, t_q, t_k)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)


def test_share_kv_heads_is_repeat_interleave_not_tile() -> None:
    x = np.arange(2 * 3 * 2 * 2, dtype=np.float64).reshape(2, 3, 2, 2)  # (B, h_kv=3, T, d)
    shared = share_kv_heads(x, 6)  # (B, 6, T, d)
    expected = torch.from_numpy(x).repeat_interleave(2, dim=1).numpy()
    assert np.array_equal(shared, expected)
    assert [int(shared[0, i, 0, 0] // 4) for i in range(6)] == [0, 0, 1, 1, 2, 2]
    assert not np.array_equal(shared, np.tile(x, (1, 2, 1, 1)))


@pytest.mark.parametrize(("h", "h_kv"), [(6, 4), (4, 3), (2, 4)])
def test_a_kv_head_count_that_does_not_divide_is_refused_like_torch(h: int, h_kv: int) -> None:
    q, k = np.zeros((1, h, 2, 2)), np.zeros((1, h_kv, 2, 2))
    with pytest.raises(ValueError, match=f"n_kv_heads = {h_kv} does not divide n_heads = {h}"):
        grouped_attention(q, k, k)
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, k)), enable_gqa=True)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_head_counts_must_be_positive_integers(bad: object) -> None:
    x = np.zeros((1, 3, 4))
    with pytest.raises(ValueError, match="must be a positive integer"):
        grouped_query_attention(x, np.eye(4), np.eye(4), np.eye(4), np.eye(4), 2, bad)  # type: ignore[arg-type]


def _layer(d: int, h: int, h_kv: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    d_kv = h_kv * (d // h)
    x = rng.standard_normal((2, 5, d))
    w_q, w_o = rng.standard_normal((2, d, d)) / np.sqrt(d)
    w_k, w_v = rng.standard_normal((2, d, d_kv)) / np.sqrt(d)
    return x, w_q, w_k, w_v, w_o


def test_the_layer_with_as_many_kv_heads_as_query_heads_is_multi_head_attention() -> None:
    x, w_q, w_k, w_v, w_o = _layer(8, 4, 4)
    out, weights = grouped_query_attention(x, w_q, w_k, w_v, w_o, 4, 4)
    mha_out, mha_weights = multi_head_attention(x, x, w_q, w_k, w_v, w_o, 4)
    np.testing.assert_allclose(out, mha_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, mha_weights, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("h", "h_kv"), [(4, 2), (4, 1), (8, 2)])
def test_the_layer_equals_torch_projections_then_sdpa_with_enable_gqa(h: int, h_kv: int) -> None:
    d = 16
    x, w_q, w_k, w_v, w_o = _layer(d, h, h_kv, seed=h + h_kv)
    out, weights = grouped_query_attention(x, w_q, w_k, w_v, w_o, h, h_kv)
    xt = torch.from_numpy(x)  # (B, T, d)

    def heads(w: np.ndarray, n: int) -> torch.Tensor:
        return (xt @ torch.from_numpy(w)).unflatten(-1, (n, -1)).transpose(1, 2)  # (B, n, T, d_head)

    o = F.scaled_dot_product_attention(heads(w_q, h), heads(w_k, h_kv), heads(w_v, h_kv), enable_gqa=True)
    expected = (o.transpose(1, 2).flatten(-2) @ torch.from_numpy(w_o)).numpy()  # (B, T, d)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    assert weights.shape == (2, h, 5, 5)
    if h_kv == 1:  # multi-query: every head reads the same values, with its own weights
        assert not np.allclose(weights[:, 0], weights[:, 1])


def test_kv_cache_numbers() -> None:
    assert kv_cache_numbers(80, 64, 128) == 1_310_720  # 64 key/value heads, as in multi-head attention
    assert kv_cache_numbers(80, 8, 128) == 163_840  # Llama 2 70B's 8 key/value heads
    assert kv_cache_numbers(2, 1, 4, t=3) == 2 * 2 * 1 * 4 * 3
