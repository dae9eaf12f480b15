"""A class: the class review on the projector (`ClassReviewLog`), the class report of a class database
(`class_report`) and the live class review (`open_room`, `LiveRoom` in `scheduler.postgres`).
"""

from __future__ import annotations

from course.classroom._class_review import (
    REVISIT_AT,
    ClassReview,
    ClassReviewLog,
    ClassReviewLogError,
    class_review_lines,
    class_reviews_path,
    ranked,
    section_link,
    to_revisit,
)
from course.classroom._live import (
    LIVE_KINDS,
    answer_of,
    class_url,
    counted,
    is_right,
    layout_text,
    live_questions,
    numeric_answer,
    open_room,
    option_counts,
    presentation_of,
    right_text,
    room_of,
    rooms_text,
    session_summary,
    shown_answer,
)
from course.classroom._report import ClassReport, class_report, class_report_lines

__all__ = [
    "LIVE_KINDS",
    "REVISIT_AT",
    "ClassReport",
    "ClassReview",
    "ClassReviewLog",
    "ClassReviewLogError",
    "answer_of",
    "class_report",
    "class_report_lines",
    "class_review_lines",
    "class_reviews_path",
    "class_url",
    "counted",
    "is_right",
    "layout_text",
    "live_questions",
    "numeric_answer",
    "open_room",
    "option_counts",
    "presentation_of",
    "ranked",
    "right_text",
    "room_of",
    "rooms_text",
    "section_link",
    "session_summary",
    "shown_answer",
    "to_revisit",
]
