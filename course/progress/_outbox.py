"""Answers kept on the learner's computer while the class database cannot be reached, sent when it is back.

One JSON-lines file per learner and class (`outbox_path`: named from the learner's role and the class
database's name, whatever the URL's spelling, host or port), beside the per-user progress file unless
``$COURSE_OUTBOX`` (or a widget's argument) names another folder. Its first line says whose answers it holds
(`Owner`); each other line is one answer::

    {"kind": "owner", "learner": "ana", "database": "course"}
    {"kind": "answer", "item": "01-pick", "rating": 3, "at": 1741597200000, "duration_ms": 4000, "deck": "01"}

``kind`` is "answer" (a scheduled answer) or "practice"; ``at`` is milliseconds since the epoch (UTC);
``deck`` is the lesson a quiz answer enrolls, or null. A line is appended in one write, flushed and synced;
a last line without its newline is a write cut short by a crash: it is ignored, and dropped by the next
write. Any other line that is not an answer is an `OutboxError` naming the file and the line, and is never
deleted. `Outbox.send` merges everything pending in one ``Storage.merge`` (which skips what the database
already holds, so sending twice adds nothing) and then rewrites the file without it; it sends nothing to a
store logged in as another learner than the file's (`OutboxOwnerError`). Every change holds an exclusive lock
on ``<file>.lock``, so kernels of the same learner can share it. Files of the naming before owners were
recorded (``outbox-<learner>-<12 hex digits>.jsonl``, named from the URL's location) are taken into the
learner's file by `Outbox.adopt` (`legacy_paths` finds them).
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

from course.progress._location import default_path
from scheduler import LogEntry, Rating, Storage, StoreError, StoreUnavailableError

__all__ = [
    "ENV_VAR",
    "OUTBOX_ERRORS",
    "Kept",
    "Outbox",
    "OutboxError",
    "OutboxOwnerError",
    "Owner",
    "kept_note",
    "legacy_path",
    "legacy_paths",
    "note_for",
    "outbox_path",
    "sent_note",
    "waiting_note",
]

ENV_VAR = "COURSE_OUTBOX"
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS = timedelta(milliseconds=1)
_KEYS = ("kind", "item", "rating", "at", "duration_ms", "deck")
_KINDS = ("answer", "practice")
_OWNER_KEYS = ("kind", "learner", "database")
_SAFE = re.compile(r"[A-Za-z0-9.-]")  # what the naming before kept, but "_", its stand-in

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


class OutboxOwnerError(StoreError):
    """The outbox file holds another learner's answers (or another class's) than the store or the learner it
    was used for: nothing was sent or kept in it."""

    def __init__(self, path: str | os.PathLike[str], holds: Owner, wanted: str) -> None:
        self.holds = holds
        self.wanted = wanted
        super().__init__(
            path,
            f"{os.fspath(path)} holds the answers of {holds.learner!r} in the class database "
            f"{holds.database!r}, not {wanted}: they were not sent, and nothing was added to it",
        )


OUTBOX_ERRORS = (OutboxError, OutboxOwnerError)  # problems with the outbox itself: nothing can be kept there


@dataclass(frozen=True)
class Owner:
    """Whose answers an outbox keeps: a learner (their database role) of a class (its database's name)."""

    learner: str
    database: str

    def line(self) -> str:
        """The file's first line, newline included."""
        fields = {"kind": "owner", "learner": self.learner, "database": self.database}
        return json.dumps(fields, ensure_ascii=False, separators=(", ", ": ")) + "\n"


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


def _parse(text: str, first: bool) -> Kept | Owner:
    """The answer on one line, or (the `first` line only) the owner; ValueError saying what is wrong."""
    try:
        fields = json.loads(text)
    except ValueError:
        raise ValueError("not JSON") from None
    if first and isinstance(fields, dict) and fields.get("kind") == "owner":
        learner, database = fields.get("learner"), fields.get("database")
        if sorted(fields) != sorted(_OWNER_KEYS) or not all(
            isinstance(name, str) and name for name in (learner, database)
        ):
            raise ValueError("an owner line has the keys kind, learner, database (non-empty strings)")
        assert isinstance(learner, str) and isinstance(database, str)
        return Owner(learner, database)
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
    """The answers kept in the file `path` (created, with its folder, by the first `keep`), whose first line
    says they are `owner`'s (None: a file that records no owner, as the files of the naming before did)."""

    def __init__(self, path: str | os.PathLike[str], owner: Owner | None = None) -> None:
        self.path = Path(path)
        self.owner = owner

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

    def _read(self, data: bytes | None = None) -> tuple[Owner | None, list[Kept]]:
        """The owner the file records (None if none) and the answers in its complete lines."""
        if data is None:
            try:
                data = self.path.read_bytes()
            except FileNotFoundError:
                return None, []
        whole = data[: data.rfind(b"\n") + 1]  # a torn last line (a crash mid-write) is left out
        owner: Owner | None = None
        kept = []
        for number, raw in enumerate(whole.split(b"\n")[:-1], start=1):
            if not raw.strip():
                continue
            try:
                line = _parse(raw.decode("utf-8"), first=number == 1)
            except (ValueError, UnicodeDecodeError) as err:
                detail = "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else str(err)
                raise OutboxError(self.path, number, detail) from None
            if isinstance(line, Owner):
                owner = line
            else:
                kept.append(line)
        return owner, kept

    def _check_owner(self, found: Owner | None, wanted: Owner | None, whom: str) -> None:
        if found is not None and wanted is not None and found != wanted:
            raise OutboxOwnerError(self.path, found, whom)

    def pending(self) -> list[Kept]:
        """The answers waiting, oldest first. `OutboxError` for a malformed line, OSError if unreadable."""
        if not self.path.exists():
            return []
        with self._locked():
            return self._read()[1]

    def keep(self, kept: Kept) -> None:
        """Append one answer: one line, flushed and synced before this returns (the owner's line first, in
        the same write, into an empty file). A torn last line left by a crash is dropped first, so that it
        does not swallow this one; a file of another owner is `OutboxOwnerError`, and nothing is written."""
        self._append([kept])

    def _append(self, answers: list[Kept]) -> None:
        with self._locked(), self.path.open("a+b") as handle:
            handle.seek(0)
            data = handle.read()
            whole = data.rfind(b"\n") + 1  # the end of the last complete line: what follows is torn
            if self.owner is not None:
                first = data[: data.find(b"\n") + 1] if whole else b""
                found = self._read(first)[0] if first else None
                self._check_owner(found, self.owner, _whose(self.owner))
            if whole != len(data):
                handle.truncate(whole)
            head = self.owner.line() if self.owner is not None and not whole else ""
            handle.write((head + "".join(one.line() for one in answers)).encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def adopt(self, other: str | os.PathLike[str]) -> int:
        """Take the answers of the outbox file `other` (one of the naming before, found to be this owner's)
        into this one, those not kept here already, then delete `other`; how many were taken. A crash in
        between leaves them in both, which sending skips. `OutboxError` for a malformed line of `other`."""
        source = Outbox(other)
        if not source.path.exists():
            return 0
        with source._locked():
            found, theirs = source._read()
            self._check_owner(found, self.owner, f"{_whose(self.owner)} (adopting {source.path.name})")
            if theirs:
                ours = self.pending()
                fresh = [one for one in theirs if one not in ours]
                if fresh:
                    self._append(fresh)
            source.path.unlink()
        with contextlib.suppress(OSError):
            source.path.with_name(source.path.name + ".lock").unlink()
        return len(theirs)

    def send(self, store: Storage, learner: str | None = None) -> int:
        """Merge every answer waiting into `store` in one ``merge`` call, then rewrite the file without them
        (atomically: a crash in between only sends them again, which ``merge`` skips); how many were sent.
        `learner` is the role `store` logs in as: a file that records another owner, or that is not this
        outbox's owner's, is `OutboxOwnerError` and nothing is sent.

        A ``StoreError`` from the store leaves them all waiting. `OutboxError` for a malformed line."""
        if not self.path.exists():
            return 0
        with self._locked():
            owner, kept = self._read()
            self._check_owner(owner, self.owner, _whose(self.owner))
            if learner is not None:
                for named in (owner, self.owner):
                    if named is not None and named.learner != learner:
                        raise OutboxOwnerError(self.path, named, f"{learner!r}, whom the store logs in as")
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


def _folder(folder: str | os.PathLike[str] | None) -> Path:
    """`folder`, else ``$COURSE_OUTBOX``, else the folder of the per-user progress file."""
    if folder is None:
        folder = os.environ.get(ENV_VAR, "") or default_path().parent
    return Path(folder).expanduser()


def _whose(owner: Owner | None) -> str:
    return "this outbox's" if owner is None else f"{owner.learner!r} in {owner.database!r}"


def _readable(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:40] or "learner"


def outbox_path(owner: Owner, folder: str | os.PathLike[str] | None = None) -> Path:
    """The outbox file of `owner` (a learner of a class database), in `folder`, else ``$COURSE_OUTBOX``, else
    the folder of the per-user progress file: ``outbox-<learner, readably>-<32 hex digits>.jsonl``, the
    digits those of SHA-256 over the learner and the database's name, each written whole: two owners never
    share a file (and the file says whose it is, which is checked before anything is sent or added)."""
    exact = json.dumps([owner.learner, owner.database], ensure_ascii=False)
    digest = hashlib.sha256(exact.encode("utf-8")).hexdigest()[:32]
    return _folder(folder) / f"outbox-{_readable(owner.learner)}-{digest}.jsonl"


def legacy_path(location: str, learner: str, folder: str | os.PathLike[str] | None = None) -> Path:
    """Where the naming before kept `learner`'s answers for the class database at `location` (as
    ``Storage.location`` said it): ``outbox-<learner, readably>-<12 hex digits of the location>.jsonl``."""
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:12]
    return _folder(folder) / f"outbox-{_readable(learner)}-{digest}.jsonl"


def legacy_paths(
    location: str, user: str, learner: str, folder: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The files of the naming before that hold `learner`'s answers: the one for `location` (`user`: the
    learner as that naming took it, from the location or ``$PGUSER``), whose name covered the learner and the
    whole location; and, for a learner whose name no other name became in that naming (letters, digits,
    ``.`` and ``-`` only, under 40 of them, not "learner"), every one named for them at another host or port
    (a class that moved, behind PgBouncer say). A name with ``_``, or of 40 or more, might be another's made
    safe for a file name: only the file of this very location is theirs."""
    exact = legacy_path(location, user, folder)
    found = [exact] if exact.exists() else []
    if 0 < len(learner) < 40 and learner != "learner" and all(_SAFE.fullmatch(char) for char in learner):
        pattern = re.compile(rf"outbox-{re.escape(learner)}-[0-9a-f]{{12}}\.jsonl")
        with contextlib.suppress(OSError):
            found += sorted(
                path
                for path in exact.parent.iterdir()
                if pattern.fullmatch(path.name) and path != exact and path.is_file()
            )
    return found


def _answers(n: int) -> str:
    return f"{n} answer{'' if n == 1 else 's'}"


def kept_note(detail: str) -> str:
    """What the learner is told when an answer is kept because the database cannot be reached (`detail`:
    why, as ``StoreUnavailableError.detail`` says it)."""
    return (
        f"Kept on this computer: the class database cannot be reached ({detail}). It is sent when the "
        "database is back; nothing is lost."
    )


def note_for(problem: StoreError) -> str:
    """What the learner is told when an answer is kept because the class database did not take it:
    `kept_note` when it cannot be reached, else what it said (a failure only whoever runs it can mend)."""
    if isinstance(problem, StoreUnavailableError):
        return kept_note(problem.detail)
    return (
        f"Kept on this computer: {problem}. It is sent once that is put right (your next answer or session "
        "tries again); nothing is lost."
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
