"""The lessons of the course, in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["LESSONS", "QUIZ_LESSONS", "Lesson", "lesson", "lesson_id", "lesson_title"]


@dataclass(frozen=True)
class Lesson:
    """One notebook of the course: its id ("00".."09", or "review"), title and notebook file name."""

    id: str
    title: str
    notebook: str


_ALL = (
    Lesson("00", "Welcome", "00-welcome.ipynb"),
    Lesson("01", "Similarity and softmax", "01-similarity-and-softmax.ipynb"),
    Lesson("02", "Scaled dot-product attention", "02-scaled-dot-product-attention.ipynb"),
    Lesson("03", "Self-attention with learned projections", "03-self-attention.ipynb"),
    Lesson("04", "Multi-head attention", "04-multi-head-attention.ipynb"),
    Lesson("05", "Masked (causal) self-attention", "05-masked-self-attention.ipynb"),
    Lesson("06", "Three uses of attention in the Transformer", "06-three-uses-of-attention.ipynb"),
    Lesson("07", "From attention to a Transformer block", "07-transformer-block.ipynb"),
    Lesson("08", "The cost of attention, and how to tame it", "08-cost-of-attention.ipynb"),
    Lesson("09", "A tiny GPT that writes", "09-a-tiny-gpt.ipynb"),
    Lesson("review", "Review", "review.ipynb"),
)

LESSONS: Mapping[str, tuple[str, str]] = MappingProxyType({x.id: (x.title, x.notebook) for x in _ALL})
"""Lesson id -> (title, notebook file name), in course order (read-only)."""

QUIZ_LESSONS: tuple[str, ...] = tuple(x.id for x in _ALL if x.id.isdigit())
"""The lessons that have a quiz, hence a question file: "00".."09" (the review notebook has none)."""

_BY_ID = {x.id: x for x in _ALL}


def lesson(lesson_id: str) -> Lesson:
    """The `Lesson` with this id; KeyError naming the known ids if there is none."""
    try:
        return _BY_ID[lesson_id]
    except KeyError:
        raise KeyError(f"unknown lesson {lesson_id!r} (known: {', '.join(LESSONS)})") from None


def lesson_title(lesson: str) -> str:
    """The title of `lesson` ("02" -> "Scaled dot-product attention"); the id itself if it is unknown."""
    found = _BY_ID.get(lesson)
    return found.title if found is not None else lesson


def lesson_id(value: str | int, available: Sequence[str] | None = None) -> str:
    """The id of a quiz lesson as written loosely: "2", 2 and "02" all give "02".

    `available`, when given, are the lessons that have questions (``Bank.lessons()``): a quiz lesson not among
    them is a ValueError too, "lesson 06 has no questions yet (...)". Anything that is not a quiz lesson is a
    ValueError naming the lessons one may use; a value that is neither a string nor an int is a TypeError.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"a lesson is given as a string or a whole number, e.g. '02' or 2; got {value!r}")
    text = str(value).strip()
    canonical = f"{int(text):02d}" if text.isascii() and text.isdigit() else text
    if available is None:
        choices = f"lessons with a quiz: {', '.join(QUIZ_LESSONS)}"
    else:
        choices = f"lessons with questions: {', '.join(available)}"
    if canonical not in QUIZ_LESSONS:
        raise ValueError(f"unknown lesson {value!r} ({choices})")
    if available is not None and canonical not in available:
        raise ValueError(f"lesson {canonical} has no questions yet ({choices})")
    return canonical
