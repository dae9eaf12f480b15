"""The live class review's widgets against the real PostgreSQL of the ``postgres_server`` fixture: the
instructor's projector (`live_projector`) and three learners' widgets (`live`), each on its own connection as
its own role, as in a class on a JupyterHub; then the instructor's class report widget. The server is stopped
and started again under a learner's answer: the answer is kept and sent when the server is back."""

from __future__ import annotations

import contextlib
import random
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from bank_samples import PREDICTION_BANK
from postgres_server import PostgresServer, learner_password, require_postgres

from course import load_bank
from course.bank import plain_text
from course.classroom import live_questions, section_link
from course.widgets import (
    NO_CLASS_DB,
    ClassReportWidget,
    LiveAnswerWidget,
    LiveProjectorWidget,
    class_report_view,
    live,
    live_projector,
)
from course.widgets._chrome import FOCUS_PREFIX
from course.widgets._texts import html_text

postgres = pytest.importorskip("scheduler.postgres")

T0 = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
LEARNERS = ("ana", "ben", "cy")
BANK = load_bank()


class Ticking:
    """A clock that moves a second each time it is read."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def make_class(server: PostgresServer) -> dict[str, str]:
    name = server.create_database()
    admin = server.admin_url(name)
    postgres.install(admin)
    for learner in LEARNERS:
        postgres.add_learner(admin, learner, password=learner_password(learner))
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    return {role: server.learner_url(name, role) for role in (*LEARNERS, "teacher")}


@pytest.fixture
def urls(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv("COURSE_DB", raising=False)
    return make_class(postgres_server)


def projector(url: str, lessons: tuple[str, ...] = ("01",)) -> LiveProjectorWidget:
    questions = live_questions(BANK, lessons)
    room = postgres.LiveRoom.open(url)
    return LiveProjectorWidget(
        questions, lessons, room=room, clock=Ticking(), rng=random.Random(3), every=None, bank=BANK
    )


def learner(url: str) -> LiveAnswerWidget:
    return LiveAnswerWidget(room=postgres.LiveRoom.open(url), clock=Ticking(), every=None, bank=BANK)


def text(widget: Any) -> str:
    return html_text(widget.value)


def _focus_marks(widget: Any) -> int:
    """How many focus requests the widget holds (`focus_here`: the chrome's script focuses it once each)."""
    return sum(name.startswith(FOCUS_PREFIX) for name in widget._dom_classes)


def test_without_a_class_database_the_widgets_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    widget = live()
    assert (widget.poller, text(widget.prompt)) == (None, NO_CLASS_DB)
    screen = live_projector("01")
    assert screen.start_button.disabled and text(screen.prompt) == NO_CLASS_DB
    screen.start()  # does nothing
    assert screen.state is None
    report = class_report_view()
    assert report.refresh_button.disabled and text(report.body) == NO_CLASS_DB


def test_a_live_session_with_three_learners(urls: dict[str, str]) -> None:
    screen = projector(urls["teacher"])
    learners = {name: learner(urls[name]) for name in LEARNERS}
    assert text(learners["ana"].prompt) == "Waiting for your instructor to start a live session…"
    screen.start()
    first = screen.presentation
    assert first is not None and first.question.kind == "choice"
    assert text(screen.tally) == "0 answered"
    for widget in learners.values():
        widget.refresh()
        assert widget.presentation == first  # the projector's order and labels, for everyone
        assert text(widget.header).endswith("Question 1")
        assert _focus_marks(widget.prompt) == 1  # the keyboard focus goes to the new question
    right, wrong = first.right_position, (first.right_position + 1) % len(first.order)
    learners["ana"].answer_choice(wrong)
    learners["ana"].answer_choice(right)  # changed her mind before the reveal
    learners["ben"].answer_choice(right)
    learners["cy"].answer_choice(wrong)
    assert text(learners["ana"].notice) == (
        f"Sent: {first.right_label}. You can change it until the answer is revealed."
    )
    assert learners["ana"].option_buttons[right].button_style == "info"
    screen.refresh()
    assert text(screen.tally) == "3 answered"
    counts = {label: n for label, n in zip(first.labels, _bar_counts(screen), strict=False)}
    assert counts[first.right_label] == 2 and counts[first.label(wrong)] == 1
    assert "✓" not in screen.bars.value  # not revealed yet
    screen.reveal()
    assert f"Answer: {first.right_label}." in text(screen.answer)
    assert "✓" in screen.bars.value
    for name, widget in learners.items():
        widget.refresh()
        assert _focus_marks(widget.feedback) == 1  # the buttons are disabled: the focus goes to the reveal
        said = text(widget.feedback)
        if name == "cy":
            assert said.startswith(f"✗ You answered {first.label(wrong)}; the answer is {first.right_label}.")
        else:
            assert said.startswith(f"✓ Right: {first.right_label}.")
    learners["cy"].answer_choice(right)  # too late: nothing is sent
    assert learners["cy"].mine == str(first.order[wrong])
    # the rest of the session: every question answered by ana only (numbers typed where asked)
    while screen.index + 1 < len(screen.questions):
        screen.next()
        widget = learners["ana"]
        widget.refresh()
        question = widget.question
        assert question is not None and question.id == screen.questions[screen.index].id
        if question.kind == "code":  # run in her kernel: only "0" (passed) is sent
            assert widget.code is not None
            widget.code.box.value = str(question.solution)
            widget.code.button.click()
            assert widget.mine == "0"
        elif question.kind == "numeric":
            assert widget.number_input is not None
            widget.number_input.value = str(question.answer)[:1]  # typed fast: the box lags behind
            (row,) = widget.answer_area.children
            (hidden,) = [child for child in row.children if "course-typed" in child._dom_classes]
            hidden.value = f"1:{question.answer}"  # Enter: the browser sends the text in the box
            assert widget.mine == str(question.answer)
        else:
            assert widget.presentation is not None
            widget.answer_choice(widget.presentation.right_position)
    screen.next()  # past the last question: the end
    assert screen.state.ended
    summary = text(screen.answer)
    assert summary.startswith("Most missed first")
    assert "33%" in summary  # cy missed the first question: 1 of 3
    for widget in learners.values():
        widget.refresh()
    assert text(learners["cy"].prompt).startswith(
        "The live session has ended. You answered 1 question, 0 right."
    )
    asked = len(screen.questions)
    assert text(learners["ana"].prompt).startswith(
        f"The live session has ended. You answered {asked} questions, {asked} right."
    )
    # live answers stay out of every schedule
    for name in LEARNERS:
        with postgres.PostgresStore.open(urls[name]) as store:
            assert store.reviews() == []


def _bar_counts(screen: LiveProjectorWidget) -> list[int]:
    import re

    return [int(n) for n in re.findall(r'course-live-count">(\d+)<', screen.bars.value)]


def test_the_server_goes_away_under_an_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_DB", raising=False)
    server = PostgresServer(require_postgres())
    try:
        server.start()
        urls = make_class(server)
        screen = projector(urls["teacher"])
        ana = learner(urls["ana"])
        screen.start()
        ana.refresh()
        presentation = ana.presentation
        assert presentation is not None
        server.stop()
        ana.answer_choice(presentation.right_position)
        assert ana.pending == str(presentation.question.correct_option)
        assert text(ana.notice).startswith("Not sent yet: the class database cannot be reached")
        assert text(ana.notice).endswith(
            f"Your answer {presentation.right_label} is kept here and sent as soon as it is back."
        )
        ana.refresh()  # still down: kept, and said
        assert ana.pending is not None
        assert text(ana.notice).startswith("The class database cannot be reached")
        server.start()
        ana.refresh()
        assert vars(ana)["pending"] is None  # sent (read through vars: mypy narrowed it to str above)
        assert ana.mine == str(presentation.question.correct_option)
        assert text(ana.notice) == (
            f"Sent: {presentation.right_label} (kept while the class database was unreachable)."
        )
        screen.refresh()
        assert text(screen.tally) == "1 answered"
        # kept answers to a question closed meanwhile are not counted, and the learner is told
        server.stop()
        screen_state = screen.state
        ana.answer_choice(0)
        server.start()
        screen.reveal()
        ana.refresh()
        assert text(ana.notice).startswith(f"Your answer {presentation.label(0)} could not be counted")
        assert screen.state.session == screen_state.session
    finally:
        with contextlib.suppress(RuntimeError):  # already stopped
            server.stop()
        server.remove()


def test_the_class_report_widget_shows_every_learner(urls: dict[str, str]) -> None:
    question = BANK.questions("01")[0]
    for name, rating in zip(LEARNERS, (1, 3, 3), strict=True):
        with postgres.PostgresStore.open(urls[name]) as store:
            store.enroll("01", T0)
            store.record(question.id, rating, T0 + timedelta(minutes=5))
    widget = ClassReportWidget(
        read=lambda: postgres.class_records(urls["teacher"]),
        clock=lambda: T0 + timedelta(hours=1),
        tz=timezone.utc,
        bank=BANK,
    )
    assert widget.report is not None and widget.report.learners == 3
    body = text(widget.body)
    assert body.startswith("3 learners answered; the class's true retention: not yet (no reviews).")
    assert [(row.question_id, row.learners, row.answers, row.misses) for row in widget.report.questions] == [
        (question.id, 3, 3, 1)
    ]
    assert (
        "Due in the next 7 days (overdue counted today): today Tue 03 Wed 04 Thu 05 Fri 06 Sat 07 Sun 08 "
        in body
    )
    assert "33% 01 Similarity and softmax 3 3 " in body
    assert body.endswith("Nothing to revisit: no question was missed in 50% or more of its answers.")
    assert f'href="{section_link(question.lesson, question.section)}"' in widget.body.value
    assert text(widget.status) == "Class report read at 10:00: 3 learners."
    with postgres.PostgresStore.open(urls["ana"]) as store:
        store.record(BANK.questions("01")[1].id, 3, T0 + timedelta(minutes=6))
    widget.refresh()
    assert widget.report.questions[0].learners == 3 and len(widget.report.questions) == 2


def test_two_instructors_teach_at_once_and_each_learner_stays_in_their_room(
    postgres_server: PostgresServer, urls: dict[str, str]
) -> None:
    """Issue 21, item 7: a Start in another room moves nobody; a learner who has not chosen is offered the
    rooms running."""
    database = urls["teacher"].split("@/")[1].split("?")[0]
    postgres.add_instructor(postgres_server.admin_url(database), "other_teacher", password="pw-other_teacher")
    first = projector(urls["teacher"])
    first.start()
    ana = learner(urls["ana"])  # one session running: she joins its room
    assert ana.joined == "teacher" and ana.presentation == first.presentation
    second = LiveProjectorWidget(
        live_questions(BANK, ("02",)),
        ("02",),
        room=postgres.LiveRoom.open(postgres_server.url("other_teacher", "pw-other_teacher", database)),
        room_name="Hall B",
        clock=Ticking(),
        rng=random.Random(4),
        every=None,
        bank=BANK,
    )
    assert text(second.prompt) == (
        "Press Start to begin in room “Hall B”. Learners join with live() in a notebook, or "
        'live(room="Hall B") while other rooms run sessions too.'
    )
    second.start()
    assert text(second.header).endswith("room “Hall B”")
    ana.refresh()
    assert ana.state.session == first.state.session and ana.presentation == first.presentation  # not moved
    ben = learner(urls["ben"])
    assert text(ben.prompt) == (
        "2 live sessions are running: room “Hall B” (other_teacher: Lesson 02), room “teacher” (teacher: "
        'Lesson 01). Join yours with its button below, or run live(room="Hall B").'
    )
    (row,) = ben.answer_area.children
    assert [button.description for button in row.children] == ["Join Hall B", "Join teacher"]
    row.children[0].click()  # ben's class is in Hall B
    assert ben.joined == "Hall B" and ben.presentation == second.presentation
    cy = LiveAnswerWidget(
        room=postgres.LiveRoom.open(urls["cy"]), room_name="teacher", clock=Ticking(), every=None, bank=BANK
    )
    assert cy.presentation == first.presentation
    assert second.presentation is not None and first.presentation is not None
    ben.answer_choice(second.presentation.right_position)
    ana.answer_choice(first.presentation.right_position)
    first.refresh()
    second.refresh()
    assert (text(first.tally), text(second.tally)) == ("1 answered", "1 answered")
    second.end()  # Hall B ends; the teacher's room goes on
    for widget in (ana, ben, cy):
        widget.refresh()
    assert text(ben.prompt).startswith("The live session has ended. You answered 1 question, 1 right.")
    assert ana.presentation == cy.presentation == first.presentation and not ana.state.ended


def test_the_projector_counts_only_answers_the_question_can_have(urls: dict[str, str]) -> None:
    """Issue 21, item 9: what a learner writes into the class database by hand that is no answer to the
    question asked (an option it does not have; text, which the server refuses) never reaches the
    projector."""
    import psycopg

    screen = projector(urls["teacher"])
    screen.start()
    presentation = screen.presentation
    assert presentation is not None and presentation.question.kind == "choice"
    ana = learner(urls["ana"])
    ana.answer_choice(presentation.right_position)
    with psycopg.connect(urls["ben"], autocommit=True) as ben:
        ben.execute(  # ben joins the room, as his widget would
            "INSERT INTO course.live_member (room, joined_at) VALUES (%s, 0)", (screen.state.room,)
        )
        ben.execute(
            "INSERT INTO course.live_answer (session_id, position, item_id, answer, answered_at) "
            "VALUES (%s, 1, %s, '17', 0)",
            (screen.state.session, presentation.question.id),
        )
        with pytest.raises(psycopg.errors.CheckViolation):
            ben.execute(
                "UPDATE course.live_answer SET answer = 'Vote ben!' WHERE session_id = %s",
                (screen.state.session,),
            )
    screen.refresh()
    assert text(screen.tally) == "1 answered" and sum(_bar_counts(screen)) == 1
    screen.end()
    assert text(screen.answer).startswith("Most missed first missed right question 0% 1 of 1 ")  # ben's: none


def test_a_numeric_live_answer_is_recorded_as_its_number_written_one_way() -> None:
    from course.classroom import numeric_answer
    from course.classroom._live import valid_answer

    question = next(q for q in BANK.questions("01") if q.kind == "numeric" and q.unit == "bits")
    assert [numeric_answer(question, typed) for typed in ("3", "3 bits", "3.0", "6/2", "3e0", "−3")] == [
        "3",
        "3",
        "3",
        "3",
        "3",
        "-3",
    ]
    assert [numeric_answer(question, typed) for typed in ("0.125", "1/8", "1.25e-1", "1e-5")] == [
        "0.125",
        "0.125",
        "0.125",
        "1e-05",
    ]
    for typed in ("inf", "nan", "three", "1/0"):
        with pytest.raises(ValueError, match="not a number"):
            numeric_answer(question, typed)
    assert [valid_answer(question, answer) for answer in ("3", "-0.5", "1e-05", "4 h", "inf", "")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]
    choice = next(q for q in BANK.questions("01") if q.kind == "choice")
    assert [valid_answer(choice, answer) for answer in ("0", "01", str(len(choice.options)), "²", "x")] == [
        True,
        False,
        False,
        False,
        False,
    ]


CODE_CARD = BANK["05-code-causal-mask"]  # its named mistakes: top-left, off by one, transposed, inverted
TOP_LEFT = "def causal_mask(t, s):\n    return np.tril(np.ones((t, s), dtype=bool))\n"  # mistake 1
NOT_CODE = "def causal_mask(t, s):\n    return (\n"  # a syntax error: wrong in another way


def test_a_code_card_live_sends_only_passed_or_the_mistake_never_the_code(urls: dict[str, str]) -> None:
    """Issue 24, item 5: each learner's code runs in their own kernel; the class database gets "0" (passed),
    the place of the named mistake in the card's list, or "-1"; the projector shows how many passed and the
    mistakes by their labels, and reveals the card's worked solution."""
    import psycopg

    screen = LiveProjectorWidget(
        [CODE_CARD],
        ("05",),
        room=postgres.LiveRoom.open(urls["teacher"]),
        clock=Ticking(),
        every=None,
        bank=BANK,
    )
    screen.start()
    assert text(screen.tally) == "0 answered · 0 of 0 passed"
    learners = {name: learner(urls[name]) for name in LEARNERS}
    ana, ben, cy = learners.values()
    code = ana.code
    assert code is not None and ana.answer_area.children == (code.row,)
    assert code.box.description == "Your code for causal_mask"  # the box's label: its accessible name
    assert code.box.value == str(CODE_CARD.starter) and code.button.description == "Run and check"
    assert text(ana.status) == f"Question 1: {plain_text(CODE_CARD.prompt)}"
    ana.answer_code(str(CODE_CARD.solution))
    assert text(ana.feedback) == "✓ Right: causal mask: all 4 cases pass."
    assert text(ana.notice) == (
        "Sent: passed (your code stays in your notebook). Run your code again to change it until the answer "
        "is revealed."
    )
    assert text(ana.status) == text(ana.notice)  # said in the live region
    assert not code.box.disabled  # it may be run again until the reveal
    ben.answer_code(TOP_LEFT)
    assert text(ben.feedback).startswith("✗ Not quite: causal mask, case 1 of 4 (t = 2, s = 5): query 0 is ")
    assert text(ben.notice).startswith(
        "Sent: not passed: causal mask: aligned top-left, not bottom-right (your"
    )
    cy.answer_code(NOT_CODE)  # a slip of the keys: shown, and nothing sent
    assert text(cy.notice) == (
        "✗ Your code has a syntax error on line 2: '(' was never closed. Nothing was sent: fix it and run it "
        "again."
    )
    screen.refresh()
    assert text(screen.tally) == "2 answered · 1 of 2 passed"
    assert text(screen.bars) == "passed 1 causal mask: aligned top-left, not bottom-right 1"
    cy.answer_code(TOP_LEFT)  # cy fixed the syntax, and made ben's mistake
    screen.refresh()
    assert _bar_counts(screen) == [1, 2]
    # what the class database holds: a number per learner, never their code
    with psycopg.connect(urls["teacher"]) as teacher:
        rows = teacher.execute(
            "SELECT learner, answer FROM course.live_answer WHERE session_id = %s ORDER BY learner",
            (screen.state.session,),
        ).fetchall()
    assert rows == [("ana", "0"), ("ben", "1"), ("cy", "1")]
    screen.reveal()
    assert screen.answer.value.startswith(
        "<p><b>A worked solution:</b></p><pre><code>def causal_mask(t, s):\n    i = np.arange(t)[:, None]"
    )
    assert "np.tril" not in screen.answer.value  # no learner's code: it never reached the projector
    assert text(screen.status) == "Answer: the worked solution below."
    for widget in learners.values():
        widget.refresh()
        assert widget.code is not None and widget.code.box.disabled and widget.code.button.disabled
    assert text(ana.feedback).startswith(
        "✓ Right: causal mask: all 4 cases pass. ✓ Your code passed. A worked solution to compare with "
        "yours: def causal_mask(t, s):"
    )
    said = "✗ Your code did not pass: causal mask: aligned top-left, not bottom-right. A worked solution:"
    assert text(ben.feedback).startswith("✗ Not quite: causal mask, case 1 of 4 (t = 2, s = 5): query 0 is ")
    assert f"(t_k - t_q). {said} def causal_mask(t, s):" in text(ben.feedback)
    assert text(ben.status) == said
    assert "See: lesson 05, section “9. Pitfall 3: is_causal with fewer queries than keys”." in text(
        ben.feedback
    )
    ben.answer_code(str(CODE_CARD.solution))  # too late: nothing is run or sent
    assert ben.mine == "1"
    screen.end()
    summary = text(screen.answer)
    assert summary.startswith("Most missed first missed right question 67% 1 of 3 ")
    assert summary.endswith(
        f"Code cards: the mistakes made {CODE_CARD.id} (lesson 05, {CODE_CARD.section}): 1 of 3 passed; "
        "causal mask: aligned top-left, not bottom-right: 2"
    )
    for widget in learners.values():
        widget.refresh()
    assert text(ana.prompt).startswith("The live session has ended. You answered 1 question, 1 right.")
    assert text(ben.prompt).startswith("The live session has ended. You answered 1 question, 0 right.")


def test_a_learners_code_that_cannot_run_sends_nothing(
    urls: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import course.checkers
    import course.widgets._panel

    screen = LiveProjectorWidget(
        [CODE_CARD],
        ("05",),
        room=postgres.LiveRoom.open(urls["teacher"]),
        clock=Ticking(),
        every=None,
        bank=BANK,
    )
    screen.start()
    ana = learner(urls["ana"])

    def interrupted(code: str, function: str, checker: str, **limits: Any) -> Any:
        raise KeyboardInterrupt  # Kernel → Interrupt

    monkeypatch.setattr(course.checkers, "run_code_limited", interrupted)
    ana.answer_code(TOP_LEFT)
    assert text(ana.notice) == (
        "Your code was stopped before it finished (the kernel was interrupted). Nothing was sent: change it "
        "and run it again."
    )
    assert ana.code is not None and not ana.code.box.disabled and ana.mine is None
    monkeypatch.undo()
    monkeypatch.setattr(course.widgets._panel, "CODE_SECONDS", 0.3)
    ana.answer_code("def causal_mask(t, s):\n    while True:\n        pass\n")
    assert text(ana.feedback) == "✗ Not quite: Your code ran for more than 0.3 seconds: it was stopped."
    assert ana.mine == "-1"
    screen.refresh()
    assert text(screen.tally) == "1 answered · 0 of 1 passed" and _bar_counts(screen) == [0, 1]


def test_the_class_report_widget_shows_code_cards_pass_rate(urls: dict[str, str]) -> None:
    for name, rating in zip(LEARNERS, (1, 3, 4), strict=True):  # ana: Again; ben: Good; cy: Easy
        with postgres.PostgresStore.open(urls[name]) as store:
            store.enroll("05", T0)
            store.record(CODE_CARD.id, rating, T0 + timedelta(minutes=5))
    widget = ClassReportWidget(
        read=lambda: postgres.class_records(urls["teacher"]),
        clock=lambda: T0 + timedelta(hours=1),
        tz=timezone.utc,
        bank=BANK,
    )
    assert widget.report is not None
    assert [(row.question_id, row.answers, row.misses) for row in widget.report.code] == [
        (CODE_CARD.id, 3, 1)
    ]
    body = text(widget.body)
    assert (
        "Code cards, fewest passed first (1 of 1) A review keeps whether the code passed, not which mistake "
        "it made: a live review shows those. passed question section answers learners 67% "
        f"{text_of(CODE_CARD)} 05: {CODE_CARD.section} 3 3 "
    ) in body


def text_of(question: Any) -> str:
    from course.bank import inline_html

    return html_text(inline_html(question.prompt))


def test_a_prediction_asked_live_then_again_after_the_discussion_then_run(
    urls: dict[str, str], tmp_path: Any
) -> None:
    """Issue 37: the projector asks the room to predict, asks again after the discussion (same letters), and
    on Reveal runs the prompt's cells in the instructor's kernel and shows what they print, the two rounds'
    counts and the answer; three learners answer in their own widgets."""
    folder = tmp_path / "bank"
    folder.mkdir()
    (folder / "02-x.toml").write_text(PREDICTION_BANK, encoding="utf-8")
    bank = load_bank(folder)
    prediction = bank.prediction("02-predict-largest")
    ran: list[str] = []
    screen = LiveProjectorWidget(
        (prediction, prediction),
        ("02",),
        room=postgres.LiveRoom.open(urls["teacher"]),
        clock=Ticking(),
        rng=random.Random(3),
        every=None,
        bank=bank,
        run=lambda: ran.append("run") or "largest weight 1.000 unscaled, 0.462 scaled\n",
    )
    learners = {
        name: LiveAnswerWidget(
            room=postgres.LiveRoom.open(urls[name]), clock=Ticking(), every=None, bank=bank
        )
        for name in LEARNERS
    }
    screen.start()
    first = screen.presentation
    assert first is not None
    assert "· prediction</b>" in screen.header.value
    assert screen.reveal_button.disabled and screen.next_button.description == "Ask again ▶"
    right, wrong = first.right_position, (first.right_position + 1) % 3
    for name, position in zip(LEARNERS, (right, wrong, wrong), strict=True):
        learners[name].refresh()
        assert learners[name].question == prediction  # the learners' widgets find the prediction
        learners[name].answer_choice(position)
    screen.reveal()  # before the second round: nothing happens
    assert not screen.state.revealed and ran == []
    screen.next()  # after the discussion: the same prediction, the same letters
    assert screen.presentation == first and "again after the discussion" in screen.header.value
    assert not screen.reveal_button.disabled and screen.next_button.description == "Finish"
    for name in LEARNERS:
        learners[name].refresh()
        learners[name].answer_choice(right if name != "cy" else wrong)
    screen.refresh()
    assert text(screen.tally) == "3 answered"
    screen.reveal()
    assert ran == ["run"]
    said = text(screen.answer)
    assert said.startswith(
        "Before the discussion: 1 of 3 right; after it: 2 of 3. The cell, run now: "
        "largest weight 1.000 unscaled, 0.462 scaled "
        f"Answer: {first.right_label}."
    ), said
    screen.next()
    assert screen.state.ended
    assert "Most missed first" in text(screen.answer)
