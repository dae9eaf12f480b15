"""Every figure the course shows is readable and has a text alternative (issue 7, items 8 and 19).

Readable: a notebook shows a figure inch as ``CSS_PX_PER_INCH`` screen pixels and shrinks a figure wider than
its output area (``NOTEBOOK_WIDTH_PX``, measured in JupyterLab) to fit; the smallest text of every figure, so
shown, is at least the notebook's text size, ``MIN_TEXT_PX``. Checked for the plotting helpers over the range
of inputs the course gives them, and for every figure stored in the notebooks (which nbval re-creates on every
run and compares, the measured text size included).

A text alternative: every stored figure is an ``<img>`` with an ``alt`` that says what it shows, with numbers
(axe-core's image-alt rule), as `course.plots.show` makes it.
"""

from __future__ import annotations

import base64
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pytest
from matplotlib.figure import Figure

from course.plots import (
    CSS_PX_PER_INCH,
    MAX_WIDTH_IN,
    MIN_TEXT_PX,
    NOTEBOOK_WIDTH_PX,
    PNG_DPI,
    attention_heatmap,
    forecast_plot,
    saturation_curve,
    show,
    smallest_text_px,
    variance_curve,
)

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/svg+xml")


def png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def labels(n: int, length: int) -> list[str]:
    return [f"{i:0{length}d}" for i in range(n)]


HELPER_FIGURES = {
    "heatmap 2x2": lambda: attention_heatmap(np.full((2, 2), 0.5)),
    "heatmap 6x6 of words": lambda: attention_heatmap(np.eye(6), ["the", "cat", "sat", "on", "the", "mat"]),
    "heatmap 12x12": lambda: attention_heatmap(np.eye(12)),
    "heatmap 16x16, 10-character labels": lambda: attention_heatmap(
        np.eye(16), labels(16, 10), labels(16, 10), annotate=False
    ),
    "heatmap 3x4, 20-character labels": lambda: attention_heatmap(
        np.full((3, 4), 0.25), labels(3, 20), labels(4, 20)
    ),
    "variance curve": lambda: variance_curve([1, 4, 16, 64, 256, 1024], [1.0] * 6, [1.0] * 6),
    "saturation curve": lambda: saturation_curve([1, 4, 16, 64, 256, 1024], [0.5] * 6, [0.3] * 6, n_keys=16),
    "forecast, 1 day": lambda: forecast_plot([3]),
    "forecast, 7 days": lambda: forecast_plot([3, 0, 12, 45, 7, 1, 0]),
    "forecast, 30 days (the review's)": lambda: forecast_plot([12, 3, 0, 45, 99, 7, 1, 0, 0, 2] * 3),
    "forecast, 30 days of 3-digit counts": lambda: forecast_plot([120, 999, 350] * 10),
    "forecast, 60 days": lambda: forecast_plot([5] * 60),
}


@pytest.mark.parametrize("name", HELPER_FIGURES)
def test_every_helper_figure_fits_the_notebook_with_text_as_large_as_the_notebooks(name: str) -> None:
    fig = HELPER_FIGURES[name]()
    assert fig.get_figwidth() <= MAX_WIDTH_IN
    assert smallest_text_px(fig) >= MIN_TEXT_PX


def test_the_assumed_notebook_width_is_the_measured_one() -> None:
    # JupyterLab 4.6 in Chromium, 1280 x 1000 window, file browser open: an HTML output is 828 px wide.
    assert (NOTEBOOK_WIDTH_PX, CSS_PX_PER_INCH, MIN_TEXT_PX) == (828, 100, 14.0)
    assert MAX_WIDTH_IN == 8.28


def test_smallest_text_px_scales_a_figure_wider_than_the_notebook_down() -> None:
    fig = Figure(figsize=(8.28, 3))
    fig.text(0.1, 0.5, "small", fontsize=10.8)
    fig.text(0.5, 0.5, "large", fontsize=20)
    fig.text(0.8, 0.5, "hidden", fontsize=2, visible=False)
    fig.text(0.9, 0.5, " ", fontsize=2)  # blank: nothing to read
    assert smallest_text_px(fig) == pytest.approx(15.0)  # 10.8 pt at 100 px per inch: 15 px
    fig.set_figwidth(16.56)  # twice the notebook's width: shown at half size
    assert smallest_text_px(fig) == pytest.approx(7.5)
    assert smallest_text_px(fig, width_px=1656) == pytest.approx(15.0)


def test_smallest_text_px_counts_tick_labels_made_only_when_drawn() -> None:
    fig = Figure(figsize=(6, 4))
    ax = fig.add_subplot()
    ax.set_title("title", fontsize=30)
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=7)
    assert smallest_text_px(fig) == pytest.approx(7 * 100 / 72)


def test_smallest_text_px_of_a_figure_without_text() -> None:
    with pytest.raises(ValueError, match=r"^the figure has no text$"):
        smallest_text_px(Figure())


def test_the_reviews_forecast_was_too_small_and_is_not_any_more() -> None:
    # The review's 30-day forecast was drawn 23 inches wide: shown 828 px wide, its smallest text was 7 px.
    fig = forecast_plot([0] * 30)
    assert fig.get_figwidth() == MAX_WIDTH_IN
    assert smallest_text_px(fig) == pytest.approx(11 * 100 / 72)


class _Images(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs))


def images_in(html: str) -> list[dict[str, str | None]]:
    parser = _Images()
    parser.feed(html)
    return parser.images


def stored_figures(path: Path) -> list[tuple[str, dict[str, str | None] | None]]:
    """(where, the <img>'s attributes) for every figure stored in `path`; None for a bare image output."""
    found: list[tuple[str, dict[str, str | None] | None]] = []
    notebook = nbformat.read(path, as_version=4)
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            where = f"{path.name}, cell {index}"
            if any(kind in data for kind in IMAGE_TYPES):
                found.append((where, None))
            found.extend((where, image) for image in images_in(data.get("text/html", "")))
    return found


def test_the_notebooks_store_figures() -> None:
    assert sum(len(stored_figures(path)) for path in NOTEBOOKS) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_stored_figure_has_a_text_alternative_and_readable_text(path: Path) -> None:
    for where, image in stored_figures(path):
        assert image is not None, f"{where}: an image without a text alternative: use course.plots.show"
        alt = image.get("alt") or ""
        assert re.search(r"[0-9]", alt) and len(alt.split()) >= 8, f"{where}: alt {alt!r} says too little"
        width, height = int(image["width"] or 0), int(image["height"] or 0)
        assert 0 < width <= NOTEBOOK_WIDTH_PX, f"{where}: {width} px wide, the notebook {NOTEBOOK_WIDTH_PX}"
        src = image["src"] or ""
        assert src.startswith("data:image/png;base64,"), f"{where}: src {src[:40]!r}"
        png = base64.b64decode(src.removeprefix("data:image/png;base64,"))
        scale = PNG_DPI / CSS_PX_PER_INCH
        drawn = np.array(png_size(png))  # matplotlib truncates a size of 1655.99 pixels to 1655
        assert np.abs(drawn - scale * np.array([width, height])).max() <= 1, f"{where}: PNG size {drawn}"
        text_px = float(image["data-smallest-text-px"] or 0)
        assert text_px >= MIN_TEXT_PX, f"{where}: text {text_px} px, smaller than the notebook's"
        # Zoomed in, the output area narrows: the figure shrinks to fit only down to its min-width, where its
        # text is still the notebook's size (the size is stored to 0.1 px: 0.05 px of rounding).
        style = dict(part.split(": ") for part in (image["style"] or "").split("; "))
        narrowest = int(style.get("min-width", "0px").removesuffix("px"))
        assert text_px * narrowest / width >= MIN_TEXT_PX - 0.05, f"{where}: shrinks to {narrowest} px"


def test_show_gives_an_img_with_the_alt_and_the_alt_as_text() -> None:
    fig = forecast_plot([1, 2, 3])
    shown = show(fig, '3 days:  1, 2 and 3 reviews <"due">\n& more')
    alt = '3 days: 1, 2 and 3 reviews <"due"> & more'
    assert shown.alt == alt and repr(shown) == alt
    bundle = shown._repr_mimebundle_()
    assert sorted(bundle) == ["text/html", "text/plain"] and bundle["text/plain"] == alt
    (image,) = images_in(bundle["text/html"])
    assert image["alt"] == alt
    assert (image["width"], image["height"]) == ("600", "500")
    # Shrunk to fit its output area down to 549 px, where its smallest text, 15.3 px, would be 14 px (600 x
    # 14 / 15.28 = 549.8, rounded up); no narrower, however far the learner zooms in.
    assert image["style"] == "max-width: 100%; min-width: 550px; height: auto"
    assert image["data-smallest-text-px"] == "15.3" and shown.min_width_px == 550
    png = base64.b64decode((image["src"] or "").removeprefix("data:image/png;base64,"))
    assert png == shown.png and png_size(png) == (1200, 1000)
    assert '&lt;&quot;due&quot;&gt; &amp; more"' in bundle["text/html"]


def test_a_figure_whose_text_was_not_measured_is_never_shrunk() -> None:
    shown = show(forecast_plot([1, 2, 3]), "3 days: 1, 2 and 3 reviews", measure=False)
    assert shown.smallest_text_px is None and shown.min_width_px == shown.width_px == 600
    assert 'style="max-width: 100%; min-width: 600px; height: auto"' in shown.html()
    assert "data-smallest-text-px" not in shown.html()


def test_show_refuses_a_figure_without_a_description() -> None:
    with pytest.raises(ValueError, match=r"^alt must say what the figure shows$"):
        show(forecast_plot([1]), " \n ")


def sanitizers() -> list[tuple[str, str]]:
    lines = [line for line in (REPO / "tests" / "nbval_sanitize.cfg").read_text().splitlines() if line]
    pairs = [line for line in lines if not line.startswith("#")]
    regexes = [line.removeprefix("regex: ") for line in pairs[::2]]
    replaces = [line.removeprefix("replace: ") for line in pairs[1::2]]
    return list(zip(regexes, replaces, strict=True))


def sanitize(text: str) -> str:
    for regex, replace in sanitizers():
        text = re.sub(regex, replace, text)
    return text


def test_nbval_compares_a_shown_figure_without_its_pixels() -> None:
    one = show(forecast_plot([1, 2, 3]), "the same words").html()
    other = show(forecast_plot([3, 2, 1]), "the same words").html()
    assert one != other and sanitize(one) == sanitize(other)
    assert "base64,PNG" in sanitize(one) and 'alt="the same words"' in sanitize(one)
    assert sanitize(show(forecast_plot([1, 2, 3]), "other words").html()) != sanitize(one)
