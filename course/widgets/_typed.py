"""A typed answer: a text box, its unit and a button, graded on exactly what the learner typed.

In the browser, ipywidgets sends the box's value and the Enter key (or the button's click) by different
roads: while the kernel is busy, value updates wait in the page and are sent later, merged, but Enter and
clicks leave at once. Typed fast, "2.72" then Enter reached the kernel as a submission of "2" followed by
the rest. So the chrome's script (`course.widgets._chrome`) takes Enter in the box and clicks on the button
itself, and sends the text shown in the box through a hidden box of its own (`TYPED_CLASS`): one value that
carries both the submission and its text, so nothing can overtake it. Where the script does not run (a
front end that does not run it, the tests), Enter's ``submit`` message and the button's click read the box's
value as before.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from course.widgets._chrome import ANSWER_ROW_CLASS, NUMBER_CLASS, SUBMIT_CLASS, TYPED_CLASS

__all__ = ["PLACEHOLDER", "TypedAnswer"]

PLACEHOLDER = "a number, e.g. 64 or 0.125"


class TypedAnswer:
    """`row` (a box, `unit`, a `label` button) to display; `submit(text)` is called with the text typed
    when the learner presses Enter in the box or the button. `box` and `button` are the controls."""

    def __init__(self, submit: Callable[[str], None], *, unit: str, label: str, tooltip: str) -> None:
        self._submit = submit
        self.box = widgets.Text(
            description="Answer:",
            placeholder=PLACEHOLDER,
            continuous_update=True,
            layout=widgets.Layout(width="auto", max_width="100%", flex="0 1 22em"),
        )
        self.box.add_class(NUMBER_CLASS)
        self.box.on_msg(self._on_message)
        self.button = widgets.Button(description=label, tooltip=tooltip)
        self.button.add_class(SUBMIT_CLASS)
        self.button.on_click(lambda _button: self._submit(self.box.value))
        # What the chrome's script sends: "<a count>:<the text typed>", a new count at each submission (a
        # text box's value holds no line break).
        self.typed = widgets.Text(layout=widgets.Layout(display="none"))
        self.typed.add_class(TYPED_CLASS)
        self.typed.observe(self._on_typed, names="value")
        self.row = widgets.HBox(
            [self.box, widgets.HTML(html.escape(unit)), self.button, self.typed],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.row.add_class(ANSWER_ROW_CLASS)

    def _on_message(self, _widget: widgets.Widget, content: dict[str, Any], _buffers: object) -> None:
        """Enter in the box, where the chrome's script does not run: ``{"event": "submit"}``."""
        if content.get("event") == "submit":
            self._submit(self.box.value)

    def _on_typed(self, change: dict[str, Any]) -> None:
        _count, colon, text = str(change["new"]).partition(":")
        if colon:
            self._submit(text)

    def disable(self) -> None:
        self.box.disabled = self.button.disabled = True
