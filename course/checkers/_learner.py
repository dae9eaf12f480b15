"""The process a learner's code runs in, apart from the checker that judges it (`course.checkers._apart`).

This file is run as a script (``python .../_learner.py``), not as a module of the package: it imports only
the standard library and numpy, never ``course``, so the learner's code finds nothing of the course here,
and an import of the course's own code (``from course.attention import softmax``) is refused, in words.

The two processes talk in JSON lines: the child's requests arrive on its standard input, its replies leave by
a copy of its standard output taken before the learner's code runs (what that code prints goes to the standard
error, which the parent reads and drops); each reply carries its request's nonce, a random word the parent
checks, so that a line the learner's code writes there is not taken for a reply. The child only runs the code
and calls its function on the arguments the parent sends; the parent's checker compares what comes back. So
the learner's code cannot give a verdict: whatever it writes is, at most, a wrong reply to a call.

1. The child sets its limits (CPU time, address space), makes itself the reaper of orphans (Linux), and says
   ``{"kind": "ready"}``.
2. ``{"code", "function"}``: it runs the code in a fresh namespace holding ``np`` and ``math`` and answers
   ``{"kind": "defined", "parameters": [...]}`` or why not (``raised``, ``refused``, ``missing``,
   ``not-callable``, ``memory``).
3. ``{"kind": "call", "args", "kwargs", "measure"}``: it calls the function and answers ``{"kind":
   "returned", "value", "args", "peak"}`` (``args`` as the call left them, ``peak`` the bytes the call held
   at its peak when ``measure``), ``raised`` (the exception's type, message and line in the code),
   ``refused`` or ``memory``. Meanwhile the child may call back a function among the arguments (a checker's
   sublayer): ``{"kind": "callback", "id", "args"}``, answered ``callback-returned`` or ``callback-raised``.

Values travel as `encode` writes them: JSON for None, booleans, numbers and strings, tagged objects for
tuples, lists, dicts, numpy arrays (``.npy`` bytes, never pickled) and numpy scalars; anything else as the
name of its type, which the parent turns into a stand-in of that name (`decode`).
"""

from __future__ import annotations

import base64
import builtins
import importlib.abc
import io
import json
import math
import os
import sys
import traceback
import tracemalloc
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Any

import numpy as np

__all__ = [
    "CODE_FILE",
    "REFUSED_PACKAGES",
    "decode",
    "encode",
    "first_line",
    "line_in_code",
    "main",
    "refused_sentence",
]

CODE_FILE = "<your code>"
"""The file name the learner's code is compiled under: how its lines are found in a traceback."""
REFUSED_PACKAGES = ("course", "scheduler")
"""The packages a learner's code may not import: the course's own code, which a card asks them to write."""
_CPU_SLACK = 1  # seconds of CPU time over the wall-clock limit before RLIMIT_CPU stops the child
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def refused_sentence(module: str) -> str:
    """The verdict's sentence when the learner's code imports `module`, of the course's own code."""
    return (
        f"✗ Write it yourself: your code imports {module}, the course's own code, and a card asks for "
        "yours, from memory (np and math are there already)."
    )


# ---- values on the wire


def encode(value: Any, callbacks: list[Any] | None = None) -> Any:
    """`value` as JSON can carry it (see the module's docstring). With `callbacks`, a function (the
    checker's sublayer, say) is added to that list and sent as its place there: the child calls it back."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if callbacks is not None and callable(value) and not isinstance(value, type):
        callbacks.append(value)
        return {"~": "callback", "id": len(callbacks) - 1}
    if isinstance(value, np.ndarray) and value.dtype != object:
        buffer = io.BytesIO()
        np.save(buffer, value, allow_pickle=False)
        return {"~": "array", "npy": base64.b64encode(buffer.getvalue()).decode("ascii")}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return {"~": "scalar", "array": encode(np.asarray(value))}
    if type(value) in (tuple, list):
        return {"~": type(value).__name__, "items": [encode(item, callbacks) for item in value]}
    if type(value) is dict and all(isinstance(key, str) for key in value):
        return {"~": "dict", "items": {key: encode(item, callbacks) for key, item in value.items()}}
    return {"~": "object", "type": type(value).__name__}


_STAND_INS: dict[str, type] = {}


def decode(value: Any, call_back: Any = None) -> Any:
    """What `encode` wrote, as Python values again; an object of another type as a stand-in of its name; a
    callback as a function that calls ``call_back(its place, args, kwargs)``."""
    if not isinstance(value, dict):
        return value
    tag = value.get("~")
    if tag == "callback" and call_back is not None:
        place = int(value["id"])
        return lambda *args, **kwargs: call_back(place, args, kwargs)
    if tag == "array":
        return np.load(io.BytesIO(base64.b64decode(value["npy"])), allow_pickle=False)
    if tag == "scalar":
        return decode(value["array"])[()]
    if tag == "tuple":
        return tuple(decode(item, call_back) for item in value["items"])
    if tag == "list":
        return [decode(item, call_back) for item in value["items"]]
    if tag == "dict":
        return {key: decode(item, call_back) for key, item in value["items"].items()}
    name = str(value.get("type", "object"))
    if name not in _STAND_INS:
        _STAND_INS[name] = type(name, (), {"__repr__": lambda self: f"<a {type(self).__name__}>"})
    return _STAND_INS[name]()


# ---- the child


class _Refused(ImportError):
    """An import of the course's own code by the learner's code."""

    def __init__(self, module: str) -> None:
        super().__init__(f"{module} is the course's own code: write it yourself")
        self.module = module


class _RefuseTheCourse(importlib.abc.MetaPathFinder):
    """Refuses every import of a module of `REFUSED_PACKAGES` (none of them is loaded in this process)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: Any = None) -> None:
        if fullname.partition(".")[0] in REFUSED_PACKAGES:
            raise _Refused(fullname)
        return None


def _refuse_the_course(importing: Any) -> Any:
    """`importing` (``builtins.__import__``), refusing the course's own code by its full name."""

    def refusing(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if level == 0 and name.partition(".")[0] in REFUSED_PACKAGES:
            raise _Refused(name)
        return importing(name, globals, locals, fromlist, level)

    return refusing


def first_line(text: str) -> str:
    """The first line of `text`, without its full stop."""
    lines = text.strip().splitlines()
    return lines[0].rstrip(".") if lines else ""


def line_in_code(tb: TracebackType | None) -> int | None:
    """The line of the learner's code in traceback `tb` nearest to where the exception was raised."""
    line = None
    for frame, number in traceback.walk_tb(tb):
        if frame.f_code.co_filename == CODE_FILE:
            line = number
    return line


def _failure(error: BaseException) -> dict[str, Any]:
    """The reply for an exception out of the learner's code."""
    if isinstance(error, _Refused):
        return {"kind": "refused", "module": error.module}
    if isinstance(error, MemoryError):
        return {"kind": "memory"}
    try:
        message = first_line(str(error))
    except Exception:
        message = ""
    return {
        "kind": "raised",
        "type": type(error).__name__,
        "builtin": type(error).__module__ == "builtins",
        "message": message,
        "line": line_in_code(error.__traceback__),
    }


def _parameters(fn: Any) -> list[str]:
    import inspect

    try:
        return [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return []


def _define(request: dict[str, Any], namespace: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """Run the learner's code; the reply, and the function it defines (None when it defines none)."""
    try:
        exec(compile(request["code"], CODE_FILE, "exec"), namespace)
    except (Exception, SystemExit) as error:
        return _failure(error), None
    function = str(request["function"])
    fn = namespace.get(function)
    if fn is None:
        return {"kind": "missing"}, None
    if not callable(fn):
        return {"kind": "not-callable", "type": type(fn).__name__}, None
    return {"kind": "defined", "parameters": _parameters(fn)}, fn


class _Channel:
    """The child's two streams: requests in, replies out; and the calls back to the parent's functions."""

    def __init__(self, requests: IO[str], replies: IO[str]) -> None:
        self.requests, self.replies = requests, replies
        self.nonce = ""  # the last request's: every reply carries it

    def send(self, message: dict[str, Any]) -> None:
        self.replies.write(json.dumps({**message, "nonce": self.nonce}) + "\n")
        self.replies.flush()

    def receive(self) -> dict[str, Any] | None:
        line = self.requests.readline()
        if not line:
            return None
        request: dict[str, Any] = json.loads(line)
        self.nonce = str(request.get("nonce", ""))
        return request

    def call_back(self, place: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the parent's function at `place` (the checker's sublayer, say) on the learner's arguments."""
        self.send(
            {
                "kind": "callback",
                "id": place,
                "args": [encode(arg) for arg in args],
                "kwargs": {key: encode(value) for key, value in kwargs.items()},
            }
        )
        nonce = self.nonce
        answer = self.receive()
        self.nonce = nonce  # the call's, again
        if answer is None:
            raise SystemExit(0)
        if answer.get("kind") == "callback-returned":
            return decode(answer.get("value"), self.call_back)
        kind = getattr(builtins, str(answer.get("type")), RuntimeError)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        raise kind(str(answer.get("message") or ""))


def _call(fn: Any, request: dict[str, Any], channel: _Channel) -> dict[str, Any]:
    """Call the learner's function on the request's arguments: the reply."""
    args = [decode(arg, channel.call_back) for arg in request["args"]]
    kwargs = {key: decode(value, channel.call_back) for key, value in request.get("kwargs", {}).items()}
    measure = bool(request.get("measure"))
    try:
        if measure:  # started after the arguments were decoded: the peak is the call's own
            tracemalloc.start()
        try:
            value = fn(*args, **kwargs)
        finally:
            peak = tracemalloc.get_traced_memory()[1] if measure else 0
            tracemalloc.stop()
    except (Exception, SystemExit) as error:
        return _failure(error)
    return {"kind": "returned", "value": encode(value), "args": [encode(arg) for arg in args], "peak": peak}


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
    try:
        _, current = resource.getrlimit(which)
        wanted = [soft, soft if hard is None else hard]
        if current != resource.RLIM_INFINITY:
            wanted = [min(value, current) for value in wanted]
        resource.setrlimit(which, tuple(wanted))
    except (ValueError, OSError):
        pass


def _address_space() -> int:
    """The bytes of address space this process holds now (0 where it cannot be read)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def _reap_orphans() -> None:
    """Become the parent of every orphan among this process's descendants (Linux), so that a process the
    learner's code started in a session of its own stays where the parent finds it and stops it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: Sequence[str]) -> int:
    """The child: ``_learner.py SECONDS MEMORY_BYTES``. Requests on the standard input, replies on a copy
    of the standard output; the learner's output goes to the standard error."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Kernel > Interrupt and Ctrl-C end this process at once
    seconds, memory_bytes = float(argv[0]), int(argv[1])
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the learner's code reads nothing of the requests
    os.close(null)
    os.dup2(2, 1)
    sys.stdin, sys.stdout = io.StringIO(), sys.stderr
    _reap_orphans()
    sys.meta_path.insert(0, _RefuseTheCourse())  # importlib.import_module too
    builtins.__import__ = _refuse_the_course(builtins.__import__)
    _limit(seconds, memory_bytes)
    channel = _Channel(requests, reply)
    channel.send({"kind": "ready"})
    namespace: dict[str, Any] = {"__name__": "__learner__", "np": np, "math": math}
    fn = None
    while (request := channel.receive()) is not None:
        try:
            if request.get("kind") == "define":
                answer, fn = _define(request, namespace)
            elif fn is not None:
                answer = _call(fn, request, channel)
            else:
                answer = {"kind": "missing"}
        except MemoryError:
            answer = {"kind": "memory"}
        channel.send(answer)
    return 0


if __name__ == "__main__":
    # Run as a script: its own folder (course/checkers) is not a place to import from.
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]
    raise SystemExit(main(sys.argv[1:]))
