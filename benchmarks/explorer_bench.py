"""How long each lesson's explorer takes to redraw, from a control's change to the new image.

Usage: python benchmarks/explorer_bench.py [--repeat 10]

For each explorer (lessons 01, 02, 04, 05), built on the same data as in its lesson, it moves one control
through a cycle of values `--repeat` times each and prints the median and the slowest redraw (the
`Explorer.redraw_seconds` of each change: drawing the figure, the PNG at 200 dpi and its text checks; the
browser's part, sending about 100 kB and decoding the image, is not in it), and the ratio of the slowest to
the target of 1 second ("well under a second": a ratio at most 0.5). Single-threaded (matplotlib's Agg
renderer is); run it on the 2-core machine the course targets.
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np

from course import attention as ref
from course.explorers import (
    AVERAGE,
    D_K_CHOICES,
    heads_explorer,
    mask_explorer,
    scaling_explorer,
    temperature_explorer,
)
from course.widgets._explorer import Explorer

TARGET_S = 1.0
TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def three_heads() -> tuple[np.ndarray, list[str], list[str]]:
    """Lesson 04's three heads (previous word, next word, the noun) over its eight words."""
    words = ["the", "old", "cat", "sat", "because", "it", "was", "tired"]
    t = len(words)
    logits = np.full((3, t, t), -12.0)  # (h, T, T): one key per query and head at +12
    for p in range(t):
        logits[0, p, max(p - 1, 0)] = logits[1, p, min(p + 1, t - 1)] = logits[2, p, 2] = 12.0
    names = ["head 0: previous word", "head 1: next word", "head 2: the noun"]
    return ref.softmax(logits), words, names


def cases() -> list[tuple[str, Explorer, str, list[Any]]]:
    weights, words, names = three_heads()
    return [
        ("01 temperature", temperature_explorer([2.0, 1.0, 0.5, -1.0]), "temperature", [0.1, 1.0, 10.0]),
        ("02 scaling", scaling_explorer(), "d_k", list(D_K_CHOICES)),
        ("04 heads", heads_explorer(weights, words, names), "head", [*names, AVERAGE]),
        ("05 masks, T_q", mask_explorer(TOKENS), "t_q", [1, 3, 6]),
        ("05 masks, mask", mask_explorer(TOKENS), "mask", ["none", "causal", "padding", "causal + padding"]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10, help="cycles through each control's values")
    args = parser.parse_args()
    print(f"{'explorer':<16} {'redraws':>7} {'median':>8} {'slowest':>8} {'slowest / 1 s':>14}")
    worst = 0.0
    for name, explorer, control, values in cases():
        times = []
        for _ in range(args.repeat):
            for value in values:
                if explorer.controls[control].value == value:
                    continue
                explorer.controls[control].value = value
                times.append(explorer.redraw_seconds)
        slowest = max(times)
        worst = max(worst, slowest / TARGET_S)
        print(
            f"{name:<16} {len(times):>7} {statistics.median(times):>7.3f}s {slowest:>7.3f}s "
            f"{slowest / TARGET_S:>14.2f}"
        )
    verdict = "met" if worst <= 0.5 else "NOT met"
    print(f"target (every redraw at most half of {TARGET_S:.0f} s): {verdict}, worst ratio {worst:.2f}")


if __name__ == "__main__":
    main()
