"""No message, log line or traceback holds a password: a role's password reaches the server as a SCRAM
verifier only (its log, with every statement logged, holds none), and a URL that cannot be read, or would be
read otherwise than meant, is refused in words that quote none of it, at every entry point that takes one:
the store, the administrator's calls, the class report, the live room, the terminal's ``--db`` and
``COURSE_DB``, and the notebooks' widgets. Against the ``postgres_server`` fixture's real PostgreSQL.
"""

from __future__ import annotations

import io
import random
import traceback
from collections.abc import Callable
from typing import Any

import pytest
from postgres_server import PostgresServer

from course.terminal.cli import main
from course.widgets import class_report_view, live, live_projector, quiz, review
from course.widgets._texts import html_text

postgres = pytest.importorskip("scheduler.postgres")
psycopg = pytest.importorskip("psycopg")

SECRET = "Zq7xWv"  # in every URL below, as its password (or what was meant to be one)
PIECES = ("Zq7", "xWv")  # no message shows either half of it
# URLs holding a password, each unreadable (or readable otherwise than meant) for the reason given
MALFORMED = {
    "postgresql://ana:Zq7%ZZxWv@127.0.0.1:5432/course": "a % not followed by two hexadecimal digits",
    "postgresql://ana:Zq7xWv@[::1/course": "an IPv6 host opened with [ and not closed with ]",
    "postgresql://ana:Zq7xWv@[]/course": "an empty IPv6 host, []",
    "postgresql://ana:Zq7@xWv@127.0.0.1/course": "an @ or / in its user name or password",
    "postgresql://ana:Zq7/xWv@127.0.0.1/course": "an @ or / in its user name or password",
    "postgresql://ana:Zq7 xWv@127.0.0.1/course": "a space",
    "postgresql://ana@127.0.0.1/course?password=Zq7&xWv": "a query parameter that is not one name=value",
    "postgresql://ana@127.0.0.1/course?passwd=Zq7xWv": "a query parameter libpq does not know",
}


def refused(detail: str) -> str:
    return (
        f"the class database's URL cannot be read ({detail}); correct it (in a password, write @ as %40, "
        "/ as %2F, % as %25 and a space as %20)"
    )


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for piece in PIECES:
            assert piece not in text, text


ENTRY_POINTS: dict[str, Callable[[str], Any]] = {
    "PostgresStore.open": lambda url: postgres.PostgresStore.open(url),
    "install": lambda url: postgres.install(url),
    "add_learner": lambda url: postgres.add_learner(url, "cy", password="pw-cy"),
    "add_instructor": lambda url: postgres.add_instructor(url, "teacher", password="pw-teacher"),
    "class_records": lambda url: postgres.class_records(url),
    "schema_version": lambda url: postgres.schema_version(url),
    "LiveRoom.open": lambda url: postgres.LiveRoom.open(url),
    "with_learner": lambda url: postgres.with_learner(url, "cy"),
    "login": lambda url: postgres.login(url),
}


@pytest.mark.parametrize("url", MALFORMED)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_malformed_url_is_refused_without_quoting_it(url: str, entry: str) -> None:
    with pytest.raises(postgres.MalformedURLError) as info:
        ENTRY_POINTS[entry](url)
    assert str(info.value) == refused(MALFORMED[url])
    assert info.value.path == "a PostgreSQL database (unreadable URL)" == postgres.describe(url)
    assert_no_secret(str(info.value), "".join(traceback.format_exception(info.value)), repr(info.value))


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("COURSE_OUTBOX", str(tmp_path / "outbox"))
    for name in ("COURSE_DB", "COURSE_LEARNER", "JUPYTERHUB_USER", "PGUSER", "PGPASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("url", MALFORMED)
@pytest.mark.usefixtures("environment")
def test_the_terminal_refuses_a_malformed_url_without_quoting_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for arguments, named in (
        (["review", "--db", url], None),
        (["cram", "01", "--db", url], None),
        (["stats"], url),
        (["class-report", "--db", url], None),
    ):
        if named is not None:
            monkeypatch.setenv("COURSE_DB", named)
        out, err = io.StringIO(), io.StringIO()
        status = main(arguments, stdin=io.StringIO("1\nq\n"), stdout=out, stderr=err, rng=random.Random(0))
        monkeypatch.delenv("COURSE_DB", raising=False)
        assert (status, out.getvalue(), err.getvalue()) == (2, "", refused(MALFORMED[url]) + "\n"), arguments


@pytest.mark.parametrize("url", MALFORMED)
@pytest.mark.usefixtures("environment")
def test_the_widgets_refuse_a_malformed_url_without_quoting_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_DB", url)
    said = refused(MALFORMED[url])
    shown = {
        "quiz": html_text(quiz("01").notice.value),
        "review": shown_in(review().root),
        "live": html_text(live().notice.value),
        "class report": html_text(class_report_view().notice.value),
    }
    screen = live_projector("01")
    screen.start()
    shown["projector"] = html_text(screen.prompt.value) + html_text(screen.notice.value)
    for widget, text in shown.items():
        assert said in text, (widget, text)
        assert_no_secret(text)


def shown_in(root: Any) -> str:
    """The text of every HTML widget in `root`, however deep."""
    if hasattr(root, "children"):
        return " ".join(shown_in(child) for child in root.children)
    return html_text(root.value) if isinstance(getattr(root, "value", None), str) else ""


def test_adding_a_role_sends_a_scram_verifier_never_the_password(postgres_server: PostgresServer) -> None:
    """With every statement logged (``log_statement = 'all'``), the server's log holds the roles' verifiers
    and none of their passwords; each role then logs in with its password."""
    database = postgres_server.create_database()
    admin = postgres_server.admin_url(database)
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"ALTER DATABASE {database} SET log_statement = 'all'")
    passwords = {"cy": "Tr0ub4dor-cy-K9", "teacher": "Tr0ub4dor-teacher-Q3"}
    logged = postgres_server.log.read_text(encoding="utf-8", errors="replace")
    postgres.install(admin)
    postgres.add_learner(admin, "cy", password=passwords["cy"])
    postgres.add_instructor(admin, "teacher", password=passwords["teacher"])
    postgres.add_learner(admin, "cy", password=passwords["cy"] + "-new")  # a new password for cy
    log = postgres_server.log.read_text(encoding="utf-8", errors="replace")[len(logged) :]
    assert "Tr0ub4dor" not in log
    assert log.count("SCRAM-SHA-256$4096:") >= 3  # the statements were logged: with the verifiers
    with postgres.PostgresStore.open(postgres_server.url("cy", passwords["cy"] + "-new", database)) as store:
        assert store.learner == "cy"
    with postgres.LiveRoom.open(postgres_server.url("teacher", passwords["teacher"], database)) as room:
        assert room.state() is None
    with psycopg.connect(admin, autocommit=True) as connection:
        stored = connection.execute(
            "SELECT rolname, left(rolpassword, 14) FROM pg_authid WHERE rolname IN ('cy', 'teacher') "
            "ORDER BY rolname"
        ).fetchall()
    assert stored == [("cy", "SCRAM-SHA-256$"), ("teacher", "SCRAM-SHA-256$")]
