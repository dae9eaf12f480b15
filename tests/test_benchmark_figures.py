"""The README's benchmark figures are the benchmarks' own output, and were made from today's code and bank."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import _results  # noqa: E402
import figures  # noqa: E402


@pytest.mark.parametrize("name", figures.BENCHMARKS)
def test_a_result_was_made_from_the_files_it_depends_on_as_they_are(name: str) -> None:
    changed = _results.stale(name)
    assert not changed, (
        f"benchmarks/results/{name}.json was made before a change to {', '.join(changed)}: rerun "
        f"python benchmarks/{name}.py, then python benchmarks/figures.py"
    )


@pytest.mark.parametrize("name", figures.BENCHMARKS)
def test_the_readme_shows_what_the_result_file_makes(name: str) -> None:
    text = figures.README.read_text(encoding="utf-8")
    assert figures.rewritten(text, {name: figures.block(name)}) == text, (
        f"README.md's {name} block differs from benchmarks/results/{name}.json: "
        "run python benchmarks/figures.py"
    )


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch repository for the result files: ``tmp_path``."""
    monkeypatch.setattr(_results, "REPO", tmp_path)
    monkeypatch.setattr(_results, "RESULTS", tmp_path / "results")
    return tmp_path


def test_staleness_is_seen_in_a_dependency_and_in_the_bank(
    repository: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = repository / "data.csv"
    data.write_text("a,b\n", encoding="utf-8")
    monkeypatch.setattr(_results, "_bank_digest", lambda: "one bank")
    _results.write_results("x", {"n": 1}, ["data.csv", _results.BANK])
    assert (_results.stale("x"), _results.read_results("x")) == ([], {"n": 1})
    data.write_text("a,b\n1,2\n", encoding="utf-8")
    assert _results.stale("x") == ["data.csv"]
    monkeypatch.setattr(_results, "_bank_digest", lambda: "another bank")
    assert _results.stale("x") == [_results.BANK, "data.csv"]
    data.unlink()
    record = json.loads((repository / "results" / "x.json").read_text(encoding="utf-8"))
    assert record["depends"] == ["data.csv", _results.BANK]
    assert _results.fingerprint(["data.csv"]) == {"data.csv": "missing"}


def test_a_block_is_replaced_between_its_markers_only() -> None:
    text = "intro\n<!-- a:begin -->\nold\n<!-- a:end -->\nafter <!-- b:begin -->\n"
    assert (
        figures.rewritten(text, {"a": "new\n"})
        == "intro\n<!-- a:begin -->\nnew\n<!-- a:end -->\nafter <!-- b:begin -->\n"
    )
    with pytest.raises(ValueError, match=r"README.md has no <!-- c:begin --> ... <!-- c:end --> block"):
        figures.rewritten(text, {"c": "x\n"})


def test_prose_in_code_does_not_make_a_result_stale_and_code_does(repository: Path) -> None:
    code = repository / "m.py"
    code.write_text('"""What m does."""\n\nRATE = 0.85\n"""The rate."""\n', encoding="utf-8")
    _results.write_results("m", {}, ["m.py"])
    code.write_text('"""What m does, said better."""\n\nRATE = 0.85  # a comment\n"""The rate, 0.85."""\n')
    assert _results.stale("m") == []
    code.write_text('"""What m does, said better."""\n\nRATE = 0.9\n"""The rate, 0.85."""\n')
    assert _results.stale("m") == ["m.py"]
