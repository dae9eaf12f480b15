"""Figure text stays legible when the learner zooms in: measured in JupyterLab, in a real Chromium.

Browser zoom (Ctrl +) makes every CSS pixel larger: at 200 % a window 1280 device pixels wide is 640 CSS
pixels wide, each CSS pixel two device pixels, and JupyterLab lays itself out in those 640. It is emulated so:
a viewport half as wide and half as high, with a device scale factor of 2. (A device scale factor alone, or
CSS zoom on the page's body, is not the same: the layout keeps its width in CSS pixels.)

Every figure stored in the instructor notebooks is an ``<img>`` (`course.plots.show`) whose full width and
smallest text at that width are stored with it; shown narrower, its text shrinks in proportion, and its style
lets it shrink only down to the width where that text is ``MIN_TEXT_PX``, the notebook's own text size. So a
figure's text as shown follows from its stored numbers and its style, which a test without a browser checks
for every figure, once the browser is seen to honour that style: the notebooks holding the extremes (the
widest and narrowest figures, the largest and smallest ``min-width``) are opened in JupyterLab with the file
browser open, as the README's start command opens it, every figure is scrolled into view and the width it is
shown at is measured: its smallest text, in CSS pixels, must be at least ``MIN_TEXT_PX`` at 100 % and at
200 %. At 200 % the notebook's output area is far narrower than a figure: the figure keeps its text size and
the output area scrolls sideways.

Set ``COURSE_BROWSER_SCREENSHOT`` to a directory to keep a screenshot of a figure at each zoom.
Run alone with ``pytest -o addopts="" -p no:nbval tests/browser/test_figure_zoom.py``.
"""

from __future__ import annotations

import html
import re
import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from browser.test_first_day import keep_screenshot, lab_in_browser, open_notebook, require_browser
from course.plots import MIN_TEXT_PX

REPO = Path(__file__).resolve().parents[2]
# The window of the browser tests, and the same window at 200 % zoom: half the CSS pixels, each two wide.
ZOOMS = {"100%": ({"width": 1280, "height": 1000}, 1), "200%": ({"width": 640, "height": 500}, 2)}
# A figure to keep a screenshot of at each zoom: lesson 08's log-log plot of peak memory.
PICTURED = ("08-cost-of-attention.ipynb", "Log-log plot of peak memory")
_SHOW = """(start) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const img = [...panel.node.querySelectorAll('.jp-OutputArea-output img[alt]')]
    .find((node) => node.getAttribute('alt').startsWith(start));
  img.scrollIntoView({block: 'start'});
  return true;
}"""
ROUNDING_PX = 0.05  # the smallest text size is stored to 0.1 px

# Scroll through the current notebook, so that JupyterLab renders every cell (it renders them as they come
# into view), then bring each figure into view and measure it there (off screen, a cell is not laid out),
# again until every figure named in `wanted` (their alt texts) is measured or 60 s have passed (an
# explorer's figure comes later than the others, once the kernel is connected: 20 s were once too few with the
# other worker training a model): alt text -> [shown width, output area width], in CSS pixels.
_MEASURE = """async (wanted) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const scroller = panel.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node;
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const seen = {};
  const deadline = Date.now() + 60000;
  while (wanted.some((alt) => !(alt in seen)) && Date.now() < deadline) {
    for (let top = 0; top < scroller.scrollHeight; top += scroller.clientHeight) {
      scroller.scrollTop = top;
      await pause(50);
    }
    for (const img of panel.node.querySelectorAll('.jp-OutputArea-output img[alt]')) {
      const alt = img.getAttribute('alt');
      if (alt in seen) continue;
      img.scrollIntoView({block: 'center'});
      await img.decode();
      await pause(50);
      const area = img.closest('.jp-OutputArea-output').getBoundingClientRect();
      seen[alt] = [img.getBoundingClientRect().width, area.width];
    }
    await pause(250);
  }
  return seen;
}"""


# Close every document (none is modified: no dialog). Fired, not awaited, as tests/browser/notebook.py does.
_CLOSE_ALL = """() => { window.jupyterapp.commands.execute('application:close-all'); return true; }"""
_NONE_OPEN = """() => [...window.jupyterapp.shell.widgets('main')].every((widget) => !widget.context)"""


def close_all(lab: Any, page: Any) -> None:
    """Close the notebook and shut its kernel down, and wait until JupyterLab's workspace no longer lists it:
    otherwise the next page load would open it again, with a kernel (both pages share the workspace)."""
    page.evaluate(_CLOSE_ALL)
    page.wait_for_function(_NONE_OPEN, timeout=10_000)
    lab.delete_sessions()
    deadline = time.monotonic() + 10
    while any(key.startswith("notebook:") for key in lab.api("GET", "/lab/api/workspaces/default")["data"]):
        assert time.monotonic() < deadline, "JupyterLab's workspace still lists an open notebook"
        time.sleep(0.1)


def stored_figures(path: Path) -> dict[str, tuple[int, float, str]]:
    """alt text -> (full width in CSS pixels, smallest text at that width, style) of each figure stored in
    `path`."""
    found: dict[str, tuple[int, float, str]] = {}
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            for tag in re.findall(r"<img [^>]*>", output.get("data", {}).get("text/html", "")):
                attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', tag))
                alt = html.unescape(attributes["alt"])
                assert alt not in found, f"{path.name}: two figures with the alt text {alt!r}"
                found[alt] = (
                    int(attributes["width"]),
                    float(attributes["data-smallest-text-px"]),
                    attributes["style"],
                )
    return found


FIGURES = {
    path.name: figures
    for path in sorted((REPO / "notebooks").glob("*.ipynb"))
    if (figures := stored_figures(path))
}
# The notebooks opened in the browser: between them they hold the widest and the narrowest figure and the
# largest and the smallest min-width (checked below), and the figure pictured.
SAMPLE = ("05-masked-self-attention.ipynb", "08-cost-of-attention.ipynb")


STYLE = re.compile(r"max-width: 100%; min-width: (\d+)px; height: auto")


def min_width(style: str) -> int:
    """The narrowest a figure with this style is shown, in CSS pixels (0: the style does not say)."""
    found = STYLE.fullmatch(style)
    return int(found.group(1)) if found else 0


def text_sizes(page: Any, name: str) -> dict[str, tuple[float, float]]:
    """alt text -> (smallest text in CSS pixels as shown, output area width) of every figure of `name`."""
    shown = page.evaluate(_MEASURE, sorted(FIGURES[name]))
    assert sorted(shown) == sorted(FIGURES[name]), f"{name}: not every stored figure was found on the page"
    sizes = {}
    for alt, (width, area) in shown.items():
        full_width, smallest, _style = FIGURES[name][alt]
        sizes[alt] = (smallest * width / full_width, area)
    return sizes


def test_the_notebooks_store_figures_with_their_text_size() -> None:
    assert len(FIGURES) >= 8 and sum(map(len, FIGURES.values())) >= 20


def test_every_stored_figure_keeps_its_text_at_the_notebooks_size_however_narrow_it_is_shown() -> None:
    """Full size, each figure's smallest text is at least MIN_TEXT_PX; its style lets it shrink only to where
    that text is MIN_TEXT_PX (``max-width: 100%`` gives way to ``min-width``): in every notebook, not only
    in the sample the browser test opens."""
    wrong = [
        f"{name}: {alt[:50]!r}: {smallest} px, {style!r}"
        for name, figures in FIGURES.items()
        for alt, (width, smallest, style) in figures.items()
        if smallest < MIN_TEXT_PX - ROUNDING_PX
        or not 0 < min_width(style) <= width
        or smallest * min_width(style) / width < MIN_TEXT_PX - ROUNDING_PX
    ]
    assert wrong == []


def test_the_browser_sample_holds_the_extreme_figures() -> None:
    every = [
        (width, min_width(style)) for figures in FIGURES.values() for width, _, style in figures.values()
    ]
    sampled = [(width, min_width(style)) for name in SAMPLE for width, _, style in FIGURES[name].values()]
    for part in (0, 1):  # the width, the min-width
        assert min(pair[part] for pair in sampled) == min(pair[part] for pair in every)
        assert max(pair[part] for pair in sampled) == max(pair[part] for pair in every)
    assert PICTURED[0] in SAMPLE


@pytest.mark.browser
@pytest.mark.timeout(600, method="signal")
def test_figure_text_is_as_large_as_the_notebooks_at_100_and_200_percent_zoom(tmp_path: Path) -> None:
    require_browser()
    with lab_in_browser(tmp_path) as (lab, page, db):
        shutil.copytree(REPO / "notebooks", tmp_path / "course" / "notebooks")  # with their stored outputs
        pages = {"100%": page}
        viewport, scale = ZOOMS["200%"]
        pages["200%"] = page.context.browser.new_page(viewport=viewport, device_scale_factor=scale)
        assert page.viewport_size == ZOOMS["100%"][0]
        smallest: dict[str, float] = {}
        areas: dict[str, set[int]] = {}
        too_small = []
        for zoom, shown in pages.items():
            for name in SAMPLE:
                open_notebook(lab, shown, f"notebooks/{name}", db)
                for alt, (text_px, area) in text_sizes(shown, name).items():
                    smallest[zoom] = min(smallest.get(zoom, 99.0), text_px)
                    areas.setdefault(zoom, set()).add(round(area))
                    if text_px < MIN_TEXT_PX - ROUNDING_PX:
                        too_small.append(f"{zoom} {name}: {text_px:.1f} px in {alt[:60]!r}")
                if name == PICTURED[0]:
                    shown.evaluate(_SHOW, PICTURED[1])
                    keep_screenshot(shown, f"zoom-{zoom[:-1]}")
                close_all(lab, shown)
        print(f"smallest figure text: {smallest}; output area widths: {areas}")
        assert too_small == []
        assert max(areas["200%"]) < min(areas["100%"]) / 2  # zoomed in: the output area is far narrower


# Scroll through the current notebook so that every cell is rendered and typeset, then, for each display
# equation: does it fit its Markdown cell, or scroll inside it? [the lesson's equations seen, those clipped].
_EQUATIONS = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  const scroller = panel.node.querySelector('.jp-WindowedPanel-outer') || panel.content.node;
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const seen = new Map();
  for (let round = 0; round < 2; round++) {
    for (let top = 0; top < scroller.scrollHeight; top += scroller.clientHeight) {
      scroller.scrollTop = top;
      await pause(100);
      for (const math of panel.node.querySelectorAll('mjx-container[display="true"]')) {
        const cell = math.closest('.jp-RenderedMarkdown');
        const index = panel.content.widgets.findIndex((widget) => widget.node.contains(math));
        const key = index + ':' + [...cell.querySelectorAll('mjx-container[display="true"]')].indexOf(math);
        let box = math.parentElement;
        while (box && box !== cell && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) {
          box = box.parentElement;
        }
        const fits = math.scrollWidth <= cell.getBoundingClientRect().width + 1;
        seen.set(key, fits || (box !== null && box !== cell && cell.contains(box)));
      }
    }
  }
  return [seen.size, [...seen].filter(([, ok]) => !ok).map(([where]) => 'cell ' + where)];
}"""


@pytest.mark.browser
@pytest.mark.timeout(300, method="signal")
def test_every_display_equation_can_be_read_to_its_end_at_200_percent_zoom(tmp_path: Path) -> None:
    """At 200 % zoom with the file browser open, an equation wider than its cell scrolls inside it: none is
    cut off at the cell's edge (JupyterLab clips what overflows a cell)."""
    require_browser()
    with lab_in_browser(tmp_path) as (lab, page, db):
        shutil.copytree(REPO / "notebooks", tmp_path / "course" / "notebooks")
        viewport, scale = ZOOMS["200%"]
        zoomed = page.context.browser.new_page(viewport=viewport, device_scale_factor=scale)
        counted = {}
        for name in (
            "01-similarity-and-softmax.ipynb",
            "03-self-attention.ipynb",
            "04-multi-head-attention.ipynb",
        ):
            open_notebook(lab, zoomed, f"notebooks/{name}", db)
            seen, clipped = zoomed.evaluate(_EQUATIONS)
            assert clipped == [], f"{name}: cut off at 200 %: {clipped}"
            counted[name] = seen
            close_all(lab, zoomed)
        assert min(counted.values()) >= 2, counted  # the equations were there to be measured
