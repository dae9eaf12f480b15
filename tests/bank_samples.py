"""Question-file text shared by the bank's tests."""

from __future__ import annotations

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
