"""Running a learner's code through a checker: the grading of a code question (`course.bank.Kind.CODE`).

`run_code` runs it in this process (the notebook kernel): the code is executed in a fresh namespace that
already holds ``np`` (numpy) and ``math``, the function it defines is taken from it and given to the checker
(a ``check_...`` function of `course.checkers`), whose printed sentence is captured, not printed. The
`CodeVerdict` says whether every case passed, in one sentence: the checker's own, or one that says why the
code could not be judged, never a traceback::

    ✗ Your code has a syntax error on line 3: invalid syntax.
    ✗ Your code defines no function named causal_mask.
    ✗ Your code raised NameError: name 'npp' is not defined (line 2).

An exception raised by the learner's function while the checker calls it is named by the checker's sentence
("your function raised ..."); the line of the learner's code it came from is added to it, ``(line 2)``.

`run_code_limited` does the same in a child process, ``python -m course.checkers._running`` (the request and
the verdict as JSON on its standard input and output), with its memory (``RLIMIT_AS``) and its CPU time
(``RLIMIT_CPU``) limited from its start, before the learner's code runs, and a wall-clock limit kept by the
parent, which kills the child (and any process it started) when it runs out. So a ``while True: pass`` or a
10 GB allocation is one sentence, never fatal::

    ✗ Your code ran for more than 10 seconds: it was stopped.
    ✗ Your code used more than 1 GiB of memory: it was stopped.

`run_code` takes a time limit too (`seconds`; the notebooks' widgets give 10), kept by a timer in this process
where one can interrupt the code; it has no memory limit. The limits of the child count from when it is ready
to run the code (its own start-up, which imports numpy, is not
counted); the memory limit is on top of what the child holds then. A `MemoryError` in the child is taken as
the memory limit reached. The resource limits are set where the ``resource`` module has them (Linux, macOS);
the wall-clock limit holds everywhere. The terminal uses `run_code_limited`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import json
import math
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import numpy as np

from course.checkers._listening import muted

__all__ = [
    "CODE_FILE",
    "CodeVerdict",
    "main",
    "memory_sentence",
    "run_code",
    "run_code_limited",
    "time_sentence",
]

CODE_FILE = "<your code>"
"""The file name the learner's code is compiled under: how its lines are found in a traceback."""
_CHECKERS = "course.checkers"
_READY = "ready"
_STARTUP_SECONDS = 120.0  # for the child to import numpy and the checkers, on a loaded machine
_TAIL = 4096  # how much of the child's standard error is kept (never shown to the learner)
_CPU_SLACK = 1  # seconds of CPU time over the wall-clock limit before RLIMIT_CPU stops the child
_OWN_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")  # one thread: a lean child


@dataclass(frozen=True)
class CodeVerdict:
    """The grading of a learner's code: `ok` when every case of the checker passes; `sentence`, the checker's
    own ("✓ ...", "✗ ... case 2 of 3 (...): ...") or one saying why the code could not be judged."""

    ok: bool
    sentence: str


class _OutOfMemory(BaseException):
    """A MemoryError in the learner's function, in the limited child: not an Exception, so that no checker
    reports it as the function's error; it ends the run as the memory limit reached."""


@dataclass
class _Raised:
    """The last exception that came out of the learner's function: its words, and its line in their code."""

    words: str = ""
    line: int | None = None


def time_sentence(seconds: float) -> str:
    """The verdict's sentence when the code ran out of time."""
    return f"✗ Your code ran for more than {_seconds(seconds)}: it was stopped."


def memory_sentence(memory_bytes: int) -> str:
    """The verdict's sentence when the code ran out of memory."""
    return f"✗ Your code used more than {_size(memory_bytes)} of memory: it was stopped."


def _seconds(seconds: float) -> str:
    return "1 second" if seconds == 1 else f"{seconds:g} seconds"


def _size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{count} bytes"


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0].rstrip(".") if lines else ""


def _words(error: BaseException) -> str:
    """``NameError: name 'npp' is not defined``, as the checkers' engine words an exception."""
    try:
        message = _first_line(str(error))
    except Exception:
        message = ""
    return type(error).__name__ + (f": {message}" if message else "")


def _line_in_code(tb: TracebackType | None) -> int | None:
    """The line of the learner's code in traceback `tb` nearest to where the exception was raised."""
    line = None
    for frame, number in traceback.walk_tb(tb):
        if frame.f_code.co_filename == CODE_FILE:
            line = number
    return line


def _with_line(text: str, line: int | None) -> str:
    return text if line is None else f"{text} (line {line})"


def _watched(fn: Callable[..., Any], raised: _Raised, *, limited: bool) -> Callable[..., Any]:
    """`fn`, the learner's function, remembering the last exception it raises and its line (`raised`); in
    the limited child a MemoryError becomes `_OutOfMemory`. A class (an nn.Module) is given as it is."""
    if not inspect.isfunction(fn):
        return fn

    @functools.wraps(fn)
    def watched(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as error:
            _out_of_memory(error, limited=limited)
            raised.words, raised.line = _words(error), _line_in_code(error.__traceback__)
            raise

    return watched


def _out_of_memory(error: BaseException, *, limited: bool) -> None:
    """In the limited child, end the run as the memory limit reached when `error` is a MemoryError."""
    if limited and isinstance(error, MemoryError):
        raise _OutOfMemory from None


def _judge(code: str, function: str, checker: str, *, limited: bool) -> CodeVerdict:
    """Run `code`, take `function` from it, and give it to `checker`; every output captured."""
    # The checker is found by its name in the package, which imports this module: by name, not by an import
    # statement (it is loaded already when this runs).
    check = getattr(importlib.import_module(_CHECKERS), checker, None)
    if not callable(check):
        return CodeVerdict(
            False, f"✗ There is no checker named {checker} (a bug in the course: please report it)."
        )
    try:
        compiled = compile(code, CODE_FILE, "exec")
    except SyntaxError as err:
        where = f" on line {err.lineno}" if err.lineno else ""
        return CodeVerdict(False, f"✗ Your code has a syntax error{where}: {_first_line(err.msg)}.")
    except ValueError as err:  # a NUL character
        return CodeVerdict(False, f"✗ Your code could not be read: {_first_line(str(err))}.")
    namespace: dict[str, Any] = {"__name__": "__learner__", "np": np, "math": math}
    captured = io.StringIO()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            exec(compiled, namespace)
        except (Exception, SystemExit) as error:
            _out_of_memory(error, limited=limited)
            line = _line_in_code(error.__traceback__)
            return CodeVerdict(False, f"✗ {_with_line(f'Your code raised {_words(error)}', line)}.")
    fn = namespace.get(function)
    if fn is None:
        return CodeVerdict(False, f"✗ Your code defines no function named {function}.")
    if not callable(fn):
        return CodeVerdict(
            False,
            f"✗ Your code defines {function} as a value of type {type(fn).__name__}, not as a function.",
        )
    raised = _Raised()
    with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
        try:
            with muted():  # the card's answer, not an exercise's mistake
                result = check(_watched(fn, raised, limited=limited))
        except SystemExit as error:
            line = _line_in_code(error.__traceback__)
            return CodeVerdict(False, f"✗ {_with_line(f'Your code raised {_words(error)}', line)}.")
        except Exception as error:  # the checker's own failure: still a sentence
            _out_of_memory(error, limited=limited)
            return CodeVerdict(
                False,
                f"✗ The checker {checker} failed on your code ({_words(error)}; a bug in the course: please "
                "report it).",
            )
    return _verdict(result, captured.getvalue(), raised)


def _verdict(result: Any, printed: str, raised: _Raised) -> CodeVerdict:
    """The checker's result as a verdict: its sentence (or the last line it printed), the line of the
    learner's code an exception came from added after the exception's words."""
    sentence = getattr(result, "message", None)
    if not isinstance(sentence, str) or not sentence:
        lines = printed.strip().splitlines()
        sentence = lines[-1] if lines else ("✓ All cases pass." if bool(result) else "✗ Not right yet.")
    ok = bool(getattr(result, "ok", result))
    if raised.line is not None and raised.words:
        said = f"your function raised {raised.words}"
        at = sentence.find(said)
        if at >= 0:
            end = at + len(said)
            sentence = f"{sentence[:end]} (line {raised.line}){sentence[end:]}"
    return CodeVerdict(ok, sentence)


class _OutOfTime(BaseException):
    """Raised in this process when `run_code`'s time runs out (not an Exception: no checker catches it)."""


def run_code(code: str, function: str, checker: str, *, seconds: float | None = None) -> CodeVerdict:
    """Grade `code` in this process: execute it in a fresh namespace holding ``np`` and ``math``, take
    `function` from it, and call ``getattr(course.checkers, checker)`` on it, its printing captured.

    With `seconds`, code still running after that long is stopped and said to be (`time_sentence`), where a
    timer can interrupt it: on the main thread (a notebook's kernel runs widget callbacks there) of a system
    with ``signal.setitimer``; code stuck inside one long numpy call stops when that call returns."""
    timed = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not timed:
        return _judge(code, function, checker, limited=False)
    assert seconds is not None

    def out_of_time(signum: int, frame: Any) -> None:
        raise _OutOfTime

    before = signal.signal(signal.SIGALRM, out_of_time)
    try:
        signal.setitimer(signal.ITIMER_REAL, seconds)
        return _judge(code, function, checker, limited=False)
    except _OutOfTime:
        return CodeVerdict(False, time_sentence(seconds))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


# ---- the limited run: a child process


def run_code_limited(
    code: str, function: str, checker: str, *, seconds: float = 10.0, memory_bytes: int = 1 << 30
) -> CodeVerdict:
    """Grade `code` as `run_code` does, in a child process limited to `seconds` of time (wall clock and CPU)
    and `memory_bytes` of memory more than it holds once started: running out of either is a verdict."""
    request = {
        "code": code,
        "function": function,
        "checker": checker,
        "seconds": seconds,
        "memory": memory_bytes,
    }
    with tempfile.TemporaryDirectory(prefix="course-code-") as folder:
        child = subprocess.Popen(
            [sys.executable, "-W", "ignore::RuntimeWarning:runpy", "-m", "course.checkers._running"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=folder,
            env=_child_environment(),
            start_new_session=os.name == "posix",  # its own process group: killed whole
        )
        try:
            return _talk(child, json.dumps(request), seconds, memory_bytes)
        finally:
            _stop(child)


def _child_environment() -> dict[str, str]:
    """This environment, with this `course` first on the child's path, and numpy's thread pools of one."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.environ.get("PYTHONPATH")
    environment = {**os.environ, "PYTHONPATH": root if not path else os.pathsep.join((root, path))}
    environment.update({name: "1" for name in _OWN_THREADS})
    environment["PYTHONIOENCODING"] = "utf-8"
    return environment


def _talk(child: subprocess.Popen[bytes], request: str, seconds: float, memory_bytes: int) -> CodeVerdict:
    """Send the request; wait for the child to be ready, then `seconds` for its verdict."""
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    tail = bytearray()
    threading.Thread(target=_read_lines, args=(child.stdout, lines), daemon=True).start()
    threading.Thread(target=_read_tail, args=(child.stderr, tail), daemon=True).start()
    try:
        child.stdin.write(request.encode("utf-8"))
        child.stdin.close()
    except OSError:  # the child is gone already: said below
        pass
    first = _next_line(lines, _STARTUP_SECONDS)
    if first != _READY:
        return _failed(child, memory_bytes, seconds, bytes(tail), started=False)
    reply = _next_line(lines, seconds)
    if reply is _TIMEOUT:
        return CodeVerdict(False, time_sentence(seconds))
    try:
        answer = json.loads(reply) if isinstance(reply, str) else None
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("sentence"), str):
        return CodeVerdict(bool(answer.get("ok")), answer["sentence"])
    return _failed(child, memory_bytes, seconds, bytes(tail), started=True)


_TIMEOUT = object()


def _next_line(lines: queue.Queue[str | None], seconds: float) -> str | object | None:
    """The child's next line of output; None at its end; `_TIMEOUT` after `seconds`."""
    try:
        return lines.get(timeout=seconds)
    except queue.Empty:
        return _TIMEOUT


def _read_lines(stream: IO[bytes], lines: queue.Queue[str | None]) -> None:
    for raw in stream:
        lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
    lines.put(None)


def _read_tail(stream: IO[bytes], tail: bytearray) -> None:
    while chunk := stream.read(_TAIL):
        tail.extend(chunk)
        del tail[:-_TAIL]


def _failed(
    child: subprocess.Popen[bytes], memory_bytes: int, seconds: float, tail: bytes, *, started: bool
) -> CodeVerdict:
    """The verdict when the child gave none: the limit it ran into, else that the code could not be run."""
    try:
        status = child.wait(timeout=5)
    except subprocess.TimeoutExpired:
        status = None
    if started and status is not None and -status == _signal("SIGXCPU"):  # RLIMIT_CPU
        return CodeVerdict(False, time_sentence(seconds))
    killed = status is not None and -status == _signal("SIGKILL")  # not by us: by the system, for memory
    if killed or b"MemoryError" in tail or b"Cannot allocate memory" in tail:
        return CodeVerdict(False, memory_sentence(memory_bytes))
    said = "" if status is None else f" (exit status {status})"
    if not started:
        return CodeVerdict(
            False, f"✗ Your code could not be run: the process that runs it did not start{said}."
        )
    return CodeVerdict(False, f"✗ Your code stopped the process that ran it{said}.")


def _signal(name: str) -> int | None:
    number = getattr(signal, name, None)
    return None if number is None else int(number)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Kill the child and what it started (its process group), and reap it."""
    if child.poll() is None:
        try:
            if os.name == "posix":
                os.killpg(child.pid, signal.SIGKILL)
            else:  # pragma: no cover - not POSIX
                child.kill()
        except (ProcessLookupError, PermissionError):
            pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        child.wait(timeout=5)
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


# ---- the child


def _limit(seconds: float, memory_bytes: int) -> None:
    """Limit this process's CPU time to `seconds` (and a little) more than it has used, and its address space
    to `memory_bytes` more than it holds, where the ``resource`` module can (Linux, macOS)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: the wall-clock limit only
        return
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(used.ru_utime + used.ru_stime + seconds) + _CPU_SLACK
    _set(resource, resource.RLIMIT_CPU, cpu, cpu + 1)
    _set(resource, resource.RLIMIT_AS, _address_space() + memory_bytes, None)


def _set(resource: Any, which: int, soft: int, hard: int | None) -> None:
    """Lower a limit to `soft` (and `hard`), never above the hard limit already set."""
    with contextlib.suppress(ValueError, OSError):
        _, current = resource.getrlimit(which)
        wanted = [soft, soft if hard is None else hard]
        if current != resource.RLIM_INFINITY:
            wanted = [min(value, current) for value in wanted]
        resource.setrlimit(which, tuple(wanted))


def _address_space() -> int:
    """The bytes of address space this process holds now (0 where it cannot be read)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def main() -> int:
    """The child: read the request (JSON) from standard input, set the limits, say it is ready, grade the
    code, write the verdict (JSON). What the learner's code writes to the standard output goes to the
    standard error, so that only the verdict is on the standard output."""
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _limit(float(request["seconds"]), int(request["memory"]))
    reply.write(_READY + "\n")
    reply.flush()
    try:
        verdict = _judge(request["code"], request["function"], request["checker"], limited=True)
    except (_OutOfMemory, MemoryError):
        verdict = CodeVerdict(False, memory_sentence(int(request["memory"])))
    if not verdict.ok and "MemoryError" in verdict.sentence:  # one a checker caught (a class's, say)
        verdict = CodeVerdict(False, memory_sentence(int(request["memory"])))
    reply.write(json.dumps({"ok": verdict.ok, "sentence": verdict.sentence}) + "\n")
    reply.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
