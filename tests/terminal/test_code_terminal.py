"""A code question in the terminal (``python -m course review`` and ``cram``, real subprocesses): written in
``$EDITOR`` (and shown before it runs) or typed at a prompt up to a line holding only ``.`` or the end of
input, blank lines kept; run with a time and a memory limit, the verdict said; right is Good (Hard or Easy
offered) with a worked solution to compare, wrong is Again with a worked solution. Ctrl-C while the code runs
stops it and saves nothing, and a syntax error saves nothing: the learner runs it again."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
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
TYPE = (
    "Type your code, then a line holding only . to run it (or press Ctrl-D); blank\n"
    "lines are kept. (? alone if you don't know, q alone to quit.)\n"
)
RUNNING = "Running your code (for at most 10 seconds)...\n"
WRONG_VERDICT = """\
✗ causal mask, case 1 of 3 (T = 4): query 0 may attend to key 1, a future
position (mask[0, 1] should be False); it is the upper triangle, j >= i: each
query sees the future; keep the lower one, j <= i.
"""
WORKED = """\
    def causal_mask(t):
        ones = np.ones((t, t), dtype=bool)
        return np.tril(ones)
"""
SOLUTION = "A worked solution:\n" + WORKED
TO_COMPARE = "A worked solution, to compare with yours:\n" + WORKED
STOPPED = (
    "Your code was stopped before it finished (Ctrl-C). Nothing was saved: change it\nand run it again.\n"
)
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


def environment(editor: str | None = None) -> dict[str, str]:
    """This environment, at 80 columns in UTC, with `editor` as $EDITOR (none without it)."""
    chosen = {k: v for k, v in os.environ.items() if k not in ("VISUAL", "EDITOR", "COLUMNS")}
    chosen.update({"TZ": "UTC", **({} if editor is None else {"EDITOR": editor})})
    return chosen


def run(*args: str | Path, stdin: str = "", editor: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "course", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=environment(editor),
        timeout=120,
        start_new_session=True,  # in a group of its own, as at a terminal: a signal to it reaches no test
    )


def review(bank: Path, db: Path, stdin: str, editor: str | None = None) -> subprocess.CompletedProcess[str]:
    return run("review", "--db", db, "--bank", bank, "--now", NOW, stdin=stdin, editor=editor)


def log(db: Path) -> list[tuple[str, Rating]]:
    with Store.open(db, create=False) as store:
        return [(r.item_id, r.rating) for r in store.reviews()]


def typed(code: str) -> str:
    """How typed lines are echoed under the prompt (stdin is not a terminal)."""
    return "".join(f"... {line}\n" if line else "... \n" for line in code.splitlines())


def test_typed_code_that_is_wrong_is_again_with_a_worked_solution(bank: Path, db: Path) -> None:
    result = review(bank, db, WRONG + ".\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        HEAD + TYPE + typed(WRONG) + "... .\n" + RUNNING + WRONG_VERDICT + SOLUTION + EXPLANATION + AGAIN
    )
    assert log(db) == [("05-mask", Rating.AGAIN)]


BLANK_INSIDE = "def causal_mask(t):\n    ones = np.ones((t, t), dtype=bool)\n\n    return np.tril(ones)\n"


def test_typed_code_with_blank_lines_inside_it_ends_at_a_dot_and_shows_the_solution_to_compare(
    bank: Path, db: Path
) -> None:
    # blank lines before the code are dropped, and those inside its indented block kept; "." ends it
    result = review(bank, db, "\n" + BLANK_INSIDE + "\n.\n2\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        HEAD
        + TYPE
        + typed("\n" + BLANK_INSIDE + "\n")
        + "... .\n"
        + RUNNING
        + "✓ causal mask: all 3 cases pass.\n"
        + TO_COMPARE
        + EXPLANATION
        + "Counted as Good "
        "(4d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with effort) or 4 for Easy "
        "(14d): 2\nSaved: Hard. Next review in 2d.\n\nSession over: 1 answer saved. Next question due in "
        "2 days.\n"
    )
    assert log(db) == [("05-mask", Rating.HARD)]


def test_the_end_of_input_ends_the_code_and_a_dot_before_any_code_asks_for_it(bank: Path, db: Path) -> None:
    result = review(bank, db, ".\n" + RIGHT)  # Ctrl-D after the code: no "." needed
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        HEAD
        + TYPE
        + "... .\n"
        + "Type your code first, then a line holding only . (? if you don't know).\n"
        + typed(RIGHT)
        + "... \n"
        + RUNNING
        + "✓ causal mask: all 3 cases pass.\n"
        + TO_COMPARE
        + EXPLANATION
        + "Counted as Good (4d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with "
        "effort) or 4 for Easy (14d): \nSaved: Good. Next review in 4d.\nStopped (end of input): 1 answer "
        "saved.\n"
    )
    assert log(db) == [("05-mask", Rating.GOOD)]  # the end of input at the rating keeps the Good


def test_a_syntax_error_saves_nothing_and_the_learner_fixes_it(bank: Path, db: Path) -> None:
    slip = "def causal_mask(t:\n    return np.tril(np.ones((t, t), dtype=bool))\n"
    result = review(bank, db, slip + ".\n" + RIGHT + ".\n\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert (
        TYPE + typed(slip) + "... .\n" + RUNNING + "✗ Your code has a syntax error on line 1: '(' was never "
        "closed.\nNothing was saved: fix it and run it again.\n"
        + TYPE
        + typed(RIGHT)
        + "... .\n"
        + RUNNING
        + "✓ causal mask: all 3 cases pass.\n"
        + TO_COMPARE
    ) in result.stdout
    assert result.stdout.endswith(
        "Saved: Good. Next review in 4d.\n\nSession over: 1 answer saved. Next question due in 4 days.\n"
    )
    assert log(db) == [("05-mask", Rating.GOOD)]


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


PRESS = "Press Enter to write your code in python (? if you don't know, q to quit): \n"


def shown(code: str) -> str:
    """The code written in the editor, as it is shown before it runs."""
    return "Your code:\n" + "".join(f"    {line}\n" if line else "\n" for line in code.splitlines())


def test_code_written_in_the_editor_is_shown_before_it_runs(bank: Path, db: Path, tmp_path: Path) -> None:
    wrong = review(bank, db, "\n", editor(tmp_path, WRONG))
    assert (wrong.returncode, wrong.stderr) == (0, "")
    assert (
        wrong.stdout == HEAD + PRESS + shown(WRONG) + RUNNING + WRONG_VERDICT + SOLUTION + EXPLANATION + AGAIN
    )
    later = (T + timedelta(days=2)).isoformat()
    right = run(
        "review", "--db", db, "--bank", bank, "--now", later, stdin="\n\n", editor=editor(tmp_path, RIGHT)
    )
    assert (right.returncode, right.stderr) == (0, "")
    assert PRESS + shown(
        RIGHT
    ) + RUNNING + "✓ causal mask: all 3 cases pass.\n" + TO_COMPARE + EXPLANATION in (right.stdout)
    assert right.stdout.endswith(
        "Saved: Good. Next review in 6d.\n\nSession over: 1 answer saved. Next question due in 6 days.\n"
    )
    assert log(db) == [("05-mask", Rating.AGAIN), ("05-mask", Rating.GOOD)]


def test_the_starter_left_as_it_is_says_so(bank: Path, db: Path, tmp_path: Path) -> None:
    result = run("cram", "05", "--db", db, "--bank", bank, stdin="\n", editor=editor(tmp_path, None))
    assert (result.returncode, result.stderr) == (0, "")
    starter = "def causal_mask(t):\n    raise NotImplementedError\n"
    assert shown(starter) + RUNNING + "✗ You sent the starter unchanged.\n" + SOLUTION in result.stdout
    assert "Logged as practice: Again.\n" in result.stdout  # and asked again, as cram asks a wrong answer
    assert result.stdout.endswith("Stopped (end of input): 1 practice answer logged.\n")


def test_an_editor_that_fails_is_asked_again_and_one_that_cannot_start_falls_back(
    bank: Path, db: Path, tmp_path: Path
) -> None:
    failing = review(bank, db, "\nq\n", editor(tmp_path, RIGHT, status=1))
    assert failing.stdout == (
        HEAD + PRESS + "Your editor exited with status 1: your code was not read.\n"
        "Press Enter to write your code in python (? if you don't know, q to quit): q\n"
        "Stopped (you typed q): 0 answers saved.\n"
    )
    missing = review(bank, db, "\n" + RIGHT + ".\n\n", str(tmp_path / "no-such-editor"))
    assert missing.stdout.startswith(
        HEAD + "Press Enter to write your code in no-such-editor (? if you don't know, q to quit): \n"
        f"Your editor ({tmp_path / 'no-such-editor'}) could not be started (No such file or directory): type "
        "your code here instead.\n" + TYPE
    )
    assert "✓ causal mask: all 3 cases pass.\n" in missing.stdout
    assert log(db) == [("05-mask", Rating.GOOD)]


# ------------------------------------------------------------------------- stopping the code (Ctrl-C, ...)

LOOP = "def causal_mask(t):\n    while True:\n        pass\n"


class AtATerminal:
    """``python -m course review`` in a session of its own, driven as a learner at a terminal drives it:
    wait for some output, then type a line or press Ctrl-C (SIGINT to the whole foreground group, the child
    that runs the code included) or send a signal to the command alone."""

    def __init__(self, bank: Path, db: Path, editor: str | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "course", "review", "--db", str(db), "--bank", str(bank), "--now", NOW],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**environment(editor), "COLUMNS": "80"},
            start_new_session=True,
        )
        self.seen = b""

    def wait_for(self, text: str, timeout: float = 60) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while not self.seen.decode(errors="replace").endswith(text):
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                self.process.kill()
                raise AssertionError(f"no {text!r} in time; the output so far:\n{self.seen.decode()}")
            self.seen += chunk

    def type(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode())
        self.process.stdin.flush()

    def ctrl_c(self) -> None:
        os.killpg(self.process.pid, signal.SIGINT)

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, (self.seen + out).decode(), err.decode()


@pytest.mark.parametrize("whom", ["the terminal's group", "the command alone"])
def test_ctrl_c_while_typed_code_runs_stops_it_and_saves_nothing(bank: Path, db: Path, whom: str) -> None:
    learner = AtATerminal(bank, db)
    learner.wait_for("... ")
    learner.type(LOOP + ".\n")
    learner.wait_for(RUNNING)
    time.sleep(1)  # running (or starting): either way it is stopped
    began = time.monotonic()
    if whom == "the command alone":
        learner.process.send_signal(signal.SIGINT)
    else:
        learner.ctrl_c()
    learner.wait_for(STOPPED + TYPE + "... ")
    assert time.monotonic() - began < 5  # at once, not at the time limit of 10 seconds
    assert log(db) == []
    learner.type("?\n")
    status, out, err = learner.finish()
    assert (status, err) == (0, "")
    assert out == (
        HEAD
        + TYPE
        + typed(LOOP)
        + "... .\n"
        + RUNNING
        + STOPPED
        + TYPE
        + "... ?\n"
        + SOLUTION
        + EXPLANATION
        + AGAIN
    )
    assert log(db) == [("05-mask", Rating.AGAIN)]  # the "?", not the run that was stopped


def test_ctrl_c_in_the_editor_is_the_editors_and_ctrl_c_while_its_code_runs_opens_it_again(
    bank: Path, db: Path, tmp_path: Path
) -> None:
    script = tmp_path / "editor.py"  # presses Ctrl-C itself (as nano's "where am I"), then writes its code
    script.write_text(
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "os.killpg(0, signal.SIGINT)\n"
        "path = Path(sys.argv[-1])\n"
        "first = 'raise NotImplementedError' in path.read_text()\n"
        f"assert first or path.read_text() == {LOOP!r}, path.read_text()  # again: from the code last run\n"
        f"path.write_text({LOOP!r} if first else {RIGHT!r})\n"
    )
    learner = AtATerminal(bank, db, f"{sys.executable} {script}")
    learner.wait_for(PRESS.rstrip("\n"))
    learner.type("\n")
    learner.wait_for(RUNNING)
    time.sleep(1)
    learner.ctrl_c()
    learner.wait_for(STOPPED + PRESS.rstrip("\n"))
    learner.type("\n")
    learner.wait_for("or 4 for Easy (14d): ")
    learner.type("\n")
    status, out, err = learner.finish()
    assert (status, err) == (0, "")
    assert out == (
        HEAD
        + PRESS
        + shown(LOOP)
        + RUNNING
        + STOPPED
        + PRESS
        + shown(RIGHT)
        + RUNNING
        + "✓ causal mask: all 3 cases pass.\n"
        + TO_COMPARE
        + EXPLANATION
        + "Counted as Good (4d). Press Enter to keep it, or type 2 for Hard (2d; Hard = remembered, with "
        "effort) or 4 for Easy (14d): \nSaved: Good. Next review in 4d.\n\nSession over: 1 answer saved. "
        "Next question due in 4 days.\n"
    )
    assert log(db) == [("05-mask", Rating.GOOD)]


def test_sigterm_while_the_code_runs_stops_the_command_and_saves_nothing(bank: Path, db: Path) -> None:
    learner = AtATerminal(bank, db)
    learner.wait_for("... ")
    learner.type(LOOP + ".\n")
    learner.wait_for(RUNNING)
    time.sleep(1)
    learner.process.send_signal(signal.SIGTERM)
    status, out, err = learner.finish()
    assert (status, err) == (143, "")
    assert out.endswith(RUNNING + "Stopped (SIGTERM): 0 answers saved.\n")
    assert log(db) == []
