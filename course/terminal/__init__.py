"""The terminal: ``python -m course`` (`main`, in `cli`) and its parts, one concept each.

`exits` (exit statuses), `console` (terminal input and output, stopping signals), `arguments` (the command
line), `asking` (one question), `text` (Markdown and maths as terminal text), `session` (what review and
cram share), and the commands: `review`, `quiz`, `cram`, `scheduling` (stats, forecast, settings, optimize),
`transfer` (export and import of progress, the Anki deck), `check`, `workbook`, `slides` (export-slides),
`class_report` and `session_report`; `writing` says what a command that saves checks first. The
learner-facing progress text they print comes from `course.progress`.
"""

from __future__ import annotations

from course.terminal.cli import main

__all__ = ["main"]
