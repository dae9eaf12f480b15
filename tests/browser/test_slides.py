"""Every lesson as slides on a 1280 x 720 projector, stepped through by Space as a clicker does: no slide is
taller than the screen, and every fragment is on screen when it appears (the room sees each Predict prompt and
the answer it waits for).

The instructor edition is shown, with its stored outputs and figures (the tallest a lesson gets; the workbook
keeps the same slide layout and rise.css). RISE loads ``notebooks/rise.css``, which caps each cell; the breaks
come from ``tools/fit_slides.py``, which this test tells you to run when a lesson no longer fits. Needs the
system Chromium and the playwright package, as ``tests/browser/test_first_day.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from browser.slides import open_slideshow, projector, step_through
from browser.test_first_day import require_browser
from course.lessons import LESSONS, QUIZ_LESSONS

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"


@pytest.mark.browser
@pytest.mark.timeout(600, method="signal")
def test_every_lesson_s_slides_fit_a_projector_fragment_by_fragment_in_the_browser(tmp_path: Path) -> None:
    require_browser()
    root = tmp_path / "course" / "notebooks"
    root.mkdir(parents=True)
    names = [LESSONS[lesson][1] for lesson in QUIZ_LESSONS]  # 00-09
    for name in [*names, "rise.css"]:
        shutil.copy(NOTEBOOKS / name, root / name)
    problems: list[str] = []
    counted: dict[str, tuple[int, int]] = {}
    with projector(root.parent, tmp_path) as (lab, page):
        for name in names:
            open_slideshow(page, lab.url(f"/rise/notebooks/{name}"))
            states = fragments = 0
            for state in step_through(page):
                states += 1
                fragments += bool(state.shown)
                where = f"{name} {state.where} ({state.text!r})"
                if state.height > state.room + 1:
                    problems.append(f"{where}: {state.height:.0f} px on a {state.room:.0f} px slide")
                if state.shown:
                    top, bottom = state.shown[-1]
                    if top < 0 or bottom > state.screen + 1:
                        problems.append(f"{where}: the fragment shown lies at {top:.0f}-{bottom:.0f} px")
            counted[name] = (states, fragments)
    assert not problems, "run: python tools/fit_slides.py\n" + "\n".join(problems)
    for name, (states, fragments) in counted.items():
        assert states >= 20 and fragments >= 3, f"{name}: {states} states, {fragments} with a fragment"
