"""Checkers for lesson 07's block: causal multi-head self-attention as a module, the pre-LN encoder and
decoder blocks, and the code card of the feed-forward network (``check_card_feed_forward``). LayerNorm, its
backward pass and its cards are in :mod:`course.checkers._layer_norm`.

The lesson's exercises here are :func:`check_causal_self_attention` and :func:`check_pre_ln_decoder_block`;
:func:`check_pre_ln_block` checks what the lesson builds in its sections, for code cards and practice.

torch is imported inside the checkers that need it, so that importing ``course.checkers`` never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import (
    Case,
    CheckResult,
    Problem,
    as_array,
    call_learner,
    run_cases,
    shape_text,
)

if TYPE_CHECKING:
    from torch import Tensor

__all__ = [
    "DEC_CROSS_NO_RESIDUAL",
    "DEC_CROSS_UNNORMALIZED",
    "DEC_MEMORY_NORMALIZED",
    "DEC_NORMS_SWAPPED",
    "DEC_NO_CROSS",
    "DEC_POST_LN",
    "DEC_QUERIES_FROM_INPUT",
    "MASK_NOT_SLICED",
    "SOFTMAX_OVER_QUERIES",
    "UNSCALED",
    "check_card_feed_forward",
    "check_causal_self_attention",
    "check_pre_ln_block",
    "check_pre_ln_decoder_block",
]

Array = NDArray[np.float64]

# ----------------------------------------------------------------------------------------------------
# Causal multi-head self-attention as an nn.Module


NOT_A_BUFFER = (
    "the mask `self.{name}` is a plain attribute, not a registered buffer: it is not saved in state_dict and "
    "does not move with .to(device); create it with self.register_buffer('{name}', ...)"
)
NOT_SAVED = (
    "the buffer `{name}` is not in state_dict (persistent=False): register it with "
    "self.register_buffer('{name}', ...) so that it is saved with the module"
)
NO_BUFFER = (
    "the module has no buffer: build the causal mask once, in __init__, and keep it with "
    "self.register_buffer('mask', torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))"
)
FUTURE = (
    "query {i} attends to key {j}, a future position (weights[{where}] = {value}): the mask lets the future "
    "in"
)
SCALED_D_MODEL = "the scores are divided by √d_model; divide by √d_head, the per-head d_k (d_model / n_heads)"
UNSCALED = "the scores are not scaled; divide them by √d_head, the per-head d_k (d_model / n_heads)"
SOFTMAX_OVER_QUERIES = (
    "the softmax runs over the queries (dim=-2), so each key's column sums to 1; take it over the keys, the "
    "last dim (dim=-1), so that each query's weights sum to 1"
)
MASK_NOT_SLICED = (
    "the mask is (max_len, max_len) and the scores (B, h, T, T): slice the buffer to the sequence, "
    "self.mask[:T, :T] with T = x.shape[1]"
)
NO_TRANSPOSE = (
    "the heads are merged without a transpose: (B, h, T, d_head).reshape(B, T, d_model) mixes positions; "
    "transpose to (B, T, h, d_head) first"
)
DROPOUT_MISSING = (
    "in train mode nothing is dropped: apply self.dropout (nn.Dropout(dropout)) to the attention weights "
    "after the softmax"
)
DROPOUT_ON_OUTPUT = (
    "dropout is applied to the output; apply it to the attention weights, after the softmax and before they "
    "multiply V"
)
DROPOUT_BEFORE_SOFTMAX = (
    "dropout is applied before the softmax (to the scores, or to what they are computed from), so no weight "
    "is dropped; apply it to the attention weights, after the softmax and before they multiply V"
)
DROPOUT_NOT_RETURNED = (
    "the weights returned in train mode have no dropout; return the weights after dropout, those that "
    "multiply V"
)
DROPOUT_IN_EVAL = (
    "the output changes from call to call in eval mode: dropout must be off after .eval(); use nn.Dropout, "
    "which follows the module's training flag"
)


_MAX_LEN = 16  # longer than every case's T: the mask buffer must be sliced to the sequence


class _Spec:
    def __init__(self, name: str, b: int, t: int, d: int, h: int) -> None:
        self.name, self.b, self.t, self.d, self.h = name, b, t, d, h


def _as_np(value: Any, what: str) -> Array:
    return as_array(value, what).astype(np.float64)


def _forward(module: Any, x: Tensor, spec: _Spec) -> tuple[Array, Array]:
    try:
        result = call_learner(module, (x,))
    except Problem as problem:
        sentence = str(problem)
        if "must match the size" in sentence and f"({_MAX_LEN})" in sentence:  # torch's broadcasting error
            raise Problem(f"{sentence} ({MASK_NOT_SLICED})") from None
        raise
    if not isinstance(result, tuple) or len(result) != 2:
        raise Problem("forward should return a tuple (output, weights)")
    out, weights = _as_np(result[0], "the output"), _as_np(result[1], "the weights")
    if out.shape != (spec.b, spec.t, spec.d):
        raise Problem(
            f"the output has shape {shape_text(out.shape)}, expected (B, T, d_model) = "
            f"{shape_text((spec.b, spec.t, spec.d))}"
        )
    wanted = (spec.b, spec.h, spec.t, spec.t)
    if weights.shape != wanted:
        raise Problem(
            f"the weights have shape {shape_text(weights.shape)}, expected (B, h, T, T) = "
            f"{shape_text(wanted)}"
        )
    return out, weights


def _variant(
    module: Any, x: Tensor, n_heads: int, *, scale: str = "d_head", transpose: bool = True, dim: int = -1
) -> tuple[Array, Array]:
    """What multi-head causal attention gives with the module's weights and one mistake: ``scale`` by
    "d_model" or "none" instead of "d_head", no ``transpose`` before merging the heads, or the softmax over
    ``dim`` -2."""
    import torch

    with torch.no_grad():
        b, t, d = x.shape
        q, k, v = module.w_qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, n_heads, d // n_heads).transpose(1, 2) for z in (q, k, v))
        width = {"d_head": d // n_heads, "d_model": d, "none": 1}[scale]
        scores = q @ k.transpose(-2, -1) / math.sqrt(width)
        scores = scores.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool)), float("-inf"))
        weights = torch.softmax(scores, dim=dim)
        heads = weights @ v
        merged = heads.transpose(1, 2).reshape(b, t, d) if transpose else heads.reshape(b, t, d)
        return module.w_o(merged).numpy(), weights.numpy()


def _close(a: Array, b: Array) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-6, atol=1e-9))


def _check_buffer(module: Any) -> None:
    import torch

    for name, value in vars(module).items():
        if isinstance(value, torch.Tensor) and value.ndim == 2:
            raise Problem(NOT_A_BUFFER.format(name=name))
    buffers = dict(module.named_buffers())
    if not buffers:
        raise Problem(NO_BUFFER)
    saved = module.state_dict()
    for name in buffers:
        if name not in saved:
            raise Problem(NOT_SAVED.format(name=name))


def _make(cls: Callable[..., Any], spec: _Spec, dropout: float) -> Any:
    import torch
    from torch import nn

    torch.manual_seed(0)
    module = call_learner(cls, (spec.d, spec.h, dropout, _MAX_LEN))
    if not isinstance(module, nn.Module):
        raise Problem(f"calling the class gave a {type(module).__name__}, not an nn.Module")
    for name, shape in (("w_qkv", (3 * spec.d, spec.d)), ("w_o", (spec.d, spec.d))):
        layer = getattr(module, name, None)
        if not isinstance(layer, nn.Linear) or tuple(layer.weight.shape) != shape:
            raise Problem(f"self.{name} should be an nn.Linear whose weight has shape {shape_text(shape)}")
    _check_buffer(module)
    return module.double()


def _reference(module: Any, x: Tensor, spec: _Spec) -> tuple[Array, Array]:
    """nn.MultiheadAttention with the module's weights copied in, causal, in float64."""
    import torch
    from torch import nn

    mha = nn.MultiheadAttention(spec.d, spec.h, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(module.w_qkv.weight)
        mha.out_proj.weight.copy_(module.w_o.weight)
        for bias, theirs in ((mha.in_proj_bias, module.w_qkv.bias), (mha.out_proj.bias, module.w_o.bias)):
            if theirs is None:  # nn.Linear(..., bias=False)
                bias.zero_()
            else:
                bias.copy_(theirs)
        blocked = ~torch.tril(
            torch.ones(spec.t, spec.t, dtype=torch.bool)
        )  # True = blocked, MHA's convention
        out, weights = mha(x, x, x, attn_mask=blocked, average_attn_weights=False)
    return out.numpy(), weights.numpy()


def _check_eval(cls: Callable[..., Any], spec: _Spec) -> None:
    import torch

    module = _make(cls, spec, 0.0).eval()
    x = torch.randn(spec.b, spec.t, spec.d, dtype=torch.float64, generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        out, weights = _forward(module, x, spec)
    ref_out, ref_weights = _reference(module, x, spec)
    future = np.triu(np.ones((spec.t, spec.t), dtype=bool), k=1)
    leaked = np.argwhere((np.abs(weights) > 1e-9) & future)
    if len(leaked):
        where = tuple(int(i) for i in leaked[0])
        raise Problem(
            FUTURE.format(
                i=where[2], j=where[3], where=", ".join(map(str, where)), value=f"{weights[where]:.4g}"
            )
        )
    variants: dict[str, dict[str, Any]] = {
        SCALED_D_MODEL: {"scale": "d_model"},
        UNSCALED: {"scale": "none"},
        NO_TRANSPOSE: {"transpose": False},
        SOFTMAX_OVER_QUERIES: {"dim": -2},
    }
    for sentence, flags in variants.items():
        v_out, v_weights = _variant(module, x, spec.h, **flags)
        if not _close(v_out, ref_out) and _close(out, v_out) and _close(weights, v_weights):
            raise Problem(sentence)
    for got, want, what in ((weights, ref_weights, "weights"), (out, ref_out, "output")):
        wrong = ~np.isclose(got, want, rtol=1e-6, atol=1e-9)
        if wrong.any():
            index = tuple(int(i) for i in np.argwhere(wrong)[0])
            raise Problem(
                f"{what}[{', '.join(map(str, index))}] is {got[index]:.6g}, expected {want[index]:.6g} "
                "(nn.MultiheadAttention with your weights copied in)"
            )


def _check_dropout(cls: Callable[..., Any], spec: _Spec) -> None:
    import torch

    module = _make(cls, spec, 0.5)
    x = torch.randn(spec.b, spec.t, spec.d, dtype=torch.float64, generator=torch.Generator().manual_seed(8))
    module.eval()
    with torch.no_grad():
        eval_out, eval_weights = _forward(module, x, spec)
        again, _ = _forward(module, x, spec)
    if not _close(eval_out, again):
        raise Problem(DROPOUT_IN_EVAL)
    ref_out, _ = _reference(module, x, spec)
    if not _close(eval_out, ref_out):
        raise Problem(
            "with dropout = 0.5 in eval mode the output differs from nn.MultiheadAttention's; "
            "in eval mode dropout must change nothing"
        )
    module.train()
    torch.manual_seed(1)
    with torch.no_grad():
        out, weights = _forward(module, x, spec)
    if np.mean(out == 0.0) > 0.2:
        raise Problem(DROPOUT_ON_OUTPUT)
    if _close(out, eval_out):
        raise Problem(DROPOUT_MISSING)
    allowed = eval_weights > 1e-6
    if not (weights[allowed] == 0.0).any():
        if not _close(weights, eval_weights):  # changed by dropout, yet none dropped: before the softmax
            raise Problem(DROPOUT_BEFORE_SOFTMAX)
        raise Problem(DROPOUT_NOT_RETURNED)
    kept = allowed & (weights != 0.0)
    if not np.allclose(weights[kept], 2.0 * eval_weights[kept], rtol=1e-6):
        raise Problem("the kept weights should be scaled by 1 / (1 - p) = 2; use nn.Dropout, which does it")
    with torch.no_grad():
        b, t, d, h = spec.b, spec.t, spec.d, spec.h
        v = module.w_qkv(x)[..., 2 * d :].view(b, t, h, d // h).transpose(1, 2)  # (B, h, T, d_head)
        heads = torch.from_numpy(weights) @ v
        expected = module.w_o(heads.transpose(1, 2).reshape(b, t, d)).numpy()
    if not _close(out, expected):
        raise Problem(
            "in train mode the output is not the returned (dropped-out) weights times V, projected by w_o"
        )


def check_causal_self_attention(cls: Callable[..., Any]) -> CheckResult:
    """Check ``cls(d_model, n_heads, dropout, max_len)``: an ``nn.Module`` with ``w_qkv`` (nn.Linear(d_model,
    3 d_model), laid out as ``nn.MultiheadAttention.in_proj_weight``: W_Qᵀ, W_Kᵀ, W_Vᵀ stacked), ``w_o``,
    dropout on the attention weights and the causal mask as a registered buffer; ``forward(x)``
    (B, T, d_model) returns ``(output, weights)``, (B, T, d_model) and (B, h, T, T), the weights after
    dropout.

    In eval mode it must equal ``nn.MultiheadAttention`` with its weights copied in and a causal mask.
    """

    def check(cls: Callable[..., Any], spec: _Spec) -> None:
        if spec.name.startswith("dropout"):
            _check_dropout(cls, spec)
        else:
            _check_eval(cls, spec)

    return run_cases(
        "causal self-attention module",
        cls,
        [
            _Spec("B = 2, T = 5, d_model = 8, 2 heads", 2, 5, 8, 2),
            _Spec("B = 1, T = 1, d_model = 4, 1 head", 1, 1, 4, 1),
            _Spec("B = 2, T = 6, d_model = 12, 3 heads", 2, 6, 12, 3),
            _Spec("dropout = 0.5, train and eval mode, B = 2, T = 6, d_model = 8, 2 heads", 2, 6, 8, 2),
        ],
        check,
    )


# ----------------------------------------------------------------------------------------------------
# The pre-LN block


def check_pre_ln_block(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, attention, ffn, norm1, norm2)``: one pre-LN Transformer block,
    ``x + attention(norm1(x))`` then ``+ ffn(norm2(...))`` of that, for x (B, T, d_model) and the sublayers
    given as callables (B, T, d_model) -> (B, T, d_model). Compared with ``nn.TransformerEncoderLayer``
    (``norm_first=True``, dropout 0, eval mode) whose pieces they are."""
    import torch
    from torch import nn

    def case(name: str, b: int, t: int, d: int, h: int) -> Case:
        torch.manual_seed(d + t)
        layer = nn.TransformerEncoderLayer(
            d, h, 2 * d, dropout=0.0, batch_first=True, norm_first=True, dtype=torch.float64
        ).eval()
        with torch.no_grad():
            for p in (layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias):
                p.normal_()

        def attention(z: Tensor) -> Tensor:
            out: Tensor = layer.self_attn(z, z, z, need_weights=False)[0]
            return out

        def ffn(z: Tensor) -> Tensor:
            out: Tensor = layer.linear2(torch.relu(layer.linear1(z)))
            return out

        n1, n2 = layer.norm1, layer.norm2
        x = torch.randn(b, t, d, dtype=torch.float64)
        with torch.no_grad():
            expected = layer(x).numpy()
            a1 = x + attention(n1(x))
            mistakes = (
                (
                    n2(n1(x + attention(x)) + ffn(n1(x + attention(x)))).numpy(),
                    "it is the post-LN block, LN(x + sublayer(x)); pre-LN normalizes the sublayer's input: "
                    "x + sublayer(LN(x))",
                ),
                (
                    (attention(n1(x)) + ffn(n2(attention(n1(x))))).numpy(),
                    "the attention has no residual connection: add its input, x + attention(norm1(x))",
                ),
                (
                    ffn(n2(a1)).numpy(),
                    "the feed-forward network has no residual connection: add its input, h + ffn(norm2(h))",
                ),
                (
                    (x + n1(attention(x)) + ffn(x + n1(attention(x)))).numpy(),
                    "the LayerNorm is applied to the sublayer's output; pre-LN applies it to the sublayer's "
                    "input, attention(norm1(x))",
                ),
                (
                    (x + attention(n1(x)) + ffn(n2(x))).numpy(),
                    "the feed-forward network reads the block's input x; it must read h = x + "
                    "attention(norm1(x)), the output of the first sublayer",
                ),
            )
        return Case(name, (x, attention, ffn, n1, n2), expected, mistakes=mistakes)

    with torch.no_grad():
        return run_cases(
            "pre-LN block",
            fn,
            [
                case("B = 2, T = 5, d_model = 8, 2 heads", 2, 5, 8, 2),
                case("a length-1 sequence, d_model = 4, 1 head", 1, 1, 4, 1),
                case("B = 3, T = 4, d_model = 12, 3 heads", 3, 4, 12, 3),
            ],
        )


# ----------------------------------------------------------------------------------------------------
# The pre-LN decoder block

DEC_POST_LN = (
    "it is a post-LN block, LN(x + sublayer(x)) after each sublayer; pre-LN normalizes each sublayer's input "
    "and leaves the residual path alone: x + sublayer(LN(x))"
)
DEC_MEMORY_NORMALIZED = (
    "the memory goes through norm2 too; the block normalizes only its own stream (the encoder normalized the "
    "memory already): cross_attention(norm2(h), memory)"
)
DEC_CROSS_UNNORMALIZED = (
    "cross-attention reads h without its LayerNorm; in a pre-LN block every sublayer reads its input "
    "normalized: h + cross_attention(norm2(h), memory)"
)
DEC_CROSS_NO_RESIDUAL = (
    "cross-attention has no residual connection: add its input, h + cross_attention(norm2(h), memory)"
)
DEC_QUERIES_FROM_INPUT = (
    "cross-attention's queries come from the block's input y; they come from h, the stream after the "
    "self-attention sublayer"
)
DEC_NORMS_SWAPPED = (
    "norm2 and norm3 are swapped: the block's LayerNorms are used in the order of its sublayers, norm1 "
    "before self-attention, norm2 before cross-attention, norm3 before the feed-forward network"
)
DEC_NO_CROSS = (
    "cross-attention is left out: a decoder block has three sublayers, self-attention, cross-attention to "
    "the memory, and the feed-forward network"
)


def check_pre_ln_decoder_block(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(y, memory, self_attention, cross_attention, ffn, norm1, norm2, norm3)``: one pre-LN decoder
    block, three sublayers each wrapped as x + sublayer(LN(x)): causal self-attention (``self_attention(z)``,
    causal already), cross-attention to the memory (``cross_attention(z, memory)``, the memory as it is) and
    the feed-forward network. y (B, T_dec, d_model), memory (B, T_enc, d_model). Compared with
    ``nn.TransformerDecoderLayer(norm_first=True)`` (dropout 0, eval mode, a causal ``tgt_mask``), whose
    pieces they are."""
    import torch
    from torch import nn

    def case(name: str, b: int, t_dec: int, t_enc: int, d: int, h: int) -> Case:
        torch.manual_seed(10 * d + t_dec + t_enc)
        layer = nn.TransformerDecoderLayer(
            d, h, 2 * d, dropout=0.0, batch_first=True, norm_first=True, dtype=torch.float64
        ).eval()
        norms = (layer.norm1, layer.norm2, layer.norm3)
        with torch.no_grad():
            for norm in norms:
                norm.weight.normal_()
                norm.bias.normal_()
        blocked = torch.ones(t_dec, t_dec, dtype=torch.bool).triu(1)  # True = blocked (torch's convention)

        def self_attention(z: Tensor) -> Tensor:
            out: Tensor = layer.self_attn(
                z, z, z, attn_mask=blocked[: z.shape[1], : z.shape[1]], need_weights=False
            )[0]
            return out

        def cross_attention(z: Tensor, memory: Tensor) -> Tensor:
            out: Tensor = layer.multihead_attn(z, memory, memory, need_weights=False)[0]
            return out

        def ffn(z: Tensor) -> Tensor:
            out: Tensor = layer.linear2(torch.relu(layer.linear1(z)))
            return out

        n1, n2, n3 = norms
        y = torch.randn(b, t_dec, d, dtype=torch.float64)
        memory = torch.randn(b, t_enc, d, dtype=torch.float64)
        with torch.no_grad():
            expected = layer(y, memory, tgt_mask=blocked).numpy()
            h1 = y + self_attention(n1(y))
            h2 = h1 + cross_attention(n2(h1), memory)
            post1 = n1(y + self_attention(y))
            post2 = n2(post1 + cross_attention(post1, memory))
            mistakes = tuple(
                (result.numpy(), words)
                for result, words in (
                    (n3(post2 + ffn(post2)), DEC_POST_LN),
                    (post2 + ffn(n3(post2)), DEC_POST_LN),
                    (_then_ffn(h1 + cross_attention(n2(h1), n2(memory)), ffn, n3), DEC_MEMORY_NORMALIZED),
                    (_then_ffn(h1 + cross_attention(h1, memory), ffn, n3), DEC_CROSS_UNNORMALIZED),
                    (_then_ffn(cross_attention(n2(h1), memory), ffn, n3), DEC_CROSS_NO_RESIDUAL),
                    (_then_ffn(h1 + cross_attention(n2(y), memory), ffn, n3), DEC_QUERIES_FROM_INPUT),
                    (_then_ffn(h1 + cross_attention(n3(h1), memory), ffn, n2), DEC_NORMS_SWAPPED),
                    (_then_ffn(h1, ffn, n3), DEC_NO_CROSS),
                    (_then_ffn(h1, ffn, n2), DEC_NO_CROSS),
                )
            )
            assert np.allclose(_then_ffn(h2, ffn, n3).numpy(), expected)
        return Case(
            name, (y, memory, self_attention, cross_attention, ffn, n1, n2, n3), expected, mistakes=mistakes
        )

    with torch.no_grad():
        return run_cases(
            "pre-LN decoder block",
            fn,
            [
                case("B = 2, T_dec = 4, T_enc = 6, d_model = 8, 2 heads", 2, 4, 6, 8, 2),
                case("a single target position, T_enc = 3, d_model = 4, 1 head", 1, 1, 3, 4, 1),
                case("T_dec = 5 longer than T_enc = 2, d_model = 12, 3 heads", 2, 5, 2, 12, 3),
            ],
        )


def _then_ffn(h: Tensor, ffn: Callable[[Tensor], Tensor], norm: Callable[[Tensor], Tensor]) -> Tensor:
    """The block's last sublayer on the stream ``h``: h + ffn(norm(h))."""
    return h + ffn(norm(h))


# ----------------------------------------------------------------------------------------------------
# The code card: the feed-forward network

FFN_NO_ACTIVATION = "the ReLU is missing: max(0, x @ w1 + b1) before the second layer"
FFN_RELU_TWICE = "the ReLU is applied after the second layer too; the output, h @ w2 + b2, may be negative"
FFN_BIAS_AFTER = "the ReLU is applied before b1 is added; add the bias first: np.maximum(0, x @ w1 + b1)"
FFN_NO_BIASES = "the biases are left out: x @ w1 + b1, then h @ w2 + b2"


def check_card_feed_forward(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x, w1, b1, w2, b2)``: the position-wise feed-forward network with ReLU,
    max(0, x @ w1 + b1) @ w2 + b2; x (..., d_model), w1 (d_model, d_ff), w2 (d_ff, d_model)."""
    rng = np.random.default_rng(1704)

    def case(name: str, shape: tuple[int, ...], d_ff: int) -> Case:
        d = shape[-1]
        x = rng.standard_normal(shape)
        w1, b1 = rng.standard_normal((d, d_ff)), rng.standard_normal(d_ff)
        w2, b2 = rng.standard_normal((d_ff, d)), rng.standard_normal(d)
        hidden = np.maximum(0.0, x @ w1 + b1)
        mistakes = (
            ((x @ w1 + b1) @ w2 + b2, FFN_NO_ACTIVATION),
            (np.maximum(0.0, hidden @ w2 + b2), FFN_RELU_TWICE),
            ((np.maximum(0.0, x @ w1) + b1) @ w2 + b2, FFN_BIAS_AFTER),
            (np.maximum(0.0, x @ w1) @ w2, FFN_NO_BIASES),
        )
        return Case(name, (x, w1, b1, w2, b2), hidden @ w2 + b2, mistakes=mistakes)

    return run_cases(
        "feed-forward",
        fn,
        [
            case("3 positions, d_model = 4, d_ff = 8", (3, 4), 8),
            case("a batch (2, 3, 2), d_ff = 6", (2, 3, 2), 6),
        ],
    )
