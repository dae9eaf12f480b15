"""Code cards in the live class review (`course.classroom`): what a learner's code answer is recorded as (a
number: passed, which named mistake of the card, another), which answers count, the projector's tally with
the mistakes' labels, and the session's summary; on the course's own card ``05-code-causal-mask`` and the
sentences its checker gives."""

from __future__ import annotations

import random
from datetime import datetime, timezone

from course.bank import load_bank, present
from course.checkers import run_code
from course.classroom import (
    LIVE_KINDS,
    OTHER_MISTAKE,
    PASSED,
    class_review_lines,
    code_answer,
    code_tally_text,
    counted,
    is_right,
    live_questions,
    mistake_label,
    named_mistakes,
    option_counts,
    right_text,
    session_summary,
    shown_answer,
)
from course.classroom._class_review import Tally
from course.classroom._live import OptionCount, valid_answer

BANK = load_bank()
CARD = BANK["05-code-causal-mask"]  # mistakes: top-left, off by one, transposed, inverted
AT = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)

TOP_LEFT = "def causal_mask(t, s):\n    return np.tril(np.ones((t, s), dtype=bool))\n"
INVERTED = (
    "def causal_mask(t, s):\n    i = np.arange(t)[:, None]\n    j = np.arange(s)[None, :]\n"
    "    return j > i + (s - t)\n"
)
SYNTAX = "def causal_mask(t, s):\n    return (\n"


def test_code_cards_are_asked_live_in_bank_order() -> None:
    assert LIVE_KINDS == ("choice", "numeric", "code")
    asked = live_questions(BANK, ["05"])
    assert [q.id for q in asked if q.kind == "code"] == [
        q.id for q in BANK.questions("05") if q.kind == "code"
    ]
    assert CARD in asked and all(q.kind != "recall" for q in asked)


def test_a_code_answer_is_a_number_from_the_verdict_never_the_code() -> None:
    assert CARD.mistakes == ("causal-top-left", "causal-off-by-one", "causal-transposed", "causal-inverted")
    verdicts = [
        run_code(code, "causal_mask", "check_card_causal_mask")
        for code in (str(CARD.solution), TOP_LEFT, INVERTED, SYNTAX)
    ]
    assert [code_answer(CARD, v.ok, v.sentence) for v in verdicts] == ["0", "1", "4", "-1"]
    assert (PASSED, OTHER_MISTAKE) == ("0", "-1")
    # a named mistake the card does not list is another mistake; a ✓ sentence names none
    padding = (
        "✗ padding mask, case 1 of 3 (lengths 2, 4, 3, t = 4): position 2 of sequence 0 is padding "
        "(mask[0, 2] should be False); it counts one position too many: position j is real when j < "
        "lengths[b], not when j <= lengths[b]."
    )
    assert code_answer(CARD, False, padding) == "-1"
    other = BANK["05-code-padding-mask"]
    assert other.mistakes == ("padding-mask-off-by-one",)
    sentence = run_code(
        "def padding_mask(lengths, t):\n    return np.arange(t)[None, :] <= lengths[:, None]\n",
        "padding_mask",
        "check_card_padding_mask",
    ).sentence
    assert code_answer(other, False, sentence) == "1", sentence


def test_only_the_answers_a_code_card_can_have_are_valid_and_counted() -> None:
    assert [valid_answer(CARD, a) for a in ("0", "1", "4", "-1", "5", "-2", "01", "0.0", "", "x")] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
    ]
    no_mistakes = next(q for q in BANK.all() if q.kind == "code" and not q.mistakes)
    assert [valid_answer(no_mistakes, a) for a in ("0", "-1", "1")] == [True, True, False]
    assert counted(CARD, {"0": 2, "5": 3, "3": 1, "-1": 1, "1e0": 4}) == {"0": 2, "3": 1, "-1": 1}
    assert [is_right(CARD, a) for a in ("0", "1", "-1")] == [True, False, False]


def test_the_projector_shows_how_many_passed_and_the_mistakes_most_common_first() -> None:
    presentation = present(CARD, random.Random(0))
    counts = counted(CARD, {"2": 1, "0": 3, "1": 4, "-1": 2, "4": 1})
    assert option_counts(presentation, counts) == [
        OptionCount("passed", "", 3, True),
        OptionCount("causal mask: aligned top-left, not bottom-right", "", 4, False),
        OptionCount("causal mask: one key off", "", 1, False),  # ties in the card's order
        OptionCount("causal mask: True where blocked", "", 1, False),
        OptionCount("other mistakes", "", 2, False),
    ]
    assert named_mistakes(CARD, counts) == [
        ("causal mask: aligned top-left, not bottom-right", 4),
        ("causal mask: one key off", 1),
        ("causal mask: True where blocked", 1),
    ]
    assert code_tally_text(CARD, counts) == (
        "3 of 11 passed; causal mask: aligned top-left, not bottom-right: 4; causal mask: one key off: 1; "
        "causal mask: True where blocked: 1; other mistakes: 2"
    )
    assert option_counts(presentation, {}) == [OptionCount("passed", "", 0, True)]
    assert code_tally_text(CARD, {"0": 2}) == "2 of 2 passed"
    assert [mistake_label(CARD, a) for a in ("0", "3", "-1", "9")] == [
        None,
        "causal mask: transposed",
        None,
        None,
    ]
    assert [shown_answer(presentation, a) for a in ("0", "3", "-1")] == [
        "passed",
        "not passed: causal mask: transposed",
        "not passed",
    ]
    assert right_text(presentation) == "the worked solution below"


def test_the_sessions_summary_counts_a_code_card_passed_as_right() -> None:
    choice = next(q for q in BANK.questions("05") if q.kind == "choice")
    results = [
        (choice.id, {str(choice.correct_option): 2, "99": 5}),
        (CARD.id, {"0": 1, "1": 2, "-1": 1, "x": 3}),
    ]
    summary = session_summary(7, AT, ["05"], results, BANK, AT)
    assert summary.tallies == (Tally(choice.id, 2, 2, AT), Tally(CARD.id, 1, 4, AT))
    assert summary.room == 4
    assert class_review_lines(summary, BANK)[1:3] == [
        "2 questions counted, most missed first:",
        f"   75% missed (1 of 4 right)  {CARD.id}  (lesson 05, {CARD.section})",
    ]
