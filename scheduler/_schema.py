"""The database schema: a fixed application_id and a list of migrations, applied in order on open.

``PRAGMA user_version`` holds the number of migrations applied. Times are integer milliseconds since the
Unix epoch (UTC); ratings are 1..4; ``state_before`` is the card's state before the answer
(0 new, 1 learning, 2 review, 3 relearning). Migration 2 adds ``settings``: the learner's scheduling settings,
one row per setting, its value as JSON text (see ``Store.settings``). Migration 3 adds ``nudge_log``: the
requests to see an item again by a time (``Nudge``), apart from the review log, which they never change.
Migration 4 adds ``prediction_log``: the guesses committed before an outcome was shown (``PredictionEvent``:
``right`` 1, 0, or NULL when skipped), a log of their own, which changes no card either.
"""

from __future__ import annotations

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "TABLES"]

APPLICATION_ID = int.from_bytes(b"AtCs", "big")  # 0x41744373

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE review_log (
            id INTEGER PRIMARY KEY,
            item_id TEXT NOT NULL,
            rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
            reviewed_at INTEGER NOT NULL,
            duration_ms INTEGER,
            due INTEGER NOT NULL,
            state_before INTEGER NOT NULL CHECK (state_before BETWEEN 0 AND 3)
        )""",
        "CREATE INDEX review_log_by_item ON review_log (item_id, id)",
        "CREATE INDEX review_log_by_time ON review_log (reviewed_at)",
        """CREATE TABLE cram_log (
            id INTEGER PRIMARY KEY,
            item_id TEXT NOT NULL,
            rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),
            reviewed_at INTEGER NOT NULL,
            duration_ms INTEGER
        )""",
        """CREATE TABLE cards (
            item_id TEXT PRIMARY KEY,
            state INTEGER NOT NULL CHECK (state BETWEEN 1 AND 3),
            step INTEGER,
            stability REAL,
            difficulty REAL,
            due INTEGER NOT NULL,
            last_review INTEGER,
            reps INTEGER NOT NULL,
            lapses INTEGER NOT NULL,
            log_id INTEGER NOT NULL
        ) WITHOUT ROWID""",
        "CREATE INDEX cards_by_due ON cards (due)",
        "CREATE TABLE decks (deck TEXT PRIMARY KEY, enrolled_at INTEGER NOT NULL) WITHOUT ROWID",
    ),
    (
        """CREATE TABLE settings (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            set_at INTEGER NOT NULL
        ) WITHOUT ROWID""",
    ),
    (
        """CREATE TABLE nudge_log (
            id INTEGER PRIMARY KEY,
            item_id TEXT NOT NULL,
            nudged_at INTEGER NOT NULL,
            due INTEGER NOT NULL,
            reason TEXT NOT NULL
        )""",
        "CREATE INDEX nudge_log_by_item ON nudge_log (item_id, nudged_at)",
    ),
    (
        """CREATE TABLE prediction_log (
            id INTEGER PRIMARY KEY,
            item_id TEXT NOT NULL,
            predicted_at INTEGER NOT NULL,
            answer TEXT NOT NULL,
            right INTEGER CHECK (right IN (0, 1))
        )""",
        "CREATE INDEX prediction_log_by_item ON prediction_log (item_id, predicted_at)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)

TABLES = frozenset({"review_log", "cram_log", "cards", "decks", "settings", "nudge_log", "prediction_log"})
