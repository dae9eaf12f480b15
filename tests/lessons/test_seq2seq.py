"""course.seq2seq: the three uses of attention against torch, and the tiny reversal model's thresholds."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.attention import causal_mask, padding_mask, scaled_dot_product_attention
from course.seq2seq import (
    USES,
    attention_use,
    cross_attention,
    decoder_attention,
    mha_weights,
    mirror_weight,
    reversal_batch,
    train_reversal,
    use_mask,
)


def _torch_mha(
    d_model: int, n_heads: int, seed: int, dtype: torch.dtype = torch.float64
) -> nn.MultiheadAttention:
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=dtype)
    with torch.no_grad():  # non-zero biases, so that copying them is tested too
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    return mha.eval()


@pytest.mark.parametrize(
    ("b", "t_q", "t_k", "d_model", "n_heads"), [(2, 5, 7, 8, 2), (1, 1, 1, 4, 1), (3, 4, 2, 6, 3)]
)
@pytest.mark.parametrize("use", USES)
def test_each_use_equals_nn_multihead_attention(use, b, t_q, t_k, d_model, n_heads) -> None:
    if use != "cross-attention":
        t_k = t_q
    rng = np.random.default_rng(b * 100 + t_q * 10 + t_k)
    x_q = rng.standard_normal((b, t_q, d_model))
    x_kv = x_q if use != "cross-attention" else rng.standard_normal((b, t_k, d_model))
    lengths = rng.integers(1, t_k + 1, size=b)  # at least one real key each
    mha = _torch_mha(d_model, n_heads, seed=t_q)
    ours, ours_w = attention_use(use, x_q, x_kv, n_heads=n_heads, key_lengths=lengths, **mha_weights(mha))
    tq, tkv = torch.from_numpy(x_q), torch.from_numpy(x_kv)
    blocked = None
    if use == "decoder self-attention":
        blocked = torch.from_numpy(~causal_mask(t_q))
    theirs, theirs_w = mha(
        tq,
        tkv,
        tkv,
        key_padding_mask=torch.from_numpy(~padding_mask(lengths, t_k)),
        attn_mask=blocked,
        average_attn_weights=False,
    )
    assert np.abs(ours - theirs.detach().numpy()).max() <= 1e-12
    assert np.abs(ours_w - theirs_w.detach().numpy()).max() <= 1e-12
    assert ours_w.shape == (b, n_heads, t_q, t_k)


def test_float32_inputs_agree_with_torch_in_float32() -> None:
    rng = np.random.default_rng(3)
    x_q, x_kv = (
        rng.standard_normal((2, 3, 8)).astype(np.float32),
        rng.standard_normal((2, 6, 8)).astype(np.float32),
    )
    mha = _torch_mha(8, 2, seed=1, dtype=torch.float32)
    weights = {name: w.astype(np.float32) for name, w in mha_weights(mha).items()}
    ours, _ = attention_use("cross-attention", x_q, x_kv, n_heads=2, **weights)
    theirs, _ = mha(torch.from_numpy(x_q), torch.from_numpy(x_kv), torch.from_numpy(x_kv))
    assert np.abs(ours - theirs.detach().numpy()).max() <= 1e-5


def test_cross_attention_equals_transformer_decoder_layers_multihead_attn() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True, dtype=torch.float64).eval()
    rng = np.random.default_rng(4)
    tgt, memory = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 7, 8))
    lengths = np.array([7, 4])
    ours, _ = attention_use(
        "cross-attention", tgt, memory, n_heads=2, key_lengths=lengths, **mha_weights(layer.multihead_attn)
    )
    tm = torch.from_numpy(memory)
    theirs = layer.multihead_attn(
        torch.from_numpy(tgt), tm, tm, key_padding_mask=torch.from_numpy(~padding_mask(lengths, 7))
    )[0]
    assert np.abs(ours - theirs.detach().numpy()).max() <= 1e-12


def test_use_mask_shapes_and_errors() -> None:
    assert use_mask("encoder self-attention", 3, 3).all()
    assert np.array_equal(use_mask("decoder self-attention", 4, 4), causal_mask(4))
    cross = use_mask("cross-attention", 5, 7, [7, 2])
    assert cross.shape == (2, 5, 7)
    assert cross[1, :, :2].all() and not cross[1, :, 2:].any()  # padding blocks keys, for every query
    with pytest.raises(ValueError, match="differ"):
        use_mask("encoder self-attention", 3, 4)
    with pytest.raises(ValueError, match="use must be one of"):
        use_mask("sideways", 3, 3)  # type: ignore[arg-type]


def test_single_head_cross_attention_equals_torch_sdpa() -> None:
    rng = np.random.default_rng(5)
    x_dec, memory = rng.standard_normal((3, 2, 6)), rng.standard_normal((3, 5, 6))
    w_q, w_k, w_v = rng.standard_normal((6, 4)), rng.standard_normal((6, 4)), rng.standard_normal((6, 3))
    lengths = np.array([5, 1, 3])
    out, weights = cross_attention(x_dec, memory, w_q, w_k, w_v, lengths)
    allowed = torch.from_numpy(padding_mask(lengths, 5)[:, None, :])
    theirs = F.scaled_dot_product_attention(
        torch.from_numpy(x_dec @ w_q),
        torch.from_numpy(memory @ w_k),
        torch.from_numpy(memory @ w_v),
        attn_mask=allowed,
    )
    assert np.abs(out - theirs.numpy()).max() <= 1e-12
    assert out.shape == (3, 2, 3) and weights.shape == (3, 2, 5)
    assert np.allclose(weights.sum(-1), 1.0) and weights[1, :, 1:].max() == 0.0
    unpadded, _ = cross_attention(x_dec, memory, w_q, w_k, w_v)
    assert np.array_equal(unpadded[0], out[0])  # a full-length memory needs no mask


def test_decoder_attention_is_causal_in_the_decoder_and_open_to_the_whole_source() -> None:
    rng = np.random.default_rng(6)
    y, memory = rng.standard_normal((4, 4)), rng.standard_normal((6, 4))
    self_w = tuple(rng.standard_normal((4, 4)) / 2 for _ in range(3))
    cross_w = tuple(rng.standard_normal((4, 4)) / 2 for _ in range(3))
    base = decoder_attention(y, memory, self_w, cross_w)
    later = y.copy()
    later[3] += 1.0
    assert np.array_equal(decoder_attention(later, memory, self_w, cross_w)[:3], base[:3])
    last_source = memory.copy()
    last_source[-1] += 1.0
    assert np.abs(decoder_attention(y, last_source, self_w, cross_w)[0] - base[0]).max() > 1e-6
    h = y + scaled_dot_product_attention(y @ self_w[0], y @ self_w[1], y @ self_w[2], causal_mask(4))[0]
    expected = h + scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2])[0]
    assert np.abs(base - expected).max() <= 1e-12


def test_mirror_weight() -> None:
    assert mirror_weight(np.fliplr(np.eye(5))) == 1.0
    assert mirror_weight(np.full((2, 4, 4), 0.25)) == 0.25
    assert mirror_weight([[1.0]]) == 1.0
    with pytest.raises(ValueError, match="T, T"):
        mirror_weight(np.ones((2, 3)))


def test_reversal_batch() -> None:
    src, tgt_in, tgt_out = reversal_batch(4, 5, 10, torch.Generator().manual_seed(0))
    assert src.shape == tgt_in.shape == tgt_out.shape == (4, 5)
    assert torch.equal(tgt_out, src.flip(1)) and (tgt_in[:, 0] == 10).all()
    assert torch.equal(tgt_in[:, 1:], tgt_out[:, :-1])


def test_the_reversal_model_reaches_the_lessons_thresholds() -> None:
    torch.set_num_threads(1)
    model, losses = train_reversal(seed=0)
    assert len(losses) == 200 and losses[-1] < 0.01 and losses[0] > 2.0
    src, tgt_in, tgt_out = reversal_batch(500, 7, 10, torch.Generator().manual_seed(1))
    assert (model.generate(src) == tgt_out).float().mean().item() >= 0.99
    with torch.no_grad():
        _, weights = model(src, tgt_in)  # (500, 7, 7)
    assert weights.shape == (500, 7, 7)
    assert mirror_weight(weights.numpy()) > 0.9
