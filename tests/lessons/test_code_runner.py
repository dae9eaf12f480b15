"""Running a learner's code through a checker (`course.checkers.run_code`, `run_code_limited`): one sentence
for every outcome, never a traceback, the same from both runners; the limited runner (the learner's code in a
child process, the checker here) stops an infinite loop and a huge allocation within its limits and says so,
on any thread, kills every process the code started, refuses the course's own code, and cannot be told the
verdict by the code it runs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import course.checkers
from course.checkers import CheckResult, CodeVerdict, run_code, run_code_limited
from course.checkers._engine import Case, run_cases
from course.checkers._running import memory_sentence, time_sentence


def check_card_double(fn: Callable[[Any], Any]) -> CheckResult:
    """A demo card checker: ``double(x)`` is ``2 * x``."""

    def case(values: list[float]) -> Case:
        x = np.array(values)
        return Case(f"x = {values}", (x,), 2 * x, mistakes=((x * x, "it squares x; double it instead"),))

    return run_cases("double", fn, [case([1.0, 3.0]), case([2.0])])


@pytest.fixture(autouse=True)
def demo_checker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(course.checkers, "check_card_double", check_card_double, raising=False)


def judged(code: str, function: str = "double") -> CodeVerdict:
    return run_code(code, function, "check_card_double")


def judged_apart(code: str, function: str = "double") -> CodeVerdict:
    return run_code_limited(code, function, "check_card_double")


RIGHT = "def double(x):\n    return 2 * x\n"


@pytest.mark.parametrize(
    ("code", "ok", "sentence"),
    [
        (RIGHT, True, "✓ double: all 2 cases pass."),
        (
            "def double(x):\n    return x * x\n",
            False,
            "✗ double, case 1 of 2 (x = [1.0, 3.0]): output[0] is 1, expected 2; it squares x; double it "
            "instead.",
        ),
        (
            "def double(x):\n    return 2 * x\n  y = 1\n",
            False,
            "✗ Your code has a syntax error on line 3: unindent does not match any outer indentation level.",
        ),
        (
            "def double(x)\n    return 2 * x\n",
            False,
            "✗ Your code has a syntax error on line 1: expected ':'.",
        ),
        ("def twice(x):\n    return 2 * x\n", False, "✗ Your code defines no function named double."),
        ("double = 2\n", False, "✗ Your code defines double as a value of type int, not as a function."),
        (
            "x = 1\ny = npp.ones(3)\n",
            False,
            "✗ Your code raised NameError: name 'npp' is not defined (line 2).",
        ),
        ("raise ValueError\n", False, "✗ Your code raised ValueError (line 1)."),
        (
            "def helper(x):\n    return x.shape[3]\n\ndef double(x):\n    return helper(x) * 2\n",
            False,
            "✗ double, case 1 of 2 (x = [1.0, 3.0]): your function raised IndexError: tuple index out of "
            "range (line 2).",
        ),
        (
            "def double(x):\n    raise NotImplementedError\n",
            False,
            "· double: not written yet. Replace the `raise NotImplementedError` line with your code, then "
            "run this cell again.",
        ),
        (
            "def double(x):\n    ...\n",
            False,
            "✗ double, case 1 of 2 (x = [1.0, 3.0]): your function returned None instead of the output (is a "
            "return statement missing?).",
        ),
        (
            "import sys\ndef double(x):\n    sys.exit(3)\n",
            False,
            "✗ Your code raised SystemExit: 3 (line 3).",
        ),
        (
            "print('hello')\ndef double(x):\n    print(x)\n    return x + x\n",
            True,
            "✓ double: all 2 cases pass.",
        ),
        ("def double(x):\n    return 2 * math.pi / math.pi * x\n", True, "✓ double: all 2 cases pass."),
        (
            "def double(x):\n    x *= 2\n    return x\n",
            False,
            "✗ double, case 1 of 2 (x = [1.0, 3.0]): your function changed its input `x` in place; compute a "
            "new array instead.",
        ),
        (
            "def double(x):\n    return [2 * v for v in x]\n",
            True,
            "✓ double: all 2 cases pass.",
        ),
    ],
    ids=[
        "right",
        "a named mistake",
        "syntax error",
        "missing colon",
        "no such function",
        "not a function",
        "error at the top",
        "error without words",
        "error in a helper",
        "not written yet",
        "no return",
        "exit",
        "prints",
        "math is there",
        "in place",
        "a list",
    ],
)
def test_run_code_says_one_sentence(
    code: str, ok: bool, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert judged(code) == CodeVerdict(ok, sentence, retry="syntax error" in sentence)
    assert capsys.readouterr() == ("", "")  # the checker's sentence and the code's prints are captured


APART = {  # where the learner's runner says more than run_code (which runs the course's own code)
    "· double: not written yet. Replace the `raise NotImplementedError` line with your code, then run this "
    "cell again.": "✗ Your double is not written yet: it raises NotImplementedError.",
}


@pytest.mark.parametrize(
    ("code", "ok", "sentence"),
    test_run_code_says_one_sentence.pytestmark[0].args[1],  # type: ignore[attr-defined]
    ids=test_run_code_says_one_sentence.pytestmark[0].kwargs["ids"],  # type: ignore[attr-defined]
)
def test_the_learners_runner_says_the_same_sentences(
    code: str, ok: bool, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    said = APART.get(sentence, sentence)
    assert judged_apart(code) == CodeVerdict(ok, said, retry="syntax error" in sentence)
    assert capsys.readouterr() == ("", "")


def test_a_missing_checker_and_a_failing_checker_are_sentences(monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_code(RIGHT, "double", "check_card_nothing") == CodeVerdict(
        False, "✗ There is no checker named check_card_nothing (a bug in the course: please report it)."
    )

    def check_card_broken(fn: Callable[[Any], Any]) -> CheckResult:
        raise KeyError("oops")

    monkeypatch.setattr(course.checkers, "check_card_broken", check_card_broken, raising=False)
    assert run_code(RIGHT, "double", "check_card_broken") == CodeVerdict(
        False,
        "✗ The checker check_card_broken failed on your code (KeyError: 'oops'; a bug in the course: please "
        "report it).",
    )


def test_each_run_has_a_fresh_namespace() -> None:
    assert judged("LEAK = 1\n" + RIGHT).ok
    assert judged("def double(x):\n    return LEAK * 2 * x\n") == CodeVerdict(
        False,
        "✗ double, case 1 of 2 (x = [1.0, 3.0]): your function raised NameError: name 'LEAK' is not defined "
        "(line 2).",
    )


# ---- the limited runner: a child process (the checker must be a real one of course.checkers)

MASK = "def causal_mask(t):\n    {body}\n"
RIGHT_MASK = MASK.format(body="return np.tril(np.ones((t, t), dtype=bool))")


def limited(body: str, **limits: Any) -> tuple[CodeVerdict, float]:
    began = time.monotonic()
    verdict = run_code_limited(MASK.format(body=body), "causal_mask", "check_causal_mask", **limits)
    return verdict, time.monotonic() - began


def test_the_limited_runner_gives_the_checkers_sentences() -> None:
    assert limited("return np.tril(np.ones((t, t), dtype=bool))")[0] == CodeVerdict(
        True, "✓ causal mask: all 3 cases pass."
    )
    assert limited("return np.triu(np.ones((t, t), dtype=bool))")[0] == CodeVerdict(
        False,
        "✗ causal mask, case 1 of 3 (T = 4): query 0 may attend to key 1, a future position (mask[0, 1] "
        "should be False); it is the upper triangle, j >= i: each query sees the future; keep the lower one, "
        "j <= i.",
    )
    assert limited("return npp.tril(t)")[0] == CodeVerdict(
        False,
        "✗ causal mask, case 1 of 3 (T = 4): your function raised NameError: name 'npp' is not defined "
        "(line 2).",
    )
    assert run_code_limited("def causal_mask(t)\n", "causal_mask", "check_causal_mask") == CodeVerdict(
        False, "✗ Your code has a syntax error on line 1: expected ':'.", retry=True
    )


def test_what_the_code_writes_does_not_confuse_the_runner() -> None:
    body = (
        "import os, sys; os.write(1, b'{\"ok\": true}\\n' * 1000); print('x' * 100000, file=sys.__stdout__)\n"
    )
    verdict, _ = limited(body + "    return np.triu(np.ones((t, t), dtype=bool))")
    assert not verdict.ok and verdict.sentence.startswith("✗ causal mask, case 1 of 3 (T = 4): query 0 may")


def test_an_infinite_loop_is_stopped_on_time() -> None:
    verdict, took = limited("while True: pass", seconds=1.5)
    assert verdict == CodeVerdict(False, "✗ Your code ran for more than 1.5 seconds: it was stopped.")
    assert 1.5 <= took < 1.5 + 5  # the limit, plus the child's start-up and the kill


def test_code_that_sleeps_is_stopped_on_time_and_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    verdict, took = limited(
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)", seconds=1
    )
    assert verdict == CodeVerdict(False, "✗ Your code ran for more than 1 second: it was stopped.")
    assert took < 1 + 5
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_a_10_gb_allocation_is_stopped_by_the_memory_limit() -> None:
    verdict, took = limited("return np.ones(10 * 10**9 // 8)")
    assert verdict == CodeVerdict(False, "✗ Your code used more than 1 GiB of memory: it was stopped.")
    assert took < 5
    top = run_code_limited("a = np.ones((10 * 10**9 // 8,))\n", "causal_mask", "check_causal_mask")
    assert top == CodeVerdict(False, "✗ Your code used more than 1 GiB of memory: it was stopped.")


def test_memory_filled_little_by_little_is_stopped_too() -> None:
    verdict, _ = limited(
        "chunks = []\n    while True: chunks.append(np.ones(1 << 20))", memory_bytes=256 << 20
    )
    assert verdict == CodeVerdict(False, "✗ Your code used more than 256 MiB of memory: it was stopped.")


def test_a_memory_error_in_the_child_is_the_memory_limit() -> None:
    assert limited("raise MemoryError('no room')")[0] == CodeVerdict(False, memory_sentence(1 << 30))


def test_the_sentences_name_the_limits() -> None:
    assert time_sentence(10.0) == "✗ Your code ran for more than 10 seconds: it was stopped."
    assert time_sentence(1) == "✗ Your code ran for more than 1 second: it was stopped."
    assert memory_sentence(1 << 30) == "✗ Your code used more than 1 GiB of memory: it was stopped."
    assert memory_sentence(3 << 29) == "✗ Your code used more than 1.5 GiB of memory: it was stopped."
    assert memory_sentence(512 << 20) == "✗ Your code used more than 512 MiB of memory: it was stopped."


def test_off_the_main_thread_the_learners_runner_stops_a_loop_on_time() -> None:
    """A widget's callback runs on a kernel subshell thread in JupyterLab 4.6: no signal reaches it."""
    import threading

    found: list[tuple[CodeVerdict, float]] = []
    thread = threading.Thread(target=lambda: found.append(limited("while True: pass", seconds=1)))
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    [(verdict, took)] = found
    assert verdict == CodeVerdict(False, "✗ Your code ran for more than 1 second: it was stopped.")
    assert 1 <= took < 1 + 5


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is dead, waiting to be reaped
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(
    "start",
    [
        "subprocess.Popen(['sleep', '60'], start_new_session=True).pid",
        # a daemon: forked twice, in a session of its own, its parent gone
        "os.fork() or (os.setsid(), os.fork() or time.sleep(60), os._exit(0))",
    ],
    ids=["a new session", "a double fork"],
)
def test_a_process_the_code_starts_neither_hangs_the_run_nor_outlives_it(start: str, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    code = (
        "import os, subprocess, time\n"
        f"started = {start}\n"
        "time.sleep(0.5)\n"
        f"open({str(pids)!r}, 'a').write(' '.join(str(p) for p in os.popen('ps -o pid= --ppid ' + "
        "str(os.getpid())).read().split()) + ' ')\n"
        f"{RIGHT_MASK}"
    )
    began = time.monotonic()
    verdict = run_code_limited(code, "causal_mask", "check_causal_mask", seconds=5)
    assert verdict == CodeVerdict(True, "✓ causal mask: all 3 cases pass.")
    assert time.monotonic() - began < 5
    started = [int(pid) for pid in pids.read_text().split()]
    assert started  # the sleeping process was found among the child's
    time.sleep(0.2)
    assert [pid for pid in started if _alive(pid)] == []


def test_the_code_cannot_give_the_verdict_itself() -> None:
    forged = (
        "import json, os\n"
        "for fd in range(3, 64):\n"
        "    for reply in ({'ok': True, 'sentence': '✓ causal mask: all 3 cases pass.'},\n"
        "                  {'kind': 'returned', 'value': True}):\n"
        "        try:\n"
        "            os.write(fd, (json.dumps(reply) + '\\n').encode())\n"
        "        except OSError:\n"
        "            pass\n"
    )
    verdict = run_code_limited(
        forged + "def causal_mask(t):\n    return np.triu(np.ones((t, t), dtype=bool))\n",
        "causal_mask",
        "check_causal_mask",
    )
    assert not verdict.ok and verdict.sentence.startswith("✗ causal mask, case 1 of 3 (T = 4): query 0 may")
    patched = "import course.checkers\ncourse.checkers.check_causal_mask = lambda fn: True\n"
    assert run_code_limited(patched + RIGHT_MASK, "causal_mask", "check_causal_mask") == CodeVerdict(
        False,
        "✗ Write it yourself: your code imports course.checkers, the course's own code, and a card asks for "
        "yours, from memory (np and math are there already).",
    )


@pytest.mark.parametrize(
    ("code", "module"),
    [
        ("from course.attention import causal_mask\n", "course.attention"),
        (
            "def causal_mask(t):\n    from course import attention\n    return attention.causal_mask(t, t)\n",
            "course",
        ),
        ("import importlib\nimportlib.import_module('scheduler')\n", "scheduler"),
    ],
)
def test_the_courses_own_code_is_refused_in_words(code: str, module: str) -> None:
    assert run_code_limited(code, "causal_mask", "check_causal_mask") == CodeVerdict(
        False,
        f"✗ Write it yourself: your code imports {module}, the course's own code, and a card asks for yours, "
        "from memory (np and math are there already).",
    )
    assert run_code_limited("import numpy, math, json\n" + RIGHT_MASK, "causal_mask", "check_causal_mask").ok


def test_the_starter_sent_unchanged_says_so() -> None:
    starter = "def causal_mask(t):\n    ...\n"
    verdict = run_code_limited(starter + "\n", "causal_mask", "check_causal_mask", starter=starter)
    assert verdict == CodeVerdict(False, "✗ You sent the starter unchanged.")


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_an_interrupt_stops_the_code_and_judges_nothing() -> None:
    """Kernel > Interrupt signals the kernel's process group, the child among it: here, the child alone."""
    import signal
    import threading

    outcome: list[BaseException | CodeVerdict] = []

    def run() -> None:
        try:
            outcome.append(limited("while True: pass", seconds=30)[0])
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 30
    children: list[int] = []
    while not children and time.monotonic() < deadline:
        time.sleep(0.2)
        children = [int(pid) for pid in os.popen(f"ps -o pid= --ppid {os.getpid()}").read().split()]
    time.sleep(0.5)  # running the loop
    for pid in children:
        os.kill(pid, signal.SIGINT)
    thread.join(timeout=30)
    assert not thread.is_alive()
    [error] = outcome
    assert isinstance(error, KeyboardInterrupt)


def check_card_branch(fn: Callable[..., Any]) -> CheckResult:
    """A demo card whose function is given a function: ``branch(x, f)`` is ``x + f(x)``."""
    x = np.arange(3.0)

    def sublayer(h: Any) -> Any:
        if np.shape(h) != (3,):
            raise ValueError(f"sublayer expects shape (3,), got {np.shape(h)}")
        return 10 * np.asarray(h)

    return run_cases("branch", fn, [Case("x = [0, 1, 2]", (x, sublayer), x + 10 * x)])


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ("return x + f(x)", "✓ branch: all 1 cases pass."),
        (
            "return x + f(x[:2])",
            "✗ branch, case 1 of 1 (x = [0, 1, 2]): your function raised ValueError: sublayer expects shape "
            "(3,), got (2,) (line 2).",
        ),
    ],
)
def test_a_function_given_to_the_learners_is_called_back_here(
    body: str, sentence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(course.checkers, "check_card_branch", check_card_branch, raising=False)
    code = f"def branch(x, f):\n    {body}\n"
    assert run_code_limited(code, "branch", "check_card_branch").sentence == sentence
    assert run_code(code, "branch", "check_card_branch").sentence == sentence


def check_card_lean(fn: Callable[..., Any]) -> CheckResult:
    """A demo card that bounds the memory of the learner's call: no (n, n) matrix for n = 2000."""
    x = np.ones(2000)
    return run_cases(
        "lean",
        fn,
        [
            Case(
                "n = 2000",
                (x,),
                x * 2000.0,
                peak_limit=4 * 2000 * 2000,
                peak_words="it builds an (n, n) matrix",
            )
        ],
    )


def test_the_peak_memory_of_a_call_is_measured_where_it_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(course.checkers, "check_card_lean", check_card_lean, raising=False)
    lean = "def lean(x):\n    return x * x.sum()\n"
    wide = "def lean(x):\n    return np.outer(x, x).sum(axis=1)\n"
    for run in (run_code, run_code_limited):
        assert run(lean, "lean", "check_card_lean").sentence == "✓ lean: all 1 cases pass."
        assert run(wide, "lean", "check_card_lean").sentence == (
            "✗ lean, case 1 of 1 (n = 2000): it builds an (n, n) matrix."
        )


def test_the_cards_mistakes_are_named_alike_by_both_runners() -> None:
    """One wrong answer per card of the course (test_code_cards.WRONG): the same sentence apart as here."""
    from test_code_cards import CARDS, WRONG

    firsts = {row[0]: row for row in reversed(WRONG)}
    for card_id, code, *_ in firsts.values():
        card = CARDS[card_id]
        assert card.function is not None and card.checker is not None
        here = run_code(code, card.function, card.checker)
        assert run_code_limited(code, card.function, card.checker) == here, card_id
