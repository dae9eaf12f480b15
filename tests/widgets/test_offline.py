"""The widgets on a class database whose server stops mid-session: each answer is kept on this computer while
it is down, the learner is told, and the kept answers are sent when it is back.

Against a real PostgreSQL of this module's own (stopping the per-worker one would break other tests),
stopped and started with ``pg_ctl``; the outbox goes to a test folder (``$COURSE_OUTBOX``).
"""

from __future__ import annotations

import contextlib
import html
import random
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bank_samples import copy_bank
from fixed_clock import T0, Clock
from postgres_server import PostgresServer, learner_password, require_postgres
from test_quiz_and_review import RIGHT, SEED, WRONG, option

from course.bank import Bank, load_bank
from course.progress import Kept
from course.progress._outbox import Outbox
from course.widgets import QuizWidget, ReviewWidget
from course.widgets._cram import CramWidget
from scheduler import LogEntry, Rating

postgres = pytest.importorskip("scheduler.postgres")

Row = tuple[str, Rating, datetime, "int | None"]


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    """A cluster of this module's own, stopped and started by its tests."""
    cluster = PostgresServer(require_postgres())
    try:
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(RuntimeError):  # stopped by a test that failed
            cluster.stop()
        cluster.remove()


@pytest.fixture
def url(server: PostgresServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """Learner ana's URL in a new class database; the outbox in the test's folder; no other settings."""
    for name in ("COURSE_DB", "COURSE_LEARNER", "JUPYTERHUB_USER", "PGUSER", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    database = server.create_database()
    postgres.install(server.admin_url(database))
    postgres.add_learner(server.admin_url(database), "ana", password=learner_password("ana"))
    return server.learner_url(database, "ana")


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    return load_bank(copy_bank("widgets", tmp_path / "bank"))  # 01-sample.toml and 02-other.toml


def logged(url: str) -> tuple[list[Row], list[Row], dict[str, datetime]]:
    """What the server holds for the learner: answers, practice answers, enrolled lessons."""
    with postgres.PostgresStore.open(url) as store:
        answers = [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.reviews()]
        practice = [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in store.cram_reviews()]
        return answers, practice, store.enrolled()


def outbox_of(widget: QuizWidget | ReviewWidget | CramWidget) -> Outbox:
    assert widget.source.outbox is not None
    return widget.source.outbox


def unreachable(server: PostgresServer) -> str:
    """What libpq says of the stopped server's socket (the note's "(...)")."""
    socket = f"{server.folder}/.s.PGSQL.5432"
    return (
        f'connection is bad: connection to server on socket "{socket}" failed: No such file or directory; '
        "Is the server running locally and accepting connections on that socket?"
    )


def kept(detail: str) -> str:
    """The note for an answer kept (HTML-escaped, as the widget shows it)."""
    return html.escape(
        f"Kept on this computer: the class database cannot be reached ({detail}). It is sent when the "
        "database is back; nothing is lost."
    )


def test_a_quiz_keeps_answers_while_the_server_is_down_and_sends_them_when_it_is_back(
    server: PostgresServer, url: str, bank: Bank, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COURSE_DB", url)  # opened at each step, as in a notebook
    clock = Clock()
    widget = QuizWidget("01", bank.questions("01"), clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    outbox = outbox_of(widget)
    assert outbox.path.parent == tmp_path / "outbox" and outbox.path.name.startswith("outbox-ana-")
    clock.advance(seconds=5)
    option(widget, WRONG).click()
    assert widget.notice.value == "<p>Saved: Again. It comes back in 1d.</p>"
    widget.next_button.click()

    server.stop()
    try:
        clock.advance(seconds=8)
        assert widget.number_input is not None and widget.check_button is not None
        widget.number_input.value = "1"
        widget.check_button.click()  # wrong: saved at once, kept
        assert widget.notice.value == f"<p>{kept(unreachable(server))}</p>"
        assert widget.status.value.endswith(f"{kept(unreachable(server))}</p>")  # said aloud too
        assert outbox.pending() == [
            Kept(LogEntry("01-number", Rating.AGAIN, T0 + timedelta(seconds=13), 8000), deck="01")
        ]
        widget.next_button.click()
        assert widget.question is not None and widget.question.id == "01-recall"  # it went on
    finally:
        server.start()

    clock.advance(seconds=3)
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.GOOD].click()  # the last one: the summary
    assert widget.notice.value == (
        "<p><i>Last question: 1 answer kept while the class database was unreachable was sent. Saved: Good. "
        "It comes back in 3d.</i></p>"
    )
    assert widget.prompt.value == (
        "<p><b>1 of 3 right.</b></p><p>Next review of this lesson: tomorrow (2025-03-11), in the review "
        "notebook.</p>"
    )
    assert outbox.pending() == []
    assert logged(url) == (
        [
            ("01-pick", Rating.AGAIN, T0 + timedelta(seconds=5), 5000),
            ("01-number", Rating.AGAIN, T0 + timedelta(seconds=13), 8000),
            ("01-recall", Rating.GOOD, T0 + timedelta(seconds=16), 3000),
        ],
        [],
        {"01": T0 + timedelta(seconds=5)},
    )


def test_a_right_answer_while_the_server_is_down_says_it_will_be_kept_not_a_problem(
    server: PostgresServer, url: str, bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DB", url)
    clock = Clock()
    widget = QuizWidget("01", bank.questions("01"), clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    server.stop()
    try:
        clock.advance(seconds=4)
        option(widget, RIGHT).click()  # the ratings' intervals cannot be read
        assert widget.notice.value == (
            "<p>The class database cannot be reached right now: your answer will be kept on this computer "
            "and sent when it is back.</p>"
        )
        assert [button.description for button in widget.option_buttons]  # still the question's page
        widget.next_button.click()
        assert widget.notice.value == f"<p><i>Previous question: {kept(unreachable(server))}</i></p>"
        assert outbox_of(widget).pending() == [
            Kept(LogEntry("01-pick", Rating.GOOD, T0 + timedelta(seconds=4), 4000), deck="01")
        ]
    finally:
        server.start()


def test_a_review_keeps_answers_while_the_server_is_down_and_sends_them_when_it_is_back(
    server: PostgresServer, url: str, bank: Bank
) -> None:
    clock = Clock()
    with postgres.PostgresStore.open(url) as store:  # given explicitly
        store.enroll("01", T0 - timedelta(days=1))
        widget = ReviewWidget(bank, store=store, clock=clock, tz=timezone.utc, rng=random.Random(SEED))
        outbox = outbox_of(widget)
        assert widget.question is not None and widget.question.id == "01-pick"
        clock.advance(seconds=5)
        option(widget, RIGHT).click()
        widget.next_button.click()
        assert widget.notice.value == "<p><i>Previous question: Saved: Good. It comes back in 4d.</i></p>"

        server.stop()
        try:
            clock.advance(seconds=6)
            assert widget.number_input is not None and widget.check_button is not None
            widget.number_input.value = "64"
            widget.check_button.click()
            # the intervals come from the cards read when the session started
            assert widget.rating_choice is not None
            labels = [label for label, _ in widget.rating_choice.options]
            assert labels == ["Hard (2d)", "Good (6d)", "Easy (19d)"]
            widget.next_button.click()
            assert widget.question is not None and widget.question.id == "01-recall"
            assert re.fullmatch(
                r"<p><i>Previous question: Kept on this computer: the class database cannot be reached "
                r"\(.+\)\. It is sent when the database is back; nothing is lost\.</i></p>",
                widget.notice.value,
            ), widget.notice.value
            assert outbox.pending() == [
                Kept(LogEntry("01-number", Rating.GOOD, T0 + timedelta(seconds=11), 6000))
            ]
        finally:
            server.start()

        clock.advance(seconds=4)
        assert widget.show_button is not None
        widget.show_button.click()
        widget.rating_buttons[Rating.EASY].click()
        assert widget.notice.value == (
            "<p><i>Last question: 1 answer kept while the class database was unreachable was sent. Saved: "
            "Easy. It comes back in 15d.</i></p>"
        )
        assert widget.prompt.value == (
            "<p><b>3 of 3 remembered.</b></p><p>Next review: in 4 days (2025-03-14).</p>"
        )  # nothing waits
        assert outbox.pending() == []
    assert logged(url)[0] == [
        ("01-pick", Rating.GOOD, T0 + timedelta(seconds=5), 5000),
        ("01-number", Rating.GOOD, T0 + timedelta(seconds=11), 6000),
        ("01-recall", Rating.EASY, T0 + timedelta(seconds=15), 4000),
    ]


def test_a_review_that_cannot_reach_the_server_at_its_start_says_so(
    server: PostgresServer, url: str, bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DB", url)
    server.stop()
    try:
        widget = ReviewWidget(bank, clock=Clock(), tz=timezone.utc, rng=random.Random(SEED))
    finally:
        server.start()
    assert widget.prompt.value.startswith("<p><b>✗ Progress database problem:</b> postgresql://ana@/")
    assert "cannot be reached" in widget.prompt.value and "Kept" not in widget.prompt.value
    assert widget.answer_area.children == (widget.refresh_button,)


def test_practice_kept_from_its_first_answer_is_counted_in_the_summary_then_sent(
    server: PostgresServer, url: str, bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DB", url)
    clock = Clock()
    widget = CramWidget(bank, ["02"], clock=clock, tz=timezone.utc, rng=random.Random(SEED))
    server.stop()
    try:
        clock.advance(seconds=2)
        assert widget.show_button is not None
        widget.show_button.click()
        widget.rating_buttons[Rating.GOOD].click()  # the only question: the summary
        assert widget.notice.value == f"<p><i>Last question: {kept(unreachable(server))}</i></p>"
        assert widget.prompt.value == (
            "<p><b>1 of 1 right the first time.</b> 1 answer was logged as practice; your review schedule "
            "is unchanged.</p><p>1 answer waits on this computer to be sent to the class database: it is "
            "sent as soon as the database can be reached (your next answer or session).</p>"
        )
    finally:
        server.start()
    widget.restart_button.click()
    clock.advance(seconds=3)
    assert widget.show_button is not None
    widget.show_button.click()
    widget.rating_buttons[Rating.HARD].click()
    assert widget.notice.value == (
        "<p><i>Last question: 1 answer kept while the class database was unreachable was sent. Logged as "
        "practice: Hard.</i></p>"
    )
    assert logged(url)[1] == [
        ("02-other", Rating.GOOD, T0 + timedelta(seconds=2), 2000),
        ("02-other", Rating.HARD, T0 + timedelta(seconds=5), 3000),
    ]
    assert outbox_of(widget).pending() == []
