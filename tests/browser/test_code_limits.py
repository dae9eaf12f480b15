"""A code card that never ends, in JupyterLab with its default settings and headless Chromium (issue 32).

JupyterLab 4.6 runs widget callbacks on a kernel subshell thread (``commsOverSubshells``, on by default),
where no signal reaches: the time limit and Kernel > Interrupt must still stop the learner's code there. One
notebook holds a quiz (a code card, then a numeric question) and a review (one code card, with fsrs's
same-day steps so that an Again comes back in the session), each on a store of its own. ``while True: pass``
is typed into the code box and sent with Shift+Enter:

1. in the quiz, Kernel > Interrupt (the menu) at 3 s: the notice says the code was stopped and nothing was
   saved, the box can be edited again; sent again and left alone, the verdict "ran for more than 10 seconds"
   comes after 10 s, saved as Again; Next brings the second question;
2. in the review, the same verdict, saved as Again; Next brings the card back;
3. in the review, Kernel > Interrupt at 3 s: nothing saved, the box enabled; a right answer is then Good.

After each verdict or interruption the kernel is idle (its status in Lab, and the toolbar's indicator), it
still runs code, and no process of the learner's code is left. Lab says "Idle" even while a callback runs on a
subshell, so the proof that the widget's subshell is free again is that the next click is answered (Next).

Needs the system Chromium and the playwright package, as ``tests/browser/test_first_day.py`` (whose helpers
it uses). Set ``COURSE_BROWSER_SCREENSHOT`` to a directory to keep a screenshot of the timed-out verdict.
"""

from __future__ import annotations

import contextlib
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import nbformat
import pytest

from browser import notebook as nb
from browser.lab import JupyterLab
from browser.test_code_card import BANK as REVIEW_BANK
from browser.test_first_day import keep_screenshot, lab_in_browser, open_notebook, require_browser
from course.checkers import run_code_limited
from course.widgets._panel import CODE_SECONDS
from scheduler import Nudge, Rating, Store

QUIZ_BANK = (
    REVIEW_BANK
    + """
[[question]]
id = "05-mask-count"
kind = "numeric"
prompt = '''How many entries of a (4, 4) causal mask are True?'''
answer = 10
tolerance = 0
explanation = '''The lower triangle with its diagonal: 4 + 3 + 2 + 1.'''
section = "2. The causal mask"
"""
)

CELLS = (
    """from course.bank import load_bank
from course.widgets import QuizWidget
QuizWidget("05", load_bank(r'{bank}').questions("05"), store=r'{quiz_db}')""",
    """from datetime import timedelta
from course.bank import load_bank
from course.widgets import ReviewWidget
from scheduler import Memory, Store
steps = dict(
    learning_steps=(timedelta(minutes=1), timedelta(minutes=10)), relearning_steps=(timedelta(minutes=10),)
)
ReviewWidget(load_bank(r'{bank}'), store=Store.open(r'{db}', memory=Memory(**steps)))""",
)
NOTEBOOK = "limits.ipynb"

LOOP = "while True: pass"
RIGHT = "def causal_mask(t):\n    return np.arange(t)[None, :] <= np.arange(t)[:, None]\n"
TIMED_OUT = f"✗ Not quite: Your code ran for more than {CODE_SECONDS:.0f} seconds: it was stopped."
STOPPED = (
    "Your code was stopped before it finished (the kernel was interrupted). Nothing was saved: change it and "
    "run it again."
)
RIGHT_SAID = "✓ Right: causal mask: all 3 cases pass. Not saved yet: press Next to save it."
SLACK = 15.0  # seconds over the limit for the child to start and be stopped, on a loaded machine
INTERRUPT_AT = 3.0  # seconds after the code was sent

# The toolbar's kernel status: the execution indicator's data-status, else the status bar's kernel label.
_INDICATOR = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const node = panel.node.querySelector('.jp-Notebook-ExecutionIndicator')
    || document.querySelector('.jp-Notebook-ExecutionIndicator');
  return node ? node.getAttribute('data-status') : null;
}"""


def reviews(path: Path) -> list[tuple[str, Rating]]:
    """The answers saved in the store at `path`, oldest first (none when it does not exist yet)."""
    if not path.exists():
        return []
    with Store.open(path, create=False) as store:
        return [(review.item_id, review.rating) for review in store.reviews()]


def learner_processes(lab: JupyterLab) -> list[int]:
    """The processes running a learner's code (``course/checkers/_learner.py``) under this JupyterLab."""
    found = []
    for pid in lab._sandboxed_pids():
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(part.endswith(b"_learner.py") for part in command):
                found.append(pid)
    return found


def send(page: Any, box: Any, code: str) -> float:
    """Put `code` in the code box (typed when it is one line, else filled in: the box may indent as it is
    typed) and send it with Shift+Enter; when it was sent (``time.monotonic``)."""
    box.focus()
    page.keyboard.press("ControlOrMeta+a")
    if "\n" in code:
        box.fill(code)
    else:
        page.keyboard.type(code)
    page.keyboard.press("Shift+Enter")
    return time.monotonic()


def interrupt_kernel(page: Any) -> None:
    """Kernel > Interrupt Kernel, from Lab's menu bar."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Kernel$")).click()
    page.locator(".lm-Menu-item:visible", has_text="Interrupt Kernel").first.click()


def kernel_is_idle_and_alone(lab: JupyterLab, page: Any, notebook: str = NOTEBOOK) -> None:
    """The kernel is idle in Lab and in the toolbar, answers, and runs no learner's code any more."""
    nb.wait_kernel_idle(page, notebook, timeout_ms=10_000)
    page.wait_for_function(f"() => ({_INDICATOR})() === 'idle'", timeout=10_000, polling=100)
    assert nb.kernel_exec(page, "print(6 * 7)") == "42\n"
    deadline = time.monotonic() + 5
    while learner_processes(lab):
        assert time.monotonic() < deadline, f"a learner's code still runs: {learner_processes(lab)}"
        time.sleep(0.1)


@pytest.mark.browser
@pytest.mark.timeout(300, method="signal")
def test_an_endless_loop_in_a_code_card_is_stopped_by_time_and_by_interrupt_in_the_browser(
    tmp_path: Path,
) -> None:
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    quiz_bank, review_bank = tmp_path / "quiz-bank", tmp_path / "review-bank"
    for folder, text in ((quiz_bank, QUIZ_BANK), (review_bank, REVIEW_BANK)):
        folder.mkdir()
        (folder / "05-code.toml").write_text(text, encoding="utf-8")
    quiz_db = tmp_path / "quiz.sqlite3"
    assert run_code_limited(RIGHT, "causal_mask", "check_causal_mask").ok
    with lab_in_browser(tmp_path) as (lab, page, db):
        with Store.open(db) as store:
            store.enroll("05", datetime.now(timezone.utc))
        cells = [
            CELLS[0].format(bank=quiz_bank, quiz_db=quiz_db),
            CELLS[1].format(bank=review_bank, db=db),
        ]
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells]),
            tmp_path / "course" / NOTEBOOK,
        )
        open_notebook(lab, page, NOTEBOOK, db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "this session:")
        nb.wait_for_text(page, ".jp-OutputArea-output", "Quiz: lesson 05")
        outputs = nb.current_panel(page).locator(".jp-OutputArea-output", has=page.locator(".course-widget"))
        quiz = outputs.filter(has_text="Quiz: lesson 05")
        review = outputs.filter(has_text="this session:")
        expect(quiz).to_have_count(1)
        expect(review).to_have_count(1)
        kernel_is_idle_and_alone(lab, page)

        # 1. The quiz: the loop, interrupted at 3 s from the menu; nothing saved, the box editable again.
        status = quiz.get_by_role("status")
        box = quiz.get_by_role("textbox", name="Your code for causal_mask", exact=True)
        run = quiz.get_by_role("button", name="Run and check", exact=True)
        next_button = quiz.get_by_role("button", name="Next", exact=True)
        expect(quiz.get_by_text("Question 1 / 2")).to_have_count(1)
        sent = send(page, box, LOOP)
        expect(quiz.get_by_text("Running your code…")).to_have_count(1)
        expect(box).to_be_disabled()
        page.wait_for_timeout(max(0.0, INTERRUPT_AT - (time.monotonic() - sent)) * 1000)
        interrupt_kernel(page)
        expect(status).to_have_text(STOPPED, timeout=10_000)
        expect(box).to_be_enabled()
        expect(run).to_be_enabled()
        expect(box).to_have_value(LOOP)
        expect(quiz.get_by_text("A worked solution")).to_have_count(0)
        assert reviews(quiz_db) == []
        kernel_is_idle_and_alone(lab, page)

        # Sent again and left to run: stopped after 10 s, saved as Again; Next brings the second question.
        sent = send(page, box, LOOP)
        expect(status).to_have_text(
            re.compile(rf"^{re.escape(TIMED_OUT)} Saved: Again\. It comes back in \S.*\.$"),
            timeout=(CODE_SECONDS + SLACK) * 1000,
        )
        took = time.monotonic() - sent
        assert CODE_SECONDS <= took < CODE_SECONDS + SLACK, f"the verdict came after {took:.1f} s"
        expect(next_button).to_be_focused()
        expect(box).to_be_disabled()
        expect(quiz.get_by_text("A worked solution:", exact=True)).to_have_count(1)
        keep_screenshot(page, "timed-out", show=quiz)
        assert reviews(quiz_db) == [("05-code-causal-mask", Rating.AGAIN)]
        kernel_is_idle_and_alone(lab, page)
        page.keyboard.press("Enter")
        expect(quiz.get_by_text("Question 2 / 2")).to_have_count(1)
        expect(quiz.get_by_text("How many entries of a (4, 4) causal mask are True?")).to_have_count(1)
        expect(quiz.get_by_text("Previous question: Saved: Again.")).to_have_count(1)

        # 2. The review: the loop, stopped after 10 s, saved as Again; Next brings the card back.
        status = review.get_by_role("status")
        box = review.get_by_role("textbox", name="Your code for causal_mask", exact=True)
        run = review.get_by_role("button", name="Run and check", exact=True)
        next_button = review.get_by_role("button", name="Next", exact=True)
        sent = send(page, box, LOOP)
        expect(status).to_have_text(
            f"{TIMED_OUT} Saved: Again. It comes back later in this session.",
            timeout=(CODE_SECONDS + SLACK) * 1000,
        )
        took = time.monotonic() - sent
        assert CODE_SECONDS <= took < CODE_SECONDS + SLACK, f"the verdict came after {took:.1f} s"
        expect(next_button).to_be_focused()
        keep_screenshot(page, "review-timed-out", show=review)
        assert reviews(db) == [("05-code-causal-mask", Rating.AGAIN)]
        kernel_is_idle_and_alone(lab, page)
        page.keyboard.press("Enter")
        expect(review.get_by_text("Previous question: Saved: Again.")).to_have_count(1)
        expect(box).to_be_enabled()
        expect(box).to_have_value("def causal_mask(t):\n    ...\n")

        # 3. The loop again, Kernel > Interrupt at 3 s: nothing saved, the box editable; then a right answer.
        sent = send(page, box, LOOP)
        expect(review.get_by_text("Running your code…")).to_have_count(1)
        page.wait_for_timeout(max(0.0, INTERRUPT_AT - (time.monotonic() - sent)) * 1000)
        interrupt_kernel(page)
        expect(status).to_have_text(STOPPED, timeout=10_000)
        expect(box).to_be_enabled()
        expect(run).to_be_enabled()
        expect(box).to_have_value(LOOP)
        assert reviews(db) == [("05-code-causal-mask", Rating.AGAIN)]
        kernel_is_idle_and_alone(lab, page)
        send(page, box, RIGHT)
        expect(status).to_have_text(RIGHT_SAID)
        expect(next_button).to_be_focused()
        expect(review.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_checked()
        page.keyboard.press("Enter")
        expect(review.get_by_text("Previous question: Saved: Good.")).to_have_count(1)
        kernel_is_idle_and_alone(lab, page)

    assert reviews(db) == [("05-code-causal-mask", Rating.AGAIN), ("05-code-causal-mask", Rating.GOOD)]
    assert reviews(quiz_db) == [("05-code-causal-mask", Rating.AGAIN)]


@pytest.mark.browser
@pytest.mark.timeout(240, method="signal")
def test_the_workbooks_review_notebook_stops_a_loop_in_the_courses_own_code_card(tmp_path: Path) -> None:
    """The learner's own review notebook (the workbook's review.ipynb, the shipped bank): lesson 05's code
    card, brought back by a mistake, answered with an endless loop."""
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    with lab_in_browser(tmp_path) as (lab, page, db):
        now = datetime.now(timezone.utc)
        with Store.open(db) as store:
            store.nudge(Nudge("05-code-causal-mask", now, now, "causal-top-left"))
        notebook = "workbook/review.ipynb"
        open_notebook(lab, page, notebook, db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "this session:")
        widgets = nb.current_panel(page).locator(".jp-OutputArea-output", has=page.locator(".course-widget"))
        review = widgets.first  # review(), the notebook's first widget (live() is its last)
        expect(review).to_contain_text("this session:")
        expect(review.get_by_text(re.compile(r"this session: 0 due now, 1 new"))).to_have_count(1)
        status = review.get_by_role("status")
        box = review.get_by_role("textbox", name="Your code for causal_mask", exact=True)
        next_button = review.get_by_role("button", name=re.compile(r"^(Next|Finish)$"))
        kernel_is_idle_and_alone(lab, page, notebook)
        sent = send(page, box, LOOP)
        expect(status).to_have_text(
            re.compile(rf"^{re.escape(TIMED_OUT)} Saved: Again\. "), timeout=(CODE_SECONDS + SLACK) * 1000
        )
        took = time.monotonic() - sent
        assert CODE_SECONDS <= took < CODE_SECONDS + SLACK, f"the verdict came after {took:.1f} s"
        expect(next_button).to_be_focused()
        assert reviews(db) == [("05-code-causal-mask", Rating.AGAIN)]
        kernel_is_idle_and_alone(lab, page, notebook)
        page.keyboard.press("Enter")  # the session goes on: here, to its end
        expect(status).to_have_text(re.compile(r"^0 of 1 remembered\. "))
        kernel_is_idle_and_alone(lab, page, notebook)
