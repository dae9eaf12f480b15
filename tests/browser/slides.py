"""A lesson as RISE slides in Chromium: open its slideshow, step through it by Space, read each state.

Shared by the slide test and ``tools/fit_slides.py`` (it measures each cell's height on a slide). A state is
what the room sees after a key press: the slide on screen (the innermost present ``section``), its height next
to the screen's, each of its cells' heights (by the cell's index in the notebook), and where the fragments it
shows so far lie on the screen.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from browser import chromium
from browser.lab import JupyterLab

__all__ = ["SlideState", "open_slideshow", "projector", "step_through"]

# The present slide and its cells; RISE renders every cell of the notebook, in order, as a .jp-Cell.
_STATE = """() => {
  const present = document.querySelectorAll('.reveal .slides section.present');
  const slide = present[present.length - 1];
  const every = [...document.querySelectorAll('.reveal .slides .jp-Cell')];
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  return {
    where: location.hash,
    height: slide.scrollHeight,
    room: slide.clientHeight,
    screen: window.innerHeight,
    cells: [...slide.querySelectorAll('.jp-Cell')].map(
      (c) => [every.indexOf(c), c.getBoundingClientRect().height]),
    shown: [...slide.querySelectorAll('.fragment.visible')].map(box),
    text: slide.textContent.trim().slice(0, 60),
  };
}"""

# The present slide's figures are decoded (an image not yet loaded has no height).
_SETTLED = """() => {
  const present = document.querySelectorAll('.reveal .slides section.present');
  return [...present[present.length - 1].querySelectorAll('img')].every((i) => i.complete && i.naturalHeight);
}"""


@dataclass(frozen=True)
class SlideState:
    where: str  # the slide's address, e.g. "#/slide-3-1/0" (slide 3, subslide 1, first fragment shown)
    height: float  # the slide's content height, CSS px
    room: float  # the height it has on screen
    screen: float
    cells: tuple[tuple[int, float], ...]  # (index in the notebook, height) of each cell on the slide
    shown: tuple[tuple[float, float], ...]  # (top, bottom) on screen of each fragment shown so far
    text: str  # how the slide begins, to name it in a message


@contextlib.contextmanager
def projector(root: Path, scratch: Path) -> Iterator[tuple[JupyterLab, Any]]:
    """A throw-away JupyterLab serving `root` (its home and progress file in `scratch`) and a Chromium page
    the size of a 1280 x 720 projector; both stopped on the way out."""
    from playwright.sync_api import sync_playwright

    lab = JupyterLab(root, scratch / "home", extra_env={"COURSE_DB": str(scratch / "progress.sqlite3")})
    with sync_playwright() as playwright:
        lab.spawn()
        browser = chromium.launch(playwright)
        try:
            lab.wait_ready()
            yield lab, browser.new_page(viewport={"width": 1280, "height": 720})
        finally:
            browser.close()
            lab.stop()


def open_slideshow(page: Any, url: str) -> None:
    """Open a notebook's RISE slideshow (``/rise/PATH``) and wait until its first slide shows a cell."""
    page.goto(url)
    page.wait_for_function(
        "() => document.querySelector('.reveal .slides section.present .jp-Cell')",
        timeout=60_000,
        polling=200,
    )
    page.wait_for_timeout(1_500)  # MathJax and the figures settle


def step_through(page: Any, *, pause_ms: int = 120, limit: int = 1_000) -> Iterator[SlideState]:
    """Every state of the slideshow from the one on screen, pressing Space between them, to the last."""
    last: tuple[str, int] | None = None
    for _ in range(limit):
        page.wait_for_function(_SETTLED, timeout=10_000, polling=50)
        raw = page.evaluate(_STATE)
        state = SlideState(
            raw["where"],
            raw["height"],
            raw["room"],
            raw["screen"],
            tuple((int(i), float(h)) for i, h in raw["cells"]),
            tuple((float(t), float(b)) for t, b in raw["shown"]),
            raw["text"],
        )
        key = (state.where, len(state.shown))
        if key == last:
            return  # Space did nothing: the end
        last = key
        yield state
        page.keyboard.press("Space")
        page.wait_for_timeout(pause_ms)
    raise AssertionError(f"the slideshow did not end within {limit} key presses")
