"""Line-based terminal input and output, and the signals that stop ``review``, ``cram`` and ``quiz`` at a
prompt.

Ctrl-C (SIGINT), a closed terminal (SIGHUP) and SIGTERM stop the command the way typing q does, at the prompt
on screen; one that comes while an answer is being saved waits for the next prompt (`Stops`), so that no
answer is ever half saved. While the learner's code runs they stop it at once (`Console.running`); while
their editor runs, Ctrl-C is the editor's (`Console.editing`).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from course.terminal.exits import EXIT_HANGUP, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED
from course.terminal.text import terminal_text
from scheduler import Rating

__all__ = [
    "SIGNALS",
    "Console",
    "Interrupted",
    "Quit",
    "Stops",
    "no_stops",
    "silence",
    "terminal_width",
    "tolerate_encoding_errors",
]

_TYPED_Q, _END_OF_INPUT, _CTRL_C = "you typed q", "end of input", "Ctrl-C"
SIGNALS = {  # the signals that stop review and cram at a prompt (`Stops`): name -> (reason, exit status)
    "SIGINT": (_CTRL_C, EXIT_INTERRUPTED),
    "SIGHUP": ("the terminal was closed", EXIT_HANGUP),
    "SIGTERM": ("SIGTERM", EXIT_TERMINATED),
}
_MIN_WIDTH = 20


class Quit(Exception):
    """The learner stopped: typed q, ended the input, pressed Ctrl-C, closed the terminal or the program was
    asked to stop (`reason` says which, `status` is the exit status). `keep` is a rating already known for the
    question on screen, to save before stopping."""

    def __init__(self, reason: str, keep: Rating | None = None, status: int = EXIT_OK) -> None:
        super().__init__(reason)
        self.reason = reason
        self.keep = keep
        self.status = status

    def keeping(self, rating: Rating) -> Quit:
        """The same stop, carrying `rating` to save first."""
        return Quit(self.reason, rating, self.status)


class Interrupted(KeyboardInterrupt):
    """A stopping signal (Ctrl-C, SIGHUP, SIGTERM) that came while a prompt was waiting for input."""

    def __init__(self, reason: str, status: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class Stops:
    """While installed, Ctrl-C (SIGINT), a closed terminal (SIGHUP) and SIGTERM stop the command at a prompt:
    one that comes while a prompt waits interrupts the reading; one that comes at any other time (while an
    answer is graded or saved) is held until the next prompt, so that no answer is ever half saved."""

    def __init__(self) -> None:
        self.waiting = False  # a prompt waits for input, or the learner's code runs: a stop interrupts it
        self.editing = False  # the learner's editor runs in the foreground: Ctrl-C is its own
        self.pending: Interrupted | None = None

    def handle(self, signum: int, frame: object) -> None:
        """The signal handler: interrupt the prompt waiting (or the code running), else hold the stop for the
        next prompt; Ctrl-C while the learner's editor runs is left to the editor."""
        name = signal.Signals(signum).name
        if self.editing and name == "SIGINT":
            return
        reason, status = SIGNALS[name]
        stop = Interrupted(reason, status)
        if self.waiting:
            raise stop
        if self.pending is None:
            self.pending = stop

    @contextmanager
    def installed(self) -> Iterator[Stops]:
        """Install the handlers (only possible in the main thread), and restore the previous ones after. A
        signal that is ignored (``nohup`` ignores SIGHUP) stays ignored."""
        numbers = [getattr(signal, name) for name in SIGNALS if hasattr(signal, name)]
        numbers = [number for number in numbers if signal.getsignal(number) is not signal.SIG_IGN]
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {number: signal.signal(number, self.handle) for number in numbers}
        try:
            yield self
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)

    def raise_pending(self) -> None:
        """Raise `Quit` for a stop held since the last prompt, if any."""
        if self.pending is not None:
            stop, self.pending = self.pending, None
            raise Quit(stop.reason, status=stop.status)


@contextmanager
def no_stops() -> Iterator[Stops]:
    """For commands that ask nothing: signals keep their usual effect."""
    yield Stops()


class Console:
    """Line-based terminal I/O. When stdin is not a terminal, each answer read is echoed, so a transcript of a
    piped session reads like the interactive one. Text from the question bank is shown with `show`, wrapped
    to `width` columns."""

    def __init__(self, stdin: TextIO, stdout: TextIO, width: int = 80, stops: Stops | None = None) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.width = max(width, _MIN_WIDTH)
        self.stops = stops if stops is not None else Stops()
        try:
            self.echo = not stdin.isatty()
        except (AttributeError, ValueError):
            self.echo = True

    def say(self, text: str = "") -> None:
        """Write `text` and a newline."""
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def show(self, markdown: str, prefix: str = "") -> None:
        """Say `prefix`, then the question bank's `markdown` as terminal text (`terminal_text`); lines after
        the first are indented under the text. After a prefix too long for that, the text starts on the next
        line, indented by 4."""
        if self.width - len(prefix) < _MIN_WIDTH:
            self.say(prefix.rstrip())
            prefix = " " * 4
        hang = " " * len(prefix)
        lines = terminal_text(markdown, self.width - len(hang)).split("\n")
        self.say("\n".join([prefix + lines[0]] + [hang + line if line else "" for line in lines[1:]]))

    def ask(self, prompt: str) -> str:
        """One stripped line of input; raises `Quit` on ``q``, at the end of input, on Ctrl-C, when the
        terminal is closed and on SIGTERM (`Stops`). A line that cannot be decoded is returned as U+FFFD,
        an answer no prompt accepts, so that the prompt asks again."""
        line = self._read(prompt)
        if not line:
            self.stdout.write("\n")
            raise Quit(_END_OF_INPUT)
        answer = line.strip()
        if self.echo:
            self.stdout.write(answer + "\n")
        if answer.lower() in ("q", "quit"):
            raise Quit(_TYPED_Q)
        return answer

    def ask_line(self, prompt: str) -> str:
        """One line of input as typed (its indentation kept, the line end and trailing white space dropped),
        for code; raises `Quit` as `ask` does, on a line that is only ``q`` and at the end of input."""
        typed = self.code_line(prompt)
        if typed is None:
            raise Quit(_END_OF_INPUT)
        return typed

    def code_line(self, prompt: str) -> str | None:
        """`ask_line`, but None at the end of input (Ctrl-D), which ends the code typed so far."""
        line = self._read(prompt)
        if not line:
            self.stdout.write("\n")
            return None
        typed = line.rstrip()
        if self.echo:
            self.stdout.write(typed + "\n")
        if typed.strip().lower() in ("q", "quit"):
            raise Quit(_TYPED_Q)
        return typed

    @contextmanager
    def running(self) -> Iterator[None]:
        """While the learner's code runs: a stopping signal (Ctrl-C, SIGHUP, SIGTERM) interrupts it at once,
        raising `Interrupted` (a `KeyboardInterrupt`) where the code is waited for; one held since the last
        prompt stops the command first (`Quit`)."""
        self.stops.raise_pending()
        self.stops.waiting = True
        try:
            yield
        finally:
            self.stops.waiting = False

    @contextmanager
    def editing(self) -> Iterator[None]:
        """While the learner's editor runs in the foreground: Ctrl-C reaches it too, and is its own (nano, vim
        and emacs use it), not a stop; a closed terminal and SIGTERM are held for the next prompt."""
        self.stops.editing = True
        try:
            yield
        finally:
            self.stops.editing = False

    def _read(self, prompt: str) -> str:
        """Show `prompt` and read a line ("" at the end of input); a stopping signal raises `Quit`."""
        self.stops.raise_pending()
        self.stops.waiting = True  # from before the prompt shows: a learner may stop as soon as it does
        try:
            self.stdout.write(prompt)
            self.stdout.flush()
            return self.stdin.readline()
        except KeyboardInterrupt as stop:
            self.stdout.write("\n")
            if isinstance(stop, Interrupted):
                raise Quit(stop.reason, status=stop.status) from None
            raise Quit(_CTRL_C, status=EXIT_INTERRUPTED) from None
        except UnicodeDecodeError:
            return "\N{REPLACEMENT CHARACTER}\n"
        except OSError:  # the terminal is gone (EIO), or the input cannot be read
            return ""
        finally:
            self.stops.waiting = False


def terminal_width() -> int:
    """The terminal's width in columns ($COLUMNS, else the terminal's, else 80)."""
    return shutil.get_terminal_size().columns


def tolerate_encoding_errors(*streams: TextIO | None) -> None:
    """Read undecodable input and write unencodable text as replacement characters, not as a traceback."""
    for stream in streams:
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")


def silence(stream: TextIO) -> None:
    """After a broken pipe, point `stream`'s file at the null device, so that the final flush is quiet."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)
