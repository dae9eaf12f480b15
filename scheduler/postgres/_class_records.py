"""What a class report reads: every learner's answers and due times, in one snapshot of the class database."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from scheduler._records import Answer, PredictionEvent
from scheduler._rows import RATINGS, STATES
from scheduler._time import from_ms
from scheduler.postgres._connection import bulk_timeout, connected, describe, translated
from scheduler.postgres._schema import SCHEMA
from scheduler.postgres._sql import LOCK_TIMEOUT_MS, REPORT_TIMEOUT_MS, transaction
from scheduler.postgres._version import NotInstalledError, read_version

__all__ = ["ClassRecords", "class_records"]


@dataclass(frozen=True)
class ClassRecords:
    """What a class report reads, per learner: the answers in log order, when each item is due, and the
    predictions committed, in the order made."""

    answers: dict[str, list[Answer]]
    due_times: dict[str, dict[str, datetime]]
    predictions: dict[str, list[PredictionEvent]] = field(default_factory=dict)


def class_records(url: str, *, lock_timeout_ms: int = LOCK_TIMEOUT_MS) -> ClassRecords:
    """Every learner's answers and due times, read in one snapshot by a connection that may read the whole
    class (an instructor's: row-level security shows a learner only their own rows, so a learner gets
    theirs alone). Learners who enrolled but never answered have empty lists. A table lock not granted
    within ``lock_timeout_ms`` (only an administrator can hold one against reading) is a StoreLockedError."""
    where = describe(url)
    with (
        connected(url, where, bulk_timeout(url)) as connection,
        translated(where, lock_timeout_ms),
        transaction(
            connection,
            lock_timeout_ms=lock_timeout_ms,
            statement_timeout_ms=REPORT_TIMEOUT_MS,
            read_only=True,
            repeatable=True,
        ),
    ):
        if read_version(connection, where) is None:
            raise NotInstalledError(where, f"no schema {SCHEMA}")
        answers: dict[str, list[Answer]] = {
            learner: []
            for (learner,) in connection.execute(
                f"SELECT DISTINCT learner FROM {SCHEMA}.decks ORDER BY learner".encode()
            )
        }
        for learner, item_id, reviewed_at, rating, state in connection.execute(
            f"SELECT learner, item_id, reviewed_at, rating, state_before FROM {SCHEMA}.review_log "
            "ORDER BY learner, seq".encode()
        ):
            answers.setdefault(learner, []).append(
                Answer(item_id, from_ms(reviewed_at), RATINGS[rating], STATES[state])
            )
        due: dict[str, dict[str, datetime]] = {learner: {} for learner in answers}
        for learner, item_id, when in connection.execute(
            f"SELECT learner, item_id, due FROM {SCHEMA}.cards".encode()
        ):
            due.setdefault(learner, {})[item_id] = from_ms(when)
        predictions: dict[str, list[PredictionEvent]] = {}
        for learner, item_id, predicted_at, answer, right in connection.execute(
            f'SELECT learner, item_id, predicted_at, answer, "right" FROM {SCHEMA}.prediction_log '
            "ORDER BY learner, id".encode()
        ):
            predictions.setdefault(learner, []).append(
                PredictionEvent(
                    item_id, from_ms(predicted_at), answer, None if right is None else bool(right)
                )
            )
    return ClassRecords(answers, due, predictions)
