"""The renderers of question text (HTML for the widgets, plain text for the terminal) take time linear in the
text's length, whatever it holds: a bank that `python -m course check` accepts must not stall a quiz."""

from __future__ import annotations

import random
import re
import time
import timeit
from collections.abc import Callable

import pytest

from course.bank import to_html
from course.bank._render import _replace_fences
from course.terminal.text import terminal_text


def best_time(work: Callable[[], object]) -> float:
    """The least CPU time of five runs: this process's own time, which other programs on a busy machine do not
    add to (wall time did: the ratio below flaked under load)."""
    return min(timeit.repeat(work, timer=time.process_time, number=1, repeat=5))


HOSTILE = {
    "unclosed fences": "```x\n",
    "unclosed bold": "**a ",
    "unclosed italics": "*a ",
    "unclosed display math": "$$a ",
    "unclosed code spans": "``a ",
    "unclosed underscores": "__a ",
}


@pytest.mark.parametrize("render", [to_html, lambda text: terminal_text(text, 80)], ids=["html", "terminal"])
@pytest.mark.parametrize("piece", HOSTILE.values(), ids=HOSTILE.keys())
def test_text_full_of_unclosed_markers_renders_in_linear_time(
    render: Callable[[str], str], piece: str
) -> None:
    small, large = piece * 400, piece * 4_000
    assert render(large)  # it finishes, and says something
    # Linear: about 10 times as long for 10 times the text; the unbounded spans took about 100 times as long.
    assert best_time(lambda: render(large)) < 30 * best_time(lambda: render(small))


# What the one-pass fence scan replaces, as the regular expression it replaced (quadratic on unclosed fences).
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def test_the_fence_scan_replaces_what_the_regular_expression_replaced() -> None:
    rng = random.Random(7)
    pieces = ["```", "```x", "\n", "``` \t", "a", " ", "`", "\n```\n"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        expected = FENCE.sub(lambda found: f"<{found.group(1)}>", text)
        assert _replace_fences(text, lambda code: f"<{code}>") == expected, repr(text)


def test_bold_and_code_of_ordinary_length_are_still_rendered() -> None:
    assert to_html("a **" + "b" * 400 + "** c") == "<p>a <strong>" + "b" * 400 + "</strong> c</p>"
    assert terminal_text("a **not** b `" + "c" * 1_000 + "`", 2_000) == "a NOT b " + "c" * 1_000
