"""Positions as rotations (lesson 03): the shift matrix of the sinusoidal encoding, and rotary embeddings.

Convention: feature pair ``i`` is the two adjacent columns ``(2i, 2i + 1)``, as in the paper's sinusoidal
encoding (:func:`course.attention.sinusoidal_positions`), and pair ``i`` turns at the frequency
``1 / base^(2i/d)`` with ``base = 10000``. Rotary embeddings (Su et al., 2021) rotate each pair of a query or
key at position ``p`` by the angle ``p / base^(2i/d)``:
``(x_2i, x_2i+1) -> (x_2i cos a - x_2i+1 sin a, x_2i sin a + x_2i+1 cos a)``. (Some libraries, GPT-NeoX and
Hugging Face's Llama among them, pair column ``i`` with column ``i + d/2`` instead; the idea is the same, the
numbers are not.)

Importing this module never imports torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BASE", "apply_rotary", "pair_frequencies", "shift_matrix"]

Array = NDArray[Any]

BASE = 10000.0


def pair_frequencies(d: int, base: float = BASE) -> Array:
    """The frequency of each feature pair, shape (d // 2,): ``1 / base^(2i/d)`` for pair ``i``."""
    if d % 2:
        raise ValueError(f"the width must be even to form pairs, got {d}")
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)  # (d // 2,)


def shift_matrix(k: float, d_model: int, base: float = BASE) -> Array:
    """The (d_model, d_model) block-diagonal rotation ``R_k`` with ``PE[pos + k] = R_k @ PE[pos]`` for every
    ``pos``, where ``PE`` is the sinusoidal encoding (sine in column 2i, cosine in column 2i + 1).

    Block ``i`` is ``[[cos(w k), sin(w k)], [-sin(w k), cos(w k)]]`` with ``w`` the pair's frequency: by the
    angle-addition formulas, ``sin(w(p + k)) = sin(wp) cos(wk) + cos(wp) sin(wk)`` and
    ``cos(w(p + k)) = -sin(wp) sin(wk) + cos(wp) cos(wk)``. It does not depend on ``pos``.
    """
    angle = k * pair_frequencies(d_model, base)  # (d_model // 2,)
    cos, sin = np.cos(angle), np.sin(angle)  # (d_model // 2,) each
    r = np.zeros((d_model, d_model))
    even = np.arange(0, d_model, 2)  # (d_model // 2,): the first column of each pair
    r[even, even] = cos
    r[even, even + 1] = sin
    r[even + 1, even] = -sin
    r[even + 1, even + 1] = cos
    return r


def apply_rotary(x: ArrayLike, positions: ArrayLike, base: float = BASE) -> Array:
    """Rotary position embedding: rotate each feature pair ``(2i, 2i + 1)`` of ``x`` by ``p / base^(2i/d)``.

    ``x`` has shape (..., T, d) with ``d`` even; ``positions`` holds the T positions (integers or floats,
    shape (T,)). Returns a new array of the same shape as ``x``; ``x`` is not changed. Applied to queries and
    keys (never to values), it makes the score ``q_m · k_n`` depend on the positions only through ``m - n``.
    """
    x = np.asarray(x, dtype=np.float64)  # (..., T, d)
    pos = np.asarray(positions, dtype=np.float64)  # (T,)
    angle = pos[:, None] * pair_frequencies(x.shape[-1], base)[None, :]  # (T, d // 2)
    cos, sin = np.cos(angle), np.sin(angle)  # (T, d // 2) each
    first, second = x[..., 0::2], x[..., 1::2]  # (..., T, d // 2) each
    out = np.empty_like(x)  # (..., T, d)
    out[..., 0::2] = first * cos - second * sin
    out[..., 1::2] = first * sin + second * cos
    return out
