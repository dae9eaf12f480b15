"""Checkers for lesson 00's warm-up: standardising rows (mean and variance, broadcast back over each row) and
the log of a product of probabilities, computed without underflow. Both ask for a step beyond what section 5
of the welcome shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, run_cases

__all__ = [
    "LOG_BASE_2",
    "LOG_BASE_10",
    "LOG_MEAN",
    "LOG_NOT_TAKEN",
    "LOG_OF_SUM",
    "LOG_UNDERFLOW_HINT",
    "LOG_WHOLE_ARRAY",
    "STANDARDIZE_BROADCAST_HINT",
    "STANDARDIZE_BY_VARIANCE",
    "STANDARDIZE_CANCELLATION",
    "STANDARDIZE_COLUMNS",
    "STANDARDIZE_NOT_CENTRED",
    "STANDARDIZE_NOT_SCALED",
    "STANDARDIZE_NO_KEEPDIMS",
    "STANDARDIZE_SAMPLE_STD",
    "STANDARDIZE_WHOLE_ARRAY",
    "check_log_product",
    "check_standardize",
]

STANDARDIZE_COLUMNS = (
    "it standardises each column (axis 0); give each row its own mean and standard deviation, taken along "
    "the last axis"
)
STANDARDIZE_WHOLE_ARRAY = (
    "it uses the mean and standard deviation of the whole array; give each row its own, taken along the last "
    "axis"
)
STANDARDIZE_BY_VARIANCE = "it divides by the variance; divide by the standard deviation, its square root"
STANDARDIZE_NOT_CENTRED = (
    "it divides by the standard deviation without subtracting the mean first; subtract each row's mean, then "
    "divide"
)
STANDARDIZE_NOT_SCALED = (
    "it subtracts each row's mean but does not divide by the row's standard deviation, so the variance is "
    "not 1"
)
STANDARDIZE_SAMPLE_STD = (
    "it divides by the sample standard deviation (ddof=1, dividing by n - 1); np.std's default divides by n, "
    "which makes each row's variance exactly 1"
)
STANDARDIZE_NO_KEEPDIMS = (
    "it subtracts the mean of row i from column i: without keepdims=True the row means, shape (n,), line up "
    "with the last axis; take them with axis=-1, keepdims=True"
)
STANDARDIZE_CANCELLATION = (
    "did the variance come from mean(x**2) - mean(x)**2? for values far from 0 the two terms are huge and "
    "nearly equal, and their difference keeps none of the variance's digits; take the mean of the squared "
    "deviations, ((x - mean)**2).mean(...), or np.std"
)
STANDARDIZE_BROADCAST_HINT = (
    "x has several rows here: take each row's mean and standard deviation with axis=-1, keepdims=True, so "
    "that they broadcast against x"
)


def _standardized(x: NDArray[Any], axis: int | None = -1, ddof: int = 0) -> NDArray[Any]:
    keep = axis is not None
    mean = x.mean(axis=axis, keepdims=keep)
    result: NDArray[Any] = (x - mean) / x.std(axis=axis, keepdims=keep, ddof=ddof)
    return result


def check_standardize(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(x)``: every row of ``x`` (the last axis) shifted and scaled to mean 0 and variance 1,
    ``(x - mean) / std`` with the row's own mean and (biased, ``np.std``) standard deviation; same shape."""
    rng = np.random.default_rng(9)

    def case(name: str, x: NDArray[Any]) -> Case:
        mean = x.mean(axis=-1, keepdims=True)
        std = x.std(axis=-1, keepdims=True)
        mistakes: list[tuple[NDArray[Any], str]] = [
            (_standardized(x, axis=None), STANDARDIZE_WHOLE_ARRAY),
            ((x - mean) / std**2, STANDARDIZE_BY_VARIANCE),
            (x / std, STANDARDIZE_NOT_CENTRED),
            (x - mean, STANDARDIZE_NOT_SCALED),
            (_standardized(x, ddof=1), STANDARDIZE_SAMPLE_STD),
        ]
        with np.errstate(invalid="ignore"):
            moments = (x - mean) / np.sqrt((x**2).mean(axis=-1, keepdims=True) - mean**2)
        mistakes.append((moments, STANDARDIZE_CANCELLATION))
        if x.ndim == 2:
            mistakes.insert(0, (_standardized(x, axis=0), STANDARDIZE_COLUMNS))
            if x.shape[0] == x.shape[1]:  # only then do the (n,) statistics broadcast without an error
                mistakes.append(((x - x.mean(axis=-1)) / x.std(axis=-1), STANDARDIZE_NO_KEEPDIMS))
        return Case(
            name,
            (x,),
            _standardized(x),
            mistakes=tuple(mistakes),
            nonfinite_hint=STANDARDIZE_CANCELLATION,
            error_hint="" if x.ndim == 1 else STANDARDIZE_BROADCAST_HINT,
            error_when=("broadcast",),
        )

    return run_cases(
        "standardize",
        fn,
        [
            case("the 8 numbers of section 5", np.array([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])),
            case(
                "3 rows of 4", np.array([[1.0, 2.0, 3.0, 4.0], [10.0, 0.0, 10.0, 0.0], [-1.0, 5.0, 2.0, 2.0]])
            ),
            case("a 3 x 3 matrix", rng.normal(loc=3.0, scale=2.0, size=(3, 3)).round(2)),
            case("a batch of shape (2, 3, 5)", rng.normal(size=(2, 3, 5))),
            case("rows far from 0, near 100,000,000", 1e8 + rng.normal(size=(2, 6))),
        ],
    )


LOG_UNDERFLOW_HINT = (
    "the product underflowed to 0, whose log is -inf: the log of a product is the sum of the logs, and each "
    "log is an ordinary number"
)
LOG_BASE_10 = "it uses the base-10 log; use the natural log, np.log, as the course does"
LOG_BASE_2 = "it uses the base-2 log; use the natural log, np.log, as the course does"
LOG_MEAN = "it averages the logs; the log of a product is the sum of the logs, not their mean"
LOG_OF_SUM = (
    "it is the log of the sum of the probabilities; the log of their product is the sum of their logs"
)
LOG_NOT_TAKEN = "it is the product itself; return its log"
LOG_WHOLE_ARRAY = (
    "it adds up every log in the array; add up each row's logs, along the last axis, one number per row"
)


def check_log_product(fn: Callable[[NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(p)``: the natural log of the product of the probabilities ``p`` along the last axis,
    ``sum(log p)``, of shape ``p.shape[:-1]``; finite even where the product underflows to 0."""
    rng = np.random.default_rng(10)

    def case(name: str, p: NDArray[Any]) -> Case:
        logs = np.log(p)
        mistakes: list[tuple[NDArray[Any], str]] = [
            (np.log10(p).sum(axis=-1), LOG_BASE_10),
            (np.log2(p).sum(axis=-1), LOG_BASE_2),
            (logs.mean(axis=-1), LOG_MEAN),
            (np.log(p.sum(axis=-1)), LOG_OF_SUM),
            (p.prod(axis=-1), LOG_NOT_TAKEN),
        ]
        if p.ndim > 1:
            mistakes.append((np.asarray(logs.sum()), LOG_WHOLE_ARRAY))
        return Case(
            name,
            (p,),
            logs.sum(axis=-1),
            mistakes=tuple(mistakes),
            nonfinite_hint=LOG_UNDERFLOW_HINT,
        )

    return run_cases(
        "log of a product",
        fn,
        [
            case("the probabilities 1/2, 1/4, 1/8", np.array([0.5, 0.25, 0.125])),
            case("a single probability", np.array([0.3])),
            case("2 rows of 5", rng.uniform(0.05, 1.0, size=(2, 5)).round(3)),
            case("a batch of shape (2, 3, 4)", rng.uniform(0.01, 1.0, size=(2, 3, 4))),
            case("2000 probabilities of 1/2: the product is below the smallest float", np.full(2000, 0.5)),
            case("2 rows of 400 small probabilities", rng.uniform(0.001, 0.1, size=(2, 400))),
        ],
    )
