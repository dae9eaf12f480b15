"""Answers kept on the learner's computer while the class database cannot be reached, sent when it is back.

One JSON-lines file per class database and learner (`outbox_path`), beside the per-user progress file unless
``$COURSE_OUTBOX`` (or a widget's argument) names another folder. Each line is one answer::

    {"kind": "answer", "item": "01-pick", "rating": 3, "at": 1741597200000, "duration_ms": 4000, "deck": "01"}

``kind`` is "answer" (a scheduled answer) or "practice"; ``at`` is milliseconds since the epoch (UTC);
``deck`` is the lesson a quiz answer enrolls, or null. A line is appended in one write, flushed and synced;
a last line without its newline is a write cut short by a crash: it is ignored, and dropped by the next
write. Any other line that is not an answer is an `OutboxError` naming the file and the line, and is never
deleted. `Outbox.send` merges everything pending in one ``Storage.merge`` (which skips what the database
already holds, so sending twice adds nothing) and then rewrites the file without it. Every change holds an
exclusive lock on ``<file>.lock``, so kernels of the same learner can share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from course.progress import default_path
from scheduler import LogEntry, Rating, Storage, StoreError

__all__ = [
    "ENV_VAR",
    "Kept",
    "Outbox",
    "OutboxError",
    "kept_note",
    "outbox_path",
    "sent_note",
    "waiting_note",
]

ENV_VAR = "COURSE_OUTBOX"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS = timedelta(milliseconds=1)
_KEYS = ("kind", "item", "rating", "at", "duration_ms", "deck")
_KINDS = ("answer", "practice")

if sys.platform == "win32":  # pragma: no cover - the tests run on Linux
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)


class OutboxError(StoreError):
    """A line of the outbox file that is not a kept answer (``line``: its number, from 1); left as it is."""

    def __init__(self, path: str | os.PathLike[str], line: int, detail: str) -> None:
        self.line = line
        self.detail = detail
        super().__init__(
            path,
            f"{os.fspath(path)}, line {line}, is not an answer kept for the class database ({detail}); it "
            "was left as it is: correct or delete that line, then try again",
        )


@dataclass(frozen=True)
class Kept:
    """One answer waiting to be sent: a scheduled answer, or a practice answer (``practice``); ``deck`` is the
    lesson a quiz answer enrolls."""

    entry: LogEntry
    practice: bool = False
    deck: str | None = None

    def line(self) -> str:
        """Its line in the file, newline included."""
        entry = self.entry
        fields = {
            "kind": _KINDS[self.practice],
            "item": entry.item_id,
            "rating": int(entry.rating),
            "at": (entry.reviewed_at - _EPOCH) // _ONE_MS,
            "duration_ms": entry.duration_ms,
            "deck": self.deck,
        }
        return json.dumps(fields, ensure_ascii=False, separators=(", ", ": ")) + "\n"


def _parse(text: str) -> Kept:
    """The answer on one line; ValueError saying what is wrong with it."""
    try:
        fields = json.loads(text)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(fields, dict) or sorted(fields) != sorted(_KEYS):
        raise ValueError(f"expected the keys {', '.join(_KEYS)}")
    kind, item, rating, at = fields["kind"], fields["item"], fields["rating"], fields["at"]
    duration, deck = fields["duration_ms"], fields["deck"]
    if kind not in _KINDS:
        raise ValueError(f"kind must be answer or practice, got {kind!r}")
    if not isinstance(item, str) or not item:
        raise ValueError(f"item must be a non-empty string, got {item!r}")
    if type(rating) is not int or rating not in (1, 2, 3, 4):
        raise ValueError(f"rating must be 1, 2, 3 or 4, got {rating!r}")
    if type(at) is not int:
        raise ValueError(f"at must be an integer (ms since 1970), got {at!r}")
    if duration is not None and (type(duration) is not int or duration < 0):
        raise ValueError(f"duration_ms must be a non-negative integer or null, got {duration!r}")
    if deck is not None and (not isinstance(deck, str) or not deck):
        raise ValueError(f"deck must be a non-empty string or null, got {deck!r}")
    entry = LogEntry(item, Rating(rating), _EPOCH + _ONE_MS * at, duration)
    return Kept(entry, kind == "practice", deck)


class Outbox:
    """The answers kept in the file `path` (created, with its folder, by the first `keep`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"Outbox({os.fspath(self.path)!r})"

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _lock(fd)  # released when the descriptor is closed
            yield
        finally:
            os.close(fd)

    def _read(self) -> list[Kept]:
        """The answers in the file's complete lines."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        whole = data[: data.rfind(b"\n") + 1]  # a torn last line (a crash mid-write) is left out
        kept = []
        for number, raw in enumerate(whole.split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                kept.append(_parse(raw.decode("utf-8")))
            except (ValueError, UnicodeDecodeError) as err:
                detail = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else str(err)
                raise OutboxError(self.path, number, detail) from None
        return kept

    def pending(self) -> list[Kept]:
        """The answers waiting, oldest first. `OutboxError` for a malformed line, OSError if unreadable."""
        if not self.path.exists():
            return []
        with self._locked():
            return self._read()

    def keep(self, kept: Kept) -> None:
        """Append one answer: one line, flushed and synced before this returns. A torn last line left by a
        crash is dropped first, so that it does not swallow this one; other lines are not read."""
        with self._locked(), self.path.open("a+b") as handle:
            handle.seek(0)
            data = handle.read()
            whole = data.rfind(b"\n") + 1  # the end of the last complete line: what follows is torn
            if whole != len(data):
                handle.truncate(whole)
            handle.write(kept.line().encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def send(self, store: Storage) -> int:
        """Merge every answer waiting into `store` in one ``merge`` call, then rewrite the file without them
        (atomically: a crash in between only sends them again, which ``merge`` skips); how many were sent.

        A ``StoreError`` from the store leaves them all waiting. `OutboxError` for a malformed line."""
        if not self.path.exists():
            return 0
        with self._locked():
            kept = self._read()
            if not kept:
                return 0
            decks: dict[str, datetime] = {}
            for one in kept:
                if one.deck is not None:
                    decks[one.deck] = min(decks.get(one.deck, one.entry.reviewed_at), one.entry.reviewed_at)
            store.merge(
                [one.entry for one in kept if not one.practice],
                [one.entry for one in kept if one.practice],
                decks,
            )
            self._empty()  # the lock kept other writers out: what follows the lines sent is a torn line
        return len(kept)

    def _empty(self) -> None:
        """Replace the file by an empty one, atomically (a temporary file, then ``os.replace``)."""
        fd, temporary = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        if sys.platform != "win32":
            folder = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)


def outbox_path(location: str, learner: str, folder: str | os.PathLike[str] | None = None) -> Path:
    """The outbox file of `learner` for the class database at `location` (as ``Storage.location`` says it):
    ``outbox-<learner>-<12 hex digits of the location>.jsonl`` in `folder`, else ``$COURSE_OUTBOX``, else
    the folder of the per-user progress file."""
    if folder is None:
        folder = os.environ.get(ENV_VAR, "") or default_path().parent
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", learner)[:40] or "learner"
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:12]
    return Path(folder).expanduser() / f"outbox-{safe}-{digest}.jsonl"


def _answers(n: int) -> str:
    return f"{n} answer{'' if n == 1 else 's'}"


def kept_note(detail: str) -> str:
    """What the learner is told when an answer is kept because the database cannot be reached (`detail`:
    why, as ``StoreUnavailableError.detail`` says it)."""
    return (
        f"Kept on this computer: the class database cannot be reached ({detail}). It is sent when the "
        "database is back; nothing is lost."
    )


def sent_note(n: int) -> str:
    """What the learner is told when `n` kept answers were sent ("" for none)."""
    if not n:
        return ""
    were = "was" if n == 1 else "were"
    return f"{_answers(n)} kept while the class database was unreachable {were} sent."


def waiting_note(n: int) -> str:
    """What a summary says of `n` answers still waiting ("" for none)."""
    if not n:
        return ""
    wait, they = ("waits", "it is") if n == 1 else ("wait", "they are")
    return (
        f"{_answers(n)} {wait} on this computer to be sent to the class database: {they} sent as soon as the "
        "database can be reached (your next answer or session)."
    )
