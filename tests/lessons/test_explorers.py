"""The explorers: a control redraws the figure of its value; without a widget front end, a static figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from course.attention import softmax
from course.explorers import (
    AVERAGE,
    D_K_CHOICES,
    heads_explorer,
    heads_figure,
    mask_explorer,
    mask_figure,
    scaling_explorer,
    scaling_figure,
    scaling_scores,
    temperature_explorer,
    temperature_figure,
)
from course.plots import MAX_WIDTH_IN, MIN_TEXT_PX, smallest_text_px
from course.widgets._explorer import STATIC_NOTE

SCORES = np.array([2.0, 1.0, 0.5, -1.0])
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
NAMES = ["head 0: previous word", "head 1: next word"]


def two_heads() -> np.ndarray:
    """(2, 3, 3): head 0 looks one back, head 1 one ahead (each clamped to the sequence)."""
    back = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]])
    ahead = np.array([[0, 1.0, 0], [0, 0, 1.0], [0, 0, 1.0]])
    return np.stack([back, ahead])


def test_temperature_figure_draws_the_softmax_at_that_temperature():
    fig, alt, brief = temperature_figure(SCORES, 0.5)
    bars = [patch.get_height() for patch in fig.axes[0].patches]
    np.testing.assert_allclose(bars, softmax(SCORES / 0.5), rtol=0, atol=1e-15)
    assert alt == (
        "Bar chart of the softmax of the scores 2, 1, 0.5, -1 at temperature 0.50: weights 0.84, 0.11, 0.04, "
        "0.00. The largest is 0.84; uniform would be 0.25."
    )
    assert fig.axes[0].get_title() == "softmax(scores / τ), τ = 0.50"
    assert brief == "τ = 0.50: weights 0.84, 0.11, 0.04, 0.00."  # what a screen reader says as τ moves


def test_temperature_explorer_redraws_when_the_slider_moves():
    explorer = temperature_explorer(SCORES)
    assert explorer.values() == {"temperature": 1.0}
    assert "at temperature 1.00: weights 0.61, 0.22, 0.14, 0.03." in explorer.shown.alt
    assert explorer.status.value == "τ = 1.00: weights 0.61, 0.22, 0.14, 0.03."
    explorer.controls["temperature"].value = 10.0
    assert "at temperature 10.00: weights 0.29, 0.26, 0.25, 0.21." in explorer.shown.alt
    assert explorer.status.value == "τ = 10.00: weights 0.29, 0.26, 0.25, 0.21."  # briefly: what changed
    assert explorer.shown.alt in explorer.figure_view.value  # the image on display is the new one
    assert explorer.first.alt != explorer.shown.alt  # the static form keeps the first figure


def test_scaling_scores_are_the_same_for_the_same_width_and_spread_like_its_root():
    assert np.array_equal(scaling_scores(64), scaling_scores(64))
    assert not np.array_equal(scaling_scores(64), scaling_scores(64, seed=1))
    spread = np.array([scaling_scores(1024, 8, seed).std() for seed in range(50)]).mean()
    assert 25 < spread < 35  # about √1024 = 32


def test_scaling_figure_draws_both_softmaxes():
    fig, alt, brief = scaling_figure(256)
    heights = [patch.get_height() for patch in fig.axes[0].patches]
    scores = scaling_scores(256)
    np.testing.assert_allclose(heights[:8], softmax(scores), rtol=0, atol=1e-15)
    np.testing.assert_allclose(heights[8:], softmax(scores / 16), rtol=0, atol=1e-15)
    assert alt.startswith("Bar chart of one query's weights over 8 keys with d_k = 256 (random vectors")
    assert f"largest weight is {softmax(scores).max():.3f};" in alt
    unscaled, scaled = softmax(scores).max(), softmax(scores / 16).max()
    assert brief == f"d_k = 256: largest weight {unscaled:.3f} unscaled, {scaled:.3f} divided by √d_k."


def test_scaling_explorer_offers_powers_of_two_and_redraws():
    explorer = scaling_explorer()
    assert tuple(explorer.controls["d_k"].options) == D_K_CHOICES == tuple(2**i for i in range(11))
    explorer.controls["d_k"].value = 1024
    assert "d_k = 1024" in explorer.shown.alt and "largest weight is 1.000;" in explorer.shown.alt


def test_heads_figure_shows_one_head_or_their_average():
    weights = two_heads()
    fig, alt, brief = heads_figure(weights, ["a", "b", "c"], NAMES, NAMES[1])
    assert np.array_equal(fig.axes[0].images[0].get_array(), weights[1])
    assert alt == (
        "Heatmap of the attention weights of head 1: next word. Each query's largest weight: a → b (1.00); "
        "b → c (1.00); c → c (1.00)."
    )
    assert brief == "head 1: next word: a → b; b → c; c → c."
    fig, alt, _ = heads_figure(weights, ["a", "b", "c"], NAMES, AVERAGE)
    assert np.array_equal(fig.axes[0].images[0].get_array(), weights.mean(axis=0))
    assert "a → a (0.50)" in alt


def test_heads_figure_needs_a_name_per_head():
    with pytest.raises(
        ValueError, match=r"^need one name per head: 1 names for weights of shape \(2, 3, 3\)$"
    ):
        heads_figure(two_heads(), ["a", "b", "c"], NAMES[:1], NAMES[0])


def test_heads_explorer_menu():
    explorer = heads_explorer(two_heads(), ["a", "b", "c"], NAMES)
    assert list(explorer.controls["head"].options) == [*NAMES, AVERAGE]
    explorer.controls["head"].value = AVERAGE
    assert explorer.shown.alt.startswith("Heatmap of the attention weights of average of the heads.")


@pytest.mark.parametrize(
    ("mask", "t_q", "align", "length", "allowed", "sees"),
    [
        ("none", 2, "bottom-right", 6, 12, "4 the sees keys 0-5; 5 mat sees keys 0-5"),
        ("causal", 2, "bottom-right", 6, 11, "4 the sees keys 0-4; 5 mat sees keys 0-5"),
        ("causal", 2, "top-left", 6, 3, "4 the sees key 0; 5 mat sees keys 0-1"),
        ("padding", 6, "bottom-right", 4, 24, "0 the sees keys 0-3"),
        ("causal + padding", 3, "bottom-right", 4, 12, "3 on sees keys 0-3; 4 <pad> sees keys 0-3"),
    ],
)
def test_mask_figure_allows_what_the_mask_says(mask, t_q, align, length, allowed, sees):
    fig, alt, brief = mask_figure(TOKENS, mask, t_q, align, length)
    weights = fig.axes[0].images[0].get_array()
    assert weights.shape == (t_q, 6)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert int((weights > 0).sum()) == allowed
    assert f": {allowed} of {t_q * 6} pairs allowed, masked cells grey." in alt
    assert sees in alt
    assert brief.endswith(f": {allowed} of {t_q * 6} pairs allowed.") and brief.startswith(mask)


def test_mask_figure_refuses_an_unknown_mask():
    with pytest.raises(
        ValueError, match=r"^mask must be one of none, causal, padding, causal \+ padding; got 'x'$"
    ):
        mask_figure(TOKENS, "x", 6, "bottom-right", 6)


def test_mask_explorer_controls_redraw():
    explorer = mask_explorer(TOKENS)
    assert explorer.values() == {"mask": "causal", "t_q": 6, "align": "bottom-right", "length": 6}
    explorer.controls["t_q"].value = 1
    assert "5 mat sees keys 0-5." in explorer.shown.alt
    explorer.controls["align"].value = "top-left"
    assert "5 mat sees key 0." in explorer.shown.alt
    assert explorer.status.value == "causal mask, top-left: 1 of 6 pairs allowed."


def test_every_explorer_figure_fits_the_notebook_with_readable_text():
    before = plt.get_fignums()
    figures = [
        temperature_figure(SCORES, 1.0)[0],
        scaling_figure(1024)[0],
        heads_figure(two_heads(), ["a", "b", "c"], NAMES, AVERAGE)[0],
        mask_figure(TOKENS, "causal + padding", 2, "top-left", 4)[0],
    ]
    for fig in figures:
        assert fig.get_figwidth() <= MAX_WIDTH_IN
        assert smallest_text_px(fig) >= MIN_TEXT_PX
    assert plt.get_fignums() == before


def test_without_a_widget_front_end_an_explorer_is_its_first_figure():
    explorer = temperature_explorer(SCORES)
    explorer.controls["temperature"].value = 0.1  # moved before display: the static form keeps the first
    bundle = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == (
        "Softmax temperature explorer: Bar chart of the softmax of the scores 2, 1, 0.5, -1 at temperature "
        f"1.00: weights 0.61, 0.22, 0.14, 0.03. The largest is 0.61; uniform would be 0.25. {STATIC_NOTE}"
    )
    assert bundle["text/html"].startswith("<p><b>Softmax temperature explorer</b></p><img alt=")
    assert bundle["text/html"].endswith(f"<p><i>{STATIC_NOTE}</i></p>")
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == explorer.root.model_id
    assert repr(explorer) == bundle["text/plain"]
