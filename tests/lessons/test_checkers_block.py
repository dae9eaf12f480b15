"""The lesson 07 checkers: the reference passes, and each typical mistake, written as a learner would write
it, gets its exact sentence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from course.checkers import (
    check_causal_self_attention,
    check_layer_norm,
    check_layer_norm_backward,
    check_pre_ln_block,
    check_pre_ln_decoder_block,
)
from course.checkers._block import (
    DEC_CROSS_NO_RESIDUAL,
    DEC_CROSS_UNNORMALIZED,
    DEC_MEMORY_NORMALIZED,
    DEC_NO_CROSS,
    DEC_NORMS_SWAPPED,
    DEC_POST_LN,
    DEC_QUERIES_FROM_INPUT,
)
from course.checkers._layer_norm import (
    LNB_NO_GAMMA,
    LNB_NO_MEAN_TERM,
    LNB_NO_VARIANCE_TERM,
    LNB_STATS_CONSTANT,
    LNB_SUM_NOT_MEAN,
    LNB_UNBIASED,
    STACK_EVERY_NORM,
    STACK_NO_FINAL_NORM,
    STACK_NORMED_RESIDUAL,
    STACK_POST_LN,
    check_card_pre_ln_stack,
    layer_norm_backward,
)


def _layer_norm(x: Any, gamma: Any, beta: Any, eps: float) -> Any:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_layer_norm_reference_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_layer_norm(_layer_norm).ok
    assert capsys.readouterr().out.startswith("✓ layer_norm: all 4 cases pass.")


LAYER_NORM_MISTAKES = {
    "unbiased": (
        lambda x, g, b, eps: (
            (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps) * g + b
        ),
        "it uses the unbiased variance (divided by d - 1)",
    ),
    "eps outside": (
        lambda x, g, b, eps: (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps) * g + b,
        "eps is added outside the square root, sqrt(var) + eps",
    ),
    "no gamma beta": (
        lambda x, g, b, eps: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps),
        "it leaves out gamma and beta",
    ),
    "wrong axis": (
        lambda x, g, b, eps: (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + eps) * g + b,
        "it normalizes over the wrong axis (the positions)",
    ),
}


@pytest.mark.parametrize("name", LAYER_NORM_MISTAKES)
def test_layer_norm_mistakes_are_named(name: str) -> None:
    fn, words = LAYER_NORM_MISTAKES[name]
    result = check_layer_norm(fn)
    assert not result.ok and words in result.message, result.message


def test_layer_norm_not_written_yet() -> None:
    def stub(x: Any, gamma: Any, beta: Any, eps: float) -> Any:
        raise NotImplementedError("not written yet")

    assert "not written yet" in check_layer_norm(stub).message


def make_attention(mistake: str = "") -> type[nn.Module]:
    """A learner's causal self-attention module, right or with one typical mistake."""

    class Attention(nn.Module):
        def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, max_len: int = 64) -> None:
            super().__init__()
            self.n_heads = n_heads
            self.w_qkv = nn.Linear(d_model, 3 * d_model, bias=mistake != "no bias")
            self.w_o = nn.Linear(d_model, d_model, bias=mistake != "no bias")
            self.dropout = nn.Dropout(dropout)
            mask = torch.tril(torch.ones(max_len, max_len, dtype=torch.bool))
            if mistake == "plain attribute":
                self.mask = mask
            elif mistake == "not persistent":
                self.register_buffer("mask", mask, persistent=False)
            elif mistake != "no buffer":
                self.register_buffer("mask", mask)

        def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
            b, t, d = x.shape
            h = self.n_heads
            q, k, v = self.w_qkv(x).split(d, dim=-1)
            q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
            scale = {"d_model": math.sqrt(d), "unscaled": 1.0}.get(mistake, math.sqrt(d // h))
            scores = q @ k.transpose(-2, -1) / scale
            mask = (
                torch.tril(torch.ones(t, t, dtype=torch.bool))
                if mistake == "no buffer"
                else self.mask
                if mistake == "mask not sliced"
                else self.mask[:t, :t]
            )
            if mistake == "future":
                mask = ~mask | torch.eye(t, dtype=torch.bool)
            dim = -2 if mistake == "softmax over queries" else -1
            weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
            if mistake == "dropout in eval":
                weights = nn.functional.dropout(weights, 0.5 if self.dropout.p else 0.0, training=True)
            elif mistake not in ("no dropout", "dropout on output", "weights before dropout"):
                weights = self.dropout(weights)
            heads = self.dropout(weights) @ v if mistake == "weights before dropout" else weights @ v
            if mistake == "no transpose":
                merged = heads.reshape(b, t, d)
            else:
                merged = heads.transpose(1, 2).reshape(b, t, d)
            out = self.w_o(merged)
            if mistake == "dropout on output":
                out = self.dropout(out)
            if mistake == "text":
                return "output", "weights"  # type: ignore[return-value]
            return out, weights

    return Attention


def test_attention_reference_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_causal_self_attention(make_attention()).ok
    assert capsys.readouterr().out.startswith("✓ causal self-attention module: all 4 cases pass.")


ATTENTION_MISTAKES = {
    "plain attribute": "the mask `self.mask` is a plain attribute, not a registered buffer",
    "no buffer": "the module has no buffer",
    "not persistent": "the buffer `mask` is not in state_dict (persistent=False)",
    "future": "a future position",
    "d_model": "the scores are divided by √d_model; divide by √d_head",
    "no transpose": "the heads are merged without a transpose",
    "no dropout": "in train mode nothing is dropped",
    "dropout on output": "dropout is applied to the output; apply it to the attention weights",
    "weights before dropout": "the weights returned in train mode have no dropout",
    "dropout in eval": "the output changes from call to call in eval mode",
}


@pytest.mark.parametrize("mistake", ATTENTION_MISTAKES)
def test_attention_mistakes_are_named(mistake: str) -> None:
    result = check_causal_self_attention(make_attention(mistake))
    assert not result.ok and ATTENTION_MISTAKES[mistake] in result.message, result.message


def test_attention_not_written_yet() -> None:
    class Stub(nn.Module):
        def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, max_len: int = 64) -> None:
            super().__init__()
            raise NotImplementedError("not written yet")

    assert "not written yet" in check_causal_self_attention(Stub).message


class DropoutOnTheScores(nn.Module):
    """A learner's causal self-attention with dropout applied to the scores, before the softmax."""

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, max_len: int = 64) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.w_qkv = nn.Linear(d_model, 3 * d_model)
        self.w_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        b, t, d = x.shape
        h = self.n_heads
        q, k, v = self.w_qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        scores = self.dropout(q @ k.transpose(-2, -1) / math.sqrt(d // h))  # dropout before the softmax
        weights = torch.softmax(scores.masked_fill(~self.mask[:t, :t], float("-inf")), dim=-1)
        return self.w_o((weights @ v).transpose(1, 2).reshape(b, t, d)), weights


def test_attention_with_dropout_before_the_softmax_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    result = check_causal_self_attention(DropoutOnTheScores)
    assert not result.ok
    assert result.message == (
        "✗ causal self-attention module, case 4 of 4 (dropout = 0.5, train and eval mode, B = 2, T = 6, "
        "d_model = 8, 2 heads): dropout is applied before the softmax (to the scores, or to what they are "
        "computed from), so no weight is dropped; apply it to the attention weights, after the softmax and "
        "before they multiply V."
    )
    capsys.readouterr()


def _pre_ln(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    h = x + attention(norm1(x))
    return h + ffn(norm2(h))


def test_pre_ln_reference_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_pre_ln_block(_pre_ln).ok
    assert capsys.readouterr().out.startswith("✓ pre-LN block: all 3 cases pass.")


def _post_ln(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    h = norm1(x + attention(x))
    return norm2(h + ffn(h))


def _no_attention_residual(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    h = attention(norm1(x))
    return h + ffn(norm2(h))


def _no_ffn_residual(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    h = x + attention(norm1(x))
    return ffn(norm2(h))


def _normalized_output(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    h = x + norm1(attention(x))
    return h + ffn(h)


def _parallel(x: Any, attention: Any, ffn: Any, norm1: Any, norm2: Any) -> Any:
    return x + attention(norm1(x)) + ffn(norm2(x))


PRE_LN_MISTAKES = {
    _post_ln: "it is the post-LN block",
    _no_attention_residual: "the attention has no residual connection",
    _no_ffn_residual: "the feed-forward network has no residual connection",
    _normalized_output: "the LayerNorm is applied to the sublayer's output",
    _parallel: "the feed-forward network reads the block's input x",
}


@pytest.mark.parametrize("fn", PRE_LN_MISTAKES, ids=lambda fn: fn.__name__)
def test_pre_ln_mistakes_are_named(fn: Any) -> None:
    result = check_pre_ln_block(fn)
    assert not result.ok and PRE_LN_MISTAKES[fn] in result.message, result.message


# ----------------------------------------------------------------------------------------------------
# Mistakes that once got a bare value, or a traceback, and now get their own sentence

CASE_1 = "✗ causal self-attention module, case 1 of 4 (B = 2, T = 5, d_model = 8, 2 heads): "


@pytest.mark.parametrize(
    ("mistake", "sentence"),
    [
        (
            "unscaled",
            "the scores are not scaled; divide them by √d_head, the per-head d_k (d_model / n_heads).",
        ),
        (
            "softmax over queries",
            "the softmax runs over the queries (dim=-2), so each key's column sums to 1; take it over the "
            "keys, the last dim (dim=-1), so that each query's weights sum to 1.",
        ),
        (
            "mask not sliced",
            "your function raised RuntimeError: The size of tensor a (16) must match the size of tensor b "
            "(5) at non-singleton dimension 3 (the mask is (max_len, max_len) and the scores (B, h, T, T): "
            "slice the buffer to the sequence, self.mask[:T, :T] with T = x.shape[1]).",
        ),
        ("text", "expected the output as an array of numbers, got str."),
    ],
)
def test_more_attention_mistakes_get_their_exact_sentence(mistake: str, sentence: str) -> None:
    assert check_causal_self_attention(make_attention(mistake)).message == CASE_1 + sentence


def test_a_module_without_biases_is_compared_with_zero_biases(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_causal_self_attention(make_attention("no bias")).ok  # no traceback from copying None
    assert capsys.readouterr().out == "✓ causal self-attention module: all 4 cases pass.\n"


def test_an_input_changed_in_place_by_forward_is_named_by_its_parameter() -> None:
    class Doubling(make_attention()):  # type: ignore[misc, valid-type]
        def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
            out = super().forward(x)
            x.mul_(2.0)
            return out

    assert check_causal_self_attention(Doubling).message == (
        f"{CASE_1}your function changed its input `x` in place; compute a new tensor instead."
    )


def _layer_norm_with(mistake: str) -> Any:
    def fn(x: Any, gamma: Any, beta: Any, eps: float) -> Any:
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        if mistake == "no mean":
            return x / np.sqrt(var + eps) * gamma + beta
        if mistake == "swapped":
            return (x - mean) / np.sqrt(var + eps) * beta + gamma
        if mistake == "no sqrt":
            return (x - mean) / (var + eps) * gamma + beta
        return (x - mean) / np.sqrt(var) * gamma + beta  # no eps

    return fn


@pytest.mark.parametrize(
    ("mistake", "value", "sentence"),
    [
        (
            "no mean",
            "8.49156",
            "it does not subtract the mean: normalize x - mean, then divide by sqrt(var + eps)",
        ),
        (
            "swapped",
            "0.94704",
            "gamma and beta are swapped: multiply by gamma (the scale), then add beta (the shift)",
        ),
        (
            "no sqrt",
            "-0.931986",
            "it divides by the variance; divide by its square root, sqrt(var + eps), the standard deviation",
        ),
        (
            "no eps",
            "-0.86169",
            "it leaves out eps: divide by sqrt(var + eps), which stays above 0 even when var is 0",
        ),
    ],
)
def test_more_layer_norm_mistakes_get_their_exact_sentence(mistake: str, value: str, sentence: str) -> None:
    assert check_layer_norm(_layer_norm_with(mistake)).message == (
        "✗ layer_norm, case 1 of 4 (3 positions, d = 4, one row with a small spread): output[0, 0] is "
        f"{value}, expected -0.727547; {sentence}."
    )


# ----------------------------------------------------------------------------------------------------
# Exercise 1: LayerNorm's backward pass


def ln_backward_learner(bug: str = "") -> Any:
    """A learner's LayerNorm backward pass, right or with one mistake."""

    def fn(x: Any, gamma: Any, grad_out: Any, eps: float = 1e-5) -> Any:
        d = x.shape[-1]
        mu = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True, ddof=1 if bug == "unbiased" else 0)
        sigma = np.sqrt(var + eps)
        x_hat = (x - mu) / sigma
        g = grad_out if bug == "no gamma" else grad_out * gamma
        mean_g = g.sum(axis=-1, keepdims=True) if bug == "sum" else g.mean(axis=-1, keepdims=True)
        mean_gx = (
            (g * x_hat).sum(axis=-1, keepdims=True) if bug == "sum" else (g * x_hat).mean(-1, keepdims=True)
        )
        if bug == "constant":
            return g / sigma
        if bug == "no mean":
            return (g - x_hat * mean_gx) / sigma
        if bug == "no variance":
            return (g - mean_g) / sigma
        assert d > 0
        return (g - mean_g - x_hat * mean_gx) / sigma

    return fn


def test_the_layer_norm_backward_reference_equals_torch_autograd() -> None:
    rng = np.random.default_rng(0)
    x, gamma, grad_out = (
        rng.standard_normal((2, 3, 5)),
        rng.standard_normal(5),
        rng.standard_normal((2, 3, 5)),
    )
    xt = torch.tensor(x, requires_grad=True)
    y = nn.functional.layer_norm(xt, (5,), torch.tensor(gamma), torch.zeros(5, dtype=torch.float64), 1e-5)
    (y * torch.tensor(grad_out)).sum().backward()
    assert np.abs(xt.grad.numpy() - layer_norm_backward(x, gamma, grad_out)).max() <= 1e-12
    assert (
        check_layer_norm_backward(layer_norm_backward).message == "✓ layer_norm_backward: all 4 cases pass."
    )
    assert check_layer_norm_backward(ln_backward_learner()).ok


def autograd_backward(x, gamma, grad_out, eps=1e-5):
    xt = torch.tensor(x, requires_grad=True)
    y = nn.functional.layer_norm(xt, x.shape[-1:], torch.tensor(gamma), None, eps)
    (y * torch.tensor(grad_out)).sum().backward()
    return xt.grad


def test_torch_autograd_passes_too() -> None:
    assert check_layer_norm_backward(autograd_backward).ok


LNB_CASE_1 = "✗ layer_norm_backward, case 1 of 4 (3 positions, d = 4): output[0, 0] is "


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("constant", LNB_STATS_CONSTANT),
        ("no mean", LNB_NO_MEAN_TERM),
        ("no variance", LNB_NO_VARIANCE_TERM),
        ("no gamma", LNB_NO_GAMMA),
        ("sum", LNB_SUM_NOT_MEAN),
        ("unbiased", LNB_UNBIASED),
    ],
)
def test_each_layer_norm_backward_mistake_is_named(bug: str, words: str) -> None:
    message = check_layer_norm_backward(ln_backward_learner(bug)).message
    assert message.startswith(LNB_CASE_1) and message.endswith(f"; {words}.")


def test_one_layer_norm_backward_sentence_in_full() -> None:
    assert check_layer_norm_backward(ln_backward_learner("constant")).message == (
        f"{LNB_CASE_1}-0.014879, expected 0.367343; {LNB_STATS_CONSTANT}."
    )


# ----------------------------------------------------------------------------------------------------
# Exercise 3: a pre-LN decoder block


def decoder_block(bug: str = "") -> Any:
    """A learner's pre-LN decoder block, right or with one mistake."""

    def fn(y, memory, self_attention, cross_attention, ffn, norm1, norm2, norm3):
        if bug == "post-LN":
            h = norm1(y + self_attention(y))
            h = norm2(h + cross_attention(h, memory))
            return norm3(h + ffn(h))
        h = y + self_attention(norm1(y))
        if bug == "memory normalized":
            h = h + cross_attention(norm2(h), norm2(memory))
        elif bug == "cross unnormalized":
            h = h + cross_attention(h, memory)
        elif bug == "no cross residual":
            h = cross_attention(norm2(h), memory)
        elif bug == "queries from y":
            h = h + cross_attention(norm2(y), memory)
        elif bug == "norms swapped":
            h = h + cross_attention(norm3(h), memory)
            return h + ffn(norm2(h))
        elif bug != "no cross":
            h = h + cross_attention(norm2(h), memory)
        return h + ffn(norm3(h))

    return fn


def test_the_pre_ln_decoder_block_passes() -> None:
    assert check_pre_ln_decoder_block(decoder_block()).message == "✓ pre-LN decoder block: all 3 cases pass."


DEC_CASE_1 = (
    "✗ pre-LN decoder block, case 1 of 3 (B = 2, T_dec = 4, T_enc = 6, d_model = 8, 2 heads): output["
)


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("post-LN", DEC_POST_LN),
        ("memory normalized", DEC_MEMORY_NORMALIZED),
        ("cross unnormalized", DEC_CROSS_UNNORMALIZED),
        ("no cross residual", DEC_CROSS_NO_RESIDUAL),
        ("queries from y", DEC_QUERIES_FROM_INPUT),
        ("norms swapped", DEC_NORMS_SWAPPED),
        ("no cross", DEC_NO_CROSS),
    ],
)
def test_each_pre_ln_decoder_block_mistake_is_named(bug: str, words: str) -> None:
    message = check_pre_ln_decoder_block(decoder_block(bug)).message
    assert message.startswith(DEC_CASE_1) and message.endswith(f"; {words}.")


def test_the_pre_ln_decoder_block_says_when_its_input_is_changed() -> None:
    def in_place(y, memory, self_attention, cross_attention, ffn, norm1, norm2, norm3):
        memory.mul_(1.0)
        y.add_(self_attention(norm1(y)))
        return decoder_block()(y, memory, lambda z: 0 * z, cross_attention, ffn, norm1, norm2, norm3)

    assert check_pre_ln_decoder_block(in_place).message == (
        "✗ pre-LN decoder block, case 1 of 3 (B = 2, T_dec = 4, T_enc = 6, d_model = 8, 2 heads): your "
        "function changed its input `y` in place; compute a new tensor instead."
    )


# ---- the pre-LN stack (a code card's checker, lesson 07 section 3)


def pre_ln_stack(bug: str = "") -> Any:
    """A pre-LN stack as a learner writes it, with one typical mistake named by `bug`."""

    def stack(x, sublayers, norms, final_norm):
        for sublayer, norm in zip(sublayers, norms, strict=True):
            if bug == "post-LN":
                x = norm(x + sublayer(x))
            elif bug == "normed residual":
                x = norm(x)
                x = x + sublayer(x)
            else:
                x = x + sublayer(norm(x))
            if bug == "final norm every step":
                x = final_norm(x)
        if bug in ("no final norm", "post-LN", "final norm every step"):
            return x
        return final_norm(x)

    return stack


def test_the_pre_ln_stack_passes() -> None:
    result = check_card_pre_ln_stack(pre_ln_stack())
    assert result.ok and result.message == "✓ pre-LN stack: all 2 cases pass."


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("no final norm", STACK_NO_FINAL_NORM),
        ("post-LN", STACK_POST_LN),
        ("normed residual", STACK_NORMED_RESIDUAL),
        ("final norm every step", STACK_EVERY_NORM),
    ],
)
def test_each_pre_ln_stack_mistake_is_named(bug: str, words: str) -> None:
    message = check_card_pre_ln_stack(pre_ln_stack(bug)).message
    assert message.startswith(
        "✗ pre-LN stack, case 1 of 2 (2 sublayers, 4 positions, d = 3): output[0, 0] is "
    )
    assert message.endswith(f"; {words}.")
