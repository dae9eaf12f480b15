"""tools/student_notebooks.py: solution blocks become placeholders, nothing else in the notebook changes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
RAISE = 'raise NotImplementedError("write your solution here")'

_spec = importlib.util.spec_from_file_location(
    "student_notebooks", REPO_ROOT / "tools" / "student_notebooks.py"
)
assert _spec is not None and _spec.loader is not None
student_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(student_notebooks)
main = student_notebooks.main

MARKDOWN = "Write your code between the markers:\n\n    ### BEGIN SOLUTION\n    ...\n    ### END SOLUTION"
PLAIN = "x = 1\nx"
TWO_BLOCKS = (
    "def f(x):\n"
    "    ### BEGIN SOLUTION\n"
    "    return x + 1\n"
    "    ### END SOLUTION\n"
    "\n"
    "\n"
    "class C:\n"
    "    def g(self):\n"
    "        ### BEGIN SOLUTION\n"
    "        y = 2\n"
    "\n"
    "        return y\n"
    "        ### END SOLUTION\n"
    "\n"
    "\n"
    "_ = check(f)"
)
TOP_LEVEL = "### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION"


def _output(text: str) -> nbformat.NotebookNode:
    return new_output("execute_result", data={"text/plain": text}, execution_count=1)


def _write(path: Path, *cells: nbformat.NotebookNode) -> Path:
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


@pytest.fixture
def lesson(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return _write(
        tmp_path / "lesson.ipynb",
        new_markdown_cell(MARKDOWN),
        new_code_cell(PLAIN, execution_count=1, outputs=[_output("1")]),
        new_code_cell(
            TWO_BLOCKS,
            execution_count=2,
            outputs=[new_output("stream", name="stdout", text="✓ f passes all 4 cases.\n")],
        ),
        new_code_cell(TOP_LEVEL, execution_count=3, outputs=[_output("42")]),
    )


def test_solution_blocks_become_placeholders(lesson: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = nbformat.read(lesson, as_version=4)

    assert main(["--out", "out", "lesson.ipynb"]) == 0

    assert capsys.readouterr() == ("lesson.ipynb -> out/lesson.ipynb: 3 solutions removed\n", "")
    student = nbformat.read(lesson.parent / "out" / "lesson.ipynb", as_version=4)
    assert [cell.source for cell in student.cells] == [
        MARKDOWN,
        PLAIN,
        "def f(x):\n"
        "    # YOUR CODE HERE\n"
        '    raise NotImplementedError("write your solution here")\n'
        "\n"
        "\n"
        "class C:\n"
        "    def g(self):\n"
        "        # YOUR CODE HERE\n"
        '        raise NotImplementedError("write your solution here")\n'
        "\n"
        "\n"
        "_ = check(f)",
        '# YOUR CODE HERE\nraise NotImplementedError("write your solution here")',
    ]
    # The cells with solutions lose their outputs and execution counts ...
    for cell in student.cells[2:]:
        assert cell.outputs == []
        assert cell.execution_count is None
    # ... while the markdown cell (markers and all) and the plain code cell are copied exactly.
    assert student.cells[0] == original.cells[0]
    assert student.cells[1] == original.cells[1]
    assert student.cells[1].outputs == [_output("1")]
    assert student.cells[1].execution_count == 1
    assert [cell.id for cell in student.cells] == [cell.id for cell in original.cells]
    assert student.metadata == original.metadata
    # The source notebook itself is left alone.
    assert nbformat.read(lesson, as_version=4) == original


def test_a_notebook_without_markers_is_copied_as_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path / "plain.ipynb", new_code_cell(PLAIN, execution_count=1, outputs=[_output("1")]))

    assert main(["--out", "out", "plain.ipynb"]) == 0

    assert capsys.readouterr().out == "plain.ipynb -> out/plain.ipynb: 0 solutions removed\n"
    assert nbformat.read(tmp_path / "out" / "plain.ipynb", as_version=4) == nbformat.read(path, as_version=4)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        (
            "def f():\n    ### BEGIN SOLUTION\n    return 1\n",
            "'### BEGIN SOLUTION' on line 2 is never closed by '### END SOLUTION'",
        ),
        (
            "def f():\n    return 1\n    ### END SOLUTION",
            "'### END SOLUTION' on line 3 without a '### BEGIN SOLUTION'",
        ),
        (
            "### BEGIN SOLUTION\na = 1\n### END SOLUTION\n### END SOLUTION",
            "'### END SOLUTION' on line 4 without a '### BEGIN SOLUTION'",
        ),
        (
            "### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    a = 1\n    ### END SOLUTION\n### END SOLUTION",
            "nested '### BEGIN SOLUTION' on line 2 (block opened on line 1)",
        ),
    ],
    ids=["begin-without-end", "end-without-begin", "extra-end", "nested"],
)
def test_bad_markers_are_refused_and_nothing_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    source: str,
    problem: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "good.ipynb", new_code_cell(TOP_LEVEL))
    _write(tmp_path / "bad.ipynb", new_markdown_cell(MARKDOWN), new_code_cell(PLAIN), new_code_cell(source))

    assert main(["--out", "out", "good.ipynb", "bad.ipynb"]) == 1

    assert capsys.readouterr() == ("", f"error: bad.ipynb, cell 2: {problem}\n")
    assert not (tmp_path / "out").exists()


def test_same_file_name_twice_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _write(tmp_path / "a" / "x.ipynb", new_code_cell(TOP_LEVEL))
    _write(tmp_path / "b" / "x.ipynb", new_code_cell(TOP_LEVEL))

    assert main(["--out", "out", "a/x.ipynb", "b/x.ipynb"]) == 1

    assert capsys.readouterr() == ("", "error: b/x.ipynb and a/x.ipynb would both be written to x.ipynb\n")
    assert not (tmp_path / "out").exists()


def _solution_blocks(source: str) -> list[list[str]]:
    """The lines strictly between each BEGIN/END pair of a (well-formed) cell source."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in source.splitlines():
        if line.strip() == BEGIN:
            current = []
        elif line.strip() == END:
            assert current is not None
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line)
    assert current is None
    return blocks


def test_real_notebooks_lose_every_solution_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert NOTEBOOKS, "no notebooks found"
    before_bytes = [path.read_bytes() for path in NOTEBOOKS]

    assert main(["--out", str(tmp_path), *map(str, NOTEBOOKS)]) == 0

    reported: dict[str, int] = {}
    for line in capsys.readouterr().out.splitlines():
        match = re.fullmatch(r"(.+) -> (.+): (\d+) solutions? removed", line)
        assert match, line
        assert Path(match[2]) == tmp_path / Path(match[1]).name
        reported[Path(match[1]).name] = int(match[3])
    assert sorted(reported) == [path.name for path in NOTEBOOKS]
    total = 0
    for path in NOTEBOOKS:
        original = nbformat.read(path, as_version=4)
        student = nbformat.read(tmp_path / path.name, as_version=4)
        assert len(student.cells) == len(original.cells)
        begins = 0
        for before, after in zip(original.cells, student.cells, strict=True):
            blocks = _solution_blocks(before.source) if before.cell_type == "code" else []
            if not blocks:
                assert after == before, f"{path.name}: a cell without solutions changed"
                continue
            begins += sum(line.strip() == BEGIN for line in before.source.splitlines())
            after_lines = {line.strip() for line in after.source.splitlines()}
            solution_lines = {line.strip() for block in blocks for line in block} - {""}
            assert solution_lines, f"{path.name}: empty solution block"
            assert not solution_lines & after_lines, f"{path.name}: a solution line survived"
            assert not {BEGIN, END} & after_lines
            assert [line.strip() for line in after.source.splitlines()].count(RAISE) == len(blocks)
            assert after.outputs == []
            assert after.execution_count is None
        assert reported[path.name] == begins, path.name
        total += begins
    assert total > 0
    assert [path.read_bytes() for path in NOTEBOOKS] == before_bytes, "the course's notebooks were modified"
