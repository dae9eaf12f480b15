"""What the course is published as: the learner's workbook (and the checks of the lessons' Predict prompts),
the slide layout and its offline export, the study times and the Anki deck.
"""

from __future__ import annotations

from course.publishing._anki import write_package
from course.publishing._export import SlideExportError, export_slides, instructor_notebook
from course.publishing._predictions import answer_cells, prediction_problems
from course.publishing._workbook import INSTRUCTOR_DIR, WorkbookError, lab_command, write_workbook

__all__ = [
    "INSTRUCTOR_DIR",
    "SlideExportError",
    "WorkbookError",
    "answer_cells",
    "export_slides",
    "instructor_notebook",
    "lab_command",
    "prediction_problems",
    "write_package",
    "write_workbook",
]
