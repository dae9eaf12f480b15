"""End to end in a real browser: JupyterLab + headless Chromium, a quiz answered by clicking.

Needs the system Chromium (``apt-get install chromium`` on Debian) and the playwright Python package; nothing
is downloaded. Without them the browser tests are skipped, except on CI (``CI`` set), where they fail.
Run alone with ``pytest -o addopts="" -p no:nbval tests/test_browser.py``.
Set ``COURSE_BROWSER_SCREENSHOT`` to a directory to keep screenshots of the quiz before and after answering.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import chromium
from browser import notebook as nb
from browser.lab import JupyterLab, copy_notebooks

if TYPE_CHECKING:
    from course import Question

REPO = Path(__file__).resolve().parents[1]
WELCOME = "00-welcome.ipynb"


def require_browser(environ: dict[str, str] | os._Environ[str] = os.environ) -> None:
    reason = chromium.missing()
    if reason is None:
        return
    if chromium.must_fail(environ):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@contextlib.contextmanager
def lab_in_browser(tmp_path: Path, notebooks: Path) -> Iterator[tuple[JupyterLab, Any, Path]]:
    """A sandboxed JupyterLab serving a copy of `notebooks`, a Chromium page, and the COURSE_DB path.

    Always cleans up, in this order: kernel sessions (REST API), browser, server.
    """
    from playwright.sync_api import sync_playwright

    db = tmp_path / "progress.sqlite3"
    root = copy_notebooks(notebooks, tmp_path / "notebooks")
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


def keep_screenshot(page: Any, stage: str) -> None:
    """With ``COURSE_BROWSER_SCREENSHOT=DIR`` set, save a screenshot of the page as DIR/<test>-<stage>.png."""
    directory = os.environ.get("COURSE_BROWSER_SCREENSHOT")
    if directory:
        test = os.environ.get("PYTEST_CURRENT_TEST", "test").split("::")[-1].split(" ")[0]
        Path(directory).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(directory) / f"{test}-{stage}.png"), full_page=True)


def answer_first_question(page: Any, quiz: Any, question: Question) -> None:
    """Answer `question`, shown in `quiz` (a locator), right, and save it as Good.

    What to click is read from the page (a "Show answer" button, option buttons or a text box); the bank only
    supplies the right answer.
    """
    controls = quiz.get_by_role("button", name=re.compile(r"^(Show answer|Answer A|Check)$"))
    controls.first.wait_for()  # the child views render after the title and progress
    show = quiz.get_by_role("button", name="Show answer", exact=True)
    if show.count():
        show.click()
        good = quiz.get_by_role("button", name=re.compile(r"^Good\b"))
        good.wait_for()
        keep_screenshot(page, "answer-shown")
        good.click()
        return
    if quiz.get_by_role("button", name="Answer A", exact=True).count():
        letter = "ABCDEF"[[option.correct for option in question.options].index(True)]
        quiz.get_by_role("button", name=f"Answer {letter}", exact=True).click()
    else:
        quiz.get_by_role("textbox").fill(str(question.answer))
        quiz.get_by_role("button", name="Check", exact=True).click()
    quiz.get_by_role("button", name=re.compile(r"^(Next|Finish)$")).click()  # saves the preselected Good


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_welcome_quiz_answer_clicked_in_the_browser_is_saved(tmp_path: Path) -> None:
    require_browser()
    from course import load_bank
    from scheduler import Rating, Store

    question = load_bank().questions("00")[0]
    with lab_in_browser(tmp_path, REPO / "notebooks") as (lab, page, db):
        open_notebook(lab, page, WELCOME, db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 00")
        quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 00")
        quiz.get_by_text("Question 1 / ").wait_for()
        nb.wait_math_typeset(page, ".widget-htmlmath")
        keep_screenshot(page, "before")
        assert not db.exists(), "showing the quiz must not create the progress database"

        answer_first_question(page, quiz, question)
        quiz.get_by_text("Saved: Good.").wait_for()
        keep_screenshot(page, "after")

    with Store.open(db, create=False) as store:
        reviews = store.reviews()
        enrolled = store.enrolled()
    assert [(review.item_id, review.rating) for review in reviews] == [(question.id, Rating.GOOD)]
    assert list(enrolled) == ["00"]


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
