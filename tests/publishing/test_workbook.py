"""The learner's workbook: solution regions become stubs, outputs go, and a learner's edits are never lost."""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from solution_regions import BEGIN, END, split_regions

from course.publishing import WorkbookError, lab_command, write_workbook
from course.publishing._predictions import CHECK_HIDDEN, CHECK_LINE, is_check_cell
from course.publishing._workbook import (
    MANIFEST,
    MarkerError,
    instructor_notebooks,
    strip_solutions,
    strip_tool_markers,
    workbook_notebook,
)
from course.terminal.cli import main

RAISE = 'raise NotImplementedError("not written yet")'
TWO_REGIONS = (
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
MARKDOWN = "Write your code between the markers:\n\n    ### BEGIN SOLUTION\n    ...\n    ### END SOLUTION"
REPO = Path(__file__).resolve().parents[2]
# What only the course's tools read (nbval, the formatter), in a code cell's lines.
TOOL_MARKER = re.compile(r"NBVAL_|PYTEST_VALIDATE|# fmt: (skip|off|on)")


def test_solution_regions_become_stubs_at_their_indentation() -> None:
    assert strip_solutions(TWO_REGIONS, "01-x.ipynb") == (
        "def f(x):\n"
        "    # YOUR CODE HERE (a worked solution: notebooks/01-x.ipynb)\n"
        '    raise NotImplementedError("not written yet")\n'
        "\n"
        "\n"
        "class C:\n"
        "    def g(self):\n"
        "        # YOUR CODE HERE (a worked solution: notebooks/01-x.ipynb)\n"
        '        raise NotImplementedError("not written yet")\n'
        "\n"
        "\n"
        "_ = check(f)",
        2,
    )
    assert strip_solutions("x = 1\nx", "a.ipynb") == ("x = 1\nx", 0)


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
            "### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    a = 1\n    ### END SOLUTION\n### END SOLUTION",
            "nested '### BEGIN SOLUTION' on line 2 (region opened on line 1)",
        ),
    ],
    ids=["begin-without-end", "end-without-begin", "nested"],
)
def test_bad_markers_name_the_notebook_cell_and_line(tmp_path: Path, source: str, problem: str) -> None:
    path = tmp_path / "bad.ipynb"
    nbformat.write(new_notebook(cells=[new_markdown_cell(MARKDOWN), new_code_cell(source)]), path)
    with pytest.raises(MarkerError) as raised:
        workbook_notebook(path)
    assert str(raised.value) == f"bad.ipynb, cell 1: {problem}"
    with pytest.raises(MarkerError):  # nothing is written when one notebook is bad
        write_workbook(tmp_path / "out", [path], say=lambda _line: None)
    assert not (tmp_path / "out").exists()


# -- the real notebooks --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", instructor_notebooks(), ids=lambda path: path.stem)
def test_workbook_differs_only_in_outputs_and_stubbed_solutions(path: Path) -> None:
    instructor = nbformat.read(path, as_version=4)
    workbook = workbook_notebook(path)
    assert workbook.metadata == instructor.metadata
    assert len(workbook.cells) == len(instructor.cells)
    for before, after in zip(instructor.cells, workbook.cells, strict=True):
        check = before.cell_type == "code" and is_check_cell(before.source)  # a prediction's check: folded
        folded = {**before.metadata, **CHECK_HIDDEN} if check else before.metadata
        assert (after.cell_type, after.id, after.metadata) == (before.cell_type, before.id, folded)
        if before.cell_type != "code":
            assert after.source == before.source
            continue
        assert after.outputs == [] and after.execution_count is None  # so no Predict prompt shows its answer
        if check:  # under a first line that says what it is (a folded cell shows its first line)
            first, _, rest = after.source.partition("\n")
            assert (first, rest) == (CHECK_LINE, strip_tool_markers(before.source))
            continue
        outside, regions = split_regions(before.source)
        stub = f"# YOUR CODE HERE (a worked solution: notebooks/{path.name})"
        kept = [line for line in after.source.splitlines() if line.strip() not in (stub, RAISE)]
        # Outside the regions, the instructor's lines less the tools' markers (a blank line after a marker
        # that opened the cell goes with it).
        expected = [
            re.sub(r"\s*# fmt: skip$", "", line) for line in outside if not line.startswith("# NBVAL_")
        ]
        if len(expected) < len(outside):
            while expected and not expected[0].strip():
                expected.pop(0)
        assert kept == expected
        assert [line.strip() for line in after.source.splitlines()].count(RAISE) == len(regions)
        assert all(any(line.strip() for line in region) for region in regions)


def test_the_workbook_shows_no_test_marker_or_formatter_pragma() -> None:
    def markers(cells: list[nbformat.NotebookNode]) -> list[str]:
        return [
            line
            for cell in cells
            if cell.cell_type == "code"
            for line in cell.source.splitlines()
            if TOOL_MARKER.search(line)
        ]

    instructor = [marker for path in instructor_notebooks() for marker in markers(_cells(path))]
    assert len(instructor) >= 18 and "# NBVAL_IGNORE_OUTPUT" in instructor  # the instructor edition has them
    for path in instructor_notebooks():
        workbook = workbook_notebook(path)
        assert markers(workbook.cells) == [], path.name
        assert not [tag for cell in workbook.cells for tag in cell.metadata.get("tags", []) if "nbval" in tag]
        first = workbook.cells[1].source
        assert first.startswith("# Imports and seeds") or path.name == "review.ipynb", first[:40]


def test_tool_markers_go_with_the_blank_line_they_leave_and_code_stays() -> None:
    assert strip_tool_markers("# NBVAL_IGNORE_OUTPUT\n\n# Imports and seeds\nimport numpy") == (
        "# Imports and seeds\nimport numpy"
    )
    assert strip_tool_markers("x = 1\n# NBVAL_SKIP\ny = {\n    1: 2,\n}  # fmt: skip\nz") == (
        "x = 1\ny = {\n    1: 2,\n}\nz"
    )
    assert strip_tool_markers("# fmt: off\na = [1,2]\n# fmt: on") == "a = [1,2]"
    unchanged = "\n# NBVAL in a comment is not a marker\nprint('# NBVAL_IGNORE_OUTPUT')\n"
    assert strip_tool_markers(unchanged) == unchanged


def test_nbval_tags_go_and_other_tags_stay(tmp_path: Path) -> None:
    cells = [new_markdown_cell("# Lesson"), new_code_cell("1 / 0"), new_code_cell("2")]
    cells[1].metadata["tags"] = ["raises-exception", "nbval-raises-exception"]
    cells[2].metadata["tags"] = ["nbval-ignore-output"]
    path = tmp_path / "01-x.ipynb"
    nbformat.write(new_notebook(cells=cells), path)
    workbook = workbook_notebook(path)
    assert workbook.cells[1].metadata == {"tags": ["raises-exception"]}
    assert workbook.cells[2].metadata == {}


# Names of notebooks in a text: a link's target or a path in code, such as `notebooks/review.ipynb`.
NOTEBOOK_NAME = re.compile(r"[\w./-]*\.ipynb")


def test_every_notebook_the_workbook_names_is_the_workbooks_own(tmp_path: Path) -> None:
    """Links and paths in the workbook's text name the workbook's notebooks, not the instructor edition's."""
    out = tmp_path / "course" / "workbook"
    write_workbook(out, say=lambda _line: None)
    named: dict[str, set[str]] = {}
    for path in sorted(out.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                for name in NOTEBOOK_NAME.findall(cell.source):
                    named.setdefault(name, set()).add(path.name)
    assert {"review.ipynb", "00-welcome.ipynb", "08-cost-of-attention.ipynb"} <= set(named)
    elsewhere = {name: sorted(where) for name, where in named.items() if not (out / name).is_file()}
    assert elsewhere == {}


def _cells(path: Path) -> list[nbformat.NotebookNode]:
    return list(nbformat.read(path, as_version=4).cells)


def test_every_lesson_with_exercises_has_stubs() -> None:
    counts = {
        path.name: sum(strip_solutions(cell.source, path.name)[1] for cell in _code_cells(path))
        for path in instructor_notebooks()
    }
    assert {name for name, count in counts.items() if count == 0} == {"review.ipynb"}


def _code_cells(path: Path) -> list[nbformat.NotebookNode]:
    return [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]


# -- never overwrite a learner's work ----------------------------------------------------------------------


def _lesson(path: Path, body: str) -> Path:
    cell = new_code_cell(f"def f():\n    {BEGIN}\n    return {body}\n    {END}", execution_count=1)
    cell.outputs = [new_output("stream", name="stdout", text="✓\n")]
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Lesson"), cell]), path)
    return path


def _write(out: Path, *sources: Path) -> list[str]:
    lines: list[str] = []
    write_workbook(out, sources, say=lines.append)
    return lines


def _edit(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = "def f():\n    return 1"
    nbformat.write(nb, path)


def test_first_run_writes_then_reports_up_to_date(tmp_path: Path) -> None:
    source = _lesson(tmp_path / "01-x.ipynb", "1")
    out = tmp_path / "wb"
    assert _write(out, source) == [f"{out / '01-x.ipynb'}: written"]
    assert _write(out, source) == [f"{out / '01-x.ipynb'}: up to date"]
    written = nbformat.read(out / "01-x.ipynb", as_version=4)
    assert written.cells[1].outputs == [] and RAISE in written.cells[1].source
    assert sorted(json.loads((out / MANIFEST).read_text())["written"]) == ["01-x.ipynb"]


def test_an_untouched_notebook_is_updated_to_the_new_version(tmp_path: Path) -> None:
    source = _lesson(tmp_path / "01-x.ipynb", "1")
    out = tmp_path / "wb"
    _write(out, source)
    nb = nbformat.read(source, as_version=4)
    nb.cells[0].source = "# Lesson, improved"
    nbformat.write(nb, source)
    assert _write(out, source) == [
        f"{out / '01-x.ipynb'}: updated to the course's new version (you had not changed it)"
    ]
    assert nbformat.read(out / "01-x.ipynb", as_version=4).cells[0].source == "# Lesson, improved"


def test_an_edited_notebook_is_kept_and_the_new_version_goes_beside_it(tmp_path: Path) -> None:
    source = _lesson(tmp_path / "01-x.ipynb", "1")
    out = tmp_path / "wb"
    _write(out, source)
    _edit(out / "01-x.ipynb")
    mine = (out / "01-x.ipynb").read_bytes()
    assert _write(out, source) == [f"{out / '01-x.ipynb'}: kept as you left it"]  # nothing new to give

    nb = nbformat.read(source, as_version=4)
    nb.cells[0].source = "# Lesson, improved"
    nbformat.write(nb, source)
    assert _write(out, source) == [
        f"{out / '01-x.ipynb'}: kept as you left it; the course's new version is beside it, in "
        "01-x.updated.ipynb"
    ]
    assert (out / "01-x.ipynb").read_bytes() == mine
    assert nbformat.read(out / "01-x.updated.ipynb", as_version=4).cells[0].source == "# Lesson, improved"
    assert _write(out, source)[0].endswith("in 01-x.updated.ipynb")  # again: the beside copy is up to date

    _edit(out / "01-x.updated.ipynb")  # the learner works in the new copy too, then the course changes again
    nb.cells[0].source = "# Lesson, improved twice"
    nbformat.write(nb, source)
    theirs = (out / "01-x.updated.ipynb").read_bytes()
    assert _write(out, source) == [
        f"{out / '01-x.ipynb'}: kept as you left it, and so is 01-x.updated.ipynb, which you edited too; "
        "move 01-x.updated.ipynb aside and run this again to receive the course's new version"
    ]
    assert (out / "01-x.ipynb").read_bytes() == mine
    assert (out / "01-x.updated.ipynb").read_bytes() == theirs


def test_a_notebook_found_without_a_record_is_treated_as_the_learners(tmp_path: Path) -> None:
    source = _lesson(tmp_path / "01-x.ipynb", "1")
    out = tmp_path / "wb"
    out.mkdir()
    (out / "01-x.ipynb").write_text("my own notes")
    lines = _write(out, source)
    assert lines == [
        f"{out / '01-x.ipynb'}: kept as you left it; the course's new version is beside it, in "
        "01-x.updated.ipynb"
    ]
    assert (out / "01-x.ipynb").read_text() == "my own notes"


@pytest.mark.parametrize("content", ["{not json", '{"written": [1]}', '"a string"'])
def test_a_damaged_record_stops_before_anything_is_written(tmp_path: Path, content: str) -> None:
    source = _lesson(tmp_path / "01-x.ipynb", "1")
    out = tmp_path / "wb"
    out.mkdir()
    (out / MANIFEST).write_text(content)
    with pytest.raises(WorkbookError) as raised:
        _write(out, source)
    assert str(raised.value).startswith(f"{out / MANIFEST} ")
    assert str(raised.value).endswith("every existing notebook is then kept as yours")
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST]


def test_the_command_writes_the_course_and_says_how_to_open_it(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    target = tmp_path / "wb"
    assert main(["workbook", str(target)], stdout=out, stderr=err) == 0
    names = sorted(path.name for path in instructor_notebooks())
    assert sorted(p.name for p in target.glob("*.ipynb")) == names
    assert out.getvalue().splitlines() == [
        *(f"{target / name}: written" for name in names),
        f"{target / 'rise.css'}: written",
        f"Your workbook is in {target}. Open it with: jupyter lab {target / '00-welcome.ipynb'}",
    ]
    assert err.getvalue() == ""


def test_the_command_names_the_folder_to_open_jupyterlab_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert main(["workbook"], stdout=out, stderr=io.StringIO()) == 0
    assert out.getvalue().splitlines()[-1] == (
        "Your workbook is in workbook. Open it with: jupyter lab --notebook-dir=. "
        '--LabApp.default_url="/lab/tree/workbook/00-welcome.ipynb?file-browser-path=/"'
    )
    assert out.getvalue().splitlines()[-1].endswith(lab_command())


def readme_lab_commands() -> list[str]:
    """The ``jupyter lab ...`` commands of the README's "Start the course"."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.split("## Start the course", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```bash\n(.*?)^```", start, re.DOTALL | re.MULTILINE)
    return [command for block in blocks for command in re.findall(r"(jupyter lab [^\n]*)", block)]


def test_the_readme_opens_jupyterlab_at_the_course_folder_on_the_welcome() -> None:
    assert readme_lab_commands() == [lab_command(Path("workbook"), cwd=REPO)]
    assert lab_command(Path("workbook"), cwd=REPO) == (
        'jupyter lab --notebook-dir=. --LabApp.default_url="/lab/tree/workbook/00-welcome.ipynb'
        '?file-browser-path=/"'
    )
    assert lab_command(Path("my work/wb"), cwd=REPO).endswith(
        '"/lab/tree/my%20work/wb/00-welcome.ipynb?file-browser-path=/"'
    )
    assert lab_command(Path("/elsewhere/wb"), cwd=REPO) == "jupyter lab /elsewhere/wb/00-welcome.ipynb"


@pytest.mark.browser
@pytest.mark.timeout(120, method="signal")
def test_the_readme_command_opens_the_welcome_with_the_course_folder_in_the_file_browser(
    tmp_path: Path,
) -> None:
    """JupyterLab started with the README's command, in a sandbox, opens what it opens for a learner: the
    browser is handed the page JupyterLab asks it to open (through ``ServerApp.browser``)."""
    from browser.test_first_day import require_browser

    require_browser()
    from browser import chromium
    from browser import notebook as nb
    from browser.lab import TOKEN, JupyterLab
    from playwright.sync_api import sync_playwright

    (command,) = readme_lab_commands()
    words = shlex.split(command)
    assert words[:2] == ["jupyter", "lab"]
    root = tmp_path / "course"
    root.mkdir()
    (root / "README.md").write_bytes((REPO / "README.md").read_bytes())
    write_workbook(root / "workbook", say=lambda _line: None)
    opened = tmp_path / "opened.txt"
    recorder = tmp_path / "browser.py"
    recorder.write_text(f"import sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n", encoding="utf-8")

    class ReadmeLab(JupyterLab):
        def command(self) -> list[str]:
            sandbox = [
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={TOKEN}",
                f"--ServerApp.browser={sys.executable} {recorder} %s",
                "--LabApp.expose_app_in_browser=True",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            ]
            return [sys.executable, "-m", "jupyterlab", *words[2:], *sandbox, "--allow-root"]

    lab = ReadmeLab(root, tmp_path / "home", extra_env={"COURSE_DB": str(tmp_path / "progress.sqlite3")})
    with sync_playwright() as playwright:
        browser = None
        try:
            lab.spawn()
            browser = chromium.launch(playwright)
            lab.wait_ready()
            deadline = time.monotonic() + 30
            while not opened.exists():
                assert time.monotonic() < deadline, f"JupyterLab opened no browser:\n{lab.log_tail()}"
                time.sleep(0.1)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            # JupyterLab's page that redirects to the Lab, with the token: headless Chromium does not follow
            # its refresh from a file to a server, so follow its link ("click here to go to Jupyter").
            page.goto(opened.read_text(encoding="utf-8"))
            page.goto(page.get_by_role("link").get_attribute("href"))
            nb.wait_kernel_idle(page, "workbook/00-welcome.ipynb")
            crumbs = page.locator(".jp-FileBrowser .jp-BreadCrumbs")
            items = page.locator(".jp-FileBrowser .jp-DirListing-itemText")
            listed: list[str] = []
            deadline = time.monotonic() + 10
            while sorted(listed) != ["README.md", "workbook"] and time.monotonic() < deadline:
                time.sleep(0.2)  # the file browser lists its folder a moment after the notebook opens
                listed = items.all_inner_texts()
            assert sorted(listed) == ["README.md", "workbook"], (
                f"the file browser shows {crumbs.inner_text()}"
            )
            assert crumbs.inner_text().strip() == "/"
        finally:
            if lab.running:
                lab.delete_sessions()
            if browser is not None:
                browser.close()
            lab.stop()


def test_the_command_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    (tmp_path / "wb").write_text("")
    out, err = io.StringIO(), io.StringIO()
    assert main(["workbook", str(tmp_path / "wb")], stdout=out, stderr=err) == 2
    assert err.getvalue() == f"the workbook was not written: {tmp_path / 'wb'} exists and is not a folder\n"
    assert out.getvalue() == ""
