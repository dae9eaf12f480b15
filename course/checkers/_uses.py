"""Checkers for lesson 06: cross-attention with a padded encoder batch, and the bugs in a decoder's two
attentions (a find-the-bug exercise: the checker says how many bugs remain, not which); then the lesson's
code cards (``check_card_cross_attention``, ``check_card_use_mask``, ``check_card_decoder_mask``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import causal_mask, padding_mask, scaled_dot_product_attention, self_attention
from course.checkers._attention import scale_mistakes
from course.checkers._bugs import BugCase, run_bug_hunt
from course.checkers._card_parts import Mistakes, mask_words
from course.checkers._engine import Case, CheckResult, run_cases
from course.seq2seq import cross_attention, decoder_attention

__all__ = [
    "BROADCAST_HINT",
    "CAUSAL_CROSS_WORDS",
    "CROSS_NO_RESIDUAL_WORDS",
    "DECODER_BUGS",
    "DECODER_KEYS_WORDS",
    "ENCODER_QUERIES_WORDS",
    "INVERTED_PADDING_WORDS",
    "NO_PADDING_WORDS",
    "PADDING_OFF_BY_ONE_WORDS",
    "QUERY_AXIS_WORDS",
    "SELF_NO_RESIDUAL_WORDS",
    "check_card_cross_attention",
    "check_card_decoder_mask",
    "check_card_use_mask",
    "check_cross_attention",
    "check_decoder_attention",
]

ENCODER_QUERIES_WORDS = (
    "it matches taking the queries from the encoder (memory @ w_q); in cross-attention the queries come from "
    "the decoder, x_dec @ w_q, and only the keys and values from memory"
)
DECODER_KEYS_WORDS = (
    "it matches taking the keys and values from the decoder; in cross-attention they come from memory, the "
    "encoder's output"
)
QUERY_AXIS_WORDS = (
    "it matches applying the padding mask on the query axis; padding is a property of the encoder's "
    "positions, the keys: give the (B, T_enc) mask a query axis, mask[:, None, :]"
)
CAUSAL_CROSS_WORDS = (
    "it matches a causal mask on cross-attention; the whole source is known before decoding starts, so every "
    "decoder position may attend to every real encoder position: block only the padding"
)
NO_PADDING_WORDS = (
    "it matches ignoring memory_lengths; block the padded encoder positions, keys j >= memory_lengths[b]"
)
INVERTED_PADDING_WORDS = (
    "it matches the padding mask inverted: it blocks the real encoder positions and keeps the padding (a "
    "memory without padding is then left with no key at all); here True marks a real encoder position"
)
PADDING_OFF_BY_ONE_WORDS = (
    "it counts one encoder position too many as real: key j is real when j < memory_lengths[b], not when "
    "j <= memory_lengths[b]"
)
BROADCAST_HINT = (
    "the padding mask has one entry per encoder position, (B, T_enc): give it a query axis, (B, 1, T_enc), "
    "and take the keys and values from memory"
)


def check_cross_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_dec, memory, w_q, w_k, w_v, memory_lengths)``: single-head cross-attention, queries from
    ``x_dec`` (B, T_dec, d_model), keys and values from ``memory`` (B, T_enc, d_model), the padded positions
    of each memory (j >= memory_lengths[b]) blocked. ``fn`` returns the output (B, T_dec, d_v), or
    ``(output, weights)`` with weights (B, T_dec, T_enc).
    """
    rng = np.random.default_rng(606)

    def case(name: str, t_dec: int, t_enc: int, lengths: list[int], d_model: int, d_k: int) -> Case:
        b = len(lengths)
        x_dec = rng.standard_normal((b, t_dec, d_model))
        memory = rng.standard_normal((b, t_enc, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d_k)) for _ in range(3))
        memory_lengths = np.array(lengths)
        out, weights = cross_attention(x_dec, memory, w_q, w_k, w_v, memory_lengths)
        keys = padding_mask(memory_lengths, t_enc)[:, None, :]  # (B, 1, T_enc)
        q, k, v = x_dec @ w_q, memory @ w_k, memory @ w_v

        def attend(mask: NDArray[np.bool_] | None, scale: float | None = None) -> NDArray[Any]:
            return scaled_dot_product_attention(q, k, v, mask, scale=scale)[0]

        mistakes: list[tuple[NDArray[Any], str]] = [
            (cross_attention(memory, memory, w_q, w_k, w_v, memory_lengths)[0], ENCODER_QUERIES_WORDS),
            (attend(causal_mask(t_dec, t_enc) & keys), CAUSAL_CROSS_WORDS),
            (attend(causal_mask(t_dec, t_enc, align="top-left") & keys), CAUSAL_CROSS_WORDS),
            *scale_mistakes(
                lambda scale: attend(keys, scale),
                1 / math.sqrt(d_k),
                [
                    (1 / math.sqrt(d_model), "scaling by 1/√d_model"),
                    (1.0, "attention without scaling"),
                    (1 / d_k, "scaling by 1/d_k"),
                ],
                "; scale by 1/√d_k, d_k being the width of the queries and keys",
            ),
            (attend(None), NO_PADDING_WORDS),
            (attend(~keys), INVERTED_PADDING_WORDS),
            (attend(padding_mask(memory_lengths + 1, t_enc)[:, None, :]), PADDING_OFF_BY_ONE_WORDS),
            (weights, "these are the attention weights; return the output, or (output, weights)"),
        ]
        if t_dec == t_enc:
            by_query = padding_mask(memory_lengths, t_dec)[:, :, None]  # (B, T_dec, 1): the wrong axis
            mistakes.append((attend(by_query), QUERY_AXIS_WORDS))
            x_k, x_v = x_dec @ w_k, x_dec @ w_v
            mistakes.append((scaled_dot_product_attention(q, x_k, x_v, keys)[0], DECODER_KEYS_WORDS))
        return Case(
            name,
            (x_dec, memory, w_q, w_k, w_v, memory_lengths),
            out,
            weights,
            np.broadcast_to(keys, weights.shape),
            1,
            tuple(mistakes),
            error_hint=BROADCAST_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "cross-attention",
        fn,
        [
            case("T_dec = 3, T_enc = 5, memory lengths 5 and 3", 3, 5, [5, 3], 6, 4),
            case("T_dec = T_enc = 4, memory lengths 4 and 2", 4, 4, [4, 2], 8, 2),
            case("a single decoder position, memory lengths 2, 4 and 1", 1, 4, [2, 4, 1], 6, 3),
            case("T_dec = 5 longer than T_enc = 3, memory lengths 1 and 3", 5, 3, [1, 3], 4, 2),
            case("d_k = 1", 2, 3, [3, 2], 4, 1),
        ],
    )


SELF_NO_RESIDUAL_WORDS = (
    "it leaves out the residual connection around self-attention: h = y + self-attention(y), and "
    "cross-attention reads h"
)
CROSS_NO_RESIDUAL_WORDS = (
    "it leaves out the residual connection around cross-attention; return h + cross-attention"
)
DECODER_BUGS = {"self-attention unmasked": 1, "cross-attention masked causally": 2, "queries from y": 1}


def _cross(h: NDArray[Any], memory: NDArray[Any], cross_w: tuple[NDArray[Any], ...], mask: Any) -> Any:
    return scaled_dot_product_attention(h @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2], mask)[0]


def _decoder(
    bugs: dict[str, int],
    y: NDArray[Any],
    memory: NDArray[Any],
    self_w: tuple[NDArray[Any], ...],
    cross_w: tuple[NDArray[Any], ...],
) -> NDArray[Any]:
    """The lesson's ``buggy_decoder_attention`` with ``bugs`` left in; none: :func:`decoder_attention`. The
    causal mask on cross-attention has two forms: bottom-right (1, as given) and top-left (2)."""
    t_dec, t_enc = y.shape[-2], memory.shape[-2]
    self_mask = None if bugs["self-attention unmasked"] else causal_mask(t_dec)
    h = y + self_attention(y, self_w[0], self_w[1], self_w[2], self_mask)[0]
    form = bugs["cross-attention masked causally"]
    cross_mask = [None, causal_mask(t_dec, t_enc), causal_mask(t_dec, t_enc, align="top-left")][form]
    queries = y if bugs["queries from y"] else h
    out: NDArray[Any] = (
        h
        + scaled_dot_product_attention(
            queries @ cross_w[0], memory @ cross_w[1], memory @ cross_w[2], cross_mask
        )[0]
    )
    return out


def check_decoder_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(y, memory, self_w, cross_w)``, the learner's fix of the lesson's
    ``buggy_decoder_attention``: the attention half of a decoder layer (single head, residual connections),
    ``h = y + causal self-attention(y)``, then ``h + cross-attention(h, memory)``, not masked.
    ``y`` (..., T_dec, d), ``memory`` (..., T_enc, d), ``self_w`` and ``cross_w`` = (W_Q, W_K, W_V), (d, d)
    each; the result is (..., T_dec, d). Says how many of the 3 bugs remain, never which; a mistake of the
    learner's own (a residual connection dropped, cross-attention's keys taken from the decoder) is named.
    """
    rng = np.random.default_rng(6060)

    def case(name: str, lead: tuple[int, ...], t_dec: int, t_enc: int, d: int) -> BugCase:
        y = rng.standard_normal((*lead, t_dec, d))
        memory = rng.standard_normal((*lead, t_enc, d))
        self_w = tuple(rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(3))
        cross_w = tuple(rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(3))
        expected = decoder_attention(y, memory, self_w, cross_w)  # type: ignore[arg-type]
        no_residual = self_attention(y, self_w[0], self_w[1], self_w[2], causal_mask(t_dec))[0]
        h = y + no_residual
        extra = (
            (h + _cross(h, h, cross_w, None), DECODER_KEYS_WORDS),
            (no_residual + _cross(no_residual, memory, cross_w, None), SELF_NO_RESIDUAL_WORDS),
            (expected - h, CROSS_NO_RESIDUAL_WORDS),
        )
        return BugCase(name, (y, memory, self_w, cross_w), extra)

    return run_bug_hunt(
        "decoder attention",
        fn,
        [
            case("T_dec = 4, T_enc = 6, d = 4", (), 4, 6, 4),
            case("a batch of 2, T_dec = 3, T_enc = 5", (2,), 3, 5, 4),
            case("T_dec = 5 longer than T_enc = 2", (), 5, 2, 3),
            case("a single decoder position", (), 1, 4, 4),
        ],
        _decoder,
        DECODER_BUGS,
    )


# ----------------------------------------------------------------------------------------------------
# The code cards: cross-attention, the mask of each use, the decoder's mask

CROSS_D_MODEL = "it matches scaling by 1/√d_model; scale by 1/√d_k, the width of the queries and keys"


def check_card_cross_attention(fn: Callable[..., Any]) -> CheckResult:
    """Check ``fn(x_dec, memory, w_q, w_k, w_v)``: single-head cross-attention without a mask, x_dec
    (T_dec, d_model), memory (T_enc, d_model); returns ``(output, weights)``, (T_dec, d_v), (T_dec, T_enc)."""
    rng = np.random.default_rng(1601)

    def case(name: str, t_dec: int, t_enc: int, d_model: int, d_k: int, d_v: int) -> Case:
        x_dec, memory = rng.standard_normal((t_dec, d_model)), rng.standard_normal((t_enc, d_model))
        w_q, w_k, w_v = (rng.standard_normal((d_model, d)) for d in (d_k, d_k, d_v))
        out, weights = scaled_dot_product_attention(x_dec @ w_q, memory @ w_k, memory @ w_v)
        mistakes = (
            (scaled_dot_product_attention(memory @ w_q, x_dec @ w_k, x_dec @ w_v)[0], ENCODER_QUERIES_WORDS),
            (scaled_dot_product_attention(x_dec @ w_q, x_dec @ w_k, x_dec @ w_v)[0], DECODER_KEYS_WORDS),
            (
                scaled_dot_product_attention(
                    x_dec @ w_q, memory @ w_k, memory @ w_v, scale=1 / math.sqrt(d_model)
                )[0],
                CROSS_D_MODEL,
            ),
            (
                scaled_dot_product_attention(memory @ w_q, memory @ w_k, memory @ w_v)[0],
                ENCODER_QUERIES_WORDS,
            ),
        )
        return Case(
            name, (x_dec, memory, w_q, w_k, w_v), out, weights, mistakes=mistakes, weights_required=True
        )

    return run_cases(
        "cross-attention",
        fn,
        [
            case("3 decoder positions, 5 encoder positions", 3, 5, 6, 2, 4),
            case("one decoder position", 1, 4, 4, 3, 2),
            case("6 decoder positions, 2 encoder positions", 6, 2, 8, 4, 3),
        ],
    )


USE_CROSS_CAUSAL = (
    "cross-attention gets a causal mask; the whole source is known before decoding starts, so every decoder "
    "position may attend to every real source position"
)
USE_ENCODER_CAUSAL = (
    "the encoder's self-attention gets a causal mask; an encoder reads its whole input, both ways"
)
USE_DECODER_OPEN = (
    "the decoder's self-attention sees every real position; it is causal: position i sees keys j <= i only"
)
USE_DECODER_UPPER = "the decoder's mask is the upper triangle, j >= i, the future; keep the lower one, j <= i"
USE_NO_PADDING = "the padding is missing: block the keys j >= key_lengths[b] of each sequence, in every use"
USE_QUERY_AXIS = (
    "the padding is applied on the query axis; key_lengths bounds the keys j, the last axis: real[:, None, :]"
)
USE_INVERTED_PADDING = (
    "the padding mask is inverted: it keeps the padded keys and blocks the real ones; key j is real when "
    "j < key_lengths[b]"
)


def check_card_use_mask(fn: Callable[[str, int, int, NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(use, t_q, t_k, key_lengths)``: the (B, t_q, t_k) boolean mask (True = may attend) of
    ``use`` over a right-padded batch whose keys' sequences have ``key_lengths`` (B,) real positions:
    "encoder" and "cross" block only the padded keys, "decoder" (t_q == t_k) is causal too."""

    def case(use: str, t_q: int, t_k: int, lengths: list[int]) -> Case:
        n = np.array(lengths)
        shape = (len(lengths), t_q, t_k)
        real = np.broadcast_to(padding_mask(n, t_k)[:, None, :], shape)  # (B, t_q, t_k): the real keys
        lower = np.tri(t_q, t_k, dtype=bool)  # (t_q, t_k): j <= i
        if use == "decoder":
            right = real & lower
            mistakes: Mistakes = (
                (real, USE_DECODER_OPEN),
                (real & lower.T, USE_DECODER_UPPER),
                (np.broadcast_to(lower, shape), USE_NO_PADDING),
                (~real & lower, USE_INVERTED_PADDING),
            )
        else:
            right = real
            causal_words = USE_CROSS_CAUSAL if use == "cross" else USE_ENCODER_CAUSAL
            mistakes = (
                (real & lower, causal_words),
                (real & causal_mask(t_q, t_k), causal_words),
                (np.ones(shape, dtype=bool), USE_NO_PADDING),
                (~real, USE_INVERTED_PADDING),
            )
        if t_q == t_k:
            by_query = np.broadcast_to(padding_mask(n, t_q)[:, :, None], shape)  # (B, t_q, t_k): wrong axis
            mistakes += ((by_query & (lower if use == "decoder" else True), USE_QUERY_AXIS),)
        name = f'"{use}", t_q = {t_q}, t_k = {t_k}, key lengths {", ".join(map(str, lengths))}'
        return Case(name, (use, t_q, t_k, n), right, mistakes=mistakes, mask_words=mask_words)

    return run_cases(
        "mask of each use",
        fn,
        [
            case("encoder", 4, 4, [4, 2]),
            case("decoder", 4, 4, [3, 4]),
            case("cross", 3, 5, [5, 2]),
            case("cross", 4, 4, [4, 3]),
            case("decoder", 1, 1, [1]),
        ],
    )


DECODER_MASK_QUERY_AXIS = (
    "the padding is applied on the query axis; padding is a property of the keys: lengths[b] bounds j, "
    "the last axis, mask[:, None, :]"
)
DECODER_MASK_NO_CAUSAL = "the causal part is missing: query i sees keys j <= i that are real"
DECODER_MASK_NO_PADDING = (
    "the padding is missing: one (t, t) causal mask for all; block the keys j >= lengths[b] of each "
    "sequence, (B, t, t)"
)


def check_card_decoder_mask(fn: Callable[[NDArray[Any], int], Any]) -> CheckResult:
    """Check ``fn(lengths, t)``: the (B, t, t) mask of decoder self-attention over a right-padded batch, True
    where query i may attend to key j: j <= i and j < lengths[b]."""

    def case(lengths: list[int], t: int) -> Case:
        n = np.array(lengths)
        causal = causal_mask(t)
        keys = padding_mask(n, t)
        mistakes = (
            (causal[None] & keys[:, :, None], DECODER_MASK_QUERY_AXIS),
            (np.broadcast_to(keys[:, None, :], (len(n), t, t)), DECODER_MASK_NO_CAUSAL),
            (causal, DECODER_MASK_NO_PADDING),
        )
        name = f"lengths {', '.join(map(str, lengths))}, t = {t}"
        return Case(name, (n, t), causal[None] & keys[:, None, :], mistakes=mistakes, mask_words=mask_words)

    return run_cases("decoder mask", fn, [case([2, 4], 4), case([3, 1, 5], 5), case([1], 1)])
