"""How long a learner waits for a code card's verdict: the learner's runner against grading in the kernel.

Usage: python benchmarks/code_runner_bench.py [--repeat 3]

For every code card of the shipped bank, its worked solution is graded `--repeat` times by
`course.checkers.run_code_limited` (the learner's code in a child process, the checker here: what the quiz,
the review and the terminal do) and by `course.checkers.run_code` (the same code in this process, as the
notebook did before; it has no limits that hold off the main thread). It prints, per card, the median of
each and their ratio, then the slowest card's time apart against the target of one second from Shift+Enter
to the verdict ("at once": a ratio at most 1), and the median start of the child alone (``while True`` at
the top of the code, stopped by a 0.01 s limit, is the start plus the kill). Single-threaded; run it on the
2-core machine the course targets.
"""

from __future__ import annotations

import argparse
import statistics
import time

from course.bank import Kind, load_bank
from course.checkers import run_code, run_code_limited

TARGET_S = 1.0


def median_seconds(grade: object, code: str, function: str, checker: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        verdict = grade(code, function, checker)  # type: ignore[operator]
        times.append(time.perf_counter() - began)
        assert verdict.ok, (checker, verdict.sentence)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    cards = [question for question in load_bank().all() if question.kind == Kind.CODE]
    print(f"{'card':<32} {'apart (s)':>10} {'in kernel (s)':>14} {'ratio':>7}")
    slowest = 0.0
    for card in cards:
        assert card.function is not None and card.checker is not None
        code = str(card.solution)
        apart = median_seconds(run_code_limited, code, card.function, card.checker, repeat)
        here = median_seconds(run_code, code, card.function, card.checker, repeat)
        slowest = max(slowest, apart)
        print(f"{card.id:<32} {apart:>10.3f} {here:>14.3f} {apart / here:>7.1f}")
    starts = []
    for _ in range(repeat):
        began = time.perf_counter()
        run_code_limited("while True: pass\n", "f", "check_card_softmax", seconds=0.01)
        starts.append(time.perf_counter() - began)
    ratio = slowest / TARGET_S
    print(f"\n{len(cards)} cards; the slowest verdict apart: {slowest:.3f} s, {ratio:.2f} of the 1 s target")
    print(f"the child's start and kill alone (median of {repeat}): {statistics.median(starts):.3f} s")


if __name__ == "__main__":
    main()
