"""A code card in the review, in JupyterLab and headless Chromium, by keyboard alone.

The review of a bank holding one code card (its checker `course.checkers.check_causal_mask`) runs on a store
with fsrs's same-day steps, so that an Again comes back before the session ends. The card is answered wrong,
then right, each typed at full speed (no delay between the keys; Enter keeps the indentation and adds a level
after a colon, Backspace at an indent removes a level, Tab indents) and sent with Shift+Enter at once: the
code graded is the code typed, each verdict is said in the live region, the worked solution shows after the
attempt, and the store holds Again then Good. Tab indents in the code box; Escape then Tab leaves it (and the
hint, the box's description, says so); after Next the focus is on the question, not in the box. axe-core finds
nothing wrong in the widget, before and after an answer; at 320 CSS px the widget fits its column.

Needs the system Chromium and the playwright package, as ``tests/browser/test_first_day.py`` (whose helpers
it uses).
Set ``COURSE_BROWSER_SCREENSHOT`` to a directory to keep screenshots of the code box.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import nbformat
import pytest

from browser import notebook as nb
from browser.test_first_day import (
    _OVERFLOW,
    keep_screenshot,
    lab_in_browser,
    no_violations,
    open_notebook,
    require_browser,
)
from course.checkers import run_code
from course.widgets._code import CODE_HINT
from scheduler import Rating, Store

BANK = """lesson = "05"

[[question]]
id = "05-code-causal-mask"
kind = "code"
prompt = '''Write `causal_mask(t)`: a (t, t) boolean mask, True where query i may attend to key j.'''
checker = "check_causal_mask"
function = "causal_mask"
starter = '''
def causal_mask(t):
    ...
'''
solution = '''
def causal_mask(t):
    return np.tril(np.ones((t, t), dtype=bool))
'''
explanation = '''Query i sees keys 0 to i: the lower triangle, diagonal included.'''
section = "2. The causal mask"
"""

# What the learner types: "\t" is the Tab key (4 spaces), "\b" Backspace, "\n" Enter, which keeps the line's
# indentation and adds a level after a colon; Backspace at an indent removes one level.
WRONG_KEYS = "def causal_mask(t):\n\b\treturn np.triu(np.ones((t, t), dtype=bool))"
RIGHT_KEYS = (
    "def causal_mask(t):\n"
    "# True where query i may attend to key j: j <= i\n"
    "rows, cols = np.indices((t, t))\n"
    "if t == 0:\n"
    "return np.zeros((0, 0), dtype=bool)\n"
    "\breturn cols <= rows"
)


def typed(keys: str) -> str:
    """What the code box holds once `keys` are typed into an empty one, by the editor's rules."""
    text = ""
    for key in keys:
        line = text.rsplit("\n", 1)[-1]
        if key == "\n":
            lead = line[: len(line) - len(line.lstrip(" "))]
            text += "\n" + lead + ("    " if line.rstrip().endswith(":") else "")
        elif key == "\t":
            text += "    "
        elif key == "\b":
            text = text[: -(len(line) % 4 or 4)] if line and not line.strip(" ") else text[:-1]
        else:
            text += key
    return text


def test_the_editors_rules_as_typed() -> None:
    assert typed(WRONG_KEYS) == "def causal_mask(t):\n    return np.triu(np.ones((t, t), dtype=bool))"
    assert typed(RIGHT_KEYS) == (
        "def causal_mask(t):\n"
        "    # True where query i may attend to key j: j <= i\n"
        "    rows, cols = np.indices((t, t))\n"
        "    if t == 0:\n"
        "        return np.zeros((0, 0), dtype=bool)\n"
        "    return cols <= rows"
    )


def type_fast(page: Any, keys: str) -> None:
    """Type `keys` with no delay between them, "\t" pressed as the Tab key (``keyboard.type`` would insert
    a tab character) and "\b" as Backspace."""
    for part in re.split(r"([\t\b])", keys):
        if part == "\t":
            page.keyboard.press("Tab")
        elif part == "\b":
            page.keyboard.press("Backspace")
        elif part:
            page.keyboard.type(part)


CELL = """from datetime import timedelta
from course.bank import load_bank
from course.widgets import ReviewWidget
from scheduler import Memory, Store
steps = dict(
    learning_steps=(timedelta(minutes=1), timedelta(minutes=10)), relearning_steps=(timedelta(minutes=10),)
)
ReviewWidget(load_bank(r'{bank}'), store=Store.open(r'{db}', memory=Memory(**steps)))"""

_FOCUSED = "() => document.activeElement && document.activeElement.tagName"


@pytest.mark.browser
@pytest.mark.timeout(180, method="signal")
def test_a_code_card_answered_wrong_then_right_by_keyboard_in_the_browser(tmp_path: Path) -> None:
    require_browser()
    from playwright.sync_api import expect  # here: without playwright the test is skipped, not broken

    bank = tmp_path / "bank"
    bank.mkdir()
    (bank / "05-code.toml").write_text(BANK, encoding="utf-8")
    wrong_said = run_code(typed(WRONG_KEYS), "causal_mask", "check_causal_mask").sentence
    assert wrong_said.startswith("✗ causal mask, case 1 of 3 (T = 4): ") and "upper triangle" in wrong_said
    with lab_in_browser(tmp_path) as (lab, page, db):
        with Store.open(db) as store:
            store.enroll("05", datetime.now(timezone.utc))
        nbformat.write(
            nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL.format(bank=bank, db=db))]),
            tmp_path / "course" / "code.ipynb",
        )
        open_notebook(lab, page, "code.ipynb", db)
        nb.run_all(page)
        nb.wait_for_text(page, ".jp-OutputArea-output", "this session:")
        review = nb.current_panel(page).locator(".jp-OutputArea-output", has=page.locator(".course-widget"))
        status = review.get_by_role("status")
        prompt = review.locator(".widget-htmlmath").first
        box = review.get_by_role("textbox", name="Your code for causal_mask", exact=True)
        run = review.get_by_role("button", name="Run and check", exact=True)
        next_button = review.get_by_role("button", name="Next", exact=True)
        expect(box).to_have_value("def causal_mask(t):\n    ...\n")
        expect(box).to_have_accessible_description(CODE_HINT)
        hint = review.locator(".course-code-hint .widget-html-content")
        # the theme's secondary text colour (4.6:1 here; 5.6:1 in the dark theme, where #616161 was 3.0:1)
        assert hint.evaluate("(e) => getComputedStyle(e).color") == "rgba(0, 0, 0, 0.54)"
        expect(box).to_have_attribute("spellcheck", "false")
        font = box.evaluate("(e) => getComputedStyle(e).fontFamily")
        assert "mono" in font.lower(), font
        assert box.evaluate("(e) => e.rows") == 6
        keep_screenshot(page, "code-box", show=review)
        no_violations(page, ".course-widget")

        # 1. Wrong, typed at full speed and sent at once: Again, the checker's sentence and the solution.
        box.focus()
        page.keyboard.press("ControlOrMeta+a")
        type_fast(page, WRONG_KEYS)
        page.keyboard.press("Shift+Enter")
        wrong = wrong_said.removeprefix("✗ ")
        expect(status).to_have_text(
            re.compile(
                rf"^✗ Not quite: {re.escape(wrong)} Saved: Again\. It comes back later in this session\.$"
            )
        )
        expect(next_button).to_be_focused()
        expect(box).to_have_value(typed(WRONG_KEYS))  # what was graded, kept in view
        expect(box).to_be_disabled()
        # graded code wraps (a disabled box takes no focus, so it could not be scrolled by keyboard)
        assert box.evaluate("(e) => getComputedStyle(e).whiteSpace") == "pre-wrap"
        solution = review.locator("pre", has_text="np.tril(np.ones((t, t), dtype=bool))")
        expect(solution).to_have_count(1)
        expect(review.get_by_text("A worked solution:", exact=True)).to_have_count(1)
        keep_screenshot(page, "wrong", show=review)
        no_violations(page, ".course-widget")
        # Reflow: at 320 CSS px (a phone, or 400 % zoom) the box, the verdict and the solution fit.
        size = page.viewport_size
        page.set_viewport_size({"width": 320, "height": 900})
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.wait_for_timeout(300)
        wide, width, area = page.evaluate(_OVERFLOW)
        assert wide == [] and width <= area, f"wider than {area} px: {wide}"
        keep_screenshot(page, "code-320px", show=review)
        no_violations(page, ".course-widget")
        page.set_viewport_size(size)
        with Store.open(db, create=False) as store:
            assert [(r.item_id, r.rating) for r in store.reviews()] == [("05-code-causal-mask", Rating.AGAIN)]

        # 2. Next: the card comes back (a same-day step); the focus is on the question, not in the code box.
        page.keyboard.press("Enter")
        expect(review.get_by_text("Previous question: Saved: Again.")).to_have_count(1)
        expect(prompt).to_be_focused()
        expect(box).to_be_enabled()
        expect(box).to_have_value("def causal_mask(t):\n    ...\n")
        page.keyboard.press("Shift+Enter")  # a habitual Shift+Enter on the question sends nothing
        page.wait_for_timeout(500)  # time enough for the kernel to grade, were it to
        expect(box).to_be_enabled()
        expect(review.get_by_text("A worked solution")).to_have_count(0)

        # 3. Tab into the box; Tab indents there; Escape then Tab leaves it, to Run and check.
        page.keyboard.press("Tab")
        expect(box).to_be_focused()
        page.keyboard.press("ControlOrMeta+a")
        page.keyboard.press("Tab")
        expect(box).to_be_focused()
        expect(box).to_have_value("    ")
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        expect(run).to_be_focused()
        page.keyboard.press("Shift+Tab")
        expect(box).to_be_focused()

        # 4. Right, typed at full speed and sent at once: Good preselected, saved by Next.
        page.keyboard.press("ControlOrMeta+a")
        type_fast(page, RIGHT_KEYS)
        page.keyboard.press("Shift+Enter")
        expect(status).to_have_text(
            "✓ Right: causal mask: all 3 cases pass. Not saved yet: press Next to save it."
        )
        expect(next_button).to_be_focused()
        expect(box).to_have_value(typed(RIGHT_KEYS))
        expect(review.get_by_role("radio", name=re.compile(r"^Good\b"))).to_be_checked()
        expect(review.get_by_text("A worked solution, to compare with yours:", exact=True)).to_have_count(1)
        keep_screenshot(page, "right", show=review)
        no_violations(page, ".course-widget")
        page.keyboard.press("Enter")
        expect(review.get_by_text("Previous question: Saved: Good.")).to_have_count(1)
        expect(prompt).to_be_focused()
        assert page.evaluate(_FOCUSED) != "TEXTAREA"

        # 5. Back once more (its 10-minute step): typed, Escape, Tab to Run and check, Enter; Next ends it.
        page.keyboard.press("Tab")
        expect(box).to_be_focused()
        page.keyboard.press("ControlOrMeta+a")
        type_fast(page, RIGHT_KEYS)
        # the box grew with the code as it was typed: every line in view, no scroll bar
        assert box.evaluate("(e) => [e.rows, e.scrollHeight <= e.clientHeight]") == [7, True]
        keep_screenshot(page, "typed", show=review)
        page.keyboard.press("Escape")
        page.keyboard.press("Tab")
        expect(run).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(
            "✓ Right: causal mask: all 3 cases pass. Not saved yet: press Next to save it."
        )
        expect(box).to_have_value(typed(RIGHT_KEYS))
        expect(next_button).to_be_focused()
        page.keyboard.press("Enter")
        expect(status).to_have_text(re.compile(r"^2 of 3 remembered\. Next review: tomorrow \("))  # the end

    with Store.open(db, create=False) as store:
        assert [(r.item_id, r.rating) for r in store.reviews()] == [
            ("05-code-causal-mask", Rating.AGAIN),
            ("05-code-causal-mask", Rating.GOOD),
            ("05-code-causal-mask", Rating.GOOD),
        ]
