"""End to end in a real browser: JupyterLab + headless Chromium, the learner's first day by clicking.

JupyterLab starts as the README's start command starts it: at the top of the course, on the learner's
workbook (written by `course.workbook`). The welcome is opened with no output under any cell; it runs from top
to bottom, its exercises saying "not written yet". The welcome quiz's first question is answered; after a
restart (no kernel left), the workbook's review.ipynb must serve the lesson's other questions, not that one,
and save the answer to the next one.

Needs the system Chromium (``apt-get install chromium`` on Debian) and the playwright Python package; nothing
is downloaded. Without them the browser tests are skipped, except on CI (``CI`` set), where they fail.
Run alone with ``pytest -o addopts="" -p no:nbval tests/test_browser.py``.
Set ``COURSE_BROWSER_SCREENSHOT`` to a directory to keep screenshots of the quiz and the review, before and
after answering.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import chromium
from browser import notebook as nb
from browser.lab import JupyterLab

from course.workbook import write_workbook

if TYPE_CHECKING:
    from course import Question

REPO = Path(__file__).resolve().parents[1]
WELCOME = "workbook/00-welcome.ipynb"
REVIEW = "workbook/review.ipynb"


def require_browser(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    reason = chromium.missing()
    if reason is None:
        return
    if chromium.must_fail(environ):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@contextlib.contextmanager
def lab_in_browser(tmp_path: Path) -> Iterator[tuple[JupyterLab, Any, Path]]:
    """A sandboxed JupyterLab serving a course folder (the README and a fresh workbook, as after the README's
    start command), a Chromium page, and the COURSE_DB path.

    Always cleans up, in this order: kernel sessions (REST API), browser, server.
    """
    from playwright.sync_api import sync_playwright

    db = tmp_path / "progress.sqlite3"
    root = tmp_path / "course"
    root.mkdir()
    (root / "README.md").write_bytes((REPO / "README.md").read_bytes())
    write_workbook(root / "workbook", say=lambda _line: None)
    lab = JupyterLab(root, tmp_path / "home", extra_env={"COURSE_DB": str(db)})
    with sync_playwright() as playwright:
        browser = None
        try:
            lab.spawn()
            browser = chromium.launch(playwright)  # while the server boots
            lab.wait_ready()
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            try:
                yield lab, page, db
            except BaseException:
                shot = tmp_path / "failure.png"
                with contextlib.suppress(Exception):
                    page.screenshot(path=str(shot), full_page=True)
                    print(f"screenshot of the failure: {shot}")
                print(f"JupyterLab log ({lab.log_path}), last lines:\n{lab.log_tail()}")
                raise
        finally:
            if lab.running:
                with contextlib.suppress(Exception):
                    lab.delete_sessions()
            if browser is not None:
                browser.close()
            lab.stop()


def open_notebook(lab: JupyterLab, page: Any, name: str, db: Path) -> None:
    """Open `name` in Lab and wait for its kernel; check the kernel's environment while at it."""
    page.goto(lab.url(f"/lab/tree/{name}"))
    nb.wait_kernel_idle(page, name)
    seen = nb.kernel_exec(page, "import os, sys\nprint(sys.prefix)\nprint(os.environ.get('COURSE_DB'))")
    expected = [sys.prefix, str(db)]
    assert seen.splitlines() == expected, "the kernel must run in the tests' environment, with COURSE_DB"


def keep_screenshot(page: Any, stage: str, show: Any = None) -> None:
    """With ``COURSE_BROWSER_SCREENSHOT=DIR`` set, save a screenshot of the page as DIR/<test>-<stage>.png.

    `show`: a locator to scroll into view first (Lab scrolls the notebook, so a full-page shot misses it).
    """
    directory = os.environ.get("COURSE_BROWSER_SCREENSHOT")
    if directory:
        if show is not None:
            show.scroll_into_view_if_needed()
        test = os.environ.get("PYTEST_CURRENT_TEST", "test").split("::")[-1].split(" ")[0]
        Path(directory).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(directory) / f"{test}-{stage}.png"), full_page=True)


def answer_right(page: Any, area: Any, question: Question) -> None:
    """Answer `question`, shown in `area` (a locator), right, and save it as Good.

    What to click is read from the page (a "Show answer" button, option buttons or a text box); the bank only
    supplies the right answer. The options are shown in a new order each time, so the right one is found by
    its text: each option button's tooltip (its title) is "Answer <letter>: <the option's text>".
    """
    controls = area.get_by_role("button", name=re.compile(r"^(Show answer|Answer A|Check)$"))
    controls.first.wait_for()  # the child views render after the title and progress
    show = area.get_by_role("button", name="Show answer", exact=True)
    if show.count():
        show.click()
        good = area.get_by_role("button", name=re.compile(r"^Good\b"))
        good.wait_for()
        keep_screenshot(page, "answer-shown")
        good.click()
        return
    if area.get_by_role("button", name="Answer A", exact=True).count():
        right = next(option.text for option in question.options if option.correct)
        button = area.get_by_title(re.compile(rf"^Answer [A-F]: {re.escape(right)}$"))
        assert button.count() == 1, f"no single option button shows {right!r}"
        button.click()
    else:
        area.get_by_role("textbox").fill(str(question.answer))
        area.get_by_role("button", name="Check", exact=True).click()
    area.get_by_role("button", name=re.compile(r"^(Next|Finish)$")).click()  # saves the preselected Good


def restart_kernels(lab: JupyterLab, page: Any, timeout: float = 10.0) -> None:
    """Shut down the current notebook's kernel from Lab, and wait until the server runs no kernel at all."""
    nb.shut_down_kernel(page)
    deadline = time.monotonic() + timeout
    while lab.api("GET", "/api/sessions") or lab.api("GET", "/api/kernels"):
        assert time.monotonic() < deadline, "the welcome notebook's kernel did not shut down"
        time.sleep(0.1)


def review_stats_lines(new_left: int) -> list[set[str]]:
    """What section 2 of review.ipynb prints after one Good answer to a new question, a moment ago.

    One set of acceptable lines per line expected.
    """
    # The question is due again in 10 minutes: today, unless today's rollover (04:00 local) comes first.
    week = [0] * 7
    due_tomorrow = f"Due today: 0   next 7 days: {[1, *week[1:]]}"
    return [
        {f"Due today: 1   next 7 days: {week}", due_tomorrow},
        {"Reviews today: 1   in total: 1"},
        {"True retention: n/a"},  # a first answer is not a review of an already-learned question
        {f"New questions available: {new_left}"},
        {"30 days shown; reviews due in that time: 1"},
    ]


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_welcome_quiz_then_review_after_a_restart_in_the_browser(tmp_path: Path) -> None:
    """The learner's first day: answer the welcome quiz's first question, restart, review what is due."""
    require_browser()
    from playwright.sync_api import expect

    from course import load_bank
    from course.lessons import LESSONS
    from scheduler import Rating, Store

    questions = load_bank().questions("00")
    first, second, third = questions[:3]
    with lab_in_browser(tmp_path) as (lab, page, db):
        # 1. The welcome, as the learner first sees it: no output under any cell (no Predict prompt answered),
        # the README one folder up. Run all: the exercises are not written yet, and nothing fails.
        open_notebook(lab, page, WELCOME, db)
        assert page.evaluate(nb.OUTPUT_COUNT) == 0
        assert lab.api("GET", "/api/contents/README.md?content=0")["type"] == "file"
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "not written yet")
        assert nb.errors(page) == []
        # 2. The welcome quiz: its first question answered right, saved as Good (due again in 10 minutes).
        nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 00")
        quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 00")
        quiz.get_by_text("Question 1 / ").wait_for()
        nb.wait_math_typeset(page, ".widget-htmlmath")
        keep_screenshot(page, "before")
        assert not db.exists(), "showing the quiz must not create the progress database"

        answer_right(page, quiz, first)
        quiz.get_by_text("Saved: Good.").wait_for()
        keep_screenshot(page, "after")
        with Store.open(db, create=False) as store:
            assert [(review.item_id, review.rating) for review in store.reviews()] == [
                (first.id, Rating.GOOD)
            ]
            assert list(store.enrolled()) == ["00"]

        # 3. Restart: no kernel is left running; the review notebook gets a fresh one.
        restart_kernels(lab, page)
        nb.open_document(page, REVIEW)
        nb.wait_kernel_idle(page, REVIEW)
        assert [session["path"] for session in lab.api("GET", "/api/sessions")] == [REVIEW]
        nb.run_all(page)

        # 4. The review serves the lesson's other questions, new, and not the one answered a moment ago.
        panel = nb.current_panel(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "this session:")
        review = panel.locator(".jp-OutputArea-output", has_text="this session:")
        left = len(questions) - 1
        lesson = f"From lesson 00, {LESSONS['00'][0]}."
        header = review.locator(".widget-html", has_text="this session:")
        expect(header).to_have_text(f"{left} left (this session: 0 due, {left} new; 0 answered). {lesson}")
        prompt = review.locator(".widget-htmlmath").first  # the title and progress are plain HTML
        expect(prompt).to_have_text(second.prompt)
        nb.wait_for_text(page, ".jp-OutputArea-output", "days shown")  # the last cell printed
        stats = panel.locator(".jp-OutputArea-output", has_text="Due today:").inner_text()
        stats += "\n" + panel.locator(".jp-OutputArea-output", has_text="days shown").inner_text()
        lines = set(stats.splitlines())
        for expected in review_stats_lines(left):
            assert expected & lines, f"none of {sorted(expected)} printed: {sorted(lines)}"
        nb.wait_math_typeset(page, ".widget-htmlmath")
        keep_screenshot(page, "review-before", show=review)

        # 5. Answering it saves it and moves on to the next new question.
        answer_right(page, review, second)
        # JupyterLab runs widget callbacks on a kernel thread other than the cell's: the save must work there.
        expect(header).to_contain_text("; 1 answered)", timeout=3_000)  # a save takes milliseconds
        expect(header).to_have_text(
            f"{left - 1} left (this session: 0 due, {left} new; 1 answered). {lesson}"
        )
        expect(prompt).to_have_text(third.prompt)
        review.get_by_text("Previous question: Saved: Good.").wait_for()
        keep_screenshot(page, "review-after", show=review)

    with Store.open(db, create=False) as store:
        reviews = [(review.item_id, review.rating) for review in store.reviews()]
    assert reviews == [(first.id, Rating.GOOD), (second.id, Rating.GOOD)]


@pytest.mark.parametrize("ci", ["", "1"])
def test_missing_browser_skips_locally_and_fails_on_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    monkeypatch.setattr(chromium.shutil, "which", lambda name: None)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome) as raised:
        require_browser({"CI": ci})
    assert raised.value.msg == (
        "Chromium not found: install it with `apt-get install chromium` (Debian) to run the browser test"
    )


def test_missing_playwright_package_gives_its_own_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chromium.shutil, "which", lambda name: "/usr/bin/chromium")
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(pytest.skip.Exception) as raised:
        require_browser({})
    assert raised.value.msg == chromium.PLAYWRIGHT_ADVICE
