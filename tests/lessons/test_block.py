"""course.block against torch: LayerNorm, causal multi-head attention, the post-LN and pre-LN blocks, and the
tiny decoder of lesson 07 reaching its thresholds with the notebook's seed."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from course.block import (
    Block,
    CausalSelfAttention,
    TinyDecoder,
    copy_encoder_layer,
    follow_last_occurrence,
    induction_score,
    layer_norm,
    next_token_accuracy,
    previous_token_score,
    repeated_batch,
    train_repeated,
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 4, 16), (2, 3, 1, 8), (4, 1)])
def test_layer_norm_equals_nn_layer_norm(shape: tuple[int, ...], dtype: torch.dtype) -> None:
    torch.manual_seed(len(shape))
    x = 3 * torch.randn(shape, dtype=dtype) + 2
    ln = nn.LayerNorm(shape[-1], eps=1e-3, dtype=dtype)
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(layer_norm(x, ln.weight, ln.bias, eps=1e-3), ln(x), atol=tol, rtol=tol)


def test_layer_norm_defaults_and_constant_rows() -> None:
    x = torch.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]])
    y = layer_norm(x)
    assert torch.equal(y[0], torch.zeros(3))  # a constant row: 0 / sqrt(0 + eps)
    torch.testing.assert_close(y[1].mean(), torch.tensor(0.0))
    torch.testing.assert_close(y[1].pow(2).mean(), torch.tensor(1.0), atol=1e-4, rtol=0)  # biased var ~1


def _mha_like(attn: CausalSelfAttention, d: int, h: int, dtype: torch.dtype) -> nn.MultiheadAttention:
    mha = nn.MultiheadAttention(d, h, batch_first=True, dtype=dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(attn.w_qkv.weight)
        mha.in_proj_bias.copy_(attn.w_qkv.bias)
        mha.out_proj.weight.copy_(attn.w_o.weight)
        mha.out_proj.bias.copy_(attn.w_o.bias)
    return mha


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize(("b", "t", "d", "h"), [(2, 5, 8, 2), (1, 1, 4, 1), (3, 7, 12, 3), (2, 16, 16, 4)])
def test_causal_self_attention_equals_multihead_attention(
    b: int, t: int, d: int, h: int, causal: bool
) -> None:
    torch.manual_seed(t)
    attn = CausalSelfAttention(d, h, max_len=16, causal=causal).double().eval()
    x = torch.randn(b, t, d, dtype=torch.float64)
    mha = _mha_like(attn, d, h, torch.float64)
    mask = ~torch.tril(torch.ones(t, t, dtype=torch.bool)) if causal else None
    want, want_weights = mha(x, x, x, attn_mask=mask, average_attn_weights=False)
    got, weights = attn(x)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(weights, want_weights)
    if causal:
        assert torch.all(weights.triu(diagonal=1) == 0)


def test_the_mask_is_a_buffer_and_dropout_acts_on_the_weights() -> None:
    attn = CausalSelfAttention(8, 2, dropout=0.5, max_len=6)
    assert "mask" in attn.state_dict() and "mask" not in dict(attn.named_parameters())
    assert attn.to("meta").mask.device.type == "meta"
    attn = CausalSelfAttention(8, 2, dropout=0.5, max_len=6)
    x = torch.randn(2, 6, 8)
    attn.eval()
    _, eval_weights = attn(x)
    attn.train()
    torch.manual_seed(0)
    _, weights = attn(x)
    kept = weights != 0
    assert (~kept & (eval_weights > 0)).any()
    torch.testing.assert_close(weights[kept], 2 * eval_weights[kept])


def test_causal_self_attention_refuses_indivisible_heads() -> None:
    with pytest.raises(ValueError, match="not divisible"):
        CausalSelfAttention(10, 3)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize(("b", "t"), [(2, 6), (1, 1)])
def test_block_equals_transformer_encoder_layer(norm_first: bool, b: int, t: int) -> None:
    torch.manual_seed(1)
    d, h, d_ff = 16, 4, 32
    layer = nn.TransformerEncoderLayer(
        d, h, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    with torch.no_grad():  # non-trivial LayerNorm parameters
        for p in (layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias):
            p.normal_()
    block = Block(d, h, d_ff, norm_first=norm_first, causal=False).eval()
    copy_encoder_layer(layer, block)
    x = torch.randn(b, t, d)
    torch.testing.assert_close(block(x)[0], layer(x), atol=1e-5, rtol=1e-5)


def test_causal_block_equals_encoder_layer_with_a_causal_mask() -> None:
    torch.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True).eval()
    block = Block(8, 2, 16, norm_first=True).eval()
    copy_encoder_layer(layer, block)
    x = torch.randn(2, 5, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    torch.testing.assert_close(block(x)[0], layer(x, src_mask=mask), atol=1e-5, rtol=1e-5)


def test_copy_needs_a_feed_forward_network() -> None:
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    with pytest.raises(ValueError, match="no feed-forward"):
        copy_encoder_layer(layer, Block(8, 2))


def test_block_without_residual_and_attention_only() -> None:
    torch.manual_seed(3)
    block = Block(8, 2, residual=False).eval()
    x = torch.randn(1, 4, 8)
    out, weights = block(x)
    torch.testing.assert_close(out, block.attn(block.norm1(x))[0])
    assert weights.shape == (1, 2, 4, 4)


def test_repeated_batch_repeats_with_its_period() -> None:
    tokens, periods = repeated_batch(torch.Generator().manual_seed(0), 50, 24, 32)
    assert tokens.shape == (50, 24) and periods.min() >= 4 and periods.max() <= 10
    for row, p in zip(tokens, periods.tolist(), strict=True):
        assert torch.equal(row[p:], row[:-p])


def test_follow_last_occurrence_copies_what_followed_the_last_time() -> None:
    tokens = torch.tensor([[5, 1, 5, 2, 5, 1, 7], [3, 3, 3, 4, 0, 0, 3]])
    assert follow_last_occurrence(tokens).tolist() == [[-1, -1, 1, -1, 2, 5, -1], [-1, 3, 3, -1, -1, 0, 4]]


def test_follow_last_occurrence_is_wrong_only_where_a_chunk_repeats_a_token() -> None:
    tokens, periods = repeated_batch(torch.Generator().manual_seed(2), 200, 24, 64)
    right = follow_last_occurrence(tokens)[:, :-1] == tokens[:, 1:]  # (B, T-1)
    predictable = torch.arange(23)[None, :] >= periods[:, None]  # (B, T-1)
    repeats = [len(set(row[:p].tolist())) < p for row, p in zip(tokens, periods.tolist(), strict=True)]
    wrong_rows = {b for b in range(200) if not right[b][predictable[b]].all()}
    assert wrong_rows and wrong_rows <= {b for b in range(200) if repeats[b]}


def test_scores_of_perfect_heads() -> None:
    tokens, periods = repeated_batch(torch.Generator().manual_seed(1), 8, 12, 1000)
    t = 12
    previous = torch.zeros(8, 1, t, t)
    previous[:, 0, 0, 0] = 1.0
    previous[:, 0, torch.arange(1, t), torch.arange(t - 1)] = 1.0
    assert torch.allclose(previous_token_score(previous), torch.ones(1))
    assert torch.allclose(previous_token_score(previous, periods), torch.ones(1))
    induction = torch.zeros(8, 1, t, t)
    for b, p in enumerate(periods.tolist()):
        for i in range(t):
            induction[b, 0, i, i - p + 1 if i >= p else i] = 1.0
    assert torch.allclose(induction_score(induction, tokens, periods), torch.ones(1))
    assert induction_score(previous, tokens, periods).item() < 0.1


def _trained(residual: bool) -> tuple[float, torch.Tensor, torch.Tensor, float]:
    """The notebook's training run (same seeds and sizes)."""
    torch.manual_seed(0)
    model = TinyDecoder(64, 32, 2, 2, 24, residual=residual)
    losses = train_repeated(model, steps=250, batch=32, length=24, vocab=64, seed=0)
    tokens, periods = repeated_batch(torch.Generator().manual_seed(123), 256, 24, 64)
    with torch.no_grad():
        logits, weights = model(tokens)
    prev = torch.stack([previous_token_score(w, periods) for w in weights])  # (layers, h)
    ind = torch.stack([induction_score(w, tokens, periods) for w in weights])
    return next_token_accuracy(logits, tokens, periods), prev, ind, sum(losses[-50:]) / 50


def test_training_with_residuals_grows_a_previous_token_and_an_induction_head() -> None:
    accuracy, prev, ind, _ = _trained(residual=True)  # one thread: conftest.py pins OMP_NUM_THREADS
    assert accuracy > 0.95 and prev[0].max() > 0.9 and ind[1].max() > 0.9
    assert prev[1].max() < 0.5 and ind[0].max() < 0.5


def test_training_without_residuals_fails_and_no_head_specializes() -> None:
    flat_accuracy, flat_prev, flat_ind, flat_loss = _trained(residual=False)
    assert flat_loss > 1.0 and flat_accuracy < 0.75  # with residuals: loss about 0.1, accuracy above 0.95
    assert flat_prev.max() < 0.6 and flat_ind.max() < 0.5
