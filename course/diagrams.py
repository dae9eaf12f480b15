"""Diagrams for the lessons: the flow of self-attention, of multi-head attention, and a positional encoding.

Like `course.plots`, every function draws on a new :class:`matplotlib.figure.Figure` made without pyplot and
returns it; end a notebook cell with ``show(fig, alt)``. Each matrix is drawn as a small heatmap of its actual
values, titled with its name and its shape, and the arrays drawn can be read back::

    {ax.get_label(): ax.images[0].get_array() for ax in fig.axes if ax.images}

The flow diagrams place their panels by hand, in inches, so that every matrix has the same cell size and its
shape can be compared with the others' at a glance. Values are illustrative (no colorbar): each matrix has its
own symmetric colour scale, on the colour-blind-safe diverging map ``PuOr``; attention weights use ``cividis``
on [0, 1] as `course.plots.attention_heatmap` does. Every figure is at most ``MAX_WIDTH_IN`` wide and its
smallest text is at least ``MIN_TEXT_PX`` (see `course.plots.smallest_text_px`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.textpath import TextToPath
from numpy.typing import ArrayLike, NDArray

from course.plots import FONT_SIZE, MAX_WIDTH_IN, OKABE_ITO

__all__ = ["FIGURE_WIDTH_IN", "VALUE_CMAP", "heads_flow", "positional_heatmap", "qkv_flow"]

Array = NDArray[np.float64]

FIGURE_WIDTH_IN = 8.2  # every diagram's width, within MAX_WIDTH_IN
VALUE_CMAP = "PuOr"  # diverging, colour-blind safe (ColorBrewer): matrix values, each on a symmetric scale
WEIGHT_CMAP = "cividis"  # attention weights on [0, 1], as in course.plots.attention_heatmap
TITLE_SIZE = FONT_SIZE - 1  # panel titles
SMALL_SIZE = FONT_SIZE - 2  # tick and arrow labels: 11 pt, 15.3 px, the smallest text allowed here
ARROW_COLOUR = "#333333"
MAX_CELL_IN = 0.3
MAX_HEIGHT_IN = 6.0  # the flow diagrams' cells shrink to keep them this tall at most
ARROW_GAP_IN = 0.55  # the least room between two panels an arrow joins
NOTE_IN = 0.35  # room for the note under a diagram
LANE_GAP_IN = 0.3  # between the panel above and the next panel's title
TITLE_LINE_IN = 0.24  # height of one line of a panel title, with its padding
# The least cell height that fits a token label on every row; with smaller cells only some rows are labelled.
TOKEN_CELL_IN = 0.16
# Head colours: Okabe-Ito, darkest first, without yellow (too light for an outline on white) and orange (the
# orange end of PuOr).
HEAD_COLOURS = [
    OKABE_ITO[name] for name in ("blue", "vermillion", "bluish green", "reddish purple", "sky blue", "black")
]

assert FIGURE_WIDTH_IN <= MAX_WIDTH_IN


# ----------------------------------------------------------------------------------------------------
# Drawing helpers: positions in inches from the figure's bottom-left corner


@dataclass(frozen=True)
class _Panel:
    """Where a matrix panel is: left, bottom, width and height in inches."""

    left: float
    bottom: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def top(self) -> float:
        return self.bottom + self.height

    @property
    def mid_x(self) -> float:
        return self.left + self.width / 2

    @property
    def mid_y(self) -> float:
        return self.bottom + self.height / 2


def _matrix(
    fig: Figure,
    label: str,
    data: Array,
    left: float,
    mid_y: float,
    cell: float,
    title: str,
    *,
    weights: bool = False,
) -> tuple[Axes, _Panel]:
    """Draw `data` as a heatmap of square cells of `cell` inches, its left edge at `left`, centred on
    `mid_y`; the axes are labelled `label` and titled `title`."""
    rows, cols = data.shape
    panel = _Panel(left, mid_y - rows * cell / 2, cols * cell, rows * cell)
    width, height = fig.get_size_inches()
    ax = fig.add_axes(
        (panel.left / width, panel.bottom / height, panel.width / width, panel.height / height), label=label
    )
    if weights:
        ax.imshow(data, cmap=WEIGHT_CMAP, vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    else:
        limit = float(np.max(np.abs(data))) or 1.0
        ax.imshow(data, cmap=VALUE_CMAP, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=TITLE_SIZE, pad=7)
    return ax, panel


def _arrow(
    fig: Figure, start: tuple[float, float], end: tuple[float, float], colour: str = ARROW_COLOUR
) -> None:
    """An arrow in figure inches from `start` to `end`."""
    fig.add_artist(
        FancyArrowPatch(
            start,
            end,
            transform=fig.dpi_scale_trans,
            arrowstyle="-|>",
            mutation_scale=16,
            linewidth=1.8,
            color=colour,
            shrinkA=2,
            shrinkB=2,
        )
    )


def _note(fig: Figure, x: float, y: float, text: str, *, ha: str = "left", va: str = "baseline") -> None:
    """Small text at (x, y) inches."""
    fig.text(x, y, text, transform=fig.dpi_scale_trans, fontsize=SMALL_SIZE, ha=ha, va=va)


def _fit_cell(
    cols: int, fixed_width: float, rows: int, fixed_height: float, least: float = 0.1
) -> tuple[float, float]:
    """The cell size, in inches, that fits `cols` cells and `fixed_width` inches of gaps and margins across
    the figure, and `rows` cells and `fixed_height` inches down within MAX_HEIGHT_IN unless that would make
    cells smaller than `least`; and the width left over, to share among the gaps."""
    cell = min(
        MAX_CELL_IN,
        (FIGURE_WIDTH_IN - fixed_width) / cols,
        max(least, (MAX_HEIGHT_IN - fixed_height) / rows),
    )
    return cell, FIGURE_WIDTH_IN - fixed_width - cols * cell


def _label_width(labels: Sequence[str]) -> float:
    """The width, in inches, of the widest of `labels` as a tick label, with its padding."""
    widths = [
        TextToPath().get_text_width_height_descent(label, FontProperties(size=SMALL_SIZE), ismath=False)[0]
        for label in labels
    ]
    return max(widths, default=0.0) / 72 + 0.12


def _shape(array: Array) -> str:
    return "(" + ", ".join(str(n) for n in array.shape) + ")"


def _softmax_rows(scores: Array) -> Array:
    """Row-wise softmax, stable: the largest score of each row is subtracted first."""
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights: Array = e / e.sum(axis=-1, keepdims=True)
    return weights


def _matrix_arg(name: str, value: ArrayLike, dims: str) -> Array:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a {dims} matrix, got shape {array.shape}")
    return array


def _check_rows(name: str, w: Array, d_model: int, x_name: str = "x") -> None:
    if w.shape[0] != d_model:
        raise ValueError(f"{name} has {w.shape[0]} rows; {x_name} has d_model = {d_model}")


# ----------------------------------------------------------------------------------------------------
# Self-attention: X -> Q, K, V -> A -> out


def _qkv_arrays(x: Array, w_q: Array, w_k: Array, w_v: Array) -> dict[str, Array]:
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    a = _softmax_rows(q @ k.T / np.sqrt(k.shape[1]))
    return {"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v, "A": a, "out": a @ v}


def _check_qkv(x: Array, w_q: Array, w_k: Array, w_v: Array, tokens: Sequence[str] | None) -> None:
    d_model = x.shape[1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        _check_rows(name, w, d_model)
    if w_k.shape[1] != w_q.shape[1]:
        raise ValueError(f"w_q has d_k = {w_q.shape[1]} columns but w_k has {w_k.shape[1]}")
    if tokens is not None and len(tokens) != x.shape[0]:
        raise ValueError(f"got {len(tokens)} tokens for x with T = {x.shape[0]} rows")


def qkv_flow(
    x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, *, tokens: Sequence[str] | None = None
) -> Figure:
    """Self-attention as a flow of matrices, each drawn with its values and titled with its shape.

    X (T, d_model) is multiplied by W_Q, W_K (d_model, d_k) and W_V (d_model, d_v) into Q, K (T, d_k) and
    V (T, d_v); Q and K give the weights A = softmax(Q Kᵀ / √d_k) (T, T), row-wise; A and V give the output
    A V (T, d_v). Arrows show the flow. The axes are labelled "X", "W_Q", "W_K", "W_V", "Q", "K", "V", "A"
    and "out", and each one's image holds that array. ``tokens`` (T strings) label the rows of X and the rows
    (queries) and columns (keys) of A.
    """
    xs = _matrix_arg("x", x, "(T, d_model)")
    ws = [_matrix_arg(name, w, "(d_model, d)") for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v))]
    _check_qkv(xs, ws[0], ws[1], ws[2], tokens)
    arrays = _qkv_arrays(xs, *ws)
    t, d_model = xs.shape
    d_w = max(ws[0].shape[1], ws[2].shape[1])
    label_in = _label_width(tokens) if tokens else 0.0
    # One lane per projection: (W_Q, Q), (W_K, K), (W_V, V); each holds 2 title lines and the taller panel.
    fixed_height = 0.1 + 3 * (2 * TITLE_LINE_IN + LANE_GAP_IN)
    cell, spare = _fit_cell(
        d_model + 2 * d_w + t + arrays["out"].shape[1],
        0.5 + 2 * label_in + 4 * ARROW_GAP_IN,
        3 * max(d_model, t),
        fixed_height,
        TOKEN_CELL_IN if tokens else 0.1,
    )
    gap = ARROW_GAP_IN + spare / 4
    gaps = (gap, gap, gap + label_in, gap)  # X -> W, W -> Q, Q -> A, A -> out
    content = max(d_model, t) * cell
    lane = 2 * TITLE_LINE_IN + content + LANE_GAP_IN
    height = fixed_height + 3 * content
    fig = Figure(figsize=(FIGURE_WIDTH_IN, height))
    mids = [height - 0.1 - i * lane - 2 * TITLE_LINE_IN - content / 2 for i in range(3)]
    columns = [0.15 + label_in]
    for width, gap_in in zip((d_model, d_w, d_w, t), gaps, strict=True):
        columns.append(columns[-1] + width * cell + gap_in)
    _draw_qkv(fig, arrays, mids, columns, cell, tokens)
    return fig


def _draw_qkv(
    fig: Figure,
    arrays: dict[str, Array],
    mids: list[float],
    columns: list[float],
    cell: float,
    tokens: Sequence[str] | None,
) -> None:
    """Draw the panels of `qkv_flow` and the arrows between them."""

    def draw(label: str, title: str, column: int, mid_y: float, *, weights: bool = False) -> _Panel:
        array = arrays[label]
        ax, panel = _matrix(
            fig, label, array, columns[column], mid_y, cell, f"{title}\n{_shape(array)}", weights=weights
        )
        every = max(1, math.ceil(TOKEN_CELL_IN / cell - 1e-9))  # label every row if there is room
        if tokens is not None and label in ("X", "A"):
            ax.set_yticks(range(0, len(tokens), every), tokens[::every], fontsize=SMALL_SIZE)
        if tokens is not None and label == "A":
            ax.set_xticks(range(0, len(tokens), every), tokens[::every], fontsize=SMALL_SIZE, rotation=90)
        return panel

    x = draw("X", "X", 0, mids[1])
    a_mid = (mids[0] + mids[1]) / 2
    a = draw("A", "A = softmax(QKᵀ/√d_k)", 3, a_mid, weights=True)
    out = draw("out", "out = A V", 4, (a_mid + mids[2]) / 2)
    a_left = a.left - (_label_width(tokens) if tokens else 0.0)
    for lane, name in enumerate("QKV"):
        w = draw(f"W_{name}", f"W_{name}", 1, mids[lane])
        m = draw(name, f"{name} = X W_{name}", 2, mids[lane])
        _arrow(fig, (x.right, x.mid_y), (w.left, w.mid_y))
        _note(fig, (x.right + w.left) / 2, (x.mid_y + w.mid_y) / 2 + 0.08, "@", ha="center", va="bottom")
        _arrow(fig, (w.right, w.mid_y), (m.left, m.mid_y))
        if name in "QK":
            _arrow(fig, (m.right, m.mid_y), (a_left, a.mid_y + (0.25 if name == "Q" else -0.25) * a.height))
        else:
            _arrow(fig, (m.right, m.mid_y), (out.left, out.mid_y - 0.25 * out.height))
    _arrow(fig, (a.right, a.mid_y), (out.left, out.mid_y + 0.25 * out.height))


# ----------------------------------------------------------------------------------------------------
# Multi-head attention: x -> q_wide -> split into heads -> attend -> concat -> out


def _heads_arrays(x: Array, ws: list[Array], n_heads: int) -> dict[str, Array]:
    """The arrays of one multi-head self-attention layer, keyed by the labels of `heads_flow`'s axes."""
    w_q, w_k, w_v, w_o = ws
    t, d_model = x.shape
    d_head = d_model // n_heads

    def split(m: Array) -> Array:
        heads: Array = m.reshape(t, n_heads, d_head).transpose(1, 0, 2)  # (h, T, d_head)
        return heads

    q_wide = x @ w_q
    q, k, v = split(q_wide), split(x @ w_k), split(x @ w_v)
    weights = _softmax_rows(q @ k.transpose(0, 2, 1) / np.sqrt(d_head))  # (h, T, T)
    heads = weights @ v  # (h, T, d_head)
    concat = heads.transpose(1, 0, 2).reshape(t, d_model)
    arrays = {"x": x, "q_wide": q_wide, "concat": concat, "out": concat @ w_o}
    for i in range(n_heads):
        arrays.update({f"q[{i}]": q[i], f"weights[{i}]": weights[i], f"heads[{i}]": heads[i]})
    return arrays


def _check_heads(x: Array, ws: list[Array], n_heads: int) -> None:
    d_model = x.shape[1]
    if n_heads < 1:
        raise ValueError(f"n_heads must be at least 1, got {n_heads}")
    if n_heads > len(HEAD_COLOURS):
        raise ValueError(f"at most {len(HEAD_COLOURS)} heads can be drawn, got n_heads = {n_heads}")
    if d_model % n_heads:
        raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")
    for name, w in zip(("w_q", "w_k", "w_v", "w_o"), ws, strict=True):
        _check_rows(name, w, d_model)
        if w.shape[1] != d_model:
            raise ValueError(f"{name} has {w.shape[1]} columns; it must have d_model = {d_model}")


def heads_flow(
    x: ArrayLike, w_q: ArrayLike, w_k: ArrayLike, w_v: ArrayLike, w_o: ArrayLike, n_heads: int
) -> Figure:
    """Multi-head self-attention of one sequence x (T, d_model), step by step, with the shape at each step.

    The queries q_wide = x W_Q (T, d_model) are split into ``n_heads`` heads q (h, T, d_head), d_head =
    d_model / h: head i is the i-th block of d_head columns, outlined in its own colour everywhere. Each head
    attends on its own: weights[i] = softmax(q[i] k[i]ᵀ / √d_head) (T, T) and heads[i] = weights[i] v[i]
    (T, d_head), where k and v are x W_K and x W_V split the same way (not drawn). The heads are concatenated
    side by side into concat (T, d_model) and projected: out = concat W_O (T, d_model). All weight matrices
    are (d_model, d_model); up to 6 heads can be drawn, each in its Okabe-Ito colour. The axes are labelled
    "x", "q_wide", "q[0]", ..., "weights[0]", ..., "heads[0]", ..., "concat" and "out", and each one's image
    holds that array.
    """
    xs = _matrix_arg("x", x, "(T, d_model)")
    names = ("w_q", "w_k", "w_v", "w_o")
    ws = [
        _matrix_arg(name, w, "(d_model, d_model)")
        for name, w in zip(names, (w_q, w_k, w_v, w_o), strict=True)
    ]
    _check_heads(xs, ws, n_heads)
    arrays = _heads_arrays(xs, ws, n_heads)
    t, d_model = xs.shape
    d_head = d_model // n_heads
    # Rows of cells and inches of text and arrows down the side columns (x over q_wide, concat over out) and
    # down the lanes, one lane per head; the taller one sets the height.
    side = (3 * t, 4 * TITLE_LINE_IN + 2 * ARROW_GAP_IN)
    lanes = (n_heads * t, 2 * TITLE_LINE_IN + n_heads * TITLE_LINE_IN + (n_heads - 1) * LANE_GAP_IN)
    fixed_height = 0.2 + NOTE_IN + 2 * TITLE_LINE_IN + max(side[1], lanes[1])
    margin = 0.35  # the side columns' titles are wider than their panels
    cell, spare = _fit_cell(
        2 * d_model + 2 * d_head + t, 2 * margin + 4 * ARROW_GAP_IN, max(side[0], lanes[0]), fixed_height
    )
    height = fixed_height + max(side[0], lanes[0]) * cell
    fig = Figure(figsize=(FIGURE_WIDTH_IN, height))
    columns = [margin]
    for width in (d_model, d_head, t, d_head):
        columns.append(columns[-1] + width * cell + ARROW_GAP_IN + spare / 4)
    _draw_heads(fig, arrays, n_heads, columns, cell, (NOTE_IN, height - 0.1 - 2 * TITLE_LINE_IN))
    return fig


def _outline(ax: Axes, colour: str, left: float = -0.5, width: float | None = None) -> None:
    """Outline columns `left`.. `left + width` of the image on `ax` (all of it by default) in `colour`."""
    x_low, x_high = ax.get_xlim()
    bottom, top = ax.get_ylim()  # an image's y axis points down: (rows - 0.5, -0.5)
    ax.add_patch(
        Rectangle(
            (left, top),
            x_high - x_low if width is None else width,
            bottom - top,
            fill=False,
            edgecolor=colour,
            linewidth=3.5,
            clip_on=False,
        )
    )


def _draw_heads(
    fig: Figure,
    arrays: dict[str, Array],
    n_heads: int,
    columns: list[float],
    cell: float,
    body: tuple[float, float],
) -> None:
    """Draw the panels of `heads_flow` and the arrows between them; `body`: the bottom and top, in inches,
    of the part under the column headers."""
    bottom, top = body
    mid = (bottom + top) / 2
    t, d_model = arrays["x"].shape
    d_head = d_model // n_heads

    def draw(
        label: str, title: str, column: int, mid_y: float, *, weights: bool = False
    ) -> tuple[Axes, _Panel]:
        return _matrix(fig, label, arrays[label], columns[column], mid_y, cell, title, weights=weights)

    def step(high: _Panel, low: _Panel, text: str) -> None:
        """A vertical arrow from `high` down to the title of `low`, labelled `text`."""
        low_top = low.top + 2 * TITLE_LINE_IN
        _arrow(fig, (high.mid_x, high.bottom), (low.mid_x, low_top))
        _note(fig, high.mid_x + 0.1, (high.bottom + low_top) / 2, text, va="center")

    shape = _shape(arrays["x"])
    _, x = draw("x", f"x\n{shape}", 0, top - t * cell / 2)
    q_wide_ax, q_wide = draw("q_wide", f"q_wide = x W_Q\n{shape}", 0, mid)
    step(x, q_wide, "@ W_Q")
    concat_ax, concat = draw("concat", f"concat\n{shape}", 4, mid)
    _, out = draw("out", f"out = concat W_O\n{shape}", 4, bottom + t * cell / 2)
    step(concat, out, "@ W_O")
    for i in range(n_heads):
        _outline(q_wide_ax, HEAD_COLOURS[i], i * d_head - 0.5, d_head)
        _outline(concat_ax, HEAD_COLOURS[i], i * d_head - 0.5, d_head)
    lanes_top = mid + (n_heads * (TITLE_LINE_IN + t * cell) + (n_heads - 1) * LANE_GAP_IN) / 2
    headers = ("split:\nq", "attend:\nweights", "weights v:\nheads")
    for column, (header, label) in enumerate(zip(headers, ("q", "weights", "heads"), strict=True), start=1):
        shape = f"({n_heads}, {', '.join(map(str, arrays[f'{label}[0]'].shape))})"
        x_mid = columns[column] + arrays[f"{label}[0]"].shape[1] * cell / 2
        fig.text(
            x_mid,
            lanes_top + 0.05,
            f"{header} {shape}",
            transform=fig.dpi_scale_trans,
            fontsize=TITLE_SIZE,
            ha="center",
            va="bottom",
        )
    for i in range(n_heads):
        mid_y = lanes_top - TITLE_LINE_IN - t * cell / 2 - i * (TITLE_LINE_IN + t * cell + LANE_GAP_IN)
        colour = HEAD_COLOURS[i]
        panels = []
        for column, label in enumerate(("q", "weights", "heads"), start=1):
            ax, panel = draw(f"{label}[{i}]", f"{label}[{i}]", column, mid_y, weights=label == "weights")
            _outline(ax, colour)
            panels.append(panel)
        _arrow(fig, (q_wide.right, q_wide.mid_y), (panels[0].left, panels[0].mid_y), colour)
        _arrow(fig, (panels[0].right, mid_y), (panels[1].left, mid_y), colour)
        _arrow(fig, (panels[1].right, mid_y), (panels[2].left, mid_y), colour)
        _arrow(fig, (panels[2].right, mid_y), (concat.left, concat.mid_y), colour)
    _note(
        fig,
        FIGURE_WIDTH_IN / 2,
        bottom - NOTE_IN + 0.08,
        "k and v are x W_K and x W_V, split into heads the same way (not drawn)",
        ha="center",
        va="bottom",
    )


# ----------------------------------------------------------------------------------------------------
# Positional encoding


def positional_heatmap(pe: ArrayLike, *, title: str = "Sinusoidal positional encoding") -> Figure:
    """A positional-encoding matrix (positions, dimensions) as a heatmap: row = position (top: 0), column =
    dimension i, on the diverging map ``PuOr`` over [-1, 1] with a colorbar. The image's data is ``pe``."""
    data = _matrix_arg("pe", pe, "(positions, dimensions)")
    fig = Figure(figsize=(FIGURE_WIDTH_IN, 5.0), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(data, cmap=VALUE_CMAP, vmin=-1.0, vmax=1.0, aspect="auto", interpolation="nearest")
    ax.set_title(title, fontsize=FONT_SIZE + 4)
    ax.set_xlabel("dimension i", fontsize=FONT_SIZE + 2)
    ax.set_ylabel("position", fontsize=FONT_SIZE + 2)
    ax.tick_params(labelsize=FONT_SIZE)
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9)
    colorbar.set_label("value", fontsize=FONT_SIZE + 2)
    colorbar.ax.tick_params(labelsize=FONT_SIZE)
    return fig
