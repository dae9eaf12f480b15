"""Figures for the lessons: attention heatmaps, the variance and saturation curves, and the review forecast.

Every function draws on a new :class:`matplotlib.figure.Figure` (made without pyplot, so nothing is shown
or kept alive behind the lesson's back and any backend works, Agg included), or on the ``ax`` it is given,
and returns the Figure. It never calls ``plt.show``: end a notebook cell with ``show(fig, alt)`` to display
the figure with a text alternative (``alt``: what the figure shows, in words and numbers, for screen readers
and text-only front ends). The numbers drawn can be read back from the Figure's artists
(``fig.axes[0].images[0].get_array()``, ``line.get_ydata()``, ``bar.get_height()``) and so asserted in a cell
beside the plot.

Sizes: a notebook shows a figure inch as ``CSS_PX_PER_INCH`` screen pixels, and shrinks a figure wider than
its output area (``NOTEBOOK_WIDTH_PX``) to fit. Every figure here is at most ``MAX_WIDTH_IN`` wide, so it is
shown at full size, and its smallest text (``FONT_SIZE - 2`` points) is at least ``MIN_TEXT_PX``, the
notebook's own text size; `smallest_text_px` measures that for any figure. A learner who zooms in (Ctrl +)
narrows the output area in CSS pixels: `show` lets a figure shrink to fit only down to the width at which its
smallest text is ``MIN_TEXT_PX`` (``min-width``), and the output area scrolls sideways beyond that, so that
figure text grows with the zoom like the notebook's own (legible at 200 %).

Colours are colour-blind safe: the ``cividis`` colormap for heatmaps and the Okabe-Ito palette for lines and
bars.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator, MultipleLocator
from numpy.typing import ArrayLike

__all__ = [
    "CSS_PX_PER_INCH",
    "FONT_SIZE",
    "FORECAST_LABEL_EVERY_DAY",
    "MAX_WIDTH_IN",
    "MIN_TEXT_PX",
    "NOTEBOOK_WIDTH_PX",
    "OKABE_ITO",
    "PNG_DPI",
    "ShownFigure",
    "attention_heatmap",
    "attention_heatmaps",
    "forecast_plot",
    "saturation_curve",
    "show",
    "smallest_text_px",
    "variance_curve",
]

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
}
# Measured in JupyterLab 4.6 in Chromium, in a 1280-px-wide window with the file browser open: the width an
# HTML output (`show`) has in a notebook, its 848-px output area less 20 px of padding (1080 px with the file
# browser closed). A wider image is shrunk to fit it.
NOTEBOOK_WIDTH_PX = 828
CSS_PX_PER_INCH = 100  # a figure inch on screen, as matplotlib's inline backend shows it (figure.dpi 100)
MIN_TEXT_PX = 14.0  # the notebook's text size: no text in a figure is smaller
MAX_WIDTH_IN = NOTEBOOK_WIDTH_PX / CSS_PX_PER_INCH  # 8.28 in: the widest figure shown at full size
PNG_DPI = 2 * CSS_PX_PER_INCH  # pixels drawn per inch: twice those shown, sharp on high-density screens
FONT_SIZE = 13  # points (18 px), tick labels; cell and bar labels 2 less (15.3 px), axis labels, titles more
HEATMAP_CMAP = "cividis"
MASKED_COLOUR = "#e6e6e6"  # a masked cell: light grey, hatched (cividis has no grey this light)
_PX_PER_POINT = CSS_PX_PER_INCH / 72


def _new_axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _style(ax: Axes, title: str, xlabel: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=FONT_SIZE + 4)
    ax.set_xlabel(xlabel, fontsize=FONT_SIZE + 2)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE + 2)
    ax.tick_params(labelsize=FONT_SIZE)


def attention_heatmap(
    weights: ArrayLike,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    *,
    title: str = "Attention weights",
    annotate: bool = True,
    fmt: str = ".2f",
    allowed: ArrayLike | None = None,
    colorbar: bool = True,
) -> Figure:
    """Draw a (T_q, T_k) attention-weight matrix: row i is what query i attends to, column j is key j.

    The colour scale is fixed to [0, 1] (weights are probabilities), so heatmaps can be compared with each
    other. ``annotate`` writes each weight in its cell (formatted with ``fmt``), in black on light cells and
    white on dark ones. Labels default to the positions 0, 1, ...; the image's data is ``weights`` itself.
    ``allowed`` (T_q, T_k) booleans, True = may attend: every other cell is drawn masked (light grey, hatched)
    and gets no number, so that a masked key does not look like a tiny allowed weight. ``colorbar=False``
    leaves the colour scale out (`attention_heatmaps` draws one for all its panels).
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights must be a (T_q, T_k) matrix, got shape {w.shape}")
    t_q, t_k = w.shape
    query_labels = [str(i) for i in range(t_q)] if query_labels is None else list(query_labels)
    key_labels = [str(j) for j in range(t_k)] if key_labels is None else list(key_labels)
    if len(query_labels) != t_q or len(key_labels) != t_k:
        raise ValueError(
            f"got {len(query_labels)} query labels and {len(key_labels)} key labels "
            f"for weights of shape {w.shape}"
        )
    # Room for long labels: the query labels widen the figure, rotated key labels make it taller.
    long_queries = max(0, max(map(len, query_labels), default=0) - 6)
    long_keys = max(0, max(map(len, key_labels), default=0) - 6)
    # A matrix wider than the notebook is drawn smaller, its height by the same factor: cells stay square
    # and the figure holds no band of empty space above and below them.
    natural = max(5.5, 0.6 * t_k + 3.0) + 0.12 * long_queries
    width = min(MAX_WIDTH_IN, natural)
    height = max(4.0, (max(4.0, 0.6 * t_q + 2.0) + 0.09 * long_keys) * width / natural)
    fig, ax = _new_axes(ax, (width, height))
    image = ax.imshow(w, cmap=HEATMAP_CMAP, vmin=0.0, vmax=1.0)
    masked = _masked_cells(allowed, w.shape)
    if masked.any():  # one patch for every masked cell: a patch per cell took seconds to draw at 44 x 44
        ax.add_patch(
            PathPatch(_cells_path(masked), facecolor=MASKED_COLOUR, edgecolor="grey", hatch="//", lw=0)
        )
    if max(map(len, key_labels), default=0) > 3:  # slanted, each label ending at its column
        ax.set_xticks(range(t_k), key_labels, rotation=45, ha="right", rotation_mode="anchor")
    else:
        ax.set_xticks(range(t_k), key_labels)
    ax.set_yticks(range(t_q), query_labels)
    _style(ax, title, "key (attended to)", "query (attending)")
    if colorbar:
        _weight_colorbar(fig, image, ax)
    if annotate:
        for i in range(t_q):
            for j in range(t_k):
                if masked[i, j]:
                    continue
                colour = "black" if w[i, j] >= 0.5 else "white"
                ax.text(
                    j, i, format(w[i, j], fmt), ha="center", va="center", color=colour, fontsize=FONT_SIZE - 2
                )
    return fig


def attention_heatmaps(
    weights: ArrayLike,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    titles: Sequence[str],
    annotate: bool = False,
    fmt: str = ".2f",
    allowed: ArrayLike | None = None,
    figsize: tuple[float, float] = (MAX_WIDTH_IN, 3.9),
) -> Figure:
    """Draw a stack of (T_q, T_k) weight matrices, (n, T_q, T_k), side by side with one shared colour scale.

    Panel i shows ``weights[i]`` titled ``titles[i]``, as `attention_heatmap` draws it; every panel uses the
    same scale, [0, 1], so one colorbar, right of the last panel, serves them all. The query labels are
    written on the first panel only (the rows are the same queries in every panel), the key axis's name once
    below all panels; keep titles short (a line break fits a second line). ``allowed`` is one
    (T_q, T_k) mask for every panel.
    """
    stack = np.asarray(weights, dtype=float)
    if stack.ndim != 3:
        raise ValueError(f"weights must be a stack (n, T_q, T_k) of weight matrices, got shape {stack.shape}")
    if len(titles) != stack.shape[0]:
        raise ValueError(f"got {len(titles)} titles for {stack.shape[0]} weight matrices")
    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, stack.shape[0], sharey=True, squeeze=False)[0]
    for i, (ax, title) in enumerate(zip(axes, titles, strict=True)):
        attention_heatmap(
            stack[i],
            query_labels,
            key_labels,
            ax,
            title=title,
            annotate=annotate,
            fmt=fmt,
            allowed=allowed,
            colorbar=False,
        )
        ax.set_title(title, fontsize=FONT_SIZE + 2)
        ax.set_xlabel("")
        if i:
            ax.set_ylabel("")
            ax.tick_params(labelleft=False)
    fig.supxlabel("key (attended to)", fontsize=FONT_SIZE + 2)
    _weight_colorbar(fig, axes[-1].images[0], list(axes))
    return fig


def _weight_colorbar(fig: Figure, image: Any, ax: Axes | list[Axes]) -> None:
    colorbar = fig.colorbar(image, ax=ax, shrink=0.9)
    colorbar.set_label("weight", fontsize=FONT_SIZE + 2)
    colorbar.ax.tick_params(labelsize=FONT_SIZE)


def _cells_path(cells: np.ndarray[Any, np.dtype[np.bool_]]) -> Path:
    """One path of the unit squares centred on the True cells (row i, column j at x = j, y = i)."""
    rows, columns = np.nonzero(cells)
    corners = np.array([(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (-0.5, -0.5)])  # (5, 2)
    vertices = np.stack([columns, rows], axis=-1)[:, None, :] + corners  # (cells, 5, 2)
    square = [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]
    return Path(vertices.reshape(-1, 2), square * len(rows))


def _masked_cells(allowed: ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """The cells to draw masked: where `allowed` is False (none when it is None)."""
    if allowed is None:
        return np.zeros(shape, dtype=bool)
    mask = np.asarray(allowed)
    if mask.shape != shape or mask.dtype != np.bool_:
        raise ValueError(
            f"allowed must be booleans of the weights' shape {shape}, got {mask.dtype} {mask.shape}"
        )
    return ~mask


def _curves(
    x: ArrayLike,
    series: Sequence[tuple[ArrayLike, str, str, str, str]],
    ax: Axes | None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool,
) -> Figure:
    """Lines over a log-2 x axis; each series is (y, label, Okabe-Ito colour name, marker, line style)."""
    fig, ax = _new_axes(ax, (8.0, 5.5))
    xs = np.asarray(x, dtype=float)
    for y, label, colour, marker, style in series:
        ys = np.asarray(y, dtype=float)
        if ys.shape != xs.shape:
            raise ValueError(
                f"{label!r} has {ys.shape[0] if ys.ndim else 0} values for {xs.shape[0]} values of x"
            )
        ax.plot(
            xs, ys, style, marker=marker, markersize=9, linewidth=2.5, color=OKABE_ITO[colour], label=label
        )
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log", base=2)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.set_xticks(xs, [f"{v:g}" for v in xs])
    ax.minorticks_off()
    ax.grid(True, alpha=0.3)
    _style(ax, title, xlabel, ylabel)
    ax.legend(fontsize=FONT_SIZE)
    return fig


def variance_curve(
    d_ks: ArrayLike,
    variances_unscaled: ArrayLike,
    variances_scaled: ArrayLike,
    ax: Axes | None = None,
    *,
    title: str = "Variance of the dot product q·k",
) -> Figure:
    """Measured variance of q·k against d_k, unscaled (grows like d_k) and divided by √d_k (stays near 1).

    Both axes are logarithmic (base 2); the lines are, in order: unscaled, scaled, and the references y = d_k
    (dashed) and y = 1 (dotted).
    """
    d = np.asarray(d_ks, dtype=float)
    return _curves(
        d,
        [
            (variances_unscaled, "q·k", "vermillion", "o", "-"),
            (variances_scaled, "q·k / √d_k", "blue", "s", "-"),
            (d, "d_k (theory)", "black", "", "--"),
            (np.ones_like(d), "1 (theory)", "black", "", ":"),
        ],
        ax,
        title=title,
        xlabel="d_k (key dimension)",
        ylabel="variance",
        logy=True,
    )


def saturation_curve(
    d_ks: ArrayLike,
    unscaled: ArrayLike,
    scaled: ArrayLike,
    ax: Axes | None = None,
    *,
    ylabel: str = "largest softmax weight",
    title: str = "Softmax saturation",
    n_keys: int | None = None,
    logy: bool = False,
) -> Figure:
    """A measure of saturation against d_k, without and with the 1/√d_k scaling.

    By default the y axis is the largest softmax weight (it tends to 1 without scaling); with ``ylabel`` and
    ``logy`` the same plot shows the gradient norm instead. ``n_keys`` adds the uniform weight 1/n_keys as a
    dashed reference line (drawn third).
    """
    d = np.asarray(d_ks, dtype=float)
    series = [(unscaled, "QKᵀ (unscaled)", "vermillion", "o", "-"), (scaled, "QKᵀ / √d_k", "blue", "s", "-")]
    if n_keys is not None:
        series.append((np.full_like(d, 1.0 / n_keys), f"uniform, 1/{n_keys}", "black", "", "--"))
    fig = _curves(d, series, ax, title=title, xlabel="d_k (key dimension)", ylabel=ylabel, logy=logy)
    if not logy and ylabel == "largest softmax weight":
        (ax or fig.axes[0]).set_ylim(0.0, 1.05)
    return fig


FORECAST_LABEL_EVERY_DAY = 14  # up to this many days, every bar is labelled with its day


def forecast_plot(
    counts: Sequence[int],
    start_label: str = "today",
    ax: Axes | None = None,
    *,
    title: str = "Reviews due",
) -> Figure:
    """Bar chart of the number of reviews due on each of the coming days, ``counts[0]`` on the first.

    The first bar is labelled ``start_label`` and the next ones +1, +2, ... (days later); each bar carries its
    count. Over ``FORECAST_LABEL_EVERY_DAY`` days, only every 7th day is labelled (+7, +14, ...), and counts
    of 100 or more are written upright, so that the figure fits a notebook's width with text no smaller than
    the notebook's.
    """
    values = np.asarray(counts, dtype=int)
    days = range(len(values))
    labels = [start_label] + [f"+{i}" for i in range(1, len(values))]
    fig, ax = _new_axes(ax, (min(MAX_WIDTH_IN, max(6.0, 0.55 * len(values) + 2.0)), 5.0))
    bars = ax.bar(days, values, color=OKABE_ITO["blue"], width=0.7)
    top = max(1, int(values.max(initial=0)))
    many = len(values) > FORECAST_LABEL_EVERY_DAY
    # Many days: only every 7th day is labelled (with a tick for each day), and counts of 3 digits or more,
    # wider than their bars, are written upright.
    upright = many and top >= 100
    ax.bar_label(bars, fontsize=FONT_SIZE - 2, padding=2, rotation=90 if upright else 0)
    step = 7 if many else 1
    ax.set_xticks(days[::step], labels[::step])
    if many:
        ax.xaxis.set_minor_locator(MultipleLocator(1))
    ax.set_ylim(0, top * (1.3 if upright else 1.15))
    locator = ax.yaxis.get_major_locator()
    assert isinstance(locator, MaxNLocator)  # matplotlib's default, AutoLocator
    locator.set_params(integer=True)
    _style(ax, title, "day", "reviews due")
    return fig


def _text_visible(text: Text) -> bool:
    return bool(text.get_visible() and text.get_text().strip())


def smallest_text_px(fig: Figure, width_px: float = NOTEBOOK_WIDTH_PX) -> float:
    """The size, in screen pixels, of the smallest visible text of `fig` as a notebook shows it.

    A notebook shows one figure inch as ``CSS_PX_PER_INCH`` pixels and shrinks a figure wider than its output
    area (`width_px`) to fit, text included. Raises ValueError for a figure without text.
    """
    fig.draw_without_rendering()  # makes the tick labels that only drawing creates
    sizes = [float(t.get_fontsize()) for t in fig.findobj(Text) if _text_visible(t)]
    if not sizes:
        raise ValueError("the figure has no text")
    shown_width = fig.get_figwidth() * CSS_PX_PER_INCH
    return float(min(sizes) * _PX_PER_POINT * min(1.0, width_px / shown_width))


@dataclass(frozen=True)
class ShownFigure:
    """A figure drawn as a PNG, shown in a notebook as an ``<img>`` with a text alternative.

    ``width_px`` and ``height_px``: the size shown, in screen pixels (the PNG has ``PNG_DPI /
    CSS_PX_PER_INCH`` times as many); ``smallest_text_px``: see `smallest_text_px` (None: not measured);
    ``min_width_px``: the narrowest it may be shrunk to fit its output area (see the module's "Sizes").
    Front ends that show only text show ``alt``.
    """

    png: bytes
    alt: str
    width_px: int
    height_px: int
    smallest_text_px: float | None

    @property
    def min_width_px(self) -> int:
        """The narrowest the figure is shown: where its smallest text is ``MIN_TEXT_PX`` (its full width when
        the text was not measured)."""
        if self.smallest_text_px is None:
            return self.width_px
        return min(self.width_px, math.ceil(self.width_px * MIN_TEXT_PX / self.smallest_text_px))

    def html(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        measured = (
            "" if self.smallest_text_px is None else f' data-smallest-text-px="{self.smallest_text_px:.1f}"'
        )
        style = f"max-width: 100%; min-width: {self.min_width_px}px; height: auto"
        return (
            f'<img alt="{html.escape(self.alt)}" width="{self.width_px}" height="{self.height_px}" '
            f'style="{style}"{measured} src="data:image/png;base64,{data}">'
        )

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html(), "text/plain": self.alt}

    def __repr__(self) -> str:
        return self.alt


def show(fig: Figure, alt: str, *, measure: bool = True) -> ShownFigure:
    """`fig` for display at the end of a notebook cell, with `alt` as its text alternative.

    `alt` says in a sentence or two what the figure shows, with its key numbers: it is what a screen reader
    reads instead of the image, and what a text-only front end prints. ``measure=False`` skips measuring
    the smallest text (a second layout of the figure), for figures redrawn live by an explorer.
    """
    alt = " ".join(alt.split())
    if not alt:
        raise ValueError("alt must say what the figure shows")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=PNG_DPI, metadata={"Software": None})
    width_in, height_in = fig.get_size_inches()
    return ShownFigure(
        png=buffer.getvalue(),
        alt=alt,
        width_px=round(width_in * CSS_PX_PER_INCH),
        height_px=round(height_in * CSS_PX_PER_INCH),
        smallest_text_px=smallest_text_px(fig) if measure else None,
    )
