"""The prediction widget under a Predict prompt and `reveal` in its check cell (issue 37): a commit is kept as
a prediction event in the real SQLite file, a wrong one brings its card back the next day, a skip is kept as a
skip, and the check cell shows the prediction beside the result."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from bank_samples import PREDICTION_BANK as BANK

from course.bank import Bank, load_bank
from course.progress import prediction_counts
from course.widgets import _predict, predict, reveal
from course.widgets._predict import PredictionWidget
from scheduler import Nudge, PredictionEvent, Store, due_queue

PARIS = ZoneInfo("Europe/Paris")
DAY_1 = datetime(2026, 12, 1, 15, 0, tzinfo=timezone.utc)  # 16:00 in Paris
NEXT_DAY = datetime(2026, 12, 2, 3, 0, tzinfo=timezone.utc)  # 04:00 in Paris: the next day's start


@pytest.fixture(autouse=True)
def fresh_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """No widget shown yet, as in a kernel just started."""
    monkeypatch.setattr(_predict, "_SHOWN", {})


@pytest.fixture
def bank(tmp_path: Path) -> Bank:
    folder = tmp_path / "bank"
    folder.mkdir()
    (folder / "02-x.toml").write_text(BANK, encoding="utf-8")
    return load_bank(folder)


def shown(bank: Bank, prediction_id: str, db: Path, at: datetime = DAY_1) -> PredictionWidget:
    return predict(prediction_id, store=db, clock=lambda: at, tz=PARIS, rng=random.Random(0), bank=bank)


def test_a_wrong_number_is_kept_and_brings_its_card_back_the_next_day(tmp_path: Path, bank: Bank) -> None:
    db = tmp_path / "progress.sqlite3"
    widget = shown(bank, "02-predict-variance", db)
    assert repr(widget) == (
        "Prediction 02-predict-variance: run this cell in JupyterLab to commit your prediction, then run the "
        "cells below."
    )
    assert widget.typed is not None
    widget.typed.box.value = " 8 "
    widget.typed.button.click()
    assert (widget.committed, widget.answer, widget.right) == (True, "8", False)
    assert widget.feedback.value == "<p>Committed: you predicted 8. Now run the next cell.</p>"
    assert widget.status.value == "<p>Committed: you predicted 8. Now run the next cell.</p>"
    assert widget.typed.box.disabled and widget.typed.button.disabled and widget.skip_button.disabled
    widget.typed.button.click()  # a second commit changes nothing
    with Store.open(db) as store:
        assert store.predictions() == [PredictionEvent("02-predict-variance", DAY_1, "8", False)]
        assert store.nudges() == [
            Nudge("02-variance-grows", DAY_1, NEXT_DAY, "prediction 02-predict-variance")
        ]
        assert store.reviews() == [] and store.cards() == {}  # an event, not a review
        queue = [item.id for item in due_queue(store, bank.items(), NEXT_DAY + timedelta(hours=4), PARIS)]
        assert queue == ["02-variance-grows"]

    revealed = reveal("02-predict-variance", "the variance is 63.1", value=63.1, bank=bank)
    assert repr(revealed) == ("You predicted: 8 (not right). Result: the variance is 63.1. The answer: 64.")
    assert widget.feedback.value == revealed.html()
    assert revealed.html().startswith(
        "<p><b>You predicted:</b> 8 (✗ not right). <b>Result:</b> the variance is 63.1.</p>"
        "<p><b>The answer:</b> 64.</p>"
    )
    assert widget.status.value == f"<p>{revealed!r}</p>"


def test_a_right_choice_is_kept_and_brings_nothing_back(tmp_path: Path, bank: Bank) -> None:
    db = tmp_path / "progress.sqlite3"
    widget = shown(bank, "02-predict-largest", db)
    assert widget.presentation is not None and widget.commit_button is not None
    assert widget.commit_button.disabled  # nothing picked yet
    right = widget.presentation.right_position
    widget.option_buttons[(right + 1) % 3].click()  # picked, then changed: only the commit counts
    widget.option_buttons[right].click()
    assert [button.button_style for button in widget.option_buttons].count("info") == 1
    assert widget.option_buttons[right].button_style == "info" and not widget.committed
    widget.commit_button.click()
    assert (widget.answer, widget.right) == ("one key takes nearly all", True)
    with Store.open(db) as store:
        assert store.predictions() == [
            PredictionEvent("02-predict-largest", DAY_1, "one key takes nearly all", True)
        ]
        assert store.nudges() == []
    assert repr(reveal("02-predict-largest", "one key takes 1.000", bank=bank)) == (
        "You predicted: one key takes nearly all (right). Result: one key takes 1.000."
    )


def test_a_skip_is_kept_as_a_skip(tmp_path: Path, bank: Bank) -> None:
    db = tmp_path / "progress.sqlite3"
    widget = shown(bank, "02-predict-largest", db)
    widget.skip_button.click()
    assert widget.feedback.value == "<p>Skipped: run the next cell to see what happens.</p>"
    with Store.open(db) as store:
        assert store.predictions() == [PredictionEvent("02-predict-largest", DAY_1, "", None)]
        assert store.nudges() == []
    assert repr(reveal("02-predict-largest", "one key takes 1.000", bank=bank)) == (
        "You skipped this prediction. Result: one key takes 1.000."
    )


def test_text_that_is_not_a_number_is_refused_and_keeps_nothing(tmp_path: Path, bank: Bank) -> None:
    db = tmp_path / "progress.sqlite3"
    widget = shown(bank, "02-predict-variance", db)
    assert widget.typed is not None
    widget.typed.box.value = "sixty"
    widget.typed.button.click()
    assert widget.feedback.value == "<p>✗ &#x27;sixty&#x27;: type a number, e.g. 64 or 0.125.</p>"
    assert not widget.committed and not db.exists()


def test_the_check_cell_without_a_commit_and_a_lesson_that_disagrees_with_its_bank(bank: Bank) -> None:
    assert repr(reveal("02-predict-largest", "one key takes 1.000", bank=bank)) == (
        "Result: one key takes 1.000. (no prediction was committed above.)"
    )
    with pytest.raises(AssertionError) as caught:
        reveal("02-predict-variance", "the variance is 70.2", value=70.2, bank=bank)
    assert str(caught.value) == (
        "the value measured, 70.2, is not within 4 of the answer of prediction '02-predict-variance', 64"
    )
    with pytest.raises(
        TypeError, match="prediction '02-predict-largest' is a choice prediction: it takes no value"
    ):
        reveal("02-predict-largest", "x", value=1.0, bank=bank)
    with pytest.raises(KeyError, match="the question bank has no prediction '02-nope'"):
        reveal("02-nope", "x", bank=bank)


def test_stats_count_each_prompt_once_at_its_first_commit(tmp_path: Path, bank: Bank) -> None:
    db = tmp_path / "progress.sqlite3"
    with Store.open(db) as store:
        assert prediction_counts(store, bank.predictions()).text() == "none yet"
        for event in (
            PredictionEvent("02-predict-variance", DAY_1, "8", False),
            PredictionEvent(
                "02-predict-variance", DAY_1 + timedelta(minutes=1), "64", True
            ),  # after the answer
            PredictionEvent("02-predict-largest", DAY_1, "", None),
            PredictionEvent("02-retired-one", DAY_1, "x", True),  # not a prediction of the bank: ignored
        ):
            store.predict(event)
        assert (
            prediction_counts(store, bank.predictions()).text()
            == "1 made, 0 right, 1 skipped; lesson 02: 0 of 1"
        )


def test_a_live_prediction_runs_its_lessons_cells_on_reveal() -> None:
    """What `live_prediction`'s Reveal runs: the cells after the widget of the welcome's dot-product prompt in
    the instructor notebook, its check cell last, in the kernel's names; what they print is shown."""
    import numpy as np

    from course.publishing._predictions import answer_cells
    from course.publishing._workbook import INSTRUCTOR_DIR
    from course.widgets._live_projector import _cells_runner

    question = load_bank().prediction("00-predict-dot-product")
    cells = answer_cells(question, INSTRUCTOR_DIR)
    assert "reveal(" in cells[-1] and "reveal(" not in "".join(cells[:-1])
    names = {"np": np, "reveal": reveal}
    printed = _cells_runner(question, names)()
    assert printed.startswith("u @ v = 12.0 (by hand: 12)\n")
    assert names["by_hand"] == 12  # run in the kernel's names, as the instructor's next cells expect


def test_a_database_that_cannot_be_used_keeps_nothing_and_the_controls_stay(
    tmp_path: Path, bank: Bank
) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    widget = shown(bank, "02-predict-largest", folder)  # a folder is no database
    widget.skip_button.click()
    assert widget.feedback.value.startswith("<p><b>✗ Progress database problem:</b> ")
    assert widget.feedback.value.endswith(" Nothing was saved; press the button again once it is fixed.</p>")
    assert not widget.committed and not widget.skip_button.disabled
    assert repr(reveal("02-predict-largest", "one key takes 1.000", bank=bank)).endswith(
        "(no prediction was committed above.)"
    )


def test_a_wrong_prediction_without_a_card_brings_nothing_back(tmp_path: Path) -> None:
    """The welcome's prompts on how the course works have no review card (card = ""): a wrong one is kept,
    and nothing is brought back."""
    db = tmp_path / "progress.sqlite3"
    bank = load_bank()
    question = bank.prediction("00-predict-notebooks")
    assert question.card == "" and question.kind == "numeric"
    widget = predict("00-predict-notebooks", store=db, clock=lambda: DAY_1, tz=PARIS, bank=bank)
    assert widget.typed is not None
    widget.typed.box.value = "3"
    widget.typed.button.click()
    with Store.open(db) as store:
        assert store.predictions() == [PredictionEvent("00-predict-notebooks", DAY_1, "3", False)]
        assert store.nudges() == []
