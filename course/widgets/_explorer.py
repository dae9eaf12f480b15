"""One explorer: controls (ipywidgets) above a figure that is redrawn whenever a control changes.

An `Explorer` displays as a live widget in JupyterLab. Where no widget front end is running (a notebook
opened before its cells run, nbval, nbviewer, GitHub), it displays as the figure of its first settings, a
static image with its text alternative, and a line saying how to make it move; that is also the stable
output nbval compares (the image's pixels excepted).
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import ipywidgets as widgets
from matplotlib.figure import Figure

from course.plots import ShownFigure, show
from course.widgets._chrome import CHROME, ROOT_CLASS, STATUS_CLASS, view_bundle

__all__ = ["STATIC_NOTE", "Draw", "Drawn", "Explorer"]

STATIC_NOTE = "Run this cell in JupyterLab to change the settings; the figure is redrawn as you do."


class Drawn(NamedTuple):
    """One state of an explorer: the figure, its alt text (what it shows, with its numbers) and `brief`, a
    few words saying what the controls' change did (what a screen reader says at each change)."""

    figure: Figure
    alt: str
    brief: str


Draw = Callable[..., Drawn]  # keyword arguments named like the controls -> the drawn state


class Explorer:
    """Controls, named like the keyword arguments of `draw`, and the figure `draw` makes of their values.

    ``shown`` is the figure on display (a `ShownFigure`: its alt text says what it shows, with numbers),
    ``figure`` the matplotlib Figure it was drawn from (its artists hold the numbers drawn);
    ``redraw_seconds`` how long the last redraw took, from a control's change to the new image.
    """

    def __init__(self, controls: Mapping[str, widgets.ValueWidget], draw: Draw, *, label: str) -> None:
        self.controls = dict(controls)
        self._draw = draw
        self.figure_view = widgets.HTML()
        self.figure_view.add_class("course-explorer-figure")
        self.status = widgets.HTML()  # what changed, briefly: said by screen readers at each change
        self.status.add_class(STATUS_CLASS)
        chrome = widgets.HTML(CHROME, layout=widgets.Layout(display="none"))
        bar = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        self.root = widgets.VBox([chrome, bar, self.figure_view, self.status])
        self.root.add_class("course-explorer")
        self.root.add_class(ROOT_CLASS)
        self.label = label
        self.redraw_seconds = 0.0
        self.shown = self._render(first=True)
        self.first = self.shown  # what the static form shows
        for control in self.controls.values():
            control.observe(self._changed, names="value")

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def _render(self, *, first: bool = False) -> ShownFigure:
        start = time.perf_counter()
        fig, alt, brief = self._draw(**self.values())
        self.figure = fig
        shown = show(fig, alt, measure=first)  # the static form's figure is measured; live redraws are not
        self.figure_view.value = shown.html()
        self.status.value = html.escape(brief)  # the alt text, in full, stays on the image
        self.redraw_seconds = time.perf_counter() - start
        return shown

    def _changed(self, _change: Any) -> None:
        self.shown = self._render()

    def text(self) -> str:
        """The stable plain-text form: what the first figure shows, and how to explore."""
        return f"{self.label}: {self.first.alt} {STATIC_NOTE}"

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = view_bundle(self.root, self.text())
        bundle["text/html"] = (
            f"<p><b>{html.escape(self.label)}</b></p>{self.first.html()}<p><i>{STATIC_NOTE}</i></p>"
        )
        return bundle
