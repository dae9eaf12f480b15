"""A code question in the terminal (``python -m course review`` and ``cram``, real subprocesses): written in
``$EDITOR`` or typed at a prompt up to an empty line, run with a time and a memory limit, the verdict said;
right is Good (Hard or Easy offered), wrong is Again with a worked solution."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from scheduler import Rating, Store

ROOT = Path(__file__).resolve().parents[2]
T = datetime(2025, 3, 3, 10, 0, tzinfo=timezone.utc)
NOW = "2025-03-03T10:00:00+00:00"

LESSON_05 = """lesson = "05"

[[question]]
id = "05-mask"
kind = "code"
prompt = "Write `causal_mask(t)`: a (t, t) boolean mask, True where query $i$ may attend to key $j$."
checker = "check_causal_mask"
function = "causal_mask"
starter = '''
def causal_mask(t):
    raise NotImplementedError
'''
solution = '''
def causal_mask(t):
    ones = np.ones((t, t), dtype=bool)
    return np.tril(ones)
'''
explanation = "The lower triangle, diagonal included: `np.tril`."
section = "3. The causal mask"
"""

RIGHT = "def causal_mask(t):\n    return np.tril(np.ones((t, t), dtype=bool))\n"
WRONG = "def causal_mask(t):\n    return np.triu(np.ones((t, t), dtype=bool))\n"

HEAD = """\
Review of lesson 05: 0 due now, 1 new. Type q at any prompt to stop; each answer is saved as you go.

[1/1] lesson 05 Masked (causal) self-attention, code (05-mask), new
Write causal_mask(t): a (t, t) boolean mask, True where query i may attend to
key j.
Starter code:
    def causal_mask(t):
        raise NotImplementedError
"""
TYPE = "Type your code; an empty line ends it. (? alone if you don't know, q alone to quit.)\n"
RUNNING = "Running your code (for at most 10 seconds)...\n"
WRONG_VERDICT = """\
✗ causal mask, case 1 of 3 (T = 4): query 0 may attend to key 1, a future
position (mask[0, 1] should be False); it is the upper triangle, j >= i: each
query sees the future; keep the lower one, j <= i.
"""
SOLUTION = """\
A worked solution:
    def causal_mask(t):
        ones = np.ones((t, t), dtype=bool)
        return np.tril(ones)
"""
EXPLANATION = """\
The lower triangle, diagonal included: np.tril.
See lesson 05 Masked (causal) self-attention, section "3. The causal mask".
"""
AGAIN = "Saved: Again. Next review in 1d.\n\nSession over: 1 answer saved. Next question due tomorrow.\n"


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "05-masks.toml").write_text(LESSON_05)
    return directory


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "progress.sqlite3"
    with Store.open(path, create=True) as store:
        store.enroll("05", T - timedelta(hours=1))
    return path


def editor(tmp_path: Path, code: str | None, status: int = 0) -> str:
    """$EDITOR: a small Python script that checks it was given the starter, then writes `code` into the file
    (None: leaves it as it is) and exits with `status`."""
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "path = Path(sys.argv[-1])\n"
        "assert path.suffix == '.py' and 'raise NotImplementedError' in path.read_text(), path.read_text()\n"
        f"code = {code!r}\n"
        "if code is not None:\n"
        "    path.write_text(code)\n"
        f"sys.exit({status})\n"
    )
    return f"{sys.executable} {script}"


def run(*args: str | Path, stdin: str = "", editor: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("VISUAL", "EDITOR", "COLUMNS")}
    environment.update({"TZ": "UTC", **({} if editor is None else {"EDITOR": editor})})
    return subprocess.run(
        [sys.executable, "-m", "course", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment,
        timeout=120,
    )


def review(bank: Path, db: Path, stdin: str, editor: str | None = None) -> subprocess.CompletedProcess[str]:
    return run("review", "--db", db, "--bank", bank, "--now", NOW, stdin=stdin, editor=editor)


def log(db: Path) -> list[tuple[str, Rating]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating) for r in store.reviews()]


def test_typed_code_that_is_wrong_is_again_with_a_worked_solution(bank: Path, db: Path) -> None:
    result = review(bank, db, WRONG + "\n")
    assert (result.returncode, result.stderr) == (0, "")
    typed = "".join(f"... {line}\n" for line in WRONG.splitlines()) + "... \n"
    assert result.stdout == HEAD + TYPE + typed + RUNNING + WRONG_VERDICT + SOLUTION + EXPLANATION + AGAIN
    assert log(db) == [("05-mask", Rating.AGAIN)]


def test_typed_code_that_is_right_is_good_unless_hard_or_easy(bank: Path, db: Path) -> None:
    result = review(bank, db, "\n" + RIGHT + "\n2\n")  # an empty line before any code is not the end
    assert (result.returncode, result.stderr) == (0, "")
    typed = "... \n" + "".join(f"... {line}\n" for line in RIGHT.splitlines()) + "... \n"
    assert result.stdout == (
        HEAD
        + TYPE
        + typed
        + RUNNING
        + "✓ causal mask: all 3 cases pass.\n"
        + EXPLANATION
        + "Counted as Good "
        "(9d). Press Enter to keep it, or type 2 for Hard (4d; Hard = remembered, with effort) or 4 for Easy "
        "(1.2mo): 2\nSaved: Hard. Next review in 4d.\n\nSession over: 1 answer saved. Next question due in "
        "4 days.\n"
    )
    assert log(db) == [("05-mask", Rating.HARD)]


def test_dont_know_shows_the_solution_and_q_stops(bank: Path, db: Path) -> None:
    dont_know = review(bank, db, "?\n")
    assert dont_know.stdout == HEAD + TYPE + "... ?\n" + SOLUTION + EXPLANATION + AGAIN
    later = (T + timedelta(days=2)).isoformat()
    stopped = run("review", "--db", db, "--bank", bank, "--now", later, stdin="def causal_mask(t):\n  q\n")
    assert (stopped.returncode, stopped.stderr) == (0, "")
    assert stopped.stdout.endswith(
        TYPE + "... def causal_mask(t):\n...   q\nStopped (you typed q): 0 answers saved.\n"
    )
    assert log(db) == [("05-mask", Rating.AGAIN)]


def test_code_written_in_the_editor(bank: Path, db: Path, tmp_path: Path) -> None:
    press = "Press Enter to write your code in python (? if you don't know, q to quit): \n"
    wrong = review(bank, db, "\n", editor(tmp_path, WRONG))
    assert (wrong.returncode, wrong.stderr) == (0, "")
    assert wrong.stdout == HEAD + press + RUNNING + WRONG_VERDICT + SOLUTION + EXPLANATION + AGAIN
    later = (T + timedelta(days=2)).isoformat()
    right = run(
        "review", "--db", db, "--bank", bank, "--now", later, stdin="\n\n", editor=editor(tmp_path, RIGHT)
    )
    assert (right.returncode, right.stderr) == (0, "")
    assert press + RUNNING + "✓ causal mask: all 3 cases pass.\n" + EXPLANATION in right.stdout
    assert right.stdout.endswith(
        "Saved: Good. Next review in 13d.\n\nSession over: 1 answer saved. Next question due in 13 days.\n"
    )
    assert log(db) == [("05-mask", Rating.AGAIN), ("05-mask", Rating.GOOD)]


def test_the_starter_left_as_it_is_is_not_written_yet(bank: Path, db: Path, tmp_path: Path) -> None:
    result = run("cram", "05", "--db", db, "--bank", bank, stdin="\n", editor=editor(tmp_path, None))
    assert (result.returncode, result.stderr) == (0, "")
    assert (
        RUNNING + "· causal mask: not written yet. Replace the `raise NotImplementedError` line\n"
        "with your code, then run this cell again.\n" + SOLUTION
    ) in result.stdout
    assert "Logged as practice: Again.\n" in result.stdout  # and asked again, as cram asks a wrong answer
    assert result.stdout.endswith("Stopped (end of input): 1 practice answer logged.\n")


def test_an_editor_that_fails_is_asked_again_and_one_that_cannot_start_falls_back(
    bank: Path, db: Path, tmp_path: Path
) -> None:
    press = "Press Enter to write your code in python (? if you don't know, q to quit): \n"
    failing = review(bank, db, "\nq\n", editor(tmp_path, RIGHT, status=1))
    assert failing.stdout == (
        HEAD + press + "Your editor exited with status 1: your code was not read.\n"
        "Press Enter to write your code in python (? if you don't know, q to quit): q\n"
        "Stopped (you typed q): 0 answers saved.\n"
    )
    missing = review(bank, db, "\n" + RIGHT + "\n\n", str(tmp_path / "no-such-editor"))
    assert missing.stdout.startswith(
        HEAD + "Press Enter to write your code in no-such-editor (? if you don't know, q to quit): \n"
        f"Your editor ({tmp_path / 'no-such-editor'}) could not be started (No such file or directory): type "
        "your code here instead.\n" + TYPE
    )
    assert "✓ causal mask: all 3 cases pass.\n" in missing.stdout
    assert log(db) == [("05-mask", Rating.GOOD)]
