"""course.positions: the sinusoidal shift matrix and rotary embeddings, checked against torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from course.attention import sinusoidal_positions
from course.positions import apply_rotary, pair_frequencies, shift_matrix


def torch_rotary(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0) -> torch.Tensor:
    """Rotary embedding with complex numbers, as in the RoFormer and Llama reference code: adjacent pairs
    (2i, 2i + 1) are the real and imaginary parts of one complex number, multiplied by e^(i p w_i)."""
    d = x.shape[-1]
    freqs = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d // 2,)
    angles = torch.outer(positions.to(torch.float64), freqs)  # (T, d // 2)
    turn = torch.polar(torch.ones_like(angles), angles)  # (T, d // 2), complex
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())  # (..., T, d // 2)
    return torch.view_as_real(z * turn).reshape(x.shape)


@pytest.mark.parametrize("shape", [(5, 8), (1, 2), (2, 3, 6, 16)])
def test_apply_rotary_matches_torch_complex_rotation(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    positions = rng.integers(0, 200, size=shape[-2])
    ours = apply_rotary(x, positions)
    theirs = torch_rotary(torch.tensor(x), torch.tensor(positions)).numpy()
    assert ours.shape == x.shape
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_apply_rotary_leaves_its_input_and_norms_alone() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 6))
    before = x.copy()
    out = apply_rotary(x, np.arange(4))
    assert np.array_equal(x, before)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(apply_rotary(x, np.zeros(4)), x)  # position 0 is no rotation


def test_rotary_scores_depend_only_on_the_offset() -> None:
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 16))
    for m, n in [(0, 3), (7, 2), (40, 40)]:
        base = apply_rotary(q[None], [m])[0] @ apply_rotary(k[None], [n])[0]
        for s in (1, 5, 123):
            moved = apply_rotary(q[None], [m + s])[0] @ apply_rotary(k[None], [n + s])[0]
            assert abs(moved - base) <= 1e-10


@pytest.mark.parametrize("d_model", [2, 8, 64])
def test_the_shift_matrix_moves_every_position_by_k(d_model: int) -> None:
    pe = torch.tensor(sinusoidal_positions(60, d_model))  # (60, d_model)
    for k in (1, 3, 17):
        r = torch.tensor(shift_matrix(k, d_model))
        shifted = pe[:-k] @ r.T  # row pos becomes R_k PE[pos]
        torch.testing.assert_close(shifted, pe[k:], rtol=0, atol=1e-10)
        torch.testing.assert_close(r @ r.T, torch.eye(d_model, dtype=torch.float64), rtol=0, atol=1e-12)


def test_pair_frequencies_and_odd_widths() -> None:
    np.testing.assert_allclose(pair_frequencies(8), [1, 0.1, 0.01, 0.001], rtol=1e-12)
    with pytest.raises(ValueError, match="even"):
        pair_frequencies(5)


def test_importing_positions_does_not_import_torch() -> None:
    code = "import sys, course.positions; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
