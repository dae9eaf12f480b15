"""Checkers for lesson 01: softmax, softmax with a temperature, attention for one query without scaling, and
a stable log-sum-exp (the transfer exercise)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.attention import softmax
from course.checkers._engine import Case, CheckResult, run_cases
from course.log_space import logsumexp

__all__ = [
    "CONTEXT_SCALED",
    "LSE_AXIS",
    "LSE_KEEPDIMS",
    "LSE_MAX_ONLY",
    "LSE_NO_ADD_BACK",
    "LSE_NO_LOG",
    "LSE_STABLE_HINT",
    "LSE_WHOLE_ARRAY",
    "SOFTMAX_NO_EXP",
    "SOFTMAX_UNNORMALISED",
    "STABLE_HINT",
    "TEMPERATURE_AFTER",
    "check_contextualize",
    "check_logsumexp",
    "check_softmax",
    "check_softmax_temperature",
]

STABLE_HINT = "did exp overflow or underflow? subtract each row's own maximum before exp"
SOFTMAX_UNNORMALISED = (
    "the exponentials are not divided by their sum; divide each row by its own sum, so that it sums to 1"
)
SOFTMAX_NO_EXP = (
    "the scores are divided by their sum without exp; exponentiate them first (after subtracting the row's "
    "maximum), then divide by the sum of the exponentials"
)
_KEEPDIMS_HINT = (
    "x has several rows here: take each row's maximum and sum with axis=-1, keepdims=True, so that they "
    "broadcast against x"
)


def check_softmax(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: the softmax of ``x`` along its last axis."""
    rng = np.random.default_rng(101)

    def case(name: str, x: NDArray[Any], hint: str = "") -> Case:
        exps = np.exp(x - x.max(axis=-1, keepdims=True))
        with np.errstate(all="ignore"):
            ratios = x / x.sum(axis=-1, keepdims=True)
        mistakes = [(exps, SOFTMAX_UNNORMALISED), (ratios, SOFTMAX_NO_EXP)]
        if x.ndim > 1:
            mistakes.append(
                (
                    softmax(x, axis=0),
                    "it is the softmax along axis 0; each row (the last axis) should sum to 1",
                )
            )
            whole = softmax(x.reshape(-1)).reshape(x.shape)
            mistakes.append(
                (whole, "it is normalised over the whole array; normalise each row (the last axis)")
            )
        return Case(
            name,
            (x,),
            softmax(x),
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "softmax",
        fn,
        [
            case("a vector of 3 scores", np.array([1.0, 2.0, 3.0])),
            case("2 rows of 4 scores", rng.standard_normal((2, 4)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("a length-1 row", np.array([[0.5], [-2.0]])),
            case("equal scores", np.zeros((2, 4))),
            case("large scores, 1000 to 1002", np.array([[1000.0, 1001.0, 1002.0]]), STABLE_HINT),
            case("very negative scores, -1000 to -998", np.array([[-1000.0, -999.0, -998.0]]), STABLE_HINT),
            case(
                "rows on very different scales",
                np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]]),
                STABLE_HINT,
            ),
        ],
    )


TEMPERATURE_AFTER = (
    "the weights were divided by the temperature after the softmax; divide the scores before it"
)


def check_softmax_temperature(fn: Callable[[NDArray[Any], float], Any]) -> CheckResult:
    """Check ``fn(x, temperature)``: the softmax of ``x / temperature`` along the last axis."""
    rng = np.random.default_rng(102)

    def case(name: str, x: NDArray[Any], tau: float, hint: str = "") -> Case:
        mistakes = (
            (softmax(x), "it is the softmax of x itself; divide the scores by the temperature first"),
            (softmax(x * tau), "the scores were multiplied by the temperature; divide them by it"),
            (softmax(x) / tau, TEMPERATURE_AFTER),
        )
        return Case(
            name,
            (x, tau),
            softmax(x / tau),
            mistakes=mistakes,
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _KEEPDIMS_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "softmax with temperature",
        fn,
        [
            case("[1, 2, 3] at temperature 0.5", np.array([1.0, 2.0, 3.0]), 0.5),
            case("[1, 2, 3] at temperature 4", np.array([1.0, 2.0, 3.0]), 4.0),
            case("temperature 1 is the plain softmax", rng.standard_normal((2, 4)).round(2), 1.0),
            case("a batch of shape (2, 3, 5) at temperature 2", rng.standard_normal((2, 3, 5)), 2.0),
            case("scores up to 10 at temperature 0.01", np.array([[8.0, 9.0, 10.0]]), 0.01, STABLE_HINT),
        ],
    )


CONTEXT_SCALED = (
    "the scores are divided by √d; this exercise uses the plain dot products (the scaling comes in lesson 02)"
)


def check_contextualize(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(query, vectors)``: softmax of the dot-product scores ``vectors @ query``, then the weighted
    average of the rows of ``vectors``; query (d,), vectors (T, d), result (d,). Attention for one query,
    without scaling, with keys and values both equal to ``vectors``."""
    rng = np.random.default_rng(11)

    def case(name: str, query: NDArray[Any], vectors: NDArray[Any]) -> Case:
        weights = softmax(vectors @ query)  # (T,)
        mistakes = (
            (vectors.mean(axis=0), "that is the plain mean; weight each row by the softmax of its score"),
            (
                (vectors @ query) @ vectors,
                "the raw scores were used as weights; apply the softmax to them first",
            ),
            (weights, "these are the weights; return the weighted average of the rows, weights @ vectors"),
            (softmax(vectors @ query / np.sqrt(len(query))) @ vectors, CONTEXT_SCALED),
        )
        return Case(name, (query, vectors), weights @ vectors, mistakes=mistakes, nonfinite_hint=STABLE_HINT)

    return run_cases(
        "contextualize",
        fn,
        [
            case("3 vectors of size 2", np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])),
            case("one vector", np.array([1.0, -2.0]), np.array([[3.0, 4.0]])),
            case("a zero query: equal scores", np.zeros(3), rng.normal(size=(4, 3))),
            case("scores above 1000", np.full(2, 30.0), np.array([[30.0, 30.0], [29.0, 30.0], [0.0, 1.0]])),
            case("6 random vectors of size 4", rng.normal(size=4), rng.normal(size=(6, 4))),
        ],
    )


LSE_STABLE_HINT = (
    "did exp overflow, or underflow to 0, whose log is -inf? subtract each row's own maximum m before exp "
    "and add m back after the log"
)
LSE_NO_ADD_BACK = (
    "you subtracted the maximum m but did not add it back: logsumexp(x) = m + log(sum(exp(x - m)))"
)
LSE_NO_LOG = "the log is missing: it is m + log(sum(exp(x - m))), not m + sum(exp(x - m))"
LSE_AXIS = "it is taken along axis 0; take the log-sum-exp of each row (the last axis)"
LSE_WHOLE_ARRAY = "the sum runs over the whole array; sum each row, along the last axis (axis=-1)"
LSE_MAX_ONLY = "it returns the maximum m alone; add log(sum(exp(x - m))) to it, a number between 0 and log(n)"
LSE_KEEPDIMS = (
    "the summed axis is still there with length 1: the result has one number per row, shape x.shape[:-1] "
    "(keepdims=True is for the maximum you subtract, not for the result)"
)
_LSE_BROADCAST_HINT = (
    "x has several rows here: take each row's maximum with axis=-1, keepdims=True, so that it broadcasts "
    "against x"
)


def check_logsumexp(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: ``log(sum(exp(x)))`` along the last axis, computed stably; shape ``x.shape[:-1]``."""
    rng = np.random.default_rng(103)

    def case(name: str, x: NDArray[Any], hint: str = "") -> Case:
        expected = logsumexp(x)  # (...)
        m = x.max(axis=-1)  # (...)
        rest = np.exp(x - m[..., None]).sum(axis=-1)  # (...), at least 1
        mistakes = [
            (np.log(rest), LSE_NO_ADD_BACK),
            (m + rest, LSE_NO_LOG),
            (expected[..., None], LSE_KEEPDIMS),
            (m, LSE_MAX_ONLY),
        ]
        if x.ndim > 1:
            mistakes.append((logsumexp(x, axis=0), LSE_AXIS))
            mistakes.append((m + np.log(np.exp(x - m[..., None]).sum()), LSE_WHOLE_ARRAY))
        return Case(
            name,
            (x,),
            expected,
            mistakes=tuple(mistakes),
            nonfinite_hint=hint,
            error_hint="" if x.ndim == 1 else _LSE_BROADCAST_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "log-sum-exp",
        fn,
        [
            case("a vector of 3 scores", np.array([1.0, 2.0, 3.0])),
            case("2 rows of 4 scores", rng.standard_normal((2, 4)).round(2)),
            case("a 3 x 3 matrix", rng.standard_normal((3, 3)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.standard_normal((2, 3, 5))),
            case("a length-1 row", np.array([[0.5], [-2.0]])),
            case("large scores, 1000 to 1002", np.array([[1000.0, 1001.0, 1002.0]]), LSE_STABLE_HINT),
            case(
                "very negative scores, -1000 to -998", np.array([[-1000.0, -999.0, -998.0]]), LSE_STABLE_HINT
            ),
            case(
                "rows on very different scales",
                np.array([[0.0, 1.0, 2.0], [-1000.0, -999.0, -998.0]]),
                LSE_STABLE_HINT,
            ),
        ],
    )
