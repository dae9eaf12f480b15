"""What every lesson promises around its content: where to go next, a course map, and an honest time."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from course.bank import load_bank
from course.lessons import LESSONS, QUIZ_LESSONS
from course.study_time import Estimate, estimate, stated_minutes

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
WRITTEN = [lesson for lesson in QUIZ_LESSONS if (NOTEBOOKS / LESSONS[lesson][1]).exists()]
LINK = re.compile(r"\]\(([^)\s]+\.ipynb)\)")


def _markdown(name: str) -> list[str]:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == "markdown"]


def _links(text: str) -> set[str]:
    return set(LINK.findall(text))


@pytest.mark.parametrize("lesson", WRITTEN)
def test_every_lesson_ends_with_links_to_the_next_lesson_and_the_review(lesson: str) -> None:
    last = _markdown(LESSONS[lesson][1])[-1]
    following = QUIZ_LESSONS[QUIZ_LESSONS.index(lesson) + 1] if lesson != QUIZ_LESSONS[-1] else None
    expected = {"review.ipynb"}
    if following in WRITTEN:
        expected.add(LESSONS[following][1])
    assert expected <= _links(last), last


def test_the_welcome_links_every_written_lesson_and_the_review() -> None:
    linked = set().union(*map(_links, _markdown(LESSONS["00"][1])))
    written = {path.name for path in NOTEBOOKS.glob("*.ipynb")} - {LESSONS["00"][1]}
    assert written <= linked


@pytest.mark.parametrize("name", sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")))
def test_no_link_between_notebooks_is_broken(name: str) -> None:
    targets = set().union(*map(_links, _markdown(name)))
    assert {target for target in targets if not (NOTEBOOKS / target).exists()} == set()


@pytest.mark.parametrize("lesson", WRITTEN)
def test_the_stated_time_is_the_estimate_from_the_lessons_length(lesson: str) -> None:
    path = NOTEBOOKS / LESSONS[lesson][1]
    found = estimate(path, len(load_bank().questions(lesson)))
    assert stated_minutes(path) == found.minutes, f"{found} adds up to {found.exact:.1f} minutes"


@pytest.mark.parametrize("name", sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")))
def test_a_stored_widget_says_to_run_its_cell(name: str) -> None:
    """A stored widget view cannot be shown again (its state is not stored): JupyterLab would say "Error
    displaying widget: model not found". Only the text form is kept, and it says what to do."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    outputs = [output for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs]
    assert [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})] == []
    widgets = [
        o.data["text/plain"]
        for o in outputs
        if "in JupyterLab to start" in o.get("data", {}).get("text/plain", "")
    ]
    assert widgets and all(text.startswith(("Quiz for lesson", "Review of")) for text in widgets)


def test_the_readme_states_the_same_times() -> None:
    readme = (NOTEBOOKS.parent / "README.md").read_text(encoding="utf-8")
    found = dict(re.findall(r"^\| (\d\d) \| \[[^]]+\]\([^)]+\) \| (\d+) min \|", readme, re.MULTILINE))
    assert found == {lesson: str(stated_minutes(NOTEBOOKS / LESSONS[lesson][1])) for lesson in WRITTEN}


def test_the_estimate_adds_its_parts() -> None:
    parts = Estimate(words=2000, code_lines=100, predictions=5, exercises=2, questions=10)
    assert parts.exact == 10 + 10 + 5 + 16 + 5
    assert parts.minutes == 45
    assert Estimate(words=10, code_lines=0, predictions=0, exercises=0, questions=0).minutes == 5
