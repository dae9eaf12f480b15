"""The parts of ``python -m course`` (`course.terminal.cli`, its entry point), one concept each.

`exits` (exit statuses), `console` (terminal input and output, stopping signals), `arguments` (the command
line), `asking` (one question), `session` (what review and cram share), `review`, `cram`, `check` and
`workbook` (the commands). The learner-facing progress text they print comes from `course.progress`.
"""

from __future__ import annotations

__all__: list[str] = []
