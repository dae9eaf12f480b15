"""Before a command saves anything: whether it can. Every command that saves (``review``, ``quiz``, ``cram``,
``settings`` with a change, ``optimize`` without ``--dry-run``, ``import-progress``) checks its progress file
before it asks a question or does the work whose result it saves; `NotWritable` says why it cannot, and
`course.terminal.cli` reports it with what was not done (`NOT_DONE`)."""

from __future__ import annotations

import argparse

from scheduler import Storage, StoreError

__all__ = ["NOT_DONE", "NotWritable", "check_writable", "not_done", "saves"]

NOTHING_ASKED = "No question was asked, as no answer could be saved to it."
NOT_DONE = {  # by command: what the learner is told was not done, after the problem
    "review": NOTHING_ASKED,
    "quiz": NOTHING_ASKED,
    "cram": NOTHING_ASKED,
    "settings": "Nothing was changed.",
    "optimize": "Nothing was changed.",
    "import-progress": "Nothing was imported.",
}


class NotWritable(Exception):
    """The progress file cannot be written now: `problem` says why (a ``StoreError``)."""

    def __init__(self, problem: StoreError) -> None:
        super().__init__(str(problem))
        self.problem = problem


def check_writable(store: Storage) -> None:
    """`NotWritable` unless an answer could be saved to `store` now (``Storage.check_writable``)."""
    try:
        store.check_writable()
    except StoreError as problem:
        raise NotWritable(problem) from problem


def saves(args: argparse.Namespace) -> bool:
    """Whether the command `args` asks for saves to the progress file: ``review``, ``quiz``, ``cram`` and
    ``import-progress`` do; ``settings`` with a change; ``optimize`` without ``--dry-run``."""
    if args.command == "settings":
        return bool(args.retention is not None or args.default_retention or args.default_parameters)
    if args.command == "optimize":
        return not args.dry_run
    return args.command in NOT_DONE


def not_done(args: argparse.Namespace, problem: StoreError) -> str:
    """What to add after `problem`, met opening or using the progress file: what was not done (`NOT_DONE`),
    when the command saves and the file cannot be written (read-only, or its disk full); else ""."""
    if saves(args) and getattr(problem, "reason", None) in ("read-only", "full"):
        return f"{NOT_DONE[args.command]}\n"
    return ""
