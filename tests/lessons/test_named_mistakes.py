"""Named mistakes tie the exercises to the code cards: every name in `course.checkers.MISTAKES` is practised
by a code card, named by an exercise's checker (a wrong solution here for each, as a learner would write it),
and named by the card's own checker (a row of test_code_cards.WRONG); a card lists only known names; a
code card's own grading is heard by no listener, an exercise's verdict by every one."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_code_cards import CARDS, WRONG

from course.attention import causal_mask, padding_mask, sinusoidal_positions
from course.checkers import (
    MISTAKES,
    CheckResult,
    check_attention,
    check_chunked_attention,
    check_cross_attention,
    check_decoding_mask,
    check_layer_norm,
    check_padding_mask,
    check_positional_encoding,
    check_softmax,
    listen,
    mistake_in,
    run_code,
    unlisten,
)
from course.seq2seq import cross_attention


def _softmax(s: Any) -> Any:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _scores(q: Any, k: Any) -> Any:
    return q @ np.swapaxes(k, -1, -2)


def _chunked(bug: str) -> Callable[..., Any]:
    def chunked(q: Any, k: Any, v: Any, chunk: int) -> Any:
        m = np.full(len(q), -np.inf)
        total, acc = np.zeros(len(q)), np.zeros((len(q), v.shape[-1]))
        for start in range(0, len(k), chunk):
            s = q @ k[start : start + chunk].T / math.sqrt(q.shape[-1])
            m_new = np.maximum(m, s.max(axis=1))
            p, c = np.exp(s - m_new[:, None]), np.exp(m - m_new)
            total = (total if bug == "sum" else total * c) + p.sum(axis=1)
            acc = (acc if bug == "output" else acc * c[:, None]) + p @ v[start : start + chunk]
            m = m_new
        return acc / total[:, None]

    return chunked


def _layer_norm(bug: str) -> Callable[..., Any]:
    def layer_norm(x: Any, gamma: Any, beta: Any, eps: float) -> Any:
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        if bug == "no mean":
            return x / np.sqrt(var + eps) * gamma + beta
        if bug == "swapped":
            return (x - mean) / np.sqrt(var + eps) * beta + gamma
        return (x - mean) / (var + eps) * gamma + beta

    return layer_norm


def _queries_from_encoder(x_dec: Any, memory: Any, w_q: Any, w_k: Any, w_v: Any, lengths: Any) -> Any:
    return cross_attention(memory, memory, w_q, w_k, w_v, lengths)[0]


def _bottom_right(t_q: int, t_k: int) -> Any:
    return causal_mask(t_q, t_k)


# name: (the exercise's checker, a wrong solution a learner might write)
EXERCISES: dict[str, tuple[Callable[[Any], CheckResult], Callable[..., Any]]] = {
    "softmax-not-normalised": (check_softmax, lambda x: np.exp(x - x.max(axis=-1, keepdims=True))),
    "softmax-overflow": (check_softmax, lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)),
    "attention-unscaled": (check_attention, lambda q, k, v: _softmax(_scores(q, k)) @ v),
    "attention-scaled-by-d-k": (check_attention, lambda q, k, v: _softmax(_scores(q, k) / q.shape[-1]) @ v),
    "attention-scaled-after-softmax": (
        check_attention,
        lambda q, k, v: _softmax(_scores(q, k)) / math.sqrt(q.shape[-1]) @ v,
    ),
    "positions-from-one": (check_positional_encoding, lambda t, d: sinusoidal_positions(t + 1, d)[1:]),
    "padding-mask-transposed": (check_padding_mask, lambda lengths, t: padding_mask(lengths, t).T),
    "causal-top-left": (check_decoding_mask, lambda t_q, t_k: np.tril(np.ones((t_q, t_k), dtype=bool))),
    "causal-off-by-one": (
        check_decoding_mask,
        lambda t_q, t_k: np.arange(t_k)[None, :] < np.arange(t_q)[:, None] + (t_k - t_q),
    ),
    "causal-transposed": (check_decoding_mask, lambda t_q, t_k: _bottom_right(t_q, t_k).T),
    "causal-inverted": (check_decoding_mask, lambda t_q, t_k: ~_bottom_right(t_q, t_k)),
    "cross-queries-from-encoder": (check_cross_attention, _queries_from_encoder),
    "layer-norm-no-mean": (check_layer_norm, _layer_norm("no mean")),
    "layer-norm-swapped": (check_layer_norm, _layer_norm("swapped")),
    "layer-norm-no-sqrt": (check_layer_norm, _layer_norm("no sqrt")),
    "online-sum-not-rescaled": (check_chunked_attention, _chunked("sum")),
    "online-output-not-rescaled": (check_chunked_attention, _chunked("output")),
}


def test_every_named_mistake_has_an_exercise_here_and_the_names_are_distinct() -> None:
    assert list(EXERCISES) == list(MISTAKES)
    assert len({mistake.words for mistake in MISTAKES.values()}) == len(MISTAKES)
    assert all(name == mistake.name for name, mistake in MISTAKES.items())


@pytest.mark.parametrize("name", list(MISTAKES))
def test_an_exercises_checker_names_the_mistake(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    checker, wrong = EXERCISES[name]
    result = checker(wrong)
    assert not result
    assert mistake_in(result.message) == MISTAKES[name], result.message
    assert capsys.readouterr().out == result.message + "\n"


@pytest.mark.parametrize("name", list(MISTAKES))
def test_a_code_card_practises_each_named_mistake(name: str) -> None:
    assert [card.id for card in CARDS.values() if name in card.mistakes]


@pytest.mark.parametrize("card_id", sorted(card.id for card in CARDS.values() if card.mistakes))
def test_a_cards_checker_names_each_mistake_it_lists(card_id: str) -> None:
    named = {mistake_in(sentence) for other, _, sentence in WRONG if other == card_id}
    assert set(CARDS[card_id].mistakes) <= {mistake.name for mistake in named if mistake is not None}


def test_the_cards_that_practise_mistakes() -> None:
    assert {card.id: card.mistakes for card in CARDS.values() if card.mistakes} == {
        "01-code-stable-softmax": ("softmax-not-normalised", "softmax-overflow"),
        "02-code-attention": (
            "attention-unscaled",
            "attention-scaled-by-d-k",
            "attention-scaled-after-softmax",
        ),
        "03-code-position-code": ("positions-from-one",),
        "05-code-causal-mask": (
            "causal-top-left",
            "causal-off-by-one",
            "causal-transposed",
            "causal-inverted",
        ),
        "05-code-padding-mask": ("padding-mask-transposed",),
        "06-code-cross-attention": ("cross-queries-from-encoder",),
        "07-code-layer-norm": ("layer-norm-no-mean", "layer-norm-swapped", "layer-norm-no-sqrt"),
        "08-code-online-softmax": ("online-sum-not-rescaled", "online-output-not-rescaled"),
    }


def test_a_passing_or_unnamed_verdict_names_no_mistake() -> None:
    assert mistake_in("✓ softmax: all 8 cases pass.") is None
    assert mistake_in("· softmax: not written yet. Replace the `raise NotImplementedError` line") is None
    assert mistake_in("✗ softmax, case 1 of 8 (a vector of 3 scores): output[0] is 1, expected 0.5.") is None


def test_listeners_hear_the_exercises_not_the_code_cards(capsys: pytest.CaptureFixture[str]) -> None:
    heard: list[CheckResult] = []
    listen(heard.append)
    listen(heard.append)  # once, however often added
    try:
        result = check_decoding_mask(EXERCISES["causal-top-left"][1])
        card = CARDS["05-code-causal-mask"]
        verdict = run_code(
            "def causal_mask(t, s):\n    return np.tril(np.ones((t, s), dtype=bool))\n",
            "causal_mask",
            card.checker or "",
        )
    finally:
        unlisten(heard.append)
    check_decoding_mask(EXERCISES["causal-top-left"][1])  # no longer listening
    assert heard == [result]
    assert mistake_in(verdict.sentence) == MISTAKES["causal-top-left"]  # named, but the card's own answer
    capsys.readouterr()


def test_a_listener_that_fails_leaves_the_verdict_alone(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(result: CheckResult) -> None:
        raise RuntimeError("the listener's own bug")

    listen(broken)
    try:
        result = check_softmax(EXERCISES["softmax-overflow"][1])
    finally:
        unlisten(broken)
    assert mistake_in(result.message) == MISTAKES["softmax-overflow"]
    assert capsys.readouterr().out == result.message + "\n"
