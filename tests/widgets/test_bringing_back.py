"""A mistake that comes back: a learner's exercise names a mistake a code card practises, and that card is
in their review the next day (`course.widgets._bringing_back.hear`, the listener the widgets register, with
the real SQLite file, the shipped bank and the real terminal for the next day's review)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from course.bank import load_bank
from course.checkers import MISTAKES, check_decoding_mask, check_softmax, mistake_in, muted
from course.progress import items
from course.widgets._bringing_back import brought_back_text, hear, in_kernel
from scheduler import Nudge, Rating, Store, due_queue

ROOT = Path(__file__).resolve().parents[2]
PARIS = ZoneInfo("Europe/Paris")
DAY_1 = datetime(2026, 12, 1, 15, 0, tzinfo=timezone.utc)  # 16:00 in Paris
DAY_2 = datetime(2026, 12, 2, 7, 0, tzinfo=timezone.utc)  # 08:00 the next morning
CARD = "05-code-causal-mask"
SHOWN = (
    "↻ Your review brings back the code card that practises this mistake tomorrow: `causal_mask` "
    "(lesson 05), to write again from memory."
)


def top_left(t_q: int, t_k: int) -> np.ndarray:
    return np.tril(np.ones((t_q, t_k), dtype=bool))  # torch's is_causal=True: the classic mistake


def wrong_check() -> object:
    with muted():  # heard here, by the test, not by the listener of the widgets (it needs a kernel anyway)
        return check_decoding_mask(top_left)


def test_the_listener_acts_only_in_a_jupyter_kernel() -> None:
    assert not in_kernel()


def test_an_exercises_named_mistake_brings_the_card_back_the_next_day(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "progress.sqlite3"
    result = wrong_check()
    said: list[str] = []
    nudged = hear(result, store=db, clock=lambda: DAY_1, tz=PARIS, write=said.append)  # type: ignore[arg-type]
    assert [card.id for card in nudged] == [CARD]
    assert said == [SHOWN]
    hear(result, store=db, clock=lambda: DAY_1 + timedelta(minutes=5), tz=PARIS, write=said.append)  # type: ignore[arg-type]
    assert said == [SHOWN, SHOWN]  # said again, nudged once
    due = datetime(2026, 12, 2, 3, 0, tzinfo=timezone.utc)  # 04:00 in Paris: the next day's start
    with Store.open(db) as store:
        assert store.nudges() == [Nudge(CARD, DAY_1, due, "causal-top-left")]
        assert store.reviews() == [] and store.cards() == {} and store.enrolled() == {}  # not a review
        bank_items = items()
        assert CARD not in [
            item.id for item in due_queue(store, bank_items, DAY_1 + timedelta(hours=5), PARIS)
        ]
        assert [item.id for item in due_queue(store, bank_items, DAY_2, PARIS)] == [CARD]
        assert store.due_times() == {CARD: due}
    capsys.readouterr()


def run(*args: str | Path, stdin: str = "", editor: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("VISUAL", "EDITOR", "COLUMNS")}
    environment.update({"TZ": "Europe/Paris", **({} if editor is None else {"EDITOR": editor})})
    return subprocess.run(
        [sys.executable, "-m", "course", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        timeout=120,
    )


def test_the_next_day_the_review_asks_for_the_code_and_then_lets_it_go(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    hear(wrong_check(), store=db, clock=lambda: DAY_1, tz=PARIS, write=lambda _: None)  # type: ignore[arg-type]
    card = load_bank()[CARD]
    script = tmp_path / "editor.py"
    script.write_text(
        f"import sys\nfrom pathlib import Path\nPath(sys.argv[-1]).write_text({card.solution!r})\n"
    )
    stats = run("stats", "--db", db, "--now", DAY_2.isoformat())
    assert "Lessons started:  05 Masked (causal) self-attention\nDue now:          0\n" in stats.stdout
    assert "New available:    1\n" in stats.stdout  # as the review says: never answered, so new
    assert "Code cards:       1 card brought back by mistakes this week\n" in stats.stdout
    review = run(
        "review", "--db", db, "--now", DAY_2.isoformat(), stdin="\n\n", editor=f"{sys.executable} {script}"
    )
    assert review.returncode == 0, review.stderr
    assert review.stdout.startswith("Review of lesson 05: 0 due now, 1 new.")  # 05's quiz not answered yet
    assert (
        "[1/1] lesson 05 Masked (causal) self-attention, code (05-code-causal-mask), new\n" in review.stdout
    )
    assert "Write causal_mask(t, s): the boolean causal mask" in review.stdout
    assert "✓ causal mask: all 4 cases pass." in review.stdout
    with Store.open(db) as store:
        (answer,) = store.reviews()
        assert (answer.item_id, answer.rating) == (CARD, Rating.GOOD)
        assert store.due_by(DAY_2 + timedelta(days=1)).nudged == {}  # answered: no longer brought forward
        assert store.card(CARD).due > DAY_2 + timedelta(days=1)  # type: ignore[union-attr]


def test_a_mistake_no_card_practises_or_a_right_answer_brings_nothing_back(tmp_path: Path) -> None:
    db = tmp_path / "progress.sqlite3"
    said: list[str] = []
    with muted():
        right = check_softmax(
            lambda x: (
                np.exp(x - x.max(-1, keepdims=True))
                / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)
            )
        )
        unnamed = check_softmax(lambda x: x)
    assert right and not unnamed and mistake_in(unnamed.message) is None
    assert hear(right, store=db, write=said.append) == [] and hear(unnamed, store=db, write=said.append) == []
    assert said == [] and not db.exists()


def test_a_database_that_cannot_take_it_is_said_in_one_line_and_the_verdict_stands(tmp_path: Path) -> None:
    folder = tmp_path / "progress.sqlite3"
    folder.mkdir()  # a folder where the file should be
    said: list[str] = []
    assert hear(wrong_check(), store=folder, clock=lambda: DAY_1, tz=PARIS, write=said.append) == []  # type: ignore[arg-type]
    assert len(said) == 1
    assert said[0].startswith("(The code card that practises this mistake could not be brought back: ")


def test_the_words_for_several_cards() -> None:
    bank = load_bank()
    cards = [bank["01-code-stable-softmax"], bank[CARD]]
    assert brought_back_text(cards) == (
        "↻ Your review brings back the code cards that practise this mistake tomorrow: `softmax` "
        "(lesson 01), `causal_mask` (lesson 05), to write again from memory."
    )
    assert brought_back_text([]) == ""
    assert MISTAKES["causal-top-left"].label == "causal mask: aligned top-left, not bottom-right"
