"""The reading half of `PostgresStore`: the learner's rows read back as the records of ``scheduler.Storage``
(decks, cards, the log, practice answers, nudges, predictions, what is due), each in one query through the
store's ``_read``, which runs it in the store's snapshot when one is open, else as a one-round-trip read
(`scheduler.postgres._sql.read_once`). Every query keeps to the learner's own rows (``MINE``), row-level
security aside.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scheduler._records import Answer, CardState, CramReview, DueItems, Nudge, PredictionEvent, Review
from scheduler._rows import (
    CARD_COLUMNS,
    RATINGS,
    REVIEW_COLUMNS,
    STATES,
    card_from_row,
    prediction_from_row,
    review_from_row,
)
from scheduler._time import from_ms, require_aware, to_ms
from scheduler.postgres._schema import MINE, SCHEMA

__all__ = ["Reading"]


class Reading:
    """What `PostgresStore` reads; the store gives ``_read`` (one query, its rows)."""

    def _read(self, query: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def enrolled(self) -> dict[str, datetime]:
        rows = self._read(
            f"SELECT deck, enrolled_at FROM {SCHEMA}.decks WHERE {MINE} "
            'ORDER BY enrolled_at, deck COLLATE "C"'
        )
        return {deck: from_ms(at) for deck, at in rows}

    def card(self, item_id: str) -> CardState | None:
        rows = self._read(
            f"SELECT {CARD_COLUMNS} FROM {SCHEMA}.cards WHERE {MINE} AND item_id = %s", (item_id,)
        )
        return card_from_row(rows[0]) if rows else None

    def cards(self) -> dict[str, CardState]:
        rows = self._read(
            f'SELECT {CARD_COLUMNS} FROM {SCHEMA}.cards WHERE {MINE} ORDER BY item_id COLLATE "C"'
        )
        return {row[0]: card_from_row(row) for row in rows}

    def reviews(self, item_id: str | None = None) -> list[Review]:
        """Log rows in log order, of one item or of all."""
        if item_id is None:
            rows = self._read(f"SELECT {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {MINE} ORDER BY seq")
        else:
            rows = self._read(
                f"SELECT {REVIEW_COLUMNS} FROM {SCHEMA}.review_log WHERE {MINE} AND item_id = %s "
                "ORDER BY seq",
                (item_id,),
            )
        return [review_from_row(row) for row in rows]

    def cram_reviews(self) -> list[CramReview]:
        rows = self._read(
            f"SELECT item_id, rating, reviewed_at, duration_ms FROM {SCHEMA}.cram_log WHERE {MINE} "
            "ORDER BY seq"
        )
        return [CramReview(item_id, RATINGS[rating], from_ms(at), ms) for item_id, rating, at, ms in rows]

    def due_times(self) -> dict[str, datetime]:
        """When each item with a card is due, or brought forward by a nudge not answered since."""
        rows = self._read(
            f"SELECT item_id, MIN(due) FROM (SELECT item_id, due FROM {SCHEMA}.cards WHERE {MINE} "
            f"UNION ALL SELECT n.item_id, n.due FROM {SCHEMA}.nudge_log n LEFT JOIN {SCHEMA}.cards c "
            "ON c.learner = n.learner AND c.item_id = n.item_id WHERE n.learner = current_user::text "
            "AND (c.last_review IS NULL OR n.nudged_at > c.last_review)) t GROUP BY item_id"
        )
        return {item_id: from_ms(due) for item_id, due in rows}

    def due_by(self, until: datetime) -> DueItems:
        """The items due at or before ``until``, earliest first, every item with a card, and the items
        brought forward by a nudge not answered since (one read)."""
        until_ms = to_ms(require_aware(until, "until"))
        rows = self._read(
            f'SELECT item_id COLLATE "C", due, false FROM {SCHEMA}.cards WHERE {MINE} UNION ALL '
            f'SELECT n.item_id COLLATE "C", MIN(n.due), true FROM {SCHEMA}.nudge_log n '
            f"LEFT JOIN {SCHEMA}.cards c ON c.learner = n.learner AND c.item_id = n.item_id "
            "WHERE n.learner = current_user::text AND (c.last_review IS NULL OR n.nudged_at > c.last_review) "
            "GROUP BY n.item_id ORDER BY 2, 1"
        )
        due = {item_id: from_ms(when) for item_id, when, nudged in rows if when <= until_ms and not nudged}
        brought = {item_id: from_ms(when) for item_id, when, nudged in rows if when <= until_ms and nudged}
        return DueItems(due, frozenset([item_id for item_id, _, nudged in rows if not nudged]), brought)

    def answers(self, start: datetime | None = None, end: datetime | None = None) -> list[Answer]:
        """Scheduled answers with ``start <= reviewed_at < end`` (either bound optional), in log order."""
        where, parameters = _mine_between("reviewed_at", start, end)
        rows = self._read(
            f"SELECT item_id, reviewed_at, rating, state_before FROM {SCHEMA}.review_log WHERE {where} "
            "ORDER BY seq",
            parameters,
        )
        return [
            Answer(item_id, from_ms(at), RATINGS[rating], STATES[state])
            for item_id, at, rating, state in rows
        ]

    def review_counts(self) -> dict[str, int]:
        return dict(
            self._read(f"SELECT item_id, COUNT(*) FROM {SCHEMA}.review_log WHERE {MINE} GROUP BY item_id")
        )

    def nudges(self, start: datetime | None = None, end: datetime | None = None) -> list[Nudge]:
        """The learner's nudges made at ``start <= nudged_at < end`` (either bound optional), in order."""
        where, parameters = _mine_between("nudged_at", start, end)
        rows = self._read(
            f"SELECT item_id, nudged_at, due, reason FROM {SCHEMA}.nudge_log WHERE {where} ORDER BY id",
            parameters,
        )
        return [Nudge(item_id, from_ms(at), from_ms(due), reason) for item_id, at, due, reason in rows]

    def predictions(
        self, start: datetime | None = None, end: datetime | None = None
    ) -> list[PredictionEvent]:
        """The learner's predictions made at ``start <= predicted_at < end`` (either bound optional), in
        order."""
        where, parameters = _mine_between("predicted_at", start, end)
        rows = self._read(
            f'SELECT item_id, predicted_at, answer, "right" FROM {SCHEMA}.prediction_log WHERE {where} '
            "ORDER BY id",
            parameters,
        )
        return [prediction_from_row(row) for row in rows]


def _mine_between(
    column: str, start: datetime | None, end: datetime | None
) -> tuple[str, tuple[object, ...]]:
    """The learner's rows with ``start <= column < end`` (either bound optional): a WHERE clause and its
    values."""
    where = [MINE]
    parameters: list[object] = []
    if start is not None:
        where.append(f"{column} >= %s")
        parameters.append(to_ms(require_aware(start, "start")))
    if end is not None:
        where.append(f"{column} < %s")
        parameters.append(to_ms(require_aware(end, "end")))
    return " AND ".join(where), tuple(parameters)
