"""Checkers for lesson 00's warm-up: the dot product and the weighted average, the two operations attention
is made of."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._engine import Case, CheckResult, run_cases

__all__ = ["check_dot", "check_weighted_average"]


def check_dot(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(u, v)``: the dot product of two 1-D arrays of the same length, a single number."""
    rng = np.random.default_rng(7)

    def case(name: str, u: NDArray[Any], v: NDArray[Any]) -> Case:
        products = (u * v, "it is the element-wise product; add its entries up to get one number")
        return Case(name, (u, v), np.asarray(float(u @ v)), mistakes=(products,))

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


def check_weighted_average(fn: Callable[[NDArray[Any], NDArray[Any]], Any]) -> CheckResult:
    """Check ``fn(vectors, weights)``: ``sum_i weights[i] * vectors[i]`` for vectors (n, d), weights (n,)."""
    rng = np.random.default_rng(8)

    def case(name: str, vectors: NDArray[Any], weights: NDArray[Any]) -> Case:
        plain = (vectors.mean(axis=0), "it is the plain mean; multiply each vector by its weight first")
        return Case(name, (vectors, weights), weights @ vectors, mistakes=(plain,))

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
