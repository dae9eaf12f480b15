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


# A lesson 02: one recall question, and two predictions that test it (issue 37), a numeric one and a choice.
PREDICTION_BANK = """lesson = "02"

[[question]]
id = "02-variance-grows"
kind = "recall"
prompt = "How does the variance of q·k grow with d_k?"
answer = "In proportion to d_k."
explanation = "E"
section = "5. Why divide"

[[prediction]]
id = "02-predict-variance"
kind = "numeric"
card = "02-variance-grows"
prompt = "For $d_k = 64$, what is the variance of $q \\\\cdot k$?"
answer = 64
tolerance = 4
explanation = "A sum of 64 products, each of variance 1."
section = "5. Why divide"

[[prediction]]
id = "02-predict-largest"
kind = "choice"
card = "02-variance-grows"
prompt = "Without the scaling, the largest weight is about"
explanation = "The scores are spread by 16."
section = "6. The largest weight"
options = [
  { text = "one key takes nearly all", correct = true, why = "A gap of 16 is a factor of e^16." },
  { text = "the weights stay uniform", why = "They would if the scores were equal." },
  { text = "two keys share it evenly", why = "Only if their scores tie." },
]
"""
