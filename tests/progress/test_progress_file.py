"""``python -m course export-progress`` and ``import-progress``: the JSON lines file, and merging it into a
learner's store (exact file content, exact messages, the schedule a replay of the merged log in time
order)."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fixed_clock import T0
from store_helpers import disk_with, full, opened_read_only, read_only

from course.terminal import cli
from scheduler import Nudge, PredictionEvent, Rating, Store

AGAIN, HARD, GOOD, EASY = Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY
NOW = "2025-04-10T09:00:00+00:00"  # after every answer of these tests: none is imported from the future
HEADER = '{"format": "attention-course-progress", "version": 1, "exported_at": "2025-04-10T09:00:00.000Z"}'
Answer = tuple[str, Rating, datetime, "int | None"]


def run(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main([*map(str, args), "--now", NOW], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def answers(learner: str, start: datetime, step: timedelta, count: int) -> list[Answer]:
    """`count` answers of three questions, `step` apart from `start`, ratings cycling with the learner."""
    ratings = [GOOD, AGAIN, EASY, HARD, GOOD] if learner == "a" else [EASY, GOOD, GOOD, AGAIN, HARD]
    return [
        (f"01-q{index % 3}", ratings[index % 5], start + step * index, 1000 * index if index % 2 else None)
        for index in range(count)
    ]


def store_with(
    path: Path,
    given: list[Answer],
    practice: list[Answer] | None = None,
    decks: dict[str, datetime] | None = None,
) -> Store:
    """A store (fuzz on, as the course's) that got `decks`, then `given` and `practice`, in that order."""
    store = Store.open(path)
    for deck, at in (decks or {}).items():
        store.enroll(deck, at)
    for answer in given:
        store.record(*answer)
    for answer in practice or []:
        store.record_cram(*answer)
    return store


def content(store: Store) -> tuple[object, ...]:
    return store.enrolled(), store.reviews(), store.cram_reviews(), store.cards()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def learner(tmp_path: Path) -> Path:
    path = tmp_path / "learner.sqlite3"
    given = [("01-q0", GOOD, T0, 4200), ("01-q1", AGAIN, T0 + timedelta(minutes=1, milliseconds=5), None)]
    practice = [("01-q0", HARD, T0 + timedelta(hours=1), 900)]
    store_with(path, given, practice, {"01": T0 - timedelta(hours=1), "00": T0 - timedelta(days=1)}).close()
    return path


def test_export_writes_every_record_and_only_reads_the_store(learner: Path, tmp_path: Path) -> None:
    target = tmp_path / "progress.jsonl"
    before = digest(learner)
    assert run("export-progress", target, "--db", learner) == (
        0,
        f"Wrote 2 answers, 1 practice answer and 2 lessons to {target}.\n",
        "",
    )
    assert target.read_text().splitlines() == [
        HEADER,
        '{"type": "enrollment", "lesson": "00", "at": "2025-03-09T09:00:00.000Z"}',
        '{"type": "enrollment", "lesson": "01", "at": "2025-03-10T08:00:00.000Z"}',
        '{"type": "review", "item": "01-q0", "rating": "good",'
        ' "at": "2025-03-10T09:00:00.000Z", "duration_ms": 4200}',
        '{"type": "review", "item": "01-q1", "rating": "again",'
        ' "at": "2025-03-10T09:01:00.005Z", "duration_ms": null}',
        '{"type": "practice", "item": "01-q0", "rating": "hard",'
        ' "at": "2025-03-10T10:00:00.000Z", "duration_ms": 900}',
    ]
    assert digest(learner) == before


def test_export_without_progress_says_so(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite3"
    assert run("export-progress", tmp_path / "p.jsonl", "--db", missing) == (
        2,
        "",
        f"no progress yet: there is no progress file at {missing}; nothing to export\n",
    )
    assert not (tmp_path / "p.jsonl").exists() and not missing.exists()


def test_a_round_trip_gives_the_same_progress_and_schedule(tmp_path: Path) -> None:
    source, target, file = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", tmp_path / "p.jsonl"
    given = answers("a", T0, timedelta(hours=20), 15)
    original = store_with(source, given, given[:4], {"01": T0})
    run("export-progress", file, "--db", source)
    assert run("import-progress", file, "--db", target) == (
        0,
        f"Imported 15 answers, 4 practice answers and 1 lesson from {file}; skipped 0 already present.\n",
        "",
    )
    with Store.open(target) as copied:
        assert content(copied) == content(original)
    assert run("import-progress", file, "--db", target) == (
        0,
        f"Imported 0 answers, 0 practice answers and 0 lessons from {file}; skipped 19 already present.\n",
        "",
    )
    with Store.open(target) as twice:
        assert content(twice) == content(original)
    original.close()


def test_the_cards_mistakes_brought_back_travel_with_the_progress(tmp_path: Path) -> None:
    source, target, file = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", tmp_path / "p.jsonl"
    original = store_with(source, answers("a", T0, timedelta(hours=20), 2), [], {"01": T0})
    nudge = Nudge("05-code-causal-mask", T0 + timedelta(hours=3), T0 + timedelta(hours=18), "causal-top-left")
    original.nudge(nudge)
    assert run("export-progress", file, "--db", source) == (
        0,
        f"Wrote 2 answers, 0 practice answers and 1 lesson (and 1 card brought back by mistakes) "
        f"to {file}.\n",
        "",
    )
    lines = file.read_text().splitlines()
    assert lines[0] == HEADER.replace('"version": 1', '"version": 2')  # a course reading version 1 refuses it
    assert lines[-1] == (
        '{"type": "nudge", "item": "05-code-causal-mask", "at": "2025-03-10T12:00:00.000Z", '
        '"due": "2025-03-11T03:00:00.000Z", "reason": "causal-top-left"}'
    )
    assert run("import-progress", file, "--db", target) == (
        0,
        "Imported 2 answers, 0 practice answers and 1 lesson (and 1 card brought back by mistakes) "
        f"from {file}; skipped 0 already present.\n",
        "",
    )
    assert run("import-progress", file, "--db", target)[1] == (
        f"Imported 0 answers, 0 practice answers and 0 lessons from {file}; skipped 2 already present.\n"
    )
    with Store.open(target) as copied:
        assert content(copied) == content(original) and copied.nudges() == [nudge]
    original.close()


def test_the_predictions_travel_with_the_progress_in_version_3(tmp_path: Path) -> None:
    """Issue 37: predictions are exported (a version 3 file: an older course says to upgrade) and imported
    once; a skip keeps its empty answer and its null."""
    source, target, file = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3", tmp_path / "p.jsonl"
    original = store_with(source, answers("a", T0, timedelta(hours=20), 1), [], {"01": T0})
    made = [
        PredictionEvent("02-predict-variance", T0 + timedelta(hours=1), "about 8", False),
        PredictionEvent("02-predict-largest", T0 + timedelta(hours=2), "", None),
    ]
    for prediction in made:
        original.predict(prediction)
    assert run("export-progress", file, "--db", source) == (
        0,
        f"Wrote 1 answer, 0 practice answers and 1 lesson (and 2 predictions) to {file}.\n",
        "",
    )
    lines = file.read_text().splitlines()
    assert lines[0] == HEADER.replace('"version": 1', '"version": 3')
    assert lines[-2:] == [
        '{"type": "prediction", "item": "02-predict-variance", "at": "2025-03-10T10:00:00.000Z", '
        '"answer": "about 8", "right": false}',
        '{"type": "prediction", "item": "02-predict-largest", "at": "2025-03-10T11:00:00.000Z", '
        '"answer": "", "right": null}',
    ]
    assert run("import-progress", file, "--db", target) == (
        0,
        f"Imported 1 answer, 0 practice answers and 1 lesson (and 2 predictions) from {file}; "
        "skipped 0 already present.\n",
        "",
    )
    assert run("import-progress", file, "--db", target)[1] == (
        f"Imported 0 answers, 0 practice answers and 0 lessons from {file}; skipped 1 already present.\n"
    )
    with Store.open(target) as copied:
        assert copied.predictions() == made
    original.close()


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('"answer": 8, "right": false', "'answer' must be a string (\"\" when skipped), got 8"),
        ('"answer": "8", "right": 0', "'right' must be true, false or null, got 0"),
        (
            '"answer": "8\\n9", "right": true',
            "'answer' must be at most 200 characters on one line, got '8\\n9'",
        ),
    ],
)
def test_a_malformed_prediction_is_refused_with_its_line(tmp_path: Path, record: str, message: str) -> None:
    file = tmp_path / "bad.jsonl"
    line = '{"type": "prediction", "item": "02-p", "at": "2025-03-10T10:00:00.000Z", ' + record + "}"
    file.write_text(HEADER + "\n" + line + "\n")
    assert run("import-progress", file, "--db", tmp_path / "fresh.sqlite3") == (
        2,
        "",
        f"{file}, line 2: {message}\n",
    )
    assert not (tmp_path / "fresh.sqlite3").exists()


def test_two_learners_logs_merge_in_time_order(tmp_path: Path) -> None:
    mine = answers("a", T0, timedelta(hours=30), 12)
    theirs = answers("b", T0 + timedelta(hours=7), timedelta(hours=30), 12)
    everything = sorted(mine + theirs, key=lambda answer: answer[2])
    file = tmp_path / "theirs.jsonl"
    store_with(tmp_path / "theirs.sqlite3", theirs, None, {"01": T0 - timedelta(hours=2)}).close()
    run("export-progress", file, "--db", tmp_path / "theirs.sqlite3")
    store_with(tmp_path / "mine.sqlite3", mine, mine[:2], {"00": T0}).close()
    assert run("import-progress", file, "--db", tmp_path / "mine.sqlite3")[1] == (
        f"Imported 12 answers, 0 practice answers and 1 lesson from {file}; skipped 0 already present.\n"
    )
    with (
        Store.open(tmp_path / "mine.sqlite3") as merged,
        store_with(tmp_path / "all.sqlite3", everything) as in_order,
    ):
        assert [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in merged.reviews()] == everything
        assert merged.reviews() == in_order.reviews()  # due dates too
        assert merged.cards() == in_order.cards()
        assert merged.enrolled() == {"01": T0 - timedelta(hours=2), "00": T0}
        assert [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in merged.cram_reviews()] == mine[
            :2
        ]


def test_existing_history_is_never_reordered_or_lost(tmp_path: Path) -> None:
    late, early = ("01-q0", GOOD, T0 + timedelta(days=3), None), ("01-q1", EASY, T0, None)
    store_with(tmp_path / "mine.sqlite3", [late, early]).close()  # written out of time order
    file = tmp_path / "p.jsonl"
    file.write_text(
        HEADER + "\n"
        '{"type": "review", "item": "01-q0", "rating": "hard",'
        ' "at": "2025-03-11T09:00:00Z", "duration_ms": 5}\n'
    )
    run("import-progress", file, "--db", tmp_path / "mine.sqlite3")
    with Store.open(tmp_path / "mine.sqlite3") as merged:
        log = [(r.item_id, r.rating, r.reviewed_at, r.duration_ms) for r in merged.reviews()]
        assert log == [("01-q0", HARD, T0 + timedelta(days=1), 5), late, early]
        assert merged.cards() == {
            item: merged.memory.replay(item, merged.reviews(item)) for item in ("01-q0", "01-q1")
        }


def test_a_file_of_a_newer_format_is_refused_and_nothing_written(learner: Path, tmp_path: Path) -> None:
    file = tmp_path / "new.jsonl"
    file.write_text(HEADER.replace('"version": 1', '"version": 4') + "\n")
    before = digest(learner)
    message = (
        f"{file} was written by a newer course (progress format 4; this course reads 3): "
        "upgrade the course to import it\n"
    )
    assert run("import-progress", file, "--db", learner) == (2, "", message)
    assert digest(learner) == before
    assert run("import-progress", file, "--db", tmp_path / "fresh.sqlite3") == (2, "", message)
    assert not (tmp_path / "fresh.sqlite3").exists()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (
            '{"type": "review", "item": "01-q2", "rating": "great", "at": "2025-03-11T09:00:00Z"}',
            "'rating' must be one of again, hard, good, easy, got 'great'",
        ),
        (
            '{"type": "review", "item": "01-q2", "rating": "good", "at": "2025-03-11T09:00:00"}',
            "'at' must be an ISO 8601 time with a UTC offset, got '2025-03-11T09:00:00'",
        ),
        (
            '{"type": "practice", "item": "", "rating": "good", "at": "2025-03-11T09:00:00Z"}',
            "'item' must be a non-empty string, got ''",
        ),
        (
            '{"type": "review", "item": "01-q2", "rating": "good",'
            ' "at": "2025-03-11T09:00:00Z", "duration_ms": -1}',
            "'duration_ms' must be a whole number, 0 or more, or null, got -1",
        ),
        (
            '{"type": "answer"}',
            "unknown record type 'answer' (expected one of enrollment, review, practice, nudge, prediction)",
        ),
        ('["review"]', "not a JSON object"),
        (
            '{"type": "nudge", "item": "05-c", "at": "2025-03-11T09:00:00Z", "due": "tomorrow",'
            ' "reason": "x"}',
            "'due' must be an ISO 8601 time with a UTC offset, got 'tomorrow'",
        ),
        (
            '{"type": "nudge", "item": "05-c", "at": "2025-03-11T09:00:00Z", "due": "2025-03-12T03:00:00Z"}',
            "'reason' must be a non-empty string, got None",
        ),
        (
            '{"type": "nudge", "item": "05-c", "at": "2025-03-11T09:00:00Z", "due": "2025-03-12T03:00:00Z",'
            ' "reason": "two\\nlines"}',
            "'reason' must be at most 200 characters on one line, got 'two\\nlines'",
        ),
        ('{"type": "review",', "not JSON (Expecting property name enclosed in double quotes at column 19)"),
    ],
)
def test_a_malformed_line_is_refused_and_nothing_written(
    learner: Path, tmp_path: Path, line: str, problem: str
) -> None:
    file = tmp_path / "bad.jsonl"
    good = json.dumps(
        {"type": "review", "item": "01-q2", "rating": "good", "at": "2025-03-11T09:00:00Z", "duration_ms": 7}
    )
    file.write_text(f"{HEADER}\n{good}\n\n{line}\n")
    before = digest(learner)
    assert run("import-progress", file, "--db", learner) == (2, "", f"{file}, line 4: {problem}\n")
    assert digest(learner) == before


def test_a_file_that_is_no_progress_file_is_refused(learner: Path, tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("shopping list\n")
    assert run("import-progress", file, "--db", learner) == (
        2,
        "",
        f'{file}, line 1: not a progress file (it must start with {{"format": "attention-course-progress", '
        '"version": 3, ...})\n',
    )
    assert json.loads(HEADER)["version"] == 1


def record(**fields: object) -> str:
    """One line of a progress file: a review of 01-q2 in March unless `fields` say otherwise."""
    line: dict[str, object] = {
        "type": "review",
        "item": "01-q2",
        "rating": "good",
        "at": "2025-03-11T09:00:00Z",
    }
    return json.dumps({**line, **fields})


OUT_OF_BOUNDS = [  # (a line, its problem): what the stores and fsrs cannot hold
    (
        record(duration_ms=99999999999999999999),
        f"'duration_ms' must be at most {2**63 - 1}, got 99999999999999999999",
    ),
    (record(duration_ms=2**63), f"'duration_ms' must be at most {2**63 - 1}, got {2**63}"),
    (
        record(at="9999-12-31T23:59:59.999Z"),
        "'at' must be a time from 1970 to 8999, got '9999-12-31T23:59:59.999Z'",
    ),
    (
        record(type="practice", at="1969-12-31T23:59:59Z"),
        "'at' must be a time from 1970 to 8999, got '1969-12-31T23:59:59Z'",
    ),
    (
        record(type="enrollment", lesson="01", at="0001-01-01T00:00:00+05:00"),
        "'at' must be a time from 1970 to 8999, got '0001-01-01T00:00:00+05:00'",
    ),
    (record(item="01-\x00"), "'item' must not contain U+0000 (at character 4)"),
    (
        record(type="enrollment", lesson="0\ud8001", at="2025-03-11T09:00:00Z"),
        "'lesson' must be Unicode text: it holds a lone surrogate, U+D800 (at character 2)",
    ),
    (record(item="q" * 1001), "'item' must be at most 1000 bytes long in UTF-8 (it has 1001)"),
    ("[" * 100_000, "not JSON that can be read (nested too deeply)"),
    (
        record(duration_ms=0).replace("0}", "9" * 5000 + "}"),
        "not JSON that can be read (a number in it is too long)",
    ),
]
IN_THE_FUTURE = [  # now is 2025-04-10T09:00:00.000Z
    (record(at="2525-03-11T09:00:00Z"), "'2525-03-11T09:00:00Z'"),  # five centuries ahead
    (record(type="practice", at="2025-04-10T09:00:00.001Z"), "'2025-04-10T09:00:00.001Z'"),
    (
        record(type="enrollment", lesson="02", at="2025-04-10T11:00:00+01:59:59"),
        "'2025-04-10T11:00:00+01:59:59'",
    ),
]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        *OUT_OF_BOUNDS,
        *(
            (
                line,
                f"'at' is in the future: {at} is after now (2025-04-10T09:00:00.000Z); check the clock of "
                "the computer it was exported on",
            )
            for line, at in IN_THE_FUTURE
        ),
    ],
)
def test_a_line_the_store_cannot_hold_or_dated_in_the_future_is_refused_and_nothing_written(
    learner: Path, tmp_path: Path, line: str, problem: str
) -> None:
    """Issue 20, item 19: a duration too large for the database or a date at the end of time passed the
    file's check, then crashed the import (a traceback, and a new progress file left behind); an answer
    dated centuries ahead was imported. Each is refused with its line, before anything is written."""
    file = tmp_path / "bad.jsonl"
    file.write_text(f"{HEADER}\n{record(duration_ms=7)}\n{line}\n")
    before = digest(learner)
    refused = (2, "", f"{file}, line 3: {problem}\n")
    assert run("import-progress", file, "--db", learner) == refused
    assert digest(learner) == before
    fresh = tmp_path / "fresh.sqlite3"
    assert run("import-progress", file, "--db", fresh) == refused
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.jsonl", "learner.sqlite3"]
    assert course_report(file) == (2, "", f"{file}, line 3: {problem}\nNothing was reported.\n")


def course_report(file: Path) -> tuple[int, str, str]:
    """``class-report FILE`` at the tests' now: it reads progress files the same way."""
    return run("class-report", file)


def test_an_answer_given_at_the_moment_of_the_import_is_imported(tmp_path: Path) -> None:
    file = tmp_path / "now.jsonl"
    file.write_text(f"{HEADER}\n{record(at='2025-04-10T11:00:00+02:00', duration_ms=2**63 - 1)}\n")
    assert run("import-progress", file, "--db", tmp_path / "p.sqlite3") == (
        0,
        f"Imported 1 answer, 0 practice answers and 0 lessons from {file}; skipped 0 already present.\n",
        "",
    )
    with Store.open(tmp_path / "p.sqlite3", create=False) as store:
        assert [(r.reviewed_at.isoformat(), r.duration_ms) for r in store.reviews()] == [
            ("2025-04-10T09:00:00+00:00", 2**63 - 1)
        ]


def test_an_import_into_a_progress_file_that_cannot_be_written_is_refused_first(
    learner: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20, item 4: import-progress checks that it can write before it merges, and says that nothing
    was imported; into a missing progress file on a full disk, no file is left behind."""
    file = tmp_path / "p.jsonl"
    file.write_text(f"{HEADER}\n{record(duration_ms=7)}\n")
    before = digest(learner)
    opened_read_only(monkeypatch, learner)
    assert run("import-progress", file, "--db", learner) == (
        2,
        "",
        f"{read_only(learner)}\nNothing was imported.\n",
    )
    assert digest(learner) == before
    disk_with(monkeypatch, 0)
    fresh, files = tmp_path / "fresh.sqlite3", sorted(tmp_path.iterdir())
    assert run("import-progress", file, "--db", fresh) == (2, "", f"{full(fresh)}\nNothing was imported.\n")
    assert sorted(tmp_path.iterdir()) == files  # no fresh.sqlite3
