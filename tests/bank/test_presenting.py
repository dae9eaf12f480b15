"""Fair multiple choice: `course.bank` with exact values, then every front end over many presentations.

Each front end (quiz, review and cram widgets; terminal review and cram) is driven through its real API with a
seeded `random.Random`. Over `TIMES` presentations of a 4-option question answered wrong (so that it is served
again, or, in the quiz, by repeating it), every shown position must hold the right option about a quarter of
the time, and every feedback must name the right option by the label the learner saw.
"""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import timezone
from pathlib import Path

import pytest
from fixed_clock import T0, Clock
from store_helpers import pin_steps, steps_store

from course.bank import (
    LETTERS,
    NUMBERS,
    RECALL_RATINGS,
    RIGHT_RATINGS,
    Bank,
    Presentation,
    Question,
    Verdict,
    answer_text,
    auto_rating,
    final_rating,
    grade_choice,
    grade_number,
    load_bank,
    present,
)
from course.bank._bank import Option
from course.bank._presenting import ShownOption, number_text
from course.terminal import cli
from course.widgets import CramWidget, QuizWidget, ReviewWidget
from course.widgets._panel import QuestionPanel
from scheduler import Rating, Store

ALPHA, BETA, GAMMA, DELTA = (
    Option("alpha", False, "Not alpha."),
    Option("beta", False, "Not beta."),
    Option("gamma", True, "Gamma is third."),
    Option("delta", False, "Not delta."),
)
GREEK = Question(
    id="01-greek",
    lesson="01",
    kind="choice",
    prompt="Which is the third Greek letter?",
    answer="gamma",
    explanation="Alpha, beta, gamma.",
    section="1. Letters",
    options=(ALPHA, BETA, GAMMA, DELTA),
)
HOURS = Question(
    id="01-hours",
    lesson="01",
    kind="numeric",
    prompt="How many hours?",
    answer=4,
    explanation="Four.",
    section="1. Time",
    tolerance=0.5,
    unit="h",
)
RECALL = Question(
    id="01-why",
    lesson="01",
    kind="recall",
    prompt="Why?",
    answer="Because.",
    explanation="E.",
    section="1. Why",
)
SEED = 2025
TIMES = 800  # presentations per front end: a share's standard deviation is then 0.015 around 0.25


# -- the option order ---------------------------------------------------------------------------------------
def test_a_presentation_draws_a_new_order_from_the_rng_each_time() -> None:
    rng = random.Random(0)
    first, second = present(GREEK, rng), present(GREEK, rng)
    assert (first.order, second.order) == ((2, 0, 1, 3), (0, 1, 3, 2))
    assert present(GREEK, random.Random(0)) == first  # the same seed, the same order
    assert first.shown() == (
        ShownOption("A", GAMMA),
        ShownOption("B", ALPHA),
        ShownOption("C", BETA),
        ShownOption("D", DELTA),
    )
    assert (first.right_position, first.right_label) == (0, "A")
    assert (second.right_position, second.right_label) == (3, "D")
    assert [first.option(p).text for p in range(4)] == ["gamma", "alpha", "beta", "delta"]
    assert [first.label(p) for p in range(4)] == ["A", "B", "C", "D"]


def test_the_terminal_labels_positions_with_numbers() -> None:
    shown = present(GREEK, random.Random(0), NUMBERS)
    assert [(option.label, option.option.text) for option in shown.shown()] == [
        ("1", "gamma"),
        ("2", "alpha"),
        ("3", "beta"),
        ("4", "delta"),
    ]
    assert shown.right_label == "1"
    assert (LETTERS, NUMBERS) == (("A", "B", "C", "D", "E", "F"), ("1", "2", "3", "4", "5", "6"))


@pytest.mark.parametrize("question", [HOURS, RECALL])
def test_questions_without_options_draw_nothing(question: Question) -> None:
    rng = random.Random(0)
    state = rng.getstate()
    assert present(question, rng) == Presentation(question, (), LETTERS)
    assert present(question, rng).shown() == ()
    assert rng.getstate() == state


def test_a_presentation_checks_its_order_and_labels() -> None:
    with pytest.raises(ValueError) as repeated:
        Presentation(GREEK, (0, 0, 1, 2))
    assert str(repeated.value) == "order (0, 0, 1, 2) is not an order of the 4 options of question '01-greek'"
    with pytest.raises(ValueError) as short:
        Presentation(GREEK, (0, 1, 2))
    assert str(short.value) == "order (0, 1, 2) is not an order of the 4 options of question '01-greek'"
    with pytest.raises(ValueError) as labels:
        Presentation(GREEK, (0, 1, 2, 3), ("x", "y"))
    assert str(labels.value) == "2 labels for 4 options of question '01-greek'"


def test_every_position_holds_the_right_option_equally_often() -> None:
    rng = random.Random(SEED)
    counts = Counter(present(GREEK, rng).right_position for _ in range(4000))
    assert sorted(counts) == [0, 1, 2, 3]
    assert all(0.23 <= counts[p] / 4000 <= 0.27 for p in range(4)), counts


# -- grading ------------------------------------------------------------------------------------------------
SHOWN = Presentation(GREEK, (3, 2, 0, 1))  # delta, gamma, alpha, beta


def test_a_wrong_choice_names_the_right_option_by_its_shown_label() -> None:
    verdict = grade_choice(SHOWN, 2)
    assert verdict == Verdict(
        right=False,
        answer="B",
        given="C",
        options=(
            ShownOption("A", DELTA),
            ShownOption("B", GAMMA),
            ShownOption("C", ALPHA, chosen=True),
            ShownOption("D", BETA),
        ),
    )
    assert [option.right for option in verdict.options] == [False, True, False, False]
    assert (verdict.word, verdict.rating, verdict.ratings) == ("Not quite", Rating.AGAIN, (Rating.AGAIN,))


def test_a_right_choice_is_good_unless_the_learner_says_hard_or_easy() -> None:
    verdict = grade_choice(SHOWN, 1)
    assert (verdict.right, verdict.answer, verdict.given) == (True, "B", "B")
    assert [option.chosen for option in verdict.options] == [False, True, False, False]
    assert (verdict.word, verdict.rating) == ("Right", Rating.GOOD)
    assert verdict.ratings == (Rating.HARD, Rating.GOOD, Rating.EASY) == RIGHT_RATINGS


def test_i_dont_know_is_wrong() -> None:
    verdict = grade_choice(Presentation(GREEK, (0, 1, 2, 3), NUMBERS), None)
    assert (verdict.right, verdict.answer, verdict.given) == (False, "3", None)
    assert not any(option.chosen for option in verdict.options)
    assert grade_number(HOURS, None) == Verdict(False, "4 h (± 0.5)", None)


def test_grading_a_choice_checks_the_position_and_the_kind() -> None:
    with pytest.raises(ValueError) as outside:
        grade_choice(SHOWN, 4)
    assert str(outside.value) == "shown position 4 is out of range for question '01-greek' (0 to 3)"
    with pytest.raises(TypeError) as numeric:
        grade_choice(present(HOURS, random.Random(0)), 0)
    assert str(numeric.value) == "question '01-hours' is a numeric question, not a choice question"
    with pytest.raises(TypeError) as recall:
        grade_number(RECALL, "4")
    assert str(recall.value) == "question '01-why' is a recall question, not a numeric question"


@pytest.mark.parametrize(
    ("typed", "right", "given"),
    [("4", True, "4"), (" 4.5 h ", True, "4.5 h"), ("3.4", False, "3.4"), ("−3.6", False, "−3.6")],
)
def test_numbers_are_graded_within_the_tolerance(typed: str, right: bool, given: str) -> None:
    assert grade_number(HOURS, typed) == Verdict(right, "4 h (± 0.5)", given)


def test_a_number_that_is_not_one() -> None:
    with pytest.raises(ValueError) as caught:
        grade_number(HOURS, "4 days")
    assert str(caught.value) == "not a number: '4 days'"


def test_answer_text() -> None:
    exact = Question("01-x", "01", "numeric", "P", 64, "E", "S", tolerance=0)
    noisy = Question("01-y", "01", "numeric", "P", 0.1 + 0.2, "E", "S", tolerance=0.01)
    assert (answer_text(exact), answer_text(noisy), answer_text(HOURS)) == (
        "64",
        "0.3 (± 0.01)",
        "4 h (± 0.5)",
    )
    assert (number_text(64), number_text(0.125), number_text(1e-20)) == ("64", "0.125", "1e-20")


# -- ratings ------------------------------------------------------------------------------------------------
def test_auto_rating_and_the_overrides() -> None:
    assert (auto_rating(True), auto_rating(False)) == (Rating.GOOD, Rating.AGAIN)
    assert [final_rating(True, chosen) for chosen in (None, *RIGHT_RATINGS)] == [
        Rating.GOOD,
        Rating.HARD,
        Rating.GOOD,
        Rating.EASY,
    ]
    assert (final_rating(False), final_rating(False, Rating.AGAIN)) == (Rating.AGAIN, Rating.AGAIN)
    assert RECALL_RATINGS == (Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY)


@pytest.mark.parametrize(
    ("right", "chosen", "message"),
    [
        (True, Rating.AGAIN, "a right answer is saved as Hard, Good or Easy, not Again"),
        (False, Rating.HARD, "a wrong answer is saved as Again, not Hard"),
        (False, Rating.GOOD, "a wrong answer is saved as Again, not Good"),
        (False, Rating.EASY, "a wrong answer is saved as Again, not Easy"),
    ],
)
def test_only_a_right_answer_may_be_overridden_and_only_to_hard_or_easy(
    right: bool, chosen: Rating, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        final_rating(right, chosen)
    assert str(caught.value) == message


# -- every front end ----------------------------------------------------------------------------------------
GREEK_TOML = """lesson = "01"

[[question]]
id = "01-greek"
kind = "choice"
prompt = "Which is the third Greek letter?"
explanation = "Alpha, beta, gamma."
section = "1. Letters"
options = [
  { text = "alpha", why = "Not alpha." },
  { text = "beta", why = "Not beta." },
  { text = "gamma", correct = true, why = "Gamma is third." },
  { text = "delta", why = "Not delta." },
]
"""
WHY = {option.text: option.why for option in GREEK.options}


@pytest.fixture
def greek(tmp_path: Path) -> Path:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "01-greek.toml").write_text(GREEK_TOML, encoding="utf-8")
    return directory


@pytest.fixture
def bank(greek: Path) -> Bank:
    return load_bank(greek)


@pytest.fixture
def store(db: Path) -> Iterator[Store]:
    with Store.open(db) as opened:
        opened.enroll("01", T0)
        yield opened


def assert_fair(positions: Sequence[int]) -> None:
    """Each of the 4 positions held the right option in 20% to 30% of the `TIMES` presentations."""
    assert len(positions) == TIMES
    counts = Counter(positions)
    shares = [counts[p] / TIMES for p in range(4)]
    assert all(0.20 <= share <= 0.30 for share in shares), shares


def layout(widget: QuestionPanel) -> list[str]:
    """The option texts in the order the widget shows them, read from the buttons ("Answer B: alpha")."""
    texts = []
    for label, button in zip(LETTERS[: len(widget.option_buttons)], widget.option_buttons, strict=True):
        assert button.description == f"Answer {label}"
        assert button.tooltip.startswith(f"Answer {label}: ")
        texts.append(button.tooltip.removeprefix(f"Answer {label}: "))
    return texts


def answer_wrong(widget: QuestionPanel) -> int:
    """Answer the question on screen with a wrong option; check that the feedback names the right option by
    the letter shown; return the position where the right option was shown."""
    texts = layout(widget)
    assert sorted(texts) == ["alpha", "beta", "delta", "gamma"]
    right = texts.index("gamma")
    label = LETTERS[right]
    widget.option_buttons[(right + 1) % 4].click()
    feedback = widget.feedback.value
    assert feedback.startswith(f"<b>✗ Not quite.</b> The answer is {label}.<ul>")
    assert f"<li>✓ <b>{label}.</b> gamma <i>(the right answer)</i>: Gamma is third.</li>" in feedback
    widget.next_button.click()
    return right


def test_quiz_widget_is_fair(bank: Bank, store: Store, clock: Clock) -> None:
    widget = QuizWidget(
        "01", bank.questions("01") * TIMES, store=store, clock=clock, tz=timezone.utc, rng=random.Random(SEED)
    )
    assert_fair([answer_wrong(widget) for _ in range(TIMES)])
    assert widget.question is None  # the quiz is over


def test_review_widget_is_fair(bank: Bank, db: Path, clock: Clock) -> None:
    with steps_store(db) as store:  # fsrs's same-day steps: an Again comes back within the session
        store.enroll("01", T0)
        widget = ReviewWidget(bank, store=store, clock=clock, tz=timezone.utc, rng=random.Random(SEED))
        positions = []
        for _ in range(TIMES):  # answered Again, it comes back before the session ends: presented anew
            assert widget.question is not None and widget.question.id == "01-greek"
            positions.append(answer_wrong(widget))
        assert_fair(positions)
        assert len(store.reviews()) == TIMES


def test_cram_widget_is_fair(bank: Bank, store: Store, clock: Clock) -> None:
    widget = CramWidget(bank, ["01"], store=store, clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    positions = []
    for _ in range(TIMES):
        assert widget.question is not None and widget.question.id == "01-greek"
        positions.append(answer_wrong(widget))
    assert_fair(positions)
    assert len(store.cram_reviews()) == TIMES


TERMINAL = re.compile(
    r"^Which is the third Greek letter\?\n"
    r"((?:  [1-4]\) \w+\n){4})"
    r"Your answer \[1-4, \? if you don't know, q to quit\]: \?\n"
    r"Not quite: the answer is ([1-4])\) (\w+)\n"
    r"((?:  [1-4]\).*\n){4})",
    re.MULTILINE,
)


def terminal_positions(output: str) -> list[int]:
    """Where the right option was listed in each presentation of the terminal transcript `output`; checks
    that each verdict and each explanation name the right option by the number shown."""
    positions = []
    for listed, label, text, whys in TERMINAL.findall(output):
        texts = [line.split(") ", 1)[1] for line in listed.splitlines()]
        right = texts.index("gamma")
        assert (label, text) == (NUMBERS[right], "gamma")
        assert whys.splitlines() == [
            f"  {number}){' (right answer)' if option == 'gamma' else ''} {WHY[option]}"
            for number, option in zip(NUMBERS, texts, strict=False)
        ]
        positions.append(right)
    return positions


@pytest.mark.parametrize("command", [["review"], ["cram", "01"]])
def test_terminal_is_fair(
    greek: Path, store: Store, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pin_steps(monkeypatch)  # fsrs's same-day steps: an Again comes back within the session
    out, err = io.StringIO(), io.StringIO()
    args = [*command, "--db", str(store.path), "--bank", str(greek), "--now", T0.isoformat()]
    status = cli.main(
        args, stdin=io.StringIO("?\n" * TIMES + "q\n"), stdout=out, stderr=err, rng=random.Random(SEED)
    )
    assert (status, err.getvalue()) == (0, "")
    assert_fair(terminal_positions(out.getvalue()))
    done = "answers saved" if command == ["review"] else "practice answers logged"
    assert out.getvalue().endswith(f"Stopped (you typed q): {TIMES} {done}.\n")


# -- the order stays while the question is on screen -------------------------------------------------------
def test_showing_the_widget_again_keeps_the_order(db: Path, clock: Clock) -> None:
    widget = QuizWidget("01", [GREEK, GREEK], store=db, clock=clock, tz=timezone.utc, rng=random.Random(0))
    assert layout(widget) == ["gamma", "alpha", "beta", "delta"]
    shown = widget.presentation
    for _ in range(3):
        widget._repr_mimebundle_()
        assert repr(widget).startswith("Quiz for lesson 01: 2 questions.")
    assert widget.presentation is shown
    assert layout(widget) == ["gamma", "alpha", "beta", "delta"]
    widget.option_buttons[3].click()  # delta: wrong
    assert layout(widget) == ["gamma", "alpha", "beta", "delta"]
    assert widget.feedback.value.startswith("<b>✗ Not quite.</b> The answer is A.<ul>")
    widget.next_button.click()  # the next question: a new order
    assert layout(widget) == ["alpha", "beta", "delta", "gamma"]


def test_without_an_rng_a_widget_makes_its_own(db: Path, clock: Clock) -> None:
    widget = QuizWidget("01", [GREEK], store=db, clock=clock, tz=timezone.utc)
    assert sorted(layout(widget)) == ["alpha", "beta", "delta", "gamma"]
