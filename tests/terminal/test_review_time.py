"""The terminal review saves an answer at the time its ratings' intervals were worked out: fuzz is drawn from
that time, so the interval a rating is labelled with is the one saved, even while the clock runs on."""

from __future__ import annotations

import io
import random
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from course.bank import load_bank
from course.terminal.console import Console
from course.terminal.review import review
from scheduler import Limits, Rating, Store

ITEM = "01-weighted-average-shape"  # numeric: 5


def test_the_interval_offered_is_the_interval_saved(tmp_path: Path) -> None:
    bank = load_bank()
    start = datetime(2026, 3, 2, 9, tzinfo=timezone.utc)
    with Store.open(tmp_path / "progress.sqlite3", create=True) as store:
        store.enroll("01", start)
        for other in bank.questions("01"):
            if other.id != ITEM:  # months away: only ITEM is asked on the day below
                store.record(other.id, Rating.EASY, start)
                store.record(other.id, Rating.EASY, start + timedelta(days=15))
        store.record(ITEM, Rating.GOOD, start)
        store.record(ITEM, Rating.GOOD, start + timedelta(days=4))
        card = store.card(ITEM)
        assert card is not None
        now = [card.due + timedelta(hours=1)]

        def clock() -> datetime:  # a minute passes each time the time is read
            now[0] += timedelta(minutes=1)
            return now[0]

        out = io.StringIO()
        status = review(
            Console(io.StringIO("5\n\nq\n"), out),
            store,
            bank,
            clock,
            timezone.utc,
            Limits(),
            random.Random(0),
        )
        said = out.getvalue()
        assert status == 0, said
        offered = re.search(r"Counted as Good \(([^)]+)\)\.", said)
        saved = re.search(r"Saved: Good\. Next review in ([^ ]+)\.\n", said)
        assert offered is not None and saved is not None, said
        assert offered.group(1) == saved.group(1)  # e.g. 6.1mo, not 6.1mo offered and 5.6mo saved
        last = store.reviews(ITEM)[-1]
        assert last.reviewed_at == card.due + timedelta(hours=1, minutes=2)  # when the ratings were offered
