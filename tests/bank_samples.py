"""Question-file text shared by the bank's tests: single questions here, whole lesson files in banks/."""

from __future__ import annotations

from pathlib import Path

BANKS = Path(__file__).resolve().parent / "banks"
"""The lesson files that several tests share: ``NAME.toml`` read with `bank_text`, a folder ``NAME/`` of
them copied with `copy_bank`."""

RECALL = """
[[question]]
id = "00-a"
kind = "recall"
prompt = "P"
answer = "A"
explanation = "E"
section = "S"
"""
"""One valid recall question of lesson 00, without the file's ``lesson = ...`` line."""


def bank_text(name: str) -> str:
    """The text of ``banks/NAME.toml``, a lesson file that several tests write into their own bank."""
    return (BANKS / f"{name}.toml").read_text(encoding="utf-8")


def copy_bank(name: str, directory: Path) -> Path:
    """`directory`, made, holding a copy of each lesson file of the shared bank ``banks/NAME/``."""
    directory.mkdir()
    for source in sorted((BANKS / name).glob("*.toml")):
        (directory / source.name).write_bytes(source.read_bytes())
    return directory
