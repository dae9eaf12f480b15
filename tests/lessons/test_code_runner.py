"""Running a learner's code through a checker (`course.checkers.run_code`, `run_code_limited`): one sentence
for every outcome, never a traceback; the limited runner stops an infinite loop and a huge allocation within
its limits and says so."""

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
    ],
)
def test_run_code_says_one_sentence(
    code: str, ok: bool, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert judged(code) == CodeVerdict(ok, sentence)
    assert capsys.readouterr() == ("", "")  # the checker's sentence and the code's prints are captured


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
        False, "✗ Your code has a syntax error on line 1: expected ':'."
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


def test_run_code_with_a_time_limit_stops_a_loop_in_this_process_and_leaves_no_timer() -> None:
    import signal

    before = signal.getsignal(signal.SIGALRM)
    began = time.monotonic()
    verdict = run_code(
        "def double(x):\n    while True:\n        pass\n", "double", "check_card_double", seconds=0.5
    )
    took = time.monotonic() - began
    assert verdict == CodeVerdict(False, "✗ Your code ran for more than 0.5 seconds: it was stopped.")
    assert verdict.sentence == time_sentence(0.5)
    assert took < 30  # stopped, not run to its end (there is none)
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert run_code(RIGHT, "double", "check_card_double", seconds=0.5) == CodeVerdict(
        True, "✓ double: all 2 cases pass."
    )


def test_off_the_main_thread_run_code_sets_no_timer_and_still_judges() -> None:
    import signal
    import threading

    found: list[CodeVerdict] = []
    thread = threading.Thread(target=lambda: found.append(judged_with_limit(RIGHT)))
    thread.start()
    thread.join()
    assert found == [CodeVerdict(True, "✓ double: all 2 cases pass.")]
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def judged_with_limit(code: str) -> CodeVerdict:
    return run_code(code, "double", "check_card_double", seconds=5.0)
