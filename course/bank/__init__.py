"""The question bank: questions read from `course/questions/*.toml` and checked (`load_bank`, `BankError`),
their kinds, the lint, how a question is presented and graded, the ratings, and the Markdown and maths
renderer that the widgets, the terminal and the Anki export share (pure: no ipywidgets).
"""

from __future__ import annotations

from course.bank._bank import DEFAULT_DIRECTORY, Bank, BankError, Question, load_bank
from course.bank._code import code_block
from course.bank._kinds import Kind
from course.bank._lint import figures, lint
from course.bank._presenting import (
    LETTERS,
    NUMBERS,
    RECALL_RATINGS,
    RIGHT_RATINGS,
    Presentation,
    Verdict,
    answer_text,
    auto_rating,
    final_rating,
    grade_choice,
    grade_number,
    present,
)
from course.bank._ratings import HARD_MEANS, MEANINGS, NAMES
from course.bank._render import inline_html, plain_text, to_html

__all__ = [
    "DEFAULT_DIRECTORY",
    "HARD_MEANS",
    "LETTERS",
    "MEANINGS",
    "NAMES",
    "NUMBERS",
    "RECALL_RATINGS",
    "RIGHT_RATINGS",
    "Bank",
    "BankError",
    "Kind",
    "Presentation",
    "Question",
    "Verdict",
    "answer_text",
    "auto_rating",
    "code_block",
    "figures",
    "final_rating",
    "grade_choice",
    "grade_number",
    "inline_html",
    "lint",
    "load_bank",
    "plain_text",
    "present",
    "to_html",
]
