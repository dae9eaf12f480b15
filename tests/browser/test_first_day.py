"""End to end in a real browser: JupyterLab + headless Chromium, the learner's first day by clicking.

JupyterLab starts as the README's start command starts it: at the top of the course, on the learner's
workbook (written by `course.publishing`). The welcome is opened with no output under any cell; it runs from
top to bottom, its exercises saying "not written yet". The welcome quiz's first question is answered; after a
restart (no kernel left), the workbook's review.ipynb must serve the lesson's other questions, not that one,
and save the answer to the next one. A second test answers a numeric, three choice and a recall question of
the welcome quiz with the keyboard alone, runs axe-core on the course's outputs and widgets, and checks that
notebook shortcuts stay out of the quiz and that a quiz whose kernel is gone says what to do.

Needs the system Chromium (``apt-get install chromium`` on Debian) and the playwright Python package; nothing
is downloaded. Without them the browser tests are skipped, except on CI (``CI`` set), where they fail.
Run alone with ``pytest -o addopts="" -p no:nbval tests/browser/test_first_day.py``.
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
from course.bank import plain_text
from course.classroom import ClassReviewLog
from course.explorers import AVERAGE
from course.lessons import LESSONS
from course.publishing import write_workbook
from course.widgets._chrome import STALE_TEXT
from scheduler import Rating, Store

REPO = Path(__file__).resolve().parents[2]
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
    # The question is due again in 4 days (Memory's defaults: desired retention 0.85, no same-day steps),
    # fuzzed by a draw from the answer time as fsrs fuzzes, to 3 to 6 days: in the 7-day row, which starts
    # tomorrow (its 3rd to 6th count is 1, the others 0), and within the 30 days shown. The 7-day row is one
    # count per day, each right-aligned in 5 characters.
    return [
        {"Due now:          0"},
        {"Later today:      0"},
        {" " * 17 + "".join(f"{int(day == due - 1):5}" for day in range(7)) for due in range(3, 7)},
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
        # 2. The welcome quiz: its first question answered right, saved as Good (due again in 3 to 6 days).
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

        # a text box's border is seen against the page (#757575: 4.6:1, WCAG 1.4.11 asks 3:1)
        assert quiz.get_by_role("textbox").evaluate("(e) => getComputedStyle(e).borderTopColor") == (
            "rgb(117, 117, 117)"
        )
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
        expect(quiz.get_by_role("radiogroup", name="Save as:")).to_have_count(1)  # the ratings are one group
        assert quiz.locator('[title="null"]').count() == 0  # no tooltip that says "null"
        page.keyboard.press("Shift+Tab")  # to the ratings: real radio buttons, Good checked
        expect(quiz.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_focused()
        expect(quiz.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_checked()
        page.keyboard.press("ArrowDown")
        expect(quiz.get_by_role("radio", name=re.compile(r"^Easy\b"))).to_be_checked()
        # what the widget says it will save is what it saves
        expect(status).to_have_text("Saved as Easy when you press Next.")
        hint = quiz.locator(".widget-htmlmath", has_text="when you press Next.")
        expect(hint).to_contain_text("Saved as Easy when you press Next.")
        page.keyboard.press("Tab")
        expect(next_button).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(r"^Saved: Easy\. It comes back in "))

        # 2-4. Choice: the focus is on the new question, not on an answer: a habitual Shift+Enter answers
        # nothing and runs no cell; the notebook's shortcuts do nothing in the quiz either.
        prompt = quiz.locator(".widget-htmlmath").first  # the title and progress are plain HTML
        for question in questions[1:4]:
            expect(prompt).to_be_focused()
            expect(prompt).to_contain_text(plain_text(question.prompt)[:20])
            before = page.evaluate(_CELLS)
            page.keyboard.press("Shift+Enter")
            page.keyboard.press("ArrowDown")
            page.keyboard.press("a")
            assert page.evaluate(_CELLS) == before, "a notebook shortcut fired inside the quiz"
            expect(prompt).to_be_focused()
            page.keyboard.press("Tab")
            first_option = quiz.get_by_role("button", name=re.compile(r"^Answer A: "))
            expect(first_option).to_be_focused()
            tab_to(page, right_option_name(question))
            page.keyboard.press("Enter")
            expect(status).to_have_text("✓ Right. Not saved yet: press Next to save it.")
            expect(next_button).to_be_focused()
            page.keyboard.press("Enter")
            expect(status).to_have_text(re.compile(r"^Saved: Good\. It comes back in "))

        # 5. Recall: the question focused (Shift+Enter reveals nothing), then Show answer, then Good.
        show = quiz.get_by_role("button", name="Show answer", exact=True)
        expect(prompt).to_be_focused()
        page.keyboard.press("Shift+Enter")
        page.wait_for_timeout(500)  # time enough for the kernel to reveal, were it to
        assert quiz.get_by_text("Answer:", exact=True).count() == 0
        page.keyboard.press("Tab")
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
        later = next(i for i, question in enumerate(questions) if i > 4 and question.kind == "numeric")
        assert nb.kernel_exec(page, f"w.index = {later}\nw._show_current()") == ""
        quiz.get_by_text(f"Question {later + 1} / 12").wait_for()
        restart_kernels(lab, page)
        box = quiz.get_by_role("textbox")
        box.fill(str(questions[later].answer))
        box.press("Enter")
        expect(quiz.get_by_role("alert")).to_have_text(STALE_TEXT, timeout=10_000)


# Every element of the course's widgets wider than its box (a row that does not wrap, a word cut off), and
# the widget's width against its output area's: [overflows, widget width, area width].
_OVERFLOW = """() => {
  const root = window.jupyterapp.shell.currentWidget.node.querySelector('.course-widget');
  const area = root.closest('.jp-OutputArea-output');
  const wide = [];
  for (const el of [root, ...root.querySelectorAll('*')]) {
    // math scrolls on its own; the live region is visually hidden on purpose
    if (el.closest('mjx-container, .course-status') || getComputedStyle(el).display === 'none') continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.right > area.getBoundingClientRect().right + 1 ||
        (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'hidden'))) {
      const name = String(el.className).split(' ').pop();
      wide.push(el.tagName + '.' + name + ': ' + (el.textContent || '').slice(0, 40));
    }
  }
  const width = (el) => Math.round(el.getBoundingClientRect().width);
  return [wide, width(root), width(area)];
}"""


# Each formula of the course's widget that runs past its column (MathJax breaks none; one too wide scrolls
# within the column instead), and each that scrolls without taking the focus: [overflows, unreachable].
_MATH_PAST = """() => {
  const root = window.jupyterapp.shell.currentWidget.node.querySelector('.course-widget');
  const past = [], unreachable = [];
  for (const m of root.querySelectorAll('mjx-container')) {
    const column = m.parentElement.closest('.widget-htmlmath-content, .widget-html-content');
    if (!column || !m.getBoundingClientRect().width) continue;
    if (m.getBoundingClientRect().right > column.getBoundingClientRect().right + 1) past.push(m.textContent);
    if (m.scrollWidth > m.clientWidth + 1 && m.tabIndex < 0) unreachable.push(m.textContent);
  }
  return [past, unreachable];
}"""


@pytest.mark.browser
@pytest.mark.timeout(150, method="signal")
def test_numbers_typed_at_full_speed_are_graded_as_typed_and_the_quiz_reflows_in_the_browser(
    tmp_path: Path,
) -> None:
    """Numbers typed with no delay between keys, then Enter (or Tab to Check, then Enter), are graded and
    saved as typed, however fast; at 320 CSS px (a phone, or 400 % zoom) the quiz fits its column and
    axe-core finds nothing wrong in it."""
    require_browser()
    from playwright.sync_api import expect

    questions = load_bank().questions("01")
    at = {question.id: index for index, question in enumerate(questions)}
    typed = [  # (question, what is typed, how it is sent, right?)
        ("01-weighted-average-shape", "12345.5", "Enter", False),
        ("01-softmax-step-ratio", "2.72", "Enter", True),
        ("01-softmax-step-ratio", "2.72", "Enter", True),
        ("01-softmax-step-ratio", "2.72", "Tab", True),
        ("01-softmax-two-scores", "7.5e-1", "Tab", True),
        ("01-uniform-entropy", "3.5e1", "Enter", False),
        ("01-logsumexp-two-equal", "1000.69", "Enter", True),
    ]
    with lab_in_browser(tmp_path) as (lab, page, db):
        nbformat.write(
            nbformat.v4.new_notebook(
                cells=[nbformat.v4.new_code_cell("from course import quiz\nquiz('01')")]
            ),
            tmp_path / "course" / "quiz.ipynb",
        )
        open_notebook(lab, page, "quiz.ipynb", db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "Question 1 / ")
        quiz = page.locator(".jp-OutputArea-output", has_text="Quiz: lesson 01")
        status = quiz.get_by_role("status")
        find = "w = next(o for o in Out.values() if type(o).__name__ == 'QuizWidget')"
        for question_id, text, key, right in typed:
            assert nb.kernel_exec(page, f"{find}\nw.index = {at[question_id]}\nw._show_current()") == ""
            quiz.get_by_text(f"Question {at[question_id] + 1} / ").wait_for()
            box = quiz.get_by_role("textbox")
            expect(box).to_be_enabled()
            box.focus()
            page.keyboard.type(text)  # no delay between the keys
            if key == "Tab":
                page.keyboard.press("Tab")
                expect(quiz.get_by_role("button", name="Check", exact=True)).to_be_focused()
            page.keyboard.press("Enter")
            answer = questions[at[question_id]].answer
            if right:
                expect(status).to_have_text(re.compile(rf"^✓ Right: {re.escape(str(answer))}[ .]"))
                page.keyboard.press("Enter")  # Next, focused
                # saved; after the last question, Finish shows the summary
                saved = r"^(Saved(: Good\.| as practice \(Good\))|\d+ of 16 right\.)"
                expect(status).to_have_text(re.compile(saved))
                # the next question (or the summary) is shown before the kernel is asked to show another
                expect(quiz.get_by_text(f"Question {at[question_id] + 1} / ")).to_have_count(0)
            else:
                said = f"You answered {text}; the answer is {answer}"
                expect(quiz.locator(".widget-htmlmath", has_text=said)).to_have_count(1)
                expect(status).to_contain_text("Saved: Again.")
                expect(quiz.get_by_role("button", name=re.compile("^(Next|Finish)$"))).to_be_focused()
        with Store.open(db, create=False) as store:  # a question answered again in the quiz is practice
            saved = [(review.item_id, review.rating) for review in store.reviews()]
            saved += [(review.item_id, review.rating) for review in store.cram_reviews()]
        ratings = [(q, Rating.GOOD if right else Rating.AGAIN) for q, _, _, right in typed]
        assert saved == [*dict(ratings).items(), *ratings[2:4]]  # the first of each, then the repeats

        # Reflow: at 320 CSS px the answer row wraps, no text is cut off; axe at that width too.
        page.set_viewport_size({"width": 320, "height": 900})
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        assert (
            nb.kernel_exec(page, f"{find}\nw.index = {at['01-softmax-step-ratio']}\nw._show_current()") == ""
        )
        box = quiz.get_by_role("textbox")
        box.fill("2")
        box.press("Enter")  # wrong: the explanation shows
        expect(status).to_contain_text("You answered 2; the answer is 2.72")
        page.wait_for_timeout(300)
        wide, width, area = page.evaluate(_OVERFLOW)
        assert wide == [] and width <= area, f"wider than {area} px: {wide}"
        keep_screenshot(page, "320px", show=quiz)
        no_violations(page, ".course-widget")
        # a formula wider than the column (this feedback's, at 14 px) scrolls within it and takes the focus
        assert (
            nb.kernel_exec(page, f"{find}\nw.index = {at['01-logsumexp-two-equal']}\nw._show_current()") == ""
        )
        box = quiz.get_by_role("textbox")
        expect(box).to_be_enabled()
        box.fill("2")
        box.press("Enter")
        expect(status).to_contain_text("You answered 2; the answer is 1000.69")
        nb.wait_math_typeset(page, ".widget-htmlmath")
        page.wait_for_timeout(300)
        assert page.evaluate(_MATH_PAST) == [[], []], "a formula of the feedback runs past 320 px"
        wide, width, area = page.evaluate(_OVERFLOW)
        assert wide == [] and width <= area, f"wider than {area} px: {wide}"
        keep_screenshot(page, "320px-maths", show=quiz.locator(".widget-htmlmath", has_text="You answered 2"))
        no_violations(page, ".course-widget")
        # a right answer's ratings: each radio button's target at least 24 px high (WCAG 2.5.8), all in view
        assert (
            nb.kernel_exec(page, f"{find}\nw.index = {at['01-softmax-two-scores']}\nw._show_current()") == ""
        )
        box = quiz.get_by_role("textbox")
        expect(box).to_be_enabled()
        box.fill("0.75")
        box.press("Enter")
        radios = quiz.locator(".widget-radio-box label")
        expect(radios).to_have_count(3)
        heights = radios.evaluate_all("(labels) => labels.map((l) => l.getBoundingClientRect().height)")
        assert min(heights) >= 24, heights
        wide, width, area = page.evaluate(_OVERFLOW)
        assert wide == [] and width <= area, f"wider than {area} px: {wide}"
        keep_screenshot(page, "320px-ratings", show=quiz)
        no_violations(page, ".course-widget")


def explore(page: Any, lesson: str, start: str) -> Any:
    """Open lesson `lesson` of the workbook, run it all, and return its explorer once it shows `start`."""
    name = next(path for path in sorted(os.listdir(REPO / "notebooks")) if path.startswith(f"{lesson}-"))
    nb.open_document(page, f"workbook/{name}")
    nb.wait_kernel_idle(page, f"workbook/{name}", timeout_ms=60_000)
    nb.run_all(page)
    nb.wait_for_text(page, ".course-explorer .course-status", start, timeout_ms=60_000)
    nb.wait_all_run(page)  # the cells after the explorer's, which would hold its redraws back
    explorer = nb.current_panel(page).locator(".course-explorer")
    assert explorer.count() == 1
    return explorer


def shows(explorer: Any, brief: str | re.Pattern[str], alt: str) -> None:
    """A screen reader is told `brief` (what changed, in a few words); the figure's alt text says `alt`."""
    from playwright.sync_api import expect

    expect(explorer.locator(".course-status")).to_have_text(brief, timeout=10_000)
    # the figure is a widget of its own, redrawn after the status: its alt text may come a moment later
    figure = explorer.locator(".course-explorer-figure img")
    expect(figure).to_have_attribute("alt", re.compile(re.escape(alt)), timeout=10_000)


def says_value(explorer: Any, slider: str, value: str) -> None:
    """The handle of the slider named `slider` is announced with the value shown beside it."""
    from playwright.sync_api import expect

    expect(explorer.get_by_role("slider", name=slider)).to_have_attribute("aria-valuetext", value)


@pytest.mark.browser
@pytest.mark.timeout(300, method="signal")
def test_the_explorers_redraw_as_their_controls_move_in_the_browser(tmp_path: Path) -> None:
    """Lessons 01, 02, 04 and 05 of the workbook, each run from top to bottom: its explorer is live (not the
    static figure), and a key press, a menu choice or a click on its controls redraws the figure; each change
    is said briefly, each slider says the value it shows, each toggle whether it is pressed."""
    require_browser()
    from playwright.sync_api import expect

    with lab_in_browser(tmp_path) as (lab, page, db):
        open_notebook(lab, page, WELCOME, db)  # checks the kernel's environment once

        explorer = explore(page, "01", "τ = 1.00: weights 0.61, 0.22, 0.14, 0.03.")
        says_value(explorer, "temperature τ", "1.00")  # τ, not the slider's exponent (0)
        handle, track = explorer.locator(".noUi-handle"), explorer.locator(".noUi-target")
        assert handle.evaluate("(e) => getComputedStyle(e).borderTopColor") == "rgb(97, 97, 97)"  # 6.2:1
        assert track.evaluate("(e) => getComputedStyle(e).backgroundColor") == "rgb(117, 117, 117)"  # 4.6:1
        handle.focus()
        page.keyboard.press("ArrowRight")  # one step of 0.05 on a log10 scale: τ = 10^0.05
        shows(explorer, "τ = 1.12: weights 0.57, 0.24, 0.15, 0.04.", "at temperature 1.12: weights 0.57")
        says_value(explorer, "temperature τ", "1.12")
        assert handle.evaluate("(e) => getComputedStyle(e).borderTopColor") == "rgb(25, 118, 210)"  # focused
        keep_screenshot(page, "temperature", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "02", "d_k = 1: largest weight")
        explorer.locator(".noUi-handle").focus()
        page.keyboard.press("End")
        shows(
            explorer, re.compile(r"^d_k = 1024: largest weight 1\.000 unscaled, "), "with d_k = 1024 (random"
        )
        says_value(explorer, "d_k", "1024")
        keep_screenshot(page, "scaling", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "04", "head 0: previous word: ")
        menu = explorer.locator("select")
        menu.focus()
        ring = menu.evaluate("(e) => [getComputedStyle(e).outlineStyle, getComputedStyle(e).outlineWidth]")
        assert ring == ["solid", "2px"]
        menu.select_option(AVERAGE)
        shows(
            explorer,
            re.compile(rf"^{AVERAGE}: "),
            "Heatmap of the attention weights of average of the heads.",
        )
        keep_screenshot(page, "heads", show=explorer)
        nb.shut_down_kernel(page)

        explorer = explore(page, "05", "causal mask: 21 of 36 pairs allowed.")
        explorer.locator(".widget-slider", has_text="queries T_q").locator(".noUi-handle").focus()
        page.keyboard.press("Home")
        shows(explorer, "causal mask, bottom-right: 6 of 6 pairs allowed.", "6 of 6 pairs allowed")
        says_value(explorer, "queries T_q", "1")
        top_left = explorer.get_by_role("button", name="top-left")
        expect(top_left).to_have_attribute("aria-pressed", "false")
        top_left.click()
        shows(explorer, "causal mask, top-left: 1 of 6 pairs allowed.", "5 mat sees key 0.")
        expect(top_left).to_have_attribute("aria-pressed", "true")
        expect(explorer.get_by_role("button", name="bottom-right")).to_have_attribute("aria-pressed", "false")
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
        # each Predict prompt and its answer wait for a key press (as fragments, or as the next subslide)
        answers = page.locator(".reveal .slides .fragment")
        assert answers.count() >= 10
        keep_screenshot(page, "section-1")


# The focus is somewhere other than the page itself (a key pressed then goes to the widget, not to nothing).
_NOT_ON_BODY = "() => document.activeElement !== null && document.activeElement !== document.body"
# [selector, scrollWidth - clientWidth] of the widget and each of its rows wider than its box.
_CUT = """(root) => [root, ...root.querySelectorAll(
    '.course-live-row, .course-live-text, .course-class-option, .course-class-count, .widget-hbox')]
  .filter((e) => e.scrollWidth > e.clientWidth + 1)
  .map((e) => [String(e.className).split(' ').slice(-1)[0] + ': ' + (e.textContent || '').slice(0, 30),
    e.scrollWidth - e.clientWidth])"""
# WCAG 1.4.12's text spacing, as a reader's style sheet applies it.
_TEXT_SPACING = """() => { const s = document.createElement('style'); s.id = 'text-spacing';
  s.textContent = '* { line-height: 1.5 !important; letter-spacing: 0.12em !important; ' +
    'word-spacing: 0.16em !important; } p { margin-bottom: 2em !important; }';
  document.head.appendChild(s); }"""
# Each button of the widget whose text is cut: [its text, scrollWidth - clientWidth].
_BUTTONS_CUT = """(root) => Array.from(root.querySelectorAll('button'))
  .filter((b) => b.scrollWidth > b.clientWidth || b.scrollHeight > b.clientHeight + 1 ||
    getComputedStyle(b).textOverflow === 'ellipsis')
  .map((b) => [b.textContent, b.scrollWidth - b.clientWidth, b.scrollHeight - b.clientHeight])"""


def at_320(page: Any) -> None:
    """A 320 CSS px screen (a phone, or 400 % zoom), the left sidebar collapsed."""
    page.set_viewport_size({"width": 320, "height": 900})
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.wait_for_timeout(300)


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_the_class_review_on_the_projector_by_keyboard_in_the_browser(tmp_path: Path) -> None:
    """The class review runs by keyboard alone: Space reveals the options then the answer, a count typed and
    Enter is saved to the class-session file (not the progress file), one digit and 0 included, a count over
    the room refused in words; the right arrow moves on, and the next question's box starts empty; Finish
    ranks; its type is projector-sized and axe-core finds nothing wrong in it."""
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
        assert room.get_attribute("role") == "application"  # a screen reader passes the keys through
        assert room.get_attribute("aria-label") == (
            "Class review: Space reveals, the arrows move between questions, type the count then Enter"
        )
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
        # WCAG 1.4.12: with a reader's text spacing no button's text is cut ("◀ Previous" was: fixed width)
        page.evaluate(_TEXT_SPACING)
        page.wait_for_timeout(200)
        previous = room.get_by_role("button", name="◀ Previous")
        assert previous.evaluate("(b) => b.scrollWidth - b.clientWidth") <= 0
        assert room.evaluate(_BUTTONS_CUT) == [], "a button's text is cut with WCAG 1.4.12's spacing"
        page.evaluate("() => document.getElementById('text-spacing').remove()")
        room.focus()
        # the count typed as the hint says, with no Tab first: one digit, then Enter
        expect(room).to_contain_text("not counted yet: type the count, then Enter")
        page.keyboard.type("7")
        page.keyboard.press("Enter")
        expect(room).to_contain_text("saved: 7 of 24 right")
        expect(room).to_be_focused()
        page.keyboard.press("ArrowRight")
        expect(room).to_contain_text("Class review · question 2 / ")
        box = room.get_by_role("textbox", name="Got it right:")
        expect(room).to_contain_text("not counted yet: type the count, then Enter")  # its box is emptied
        expect(box).to_have_value("")
        page.keyboard.type("0")  # nobody got it: the count that matters most
        page.keyboard.press("Enter")
        expect(room).to_contain_text("saved: 0 of 24 right")
        page.keyboard.press("ArrowRight")
        expect(room).to_contain_text("Class review · question 3 / ")
        expect(room).to_contain_text("not counted yet: type the count, then Enter")
        page.keyboard.type("5")
        page.keyboard.press("Enter")
        expect(room).to_contain_text("saved: 5 of 24 right")
        page.keyboard.press("ArrowRight")
        expect(room).to_contain_text("Class review · question 4 / ")
        expect(box).to_have_value("")  # the last question's count does not stay in the box
        expect(room).to_contain_text("not counted yet: type the count, then Enter")
        page.keyboard.type("30")
        page.keyboard.press("Enter")
        expect(room).to_contain_text("Not saved: 30 is more than the room of 24: type how many got it right")
        # Space on a focused button presses it: Next moves on, it does not reveal
        room.get_by_role("button", name="Next ▶").focus()
        page.keyboard.press("Space")
        expect(room).to_contain_text("Class review · question 5 / ")
        expect(room.locator(".course-class-option")).to_have_count(0)
        # Reveal pressed by keyboard until it is disabled (the answer shown): the focus comes back to the
        # review, not to the page, so the arrows still work
        reveal = room.get_by_role("button", name="Reveal")
        reveal.focus()
        page.keyboard.press("Enter")  # the options (a choice question), or the answer
        if load_bank().questions("02")[4].kind == "choice":
            expect(room.locator(".course-class-option")).not_to_have_count(0)
            expect(reveal).to_be_focused()
            page.keyboard.press("Enter")
        expect(reveal).to_be_disabled()
        expect(room).to_be_focused()
        # inline code keeps the projector's size: question 7 of lesson 02 has some
        for _ in range(2):
            room.focus()
            page.keyboard.press("ArrowRight")
        expect(room).to_contain_text("Class review · question 7 / ")
        code = room.locator(".course-class-prompt code").first
        assert float(code.evaluate("(e) => parseFloat(getComputedStyle(e).fontSize)")) >= 26
        room.get_by_role("button", name="Finish").click()
        expect(room.locator("h3", has_text="Revisit")).to_have_count(1)
        keep_screenshot(page, "summary", show=room)
        no_violations(page, ".course-class-review")
        # at 320 CSS px nothing is cut: the count box ("Got it right:") wraps, the buttons keep their text
        room.focus()
        page.keyboard.press("ArrowLeft")
        expect(room).to_contain_text("Class review · question 6 / ")
        at_320(page)
        assert room.evaluate(_CUT) == [], "the class review is cut at 320 px"
        box = room.locator(".course-class-count")
        assert box.evaluate(
            "(e) => e.getBoundingClientRect().right <= "
            "e.closest('.course-class-review').getBoundingClientRect().right + 1"
        )
        page.evaluate(_TEXT_SPACING)
        page.wait_for_timeout(200)
        assert room.evaluate(_BUTTONS_CUT) == [], "a button's text is cut at 320 px with 1.4.12's spacing"
        assert room.evaluate(_CUT) == [], "the class review is cut at 320 px with 1.4.12's spacing"
        page.evaluate("() => document.getElementById('text-spacing').remove()")
        keep_screenshot(page, "320px", show=box)
        no_violations(page, ".course-class-review")
    assert not db.exists(), "a class review never touches a learner's progress"
    with ClassReviewLog.open(sessions, create=False) as log:
        (session,) = log.sessions()
    second, third = load_bank().questions("02")[1:3]
    assert sorted((t.question_id, t.right) for t in session.tallies) == sorted(
        [(first.id, 7), (second.id, 0), (third.id, 5)]
    )


LIVE_CELL = """
import time
from datetime import datetime, timezone
from course import load_bank
from course.widgets._live_answer import LiveAnswerWidget
from scheduler.postgres import LiveState

QUESTION = next(q for q in load_bank().questions("02") if q.kind == "choice")
T0 = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)


class Room:  # a live room the instructor reveals a second after an answer arrives
    def __init__(self):
        self.sent, self.reveal_at = [], None

    def state(self, session=None, *, room=None):
        revealed = self.reveal_at is not None and time.monotonic() > self.reveal_at
        layout = ",".join(str(i) for i in range(len(QUESTION.options)))
        return LiveState(1, "teacher", "Week 3", 1, QUESTION.id, layout, revealed, False, T0, "r")

    def open_sessions(self):
        return [self.state()]

    def my_answer(self, session, position):
        return self.sent[-1] if self.sent else None

    def answer(self, state, answer, at):
        self.sent.append(answer)
        self.reveal_at = time.monotonic() + 1.5

    def close(self):
        pass


room = Room()
shown = LiveAnswerWidget(room=room, room_name="r", every=0.5)
shown
"""


@pytest.mark.browser
@pytest.mark.timeout(150, method="signal")
def test_a_live_answer_by_keyboard_is_pressed_and_the_reveal_takes_the_focus_in_the_browser(
    tmp_path: Path,
) -> None:
    """live(), as a learner answers by keyboard: the chosen option is pressed (aria-pressed, white on #00695c,
    a ring, bold: not by colour alone), and when the answer is revealed the focus goes to what it says, not to
    the page; axe-core finds nothing, and at 320 px nothing is cut off."""
    require_browser()
    from playwright.sync_api import expect

    with lab_in_browser(tmp_path) as (lab, page, db):
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(LIVE_CELL)]),
            tmp_path / "course" / "live.ipynb",
        )
        open_notebook(lab, page, "live.ipynb", db)
        nb.run_all(page)
        nb.wait_for_text(page, ".course-live", "Question 1")
        widget = page.locator(".course-live")
        options = widget.locator("button.course-option")
        expect(options.first).to_be_visible()
        assert [options.nth(i).get_attribute("aria-pressed") for i in range(options.count())] == (
            ["false"] * options.count()
        )
        options.nth(1).focus()
        page.keyboard.press("Enter")
        expect(options.nth(1)).to_have_attribute("aria-pressed", "true")
        expect(options.nth(0)).to_have_attribute("aria-pressed", "false")
        look = options.nth(1).evaluate(
            "(e) => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color, "
            "getComputedStyle(e).fontWeight, getComputedStyle(e).boxShadow.includes('inset')]"
        )
        assert look == ["rgb(0, 105, 92)", "rgb(255, 255, 255)", "700", True]  # 6.6:1, and not colour alone
        no_violations(page, ".course-live")
        # the reveal: the buttons are disabled, and the focus goes to the verdict, not to the page
        expect(widget).to_contain_text("the answer is", timeout=10_000)
        expect(options.nth(1)).to_be_disabled()
        expect(widget.locator("[class*='course-focus-']", has_text="the answer is")).to_be_focused()
        no_violations(page, ".course-live")
        page.set_viewport_size({"width": 320, "height": 900})
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.wait_for_timeout(300)
        cut = widget.evaluate("(e) => e.scrollWidth - e.clientWidth")
        assert cut <= 1, f"the live widget is {cut} px wider than a 320 px screen"
        keep_screenshot(page, "revealed-320", show=widget)


PROJECTOR_CELL = """
from datetime import datetime, timezone
import random
from course import load_bank
from course.widgets._live_projector import LiveProjectorWidget
from scheduler.postgres import LiveAnswers, LiveState

BANK = load_bank()
QUESTIONS = [BANK.get(i) for i in ("01-scale-dot-vs-cosine", "02-dot-variance", "02-score-shape")]
T0 = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)
# what the class answered to each question (a numeric one's answers as typed: long numbers among them)
ANSWERS = [
    {"1": 14, "0": 5, "3": 3, "2": 2},
    {"256": 11, "16": 6, "0.0625": 2, "65536": 1, "1234567890123456789012345678.5": 1, "1.5e-300": 1, "3": 1},
    {"1": 20, "0": 3, "3": 1},
]


class Room:  # a live room with no database: the answers above arrive at once
    def __init__(self):
        self.now = LiveState(1, "teacher", "t", 0, None, "", False, False, T0, "teacher")

    def _set(self, **changes):
        fields = dict(self.now.__dict__, **changes)
        self.now = LiveState(**fields)
        return self.now

    def start(self, title, at, room=None):
        return self._set(title=title, room=room or "teacher")

    def ask(self, session, item_id, at, layout=""):
        return self._set(position=self.now.position + 1, item_id=item_id, layout=layout, revealed=False)

    def reveal(self, session, at):
        return self._set(revealed=True)

    def end(self, session, at):
        return self._set(ended=True)

    def answers(self, session, position):
        return LiveAnswers(dict(ANSWERS[position - 1]))

    def results(self, session):
        return [(i + 1, q.id, LiveAnswers(dict(ANSWERS[i]))) for i, q in enumerate(QUESTIONS)]

    def close(self):
        pass


shown = LiveProjectorWidget(QUESTIONS, ["01", "02"], room=Room(), every=0.5, rng=random.Random(3))
shown
"""


@pytest.mark.browser
@pytest.mark.timeout(150, method="signal")
def test_the_live_projector_by_keyboard_fits_and_axe_in_the_browser(tmp_path: Path) -> None:
    """The instructor's live projector, on a fake room, by keyboard alone: Start (Enter), Space reveals, the
    right arrow asks the next question, Finish (Enter) ends; after each the focus is in the widget, never on
    the page. Its counts wrap at 1280 px and at 320 px (a numeric question's long answers too), its buttons
    keep their text with WCAG 1.4.12's text spacing, and axe-core finds nothing at either width."""
    require_browser()
    from playwright.sync_api import expect

    with lab_in_browser(tmp_path) as (lab, page, db):
        page.set_viewport_size({"width": 1280, "height": 720})
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROJECTOR_CELL)]),
            tmp_path / "course" / "projector.ipynb",
        )
        open_notebook(lab, page, "projector.ipynb", db)
        nb.run_all(page)
        nb.wait_for_text(page, ".course-class-review", "Press Start to begin")
        room = page.locator(".course-class-review")
        expect(room).to_be_focused()
        assert room.get_attribute("role") == "application"
        no_violations(page, ".course-class-review")
        start = room.get_by_role("button", name="Start")
        start.focus()
        page.keyboard.press("Enter")
        expect(room).to_contain_text("question 1 / 3")
        expect(start).to_be_disabled()
        expect(room).to_be_focused()  # Start, disabled once pressed, gives the focus back to the widget
        assert page.evaluate(_NOT_ON_BODY)
        rows = room.locator(".course-live-row")
        expect(rows).to_have_count(4)
        expect(room.locator(".course-live-tally")).to_contain_text("24 answered")
        assert room.evaluate(_CUT) == []
        page.keyboard.press("Space")  # reveal
        expect(room.locator(".course-live-right")).to_have_count(1)
        expect(room.locator(".course-live-answer")).to_contain_text("Answer: ")
        assert page.evaluate(_NOT_ON_BODY)
        expect(room).to_be_focused()
        nb.wait_math_typeset(page, ".course-class-review .widget-htmlmath")
        assert room.evaluate(_CUT) == []
        keep_screenshot(page, "choice-revealed-1280x720", show=room.locator(".course-live-answer"))
        no_violations(page, ".course-class-review")
        page.evaluate(_TEXT_SPACING)
        page.wait_for_timeout(200)
        assert room.evaluate(_BUTTONS_CUT) == [], "a button's text is cut with WCAG 1.4.12's spacing"
        assert room.evaluate(_CUT) == []
        page.evaluate("() => document.getElementById('text-spacing').remove()")

        page.keyboard.press("ArrowRight")  # the numeric question
        expect(room).to_contain_text("question 2 / 3")
        assert page.evaluate(_NOT_ON_BODY)
        expect(rows).to_have_count(6)  # the 5 answers most given, then "other"
        expect(room.locator(".course-live-tally")).to_contain_text("23 answered")
        page.wait_for_timeout(300)
        assert room.evaluate(_CUT) == [], "a numeric question's counts are cut at 1280 px"
        keep_screenshot(page, "numeric-1280x720", show=room.locator(".course-class-prompt"))
        page.keyboard.press("Space")
        expect(room.locator(".course-live-right")).to_have_count(1)
        assert page.evaluate(_NOT_ON_BODY)
        assert room.evaluate(_CUT) == []
        keep_screenshot(page, "numeric-revealed-1280x720", show=rows.first)
        no_violations(page, ".course-class-review")

        at_320(page)
        assert room.evaluate(_CUT) == [], "the numeric question's counts are cut at 320 px"
        keep_screenshot(page, "numeric-revealed-320", show=rows.first)
        no_violations(page, ".course-class-review")
        page.keyboard.press("ArrowRight")  # the last question: Next says Finish
        expect(room).to_contain_text("question 3 / 3")
        assert page.evaluate(_NOT_ON_BODY)
        nb.wait_math_typeset(page, ".course-class-review .widget-htmlmath")
        expect(room.locator(".course-live-tally")).to_contain_text("24 answered")
        page.wait_for_timeout(300)
        assert room.evaluate(_CUT) == [], "a choice question's counts are cut at 320 px"
        page.keyboard.press("Space")
        expect(room.locator(".course-live-right")).to_have_count(1)
        assert page.evaluate(_NOT_ON_BODY)
        assert room.evaluate(_CUT) == []
        keep_screenshot(page, "choice-revealed-320", show=rows.first)
        no_violations(page, ".course-class-review")
        page.evaluate(_TEXT_SPACING)
        page.wait_for_timeout(200)
        assert room.evaluate(_BUTTONS_CUT) == [], "a button's text is cut at 320 px with 1.4.12's spacing"
        page.evaluate("() => document.getElementById('text-spacing').remove()")
        finish = room.get_by_role("button", name="Finish")
        finish.focus()
        page.keyboard.press("Enter")
        expect(room).to_contain_text("Live session 1 ended.")
        expect(room.locator("button.course-next")).to_be_disabled()  # named "Next ▶" again
        assert page.evaluate(_NOT_ON_BODY)
        expect(room).to_be_focused()  # Finish, disabled at the end, gives the focus back
        expect(room.locator("h3", has_text="Most missed first")).to_have_count(1)
        assert room.evaluate(_CUT) == []
        no_violations(page, ".course-class-review")


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
