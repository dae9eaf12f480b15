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

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # the browser tests skip (or fail on CI) before they step through anything
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

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

# Has the slide on screen, or its count of fragments shown, changed from [address, count]?
_MOVED = """([where, shown]) => {
  const present = document.querySelectorAll('.reveal .slides section.present');
  const slide = present[present.length - 1];
  return location.hash !== where || slide.querySelectorAll('.fragment.visible').length !== shown;
}"""

# Two animation frames: the layout of the state just reached is done.
_FRAMES = """() => new Promise(
  (done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"""

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


def step_through(page: Any, *, settle_ms: int = 2_000, limit: int = 1_000) -> Iterator[SlideState]:
    """Every state of the slideshow from the one on screen, pressing Space between them, to the last.

    After each press it waits until the slide's address or its count of fragments shown changes (the lessons
    have no slide transition: ``RISE_SETTINGS`` of ``course.publishing``), then two animation frames, for the
    layout; a press that changes nothing within `settle_ms` is the end."""
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
        last = (state.where, len(state.shown))
        yield state
        page.keyboard.press("Space")
        try:
            page.wait_for_function(_MOVED, arg=list(last), timeout=settle_ms, polling="raf")
        except PlaywrightTimeout:
            return  # Space did nothing: the end
        page.evaluate(_FRAMES)
    raise AssertionError(f"the slideshow did not end within {limit} key presses")
