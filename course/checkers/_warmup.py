"""Checkers for lesson 00's warm-up: the dot product and the weighted average, the two operations attention
is made of."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, run_cases

__all__ = [
    "DOT_ADDS",
    "DOT_OUTER",
    "DOT_PRODUCT_OF_SUMS",
    "WEIGHTED_AXIS_1",
    "WEIGHTED_BROADCAST_HINT",
    "WEIGHTED_DIVIDED",
    "WEIGHTED_NOT_SUMMED",
    "WEIGHTED_TRANSPOSED",
    "check_dot",
    "check_weighted_average",
]

DOT_ADDS = "it adds u and v; multiply matching components, u[i] * v[i], then add the products"
DOT_OUTER = (
    "it is the outer product, every u[i] * v[j]; the dot product multiplies matching components only, "
    "u[i] * v[i], and adds them up"
)
DOT_PRODUCT_OF_SUMS = "it multiplies the two sums; multiply matching components first, then add the products"


def check_dot(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(u, v)``: the dot product of two 1-D arrays of the same length, a single number."""
    rng = np.random.default_rng(7)

    def case(name: str, u: NDArray[Any], v: NDArray[Any]) -> Case:
        mistakes = (
            (u * v, "it is the element-wise product; add its entries up to get one number"),
            (np.asarray((u + v).sum()), DOT_ADDS),
            (np.outer(u, v), DOT_OUTER),
            (np.asarray(u.sum() * v.sum()), DOT_PRODUCT_OF_SUMS),
        )
        return Case(name, (u, v), np.asarray(float(u @ v)), mistakes=mistakes)

    return run_cases(
        "dot",
        fn,
        [
            case("u = [1, 2, 3], v = [4, 5, 6]", np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])),
            case("length 1", np.array([3.0]), np.array([-2.0])),
            case("orthogonal vectors", np.array([1.0, 0.0]), np.array([0.0, 5.0])),
            case("random vectors of length 16", rng.standard_normal(16), rng.standard_normal(16)),
        ],
    )


WEIGHTED_NOT_SUMMED = (
    "it multiplies each vector by its weight but does not add them up: sum over axis 0, across the vectors"
)
WEIGHTED_AXIS_1 = "it sums over axis 1, within each vector; sum over axis 0, across the vectors"
WEIGHTED_DIVIDED = (
    "it divides by the number of vectors; the weights already sum to 1, so the weighted sum is the average"
)
WEIGHTED_TRANSPOSED = (
    "it is vectors @ weights, which mixes the features within each vector; weights @ vectors adds up "
    "weights[i] * vectors[i]"
)
WEIGHTED_BROADCAST_HINT = (
    "weights has one number per vector, shape (n,): write weights @ vectors, or give weights an axis, "
    "weights[:, None] * vectors, and sum over axis 0"
)


def check_weighted_average(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(vectors, weights)``: ``sum_i weights[i] * vectors[i]`` for vectors (n, d), weights (n,)."""
    rng = np.random.default_rng(8)

    def case(name: str, vectors: NDArray[Any], weights: NDArray[Any]) -> Case:
        scaled = weights[:, None] * vectors  # (n, d): each vector times its weight
        mistakes = [
            (vectors.mean(axis=0), "it is the plain mean; multiply each vector by its weight first"),
            (scaled, WEIGHTED_NOT_SUMMED),
            (scaled.sum(axis=1), WEIGHTED_AXIS_1),
            (scaled.sum(axis=0) / len(weights), WEIGHTED_DIVIDED),
        ]
        if vectors.shape[0] == vectors.shape[1]:  # only then does vectors @ weights run
            mistakes.append((vectors @ weights, WEIGHTED_TRANSPOSED))
        return Case(
            name,
            (vectors, weights),
            weights @ vectors,
            mistakes=tuple(mistakes),
            error_hint=WEIGHTED_BROADCAST_HINT,
            error_when=("broadcast", "matmul", "mismatch", "cannot be multiplied", "must match"),
        )

    random_weights = rng.random(5)
    return run_cases(
        "weighted_average",
        fn,
        [
            case(
                "3 vectors of size 2",
                np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                np.array([0.5, 0.25, 0.25]),
            ),
            case("all weight on the second vector", np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.0, 1.0])),
            case("one vector", np.array([[2.0, -1.0, 0.5]]), np.array([1.0])),
            case(
                "5 random vectors of size 4",
                rng.standard_normal((5, 4)),
                random_weights / random_weights.sum(),
            ),
        ],
    )
