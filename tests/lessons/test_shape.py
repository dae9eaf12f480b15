"""What every lesson promises around its content: where to go next, a course map, and an honest time."""

from __future__ import annotations

import ast
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest

from course.bank import load_bank
from course.lessons import LESSONS, QUIZ_LESSONS
from course.publishing._study_time import Estimate, estimate, stated_minutes
from scheduler import Memory, Rating

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
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
    questions = load_bank().questions(lesson)
    code = sum(question.kind == "code" for question in questions)
    found = estimate(path, len(questions) - code, code_questions=code)
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
    parts = Estimate(words=2600, code_lines=100, predictions=5, exercises=(4, 12), questions=10)
    # 130 words and 10 lines a minute, a minute a prediction, 10 minutes and 0.75 a solution line an exercise,
    # a minute a question
    assert parts.exact == 20 + 10 + 5 + (10 + 3) + (10 + 9) + 10
    assert parts.minutes == 75
    assert Estimate(words=10, code_lines=0, predictions=0, exercises=(), questions=0).minutes == 5


def test_an_exercise_is_counted_by_the_lines_of_its_solution(tmp_path: Path) -> None:
    code = (
        "def f(x):\n    ### BEGIN SOLUTION\n    # a comment\n    y = x + 1\n\n    return y\n"
        "    ### END SOLUTION\n\ncheck(f)"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code), nbformat.v4.new_code_cell("1 + 1")])
    nbformat.write(nb, tmp_path / "n.ipynb")
    found = estimate(tmp_path / "n.ipynb", questions=0)
    assert (found.exercises, found.code_lines) == ((2,), 5)  # comments and markers are not counted


def test_a_derivation_on_paper_adds_its_own_minutes(tmp_path: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("**Exercise 1 (transfer, derivation): a backward pass.** Derive it."),
        nbformat.v4.new_code_cell("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION"),
        nbformat.v4.new_markdown_cell("**Exercise 2 (transfer): derivation is only a word here.**"),
        nbformat.v4.new_code_cell("def g(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION"),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "n.ipynb")
    found = estimate(tmp_path / "n.ipynb", questions=0)
    assert (found.exercises, found.derivations) == ((1, 1), 1)
    # two exercises of one line (10.75 minutes each), one of them a derivation (20 more)
    assert found.exact - found.words / 130 - found.code_lines / 10 == 10.75 + 10.75 + 20


# -- no lesson asserts a timing ---------------------------------------------------------------------------

# Calls whose result is a time: the clocks, timeit, and the course's timers (course.efficient).
TIMERS = {
    "perf_counter",
    "perf_counter_ns",
    "monotonic",
    "monotonic_ns",
    "process_time",
    "thread_time",
    "time_ns",
    "timeit",
    "median_seconds",
    "median_seconds_each",
}
IGNORE_OUTPUT = "# NBVAL_IGNORE_OUTPUT"


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            # time.time() is a clock; other .time() calls (datetime's, say) are not
            if func.attr == "time" and isinstance(func.value, ast.Name) and func.value.id == "time":
                return "time_ns"
            return func.attr
    return None


def _python(source: str) -> ast.Module:
    """A code cell's source as Python: IPython's magics and shell lines become blank."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    return ast.parse("\n".join(lines))


def _uses(node: ast.AST, timed: set[str], timers: set[str]) -> bool:
    return any(
        (isinstance(sub, ast.Name) and sub.id in timed) or _called(sub) in timers for sub in ast.walk(node)
    )


def _targets(node: ast.AST) -> set[str]:
    """The names an assignment binds, or the container it stores into (``race["x"] = ...`` binds race)."""
    found = set()
    for target in getattr(node, "targets", None) or [getattr(node, "target", None)]:
        for sub in ast.walk(target) if target is not None else []:
            if isinstance(sub, ast.Name):
                found.add(sub.id)
    return found


def timed_names(trees: list[ast.Module]) -> tuple[set[str], set[str]]:
    """The names a notebook binds to a time, directly or computed from one, and its functions that return a
    time (their body calls a timer), found by following its assignments to a fixed point. (A loop's variable
    is not followed: ``for n, seconds in zip(ns, times)`` would make every later ``n`` a time.)"""
    timers, timed = set(TIMERS), set()
    while True:
        before = (len(timers), len(timed))
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.Lambda)) and _uses(node, timed, timers):
                    timers.add(getattr(node, "name", "<lambda>"))
                elif (
                    isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr))
                    and node.value is not None
                    and _uses(node.value, timed, timers)
                ):
                    timed |= _targets(node)
        if (len(timers), len(timed)) == before:
            return timed, timers


def timing_checks(path: Path) -> list[str]:
    """Where a notebook asserts a time, or shows one in an output that nbval compares."""
    cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    trees = [_python(cell.source) for cell in cells]
    timed, timers = timed_names(trees)
    found = []
    for index, (cell, tree) in enumerate(zip(cells, trees, strict=True)):
        compared = not cell.source.lstrip().startswith(IGNORE_OUTPUT)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        in_cell = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and _uses(node.test, timed, timers):
                in_cell.append((node.lineno, f"code cell {index} asserts a time: {ast.unparse(node)}"))
            elif compared and _called(node) in ("print", "display", "show") and _uses(node, timed, timers):
                what = f"code cell {index} prints a time in a compared output: {ast.unparse(node)}"
                in_cell.append((getattr(node, "lineno", 0), what))
        if compared and last is not None and _called(last.value) is None and _uses(last, timed, timers):
            in_cell.append(
                (last.lineno, f"code cell {index} shows a time in a compared output: {ast.unparse(last)}")
            )
        found += [what for _, what in sorted(in_cell)]
    return found


@pytest.mark.parametrize("name", sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")))
def test_no_lesson_asserts_a_timing_or_compares_one(name: str) -> None:
    assert timing_checks(NOTEBOOKS / name) == []


def test_the_timing_check_follows_a_time_through_names_functions_and_containers(tmp_path: Path) -> None:
    cells = [
        "# NBVAL_IGNORE_OUTPUT\nstart = time.perf_counter()\nrun()\nseconds = time.perf_counter() - start",
        "def timed(f):\n    t = time.perf_counter()\n    f()\n    return time.perf_counter() - t",
        "# NBVAL_IGNORE_OUTPUT\nrace = {}\nrace['a'] = timed(run)\nslope = loglog_slope(ns, [seconds, 2])",
        "assert slope < 3\nprint(f'{seconds:.1f} s')\nassert race['a'] > 0\nratio = race['a'] / 2\nratio",
        "%timeit run()\nwhen = datetime.now().time()\nassert when\nassert slope_of_counts == 2",
    ]
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
    assert timing_checks(path) == [
        "code cell 3 asserts a time: assert slope < 3",
        "code cell 3 prints a time in a compared output: print(f'{seconds:.1f} s')",
        "code cell 3 asserts a time: assert race['a'] > 0",
        "code cell 3 shows a time in a compared output: ratio",
    ]


# -- one true thing everywhere -----------------------------------------------------------------------------

DOCS = ("README.md", "docs/instructor.md", "docs/classroom.md")


def _doc(name: str) -> str:
    return (NOTEBOOKS.parent / name).read_text(encoding="utf-8")


def _good_days_for_a_new_question(times: int = 1000) -> list[int]:
    """The intervals, in days, that the quiz's Good button shows on a new question, over `times` moments."""
    memory = Memory()  # a new learner's settings, fuzz on, as the quiz has them
    now = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    return sorted(
        {memory.preview(None, "q", now + timedelta(minutes=m))[Rating.GOOD].days for m in range(times)}
    )


def test_the_class_database_is_described_as_it_is_in_every_doc() -> None:
    """The shared PostgreSQL store exists (docs/classroom.md): no doc says it is still to come."""
    for name in DOCS:
        text = " ".join(_doc(name).split())
        assert not re.search(r"not yet available|planned but|until then every learner", text), name
    for name in ("README.md", "docs/instructor.md"):
        assert "classroom.md" in _doc(name), f"{name} does not point to docs/classroom.md"
    instructor = " ".join(_doc("docs/instructor.md").split())
    assert "**A shared class database** (PostgreSQL) instead of one SQLite file per learner" in instructor


def test_the_welcome_and_the_readme_say_what_the_buttons_show() -> None:
    """Good on a new question: 4 days without the fuzz; with it, what the button shows, 3 to 6 days. The
    fuzz starts at 3 days, not only on long intervals (Hard's 2 days, below 3, do not move)."""
    assert _good_days_for_a_new_question() == [3, 4, 5, 6]
    memory = Memory()
    now = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    hard = {memory.preview(None, "q", now + timedelta(minutes=m))[Rating.HARD].days for m in range(1000)}
    assert sorted(hard) == [2]
    readme = " ".join(_doc("README.md").split())
    assert "From 3 days on it includes a small random spread" in readme
    assert "(*Good* on a new question shows 3 to 6 days)" in readme and "long intervals" not in readme
    welcome = nbformat.read(NOTEBOOKS / LESSONS["00"][1], as_version=4)
    prose = " ".join(" ".join(cell.source for cell in welcome.cells if cell.cell_type == "markdown").split())
    assert "From 3 days on it includes a small random spread" in prose and "long intervals" not in prose
    printed = [
        output.get("text", "")
        for cell in welcome.cells
        if cell.cell_type == "code" and "preview(" in cell.source
        for output in cell.outputs
    ]
    assert "".join(printed) == (  # one stream output or several, as the kernel flushed it
        "Again  -> back in 1d\nHard   -> back in 2d\nGood   -> back in 4d\nEasy   -> back in 16d\n"
        "With the fuzz, Good -> back in 3 to 6 days\n"
    )


SCROLLER = '<div style="overflow-x: auto">'
DISPLAY = re.compile(r"\$\$.+?\$\$", re.S)


def unscrolled_equations(text: str) -> list[str]:
    """The display equations of a Markdown text that do not stand alone in a sideways-scrolling box (the box
    opened on its own line and a blank line, the equation, a blank line and the box closed)."""
    boxed = re.compile(rf"{re.escape(SCROLLER)}\n\n(\$\$.+?\$\$)\n\n</div>", re.S)
    inside = {found.span(1) for found in boxed.finditer(text)}
    return [found.group()[:40] for found in DISPLAY.finditer(text) if found.span() not in inside]


@pytest.mark.parametrize("name", sorted(path.name for path in NOTEBOOKS.glob("*.ipynb")))
def test_every_display_equation_scrolls_sideways_rather_than_losing_its_end(name: str) -> None:
    """At 200 % zoom with the file browser open the notebook is about 250 CSS px wide: JupyterLab clips an
    equation wider than its cell, so each one stands in a box that scrolls (and, where it has several parts,
    is set on several lines: `aligned` or `gathered`)."""
    assert [found for text in _markdown(name) for found in unscrolled_equations(text)] == []


def test_an_equation_outside_its_box_is_found() -> None:
    assert unscrolled_equations("a\n\n$$x = 1$$\n\nb") == ["$$x = 1$$"]
    assert unscrolled_equations(f"{SCROLLER}\n$$x = 1$$\n</div>") == [
        "$$x = 1$$"
    ]  # no blank lines: not Markdown
    assert unscrolled_equations(f"{SCROLLER}\n\n$$x = 1$$\n\n</div> and $y$") == []
