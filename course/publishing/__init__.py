"""What the course is published as: the learner's workbook, the slide layout and its offline export, the study
times and the Anki deck.
"""

from __future__ import annotations

from course.publishing._anki import write_package
from course.publishing._export import SlideExportError, export_slides, instructor_notebook
from course.publishing._workbook import WorkbookError, lab_command, write_workbook

__all__ = [
    "SlideExportError",
    "WorkbookError",
    "export_slides",
    "instructor_notebook",
    "lab_command",
    "write_package",
    "write_workbook",
]
