"""Lesson 08's checkers: the reference passes, and each typical mistake, written as a learner would write it,
gets its exact sentence."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from course.checkers import (
    check_causal_linear_attention,
    check_chunked_attention,
    check_sink_window_mask,
    check_window_mask,
)
from course.checkers._cost import (
    CHUNK_MAX,
    LINEAR_EMPTY,
    LINEAR_NO_DIVIDE,
    LINEAR_NO_FEATURES,
    LINEAR_NOT_CAUSAL,
    LINEAR_QUADRATIC,
    NO_ACC_RESCALE,
    NO_DIVIDE,
    NO_SCALE,
    NO_SUM_RESCALE,
    OVERFLOW,
    SINK_WINDOW_MINUS_ONE,
    SINK_WINDOW_PLUS_ONE,
    SINKS_INVERTED,
    SINKS_MISSING,
    SINKS_OFF_BY_ONE,
    SINKS_ONLY,
    SINKS_SEE_FUTURE,
    SINKS_SYMMETRIC,
    WHOLE_MATRIX,
    sink_window_mask,
)
from course.efficient import chunked_attention, sliding_window_mask

Array = NDArray[Any]


def learner(bug: str = "") -> Any:
    """A learner's chunked attention, right or with one mistake."""

    def fn(q: Array, k: Array, v: Array, chunk: int) -> Array:
        scale = 1.0 if bug == "scale" else 1 / math.sqrt(q.shape[1])
        m = np.full(len(q), -np.inf)
        total = np.zeros(len(q))
        acc = np.zeros((len(q), v.shape[1]))
        for start in range(0, len(k), chunk):
            s = q @ k[start : start + chunk].T * scale
            m_new = np.maximum(m, s.max(axis=1))
            if bug == "chunk max":
                p = np.exp(s - s.max(axis=1, keepdims=True))
            elif bug == "no max":
                p = np.exp(s)
            else:
                p = np.exp(s - m_new[:, None])
            c = np.ones(len(q)) if bug == "no max" else np.exp(m - m_new)  # no max: nothing to rescale
            total = (total if bug == "sum" else total * c) + p.sum(axis=1)
            acc = (acc if bug == "acc" else acc * c[:, None]) + p @ v[start : start + chunk]
            m = m_new
        return acc if bug == "divide" else acc / total[:, None]

    return fn


def test_the_reference_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_chunked_attention(chunked_attention)
    assert check_chunked_attention(learner())
    assert check_window_mask(sliding_window_mask)
    assert capsys.readouterr().out.count("✓") == 3


@pytest.mark.parametrize(
    ("bug", "sentence"),
    [
        ("sum", NO_SUM_RESCALE),
        ("acc", NO_ACC_RESCALE),
        ("divide", NO_DIVIDE),
        ("chunk max", CHUNK_MAX),
        ("scale", NO_SCALE),
    ],
)
def test_each_online_softmax_mistake_is_named(bug: str, sentence: str) -> None:
    result = check_chunked_attention(learner(bug))
    assert not result
    assert result.message.startswith("✗ chunked attention, case 1 of 6 (4 queries, 8 keys in chunks of 2): ")
    assert result.message.endswith(f"; {sentence}.")


def test_exponentials_without_the_maximum_overflow_on_large_scores() -> None:
    result = check_chunked_attention(learner("no max"))
    assert result.message.startswith(
        "✗ chunked attention, case 6 of 6 (large scores, 2 queries, 9 keys in chunks of 3): "
        "output[0, 0] is nan"
    )
    assert result.message.endswith(f" ({OVERFLOW}).")


def test_the_stub_is_not_written_yet() -> None:
    def stub(q: Array, k: Array, v: Array, chunk: int) -> Array:
        raise NotImplementedError

    assert check_chunked_attention(stub).message.startswith("· chunked attention: not written yet.")


def _band(n: int, w: int) -> Array:
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return np.abs(i - j) < w


@pytest.mark.parametrize(
    ("fn", "sentence"),
    [
        (
            lambda n, w: sliding_window_mask(n, w + 1),
            "query 3 may attend to key 0, 3 positions back, outside its window of 3 keys: itself and the 2 "
            "before it (mask[3, 0] should be False); the window holds 4 keys, one too many: query i sees "
            "keys i - window < j <= i, that is itself and the window - 1 before it",
        ),
        (
            lambda n, w: (
                (np.arange(n)[None, :] <= np.arange(n)[:, None])
                & (np.arange(n)[None, :] > np.arange(n)[:, None] - w + 1)
            ),
            "query 2 is blocked from key 0, 2 positions back, which is inside its window of 3 keys "
            "(mask[2, 0] should be True); the window holds 2 keys, one too few: query i sees keys "
            "i - window < j <= i, itself included",
        ),
        (
            _band,
            "query 0 may attend to key 1, a future position (mask[0, 1] should be False); the band is "
            "symmetric, so each query also sees the next keys, its future; keep only j <= i",
        ),
        (
            lambda n, w: ~sliding_window_mask(n, w),
            "query 0 is blocked from itself which is inside its window of 3 keys (mask[0, 0] should be "
            "True); the mask is inverted; here True means may attend",
        ),
        (
            lambda n, w: np.tril(np.ones((n, n), dtype=bool)),
            "query 3 may attend to key 0, 3 positions back, outside its window of 3 keys: itself and the 2 "
            "before it (mask[3, 0] should be False); it is the plain causal mask: every past key is allowed; "
            "keep only the last `window` keys",
        ),
    ],
)
def test_each_window_mistake_is_named(fn: Any, sentence: str) -> None:
    result = check_window_mask(fn)
    assert result.message == f"✗ sliding-window mask, case 1 of 4 (n = 6, window = 3): {sentence}."


def test_a_mask_of_integers_is_refused() -> None:
    result = check_window_mask(lambda n, w: sliding_window_mask(n, w).astype(int))
    assert "expected bool" in result.message


def _causal_linear(bug: str = "") -> Any:
    """A learner's causal linear attention, right or with one mistake."""

    def fn(q: Array, k: Array, v: Array) -> Array:
        def phi(x: Array) -> Array:
            return x if bug == "features" else np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))

        fq, fk = phi(q), phi(k)
        kv = fk[:, :, None] * v[:, None, :]  # (n, d_k, d_v)
        if bug == "all keys":
            s, z = np.broadcast_to(kv.sum(axis=0), kv.shape), np.broadcast_to(fk.sum(axis=0), fk.shape)
        elif bug == "exclusive":
            s, z = np.cumsum(kv, axis=0) - kv, np.cumsum(fk, axis=0) - fk
        else:
            s, z = np.cumsum(kv, axis=0), np.cumsum(fk, axis=0)
        num = np.einsum("nd,nde->ne", fq, s)
        return num if bug == "divide" else num / np.einsum("nd,nd->n", fq, z)[:, None]

    return fn


def test_causal_linear_attention_reference_passes() -> None:
    assert check_causal_linear_attention(_causal_linear())


@pytest.mark.parametrize(
    ("bug", "sentence"),
    [("all keys", LINEAR_NOT_CAUSAL), ("divide", LINEAR_NO_DIVIDE), ("features", LINEAR_NO_FEATURES)],
)
def test_each_causal_linear_mistake_is_named(bug: str, sentence: str) -> None:
    result = check_causal_linear_attention(_causal_linear(bug))
    assert result.message.startswith("✗ causal linear attention, case 1 of 4 (n = 5, d_k = 3, d_v = 2): ")
    assert result.message.endswith(f"; {sentence}.")


def test_sums_that_leave_out_the_query_itself_are_named() -> None:
    result = check_causal_linear_attention(_causal_linear("exclusive"))
    assert result.message.startswith(
        "✗ causal linear attention, case 1 of 4 (n = 5, d_k = 3, d_v = 2): output[0, 0] is nan"
    )
    assert result.message.endswith(f" ({LINEAR_EMPTY}).")


def _dense(q: Array, k: Array, v: Array, chunk: int) -> Array:
    """Plain dense attention: the right values, ignoring `chunk` and building the whole score matrix."""
    scores = q @ k.T / math.sqrt(q.shape[1])
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True) @ v


def _chunks_of_128(q: Array, k: Array, v: Array, chunk: int) -> Array:
    """Online softmax in chunks of 128 keys, whatever `chunk` says."""
    return learner()(q, k, v, 128)


@pytest.mark.parametrize("fn", [_dense, _chunks_of_128])
def test_dense_attention_that_ignores_chunk_is_refused(fn: Any) -> None:
    result = check_chunked_attention(fn)
    assert result.message == (
        "✗ chunked attention, case 2 of 6 (64 queries, 1000 keys in chunks of 16 (a shorter last chunk)): "
        f"{WHOLE_MATRIX.format(n_q=64, n_k=1000, chunk=16)}."
    )
    assert result.message.endswith(
        "the values are right, but at its peak your function holds as much memory as the whole (64, 1000) "
        "score matrix would in float32, or more, which the exercise forbids: compute the scores of `chunk` "
        "keys at a time, a (64, 16) block, and fold it into the running maximum, sum and output before the "
        "next."
    )


def _causal_linear_by_matrix(q: Array, k: Array, v: Array) -> Array:
    """Causal linear attention through the (n, n) matrix of φ(q_i) · φ(k_j): the right values."""
    fq, fk = (np.where(x > 0, x + 1, np.exp(np.minimum(x, 0))) for x in (q, k))
    similarity = np.tril(fq @ fk.T)  # (n, n)
    return similarity @ v / similarity.sum(axis=1, keepdims=True)


def test_causal_linear_attention_through_an_n_by_n_matrix_is_refused() -> None:
    result = check_causal_linear_attention(_causal_linear_by_matrix)
    assert result.message == (
        "✗ causal linear attention, case 4 of 4 (n = 512, d_k = 4, d_v = 4): the values are right, but at "
        "its peak your function holds as much memory as a (512, 512) matrix would in float32, or more; the "
        "exercise forbids building any (n, n) matrix: keep running sums along the positions instead, "
        "np.cumsum of the (n, d_k, d_v) outer products φ(k_j) v_jᵀ and of the (n, d_k) φ(k_j)."
    )
    assert result.message.endswith(f"{LINEAR_QUADRATIC.format(n=512)}.")


# ----------------------------------------------------------------------------------------------------
# Exercise 2: a sliding window with attention sinks


def sink_learner(bug: str = "") -> Any:
    """A learner's sink-window mask, right or with one mistake."""

    def fn(n: int, window: int, sinks: int) -> Any:
        i, j = np.arange(n)[:, None], np.arange(n)[None, :]
        w = window + (1 if bug == "wide" else -1 if bug == "narrow" else 0)
        s = sinks + (1 if bug == "extra sink" else 0)
        recent = (j <= i) & (i - j < w)
        if bug == "no sinks":
            return recent
        if bug == "future sinks":
            return recent | (j < s)
        if bug == "sinks only":
            return (j <= i) & (j < s)
        if bug == "symmetric":
            return (np.abs(i - j) < w) | ((j <= i) & (j < s))
        mask = recent | ((j <= i) & (j < s))
        return ~mask if bug == "inverted" else mask

    return fn


def test_the_sink_window_reference_passes_and_equals_the_window_without_sinks() -> None:
    assert check_sink_window_mask(sink_window_mask).message == "✓ sink window mask: all 5 cases pass."
    assert check_sink_window_mask(sink_learner()).ok
    assert np.array_equal(sink_window_mask(9, 3, 0), sliding_window_mask(9, 3))
    assert np.array_equal(sink_window_mask(6, 2, 6), np.tril(np.ones((6, 6), dtype=bool)))


SINK_CASE_1 = "✗ sink window mask, case 1 of 5 (n = 8, window = 3, 2 sinks): "


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        (
            "no sinks",
            f"{SINK_CASE_1}query 3 is blocked from key 0, one of the first 2 positions (a sink), which every "
            f"later query keeps (mask[3, 0] should be True); {SINKS_MISSING.format(sinks=2)}.",
        ),
        (
            "future sinks",
            f"{SINK_CASE_1}query 0 may attend to key 1, a future position (mask[0, 1] should be False); "
            f"{SINKS_SEE_FUTURE}.",
        ),
        (
            "extra sink",
            f"{SINK_CASE_1}query 5 may attend to key 2, 3 positions back: outside its window of 3 keys and "
            f"not one of the first 2 positions (mask[5, 2] should be False); "
            f"{SINKS_OFF_BY_ONE.format(got=3)}.",
        ),
        (
            "wide",
            f"{SINK_CASE_1}query 5 may attend to key 2, 3 positions back: outside its window of 3 keys and "
            f"not one of the first 2 positions (mask[5, 2] should be False); {SINK_WINDOW_PLUS_ONE}.",
        ),
        (
            "narrow",
            f"{SINK_CASE_1}query 4 is blocked from key 2, 2 positions back, which is inside its window of 3 "
            f"keys (mask[4, 2] should be True); {SINK_WINDOW_MINUS_ONE}.",
        ),
        (
            "sinks only",
            f"{SINK_CASE_1}query 2 is blocked from itself, which is inside its window of 3 keys (mask[2, 2] "
            f"should be True); {SINKS_ONLY}.",
        ),
        (
            "inverted",
            f"{SINK_CASE_1}query 0 is blocked from itself, which is inside its window of 3 keys (mask[0, 0] "
            f"should be True); {SINKS_INVERTED}.",
        ),
        (
            "symmetric",
            f"{SINK_CASE_1}query 0 may attend to key 1, a future position (mask[0, 1] should be False); "
            f"{SINKS_SYMMETRIC}.",
        ),
    ],
)
def test_each_sink_window_mistake_is_named(bug: str, message: str) -> None:
    assert check_sink_window_mask(sink_learner(bug)).message == message
