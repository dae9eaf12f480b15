"""A silent network partition between a learner's kernel and the class database, after connecting: packets
stop, nothing is reset. Every call ends within its deadline; a scheduled answer then goes to the outbox and
the learner is told; a live answer is kept by the widget and sent when the network heals, or the learner is
told it could not be counted; a click never waits for the network.

The partition is a local TCP proxy (tests/tcp_proxy.py) between the store and the ``postgres_server``
cluster's TCP port, told to stop forwarding. The deadlines are short here (``timeout_s``, or the URL's
``connect_timeout``), so that the tests stay fast; each safety net (``heal_after``) only makes code that would
wait for the partition to end finish, and fail its assertions, instead of hanging the suite.
"""

from __future__ import annotations

import io
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fixed_clock import T0
from postgres_server import PostgresServer, learner_password
from store_helpers import GOOD, steps_memory
from tcp_proxy import TcpProxy

from course import load_bank
from course.classroom import live_questions
from course.terminal.cli import main
from course.widgets import LiveAnswerWidget, LiveProjectorWidget
from course.widgets._texts import html_text
from scheduler import Rating, StoreUnavailableError

postgres = pytest.importorskip("scheduler.postgres")

BANK = load_bank()
SAFETY_S = 30  # the partition heals by itself after this: code that waits for it ends, and fails


@dataclass
class Class:
    server: PostgresServer
    name: str
    proxy: TcpProxy

    def url(self, role: str) -> str:
        """``role``'s URL through the proxy (the partition's side of it)."""
        return self.server.tcp_url(role, learner_password(role), self.name, self.proxy.port)

    def direct(self, role: str) -> str:
        """``role``'s URL to the cluster's own socket: never partitioned."""
        return self.server.learner_url(self.name, role)


@pytest.fixture
def klass(postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Class]:
    """A class database with learners ana and cy (cy enrolled in lesson 01 with one answer due) and the
    instructor teacher, and a proxy to it that forwards until told otherwise."""
    for name in (
        "COURSE_DB",
        "COURSE_LEARNER",
        "JUPYTERHUB_USER",
        "PGUSER",
        "PGPASSWORD",
        "PGCONNECT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TZ", "UTC")
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    postgres.install(admin)
    for name in ("ana", "cy"):
        postgres.add_learner(admin, name, password=learner_password(name))
    postgres.add_instructor(admin, "teacher", password=learner_password("teacher"))
    with postgres.PostgresStore.open(postgres_server.learner_url(database, "cy")) as store:
        store.enroll("01", AT - timedelta(days=21))
        store.record(DOT, Rating.GOOD, AT - timedelta(days=20))  # a first Good: due 3 to 6 days later
    with TcpProxy(postgres_server.port) as proxy:
        yield Class(postgres_server, database, proxy)


NOW = "2026-03-02T12:00:00+00:00"
AT = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
DOT = "01-scale-dot-vs-cosine"


def no_answer(location: str, seconds: int) -> str:
    """What a call cut off at its deadline says."""
    return str(StoreUnavailableError(location, f"no answer from the server within {seconds} s"))


def test_a_record_in_a_partition_gives_up_at_its_deadline_having_saved_nothing(klass: Class) -> None:
    store = postgres.PostgresStore.open(klass.url("ana"), memory=steps_memory(), timeout_s=1)
    try:
        first = store.record("q", GOOD, T0)
        klass.proxy.partition()
        klass.proxy.heal_after(SAFETY_S)
        began = time.monotonic()
        with pytest.raises(StoreUnavailableError) as cut:
            store.record("q", GOOD, T0 + timedelta(minutes=1))
        assert time.monotonic() - began < SAFETY_S / 3  # it did not wait for the partition to end
        assert str(cut.value) == no_answer(store.location, 1)
        assert cut.value.__cause__ is None and cut.value.__suppress_context__
        klass.proxy.heal()
        assert store.reviews() == [first]  # reconnected; the answer cut off was not saved
        store.record("q", GOOD, T0 + timedelta(minutes=2))
        assert len(store.reviews()) == 2
    finally:
        store.close()
    with postgres.PostgresStore.open(klass.direct("ana")) as again:
        assert len(again.reviews()) == 2  # nothing more arrived when the partition healed


def test_a_live_room_call_in_a_partition_gives_up_at_its_deadline(klass: Class) -> None:
    with postgres.LiveRoom.open(klass.url("ana"), timeout_s=1) as room:
        assert room.state() is None
        klass.proxy.partition()
        klass.proxy.heal_after(SAFETY_S)
        with pytest.raises(StoreUnavailableError) as cut:
            room.state()
        assert str(cut.value) == no_answer(room.location, 1)
        klass.proxy.heal()
        assert room.state() is None


class Partitions(io.StringIO):
    """The learner's input; the network stops before line `at` is read."""

    def __init__(self, text: str, proxy: TcpProxy, at: int) -> None:
        super().__init__(text)
        self.proxy, self.at, self.read = proxy, at, 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.read += 1
        if self.read == self.at:
            self.proxy.partition()
            self.proxy.heal_after(SAFETY_S)
        return super().readline(size)


def test_a_review_in_a_partition_keeps_the_answer_and_says_so(
    klass: Class, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    url = klass.url("cy") + "?connect_timeout=2"  # each call's deadline too: 2 s
    out, err = io.StringIO(), io.StringIO()
    stdin = Partitions("1\n1\nq\n", klass.proxy, at=2)
    status = main(
        ["review", "--db", url, "--now", NOW], stdin=stdin, stdout=out, stderr=err, rng=random.Random(0)
    )
    said = out.getvalue()
    assert (status, err.getvalue()) == (0, "")
    assert "Saved: Again. Next review in 2d." in said  # the first answer, before the partition
    location = postgres.describe(url)
    assert (
        "Kept on this computer: the class database cannot be reached (no answer from the server within 2 s). "
        "It is sent when the database is back; nothing is lost.\n"
    ) in said
    assert said.endswith(
        "Stopped (you typed q): 2 answers saved.\n1 answer waits on this computer to be sent to the class "
        "database: it is sent as soon as the database can be reached (your next answer or session).\n"
    )
    assert location == f"postgresql://cy@127.0.0.1:{klass.proxy.port}/{klass.name}"
    klass.proxy.heal()
    status, said, _ = run_review(url)
    assert status == 0 and said.startswith(
        "1 answer kept while the class database was unreachable was sent.\n"
    )
    with postgres.PostgresStore.open(klass.direct("cy")) as store:
        assert [(r.item_id, r.rating) for r in store.reviews()] == [
            (DOT, Rating.GOOD),
            (DOT, Rating.AGAIN),
            ("01-weighted-average-shape", Rating.AGAIN),
        ]


def run_review(url: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main(
        ["review", "--db", url, "--now", NOW],
        stdin=io.StringIO("q\n"),
        stdout=out,
        stderr=err,
        rng=random.Random(0),
    )
    return status, out.getvalue(), err.getvalue()


class Ticking:
    """A clock that moves a second each time it is read."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def text(widget: object) -> str:
    return html_text(widget.value)  # type: ignore[attr-defined]


def test_a_live_click_in_a_partition_never_waits_and_its_answer_is_sent_or_said_lost(klass: Class) -> None:
    room = postgres.LiveRoom.open(klass.direct("teacher"))
    screen = LiveProjectorWidget(
        live_questions(BANK, ("01",)),
        ("01",),
        room=room,
        clock=Ticking(),
        rng=random.Random(3),
        every=None,
        bank=BANK,
    )
    ana_room = postgres.LiveRoom.open(klass.url("ana"), timeout_s=2)
    ana = LiveAnswerWidget(room=ana_room, clock=Ticking(), every=None, bank=BANK, background=True)
    try:
        screen.start()
        ana.refresh()
        presentation = ana.presentation
        assert presentation is not None
        right, other = (
            presentation.right_position,
            (presentation.right_position + 1) % len(presentation.order),
        )
        klass.proxy.partition()
        klass.proxy.heal_after(SAFETY_S)
        began = time.monotonic()
        ana.answer_choice(right)
        assert time.monotonic() - began < 1  # the click returned at once: the answer is sent from a thread
        assert text(ana.notice) == f"Sending: {presentation.right_label}…"
        assert ana.option_buttons[right].button_style == "info"
        assert ana.wait_sent(SAFETY_S)
        assert text(ana.notice) == (
            f"Not sent yet: the class database cannot be reached ({no_answer(ana_room.location, 2)}). Your "
            f"answer {presentation.right_label} is kept here and sent as soon as it is back."
        )
        klass.proxy.heal()
        ana.refresh()
        assert ana.pending is None and ana.mine == str(presentation.question.correct_option)
        assert (
            text(ana.notice)
            == f"Sent: {presentation.right_label} (kept while the class database was unreachable)."
        )
        screen.refresh()
        assert text(screen.tally) == "1 answered"
        # a partition again; the question is revealed meanwhile: the learner is told it was not counted
        klass.proxy.partition()
        klass.proxy.heal_after(SAFETY_S)
        ana.answer_choice(other)
        assert ana.wait_sent(SAFETY_S) and ana.pending is not None
        screen.reveal()
        klass.proxy.heal()
        ana.refresh()
        assert text(ana.notice).startswith(
            f"Your answer {presentation.label(other)} could not be counted: the question closed before the "
            "class database was back."
        )
        screen.refresh()
        assert text(screen.tally) == "1 answered"  # the right answer, counted once
    finally:
        ana.close()
        ana_room.close()
        room.close()
