"""End to end in a real browser: JupyterLab + headless Chromium, the learner's first day by clicking.

JupyterLab starts as the README's start command starts it: at the top of the course, on the learner's
workbook (written by `course.workbook`). The welcome is opened with no output under any cell; it runs from top
to bottom, its exercises saying "not written yet". The welcome quiz's first question is answered; after a
restart (no kernel left), the workbook's review.ipynb must serve the lesson's other questions, not that one,
and save the answer to the next one. A second test answers a numeric, three choice and a recall question of
the welcome quiz with the keyboard alone, runs axe-core on the course's outputs and widgets, and checks that
notebook shortcuts stay out of the quiz and that a quiz whose kernel is gone says what to do.

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
from typing import Any

import nbformat
import pytest
from browser import axe, chromium
from browser import notebook as nb
from browser.lab import JupyterLab

from course import Question, load_bank
from course.class_session import SessionLog
from course.explorers import AVERAGE
from course.lessons import LESSONS
from course.widgets._chrome import STALE_TEXT
from course.widgets._render import plain_text
from course.workbook import write_workbook
from scheduler import Rating, Store

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
    its text: each option button's accessible name is "Answer <letter>: <the option's text>" (plain text).
    """
    controls = area.get_by_role("button", name=re.compile(r"^(Show answer|Answer A: .*|Check)$"))
    controls.first.wait_for()  # the child views render after the title and progress
    show = area.get_by_role("button", name="Show answer", exact=True)
    if show.count():
        show.click()
        good = area.get_by_role("button", name=re.compile(r"^Good\b"))
        good.wait_for()
        keep_screenshot(page, "answer-shown")
        good.click()
        return
    if area.get_by_role("button", name=re.compile(r"^Answer A: ")).count():
        button = area.get_by_role("button", name=right_option_name(question))
        assert button.count() == 1, f"no single option button is named for {question.id}'s right answer"
        button.click()
    else:
        area.get_by_role("textbox").fill(str(question.answer))
        area.get_by_role("button", name="Check", exact=True).click()
    area.get_by_role("button", name=re.compile(r"^(Next|Finish)$")).click()  # saves the preselected Good


def right_option_name(question: Question) -> re.Pattern[str]:
    right = next(option.text for option in question.options if option.correct)
    return re.compile(rf"^Answer [A-F]: {re.escape(plain_text(right))}$")


def no_violations(page: Any, selector: str) -> None:
    """axe-core finds nothing wrong in the current notebook's elements matching `selector`."""
    found = axe.violations(page, selector)
    assert found == [], "axe-core:\n" + "\n".join(found)


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
    # The question is due again in 4 days (Memory's defaults: no same-day steps), fuzzed by a draw from the
    # answer time as fsrs fuzzes: round(3 + 3 * draw), so 3 to 6 days: the 3rd to 6th count of the 7-day row
    # (tomorrow first).
    # The 7-day row is one count per day, each right-aligned in 5 characters.
    week = ["    0"] * 7
    return [
        {"Due now:          0"},
        {"Later today:      0"},
        {" " * 17 + "".join([*week[:day], "    1", *week[day + 1 :]]) for day in (2, 3, 4, 5)},
        {"Reviews today:    1"},
        {"Reviews in total: 1"},
        {"True retention:   n/a (no reviews of learned questions yet)"},  # a first answer is not a review
        {f"New available:    {new_left}"},
        {"30 days shown; reviews due in that time: 1"},
    ]


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_welcome_quiz_then_review_after_a_restart_in_the_browser(tmp_path: Path) -> None:
    """The learner's first day: answer the welcome quiz's first question, restart, review what is due."""
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

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
        # 2. The welcome quiz: its first question answered right, saved as Good (due again in 3 to 5 days).
        nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 00")
        quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 00")
        quiz.get_by_text("Question 1 / ").wait_for()
        nb.wait_math_typeset(page, ".widget-htmlmath")
        keep_screenshot(page, "before")
        assert not db.exists(), "showing the quiz must not create the progress database"

        answer_right(page, quiz, first)
        quiz.get_by_text("Previous question: Saved: Good.").wait_for()
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
        expect(header).to_have_text(
            f"{left} left (this session: 0 due now, {left} new; 0 answered). {lesson}"
        )
        prompt = review.locator(".widget-htmlmath").first  # the title and progress are plain HTML
        expect(prompt).to_have_text(second.prompt)
        nb.wait_for_text(page, ".jp-OutputArea-output", "days shown")  # the last cell printed
        stats = panel.locator(".jp-OutputArea-output", has_text="Due now:").inner_text()
        stats += "\n" + panel.locator(".jp-OutputArea-output", has_text="days shown").inner_text()
        lines = set(stats.splitlines())
        for expected in review_stats_lines(left):
            assert expected & lines, f"none of {sorted(expected)} printed: {sorted(lines)}"
        nb.wait_math_typeset(page, ".widget-htmlmath")
        keep_screenshot(page, "review-before", show=review)
        no_violations(page, ".course-widget")

        # 5. Answering it saves it and moves on to the next new question.
        answer_right(page, review, second)
        # JupyterLab runs widget callbacks on a kernel thread other than the cell's: the save must work there.
        expect(header).to_contain_text("; 1 answered)", timeout=3_000)  # a save takes milliseconds
        expect(header).to_have_text(
            f"{left - 1} left (this session: 0 due now, {left} new; 1 answered). {lesson}"
        )
        expect(prompt).to_have_text(third.prompt)
        review.get_by_text("Previous question: Saved: Good.").wait_for()
        keep_screenshot(page, "review-after", show=review)

    with Store.open(db, create=False) as store:
        reviews = [(review.item_id, review.rating) for review in store.reviews()]
    assert reviews == [(first.id, Rating.GOOD), (second.id, Rating.GOOD)]


# The current notebook's cell count and active cell: notebook shortcuts change them.
_CELLS = """() => {
  const notebook = window.jupyterapp.shell.currentWidget.content;
  return [notebook.widgets.length, notebook.activeCellIndex];
}"""
_FOCUSED_NAME = "() => document.activeElement && document.activeElement.getAttribute('aria-label')"


def tab_to(page: Any, name: re.Pattern[str], most: int = 12) -> None:
    """Press Tab until the focused element's aria-label matches `name`."""
    for _ in range(most):
        if name.match(page.evaluate(_FOCUSED_NAME) or ""):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"no element named {name.pattern} within {most} Tabs")


@pytest.mark.browser
@pytest.mark.timeout(150, method="signal")
def test_the_welcome_quiz_by_keyboard_alone_and_axe_in_the_browser(tmp_path: Path) -> None:
    """A numeric, three choice and a recall question answered with the keyboard alone; axe-core finds no
    violation in the course's outputs; notebook shortcuts stay out of the quiz; after the kernel is gone the
    quiz says what to do."""
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    questions = load_bank().questions("00")
    assert [question.kind for question in questions[:5]] == [
        "numeric",
        "choice",
        "choice",
        "choice",
        "recall",
    ]
    with lab_in_browser(tmp_path) as (lab, page, db):
        open_notebook(lab, page, WELCOME, db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 00")
        quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 00")
        quiz.get_by_text("Question 1 / ").wait_for()
        nb.wait_math_typeset(page, ".widget-htmlmath")
        expect(quiz.locator(".course-widget")).to_have_attribute("data-lm-suppress-shortcuts", "true")
        status = quiz.get_by_role("status")
        sizes = page.evaluate(
            """() => ['.course-widget .widget-htmlmath-content', '.course-widget button',
              '.jp-RenderedMarkdown p'].map((selector) => getComputedStyle(document.querySelector(selector))
              .fontSize)"""
        )
        assert sizes == ["14px", "14px", "14px"], "the quiz's text has the notebook's size"
        no_violations(page, ".jp-OutputArea-output")  # every output of the welcome, the quiz among them

        # 1. Numeric: typing, then Tab to reach Check, grades nothing; Enter on Check does.
        quiz.get_by_role("textbox").focus()
        page.keyboard.type(str(questions[0].answer))
        page.keyboard.press("Tab")
        expect(quiz.get_by_role("button", name="Check", exact=True)).to_be_focused()
        page.wait_for_timeout(500)  # time enough for the kernel to grade, were it to
        assert quiz.get_by_text("✓ Right").count() == 0 and not db.exists()
        page.keyboard.press("Enter")
        expect(status).to_have_text(f"✓ Right: {questions[0].answer}. Not saved yet: press Next to save it.")
        next_button = quiz.get_by_role("button", name="Next", exact=True)
        expect(next_button).to_be_focused()
        ring = next_button.evaluate(
            "(e) => [getComputedStyle(e).outlineStyle, getComputedStyle(e).outlineWidth, "
            "getComputedStyle(e).outlineColor]"
        )
        assert ring == ["solid", "2px", "rgb(25, 118, 210)"]  # 4.6:1 against the white page
        no_violations(page, ".course-widget")  # the verdict, the explanation, the ratings
        page.keyboard.press("Shift+Tab")  # to the ratings: real radio buttons, Good checked
        expect(quiz.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_focused()
        expect(quiz.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_checked()
        page.keyboard.press("ArrowDown")
        expect(quiz.get_by_role("radio", name=re.compile(r"^Easy\b"))).to_be_checked()
        page.keyboard.press("Tab")
        expect(next_button).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(r"^Saved: Easy\. It comes back in "))

        # 2-4. Choice: the focus is on option A; the notebook's shortcuts do nothing there.
        for question in questions[1:4]:
            first_option = quiz.get_by_role("button", name=re.compile(r"^Answer A: "))
            expect(first_option).to_be_focused()
            before = page.evaluate(_CELLS)
            page.keyboard.press("ArrowDown")
            page.keyboard.press("a")
            assert page.evaluate(_CELLS) == before, "a notebook shortcut fired inside the quiz"
            expect(first_option).to_be_focused()
            tab_to(page, right_option_name(question))
            page.keyboard.press("Enter")
            expect(status).to_have_text("✓ Right. Not saved yet: press Next to save it.")
            expect(next_button).to_be_focused()
            page.keyboard.press("Enter")
            expect(status).to_have_text(re.compile(r"^Saved: Good\. It comes back in "))

        # 5. Recall: Show answer, then Good, each focused in turn.
        show = quiz.get_by_role("button", name="Show answer", exact=True)
        expect(show).to_be_focused()
        page.keyboard.press("Enter")
        good = quiz.get_by_role("button", name=re.compile(r"^Good\b"))
        expect(good).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(r"^Saved: Good\. It comes back in "))
        with Store.open(db, create=False) as store:
            saved = [(review.item_id, review.rating) for review in store.reviews()]
        ratings = [Rating.EASY, Rating.GOOD, Rating.GOOD, Rating.GOOD, Rating.GOOD]
        assert saved == [
            (question.id, rating) for question, rating in zip(questions[:5], ratings, strict=True)
        ]

        # 6. The last question (skipped to from the kernel): after Finish the focus is on the summary.
        find = "w = next(o for o in Out.values() if type(o).__name__ == 'QuizWidget')"
        assert nb.kernel_exec(page, f"{find}\nw.index = 11\nw._show_current()") == ""
        quiz.get_by_text("Question 12 / 12").wait_for()
        tab_to(page, right_option_name(questions[11]))
        page.keyboard.press("Enter")
        expect(quiz.get_by_role("button", name="Finish", exact=True)).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(r"^6 of 12 right\. Next review of this lesson: "))
        expect(quiz.locator(".course-summary")).to_be_focused()

        # 7. The kernel is gone: the quiz still shows, and pressing Enter in it says what to do.
        back = "w.index = 5\nw._show_current()"
        assert nb.kernel_exec(page, back) == ""
        quiz.get_by_text("Question 6 / 12").wait_for()
        restart_kernels(lab, page)
        box = quiz.get_by_role("textbox")
        box.fill(str(questions[5].answer))
        box.press("Enter")
        expect(quiz.get_by_role("alert")).to_have_text(STALE_TEXT, timeout=10_000)


def explore(page: Any, lesson: str, start: str) -> Any:
    """Open lesson `lesson` of the workbook, run it all, and return its explorer once it shows `start`."""
    name = next(path for path in sorted(os.listdir(REPO / "notebooks")) if path.startswith(f"{lesson}-"))
    nb.open_document(page, f"workbook/{name}")
    nb.wait_kernel_idle(page, f"workbook/{name}", timeout_ms=60_000)
    nb.run_all(page)
    nb.wait_for_text(page, ".course-explorer .course-status", start, timeout_ms=60_000)
    explorer = nb.current_panel(page).locator(".course-explorer")
    assert explorer.count() == 1
    return explorer


def shows(explorer: Any, text: str) -> None:
    """The explorer's figure, and the status a screen reader reads, both say `text`."""
    from playwright.sync_api import expect

    expect(explorer.locator(".course-status")).to_contain_text(text, timeout=10_000)
    alt = explorer.locator(".course-explorer-figure img").get_attribute("alt")
    assert text in alt


@pytest.mark.browser
@pytest.mark.timeout(300, method="signal")
def test_the_explorers_redraw_as_their_controls_move_in_the_browser(tmp_path: Path) -> None:
    """Lessons 01, 02, 04 and 05 of the workbook, each run from top to bottom: its explorer is live (not the
    static figure), and a key press, a menu choice or a click on its controls redraws the figure."""
    require_browser()
    with lab_in_browser(tmp_path) as (lab, page, db):
        open_notebook(lab, page, WELCOME, db)  # checks the kernel's environment once

        explorer = explore(page, "01", "at temperature 1.00: weights 0.61, 0.22, 0.14, 0.03.")
        explorer.locator(".noUi-handle").focus()
        page.keyboard.press("ArrowRight")  # one step of 0.05 on a log10 scale: τ = 10^0.05
        shows(explorer, "at temperature 1.12: weights 0.57, 0.24, 0.15, 0.04.")
        keep_screenshot(page, "temperature", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "02", "with d_k = 1 (random vectors")
        explorer.locator(".noUi-handle").focus()
        page.keyboard.press("End")
        shows(explorer, "with d_k = 1024 (random vectors")
        shows(explorer, "the largest weight is 1.000;")
        keep_screenshot(page, "scaling", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "04", "Heatmap of the attention weights of head 0: previous word.")
        explorer.locator("select").select_option(AVERAGE)
        shows(explorer, "Heatmap of the attention weights of average of the heads.")
        keep_screenshot(page, "heads", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "05", "6 queries (the last 6 of 6 positions) over 6 keys, causal mask")
        explorer.locator(".widget-slider", has_text="queries T_q").locator(".noUi-handle").focus()
        page.keyboard.press("Home")
        shows(explorer, "causal mask, bottom-right: 6 of 6 pairs allowed")
        explorer.get_by_role("button", name="top-left").click()
        shows(explorer, "causal mask, top-left: 1 of 6 pairs allowed")
        shows(explorer, "5 mat sees key 0.")
        keep_screenshot(page, "masks", show=explorer)
        no_violations(page, ".course-explorer")


# The slides on screen: the innermost present section (a vertical stack nests its subslides in a section).
_PRESENT = "() => { const all = document.querySelectorAll('.reveal .slides section.present'); " + (
    "return all.length ? all[all.length - 1].textContent : null; }"
)


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_a_lesson_as_slides_in_the_browser(tmp_path: Path) -> None:
    """Lesson 01 of the workbook opens as a RISE slideshow: the title first, section 1 one key press later,
    and its Predict prompts wait as fragments."""
    require_browser()
    with lab_in_browser(tmp_path) as (lab, page, _db):
        page.goto(lab.url("/rise/workbook/01-similarity-and-softmax.ipynb"))
        page.wait_for_function(_PRESENT, timeout=60_000, polling=200)
        page.wait_for_function(
            "(text) => (" + _PRESENT + ")()?.includes(text)",
            arg="01 · Similarity and softmax",
            timeout=30_000,
        )
        keep_screenshot(page, "title")
        page.keyboard.press("ArrowRight")
        page.wait_for_function(
            "(text) => (" + _PRESENT + ")()?.includes(text)", arg="1. Tokens as vectors", timeout=10_000
        )
        fragments = page.locator(".reveal .slides .fragment", has_text="Predict:")
        assert fragments.count() >= 5  # each Predict prompt of the lesson waits for a key press
        keep_screenshot(page, "section-1")


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_the_class_review_on_the_projector_by_keyboard_in_the_browser(tmp_path: Path) -> None:
    """The class review runs by keyboard alone: Space reveals the options then the answer, a count typed and
    Enter is saved to the class-session file (not the progress file), the right arrow moves on, Finish ranks;
    its type is projector-sized and axe-core finds nothing wrong in it."""
    require_browser()
    from playwright.sync_api import expect

    sessions = tmp_path / "class-sessions.sqlite3"
    first = load_bank().questions("02")[0]
    assert first.kind == "choice"
    with lab_in_browser(tmp_path) as (lab, page, db):
        code = f"from course.widgets import class_review\nclass_review('02', room=24, sessions=r'{sessions}')"
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]),
            tmp_path / "course" / "class.ipynb",
        )
        open_notebook(lab, page, "class.ipynb", db)
        nb.run_all(page)
        nb.wait_for_text(page, ".course-class-review", "Class review · question 1 / ")
        room = page.locator(".course-class-review")
        expect(room).to_be_focused()  # the keys work at once
        size = page.evaluate(
            "() => getComputedStyle(document.querySelector('.course-class-prompt .widget-htmlmath-content'))"
            ".fontSize"
        )
        assert size == "30px", "readable from the back of the room"
        page.keyboard.press("Space")
        expect(room.locator(".course-class-option")).to_have_count(len(first.options))
        page.keyboard.press("Space")
        expect(room.locator(".course-class-right")).to_have_count(1)
        expect(room.locator(".course-class-right")).to_contain_text(first.answer)
        keep_screenshot(page, "answer", show=room)
        room.get_by_role("spinbutton").fill("18")
        page.keyboard.press("Enter")
        expect(room).to_contain_text("saved: 18 of 24 right")
        expect(room).to_be_focused()
        page.keyboard.press("ArrowRight")
        expect(room).to_contain_text("Class review · question 2 / ")
        room.get_by_role("spinbutton").fill("3")
        page.keyboard.press("Enter")
        expect(room).to_contain_text("saved: 3 of 24 right")
        room.get_by_role("button", name="Finish").click()
        expect(room.locator("h3", has_text="Revisit")).to_have_count(1)
        keep_screenshot(page, "summary", show=room)
        no_violations(page, ".course-class-review")
    assert not db.exists(), "a class review never touches a learner's progress"
    with SessionLog.open(sessions, create=False) as log:
        (session,) = log.sessions()
    assert [(t.question_id, t.right) for t in session.tallies] == [
        (first.id, 18),
        (load_bank().questions("02")[1].id, 3),
    ]


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
