"""The offline slides (``python -m course export-slides``) in headless Chromium with every request that is
not for a file aborted: reveal.js starts, MathJax typesets the maths, and Space shows a fragment on screen,
scrolled into view within its slide, all from the files beside the page.

Needs the system Chromium and the playwright Python package, as the other browser tests do. Run alone with
``pytest -o addopts="" -p no:nbval tests/browser/test_slide_export.py``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from browser import chromium
from browser.test_first_day import require_browser
from course.publishing import export_slides, instructor_notebook

WIDTH, HEIGHT = 1280, 720

# the math MathJax was given and the math it typeset, once its queue is empty; None while it works
_MATH = """() => {
  if (!window.MathJax || !MathJax.Hub || MathJax.Hub.queue.pending || MathJax.Hub.queue.running) return null;
  const slides = document.querySelector('.reveal .slides');
  const count = (selector) => slides.querySelectorAll(selector).length;
  return [count('script[type^="math/tex"]'), count('.MathJax')];
}"""
# the fragment Space just showed: its box on screen, and how far its slide scrolled to show it
_FRAGMENT = """() => {
  const present = document.querySelectorAll('.reveal .slides section.present');
  const slide = present[present.length - 1];
  const shown = slide.querySelector('.fragment.current-fragment');
  if (!shown) return null;
  const box = shown.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, scrolled: slide.scrollTop, tall: slide.scrollHeight,
          room: slide.clientHeight};
}"""


@pytest.mark.browser
def test_the_slides_run_offline(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import sync_playwright

    page_file = export_slides(instructor_notebook("02"), tmp_path / "slides")
    aborted: list[str] = []
    failed: list[str] = []

    def only_files(route: Any) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            aborted.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.route("**/*", only_files)
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.goto(page_file.as_uri())
            page.wait_for_function("() => window.Reveal !== undefined && Reveal.isReady()", timeout=15_000)
            given, typeset = page.wait_for_function(_MATH, timeout=30_000).json_value()
            assert given > 0
            assert typeset == given  # every $...$ and $$...$$ of the lesson
            assert page.evaluate("document.querySelectorAll('.reveal .slides > section').length") > 1
            state = None
            for _ in range(20):  # the title, then slides and sub-slides, up to the first fragment
                page.keyboard.press("Space")
                time.sleep(0.05)
                state = page.evaluate(_FRAGMENT)
                if state is not None:
                    break
            assert state is not None, "Space never showed a fragment"
            assert state["tall"] > state["room"] == HEIGHT  # a slide taller than the screen scrolls
            assert state["scrolled"] > 0  # this fragment lay below the screen: its slide scrolled to it
            assert 0 <= state["top"] < state["bottom"] <= HEIGHT
        finally:
            browser.close()
    assert aborted == []
    # MathJax's HTML-CSS output checks for web fonts with an about:blank font, which Chromium refuses
    assert [url for url in failed if url != "about:blank"] == []
