"""The benchmarks' result files, from which the README's figures are made, and what they were made from.

A benchmark's default run writes ``benchmarks/results/NAME.json``: its figures, and the SHA-256 of what they
depend on: the scheduler's code and the benchmark's (their code: docstrings, comments and layout aside), its
data, and the question bank's questions (``BANK``: their ids and lessons, what a simulation schedules; a
question's wording does not change them). The README holds each benchmark's block between
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``, made from that file by the benchmark's ``readme_block``;
``python benchmarks/figures.py`` rewrites the blocks, and a test fails when a block differs from its file or
when what a result depends on has changed since the result was made (then rerun the benchmark, then
``figures.py``).
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "BANK",
    "REPO",
    "RESULTS",
    "SCHEDULING_CODE",
    "fingerprint",
    "read_results",
    "stale",
    "write_results",
]

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
SCHEDULING_CODE = (
    "scheduler/_memory.py",
    "scheduler/_time.py",
    "scheduler/_fitting.py",
    "scheduler/_records.py",
)
"""The scheduler's code that decides intervals and recall: every scheduling benchmark depends on it."""
BANK = "bank: the questions' ids and lessons"
"""A dependency on the course's question bank: which questions there are, in which lesson."""


def _bank_digest() -> str:
    from course.bank import load_bank  # the course: only for a result that depends on its bank

    items = [[item.id, item.deck] for item in load_bank().items()]
    return hashlib.sha256(json.dumps(items).encode("utf-8")).hexdigest()


def _files(path: str) -> list[Path]:
    full = REPO / path
    if full.is_dir():
        return sorted(p for p in full.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [full]


class _NoProse(ast.NodeTransformer):
    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        """A bare string (a docstring, or one documenting the constant above it) does nothing: a pass."""
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return ast.Pass()
        return node


def _code(source: bytes) -> bytes:
    """Python source as what it does: its syntax tree without its bare strings (docstrings); comments and
    layout are not in it, so a result goes stale when the code it depends on changes, not its prose."""
    return ast.dump(_NoProse().visit(ast.parse(source))).encode("utf-8")


def _digest(file: Path) -> str:
    if not file.exists():
        return "missing"
    data = file.read_bytes()
    return hashlib.sha256(_code(data) if file.suffix == ".py" else data).hexdigest()


def fingerprint(depends: Sequence[str]) -> dict[str, str]:
    """The SHA-256 of each file named in ``depends`` (repository-relative; a folder: every file in it; or
    ``BANK``), by path: of a Python file's code (``_code``), of another file's bytes; a missing file has the
    digest ``"missing"``."""
    found: dict[str, str] = {}
    for path in depends:
        if path == BANK:
            found[path] = _bank_digest()
            continue
        for file in _files(path):
            name = file.relative_to(REPO).as_posix()
            found[name] = _digest(file)
    return dict(sorted(found.items()))


def write_results(name: str, figures: dict[str, Any], depends: Sequence[str]) -> Path:
    """Write ``benchmarks/results/NAME.json``: ``figures`` (JSON values) and the fingerprint of
    ``depends``; its path."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    record = {"benchmark": name, "depends": list(depends), "inputs": fingerprint(depends), "figures": figures}
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_results(name: str) -> dict[str, Any]:
    """The figures of ``benchmarks/results/NAME.json``."""
    record = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    figures: dict[str, Any] = record["figures"]
    return figures


def stale(name: str) -> list[str]:
    """The files that changed (or appeared, or went) since ``NAME.json`` was made; empty when none did."""
    record = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    now = fingerprint(record["depends"])
    made = record["inputs"]
    return sorted(path for path in set(now) | set(made) if now.get(path) != made.get(path))
