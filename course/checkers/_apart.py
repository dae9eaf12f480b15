"""Running a learner's code apart from the kernel: the one runner of both front ends (`run_code_limited`).

The learner's code runs in a child process (`course.checkers._learner`, a script that imports only numpy),
limited from its start to `seconds` of CPU time and `memory_bytes` of memory more than it holds then; the
checker runs here, in this process, calling the learner's function through a stand-in (`_Remote`) that sends
each call's arguments to the child and takes back what the function returned, and the arrays it was given,
as the call left them (so a change in place is seen). The checker's verdict is made here from values alone:
nothing the learner's code writes can give it.

The wall-clock limit is kept here by waiting at most `seconds` in all for the child's replies, on whatever
thread this runs (JupyterLab 4.6 runs a widget's callback on a kernel subshell thread, where no signal can
reach). The child is in this process's process group, so Kernel > Interrupt (which signals the kernel's whole
group) and Ctrl-C in a terminal end it at once: that is said by raising `KeyboardInterrupt` here, the code
unjudged. When the run ends, the child and every process it started are killed: on Linux the child is the
reaper of its orphans, so a process started in a session of its own (``os.setsid()``) is found and killed
too.

Sentences, never a traceback::

    ✗ Your code ran for more than 10 seconds: it was stopped.
    ✗ Your code used more than 1 GiB of memory: it was stopped.
    ✗ Write it yourself: your code imports course.attention, the course's own code, ...

A syntax error is found here before any process starts; its verdict has ``retry`` set: a slip of the keys,
not a lapse of memory, which the front ends let the learner fix before anything is saved.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import io
import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from course.checkers import _learner
from course.checkers._listening import muted
from course.checkers._running import (
    CodeVerdict,
    Raised,
    compile_code,
    exception_words,
    find_checker,
    memory_sentence,
    time_sentence,
    verdict_of,
)

__all__ = ["STARTER_UNCHANGED", "not_written_sentence", "run_code_limited"]

STARTER_UNCHANGED = "✗ You sent the starter unchanged."
"""The verdict's sentence when the code sent is the card's starter, as it was given."""
_LEARNER = Path(_learner.__file__).resolve()
_STARTUP_SECONDS = 120.0  # for the child to start and import numpy, on a loaded machine
_TAIL = 4096  # how much of the child's standard error is kept (never shown to the learner)
_OWN_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # one thread: a lean child
_KILL_ROUNDS = 200


def not_written_sentence(function: str) -> str:
    """The verdict's sentence when the learner's function raises NotImplementedError (a stub)."""
    return f"✗ Your {function} is not written yet: it raises NotImplementedError."


class _OutOfTime(BaseException):
    """The time ran out (not an Exception: no checker catches it)."""


class _OutOfMemory(BaseException):
    """The child ran out of memory."""


class _Interrupted(BaseException):
    """The child was ended by SIGINT: Kernel > Interrupt, or Ctrl-C."""


class _RefusedImport(BaseException):
    """The learner's code imported the course's own code."""

    def __init__(self, module: str) -> None:
        super().__init__(module)
        self.module = module


class _Exited(BaseException):
    """The learner's function raised SystemExit (or another exception that is not an Exception)."""

    def __init__(self, words: str, line: int | None) -> None:
        super().__init__(words)
        self.words, self.line = words, line


class _Gone(BaseException):
    """The child ended without a reply, for another reason: its exit status, or None."""

    def __init__(self, status: int | None) -> None:
        super().__init__(status)
        self.status = status


class _Child:
    """The child process, its replies read on a thread of their own, and the run's deadline."""

    def __init__(self, seconds: float, memory_bytes: int, folder: str) -> None:
        self.seconds = seconds
        self.deadline = float("inf")
        self.nonce = ""  # the last request's, which its replies carry
        self.process = subprocess.Popen(
            [sys.executable, "-W", "ignore", str(_LEARNER), repr(float(seconds)), str(memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=folder,
            env=_child_environment(),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.tail = bytearray()
        assert self.process.stdout is not None and self.process.stderr is not None
        threading.Thread(target=_read_lines, args=(self.process.stdout, self.lines), daemon=True).start()
        threading.Thread(target=_read_tail, args=(self.process.stderr, self.tail), daemon=True).start()

    def ready(self) -> None:
        """Wait for the child to be ready (its start-up not counted); the learner's time starts now."""
        reply = self._next(time.monotonic() + _STARTUP_SECONDS, starting=True)
        if reply.get("kind") != "ready":
            raise _Gone(None)
        self.deadline = time.monotonic() + self.seconds

    def ask(self, request: dict[str, Any], callbacks: Sequence[Callable[..., Any]] = ()) -> dict[str, Any]:
        """Send `request`; its reply, within the time left. Meanwhile the child may call back the functions
        `callbacks` (the arguments of a call that are functions): each is called here, its value sent."""
        self._send(request)
        while True:
            reply = self._next(self.deadline, starting=False)
            if reply.get("kind") != "callback" or not 0 <= int(reply.get("id", -1)) < len(callbacks):
                return reply
            args = [_learner.decode(arg) for arg in reply.get("args", [])]
            kwargs = {key: _learner.decode(value) for key, value in reply.get("kwargs", {}).items()}
            try:
                value = callbacks[int(reply["id"])](*args, **kwargs)
            except Exception as error:  # the learner called it wrongly: raised in their code
                message = exception_words(error).partition(": ")[2]
                self._send({"kind": "callback-raised", "type": type(error).__name__, "message": message})
                continue
            self._send({"kind": "callback-returned", "value": _learner.encode(value)})

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        if message.get("kind") != "callback-returned" and message.get("kind") != "callback-raised":
            self.nonce = secrets.token_hex(16)
        try:
            stdin.write((json.dumps({**message, "nonce": self.nonce}) + "\n").encode("utf-8"))
            stdin.flush()
        except OSError:  # the child is gone: said by the end of its output
            pass

    def _next(self, deadline: float, *, starting: bool) -> dict[str, Any]:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                if starting:
                    raise _Gone(None)
                raise _OutOfTime
            try:
                line = self.lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            if line is None:
                raise self._ended(started=not starting)
            try:
                reply = json.loads(line)
            except ValueError:
                continue  # not a reply: something the learner's code wrote there
            if isinstance(reply, dict) and (starting or reply.get("nonce") == self.nonce):
                return reply

    def _ended(self, *, started: bool) -> BaseException:
        """Why the child ended without a reply."""
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        if status is not None and -status == _signal("SIGINT"):
            return _Interrupted()
        if started and status is not None and -status == _signal("SIGXCPU"):  # RLIMIT_CPU
            return _OutOfTime()
        killed = status is not None and -status == _signal("SIGKILL")  # not by us: by the system, for memory
        if started and (killed or b"MemoryError" in self.tail or b"Cannot allocate memory" in self.tail):
            return _OutOfMemory()
        return _Gone(status)

    def stop(self) -> None:
        """Kill the child and every process it started, and reap it."""
        _kill_tree(self.process)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _child_environment() -> dict[str, str]:
    """This environment, with numpy's thread pools of one."""
    environment = dict(os.environ)
    environment.update({name: "1" for name in _OWN_THREADS})
    environment["PYTHONIOENCODING"] = "utf-8"
    return environment


def _read_lines(stream: IO[bytes], lines: queue.Queue[str | None]) -> None:
    for raw in stream:
        lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
    lines.put(None)


def _read_tail(stream: IO[bytes], tail: bytearray) -> None:
    while chunk := stream.read(_TAIL):
        tail.extend(chunk)
        del tail[:-_TAIL]


def _signal(name: str) -> int | None:
    number = getattr(signal, name, None)
    return None if number is None else int(number)


def _living_descendants(pid: int) -> list[int]:
    """The processes below `pid` that are not yet dead (Linux: read from /proc; elsewhere none)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (name) "
        if len(fields) < 2 or fields[0] in ("Z", "X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        below = children.get(todo.pop(), [])
        found.extend(below)
        todo.extend(below)
    return found


def _kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Stop the child (so that it starts nothing more), kill what lies below it until nothing does (its
    orphans come back to it, their reaper), then kill it and reap it."""
    if process.poll() is None:
        with contextlib.suppress(OSError):
            os.kill(process.pid, _signal("SIGSTOP") or signal.SIGTERM)
        for _ in range(_KILL_ROUNDS):
            below = _living_descendants(process.pid)
            if not below:
                break
            for pid in below:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        with contextlib.suppress(OSError):
            process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


class _Remote:
    """The learner's function, as the checker sees it: each call runs in the child."""

    def __init__(self, child: _Child, name: str, parameters: list[str], raised: Raised) -> None:
        self._child = child
        self._raised = raised
        self.__name__ = self.__qualname__ = name
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        self.__signature__ = inspect.Signature([inspect.Parameter(p, kind) for p in parameters])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(args, kwargs, measure=False)[0]

    def call_measured(self, *args: Any) -> tuple[Any, int]:
        """``(fn(*args), peak bytes)``, the peak measured in the child (`course.efficient.peak_memory`)."""
        return self._call(args, {}, measure=True)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any], *, measure: bool) -> tuple[Any, int]:
        callbacks: list[Callable[..., Any]] = []
        request = {
            "kind": "call",
            "args": [_learner.encode(arg, callbacks) for arg in args],
            "kwargs": {key: _learner.encode(value, callbacks) for key, value in kwargs.items()},
            "measure": measure,
        }
        reply = _outcome(self._child.ask(request, callbacks))
        if reply.get("kind") == "raised":
            kind = getattr(builtins, str(reply.get("type")), None) if reply.get("builtin") else None
            if isinstance(kind, type) and not issubclass(kind, Exception):  # SystemExit: the run ends
                raise _Exited(_reply_words(reply), reply.get("line"))
            error = _exception(reply)
            self._raised.words = _reply_words(reply)
            self._raised.line = reply.get("line")
            raise error
        if reply.get("kind") != "returned":
            raise _Gone(None)
        for given, left in zip(args, reply.get("args", []), strict=False):
            _restore(given, _learner.decode(left))
        return _learner.decode(reply.get("value")), int(reply.get("peak") or 0)


def _outcome(reply: dict[str, Any]) -> dict[str, Any]:
    """`reply`, unless it says the run must end: then the exception that ends it."""
    kind = reply.get("kind")
    if kind == "memory":
        raise _OutOfMemory
    if kind == "refused":
        raise _RefusedImport(str(reply.get("module")))
    return reply


def _reply_words(reply: dict[str, Any]) -> str:
    """``NameError: name 'npp' is not defined``, as the checkers' engine words an exception."""
    message = str(reply.get("message") or "")
    return str(reply.get("type")) + (f": {message}" if message else "")


def _exception(reply: dict[str, Any]) -> Exception:
    """An exception like the one the learner's function raised: the same type where it is a builtin one
    (a checker may catch a ValueError), else one of the same name; the same first line."""
    name, message = str(reply.get("type")), str(reply.get("message") or "")
    kind = getattr(builtins, name, None) if reply.get("builtin") else None
    if isinstance(kind, type) and issubclass(kind, Exception):
        try:
            return kind(message) if message else kind()
        except TypeError:  # a builtin that takes other arguments
            pass
    stand_in: type[Exception] = type(name, (Exception,), {"__module__": "__learner__"})
    return stand_in(message) if message else stand_in()


def _restore(given: Any, left: Any) -> None:
    """Put into `given`, an argument the checker passed, what the learner's call left in its copy."""
    if isinstance(given, np.ndarray) and isinstance(left, np.ndarray):
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            if given.shape != left.shape:
                given.shape = left.shape  # reshaped in place
            np.copyto(given, left, casting="unsafe")
    elif type(given) in (list, tuple) and type(left) is type(given):
        for a, b in zip(given, left, strict=False):
            _restore(a, b)
        if type(given) is list and len(given) != len(left):
            given[:] = left


def run_code_limited(
    code: str,
    function: str,
    checker: str,
    *,
    seconds: float = 10.0,
    memory_bytes: int = 1 << 30,
    starter: str | None = None,
) -> CodeVerdict:
    """Grade a learner's `code`: run it in a child process limited to `seconds` (wall clock and CPU) and
    `memory_bytes` of memory, take `function` from it, and give it to ``getattr(course.checkers,
    checker)``, which runs here. `starter`, the card's starter code: sent unchanged, it is said to be.

    Raises KeyboardInterrupt when the run was interrupted (Kernel > Interrupt, Ctrl-C): nothing judged."""
    if starter is not None and code.strip() == starter.strip():
        return CodeVerdict(False, STARTER_UNCHANGED)
    check = find_checker(checker)
    if isinstance(check, CodeVerdict):
        return check
    compiled = compile_code(code)  # a syntax error is said before any process starts
    if isinstance(compiled, CodeVerdict):
        return compiled
    with tempfile.TemporaryDirectory(prefix="course-code-") as folder:
        child = _Child(seconds, memory_bytes, folder)
        try:
            return _run(child, code, function, checker, check)
        except _OutOfTime:
            return CodeVerdict(False, time_sentence(seconds))
        except _OutOfMemory:
            return CodeVerdict(False, memory_sentence(memory_bytes))
        except _RefusedImport as refused:
            return CodeVerdict(False, _learner.refused_sentence(refused.module))
        except _Exited as exited:
            return CodeVerdict(False, _raised_sentence(exited.words, exited.line))
        except _Interrupted:
            raise KeyboardInterrupt from None
        except _Gone as gone:
            said = "" if gone.status is None else f" (exit status {gone.status})"
            return CodeVerdict(False, f"✗ Your code stopped the process that ran it{said}.")
        finally:
            child.stop()


def _raised_sentence(words: str, line: int | None) -> str:
    return f"✗ Your code raised {words}" + ("" if line is None else f" (line {line})") + "."


def _run(child: _Child, code: str, function: str, checker: str, check: Callable[..., Any]) -> CodeVerdict:
    child.ready()
    reply = _outcome(child.ask({"kind": "define", "code": code, "function": function}))
    kind = reply.get("kind")
    if kind == "raised":
        return CodeVerdict(False, _raised_sentence(_reply_words(reply), reply.get("line")))
    if kind == "missing":
        return CodeVerdict(False, f"✗ Your code defines no function named {function}.")
    if kind == "not-callable":
        return CodeVerdict(
            False,
            f"✗ Your code defines {function} as a value of type {reply.get('type')}, not as a function.",
        )
    if kind != "defined":
        raise _Gone(None)
    raised = Raised()
    remote = _Remote(child, function, [str(p) for p in reply.get("parameters", [])], raised)
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            with muted():  # the card's answer, not an exercise's mistake
                result = check(remote)
        except Exception as error:  # the checker's own failure: still a sentence
            return CodeVerdict(
                False,
                f"✗ The checker {checker} failed on your code ({exception_words(error)}; a bug in the "
                "course: please report it).",
            )
    verdict = verdict_of(result, captured.getvalue(), raised)
    if verdict.sentence.startswith("·"):  # the exercises' "not written yet": the stub left in place
        return CodeVerdict(False, not_written_sentence(function))
    return verdict
