"""The key/value cache helpers of course.grouped against torch: bytes of real cache tensors, and GQA."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.attention import causal_mask, scaled_dot_product_attention
from course.grouped import kv_cache_bytes, share_kv_heads


def test_gpt2_small_in_float16() -> None:
    assert (
        kv_cache_bytes(n_layers=12, tokens=1024, n_kv_heads=12, d_head=64, bytes_per_number=2) == 37_748_736
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
@pytest.mark.parametrize("n_kv_heads", [1, 2, 4])
def test_bytes_equal_torch_tensors(dtype: torch.dtype, n_kv_heads: int) -> None:
    n_layers, batch, tokens, d_head = 3, 2, 5, 8
    cache = [
        (torch.zeros(batch, n_kv_heads, tokens, d_head, dtype=dtype),) * 2  # K and V of one layer
        for _ in range(n_layers)
    ]
    real = sum(t.numel() * t.element_size() for layer in cache for t in layer)
    counted = kv_cache_bytes(
        n_layers=n_layers,
        tokens=tokens,
        n_kv_heads=n_kv_heads,
        d_head=d_head,
        bytes_per_number=torch.tensor([], dtype=dtype).element_size(),
        batch=batch,
    )
    assert counted == real


def test_negative_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="tokens must be >= 0, got -1"):
        kv_cache_bytes(n_layers=1, tokens=-1, n_kv_heads=1, d_head=1, bytes_per_number=2)


@pytest.mark.parametrize("h_kv", [1, 2, 4])
def test_repeated_heads_equal_torch_grouped_query_attention(h_kv: int) -> None:
    rng = np.random.default_rng(5)
    b, h, t, d = 2, 4, 5, 8
    q = rng.standard_normal((b, h, t, d))
    k, v = (rng.standard_normal((b, h_kv, t, d)) for _ in range(2))
    ours, _ = scaled_dot_product_attention(q, share_kv_heads(k, h), share_kv_heads(v, h), causal_mask(t))
    theirs = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), is_causal=True, enable_gqa=True
    )
    assert np.abs(ours - theirs.numpy()).max() <= 1e-12


def test_repeat_refuses_uneven_groups() -> None:
    with pytest.raises(ValueError, match="n_kv_heads = 2 does not divide n_heads = 5"):
        share_kv_heads(np.zeros((2, 3, 4)), 5)
