"""Lesson 05's checkers: the decoding mask (the reference and torch's causal_lower_right pass), the prefix-LM
mask and the left-padded attention to fix; each typical mistake, written as a learner would write it, gets its
exact sentence, and the bug hunt says how many bugs remain."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from course.attention import causal_mask, scaled_dot_product_attention
from course.checkers import (
    check_cached_attention,
    check_decoding_mask,
    check_left_padded_attention,
    check_prefix_lm_mask,
)
from course.checkers._bugs import NEW_MISTAKE, combinations
from course.checkers._kv_cache import (
    CACHE_ONLY_OLD,
    CACHE_RETURN,
    NEW_KEYS_ONLY,
    NEW_NOT_CAUSAL,
    NEW_TOP_LEFT,
    cached_attention,
)
from course.checkers._masks import (
    DECODING_BLOCKED_TRUE,
    DECODING_OFF_BY_ONE,
    DECODING_TOP_LEFT,
    DECODING_TRANSPOSED,
    EMPTY_ROW_ITSELF,
    LEFT_PADDED_BUGS,
    PREFIX_BIDIRECTIONAL,
    PREFIX_CAUSAL,
    PREFIX_INVERTED,
    PREFIX_TOO_LONG,
    PREFIX_TOO_SHORT,
    PREFIX_TRANSPOSED,
    PROMPT_SEES_FUTURE,
    _left_padded,
    left_padded_attention,
    prefix_lm_mask,
)


def learner(bug: str = "") -> Any:
    """A learner's bottom-right causal mask, right or with one mistake."""

    def fn(t_q: int, t_k: int) -> Any:
        i = np.arange(t_q)[:, None]  # (t_q, 1)
        j = np.arange(t_k)[None, :]  # (1, t_k)
        offset = t_k - t_q
        if bug == "top-left":
            return j <= i
        if bug == "off by one":
            return j < i + offset
        if bug == "transposed":
            return np.arange(t_k)[:, None] <= np.arange(t_q)[None, :] + offset  # (t_k, t_q)
        if bug == "blocked":
            return j > i + offset
        return j <= i + offset

    return fn


def torch_lower_right(t_q: int, t_k: int) -> Any:
    """torch's own bottom-right causal mask, materialized as a (t_q, t_k) boolean tensor."""
    from torch.nn.attention.bias import causal_lower_right  # imports torch's compiler: only where used

    return causal_lower_right(t_q, t_k)._materialize()


def test_the_reference_torch_and_a_learners_right_solution_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_decoding_mask(causal_mask)
    assert check_decoding_mask(torch_lower_right)
    assert check_decoding_mask(learner())
    assert capsys.readouterr().out.count("✓ decoding mask: all 4 cases pass.") == 3


@pytest.mark.parametrize(("t_q", "t_k"), [(2, 5), (1, 4), (3, 3), (4, 7)])
def test_the_reference_is_what_sdpa_needs_for_the_newest_queries(t_q: int, t_k: int) -> None:
    rng = np.random.default_rng(t_q * 10 + t_k)
    q, k, v = (torch.from_numpy(rng.standard_normal((t_k, 4))) for _ in range(3))
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)[t_k - t_q :]  # the last t_q rows
    mask = torch.from_numpy(causal_mask(t_q, t_k))
    assert torch.equal(mask, torch_lower_right(t_q, t_k))
    newest = F.scaled_dot_product_attention(q[t_k - t_q :], k, v, attn_mask=mask)
    assert (newest - full).abs().max() <= 1e-12


@pytest.mark.parametrize(
    ("bug", "sentence"),
    [
        (
            "top-left",
            "query 0 (sequence position 3) is blocked from key 1, which it may see (mask[0, 1] "
            "should be True); " + DECODING_TOP_LEFT,
        ),
        (
            "off by one",
            "query 0 (sequence position 3) is blocked from key 3, which it may see (mask[0, 3] "
            "should be True); " + DECODING_OFF_BY_ONE,
        ),
        ("transposed", "the output has shape (5, 2), expected (2, 5); " + DECODING_TRANSPOSED),
        (
            "blocked",
            "query 0 (sequence position 3) is blocked from key 0, which it may see (mask[0, 0] "
            "should be True); " + DECODING_BLOCKED_TRUE,
        ),
    ],
)
def test_each_decoding_mistake_is_named(bug: str, sentence: str) -> None:
    result = check_decoding_mask(learner(bug))
    assert result.message == f"✗ decoding mask, case 1 of 4 (t_q = 2, t_k = 5): {sentence}."


def test_is_causal_true_is_the_top_left_mistake() -> None:
    from torch.nn.attention.bias import causal_upper_left

    # what `is_causal=True` builds for a non-square mask: torch's causal_upper_left
    result = check_decoding_mask(lambda t_q, t_k: causal_upper_left(t_q, t_k)._materialize())
    assert not result and result.message.endswith(f"; {DECODING_TOP_LEFT}.")


# ----------------------------------------------------------------------------------------------------
# Exercise 1: a prefix language model's mask


def prefix_learner(bug: str = "") -> Any:
    """A learner's prefix-LM mask, right or with one mistake."""

    def fn(t: int, prefix: int) -> Any:
        i, j = np.arange(t)[:, None], np.arange(t)[None, :]
        in_prompt = (i < prefix) & (j < prefix)
        if bug == "causal":
            return j <= i
        if bug == "prompt sees all":
            return (j <= i) | (i < prefix)
        if bug == "encoder":
            return np.ones((t, t), dtype=bool)
        if bug == "long":
            return (j <= i) | ((i <= prefix) & (j <= prefix))
        if bug == "short":
            return (j <= i) | ((i < prefix - 1) & (j < prefix - 1))
        if bug == "inverted":
            return ~((j <= i) | in_prompt)
        if bug == "transposed":
            return (i <= j) | in_prompt
        return (j <= i) | in_prompt

    return fn


def test_the_prefix_lm_reference_and_a_learners_solution_pass() -> None:
    assert check_prefix_lm_mask(prefix_lm_mask).message == "✓ prefix LM mask: all 5 cases pass."
    assert check_prefix_lm_mask(prefix_learner()).ok
    assert np.array_equal(prefix_lm_mask(4, 0), causal_mask(4)) and prefix_lm_mask(3, 3).all()


PREFIX_CASE_1 = "✗ prefix LM mask, case 1 of 5 (t = 6, a prompt of 3): "


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        (
            "causal",
            f"{PREFIX_CASE_1}query 0, in the prompt (positions 0 to 2), is blocked from key 1, also in the "
            f"prompt, which it may see (mask[0, 1] should be True); {PREFIX_CAUSAL}.",
        ),
        (
            "prompt sees all",
            f"{PREFIX_CASE_1}query 0 may attend to key 3, a position after it that is not in the prompt "
            f"(mask[0, 3] should be False); {PROMPT_SEES_FUTURE}.",
        ),
        (
            "encoder",
            f"{PREFIX_CASE_1}query 0 may attend to key 3, a position after it that is not in the prompt "
            f"(mask[0, 3] should be False); {PREFIX_BIDIRECTIONAL}.",
        ),
        (
            "long",
            f"{PREFIX_CASE_1}query 0 may attend to key 3, a position after it that is not in the prompt "
            f"(mask[0, 3] should be False); {PREFIX_TOO_LONG}.",
        ),
        (
            "short",
            f"{PREFIX_CASE_1}query 0, in the prompt (positions 0 to 2), is blocked from key 2, also in the "
            f"prompt, which it may see (mask[0, 2] should be True); {PREFIX_TOO_SHORT}.",
        ),
        (
            "inverted",
            f"{PREFIX_CASE_1}query 0 is blocked from itself (mask[0, 0] should be True); {PREFIX_INVERTED}.",
        ),
        (
            "transposed",
            f"{PREFIX_CASE_1}query 0 may attend to key 3, a position after it that is not in the prompt "
            f"(mask[0, 3] should be False); {PREFIX_TRANSPOSED}.",
        ),
    ],
)
def test_each_prefix_lm_mistake_is_named(bug: str, message: str) -> None:
    assert check_prefix_lm_mask(prefix_learner(bug)).message == message


def test_the_prefix_lm_stub_is_not_written_yet() -> None:
    def stub(t, prefix):
        raise NotImplementedError("not written yet")

    assert check_prefix_lm_mask(stub).message.startswith("· prefix LM mask: not written yet.")


# ----------------------------------------------------------------------------------------------------
# Exercise 2: find the bugs in a left-padded batch's attention


def buggy_left_padded_attention(q, k, v, lengths):
    # the lesson's function, as given
    t = q.shape[-2]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])  # (B, h, T, T)
    real = np.arange(t)[None, :] < lengths[:, None]  # (B, T): True at the real tokens
    allowed = np.tril(np.ones((t, t), dtype=bool)) & real[:, None, :, None]  # (B, 1, T, T)
    scores = np.where(allowed, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def fixed_by_a_learner(q, k, v, lengths):
    t = q.shape[-2]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    real = np.arange(t)[None, :] >= t - lengths[:, None]
    allowed = np.tril(np.ones((t, t), dtype=bool)) & real[:, None, None, :]
    scores = np.where(allowed, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(top), top, 0.0))
    total = e.sum(axis=-1, keepdims=True)
    return (e / np.where(total == 0, 1.0, total)) @ v


def guard_only(q, k, v, lengths):  # fixes the empty rows, leaves the two mask bugs
    t = q.shape[-2]
    real = np.arange(t)[None, :] < lengths[:, None]
    allowed = np.tril(np.ones((t, t), dtype=bool)) & real[:, None, :, None]
    return scaled_dot_product_attention(q, k, v, allowed)[0]


def attends_to_itself(q, k, v, lengths):  # a learner's own fix of empty rows: not the convention
    t = q.shape[-2]
    real = np.arange(t)[None, :] >= t - lengths[:, None]
    allowed = np.tril(np.ones((t, t), dtype=bool)) & real[:, None, None, :]
    allowed = allowed | np.eye(t, dtype=bool)
    return scaled_dot_product_attention(q, k, v, allowed)[0]


LEFT_CASE_1 = "✗ left-padded attention, case 1 of 4 (B = 2, 2 heads, T = 4, lengths 4 and 2): "


def test_the_left_padded_reference_and_a_learners_fix_pass() -> None:
    assert check_left_padded_attention(left_padded_attention).message == (
        "✓ left-padded attention: all 4 cases pass."
    )
    assert check_left_padded_attention(fixed_by_a_learner).ok


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            buggy_left_padded_attention,
            f"{LEFT_CASE_1}output[1, 0, 2, 0] is nan, expected 0.312204; all 3 bugs remain.",
        ),
        (guard_only, f"{LEFT_CASE_1}output[1, 0, 0, 0] is 0.816246, expected 0; 2 of the 3 bugs remain."),
        (attends_to_itself, f"{LEFT_CASE_1}output[1, 0, 0, 0] is 0.816246, expected 0; {EMPTY_ROW_ITSELF}."),
        (
            lambda q, k, v, lengths: 0.5 * fixed_by_a_learner(q, k, v, lengths),
            f"{LEFT_CASE_1}output[0, 0, 0, 0] is -0.681772, expected -1.36354; {NEW_MISTAKE}.",
        ),
    ],
)
def test_the_left_padded_checker_counts_the_bugs_and_names_only_new_mistakes(fn, message: str) -> None:
    assert check_left_padded_attention(fn).message == message


def test_every_stage_of_the_left_padded_fix_gives_a_different_output_and_the_given_one_has_all_bugs() -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((3, 2, 5, 3)) for _ in range(3))
    lengths = np.array([5, 2, 0])
    with np.errstate(all="ignore"):
        outputs = [_left_padded(stage, q, k, v, lengths) for stage in combinations(LEFT_PADDED_BUGS)]
        given = buggy_left_padded_attention(q, k, v, lengths)
    assert np.allclose(given, outputs[-1], equal_nan=True)  # every bug in
    assert all(not np.allclose(a, b, equal_nan=True) for i, a in enumerate(outputs) for b in outputs[i + 1 :])


def test_the_left_padded_checker_leaves_the_inputs_alone_and_says_so() -> None:
    def in_place(q, k, v, lengths):
        q *= 1.0
        lengths -= 0
        v += 1.0
        return fixed_by_a_learner(q, k, v - 1.0, lengths)

    assert check_left_padded_attention(in_place).message == (
        f"{LEFT_CASE_1}your function changed its input `v` in place; compute a new array instead."
    )


# ----------------------------------------------------------------------------------------------------
# Exercise 3: a key/value cache step for several new tokens


def cache_learner(bug: str = "") -> Any:
    """A learner's cached attention step, right or with one mistake."""

    def fn(x_new, k_cache, v_cache, w_q, w_k, w_v):
        k_new, v_new = x_new @ w_k, x_new @ w_v
        k_all = np.concatenate([k_new, k_cache] if bug == "new first" else [k_cache, k_new])
        v_all = np.concatenate([v_cache, v_new])
        if bug == "queries cached":
            k_all = np.concatenate([k_cache, x_new @ w_q])
        t_new, t_all = len(x_new), len(k_all)
        i, j = np.arange(t_new)[:, None], np.arange(t_all)[None, :]
        allowed = {
            "no mask": np.ones((t_new, t_all), dtype=bool),
            "top-left": j <= i,
        }.get(bug, j <= i + (t_all - t_new))
        keys, values = k_all, v_all
        if bug == "new only":
            keys, values, allowed = k_new, v_new, np.tril(np.ones((t_new, t_new), dtype=bool))
        if bug == "cache only":
            keys, values, allowed = k_cache, v_cache, None
        scale = 1.0 if bug == "unscaled" else 1 / np.sqrt(w_q.shape[1])
        out = scaled_dot_product_attention(x_new @ w_q, keys, values, allowed, scale=scale)[0]
        if bug == "no cache returned":
            return out
        if bug == "only new returned":
            return out, k_new, v_new
        return out, k_all, v_all

    return fn


def test_the_cached_attention_reference_and_a_learners_solution_pass() -> None:
    assert check_cached_attention(cached_attention).message == "✓ cached attention: all 4 cases pass."
    assert check_cached_attention(cache_learner()).ok


def test_a_cached_step_equals_the_last_rows_of_full_causal_attention_and_torch() -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((7, 5))
    w_q, w_k, w_v = (rng.standard_normal((5, 3)) for _ in range(3))
    full = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, causal_mask(7))[0]
    out, k_all, v_all = cached_attention(x[4:], x[:4] @ w_k, x[:4] @ w_v, w_q, w_k, w_v)
    assert (
        np.abs(out - full[4:]).max() <= 1e-12 and np.allclose(k_all, x @ w_k) and np.allclose(v_all, x @ w_v)
    )
    t = [torch.from_numpy(a) for a in (x[4:] @ w_q, k_all, v_all)]
    from torch.nn.attention.bias import causal_lower_right

    theirs = F.scaled_dot_product_attention(*t, attn_mask=causal_lower_right(3, 7)).numpy()
    assert np.abs(theirs - out).max() <= 1e-12


CACHE_CASE_1 = "✗ cached attention, case 1 of 4 (3 cached tokens, 2 new ones): "


@pytest.mark.parametrize(
    ("bug", "words"),
    [
        ("no mask", NEW_NOT_CAUSAL),
        ("top-left", NEW_TOP_LEFT),
        ("new only", NEW_KEYS_ONLY),
        ("cache only", CACHE_ONLY_OLD),
        ("unscaled", "it matches attention without scaling; scale by 1/√d_k"),
    ],
)
def test_each_cached_attention_mistake_is_named(bug: str, words: str) -> None:
    message = check_cached_attention(cache_learner(bug)).message
    assert message.startswith(f"{CACHE_CASE_1}output[") and message.endswith(f"; {words}.")


@pytest.mark.parametrize(
    ("bug", "message"),
    [
        ("no cache returned", f"{CACHE_CASE_1}{CACHE_RETURN}."),
        (
            "only new returned",
            f"{CACHE_CASE_1}k_all holds only the new tokens' rows; keep the cache: the cached rows, then the "
            "new ones.",
        ),
        (
            "new first",
            f"{CACHE_CASE_1}k_all has the new rows first; append them after the cached rows, in sequence "
            "order.",
        ),
        (
            "queries cached",
            f"{CACHE_CASE_1}k_all appends the new queries; the cache keeps keys (x_new @ w_k), never "
            "queries.",
        ),
    ],
)
def test_a_wrong_cache_is_named(bug: str, message: str) -> None:
    learner = cache_learner(bug)
    if bug in ("new first", "queries cached"):  # right output, wrong cache: fix the output to see the cache
        right = cache_learner()

        def learner(*args, wrong=learner):  # type: ignore[no-redef]
            return (right(*args)[0], *wrong(*args)[1:])

    assert check_cached_attention(learner).message == message


def test_a_cache_changed_in_place_is_named() -> None:
    def in_place(x_new, k_cache, v_cache, w_q, w_k, w_v):
        k_cache *= 1.0
        v_cache += 0.0
        x_new[...] = x_new
        w_v *= 2.0
        return cached_attention(x_new, k_cache, v_cache, w_q, w_k, w_v / 2.0)

    assert check_cached_attention(in_place).message == (
        f"{CACHE_CASE_1}your function changed its input `w_v` in place; compute a new array instead."
    )
