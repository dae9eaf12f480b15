"""course.diagrams: the arrays drawn are the arrays of attention, computed here independently; titles give
the shapes; the figures fit a notebook, their text is readable and overlaps nothing; bad shapes fail."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from course.attention import sinusoidal_positions
from course.diagrams import heads_flow, positional_heatmap, qkv_flow
from course.plots import MAX_WIDTH_IN, MIN_TEXT_PX, smallest_text_px

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def drawn(fig: Figure) -> dict[str, np.ndarray]:
    return {ax.get_label(): np.asarray(ax.images[0].get_array()) for ax in fig.axes if ax.images}


def titles(fig: Figure) -> dict[str, str]:
    return {ax.get_label(): ax.get_title() for ax in fig.axes if ax.images}


def softmax(scores: np.ndarray) -> np.ndarray:
    e = np.exp(scores)  # small scores here: no need to subtract the maximum
    return e / e.sum(axis=1, keepdims=True)


def qkv_inputs(t: int = 6, d_model: int = 8, d_k: int = 4, d_v: int = 5) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)
    return (
        rng.normal(size=(t, d_model)),
        rng.normal(size=(d_model, d_k)) / 3,
        rng.normal(size=(d_model, d_k)) / 3,
        rng.normal(size=(d_model, d_v)) / 3,
    )


def heads_inputs(t: int = 5, d_model: int = 8) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(4)
    return (rng.normal(size=(t, d_model)), *(rng.normal(size=(d_model, d_model)) / 3 for _ in range(4)))


def check_figure(fig: Figure) -> None:
    """Fits a notebook, readable, renders, and no text overlaps other text or a matrix panel."""
    assert fig.get_figwidth() <= MAX_WIDTH_IN
    assert smallest_text_px(fig) >= MIN_TEXT_PX
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=40)
    assert buffer.getvalue().startswith(b"\x89PNG")
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    hidden = set()  # labels of ticks outside the view, which are not drawn
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks():
                if not low - 1e-9 <= tick.get_loc() <= high + 1e-9:
                    hidden.update((id(tick.label1), id(tick.label2)))
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    figure_box = fig.bbox
    for text, box in boxes:
        assert figure_box.x0 - 1 <= box.x0 and box.x1 <= figure_box.x1 + 1, f"{text!r} leaves the figure"
        assert figure_box.y0 - 1 <= box.y0 and box.y1 <= figure_box.y1 + 1, f"{text!r} leaves the figure"
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"
    for ax in fig.axes:
        if ax.images:
            for text, box in boxes:
                assert not box.overlaps(ax.get_window_extent(renderer)), f"{text!r} overlaps {ax.get_label()}"


# ----------------------------------------------------------------------------------------------------
# qkv_flow


def test_qkv_flow_draws_the_arrays_of_self_attention() -> None:
    x, w_q, w_k, w_v = qkv_inputs()
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    a = softmax(q @ k.T / 2.0)  # √d_k = √4
    expected = {"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v, "A": a, "out": a @ v}
    arrays = drawn(qkv_flow(x, w_q, w_k, w_v))
    assert arrays.keys() == expected.keys()
    for name, array in expected.items():
        np.testing.assert_allclose(arrays[name], array, rtol=0, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(arrays["A"].sum(axis=1), np.ones(6), rtol=0, atol=1e-12)


def test_qkv_flow_titles_give_names_and_shapes() -> None:
    assert titles(qkv_flow(*qkv_inputs())) == {
        "X": "X\n(6, 8)",
        "W_Q": "W_Q\n(8, 4)",
        "W_K": "W_K\n(8, 4)",
        "W_V": "W_V\n(8, 5)",
        "Q": "Q = X W_Q\n(6, 4)",
        "K": "K = X W_K\n(6, 4)",
        "V": "V = X W_V\n(6, 5)",
        "A": "A = softmax(QKᵀ/√d_k)\n(6, 6)",
        "out": "out = A V\n(6, 5)",
    }


def test_qkv_flow_cells_are_square_and_the_same_size_everywhere() -> None:
    fig = qkv_flow(*qkv_inputs())
    sizes = set()
    for ax in fig.axes:
        rows, cols = ax.images[0].get_array().shape
        box = ax.get_position()
        width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
        sizes.add((round(width / cols, 9), round(height / rows, 9)))
    assert len(sizes) == 1
    ((width, height),) = sizes
    assert width == pytest.approx(height)


def test_qkv_flow_labels_tokens_on_x_and_a() -> None:
    fig = qkv_flow(*qkv_inputs(), tokens=TOKENS)
    axes = {ax.get_label(): ax for ax in fig.axes}
    fig.draw_without_rendering()
    assert [t.get_text() for t in axes["X"].get_yticklabels()] == TOKENS
    assert [t.get_text() for t in axes["A"].get_yticklabels()] == TOKENS
    assert [t.get_text() for t in axes["A"].get_xticklabels()] == TOKENS
    assert axes["Q"].get_yticklabels() == []


@pytest.mark.parametrize(
    ("shapes", "tokens"),
    [
        ((6, 8, 4, 5), None),
        ((6, 8, 4, 5), TOKENS),
        ((6, 8, 4, 5), ["token_number_1"] * 6),
        ((3, 4, 2, 2), None),
        ((12, 16, 8, 8), [f"t{i}" for i in range(12)]),
        ((4, 32, 4, 4), None),
    ],
)
def test_qkv_flow_fits_and_is_readable(shapes: tuple[int, int, int, int], tokens: list[str] | None) -> None:
    check_figure(qkv_flow(*qkv_inputs(*shapes), tokens=tokens))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"w_q": np.ones((7, 4))}, "w_q has 7 rows; x has d_model = 8"),
        ({"w_k": np.ones((7, 4))}, "w_k has 7 rows; x has d_model = 8"),
        ({"w_v": np.ones((9, 5))}, "w_v has 9 rows; x has d_model = 8"),
        ({"w_k": np.ones((8, 3))}, "w_q has d_k = 4 columns but w_k has 3"),
        ({"x": np.ones(8)}, "x must be a (T, d_model) matrix, got shape (8,)"),
        ({"w_v": np.ones((8, 5, 1))}, "w_v must be a (d_model, d) matrix, got shape (8, 5, 1)"),
        ({"tokens": ["a"] * 5}, "got 5 tokens for x with T = 6 rows"),
    ],
)
def test_qkv_flow_refuses_inconsistent_shapes(change: dict[str, object], message: str) -> None:
    args: dict[str, object] = dict(zip(("x", "w_q", "w_k", "w_v"), qkv_inputs(), strict=True))
    args.update(change)
    with pytest.raises(ValueError) as raised:
        qkv_flow(**args)  # type: ignore[arg-type]
    assert str(raised.value) == message


# ----------------------------------------------------------------------------------------------------
# heads_flow


@pytest.mark.parametrize("n_heads", [1, 2, 4])
def test_heads_flow_draws_the_arrays_of_multi_head_attention(n_heads: int) -> None:
    x, w_q, w_k, w_v, w_o = heads_inputs()
    d_head = 8 // n_heads
    q_wide, k_wide, v_wide = x @ w_q, x @ w_k, x @ w_v
    expected = {"x": x, "q_wide": q_wide}
    heads = []
    for i in range(n_heads):
        block = slice(i * d_head, (i + 1) * d_head)
        q, k, v = q_wide[:, block], k_wide[:, block], v_wide[:, block]
        weights = softmax(q @ k.T / np.sqrt(d_head))
        heads.append(weights @ v)
        expected.update({f"q[{i}]": q, f"weights[{i}]": weights, f"heads[{i}]": heads[i]})
    concat = np.concatenate(heads, axis=1)
    expected.update({"concat": concat, "out": concat @ w_o})
    arrays = drawn(heads_flow(x, w_q, w_k, w_v, w_o, n_heads))
    assert arrays.keys() == expected.keys()
    for name, array in expected.items():
        np.testing.assert_allclose(arrays[name], array, rtol=0, atol=1e-12, err_msg=name)


def test_heads_flow_titles_give_shapes() -> None:
    fig = heads_flow(*heads_inputs(), 2)
    assert titles(fig) == {
        "x": "x\n(5, 8)",
        "q_wide": "q_wide = x W_Q\n(5, 8)",
        "concat": "concat\n(5, 8)",
        "out": "out = concat W_O\n(5, 8)",
        "q[0]": "q[0]",
        "q[1]": "q[1]",
        "weights[0]": "weights[0]",
        "weights[1]": "weights[1]",
        "heads[0]": "heads[0]",
        "heads[1]": "heads[1]",
    }
    headers = {t.get_text() for t in fig.texts}
    assert {"split:\nq (2, 5, 4)", "attend:\nweights (2, 5, 5)", "weights v:\nheads (2, 5, 4)"} <= headers


def test_heads_flow_outlines_each_heads_block_in_its_colour() -> None:
    fig = heads_flow(*heads_inputs(), 2)
    axes = {ax.get_label(): ax for ax in fig.axes}
    for name in ("q_wide", "concat"):
        outlines = [(p.get_x(), p.get_width(), p.get_edgecolor()) for p in axes[name].patches]
        assert [(x, w) for x, w, _ in outlines] == [(-0.5, 4), (3.5, 4)]
        assert outlines[0][2] != outlines[1][2]
        for i in range(2):
            for label in ("q", "weights", "heads"):
                assert axes[f"{label}[{i}]"].patches[0].get_edgecolor() == outlines[i][2]


@pytest.mark.parametrize(
    ("t", "d_model", "n_heads"), [(5, 8, 1), (5, 8, 2), (5, 8, 4), (8, 12, 3), (3, 4, 2)]
)
def test_heads_flow_fits_and_is_readable(t: int, d_model: int, n_heads: int) -> None:
    check_figure(heads_flow(*heads_inputs(t, d_model), n_heads))


@pytest.mark.parametrize(
    ("index", "value", "n_heads", "message"),
    [
        (None, None, 3, "d_model = 8 is not divisible by n_heads = 3"),
        (None, None, 0, "n_heads must be at least 1, got 0"),
        (None, None, 8, "at most 6 heads can be drawn, got n_heads = 8"),
        (1, np.ones((7, 8)), 2, "w_q has 7 rows; x has d_model = 8"),
        (4, np.ones((8, 6)), 2, "w_o has 6 columns; it must have d_model = 8"),
        (0, np.ones((2, 3, 4)), 2, "x must be a (T, d_model) matrix, got shape (2, 3, 4)"),
    ],
)
def test_heads_flow_refuses_bad_shapes(
    index: int | None, value: np.ndarray | None, n_heads: int, message: str
) -> None:
    args = list(heads_inputs())
    if index is not None:
        args[index] = value
    with pytest.raises(ValueError) as raised:
        heads_flow(*args, n_heads)
    assert str(raised.value) == message


# ----------------------------------------------------------------------------------------------------
# positional_heatmap


def test_positional_heatmap_draws_the_encoding() -> None:
    pe = sinusoidal_positions(50, 64)
    fig = positional_heatmap(pe)
    (image,) = fig.axes[0].images
    assert np.array_equal(image.get_array(), pe)
    assert image.get_clim() == (-1.0, 1.0)
    assert image.get_cmap().name == "PuOr"
    ax, colorbar = fig.axes
    assert ax.get_title() == "Sinusoidal positional encoding"
    assert (ax.get_xlabel(), ax.get_ylabel(), colorbar.get_ylabel()) == ("dimension i", "position", "value")
    assert positional_heatmap(pe, title="PE").axes[0].get_title() == "PE"
    check_figure(fig)


def test_positional_heatmap_refuses_a_vector() -> None:
    with pytest.raises(ValueError) as raised:
        positional_heatmap(np.zeros(4))
    assert str(raised.value) == "pe must be a (positions, dimensions) matrix, got shape (4,)"


def test_no_pyplot_figures_are_created() -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    qkv_flow(*qkv_inputs(), tokens=TOKENS)
    heads_flow(*heads_inputs(), 2)
    positional_heatmap(sinusoidal_positions(10, 8))
    assert plt.get_fignums() == before
