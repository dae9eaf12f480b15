"""attention-course: the content of the course that is not notebook prose.

The public names are imported lazily so that ``import course`` stays cheap and never pulls in torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "LESSONS",
    "BankError",
    "Question",
    "cram",
    "lesson_seed",
    "load_bank",
    "predict",
    "quiz",
    "reveal",
    "review",
]

_WHERE = {
    "LESSONS": "course.lessons",
    "BankError": "course.bank",
    "Question": "course.bank",
    "load_bank": "course.bank",
    "lesson_seed": "course.seeds",
    "cram": "course.widgets",
    "predict": "course.widgets",
    "quiz": "course.widgets",
    "reveal": "course.widgets",
    "review": "course.widgets",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'course' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
