"""`predict(id)` under a lesson's **Predict:** prompt, and `reveal(id, result)` in the cell that checks it.

The learner picks an option (or types a number, with the bank's numeric rules and unit) and presses
*Commit*, or presses *Skip*; the prediction is then kept in the learner's progress database
(`course.progress.commit_prediction`: a wrong one brings its review card back the next day) and the controls
are locked. The cells below run as before; the check cell under them calls `reveal`, which shows the
prediction beside the result, in the check cell's output and in the widget (said in its live region).

In plain text (what nbval compares) both are fixed sentences: the instructor's notebook, run top to bottom,
commits nothing.
"""

from __future__ import annotations

import html
import random
import threading
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

import ipywidgets as widgets

from course.bank import (
    Bank,
    Kind,
    Presentation,
    Question,
    inline_html,
    load_bank,
    plain_text,
    present,
    to_html,
)
from course.progress import PROBLEMS, Keeper, StoreLike, StoreSource, commit_prediction, local_tz
from course.widgets._chrome import CHROME, LIVE_CLASS, ROOT_CLASS, STATUS_CLASS, focus_here, view_bundle
from course.widgets._clock import Clock, read_clock, real_clock
from course.widgets._panel import option_rows
from course.widgets._texts import error_html, html_text
from course.widgets._typed import TypedAnswer

__all__ = ["PredictionWidget", "Revealed", "predict", "reveal"]

_SHOWN: dict[str, PredictionWidget] = {}  # the widget last shown for each prediction, in this kernel
NOT_COMMITTED = "no prediction was committed above"


class PredictionWidget:
    """One prediction: options or a number box, Commit and Skip. `root` is the widget to display."""

    def __init__(
        self,
        question: Question,
        cards: tuple[Question, ...] = (),
        *,
        store: StoreLike = None,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.question = question
        self._cards = cards
        self._store = store
        self._clock: Clock = clock if clock is not None else real_clock
        self.tz = tz if tz is not None else local_tz()
        self._lock = threading.Lock()  # a callback (a kernel subshell thread) and `reveal` (the main one)
        self.presentation: Presentation | None = present(question, rng or random.Random())
        self.chosen: int | None = None  # the position shown of the option picked, not committed yet
        self.committed = False
        self.answer: str | None = None  # what was committed ("" for a skip)
        self.right: bool | None = None
        self.header = widgets.HTML("<p><b>Your prediction</b> (commit it before you run the next cell)</p>")
        self.prompt = widgets.HTMLMath(to_html(question.prompt))
        self.feedback = widgets.HTMLMath()
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.option_buttons: list[widgets.Button] = []
        self.typed: TypedAnswer | None = None
        self.commit_button: widgets.Button | None = None
        self.skip_button = widgets.Button(description="Skip", tooltip="Run the cell without predicting")
        self.skip_button.on_click(lambda _button: self._commit(None))
        if question.kind == Kind.CHOICE:
            assert self.presentation is not None
            self.option_buttons, rows = option_rows(self.presentation, self._pick)
            self.commit_button = widgets.Button(
                description="Commit", tooltip="Commit the option you picked", disabled=True
            )
            self.commit_button.on_click(lambda _button: self._commit_chosen())
            controls: tuple[widgets.Widget, ...] = (
                *rows,
                widgets.HBox([self.commit_button, self.skip_button]),
            )
        else:
            self.typed = TypedAnswer(
                self._commit_typed,
                unit=question.unit,
                label="Commit",
                tooltip="Commit your prediction (Enter)",
            )
            controls = (self.typed.row, self.skip_button)
        self.answer_area = widgets.VBox(list(controls))
        self.root = widgets.VBox(
            [
                widgets.HTML(CHROME, layout=widgets.Layout(display="none")),
                self.header,
                self.prompt,
                self.answer_area,
                self.feedback,
                self.status,
            ],
            layout=widgets.Layout(max_width="60em"),
        )
        self.root.add_class(ROOT_CLASS)
        self.root.add_class(LIVE_CLASS)  # the option picked is pressed until it is committed

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        return (
            f"Prediction {self.question.id}: run this cell in JupyterLab to commit your prediction, "
            "then run the cells below."
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    # -- answering ----------------------------------------------------------------------------------------
    def _pick(self, position: int) -> None:
        with self._lock:
            if self.committed:
                return
            self.chosen = position
            for shown, button in enumerate(self.option_buttons):
                button.button_style = "info" if shown == position else ""
            if self.commit_button is not None:
                self.commit_button.disabled = False
            assert self.presentation is not None
            label = self.presentation.label(position)
            self._say(f"Picked {label}. Press Commit to commit it.")

    def _commit_chosen(self) -> None:
        if self.chosen is not None and self.presentation is not None:
            self._commit(self.presentation.order[self.chosen])

    def _commit_typed(self, typed: str) -> None:
        text = typed.strip()
        try:
            self.question.parse_number(text)
        except ValueError:
            shown = html.escape(repr(text)) if text else "Nothing typed"
            self.feedback.value = f"<p>✗ {shown}: type a number, e.g. 64 or 0.125.</p>"
            self._say(html_text(self.feedback.value))
            return
        self._commit(text)

    def _commit(self, response: int | str | None) -> None:
        """Keep `response` (a bank option index, the text typed, or None: skipped) and lock the controls."""
        with self._lock:
            if self.committed:
                return
            at = read_clock(self._clock)
            try:
                with Keeper(StoreSource(self._store), create=True) as keeper:
                    kept = commit_prediction(keeper, self.question, response, at, self.tz, self._cards)
            except PROBLEMS as err:  # nothing kept: the controls stay, to commit again once it is fixed
                self.feedback.value = error_html(err, unsaved=True)
                self._say(html_text(self.feedback.value))
                return
            answer, right = kept.prediction.answer, kept.prediction.right
            self.committed, self.answer, self.right = True, answer, right
            for button in (*self.option_buttons, self.commit_button, self.skip_button):
                if button is not None:
                    button.disabled = True
            if self.typed is not None:
                self.typed.disable()
            said = (
                "Skipped: run the next cell to see what happens."
                if response is None
                else f"Committed: you predicted {answer}{self._unit()}. Now run the next cell."
            )
            self.feedback.value = f"<p>{html.escape(said)}</p>"
            focus_here(self.feedback)
            self._say(said)

    def _unit(self) -> str:
        return f" {self.question.unit}" if self.question.unit and self.answer else ""

    def _say(self, text: str) -> None:
        self.status.value = ""
        self.status.value = f"<p>{html.escape(text)}</p>"

    # -- the reveal ---------------------------------------------------------------------------------------
    def show_result(self, revealed: Revealed) -> None:
        """Show `revealed` under the prediction and say it."""
        with self._lock:
            self.feedback.value = revealed.html()
            focus_here(self.feedback)
            self._say(revealed.text())


@dataclass(frozen=True)
class Revealed:
    """What the check cell shows: the prediction committed (None: none), whether it was right, the result
    measured (`result`, Markdown) and the bank's answer and explanation."""

    question: Question
    result: str
    answer: str | None
    right: bool | None

    def text(self) -> str:
        """One sentence each: the prediction, the result, the answer (plain text)."""
        result = plain_text(self.result)
        if self.answer is None:
            return f"Result: {result}. ({NOT_COMMITTED}.)"
        if self.answer == "":
            return f"You skipped this prediction. Result: {result}."
        mark = "right" if self.right else "not right"
        said = f"You predicted: {self.answer}{self._unit()} ({mark}). Result: {result}."
        return said if self.right else f"{said} The answer: {self._answer()}."

    def html(self) -> str:
        result = inline_html(self.result)
        if self.answer is None:
            head = f"<p><b>Result:</b> {result}. <i>({NOT_COMMITTED}.)</i></p>"
        elif self.answer == "":
            head = f"<p>You skipped this prediction. <b>Result:</b> {result}.</p>"
        else:
            mark = "✓ right" if self.right else "✗ not right"
            head = (
                f"<p><b>You predicted:</b> {html.escape(self.answer + self._unit())} ({mark}). "
                f"<b>Result:</b> {result}.</p>"
            )
            if not self.right:
                head += f"<p><b>The answer:</b> {html.escape(self._answer())}.</p>"
        return head + to_html(self.question.explanation)

    def _unit(self) -> str:
        return f" {self.question.unit}" if self.question.unit else ""

    def _answer(self) -> str:
        if self.question.kind == Kind.CHOICE:
            return plain_text(str(self.question.answer))
        return (
            f"{self.question.answer:g}{self._unit()}"
            if isinstance(self.question.answer, float)
            else (f"{self.question.answer}{self._unit()}")
        )

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return self.html()


def predict(
    prediction_id: str,
    *,
    store: StoreLike = None,
    clock: Clock | None = None,
    tz: tzinfo | None = None,
    rng: random.Random | None = None,
    bank: Bank | None = None,
) -> PredictionWidget:
    """The prediction widget of `prediction_id` (a ``[[prediction]]`` of the bank), for the cell under its
    **Predict:** prompt: ``predict("02-variance-at-64")``. KeyError for an unknown id. `store`: the progress
    database (default `course.progress.db_path()`); `clock`, `tz`, `rng` (the order of the options) and
    `bank` (default the course's) are for tests."""
    bank = bank or load_bank()
    question = bank.prediction(prediction_id)
    widget = PredictionWidget(question, bank.all(), store=store, clock=clock, tz=tz, rng=rng)
    _SHOWN[prediction_id] = widget
    return widget


def reveal(
    prediction_id: str, result: str, *, value: float | None = None, bank: Bank | None = None
) -> Revealed:
    """Show the prediction committed above beside `result` (Markdown: what the cells measured), in the check
    cell under them. For a numeric prediction, `value` is the number measured: an AssertionError when it is
    not within the prediction's tolerance of its answer (the bank and the lesson must agree). `bank`: default
    the course's."""
    question = (bank or load_bank()).prediction(prediction_id)
    if value is not None:
        if question.kind != Kind.NUMERIC:
            raise TypeError(
                f"prediction {prediction_id!r} is a {question.kind} prediction: it takes no value"
            )
        assert question.is_correct(float(value)), (
            f"the value measured, {value:g}, is not within {question.tolerance:g} of the answer of "
            f"prediction {prediction_id!r}, {question.answer:g}"
        )
    widget = _SHOWN.get(prediction_id)
    committed = widget is not None and widget.committed
    revealed = Revealed(
        question,
        result,
        widget.answer if committed and widget is not None else None,
        widget.right if committed and widget is not None else None,
    )
    if widget is not None and committed:
        widget.show_result(revealed)
    return revealed
