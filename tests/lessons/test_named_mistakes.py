"""Named mistakes tie the exercises to the code cards: every name in `course.checkers.MISTAKES` is practised
by a code card, named by the checker of an exercise that a lesson's notebook calls (a wrong solution here for
each, as a learner would write it, and the exercise read from the notebooks' own cells, so that the table
cannot drift back to checkers no lesson calls), and named by the card's own checker (a row of
test_code_cards.WRONG); a card lists only known names; a code card's own grading is heard by no listener, an
exercise's verdict by every one."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from solution_regions import BEGIN, split_regions
from test_code_cards import CARDS, WRONG

import course.checkers
from course.checkers import (
    MISTAKES,
    CheckResult,
    check_cached_attention,
    check_channels_first_attention,
    check_chunked_attention,
    check_cross_attention,
    check_layer_norm_backward,
    check_positional_encoding,
    check_prefix_lm_mask,
    check_softmax,
    check_top_k_softmax,
    listen,
    mistake_in,
    run_code,
    unlisten,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CALL = re.compile(r"(?<![\w.])(check_\w+)\(")


@cache
def exercise_checkers() -> dict[str, frozenset[str]]:
    """The checkers the exercise cells of each lesson's notebook call, by lesson ("05"): a code cell with a
    solution region (``### BEGIN SOLUTION``) and, outside it, the call of its checker."""
    called: dict[str, frozenset[str]] = {}
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")):
        names: set[str] = set()
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] == "code" and BEGIN in source:
                names.update(CALL.findall("\n".join(split_regions(source)[0])))
        called[path.name[:2]] = frozenset(names)
    return called


def _softmax(s: Any) -> Any:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# Lesson 01, exercise 1: the softmax of each row's k largest scores


def _kept(x: Any, k: int) -> Any:
    kth = np.sort(x, axis=-1)[..., -k][..., None]  # the k-th largest score of each row
    return x >= kth


def top_k_not_divided(x: Any, k: int) -> Any:
    s = np.where(_kept(x, k), x, -np.inf)
    return np.exp(s - s.max(axis=-1, keepdims=True))


def top_k_without_the_maximum(x: Any, k: int) -> Any:
    e = np.where(_kept(x, k), np.exp(x), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


# Lesson 02, exercise 1: attention on inputs stored channels first, q (..., d_k, T_q)


def _channels_first(bug: str) -> Callable[..., Any]:
    def attention(q: Any, k: Any, v: Any) -> Any:
        d_k = q.shape[-2]
        scores = np.swapaxes(q, -1, -2) @ k  # (..., T_q, T_k)
        if bug == "1/d_k":
            scores = scores / d_k
        weights = _softmax(scores)
        if bug == "after":
            weights = weights / math.sqrt(d_k)
        return v @ np.swapaxes(weights, -1, -2)  # (..., d_v, T_q)

    return attention


# Lesson 03, exercise 2: the sinusoidal positional encoding


def positions_from_one(t: int, d_model: int) -> Any:
    pos = np.arange(1, t + 1)[:, None]  # (t, 1)
    angle = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)  # (t, d_model // 2)
    pe = np.zeros((t, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe


# Lesson 05, exercise 1: a prefix language model's mask; exercise 3: a key/value cache step


def prefix_lm_transposed(t: int, prefix: int) -> Any:
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    return (j <= np.maximum(i, prefix - 1)).T


def prefix_lm_blocked_true(t: int, prefix: int) -> Any:
    i, j = np.arange(t)[:, None], np.arange(t)[None, :]
    return j > np.maximum(i, prefix - 1)  # True where blocked


def _cached(mask_of: Callable[[Any, Any, int], Any]) -> Callable[..., Any]:
    def cached_attention(x_new: Any, k_cache: Any, v_cache: Any, w_q: Any, w_k: Any, w_v: Any) -> Any:
        k_all = np.concatenate([k_cache, x_new @ w_k])
        v_all = np.concatenate([v_cache, x_new @ w_v])
        q = x_new @ w_q
        t_old = len(k_cache)
        i, j = np.arange(len(x_new))[:, None], np.arange(len(k_all))[None, :]
        scores = np.where(mask_of(i, j, t_old), q @ k_all.T / math.sqrt(q.shape[-1]), -np.inf)
        return _softmax(scores) @ v_all, k_all, v_all

    return cached_attention


# Lesson 06, exercise 1: cross-attention with a padded encoder batch


def _cross(bug: str) -> Callable[..., Any]:
    def cross_attention(x_dec: Any, memory: Any, w_q: Any, w_k: Any, w_v: Any, memory_lengths: Any) -> Any:
        q = (memory if bug == "queries" else x_dec) @ w_q
        k, v = memory @ w_k, memory @ w_v
        j = np.arange(memory.shape[-2])[None, :]
        real = j <= memory_lengths[:, None] if bug == "padding" else j < memory_lengths[:, None]  # (B, T_enc)
        scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        return _softmax(np.where(real[:, None, :], scores, -np.inf)) @ v

    return cross_attention


# Lesson 07, exercise 1: LayerNorm's backward pass


def _layer_norm_backward(bug: str) -> Callable[..., Any]:
    def backward(x: Any, gamma: Any, grad_out: Any, eps: float = 1e-5) -> Any:
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        sigma = var + eps if bug == "no sqrt" else np.sqrt(var + eps)
        x_hat = x / sigma if bug == "no mean" else (x - mean) / sigma
        g = grad_out * gamma
        through_mean = g.mean(axis=-1, keepdims=True)
        through_sigma = x_hat * (g * x_hat).mean(axis=-1, keepdims=True)
        return (g - through_mean - through_sigma) / sigma

    return backward


# Lesson 08, exercise 1: chunked attention with an online softmax


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


Checker = Callable[[Any], CheckResult]

# name: (the lesson, its exercise's checker, a wrong solution a learner might write, the sentence it gets)
EXERCISES: dict[str, tuple[str, Checker, Callable[..., Any], str]] = {
    "softmax-not-normalised": (
        "01",
        check_top_k_softmax,
        top_k_not_divided,
        (
            "✗ top-k softmax, case 1 of 6 (the scores [1, 3, 2, 0.5], k = 2): output[1] is 1, expected "
            "0.731059; the exponentials are not divided by their sum; divide each row by its own sum, "
            "so that it sums to 1."
        ),
    ),
    "softmax-overflow": (
        "01",
        check_top_k_softmax,
        top_k_without_the_maximum,
        (
            "✗ top-k softmax, case 6 of 6 (large scores near 1000, k = 2): output[0, 1] is nan, "
            "expected 0.880797 (did exp overflow or underflow? subtract each row's own maximum before "
            "exp)."
        ),
    ),
    "attention-unscaled": (
        "02",
        check_channels_first_attention,
        _channels_first("unscaled"),
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, "
            "0] is 0.364028, expected 0.643112; it matches attention without scaling; in this layout "
            "d_k is the length of axis -2 of q and k, q.shape[-2]."
        ),
    ),
    "attention-scaled-by-d-k": (
        "02",
        check_channels_first_attention,
        _channels_first("1/d_k"),
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, "
            "0] is 0.688017, expected 0.643112; it matches scaling by 1/d_k; in this layout d_k is the "
            "length of axis -2 of q and k, q.shape[-2]."
        ),
    ),
    "attention-scaled-after-softmax": (
        "02",
        check_channels_first_attention,
        _channels_first("after"),
        (
            "✗ channels-first attention, case 1 of 5 (d_k = 3, 5 queries, 4 keys, d_v = 2): output[0, "
            "0] is 0.210172, expected 0.643112; it matches dividing the weights by √d_k after the "
            "softmax; scale the scores before it."
        ),
    ),
    "positions-from-one": (
        "03",
        check_positional_encoding,
        positions_from_one,
        (
            "✗ positional encoding, case 1 of 3 (t = 4, d_model = 6): output[0, 0] is 0.841471, "
            "expected 0; it matches positions counted from 1; the first position is 0, whose row holds "
            "sin 0 = 0 and cos 0 = 1 in every pair."
        ),
    ),
    "padding-mask-off-by-one": (
        "06",
        check_cross_attention,
        _cross("padding"),
        (
            "✗ cross-attention, case 1 of 5 (T_dec = 3, T_enc = 5, memory lengths 5 and 3): query 0 of "
            "batch item [1] attends to masked key 3 (its output changes with that key's value); it "
            "counts one encoder position too many as real: key j is real when j < memory_lengths[b], "
            "not when j <= memory_lengths[b]."
        ),
    ),
    "causal-top-left": (
        "05",
        check_cached_attention,
        _cached(lambda i, j, t_old: j <= i),
        (
            "✗ cached attention, case 1 of 4 (3 cached tokens, 2 new ones): output[0, 0] is 0.625985, "
            "expected 3.06726; it matches the causal mask aligned top-left, as `is_causal=True` builds "
            "it; the new queries are the last t_new positions: query i sees key j when j <= i + t_old "
            "(bottom-right, section 9)."
        ),
    ),
    "causal-off-by-one": (
        "05",
        check_cached_attention,
        _cached(lambda i, j, t_old: j < i + t_old),
        (
            "✗ cached attention, case 1 of 4 (3 cached tokens, 2 new ones): output[0, 0] is 3.06834, "
            "expected 3.06726; each new query misses its own key, one too few: query i sees key j when "
            "j <= i + t_old, the bound included."
        ),
    ),
    "causal-transposed": (
        "05",
        check_prefix_lm_mask,
        prefix_lm_transposed,
        (
            "✗ prefix LM mask, case 1 of 5 (t = 6, a prompt of 3): query 0 may attend to key 3, a "
            "position after it that is not in the prompt (mask[0, 3] should be False); the mask is "
            "transposed: row i is query i and column j is key j, so the generated queries are the lower "
            "rows."
        ),
    ),
    "causal-inverted": (
        "05",
        check_prefix_lm_mask,
        prefix_lm_blocked_true,
        (
            "✗ prefix LM mask, case 1 of 5 (t = 6, a prompt of 3): query 0 is blocked from itself "
            "(mask[0, 0] should be True); the mask is inverted (True = blocked is "
            "nn.MultiheadAttention's convention); here True means may attend."
        ),
    ),
    "cross-queries-from-encoder": (
        "06",
        check_cross_attention,
        _cross("queries"),
        (
            "✗ cross-attention, case 1 of 5 (T_dec = 3, T_enc = 5, memory lengths 5 and 3): the output "
            "has shape (2, 5, 4), expected (2, 3, 4); it matches taking the queries from the encoder "
            "(memory @ w_q); in cross-attention the queries come from the decoder, x_dec @ w_q, and "
            "only the keys and values from memory."
        ),
    ),
    "layer-norm-no-mean": (
        "07",
        check_layer_norm_backward,
        _layer_norm_backward("no mean"),
        (
            "✗ layer_norm_backward, case 1 of 4 (3 positions, d = 4): output[0, 0] is 0.447805, "
            "expected 0.367343; it does not subtract the mean: normalize x - mean, then divide by "
            "sqrt(var + eps)."
        ),
    ),
    "layer-norm-no-sqrt": (
        "07",
        check_layer_norm_backward,
        _layer_norm_backward("no sqrt"),
        (
            "✗ layer_norm_backward, case 1 of 4 (3 positions, d = 4): output[0, 0] is 1.10561, expected "
            "0.367343; it divides by the variance; divide by its square root, sqrt(var + eps), the "
            "standard deviation."
        ),
    ),
    "online-sum-not-rescaled": (
        "08",
        check_chunked_attention,
        _chunked("sum"),
        (
            "✗ chunked attention, case 1 of 6 (4 queries, 8 keys in chunks of 2): output[0, 0] is "
            "0.105285, expected 0.215794; the running sum of exp(s - m) is not rescaled: multiply it by "
            "exp(m_old - m_new) whenever the maximum grows, as the accumulated output is."
        ),
    ),
    "online-output-not-rescaled": (
        "08",
        check_chunked_attention,
        _chunked("output"),
        (
            "✗ chunked attention, case 1 of 6 (4 queries, 8 keys in chunks of 2): output[0, 0] is "
            "0.690054, expected 0.215794; the accumulated output is not rescaled: multiply it by "
            "exp(m_old - m_new) whenever the maximum grows, as the running sum is."
        ),
    ),
}


def test_every_named_mistake_has_an_exercise_here_and_the_words_are_distinct() -> None:
    assert list(EXERCISES) == list(MISTAKES)
    words = [phrase for mistake in MISTAKES.values() for phrase in mistake.words]
    assert len(set(words)) == len(words)
    assert all(mistake.words and all(mistake.words) for mistake in MISTAKES.values())
    assert all(name == mistake.name for name, mistake in MISTAKES.items())


def test_the_notebooks_exercise_cells_are_found() -> None:
    called = exercise_checkers()
    assert sorted(called) == ["00", "01", "02", "03", "04", "05", "06", "07", "08", "09"]
    assert called["05"] == {"check_prefix_lm_mask", "check_left_padded_attention", "check_cached_attention"}
    assert all(called.values())
    assert all(hasattr(course.checkers, name) for names in called.values() for name in names)


@pytest.mark.parametrize("name", list(MISTAKES))
def test_a_lesson_exercise_names_each_mistake(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    lesson, checker, wrong, sentence = EXERCISES[name]
    assert checker.__name__ in exercise_checkers()[lesson]  # an exercise of that lesson's notebook calls it
    result = checker(wrong)
    assert not result
    assert result.message == sentence
    assert mistake_in(result.message) == MISTAKES[name]
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
        "05-code-padding-mask": ("padding-mask-off-by-one",),
        "06-code-cross-attention": ("cross-queries-from-encoder",),
        "07-code-layer-norm": ("layer-norm-no-mean", "layer-norm-no-sqrt"),
        "08-code-online-softmax": ("online-sum-not-rescaled", "online-output-not-rescaled"),
    }


def test_a_passing_or_unnamed_verdict_names_no_mistake() -> None:
    assert mistake_in("✓ softmax: all 8 cases pass.") is None
    assert mistake_in("· softmax: not written yet. Replace the `raise NotImplementedError` line") is None
    assert mistake_in("✗ softmax, case 1 of 8 (a vector of 3 scores): output[0] is 1, expected 0.5.") is None


def test_the_first_mistake_whose_words_a_sentence_holds_is_named() -> None:
    transposed, top_left = MISTAKES["causal-transposed"].words[1], MISTAKES["causal-top-left"].words[0]
    both = f"✗ a checker, case 1 of 1: {transposed}; {top_left}."
    assert mistake_in(both) == MISTAKES["causal-top-left"]  # the table's order, not the sentence's
    assert mistake_in(both.replace("✗", "✓", 1)) is None


def test_listeners_hear_the_exercises_not_the_code_cards(capsys: pytest.CaptureFixture[str]) -> None:
    heard: list[CheckResult] = []
    listen(heard.append)
    listen(heard.append)  # once, however often added
    top_left = EXERCISES["causal-top-left"][2]
    try:
        result = check_cached_attention(top_left)
        card = CARDS["05-code-causal-mask"]
        verdict = run_code(
            "def causal_mask(t, s):\n    return np.tril(np.ones((t, s), dtype=bool))\n",
            "causal_mask",
            card.checker or "",
        )
    finally:
        unlisten(heard.append)
    check_cached_attention(top_left)  # no longer listening
    assert heard == [result]
    assert mistake_in(result.message) == MISTAKES["causal-top-left"]
    assert mistake_in(verdict.sentence) == MISTAKES["causal-top-left"]  # named, but the card's own answer
    capsys.readouterr()


def test_a_listener_that_fails_leaves_the_verdict_alone(capsys: pytest.CaptureFixture[str]) -> None:
    def broken(result: CheckResult) -> None:
        raise RuntimeError("the listener's own bug")

    listen(broken)
    try:
        result = check_softmax(lambda x: np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True))
    finally:
        unlisten(broken)
    assert mistake_in(result.message) == MISTAKES["softmax-overflow"]
    assert capsys.readouterr().out == result.message + "\n"
