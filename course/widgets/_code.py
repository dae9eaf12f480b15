"""A code answer: a multi-line code box, a hint and "Run and check", graded on exactly the code typed.

The box (a ``Textarea``, `CODE_CLASS`) is prefilled with the card's starter code, monospace, a few rows high;
in the browser the chrome's script (`course.widgets._chrome`) makes it grow with its code, makes Enter keep
the line's indentation (a level more after a colon) and Backspace at an indent remove a level, makes Tab
indent by 4 spaces (Escape then Tab, or Shift+Tab, leaves it: the hint says so, and is the box's description),
and sends the code with Shift+Enter or a click on the button through a hidden box of its own (`TYPED_CLASS`),
as `course.widgets._typed` does for a typed number: one value that carries both the submission and the code,
so a submission never overtakes the last keys typed. The code travels as JSON (a text box's value holds no
line break). Where the script does not run (the tests, a front end that does not run it), the button's click
reads the box's value.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from course.widgets._chrome import (
    ANSWER_ROW_CLASS,
    CODE_CLASS,
    CODE_HINT_CLASS,
    CODE_ROWS,
    SUBMIT_CLASS,
    TYPED_CLASS,
)

__all__ = ["CODE_HINT", "CodeAnswer", "code_rows"]

CODE_HINT = (
    "Enter keeps the indentation (one level more after a colon), Backspace at an indent removes one level, "
    "Tab indents by 4 spaces; to leave the box, press Escape then Tab (or Shift+Tab). "
    "Shift+Enter runs and checks your code."
)


def code_rows(code: str) -> int:
    """How many rows the box shows for `code`: one more than its lines, within `CODE_ROWS` (the page
    script grows it the same way as the learner types)."""
    fewest, most = CODE_ROWS
    return max(fewest, min(most, len(code.split("\n")) + 1))


class CodeAnswer:
    """`row` (the code box, its hint and a "Run and check" button) to display; `submit(code)` is called with
    the code typed when the learner presses Shift+Enter in the box or the button. `box` and `button` are the
    controls."""

    def __init__(self, submit: Callable[[str], None], *, function: str, starter: str) -> None:
        self._submit = submit
        starter = starter.strip("\n") + "\n"
        self.box = widgets.Textarea(
            value=starter,
            description=f"Your code for {function}",  # the box's label, and so its accessible name
            rows=code_rows(starter),
            continuous_update=True,
            style={"description_width": "initial"},
            layout=widgets.Layout(width="auto", max_width="100%"),
        )
        self.box.add_class(CODE_CLASS)
        self.hint = widgets.HTML(f"<p>{html.escape(CODE_HINT)}</p>")
        self.hint.add_class(CODE_HINT_CLASS)
        self.button = widgets.Button(
            description="Run and check",
            tooltip="Run your code and check it (or press Shift+Enter in the box)",
        )
        self.button.add_class(SUBMIT_CLASS)
        self.button.on_click(lambda _button: self._submit(self.box.value))
        # What the chrome's script sends: "<a count>:<the code as a JSON string>", a new count each time.
        self.typed = widgets.Text(layout=widgets.Layout(display="none"))
        self.typed.add_class(TYPED_CLASS)
        self.typed.observe(self._on_typed, names="value")
        self.row = widgets.VBox([self.box, self.hint, self.button, self.typed])
        self.row.add_class(ANSWER_ROW_CLASS)

    def _on_typed(self, change: dict[str, Any]) -> None:
        _count, colon, text = str(change["new"]).partition(":")
        if not colon:
            return
        try:
            code = json.loads(text)
        except ValueError:
            return
        if isinstance(code, str):
            self._submit(code)

    def show(self, code: str) -> None:
        """Keep `code` (what was graded) in the box, every line of it in view."""
        self.box.rows = code_rows(code)
        self.box.value = code

    def disable(self) -> None:
        self.box.disabled = self.button.disabled = True
