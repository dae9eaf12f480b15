"""The live widgets' background check (`course.widgets._poller.Poller`)."""

from __future__ import annotations

import threading

from course.widgets._poller import Poller


def test_it_checks_until_told_to_stop() -> None:
    calls: list[int] = []
    done = threading.Event()

    def check() -> bool:
        calls.append(1)
        if len(calls) == 3:
            done.set()
        return True

    poller = Poller(check, every=0.01).start()
    assert done.wait(5)
    poller.stop()
    assert not poller.running


def test_it_ends_when_the_check_says_so_and_outlives_a_failing_check() -> None:
    calls: list[str] = []
    finished = threading.Event()

    def check() -> bool:
        calls.append("x")
        if len(calls) == 1:
            raise RuntimeError("a bug in the check")
        finished.set()
        return False

    poller = Poller(check, every=0.01).start()
    assert finished.wait(5)
    poller.join(5)
    assert calls == ["x", "x"] and not poller.running


def test_it_gives_up_after_its_time_limit() -> None:
    calls: list[int] = []
    poller = Poller(lambda: bool(calls.append(1)) or True, every=0.01, limit=0.05).start()
    poller.join(5)
    assert len(calls) == 5
