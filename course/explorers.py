"""Explorers: figures a learner changes with a slider or a menu, one per idea worth playing with.

- `temperature_explorer` (lesson 01): the softmax of a few scores as the temperature moves.
- `scaling_explorer` (lesson 02): one query's weights over a few keys, with and without ÷√d_k, as d_k grows.
- `heads_explorer` (lesson 04): the weights of each head of a layer, and their average.
- `mask_explorer` (lesson 05): the causal and padding masks, with fewer queries than keys, in both alignments.

Each ``*_explorer`` returns an `Explorer` (a live widget in JupyterLab, the figure of its first settings
elsewhere). Each ``*_figure`` draws one state and returns it with its alt text and a brief of what changed
(a `Drawn`): the explorer's drawing, usable (and tested) without widgets.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from numpy.typing import ArrayLike

from course.attention import causal_mask, padding_mask, softmax
from course.plots import FONT_SIZE, MAX_WIDTH_IN, OKABE_ITO, attention_heatmap
from course.widgets import Drawn, Explorer

__all__ = [
    "AVERAGE",
    "D_K_CHOICES",
    "MASKS",
    "heads_explorer",
    "heads_figure",
    "mask_allowed",
    "mask_explorer",
    "mask_figure",
    "scaling_explorer",
    "scaling_figure",
    "scaling_scores",
    "temperature_explorer",
    "temperature_figure",
]

D_K_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
AVERAGE = "average of the heads"
MASKS = ("none", "causal", "padding", "causal + padding")
_WIDE = {"description_width": "initial"}


def _bars(ax: Axes, title: str, ylabel: str) -> None:
    ax.set_title(title, fontsize=FONT_SIZE + 3)
    ax.set_ylabel(ylabel, fontsize=FONT_SIZE + 2)
    ax.set_ylim(0, 1.12)
    ax.tick_params(labelsize=FONT_SIZE)
    ax.grid(True, axis="y", alpha=0.3)


def _numbers(values: np.ndarray) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


# -- lesson 01: temperature --------------------------------------------------------------------------------
def temperature_figure(scores: ArrayLike, temperature: float, labels: Sequence[str] | None = None) -> Drawn:
    """Bars of softmax(scores / temperature), each with its weight, and the uniform weight 1/n dashed."""
    x = np.asarray(scores, dtype=float)
    names = [f"score {s:g}" for s in x] if labels is None else list(labels)
    weights = softmax(x, temperature=temperature)  # (n,)
    fig = Figure(figsize=(7.5, 4.6), layout="constrained")
    ax = fig.add_subplot()
    bars = ax.bar(names, weights, color=OKABE_ITO["blue"])
    ax.bar_label(bars, labels=[f"{w:.2f}" for w in weights], fontsize=FONT_SIZE, padding=3)
    ax.axhline(1 / len(x), color="black", linestyle="--", linewidth=1.5, label=f"uniform, 1/{len(x)}")
    ax.legend(fontsize=FONT_SIZE, loc="upper right")
    _bars(ax, f"softmax(scores / τ), τ = {temperature:.2f}", "weight")
    alt = (
        f"Bar chart of the softmax of the scores {', '.join(f'{s:g}' for s in x)} at temperature "
        f"{temperature:.2f}: weights {_numbers(weights)}. The largest is {weights.max():.2f}; uniform would "
        f"be {1 / len(x):.2f}."
    )
    return Drawn(fig, alt, f"τ = {temperature:.2f}: weights {_numbers(weights)}.")


def temperature_explorer(scores: ArrayLike, labels: Sequence[str] | None = None) -> Explorer:
    """The softmax of `scores` at a temperature from 0.05 to 20 (a log slider, starting at 1)."""
    slider = widgets.FloatLogSlider(
        value=1.0, base=10, min=-1.3, max=1.3, step=0.05, description="temperature τ",
        continuous_update=False, readout_format=".2f", style=_WIDE,
    )  # fmt: skip

    def draw(temperature: float) -> Drawn:
        return temperature_figure(scores, temperature, labels)

    return Explorer({"temperature": slider}, draw, label="Softmax temperature explorer")


# -- lesson 02: scaling ------------------------------------------------------------------------------------
def scaling_scores(d_k: int, n_keys: int = 8, seed: int = 0) -> np.ndarray:
    """The unscaled scores k_j·q of one query against `n_keys` keys, all entries standard normal, (n_keys,).

    Each width d_k draws its own vectors, from a generator seeded by (seed, d_k): the same d_k always gives
    the same scores.
    """
    rng = np.random.default_rng([seed, d_k])
    q = rng.standard_normal(d_k)  # (d_k,)
    keys = rng.standard_normal((n_keys, d_k))  # (n_keys, d_k)
    return keys @ q  # (n_keys,)


def scaling_figure(d_k: int, n_keys: int = 8, seed: int = 0) -> Drawn:
    """Side-by-side bars per key: softmax of the raw scores and of the scores divided by √d_k."""
    scores = scaling_scores(d_k, n_keys, seed)
    unscaled, scaled = softmax(scores), softmax(scores / np.sqrt(d_k))  # (n_keys,) each
    fig = Figure(figsize=(MAX_WIDTH_IN, 4.6), layout="constrained")
    ax = fig.add_subplot()
    keys = np.arange(n_keys)
    ax.bar(keys - 0.2, unscaled, width=0.4, color=OKABE_ITO["vermillion"], label="softmax(q·k)")
    ax.bar(keys + 0.2, scaled, width=0.4, color=OKABE_ITO["blue"], label="softmax(q·k / √d_k)")
    ax.axhline(1 / n_keys, color="black", linestyle="--", linewidth=1.5, label=f"uniform, 1/{n_keys}")
    ax.set_xticks(keys, [str(j) for j in keys])
    ax.set_xlabel("key", fontsize=FONT_SIZE + 2)
    ax.legend(fontsize=FONT_SIZE - 1, loc="upper left", ncols=3)
    _bars(ax, f"One query, {n_keys} keys, d_k = {d_k}", "weight")
    ax.set_ylim(0, 1.25)
    spread = scores.std()
    alt = (
        f"Bar chart of one query's weights over {n_keys} keys with d_k = {d_k} (random vectors, standard "
        f"normal entries). Unscaled, the scores have standard deviation {spread:.2f} and the largest "
        f"weight is {unscaled.max():.3f}; divided by √d_k, standard deviation {spread / np.sqrt(d_k):.2f} "
        f"and largest weight {scaled.max():.3f}."
    )
    brief = f"d_k = {d_k}: largest weight {unscaled.max():.3f} unscaled, {scaled.max():.3f} divided by √d_k."
    return Drawn(fig, alt, brief)


def scaling_explorer(n_keys: int = 8, seed: int = 0) -> Explorer:
    """`scaling_figure` with d_k chosen on a slider of powers of 2, from 1 to 1024 (starting at 1)."""
    slider = widgets.SelectionSlider(
        options=list(D_K_CHOICES), value=1, description="d_k", continuous_update=False, style=_WIDE
    )

    def draw(d_k: int) -> Drawn:
        return scaling_figure(d_k, n_keys, seed)

    return Explorer({"d_k": slider}, draw, label="Scaling explorer")


# -- lesson 04: heads --------------------------------------------------------------------------------------
def heads_figure(weights: ArrayLike, labels: Sequence[str], names: Sequence[str], head: str) -> Drawn:
    """The heatmap of one head's (T, T) weights, or of their average over the heads (`AVERAGE`)."""
    stack = np.asarray(weights, dtype=float)  # (h, T, T)
    if stack.ndim != 3 or len(names) != stack.shape[0]:
        raise ValueError(f"need one name per head: {len(names)} names for weights of shape {stack.shape}")
    shown = stack.mean(axis=0) if head == AVERAGE else stack[list(names).index(head)]  # (T, T)
    fig = Figure(figsize=(MAX_WIDTH_IN, 6.2), layout="constrained")
    attention_heatmap(shown, labels, labels, fig.add_subplot(), title=head, annotate=True, fmt=".1f")
    top = shown.argmax(axis=-1)  # (T,)
    reads = "; ".join(f"{labels[i]} → {labels[j]} ({shown[i, j]:.2f})" for i, j in enumerate(top))
    alt = f"Heatmap of the attention weights of {head}. Each query's largest weight: {reads}."
    brief = f"{head}: " + "; ".join(f"{labels[i]} → {labels[j]}" for i, j in enumerate(top)) + "."
    return Drawn(fig, alt, brief)


def heads_explorer(weights: ArrayLike, labels: Sequence[str], names: Sequence[str]) -> Explorer:
    """A menu of the heads named `names` (and their average) over `weights` (h, T, T); starts at head 0."""
    menu = widgets.Dropdown(options=[*names, AVERAGE], value=names[0], description="show", style=_WIDE)

    def draw(head: str) -> Drawn:
        return heads_figure(weights, labels, names, head)

    return Explorer({"head": menu}, draw, label="Heads explorer")


# -- lesson 05: masks --------------------------------------------------------------------------------------
def mask_allowed(mask: str, t_q: int, t_k: int, align: str, length: int) -> np.ndarray:
    """The (t_q, t_k) booleans, True = may attend, for the queries at the last t_q of t_k positions."""
    allowed = np.ones((t_q, t_k), dtype=bool)
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {', '.join(MASKS)}; got {mask!r}")
    if "causal" in mask:
        allowed &= causal_mask(t_q, t_k, align=align)  # type: ignore[arg-type]
    if "padding" in mask:
        allowed &= padding_mask([length], t_k)[0][None, :]  # (1, t_k): the real keys
    return allowed


def mask_figure(tokens: Sequence[str], mask: str, t_q: int, align: str, length: int, seed: int = 0) -> Drawn:
    """The weights of the last `t_q` tokens (queries) over all of `tokens` (keys) under the chosen mask.

    Scores are random (seeded); keys from position `length` on are padding ("<pad>") when the mask pads.
    """
    t_k = len(tokens)
    names = [
        f"{p} {'<pad>' if 'padding' in mask and p >= length else tokens[p]}" for p in range(t_k)
    ]  # "position word"
    scores = np.random.default_rng(seed).standard_normal((t_k, t_k))[t_k - t_q :]  # (t_q, t_k)
    allowed = mask_allowed(mask, t_q, t_k, align, length)
    masked_scores = np.where(allowed, scores, -np.inf)
    weights = softmax(masked_scores)  # (t_q, t_k): an all-masked row would be zeros
    fig = Figure(figsize=(MAX_WIDTH_IN, max(3.6, 0.55 * t_q + 2.4)), layout="constrained")  # rows: queries
    title = f"{mask} mask" + (f", {align}" if "causal" in mask and t_q < t_k else "")
    attention_heatmap(weights, names[t_k - t_q :], names, fig.add_subplot(), title=title, allowed=allowed)
    rows = "; ".join(
        f"{names[t_k - t_q + i]} sees {_positions(np.flatnonzero(allowed[i]))}" for i in range(t_q)
    )
    alt = (
        f"Heatmap of {t_q} quer{'y' if t_q == 1 else 'ies'} (the last {t_q} of {t_k} positions) over {t_k} "
        f"keys, {title}: "
        f"{int(allowed.sum())} of {allowed.size} pairs allowed, masked cells grey. {rows}."
    )
    return Drawn(fig, alt, f"{title}: {int(allowed.sum())} of {allowed.size} pairs allowed.")


def _positions(keys: np.ndarray) -> str:
    if keys.size == 0:
        return "no key"
    if keys.size == keys[-1] - keys[0] + 1 and keys.size > 1:
        return f"keys {keys[0]}-{keys[-1]}"
    return ("key " if keys.size == 1 else "keys ") + ", ".join(str(k) for k in keys)


def mask_explorer(tokens: Sequence[str], seed: int = 0) -> Explorer:
    """`mask_figure` with menus for the mask and the alignment, sliders for T_q and the real length."""
    t_k = len(tokens)
    controls: dict[str, widgets.ValueWidget] = {
        "mask": widgets.Dropdown(options=list(MASKS), value="causal", description="mask", style=_WIDE),
        "t_q": widgets.IntSlider(
            value=t_k, min=1, max=t_k, description="queries T_q", continuous_update=False, style=_WIDE
        ),
        "align": widgets.ToggleButtons(
            options=["bottom-right", "top-left"], value="bottom-right", description="causal alignment",
            style=_WIDE,
        ),
        "length": widgets.IntSlider(
            value=t_k, min=1, max=t_k, description="real tokens", continuous_update=False, style=_WIDE
        ),
    }  # fmt: skip

    def draw(mask: str, t_q: int, align: str, length: int) -> Drawn:
        return mask_figure(tokens, mask, t_q, align, length, seed)

    return Explorer(controls, draw, label="Mask explorer")
