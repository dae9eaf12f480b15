"""The code box of the review, practice and quiz widgets: the learner's code run in this process by the card's
checker, right saved as Good (Hard and Easy offered), wrong as Again with the checker's sentence and a worked
solution; driven through the widgets' Python API with a real SQLite store, a bank in tmp_path and a fixed
clock."""

from __future__ import annotations

import html
import json
import random
import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fixed_clock import T0, Clock

import course.checkers
from course.bank import Bank, Kind, Question, load_bank
from course.checkers import CheckResult, CodeVerdict
from course.widgets import CramWidget, QuizWidget, ReviewWidget
from course.widgets._chrome import (
    _SCRIPT,
    ANSWER_ROW_CLASS,
    CHROME,
    CODE_CLASS,
    CODE_HINT_CLASS,
    FOCUS_PREFIX,
)
from course.widgets._code import CODE_HINT, code_rows
from course.widgets._panel import CONTROLS, QuestionPanel
from scheduler import Rating, Store

BANK = """lesson = "05"

[[question]]
id = "05-code-mask"
kind = "code"
prompt = '''Write `causal_mask(t)`: a (t, t) boolean mask, True where query i may attend to key j.'''
checker = "check_causal_mask"
function = "causal_mask"
starter = '''
def causal_mask(t):
    ...
'''
solution = '''
def causal_mask(t):
    return np.tril(np.ones((t, t), dtype=bool))
'''
explanation = '''Query i sees keys 0 to i: the **lower** triangle, diagonal included.'''
section = "2. The causal mask"

[[question]]
id = "05-code-double"
kind = "code"
prompt = '''Write `double(x)`, which returns twice `x`.'''
checker = "check_card_test_double"
function = "double"
starter = '''
def double(x):
    ...
'''
solution = '''
def double(x):
    return 2 * x
'''
explanation = '''Twice $x$ is $2x$.'''
section = "2. The causal mask"
"""

RIGHT = "def causal_mask(t):\n    return np.tril(np.ones((t, t), dtype=bool))\n"
WRONG = "def causal_mask(t):\n    return np.triu(np.ones((t, t), dtype=bool))\n"  # the upper triangle
WRONG_SAID = (
    "causal mask, case 1 of 3 (T = 4): query 0 may attend to key 1, a future position (mask[0, 1] should be "
    "False); it is the upper triangle, j >= i: each query sees the future; keep the lower one, j <= i."
)
SOLUTION_HTML = "<pre><code>def causal_mask(t):\n    return np.tril(np.ones((t, t), dtype=bool))</code></pre>"


def check_card_test_double(fn: Callable[[int], int]) -> CheckResult:
    """A checker of this test's own, set on course.checkers as a card's checker is found there."""
    got = fn(21)
    message = (
        "✓ double: 1 case passes." if got == 42 else f"✗ double, case 1 of 1 (x = 21): got {got!r}, not 42."
    )
    print(message)
    return CheckResult(message.startswith("✓"), message)


@pytest.fixture(autouse=True)
def test_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(course.checkers, "check_card_test_double", check_card_test_double, raising=False)


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "05-code.toml").write_text(BANK, encoding="utf-8")
    return load_bank(directory)


def enrolled(db: Path) -> Path:
    with Store.open(db) as store:
        store.enroll("05", T0)
    return db


def make_review(bank: Bank, db: Path, clock: Clock) -> ReviewWidget:
    return ReviewWidget(bank, store=enrolled(db), clock=clock, tz=timezone.utc, rng=random.Random(0))


def saved(db: Path) -> list[tuple[str, Rating, datetime, int | None]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()]


def type_and_send(widget: QuestionPanel, code: str, count: int = 1) -> None:
    """What the chrome's script sends at Shift+Enter (or a click on Run and check): "<count>:<code as JSON>"
    through the hidden box, whatever value the code box itself last sent."""
    assert widget.code is not None
    widget.code.typed.value = f"{count}:{json.dumps(code)}"


def test_every_kind_has_its_controls_code_among_them() -> None:
    assert sorted(CONTROLS) == sorted(Kind)
    assert CONTROLS[Kind.CODE] is QuestionPanel._code_controls


def test_a_code_card_shows_its_starter_in_a_named_code_box(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_review(bank, db, clock)
    question = widget.question
    assert question is not None and question.id == "05-code-mask"
    code = widget.code
    assert code is not None
    assert widget.answer_area.children == (code.row,)
    assert ANSWER_ROW_CLASS in code.row._dom_classes
    assert code.box.value == "def causal_mask(t):\n    ...\n"
    assert code.box.description == "Your code for causal_mask"  # its label: the box's accessible name
    assert CODE_CLASS in code.box._dom_classes and code.box.rows == 6
    assert CODE_HINT in html.unescape(code.hint.value) and CODE_HINT_CLASS in code.hint._dom_classes
    assert CODE_HINT == (
        "Enter keeps the indentation (one level more after a colon), Backspace at an indent removes one "
        "level, Tab indents by 4 spaces; to leave the box, press Escape then Tab (or Shift+Tab). "
        "Shift+Enter runs and checks your code."
    )
    assert code.button.description == "Run and check"
    assert not code.box.disabled and not code.button.disabled
    assert widget.feedback.value == "" and widget.rating_area.children == ()
    assert CODE_CLASS in CHROME and "insertText" in CHROME  # the page script makes Tab indent


def test_the_chromes_script_is_valid_javascript(tmp_path: Path) -> None:
    # A slip in the script (an unescaped "\\n" in its Python source) breaks every widget in the browser only.
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the browser tests check the script instead")
    script = tmp_path / "chrome.js"
    script.write_text(f"var run = function () {{ {_SCRIPT} }};", encoding="utf-8")
    checked = subprocess.run([node, "--check", str(script)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_code_rows_grow_with_the_code() -> None:
    assert [code_rows("\n" * n) for n in (0, 4, 5, 6, 37, 38, 100)] == [6, 6, 7, 8, 39, 40, 40]


def test_wrong_code_is_saved_as_again_with_the_checkers_sentence_and_the_solution(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = make_review(bank, db, clock)
    clock.advance(seconds=40)
    type_and_send(widget, WRONG)
    assert saved(db) == [("05-code-mask", Rating.AGAIN, T0.replace(second=40), 40_000)]
    assert widget.saved == Rating.AGAIN
    feedback = widget.feedback.value
    assert feedback.startswith(f"<p><b>✗ Not quite:</b> {html.escape(WRONG_SAID)}</p>")
    assert f"<p><b>A worked solution:</b></p>{SOLUTION_HTML}" in feedback
    assert "the <strong>lower</strong> triangle" in feedback or "the <b>lower</b> triangle" in feedback
    assert "See: lesson 05" in feedback
    status = html.unescape(widget.status.value)
    assert status.startswith(f"<p>✗ Not quite: {WRONG_SAID} Saved: Again.")
    # the code graded stays in view, every line of it; nothing more can be sent
    code = widget.code
    assert code is not None and code.box.value == WRONG and code.box.disabled and code.button.disabled
    assert widget.rating_area.children == (widget.next_button,)
    type_and_send(widget, RIGHT, count=2)
    assert len(saved(db)) == 1


def test_right_code_is_good_unless_the_learner_says_hard_or_easy(bank: Bank, db: Path, clock: Clock) -> None:
    widget = make_review(bank, db, clock)
    clock.advance(seconds=30)
    type_and_send(widget, RIGHT)
    assert saved(db) == []  # saved on Next, with the rating then chosen
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> causal mask: all 3 cases pass.</p>")
    assert f"<p><b>A worked solution, to compare with yours:</b></p>{SOLUTION_HTML}" in widget.feedback.value
    assert html.unescape(widget.status.value) == (
        "<p>✓ Right: causal mask: all 3 cases pass. Not saved yet: press Next to save it.</p>"
    )
    choice = widget.rating_choice
    assert choice is not None and choice.value == Rating.GOOD
    assert [value for _label, value in choice.options] == [Rating.HARD, Rating.GOOD, Rating.EASY]
    choice.value = Rating.EASY
    clock.advance(seconds=5)
    widget.next_button.click()
    assert saved(db) == [("05-code-mask", Rating.EASY, T0.replace(second=30), 30_000)]


def test_next_puts_the_focus_on_the_question_never_in_the_code_box(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = make_review(bank, db, clock)
    type_and_send(widget, RIGHT)
    widget.next_button.click()  # Good
    assert widget.question is not None and widget.question.id == "05-code-double"
    assert any(name.startswith(FOCUS_PREFIX) for name in widget.prompt._dom_classes)
    code = widget.code
    assert code is not None and code.box.value == "def double(x):\n    ...\n"
    assert code.box.description == "Your code for double"
    assert not any(name.startswith(FOCUS_PREFIX) for name in code.box._dom_classes)
    # a checker set on course.checkers grades the next card
    code.box.value = "def double(x):\n    return x + x\n"
    code.button.click()  # where the page script does not run, the click reads the box
    assert widget.feedback.value.startswith("<p><b>✓ Right:</b> double: 1 case passes.</p>")
    widget.next_button.click()
    assert [(item, rating) for item, rating, *_ in saved(db)] == [
        ("05-code-mask", Rating.GOOD),
        ("05-code-double", Rating.GOOD),
    ]


def test_the_code_sent_is_graded_not_a_stale_box_value(bank: Bank, db: Path, clock: Clock) -> None:
    # Typed at full speed: the box's last value update may still be on its way when Shift+Enter is pressed;
    # what the script sends with the submission is what is graded.
    widget = make_review(bank, db, clock)
    code = widget.code
    assert code is not None
    code.box.value = "def causal_mask(t):\n    return np.tr"  # the box as last synced
    type_and_send(widget, RIGHT)
    assert widget.verdict is not None and widget.verdict.right
    assert code.box.value == RIGHT and code.box.rows == 6
    type_and_send(widget, WRONG, count=2)  # a second submission changes nothing
    assert widget.verdict.right
    for broken in ("7", "7:not json", "7:[1, 2]"):  # not what the script sends: ignored
        code.typed.value = broken
    widget.next_button.click()
    assert [rating for _item, rating, *_ in saved(db)] == [Rating.GOOD]


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        (
            "def mask(t):\n    return np.tri(t, dtype=bool)\n",
            "Your code defines no function named causal_mask.",
        ),
        ("", "Your code defines no function named causal_mask."),
        ("def causal_mask(t):\n    ...\n", "You sent the starter unchanged."),
        (
            "def causal_mask(t):\n    raise NotImplementedError\n",
            "Your causal_mask is not written yet: it raises NotImplementedError.",
        ),
        (
            "from course.attention import causal_mask\n",
            "Write it yourself: your code imports course.attention, the course&#x27;s own code, and a card "
            "asks for yours, from memory (np and math are there already).",
        ),
    ],
    ids=["no such function", "empty", "the starter", "a stub", "the course's own code"],
)
def test_code_that_cannot_be_judged_is_wrong_with_one_sentence(
    bank: Bank, db: Path, clock: Clock, typed: str, said: str
) -> None:
    widget = make_review(bank, db, clock)
    type_and_send(widget, typed)
    assert widget.feedback.value.startswith(f"<p><b>✗ Not quite:</b> {said}</p>")
    assert "Traceback" not in widget.feedback.value
    assert [rating for _item, rating, *_ in saved(db)] == [Rating.AGAIN]


def test_a_syntax_error_is_shown_with_its_line_and_saves_nothing_until_fixed(
    bank: Bank, db: Path, clock: Clock
) -> None:
    widget = make_review(bank, db, clock)
    type_and_send(widget, "def causal_mask(t):\n    return (\n")
    assert widget.notice.value == (
        "<p><b>✗ Your code has a syntax error on line 2: &#x27;(&#x27; was never closed.</b> Nothing was "
        "saved: fix it and run it again.</p>"
    )
    code = widget.code
    assert code is not None and not code.box.disabled and not code.button.disabled
    assert widget.answered_at is None and widget.feedback.value == "" and saved(db) == []
    type_and_send(widget, RIGHT, count=2)  # fixed: judged and saved as any answer
    assert widget.verdict is not None and widget.verdict.right and widget.notice.value == ""
    widget.next_button.click()
    assert [rating for _item, rating, *_ in saved(db)] == [Rating.GOOD]


def test_a_runner_that_fails_saves_nothing_and_lets_the_learner_try_again(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(code: str, function: str, checker: str, **limits: object) -> CodeVerdict:
        raise RuntimeError("the runner broke")

    monkeypatch.setattr(course.checkers, "run_code_limited", broken)
    widget = make_review(bank, db, clock)
    type_and_send(widget, RIGHT)
    assert widget.notice.value == (
        "<p><b>✗ Could not run your code</b> (RuntimeError: the runner broke). Nothing was saved. This is a "
        "bug in the course: please report it with this message.</p>"
    )
    assert widget.answered_at is None and widget.feedback.value == ""
    code = widget.code
    assert code is not None and not code.box.disabled and not code.button.disabled
    assert saved(db) == []
    monkeypatch.undo()
    monkeypatch.setattr(course.checkers, "check_card_test_double", check_card_test_double, raising=False)
    type_and_send(widget, RIGHT, count=2)
    assert widget.verdict is not None and widget.verdict.right


def test_code_stopped_by_an_interrupt_is_not_an_answer(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(code: str, function: str, checker: str, **limits: object) -> CodeVerdict:
        raise KeyboardInterrupt  # Kernel → Interrupt while `while True: pass` runs

    monkeypatch.setattr(course.checkers, "run_code_limited", interrupted)
    widget = make_review(bank, db, clock)
    type_and_send(widget, "def causal_mask(t):\n    while True:\n        pass\n")
    assert widget.notice.value == (
        "<p><b>Your code was stopped</b> before it finished (the kernel was interrupted). Nothing was saved: "
        "change it and run it again.</p>"
    )
    assert html.unescape(widget.status.value) == (
        "<p>Your code was stopped before it finished (the kernel was interrupted). Nothing was saved: change "
        "it and run it again.</p>"
    )
    code = widget.code
    assert code is not None and not code.box.disabled and widget.answered_at is None and saved(db) == []


def test_the_quiz_saves_code_answers_and_counts_them(bank: Bank, db: Path, clock: Clock) -> None:
    questions: list[Question] = bank.questions("05")
    widget = QuizWidget("05", questions, store=db, clock=clock, tz=timezone.utc, rng=random.Random(0))
    assert not db.exists()
    type_and_send(widget, WRONG)
    widget.next_button.click()
    assert widget.code is not None
    type_and_send(widget, "def double(x):\n    return 2 * x\n", count=2)
    widget.next_button.click()  # Finish
    assert [(item, rating) for item, rating, *_ in saved(db)] == [
        ("05-code-mask", Rating.AGAIN),
        ("05-code-double", Rating.GOOD),
    ]
    assert widget.prompt.value.startswith("<p><b>1 of 2 right.</b>")


def test_practice_saves_code_answers_to_the_practice_log(bank: Bank, db: Path, clock: Clock) -> None:
    widget = CramWidget(bank, ["05"], store=db, clock=clock, tz=timezone.utc, rng=random.Random(0))
    first = widget.question
    assert first is not None and widget.code is not None
    type_and_send(widget, RIGHT if first.id == "05-code-mask" else "def double(x):\n    return 2 * x\n")
    widget.next_button.click()
    with Store.open(db, create=False) as store:
        assert [(r.item_id, r.rating) for r in store.cram_reviews()] == [(first.id, Rating.GOOD)]
        assert store.reviews() == []


def test_every_code_card_of_the_course_shows_its_starter_and_its_solution_is_right(
    db: Path, clock: Clock
) -> None:
    cards = [question for question in load_bank().all() if question.kind == Kind.CODE]
    assert len({card.lesson for card in cards}) >= 8  # lessons 01-08
    widget = QuizWidget("05", cards, store=db, clock=clock, tz=timezone.utc, rng=random.Random(0))
    for number, card in enumerate(cards):
        assert widget.question == card
        code = widget.code
        assert code is not None and code.box.description == f"Your code for {card.function}"
        assert code.box.value == card.starter and code.box.rows >= 6
        type_and_send(widget, str(card.solution), count=number + 1)
        assert widget.verdict is not None and widget.verdict.right, (card.id, widget.feedback.value)
        widget.next_button.click()
    assert [rating for _item, rating, *_ in saved(db)] == [Rating.GOOD] * len(cards)


def test_a_loop_sent_from_another_thread_is_stopped_and_the_review_goes_on(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JupyterLab 4.6 runs a widget's callback on a kernel subshell thread, where no signal can reach."""
    import threading

    monkeypatch.setattr(course.widgets._panel, "CODE_SECONDS", 0.5)
    widget = make_review(bank, db, clock)
    sender = threading.Thread(target=type_and_send, args=(widget, "while True: pass\n"))
    sender.start()
    sender.join(timeout=60)
    assert not sender.is_alive()
    assert widget.feedback.value.startswith(
        "<p><b>✗ Not quite:</b> Your code ran for more than 0.5 seconds: it was stopped.</p>"
    )
    assert [rating for _item, rating, *_ in saved(db)] == [Rating.AGAIN]
    widget.next_button.click()
    assert widget.code is not None and widget.code.box.value == "def double(x):\n    ...\n"


def test_code_that_runs_too_long_is_stopped_and_wrong(
    bank: Bank, db: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(course.widgets._panel, "CODE_SECONDS", 0.3)
    widget = make_review(bank, db, clock)
    clock.advance(seconds=20)
    type_and_send(widget, "def causal_mask(t):\n    while True:\n        pass\n")
    assert widget.feedback.value.startswith(
        "<p><b>✗ Not quite:</b> Your code ran for more than 0.3 seconds: it was stopped.</p>"
    )
    assert saved(db) == [("05-code-mask", Rating.AGAIN, T0.replace(second=20), 20_000)]
