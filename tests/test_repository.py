"""Repository-wide checks: lint, formatting, types and the static notebook hygiene check."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HYGIENE = ROOT.parent / "shared" / "tools" / "notebook_hygiene.py"


needs_ruff = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None,
    reason="ruff is not installed (pip install -r requirements-test.txt)",
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


@needs_ruff
def test_ruff_lint_is_clean() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@needs_ruff
def test_ruff_format_is_clean() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (pip install -r requirements-test.txt)",
)
def test_types_check_strictly() -> None:
    # pyproject.toml's [tool.mypy] names the packages (course, scheduler) and the strict settings
    result = _run(sys.executable, "-m", "mypy", "--cache-dir", "/dev/null")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found in "), result.stdout


@pytest.mark.skipif(
    not HYGIENE.exists(), reason="the shared notebook hygiene tool is not beside this checkout"
)
def test_notebook_hygiene_reports_nothing() -> None:
    result = _run(sys.executable, str(HYGIENE), "notebooks")
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith(", 0 problems"), result.stdout


def test_scheduler_imports_neither_torch_nor_matplotlib() -> None:
    heavy = ("torch", "matplotlib", "numpy", "course")
    code = f"import sys, scheduler; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    result = _run(sys.executable, "-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def unmarked_browser_tests(source: str) -> list[str]:
    """The tests in `source` that start a browser (JupyterLab in Chromium, Playwright) without
    the ``browser`` marker, which keeps them out of ``-m "not browser"`` and of the quick loop."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        calls = {ast.unparse(call.func) for call in ast.walk(node) if isinstance(call, ast.Call)}
        marked = any("mark.browser" in ast.unparse(decorator) for decorator in node.decorator_list)
        if calls & {"lab_in_browser", "sync_playwright", "chromium.launch"} and not marked:
            found.append(node.name)
    return found


def test_every_test_that_starts_a_browser_is_marked_browser() -> None:
    found = {
        path.name: names
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        if (names := unmarked_browser_tests(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_an_unmarked_browser_test_is_found() -> None:
    source = (
        "@pytest.mark.browser\ndef test_a():\n    with lab_in_browser(tmp_path):\n        pass\n\n"
        "def test_b():\n    with sync_playwright() as p:\n        pass\n\n"
        "def test_c():\n    require_browser()\n"
    )
    assert unmarked_browser_tests(source) == ["test_b"]


def unknown_tests(prefixes: tuple[str, ...]) -> list[str]:
    """The prefixes of test ids (``path``, ``path::test_name_start`` or ``path::test_name[lesson]``) naming no
    test file (or notebook), no test in it, or no lesson: a test renamed or moved out from under conftest.py's
    NOT_QUICK, SPREAD or LONGEST."""
    stems = [notebook.stem for notebook in (ROOT / "notebooks").glob("*.ipynb")]
    unknown = []
    for prefix in prefixes:
        path, _, name = prefix.partition("::")
        name, _, case = name.partition("[")
        file = ROOT / path
        source = file.read_text("utf-8") if file.is_file() else ""
        if (
            not source
            or (name and not re.search(rf"^def {re.escape(name)}", source, re.M))
            or (case.rstrip("]") and not any(stem.startswith(case.rstrip("]")) for stem in stems))
        ):
            unknown.append(prefix)
    return unknown


def test_the_tests_conftest_names_are_tests(pytestconfig: pytest.Config) -> None:
    root_conftest = next(
        plugin
        for plugin in pytestconfig.pluginmanager.get_plugins()
        if getattr(plugin, "__file__", None) == str(ROOT / "conftest.py")
    )
    assert unknown_tests((*root_conftest.NOT_QUICK, *root_conftest.SPREAD, *root_conftest.LONGEST)) == []


def test_a_prefix_naming_no_test_is_found() -> None:
    prefixes = (
        "tests/test_repository.py",
        "tests/test_repository.py::test_ruff_lint",
        "tests/test_repository.py::test_ruff_lints",
        "tests/test_nowhere.py",
        "notebooks/07-transformer-block.ipynb",
        "tests/lessons/test_seed_sweep.py::test_the_lesson_holds_on_other_seeds[07]",
        "tests/lessons/test_seed_sweep.py::test_the_lesson_holds_on_other_seeds[17]",
    )
    assert unknown_tests(prefixes) == [
        "tests/test_repository.py::test_ruff_lints",
        "tests/test_nowhere.py",
        "tests/lessons/test_seed_sweep.py::test_the_lesson_holds_on_other_seeds[17]",
    ]
