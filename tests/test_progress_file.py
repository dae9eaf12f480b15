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

from course import cli
from scheduler import Rating, Store

AGAIN, HARD, GOOD, EASY = Rating.AGAIN, Rating.HARD, Rating.GOOD, Rating.EASY
NOW = "2025-03-10T09:00:00+00:00"
HEADER = '{"format": "attention-course-progress", "version": 1, "exported_at": "2025-03-10T09:00:00.000Z"}'
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
    file.write_text(HEADER.replace('"version": 1', '"version": 2') + "\n")
    before = digest(learner)
    message = (
        f"{file} was written by a newer course (progress format 2; this course reads 1): "
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
        ('{"type": "answer"}', "unknown record type 'answer' (expected one of enrollment, review, practice)"),
        ('["review"]', "not a JSON object"),
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
        '"version": 1, ...})\n',
    )
    assert json.loads(HEADER)["version"] == 1
