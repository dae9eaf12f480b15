"""`class_report_view()`: the instructor's class report in a notebook (`course.classroom`, as
``python -m course class-report`` prints it), read from the class database as the instructor's role.

Per lesson and per question, most missed first: the miss rate, the answers and how many learners gave them;
the code cards, fewest passed first, with their pass rate (a review keeps whether the code passed, not which
mistake it made: a live review shows those); the class's due load for the next 7 days; the class's true
retention; the sections to revisit, as links into the lessons. Refresh reads the database again (one snapshot
each time); nothing is written.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from course.bank import Bank, inline_html, load_bank
from course.classroom import (
    CODE_NOTE,
    REVISIT_AT,
    ClassReport,
    QuestionRow,
    class_report,
    class_url,
    instructor_url,
    section_link,
)
from course.lessons import lesson_title
from course.progress import local_tz, plural
from course.widgets._chrome import CHROME, ROOT_CLASS, STATUS_CLASS, view_bundle
from course.widgets._clock import Clock, read_clock, real_clock
from course.widgets._live_answer import NO_CLASS_DB
from scheduler import StoreError

if TYPE_CHECKING:  # psycopg: only for a class database, and only the types here
    from scheduler.postgres import ClassRecords

__all__ = ["ClassReportWidget", "class_report_view", "report_html"]

TEXT = (
    "Class report: run this cell in JupyterLab with the instructor's access to the class database to see "
    "how the class is doing; Refresh reads it again."
)


class ClassReportWidget:
    """The class report. `root` is the widget to display; `refresh` reads the class again. `read` returns
    the class's records (`scheduler.postgres.ClassRecords`); default: `class_records` on `class_url(db)`."""

    def __init__(
        self,
        *,
        db: str | None = None,
        read: Callable[[], ClassRecords] | None = None,
        top: int = 10,
        clock: Clock | None = None,
        tz: tzinfo | None = None,
        bank: Bank | None = None,
    ) -> None:
        self.bank = bank or load_bank()
        self.url = None if read is not None else class_url(db)
        self._read = read
        self.top = top
        self.clock = clock or real_clock
        self.tz = tz or local_tz()
        self.report: ClassReport | None = None
        self.body = widgets.HTMLMath()
        self.notice = widgets.HTML()
        self.status = widgets.HTML()
        self.status.add_class(STATUS_CLASS)
        self.refresh_button = widgets.Button(description="Refresh", tooltip="Read the class database again")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.root = widgets.VBox(
            [
                widgets.HTML(CHROME + _STYLE, layout=widgets.Layout(display="none")),
                widgets.HTML("<h3>Class report</h3>"),
                self.body,
                self.refresh_button,
                self.notice,
                self.status,
            ],
            layout=widgets.Layout(max_width="70em"),
        )
        self.root.add_class(ROOT_CLASS)
        if self.url is None and read is None:
            self.body.value = f"<p>{html.escape(NO_CLASS_DB)}</p>"
            self.refresh_button.disabled = True
            return
        self.refresh()

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The stable plain-text form (what nbval compares)."""
        return TEXT

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return view_bundle(self.root, self.text())

    def refresh(self) -> None:
        """Read the class database (one snapshot) and show the report as of now."""
        at = read_clock(self.clock)
        try:
            records = self._records()
        except StoreError as err:
            self.notice.value = f"<p><b>Class database problem:</b> {html.escape(str(err))}</p>"
            self.status.value = f"<p>{html.escape(str(err))}</p>"
            return
        self.report = class_report(
            records.answers, records.due_times, self.bank, at, self.tz, predictions=records.predictions
        )
        self.notice.value = ""
        self.body.value = report_html(self.report, self.bank, self.tz, self.top)
        shown = at.astimezone(self.tz).strftime("%H:%M")
        self.status.value = f"<p>Class report read at {shown}: {plural(self.report.learners, 'learner')}.</p>"

    def _records(self) -> ClassRecords:
        if self._read is not None:
            return self._read()
        from scheduler.postgres import class_records  # psycopg: only for a class database

        assert self.url is not None
        return class_records(instructor_url(self.url))


_STYLE = (
    "<style>.course-report-table td, .course-report-table th { padding: 0.2em 0.8em; text-align: left; "
    "vertical-align: top; }</style>"
)


def report_html(report: ClassReport, bank: Bank, tz: tzinfo, top: int = 10) -> str:
    """The report as HTML tables: headline, due load, lessons, the `top` most missed questions, the `top`
    code cards least passed, sections to revisit (links)."""
    if not report.learners:
        return "<p>No learner has answered a question yet.</p>"
    retention = "not yet (no reviews)" if report.retention is None else f"{report.retention:.1%}"
    today = report.at.astimezone(tz)
    days = "".join(
        f"<th>{'today' if n == 0 else _day(today + timedelta(days=n))}</th>" for n in range(len(report.due))
    )
    parts = [
        f"<p><b>{plural(report.learners, 'learner')}</b> answered; the class's true retention: "
        f"<b>{retention}</b>.</p>",
        "<p>Due in the next 7 days (overdue counted today):</p>"
        f"<table class='course-report-table'><tr>{days}</tr><tr>"
        + "".join(f"<td>{n}</td>" for n in report.due)
        + "</tr></table>",
        "<h4>Lessons, most missed first</h4><table class='course-report-table'><tr><th>missed</th>"
        "<th>lesson</th><th>answers</th><th>learners</th></tr>",
        *(
            f"<tr><td>{row.miss_rate:.0%}</td><td>{html.escape(row.lesson)} "
            f"{html.escape(lesson_title(row.lesson))}</td><td>{row.answers}</td><td>{row.learners}</td></tr>"
            for row in report.lessons
        ),
        "</table>",
        f"<h4>Questions, most missed first ({min(top, len(report.questions))} of "
        f"{len(report.questions)})</h4>"
        "<table class='course-report-table'><tr><th>missed</th><th>question</th><th>section</th>"
        "<th>answers</th><th>learners</th></tr>",
    ]
    parts += [_question_row(row, row.miss_rate, bank) for row in report.questions[:top]]
    parts.append("</table>")
    if report.code:
        parts.append(
            f"<h4>Code cards, fewest passed first ({min(top, len(report.code))} of {len(report.code)})</h4>"
            f"<p>{html.escape(CODE_NOTE)}</p>"
            "<table class='course-report-table'><tr><th>passed</th><th>question</th><th>section</th>"
            "<th>answers</th><th>learners</th></tr>"
        )
        parts += [_question_row(row, row.pass_rate, bank) for row in report.code[:top]]
        parts.append("</table>")
    if report.predictions:
        shown = report.predictions[:top]
        parts.append(
            f"<h4>Predictions, most often wrong first ({len(shown)} of {len(report.predictions)})</h4>"
            "<table class='course-report-table'><tr><th>wrong</th><th>prediction</th><th>section</th>"
            "<th>learners</th></tr>"
        )
        for row in shown:
            question = bank.prediction(row.prediction_id)
            link = html.escape(section_link(question.lesson, question.section))
            where = f"{html.escape(question.lesson)}: {html.escape(question.section)}"
            parts.append(
                f"<tr><td>{row.wrong_rate:.0%}</td><td>{inline_html(question.prompt)}</td>"
                f'<td><a href="{link}">{where}</a></td><td>{row.learners}</td></tr>'
            )
        parts.append("</table>")
    if report.revisit:
        links = "".join(
            f'<li><a href="{html.escape(section_link(lesson, section))}">lesson {html.escape(lesson)}, '
            f"{html.escape(section)}</a></li>"
            for lesson, section in report.revisit
        )
        parts.append(f"<h4>Revisit (missed in {REVISIT_AT:.0%} or more of the answers)</h4><ul>{links}</ul>")
    else:
        parts.append(
            f"<p>Nothing to revisit: no question was missed in {REVISIT_AT:.0%} or more of its answers.</p>"
        )
    return "".join(parts)


def _question_row(row: QuestionRow, rate: float, bank: Bank) -> str:
    """One question's row of a table: `rate` (missed, or passed), its prompt, its section (a link), its
    answers and learners."""
    link = html.escape(section_link(row.lesson, row.section))
    return (
        f"<tr><td>{rate:.0%}</td><td>{inline_html(bank[row.question_id].prompt)}</td>"
        f'<td><a href="{link}">{html.escape(row.lesson)}: {html.escape(row.section)}</a></td>'
        f"<td>{row.answers}</td><td>{row.learners}</td></tr>"
    )


def _day(when: datetime) -> str:
    return when.strftime("%a %d")


def class_report_view(
    *, db: str | None = None, top: int = 10, clock: Clock | None = None
) -> ClassReportWidget:
    """The class report for the instructor: ``class_report_view()`` reads the class database at `db` or
    ``$COURSE_DB`` (as the instructor's role: a learner's role would see only themselves); `top`: how many
    questions to list."""
    return ClassReportWidget(db=db, top=top, clock=clock)
