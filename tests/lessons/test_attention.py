"""The numpy reference implementations in course.attention, checked against torch."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from course.attention import (
    KVCache,
    causal_mask,
    decode_step,
    merge_heads,
    mha_flop_count,
    mha_param_count,
    multi_head_attention,
    naive_softmax,
    padding_mask,
    scaled_dot_product_attention,
    self_attention,
    sinusoidal_positions,
    softmax,
    split_heads,
)

# Absolute and relative: |ours - torch| <= tol * (1 + |torch|).
TOL = {np.float64: 1e-12, np.float32: 1e-6}
DTYPES = [np.float64, np.float32]


def rand(rng: np.random.Generator, *shape: int, dtype=np.float64) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def close(ours: np.ndarray, theirs: torch.Tensor | np.ndarray, dtype) -> None:
    theirs = theirs.detach().numpy() if isinstance(theirs, torch.Tensor) else theirs
    assert ours.shape == theirs.shape
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, theirs, rtol=TOL[dtype], atol=TOL[dtype])


def test_importing_course_attention_does_not_import_torch():
    code = "import sys, course.attention, course.checkers, course.plots; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- softmax ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "axis"), [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 1), -1), ((2, 3, 4), 1)]
)
def test_softmax_matches_torch(shape, axis, dtype):
    x = rand(np.random.default_rng(0), *shape, dtype=dtype) * 5
    close(softmax(x, axis=axis), torch.softmax(torch.from_numpy(x), dim=axis), dtype)


def test_softmax_is_stable_where_the_naive_form_overflows_and_underflows():
    big = np.array([1000.0, 1001.0, 1002.0])
    assert np.isnan(naive_softmax(big)).all()  # inf / inf
    assert np.isnan(naive_softmax(-big)).all()  # 0 / 0
    expected = torch.softmax(torch.tensor([0.0, 1.0, 2.0], dtype=torch.float64), -1).numpy()
    np.testing.assert_allclose(softmax(big), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(softmax(-big), expected[::-1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(naive_softmax([0.0, 1.0, 2.0]), expected, rtol=0, atol=1e-15)


def test_naive_softmax_is_silent(recwarn):
    naive_softmax(np.array([1000.0, -1000.0]))
    assert len(recwarn) == 0


@pytest.mark.parametrize("temperature", [0.1, 0.5, 2.0, 10.0])
def test_softmax_temperature_matches_torch_and_sharpens_or_flattens(temperature):
    x = np.array([[1.0, 2.0, 4.0]])
    ours = softmax(x, temperature=temperature)
    close(ours, torch.softmax(torch.from_numpy(x) / temperature, -1), np.float64)
    if temperature < 1:
        assert ours.max() > softmax(x).max()
    else:
        assert ours.max() < softmax(x).max()


def test_softmax_temperature_must_be_positive():
    with pytest.raises(ValueError, match="temperature must be positive, got 0"):
        softmax([1.0, 2.0], temperature=0)


def test_softmax_of_an_all_minus_inf_row_is_zero_where_torch_gives_nan():
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    np.testing.assert_array_equal(softmax(x), [[0.0, 0.0], [1.0, 0.0]])
    assert torch.softmax(torch.from_numpy(x), -1)[0].isnan().all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("shape", "axis"), [((3, 0), -1), ((0,), -1), ((2, 0, 3), 1), ((0, 4), -1), ((0, 4), 0)]
)
def test_softmax_of_an_empty_array_is_empty_like_torch(shape, axis, dtype):
    x = np.empty(shape, dtype=dtype)
    close(softmax(x, axis=axis), torch.softmax(torch.from_numpy(x), dim=axis), dtype)
    close(softmax(x, axis=axis, temperature=0.5), torch.softmax(torch.from_numpy(x), dim=axis), dtype)


def test_softmax_refuses_an_axis_out_of_range_like_torch():
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        softmax(np.empty((3, 0)), axis=2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.softmax(torch.empty(3, 0), dim=2)


def test_softmax_temperature_must_not_be_nan():
    with pytest.raises(ValueError, match="temperature must be positive, got nan"):
        softmax([1.0, 2.0], temperature=float("nan"))


# --- scaled dot-product attention ------------------------------------------------------------------

SDPA_SHAPES = [
    # (leading dims, T_q, T_k, d_k, d_v)
    ((), 4, 4, 8, 8),
    ((2,), 3, 5, 4, 6),  # cross-attention: different lengths and d_v != d_k
    ((2, 3), 5, 5, 16, 16),  # two batch axes
    ((1,), 1, 1, 4, 4),  # a length-1 sequence
    ((3,), 4, 4, 1, 1),  # d_k = 1
    ((2,), 1, 7, 3, 2),  # one query, many keys
]


def torch_weights(q, k, mask=None, scale=None):
    q, k = torch.from_numpy(q), torch.from_numpy(k)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-1, -2) * scale
    if mask is not None:
        scores = scores.masked_fill(~torch.from_numpy(np.broadcast_to(mask, scores.shape).copy()), -math.inf)
    return torch.softmax(scores, -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("lead", "t_q", "t_k", "d_k", "d_v"), SDPA_SHAPES)
def test_sdpa_matches_torch(lead, t_q, t_k, d_k, d_v, dtype):
    rng = np.random.default_rng(1)
    q, k = rand(rng, *lead, t_q, d_k, dtype=dtype), rand(rng, *lead, t_k, d_k, dtype=dtype)
    v = rand(rng, *lead, t_k, d_v, dtype=dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    close(out, F.scaled_dot_product_attention(tq, tk, tv), dtype)
    close(weights, torch_weights(q, k), dtype)
    assert out.shape == (*lead, t_q, d_v)
    assert weights.shape == (*lead, t_q, t_k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_with_a_boolean_mask_and_a_custom_scale_matches_torch(dtype):
    rng = np.random.default_rng(2)
    q, k, v = (
        rand(rng, 2, 3, 4, dtype=dtype),
        rand(rng, 2, 5, 4, dtype=dtype),
        rand(rng, 2, 5, 3, dtype=dtype),
    )
    mask = rng.random((2, 3, 5)) < 0.6
    mask[:, :, 0] = True  # every query may attend to something
    out, weights = scaled_dot_product_attention(q, k, v, mask, scale=0.3)
    expected = F.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask), scale=0.3
    )
    close(out, expected, dtype)
    close(weights, torch_weights(q, k, mask, scale=0.3), dtype)
    assert (weights[~mask] == 0).all()


def test_sdpa_additive_float_mask_matches_torch():
    rng = np.random.default_rng(3)
    q, k, v = rand(rng, 4, 8), rand(rng, 4, 8), rand(rng, 4, 8)
    additive = np.where(causal_mask(4), 0.0, -np.inf)
    out, _ = scaled_dot_product_attention(q, k, v, additive)
    expected = F.scaled_dot_product_attention(
        *(torch.from_numpy(a)[None] for a in (q, k, v)), attn_mask=torch.from_numpy(additive)
    )[0]
    close(out, expected, np.float64)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, causal_mask(4))[0], atol=1e-15)


def test_sdpa_refuses_an_integer_mask():
    x = np.ones((2, 2))
    with pytest.raises(TypeError, match=r"mask must be boolean .* or floating .*, got int64"):
        scaled_dot_product_attention(x, x, x, np.tril(np.ones((2, 2), dtype=np.int64)))


def test_sdpa_fully_masked_row_gives_zeros_like_torch_sdpa_while_manual_minus_inf_gives_nan():
    rng = np.random.default_rng(4)
    q, k, v = rand(rng, 3, 4), rand(rng, 3, 4), rand(rng, 3, 4)
    mask = np.array([[True, True, False], [False, False, False], [True, False, False]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert (weights[1] == 0).all() and (out[1] == 0).all()
    assert np.isfinite(out).all()
    tq, tk, tv, tm = (torch.from_numpy(a) for a in (q, k, v, mask))
    torch_out = F.scaled_dot_product_attention(tq[None], tk[None], tv[None], attn_mask=tm)[0]
    close(out, torch_out, np.float64)  # torch 2.5+ SDPA also returns zeros for the fully masked row
    manual = torch.softmax((tq @ tk.T / 2).masked_fill(~tm, -math.inf), -1) @ tv
    assert manual[1].isnan().all() and not manual[[0, 2]].isnan().any()


def test_sdpa_large_scores_stay_finite():
    rng = np.random.default_rng(5)
    q, k, v = rand(rng, 4, 16) * 40, rand(rng, 4, 16) * 40, rand(rng, 4, 16)
    out, _ = scaled_dot_product_attention(q, k, v)
    close(out, F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))), np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("masked", [False, True])
def test_sdpa_with_no_keys_gives_zero_outputs_and_empty_weights_like_torch(masked, dtype):
    rng = np.random.default_rng(6)
    q, k, v = (
        rand(rng, 2, 3, 4, dtype=dtype),
        rand(rng, 2, 0, 4, dtype=dtype),
        rand(rng, 2, 0, 5, dtype=dtype),
    )
    mask = np.ones((3, 0), dtype=bool) if masked else None
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    expected = F.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask)
    )
    close(out, expected, dtype)
    np.testing.assert_array_equal(out, np.zeros((2, 3, 5)))
    close(weights, torch_weights(q, k, mask), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_with_no_queries_matches_torch(dtype):
    rng = np.random.default_rng(7)
    q, k, v = (
        rand(rng, 2, 0, 4, dtype=dtype),
        rand(rng, 2, 3, 4, dtype=dtype),
        rand(rng, 2, 3, 5, dtype=dtype),
    )
    out, weights = scaled_dot_product_attention(q, k, v)
    close(out, F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))), dtype)
    assert weights.shape == (2, 0, 3)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sdpa_with_d_k_zero_averages_the_values_like_torch(dtype):
    rng = np.random.default_rng(8)
    q, k, v = (
        rand(rng, 2, 3, 0, dtype=dtype),
        rand(rng, 2, 4, 0, dtype=dtype),
        rand(rng, 2, 4, 5, dtype=dtype),
    )
    out, weights = scaled_dot_product_attention(q, k, v)
    close(out, F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v))), dtype)
    np.testing.assert_allclose(weights, np.full((2, 3, 4), 0.25), rtol=0, atol=1e-7)


# --- self-attention --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("lead", "t", "d_model", "d_k", "d_v"), [((), 5, 6, 3, 4), ((2,), 1, 4, 1, 2), ((2, 2), 3, 8, 8, 8)]
)
def test_self_attention_matches_torch(lead, t, d_model, d_k, d_v, dtype):
    rng = np.random.default_rng(6)
    x = rand(rng, *lead, t, d_model, dtype=dtype)
    w_q, w_k, w_v = (rand(rng, d_model, d, dtype=dtype) for d in (d_k, d_k, d_v))
    out, weights = self_attention(x, w_q, w_k, w_v)
    tx = torch.from_numpy(x)
    tq, tk, tv = (tx @ torch.from_numpy(w) for w in (w_q, w_k, w_v))
    close(out, F.scaled_dot_product_attention(tq, tk, tv), dtype)
    assert weights.shape == (*lead, t, t)


def test_self_attention_is_permutation_equivariant_until_positions_are_added():
    rng = np.random.default_rng(7)
    x, (w_q, w_k, w_v) = rand(rng, 6, 8), (rand(rng, 8, 8) for _ in range(3))
    perm = rng.permutation(6)
    out, weights = self_attention(x, w_q, w_k, w_v)
    out_p, weights_p = self_attention(x[perm], w_q, w_k, w_v)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(weights_p, weights[perm][:, perm], atol=1e-12)
    pe = sinusoidal_positions(6, 8)
    out_pos, _ = self_attention(x + pe, w_q, w_k, w_v)
    out_pos_p, _ = self_attention(x[perm] + pe, w_q, w_k, w_v)
    assert not np.allclose(out_pos_p, out_pos[perm], atol=1e-3)


def test_gradients_reach_the_projections_in_torch():
    rng = np.random.default_rng(8)
    x = torch.from_numpy(rand(rng, 4, 6))
    ws = [torch.from_numpy(rand(rng, 6, 6)).requires_grad_() for _ in range(3)]
    F.scaled_dot_product_attention(*(x @ w for w in ws)).sum().backward()
    assert all(w.grad is not None and w.grad.abs().sum() > 0 for w in ws)


# --- heads -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "h"), [((2, 3, 8), 2), ((1, 1, 4), 4), ((5, 6), 3), ((2, 2, 3, 6), 1)])
def test_split_heads_matches_torch_view_transpose_and_merge_undoes_it(shape, h):
    x = np.arange(math.prod(shape), dtype=np.float64).reshape(shape)
    split = split_heads(x, h)
    *lead, t, d = shape
    expected = torch.from_numpy(x).view(*lead, t, h, d // h).transpose(-3, -2)
    np.testing.assert_array_equal(split, expected.numpy())
    np.testing.assert_array_equal(merge_heads(split), x)
    np.testing.assert_array_equal(
        split[..., 1 % h, :, :], x[..., (1 % h) * (d // h) : (1 % h + 1) * (d // h)]
    )


def test_split_heads_rejects_an_indivisible_width():
    with pytest.raises(ValueError, match="d_model = 6 is not divisible by n_heads = 4"):
        split_heads(np.zeros((1, 2, 6)), 4)


def test_split_then_concatenate_equals_a_loop_over_heads():
    rng = np.random.default_rng(9)
    x, (w_q, w_k, w_v, w_o) = rand(rng, 2, 5, 8), (rand(rng, 8, 8) for _ in range(4))
    out, weights = multi_head_attention(x, x, w_q, w_k, w_v, w_o, 4)
    heads = []
    for i in range(4):
        cols = slice(2 * i, 2 * i + 2)
        head, w_i = self_attention(x, w_q[:, cols], w_k[:, cols], w_v[:, cols])
        np.testing.assert_allclose(weights[:, i], w_i, atol=1e-12)
        heads.append(head)
    np.testing.assert_allclose(out, np.concatenate(heads, -1) @ w_o, atol=1e-12)


def torch_mha(d_model, n_heads, bias, dtype, kdim=None, vdim=None, seed=0):
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(d_model, n_heads, bias=bias, batch_first=True, kdim=kdim, vdim=vdim)
    with torch.no_grad():  # non-zero biases, so copying them is tested too
        for p in mha.parameters():
            p.normal_(std=0.5)
    return mha.to(torch.float64 if dtype == np.float64 else torch.float32)


def copied_weights(mha: nn.MultiheadAttention) -> dict[str, np.ndarray | None]:
    """Our right-multiplying matrices are the transposes of torch's; in_proj_weight stacks W_Q, W_K, W_V."""
    d = mha.embed_dim
    if mha._qkv_same_embed_dim:
        w_q, w_k, w_v = (w.T for w in mha.in_proj_weight.detach().numpy().reshape(3, d, -1))
    else:
        w_q, w_k, w_v = (getattr(mha, f"{n}_proj_weight").detach().numpy().T for n in "qkv")
    params = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": mha.out_proj.weight.detach().numpy().T}
    if mha.in_proj_bias is not None:
        params |= dict(
            zip(["b_q", "b_k", "b_v"], mha.in_proj_bias.detach().numpy().reshape(3, d), strict=True)
        )
        params["b_o"] = mha.out_proj.bias.detach().numpy()
    return params


MHA_CASES = [
    # (B, T_q, T_k, d_model, n_heads, bias, cross)
    (2, 5, 5, 8, 2, True, False),
    (3, 4, 4, 12, 3, False, False),
    (1, 1, 1, 4, 2, True, False),  # a length-1 sequence
    (2, 3, 3, 4, 4, True, False),  # d_head = 1
    (2, 3, 6, 8, 4, True, True),  # cross-attention, different lengths and key/value widths
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("b", "t_q", "t_k", "d", "h", "bias", "cross"), MHA_CASES)
def test_multi_head_attention_matches_torch_with_copied_weights(b, t_q, t_k, d, h, bias, cross, dtype):
    kdim, vdim = (6, 5) if cross else (None, None)
    mha = torch_mha(d, h, bias, dtype, kdim, vdim)
    rng = np.random.default_rng(10)
    x_q = rand(rng, b, t_q, d, dtype=dtype)
    x_k = rand(rng, b, t_k, kdim or d, dtype=dtype) if cross else x_q
    x_v = rand(rng, b, t_k, vdim or d, dtype=dtype) if cross else x_q
    params = copied_weights(mha)
    if cross:  # our function takes one key/value source; give it the keys' width and zero-pad the values
        x_kv = np.concatenate([x_k, x_v], -1)
        params["w_k"] = np.concatenate([params["w_k"], np.zeros((vdim, d), dtype)], 0)
        params["w_v"] = np.concatenate([np.zeros((kdim, d), dtype), params["w_v"]], 0)
    else:
        x_kv = x_q
    out, weights = multi_head_attention(x_q, x_kv, n_heads=h, **params)
    t_out, t_weights = mha(
        *(torch.from_numpy(a) for a in (x_q, x_k, x_v)), need_weights=True, average_attn_weights=False
    )
    close(out, t_out, dtype)
    close(weights, t_weights, dtype)
    assert weights.shape == (b, h, t_q, t_k)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_head_attention_with_no_keys_gives_the_output_bias_like_torch(dtype):
    mha = torch_mha(8, 2, True, dtype)
    rng = np.random.default_rng(12)
    x_q, x_kv = rand(rng, 2, 3, 8, dtype=dtype), rand(rng, 2, 0, 8, dtype=dtype)
    out, weights = multi_head_attention(x_q, x_kv, n_heads=2, **copied_weights(mha))
    t_kv = torch.from_numpy(x_kv)
    t_out, t_weights = mha(torch.from_numpy(x_q), t_kv, t_kv, need_weights=True, average_attn_weights=False)
    close(out, t_out, dtype)
    close(weights, t_weights, dtype)
    assert weights.shape == (2, 2, 3, 0)


@pytest.mark.parametrize("n_heads", [0, -2, 2.0, True])
def test_split_heads_and_the_counts_refuse_a_head_count_that_is_not_a_positive_integer(n_heads):
    message = f"n_heads must be a positive integer, got {n_heads!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        split_heads(np.ones((2, 4)), n_heads)
    with pytest.raises(ValueError, match=re.escape(message)):
        mha_param_count(4, n_heads)
    with pytest.raises(ValueError, match=re.escape(message)):
        mha_flop_count(2, 2, 4, n_heads)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_head_attention_masks_match_torch_with_the_opposite_convention(dtype):
    mha = torch_mha(8, 2, True, dtype)
    rng = np.random.default_rng(11)
    x = rand(rng, 2, 5, 8, dtype=dtype)
    keep = padding_mask([5, 3], 5)  # (B, T), True = real token
    mask = causal_mask(5) & keep[:, None, None, :]  # (B, 1, T, T)
    out, weights = multi_head_attention(x, x, n_heads=2, mask=mask, **copied_weights(mha))
    tx = torch.from_numpy(x)
    t_out, t_weights = mha(
        tx,
        tx,
        tx,
        attn_mask=~torch.from_numpy(causal_mask(5)),  # nn.MultiheadAttention: True = blocked
        key_padding_mask=~torch.from_numpy(keep),
        average_attn_weights=False,
    )
    close(out, t_out, dtype)
    close(weights, t_weights, dtype)


@pytest.mark.parametrize(("d_model", "n_heads"), [(512, 8), (768, 12), (8, 2)])
@pytest.mark.parametrize("bias", [True, False])
def test_mha_param_count_matches_torch(d_model, n_heads, bias):
    mha = nn.MultiheadAttention(d_model, n_heads, bias=bias)
    assert mha_param_count(d_model, n_heads, bias) == sum(p.numel() for p in mha.parameters())


def test_mha_param_count_of_the_papers_base_model_and_gpt2_small():
    assert mha_param_count(512, 8) == 1_050_624
    assert mha_param_count(768, 12) == 2_362_368
    with pytest.raises(ValueError, match="d_model = 10 is not divisible by n_heads = 4"):
        mha_param_count(10, 4)


def test_mha_flop_count_does_not_depend_on_the_number_of_heads():
    assert mha_flop_count(10, 10, 512, 1) == mha_flop_count(10, 10, 512, 8) == mha_flop_count(10, 10, 512, 64)
    assert mha_flop_count(1, 1, 1, 1) == 2 + 4 + 2 + 4  # four one-by-one projections and two 1x1 products
    assert mha_flop_count(3, 5, 4, 2) == 2 * 3 * 16 + 4 * 5 * 16 + 2 * 3 * 16 + 4 * 3 * 5 * 4


# --- masks -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", [1, 2, 5])
def test_causal_mask_square_is_the_lower_triangle(t):
    mask = causal_mask(t)
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, torch.ones(t, t, dtype=torch.bool).tril().numpy())
    np.testing.assert_array_equal(mask, causal_mask(t, t, align="top-left"))


def test_causal_mask_alignment_with_fewer_queries_than_keys():
    np.testing.assert_array_equal(causal_mask(2, 4), [[1, 1, 1, 0], [1, 1, 1, 1]])
    np.testing.assert_array_equal(causal_mask(2, 4, align="top-left"), [[1, 0, 0, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(causal_mask(3, 2), [[0, 0], [1, 0], [1, 1]])
    with pytest.raises(ValueError, match="align must be"):
        causal_mask(2, 3, align="left")  # type: ignore[arg-type]


def test_torch_is_causal_aligns_top_left():
    rng = np.random.default_rng(12)
    q, k, v = rand(rng, 1, 2, 4), rand(rng, 1, 4, 4), rand(rng, 1, 4, 4)
    t_out = F.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), is_causal=True)
    close(scaled_dot_product_attention(q, k, v, causal_mask(2, 4, align="top-left"))[0], t_out, np.float64)
    assert not np.allclose(scaled_dot_product_attention(q, k, v, causal_mask(2, 4))[0], t_out.numpy())


def test_changing_a_future_token_leaves_earlier_outputs_unchanged():
    rng = np.random.default_rng(13)
    x, (w_q, w_k, w_v) = rand(rng, 6, 4), (rand(rng, 4, 4) for _ in range(3))
    out, weights = self_attention(x, w_q, w_k, w_v, causal_mask(6))
    x2 = x.copy()
    x2[4] += 10.0
    out2, _ = self_attention(x2, w_q, w_k, w_v, causal_mask(6))
    np.testing.assert_array_equal(out2[:4], out[:4])
    assert not np.allclose(out2[4:], out[4:])
    assert (np.triu(weights, 1) == 0).all()


def test_padding_mask():
    mask = padding_mask([3, 1, 4], 4)
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, [[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]])


# --- positions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("t", "d"), [(10, 16), (7, 5), (1, 2)])
def test_sinusoidal_positions_match_the_usual_torch_formulation(t, d):
    position = torch.arange(t, dtype=torch.float64)[:, None]
    div_term = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
    pe = torch.zeros(t, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d // 2])
    close(sinusoidal_positions(t, d), pe, np.float64)


def test_sinusoidal_positions_first_values():
    pe = sinusoidal_positions(2, 4)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1])
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)])


# --- KV cache --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_kv_cached_decoding_equals_full_causal_recomputation(bias, dtype):
    rng = np.random.default_rng(14)
    b, t, d, h = 2, 7, 8, 2
    x = rand(rng, b, t, d, dtype=dtype)
    params = {f"w_{n}": rand(rng, d, d, dtype=dtype) for n in "qkvo"}
    if bias:
        params |= {f"b_{n}": rand(rng, d, dtype=dtype) for n in "qkvo"}
    full, _ = multi_head_attention(x, x, n_heads=h, mask=causal_mask(t), **params)

    cache, steps = None, []
    for i in range(t):
        out_i, new_cache = decode_step(x[:, i : i + 1], cache, n_heads=h, **params)
        assert new_cache.length == i + 1 and new_cache.k.shape == (b, h, i + 1, d // h)
        if cache is not None:
            assert cache.length == i  # the old cache is left unchanged
        cache = new_cache
        steps.append(out_i)
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=TOL[dtype] * 10)

    # a prompt of 4 positions in one call, then one position at a time
    out_prompt, cache = decode_step(x[:, :4], None, n_heads=h, **params)
    rest = [decode_step(x[:, i : i + 1], cache, n_heads=h, **params) for i in (4,)]
    np.testing.assert_allclose(out_prompt, full[:, :4], rtol=0, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(rest[0][0], full[:, 4:5], rtol=0, atol=TOL[dtype] * 10)


def test_kv_cache_matches_torch_mha_with_a_causal_mask():
    mha = torch_mha(8, 4, True, np.float64, seed=3)
    params = copied_weights(mha)
    x = rand(np.random.default_rng(15), 1, 5, 8)
    tx = torch.from_numpy(x)
    expected, _ = mha(tx, tx, tx, attn_mask=~torch.from_numpy(causal_mask(5)), need_weights=False)
    cache = KVCache(np.zeros((1, 4, 0, 2)), np.zeros((1, 4, 0, 2)))  # an explicit empty cache works too
    outs = []
    for i in range(5):
        out_i, cache = decode_step(x[:, i : i + 1], cache, n_heads=4, **params)
        outs.append(out_i)
    close(np.concatenate(outs, 1), expected, np.float64)
