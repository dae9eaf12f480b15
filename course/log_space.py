"""Softmax in log space (lesson 01's transfer exercise): a stable log-sum-exp and log-softmax, in numpy.

``logsumexp(x)`` is ``log(sum(exp(x)))`` along one axis, computed as ``m + log(sum(exp(x - m)))`` with
``m`` the maximum along that axis: every exponent is then at most 0, so ``exp`` cannot overflow, and the
largest term is exactly 1, so the sum is at least 1 and its log is finite. ``log_softmax(x) = x -
logsumexp(x)`` is the log of the softmax weights without ever forming a weight that could underflow to 0
(whose log would be ``-inf``).
The same functions in torch are ``torch.logsumexp`` and ``torch.log_softmax``.

Importing this module never imports torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["log_softmax", "logsumexp"]

Array = NDArray[Any]


def logsumexp(x: ArrayLike, axis: int = -1) -> Array:
    """``log(sum(exp(x)))`` along ``axis``, which is removed: ``(..., n) -> (...)`` for the last axis.

    Stable for large and very negative scores: the maximum ``m`` is subtracted before ``exp`` and added back
    after the log. It is a smooth maximum: ``max(x) <= logsumexp(x) <= max(x) + log(n)``. A slice whose
    maximum is ``-inf`` (every score masked) gives ``-inf``, the log of an empty sum, without a warning; so
    does an empty slice (n = 0).
    """
    x = np.asarray(x, dtype=float)
    if x.size == 0:  # np.max refuses an empty axis; a sum of no exponentials is 0, and its log -inf
        with np.errstate(divide="ignore"):
            empty: Array = np.log(np.sum(np.exp(x), axis=axis))
        return empty
    m = np.max(x, axis=axis, keepdims=True)  # (..., 1): each slice's maximum
    m = np.where(np.isfinite(m), m, 0.0)  # an all -inf slice: subtract nothing (its sum is then 0)
    total = np.sum(np.exp(x - m), axis=axis, keepdims=True)  # (..., 1), >= 1 unless the slice is all -inf
    with np.errstate(divide="ignore"):  # log(0) = -inf for an all -inf slice is the right answer
        result: Array = np.squeeze(m + np.log(total), axis=axis)  # (...)
    return result


def log_softmax(x: ArrayLike, axis: int = -1) -> Array:
    """The log of the softmax along ``axis``, ``x - logsumexp(x)``, same shape as ``x``.

    Every entry is at most 0 and ``exp`` of each slice sums to 1. Unlike ``np.log(softmax(x))`` it stays
    finite when a weight is too small for float64 (a score more than about 745 below the slice's maximum).
    A slice with no finite score (every score masked with ``-inf``) gets ``-inf`` everywhere, the log of the
    all-zero weights :func:`course.attention.softmax` gives it.
    """
    x = np.asarray(x, dtype=float)
    total = np.expand_dims(logsumexp(x, axis=axis), axis)  # (..., 1)
    with np.errstate(invalid="ignore"):  # -inf - -inf in a masked slice: replaced below
        result: Array = np.where(np.isneginf(total), -np.inf, x - total)  # (..., n)
    return result
