"""``python -m course settings`` and ``python -m course optimize``, and the scheduling line of ``stats``."""

from __future__ import annotations

import io
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from store_helpers import fitting_log, opened_read_only, read_only

from course.progress import progress_report
from course.terminal import scheduling as commands
from course.terminal.cli import main
from scheduler import Memory, Rating, Settings, Store, fit_parameters, format_interval
from scheduler._memory import DEFAULT_PARAMETERS

NOW = "2026-12-01T10:00:00+00:00"
AT = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
OWN = (0.3, 1.5, 2.5, 9.0, *DEFAULT_PARAMETERS[4:])
APPLIES = "This applies from each question's next answer; the due dates already set stay as they are.\n"
DEFAULT_SHOWN = (  # the default desired retention, with why and what else a learner may choose
    "Desired retention: 85% (the default: about 15% of questions forgotten when they come back; a lower one\n"
    "                   saves review time but forgets more, which discourages: 0.70 to 0.97 with "
    "--retention)\n"
)


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")


def course(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = main([*map(str, args)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def existing(db: Path, settings: Settings | None = None) -> None:
    with Store.open(db) as store:
        store.enroll("00", AT - timedelta(days=90))
        if settings is not None:
            store.save_settings(settings, AT - timedelta(days=1))


def stored(db: Path) -> Settings:
    with Store.open(db, create=False) as store:
        return store.settings()


def test_settings_shows_the_defaults_then_a_change(db: Path) -> None:
    existing(db)
    assert course("settings", "--db", db) == (
        0,
        DEFAULT_SHOWN + "FSRS parameters:   the defaults\n",
        "",
    )
    assert course("settings", "--retention", "0.9", "--db", db, "--now", NOW) == (
        0,
        "Desired retention: 90%, was 85% (the default).\n" + APPLIES,
        "",
    )
    assert stored(db) == Settings(0.9)
    assert course("settings", "--db", db) == (
        0,
        "Desired retention: 90%\nFSRS parameters:   the defaults\n",
        "",
    )
    assert course("settings", "--retention", ".9", "--db", db) == (
        0,
        "Nothing changed.\nDesired retention: 90%\nFSRS parameters:   the defaults\n",
        "",
    )
    assert course("settings", "--default-retention", "--db", db) == (
        0,
        "Desired retention: 85% (the default), was 90%.\n" + APPLIES,
        "",
    )
    assert stored(db) == Settings()
    assert course("settings", "--retention", "0.85", "--db", db) == (  # the default's value is the default
        0,
        "Nothing changed.\n" + DEFAULT_SHOWN + "FSRS parameters:   the defaults\n",
        "",
    )
    course("settings", "--retention", "0.9", "--db", db, "--now", NOW)
    assert course("settings", "--retention", "0.85", "--db", db, "--now", NOW) == (
        0,
        "Desired retention: 85% (the default), was 90%.\n" + APPLIES,
        "",
    )
    assert stored(db) == Settings()


def test_settings_with_fitted_parameters(db: Path) -> None:
    existing(db, Settings(0.875, OWN, AT - timedelta(days=2), 640))
    assert course("settings", "--db", db) == (
        0,
        "Desired retention: 87.5%\nFSRS parameters:   your own, fitted on 29 Nov 2026 to 640 reviews\n",
        "",
    )
    assert course("settings", "--default-parameters", "--retention", "0.9", "--db", db, "--now", NOW) == (
        0,
        "Desired retention: 90%, was 87.5%.\n"
        "FSRS parameters: the defaults, were your own, fitted on 29 Nov 2026 to 640 reviews.\n" + APPLIES,
        "",
    )
    assert stored(db) == Settings(0.9)


USAGE = (
    "usage: python -m course settings [-h] [--retention R | --default-retention]\n"
    "                                 [--default-parameters] [--db PATH]\n"
)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "0.69",
            "must be at least 0.70, got 0.69: below that, more than 3 in 10 answers would be forgotten",
        ),
        (
            "0.98",
            "must be at most 0.97, got 0.98: above that, the reviews grow steeply for little gain in what "
            "you remember",
        ),
        ("85%", "not a number: '85%' (use a number from 0.70 to 0.97, e.g. the default, 0.85)"),
        ("nan", "must be a number from 0.70 to 0.97, got nan"),
    ],
)
def test_settings_refuses_a_retention_out_of_range(
    db: Path, capsys: pytest.CaptureFixture[str], value: str, message: str
) -> None:
    existing(db)
    with pytest.raises(SystemExit) as info:
        course("settings", "--retention", value, "--db", db)
    assert info.value.code == 2
    assert capsys.readouterr().err == (
        f"{USAGE}python -m course settings: error: argument --retention: {message}\n"
    )
    assert stored(db) == Settings()


def test_settings_accepts_both_ends(db: Path) -> None:
    existing(db)
    assert course("settings", "--retention", "0.7", "--db", db)[0] == 0
    assert stored(db) == Settings(0.7)
    assert course("settings", "--retention", "0.97", "--db", db)[0] == 0
    assert stored(db) == Settings(0.97)


def test_settings_needs_an_existing_progress_file(db: Path) -> None:
    status, out, err = course("settings", "--retention", "0.85", "--db", db)
    assert (status, out) == (2, "")
    assert err.startswith(f"no progress yet: there is no progress file at {db}.")
    assert not db.exists()


def test_optimize_refuses_too_few_reviews(db: Path) -> None:
    existing(db, Settings(0.9))
    with Store.open(db) as store:
        fitting_log(store, items=10, answers=15)
    assert course("optimize", "--db", db, "--now", NOW) == (
        3,
        "",
        "Not enough reviews to fit your own parameters yet: 140 of the 512 needed (answers given on a later "
        "day than the question's previous answer). Keep reviewing with the default parameters and run "
        "python -m course optimize again later. Nothing was changed.\n",
    )
    assert stored(db) == Settings(0.9)


def test_a_change_to_a_read_only_progress_file_is_refused(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20, item 4: settings checks that it can save before it changes anything, and says so."""
    existing(db, Settings(0.8))
    opened_read_only(monkeypatch, db)
    refused = (2, "", f"{read_only(db)}\nNothing was changed.\n")
    assert course("settings", "--retention", "0.9", "--db", db, "--now", NOW) == refused
    assert course("settings", "--default-retention", "--db", db, "--now", NOW) == refused
    assert course("settings", "--db", db) == (  # showing them only reads
        0,
        "Desired retention: 80%\nFSRS parameters:   the defaults\n",
        "",
    )
    monkeypatch.undo()
    assert stored(db) == Settings(0.8)


def test_optimize_checks_that_it_can_save_before_it_fits(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20, item 4: on a progress file it cannot write, optimize says so at once, instead of fitting for
    seconds and then failing to save; --dry-run, which saves nothing, still fits."""
    existing(db, Settings(0.9))
    with Store.open(db) as store:
        fitting_log(store)
    fits: list[int] = []
    fit = commands.fit_parameters

    def counted(reviews: list[object], *args: object) -> tuple[float, ...]:  # args: the learner's day
        fits.append(len(reviews))
        return fit(reviews, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(commands, "fit_parameters", counted)
    opened_read_only(monkeypatch, db)
    assert course("optimize", "--db", db, "--now", NOW) == (2, "", f"{read_only(db)}\nNothing was changed.\n")
    assert fits == []
    status, out, err = course("optimize", "--dry-run", "--db", db, "--now", NOW)
    assert (status, err, len(fits)) == (0, "", 1)
    assert "Fitted to 600 reviews; not saved (--dry-run).\n" in out
    monkeypatch.undo()
    assert stored(db) == Settings(0.9)


def good_intervals(retention: float, parameters: tuple[float, ...]) -> str:
    """The first three intervals of a new question answered Good each time, with Memory's defaults (no
    same-day steps): each answer is due in days."""
    memory, at, state, gaps = Memory(retention, parameters=parameters, enable_fuzzing=False), AT, None, []
    for _ in range(3):
        state = memory.review(state, "x", Rating.GOOD, at)
        assert state.state == "review"
        gaps.append(format_interval(state.due - at))
        at = state.due
    return ", ".join(gaps)


def test_optimize_fits_saves_and_compares(db: Path) -> None:
    existing(db, Settings(0.9))
    with Store.open(db) as store:
        fitting_log(store)
        reviews, due = store.reviews(), store.due_times()
    fitted = fit_parameters(reviews)
    before, after = good_intervals(0.9, tuple(DEFAULT_PARAMETERS)), good_intervals(0.9, fitted)
    assert before == "2d, 11d, 1.5mo" and after != before  # the fitted ones come from fsrs's optimizer
    comparison = (
        "For example, the intervals of a new question answered Good each time it is due: 2d, 11d, 1.5mo "
        f"with the default parameters; {after} with the new ones.\n"
    )
    assert course("optimize", "--dry-run", "--db", db, "--now", NOW) == (
        0,
        "Fitting FSRS parameters to your 600 reviews; this takes a few seconds...\n"
        "Fitted to 600 reviews; not saved (--dry-run).\n" + comparison,
        "",
    )
    assert stored(db) == Settings(0.9)
    assert course("optimize", "--db", db, "--now", NOW) == (
        0,
        "Fitting FSRS parameters to your 600 reviews; this takes a few seconds...\n"
        "Fitted your own FSRS parameters to 600 reviews and saved them.\n"
        + comparison
        + APPLIES[:-1]
        + " To go back: python -m course settings --default-parameters\n",
        "",
    )
    assert stored(db) == Settings(0.9, fitted, AT, 600)
    with Store.open(db) as store:
        assert store.due_times() == due
        assert store.memory.parameters == fitted
        assert progress_report(store, [], AT, timezone.utc).splitlines()[-1] == (
            "Scheduling:       your own FSRS parameters (fitted 1 Dec 2026 to 600 reviews), "
            "desired retention 90%."
        )
    assert course("settings", "--db", db) == (
        0,
        "Desired retention: 90%\nFSRS parameters:   your own, fitted on 1 Dec 2026 to 600 reviews\n",
        "",
    )


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        (Settings(), "FSRS default parameters, desired retention 85%."),
        (Settings(0.8), "FSRS default parameters, desired retention 80%."),
        (Settings(None, OWN), "your own FSRS parameters, desired retention 85%."),
        (
            Settings(0.9, OWN, datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc), 640),
            "your own FSRS parameters (fitted 1 Dec 2026 to 640 reviews), desired retention 90%.",
        ),
    ],
)
def test_stats_says_how_questions_are_scheduled(db: Path, settings: Settings, line: str) -> None:
    existing(db, settings)
    with Store.open(db) as store:
        report = progress_report(store, [], AT, timezone.utc)
    assert report.splitlines()[-1] == f"Scheduling:       {line}"
