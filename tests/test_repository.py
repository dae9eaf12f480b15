"""Repository-wide checks: lint, formatting, types and the static notebook hygiene check."""

from __future__ import annotations

import importlib.util
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
