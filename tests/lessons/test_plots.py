"""course.plots: the numbers drawn are the numbers given, labels and colours are as documented."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.text import Text

from course.plots import (
    FONT_SIZE,
    MASKED_COLOUR,
    MAX_WIDTH_IN,
    OKABE_ITO,
    attention_heatmap,
    attention_heatmaps,
    forecast_plot,
    saturation_curve,
    variance_curve,
)

TOKENS = ["the", "judge", "issued", "a", "sentence"]


@pytest.fixture
def weights() -> np.ndarray:
    x = np.random.default_rng(0).random((5, 5))
    return x / x.sum(-1, keepdims=True)


def renders(fig: Figure) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    assert buffer.getvalue().startswith(b"\x89PNG")


def cell_texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_no_pyplot_figures_are_created(weights):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    attention_heatmap(weights, TOKENS, TOKENS)
    variance_curve([1, 4], [1.0, 4.0], [1.0, 1.0])
    saturation_curve([1, 4], [0.5, 0.9], [0.4, 0.5])
    forecast_plot([1, 2])
    assert plt.get_fignums() == before


@pytest.mark.parametrize(
    ("t", "size"),
    [
        (3, (5.5, 4.0)),
        (44, (8.28, 7.99837)),  # 29.4 by 28.4 in, drawn at the notebook's width: the height scaled too
    ],
)
def test_a_heatmap_wider_than_the_notebook_is_drawn_smaller_as_a_whole(t, size):
    fig = attention_heatmap(np.full((t, t), 1 / t), annotate=False)
    np.testing.assert_allclose(fig.get_size_inches(), size, atol=5e-5)


def test_heatmap_shows_the_weights_and_the_tokens(weights):
    fig = attention_heatmap(weights, TOKENS, TOKENS, title="Self-attention")
    renders(fig)
    ax = fig.axes[0]
    image = ax.images[0]
    np.testing.assert_array_equal(image.get_array(), weights)
    assert image.get_cmap().name == "cividis"
    assert image.get_clim() == (0.0, 1.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == TOKENS
    assert [t.get_text() for t in ax.get_yticklabels()] == TOKENS
    assert ax.get_xlabel() == "key (attended to)"
    assert ax.get_ylabel() == "query (attending)"
    assert ax.get_title() == "Self-attention"
    assert cell_texts(ax) == [f"{w:.2f}" for w in weights.ravel()]
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "weight"  # the colorbar


def test_heatmap_annotation_contrast_and_format():
    w = np.array([[0.9, 0.1], [0.25, 0.75]])
    fig = attention_heatmap(w, ["a", "b"], ["c", "d"], fmt=".1f")
    ax = fig.axes[0]
    assert cell_texts(ax) == ["0.9", "0.1", "0.2", "0.8"]
    assert [t.get_color() for t in ax.texts] == ["black", "white", "white", "black"]
    assert cell_texts(attention_heatmap(w, annotate=False).axes[0]) == []


def test_heatmap_draws_masked_cells_masked_and_without_numbers():
    w = np.array([[1.0, 0.0, 0.0], [0.4, 0.6, 0.0], [0.2, 0.3, 0.5]])
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    ax = attention_heatmap(w, allowed=allowed).axes[0]
    assert cell_texts(ax) == ["1.00", "0.40", "0.60", "0.20", "0.30", "0.50"]  # the 3 masked cells: none
    (hatched,) = ax.patches  # one patch, one square per masked cell
    assert hatched.get_hatch() == "//" and to_hex(hatched.get_facecolor()) == MASKED_COLOUR
    squares = hatched.get_path().to_polygons()
    assert sorted(tuple(square.mean(axis=0)[::-1]) for square in (s[:4] for s in squares)) == [
        (0.0, 1.0),
        (0.0, 2.0),
        (1.0, 2.0),
    ]  # (row, column): above the diagonal
    assert all(np.ptp(square, axis=0).tolist() == [1.0, 1.0] for square in squares)
    assert len(attention_heatmap(w, allowed=np.ones((3, 3), dtype=bool)).axes[0].patches) == 0


def test_heatmap_refuses_a_mask_of_another_shape_or_type():
    with pytest.raises(ValueError) as info:
        attention_heatmap(np.eye(2), allowed=np.ones((2, 3), dtype=bool))
    assert str(info.value) == "allowed must be booleans of the weights' shape (2, 2), got bool (2, 3)"
    with pytest.raises(ValueError) as info:
        attention_heatmap(np.eye(2), allowed=np.ones((2, 2)))
    assert str(info.value) == "allowed must be booleans of the weights' shape (2, 2), got float64 (2, 2)"


def test_heatmap_cross_attention_default_labels_and_given_axes():
    w = np.full((2, 3), 1 / 3)
    fig = Figure()
    ax = fig.add_subplot()
    assert attention_heatmap(w, ax=ax) is fig
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["0", "1"]


def test_heatmap_rejects_bad_input():
    with pytest.raises(ValueError, match=r"weights must be a \(T_q, T_k\) matrix, got shape \(1, 2, 2\)"):
        attention_heatmap(np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="got 2 query labels and 3 key labels for weights of shape"):
        attention_heatmap(np.zeros((3, 3)), ["a", "b"], ["a", "b", "c"])


def test_fonts_are_large_enough_for_a_projector(weights):
    for fig in (
        attention_heatmap(weights, TOKENS, TOKENS),
        variance_curve([1, 4, 16], [1.1, 3.9, 16.5], [1.1, 0.97, 1.03]),
        forecast_plot([3, 0, 5]),
    ):
        texts = [t for t in fig.findobj(Text) if t.get_text()]
        assert texts and min(t.get_fontsize() for t in texts) >= FONT_SIZE - 2
        assert fig.get_size_inches()[0] >= 6


def test_variance_curve_plots_the_measurements_and_the_theory():
    d_ks = [1, 4, 16, 64]
    unscaled, scaled = [1.02, 3.9, 16.4, 63.0], [1.02, 0.975, 1.025, 0.984]
    fig = variance_curve(d_ks, unscaled, scaled)
    renders(fig)
    ax = fig.axes[0]
    lines = ax.get_lines()
    np.testing.assert_array_equal(lines[0].get_xdata(), d_ks)
    np.testing.assert_array_equal(lines[0].get_ydata(), unscaled)
    np.testing.assert_array_equal(lines[1].get_ydata(), scaled)
    np.testing.assert_array_equal(lines[2].get_ydata(), d_ks)
    np.testing.assert_array_equal(lines[3].get_ydata(), [1, 1, 1, 1])
    colours = [to_hex(line.get_color()).upper() for line in lines[:2]]
    assert colours == [OKABE_ITO["vermillion"], OKABE_ITO["blue"]]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["q·k", "q·k / √d_k", "d_k (theory)", "1 (theory)"]
    assert "16" in [t.get_text() for t in ax.get_yticklabels()]  # plain numbers, not 2^4
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "d_k (key dimension)" and ax.get_ylabel() == "variance"


def test_saturation_curve_with_uniform_reference_and_a_gradient_variant():
    fig = saturation_curve([2, 8, 32], [0.6, 0.9, 0.99], [0.5, 0.52, 0.55], n_keys=10)
    renders(fig)
    ax = fig.axes[0]
    lines = ax.get_lines()
    np.testing.assert_array_equal(lines[0].get_ydata(), [0.6, 0.9, 0.99])
    np.testing.assert_array_equal(lines[1].get_ydata(), [0.5, 0.52, 0.55])
    np.testing.assert_allclose(lines[2].get_ydata(), [0.1, 0.1, 0.1])
    assert lines[2].get_linestyle() == "--"
    assert ax.get_ylim() == (0.0, 1.05)
    assert ax.get_ylabel() == "largest softmax weight"

    grad = saturation_curve([2, 8], [1e-3, 1e-9], [0.2, 0.1], ylabel="gradient norm", logy=True).axes[0]
    assert grad.get_yscale() == "log" and grad.get_ylabel() == "gradient norm"


def test_curves_reject_mismatched_lengths():
    with pytest.raises(ValueError, match="'q·k / √d_k' has 1 values for 2 values of x"):
        variance_curve([1, 2], [1, 2], [1])


def test_forecast_plot_bars_and_labels():
    fig = forecast_plot([4, 0, 7, 1], start_label="Mon 3 Mar")
    renders(fig)
    ax = fig.axes[0]
    assert [bar.get_height() for bar in ax.patches] == [4, 0, 7, 1]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Mon 3 Mar", "+1", "+2", "+3"]
    assert cell_texts(ax) == ["4", "0", "7", "1"]  # the counts written on the bars
    assert to_hex(ax.patches[0].get_facecolor()).upper() == OKABE_ITO["blue"]
    assert ax.get_ylabel() == "reviews due"


def test_forecast_plot_of_nothing_due():
    ax = forecast_plot([0, 0, 0]).axes[0]
    assert ax.get_ylim()[1] > 0


def test_forecast_plot_of_many_days_labels_every_7th_day_and_fits_the_notebook():
    counts = [12, 0, 3] * 10
    fig = forecast_plot(counts)
    ax = fig.axes[0]
    assert [bar.get_height() for bar in ax.patches] == counts
    assert [t.get_text() for t in ax.get_xticklabels()] == ["today", "+7", "+14", "+21", "+28"]
    assert set(range(30)) <= {*ax.get_xticks(), *ax.get_xticks(minor=True)}  # a tick for every day
    assert cell_texts(ax) == [str(c) for c in counts]
    assert {t.get_rotation() for t in ax.texts} == {0.0}
    assert fig.get_figwidth() == MAX_WIDTH_IN


def test_forecast_plot_writes_counts_of_three_digits_upright_when_bars_are_narrow():
    ax = forecast_plot([100, 5] * 8).axes[0]
    assert {t.get_rotation() for t in ax.texts} == {90.0}
    assert {t.get_rotation() for t in forecast_plot([100, 5] * 7).axes[0].texts} == {0.0}  # 14 days: room


def test_heatmap_fits_the_notebook_however_many_tokens():
    fig = attention_heatmap(np.eye(30), annotate=False)
    assert fig.get_figwidth() == MAX_WIDTH_IN
    slanted = attention_heatmap(np.eye(2), ["a", "b"], ["long key", "b"]).axes[0].get_xticklabels()
    assert [(t.get_rotation(), t.get_horizontalalignment()) for t in slanted] == [(45.0, "right")] * 2


def test_heatmaps_share_one_colour_scale_and_one_colorbar(weights):
    stack = np.stack([weights, weights.T / weights.T.sum(-1, keepdims=True)])  # (2, 5, 5)
    fig = attention_heatmaps(stack, TOKENS, TOKENS, titles=["first", "second"])
    renders(fig)
    panels = [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]
    assert [ax.get_title() for ax in panels] == ["first", "second"]
    for ax, expected in zip(panels, stack, strict=True):
        np.testing.assert_array_equal(ax.images[0].get_array(), expected)
        assert ax.images[0].get_clim() == (0.0, 1.0)
    colorbars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colorbars) == 1 and colorbars[0].get_ylabel() == "weight"
    assert panels[0].yaxis.get_tick_params()["labelleft"]  # query labels on the first panel only
    assert not panels[1].yaxis.get_tick_params()["labelleft"]
    assert fig.get_figwidth() <= MAX_WIDTH_IN


def test_heatmaps_reject_a_matrix_or_a_title_count_that_differs(weights):
    with pytest.raises(
        ValueError, match=r"^weights must be a stack \(n, T_q, T_k\) of weight matrices, got shape \(5, 5\)$"
    ):
        attention_heatmaps(weights, titles=["one"])
    with pytest.raises(ValueError, match=r"^got 1 titles for 2 weight matrices$"):
        attention_heatmaps(np.stack([weights, weights]), titles=["one"])
