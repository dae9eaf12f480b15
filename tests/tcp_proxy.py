"""A TCP proxy for the tests: it forwards between its clients and a server, and on command stops forwarding
without closing either side (`partition`), as a network that silently drops every packet does; `heal` lets
what waited through. Threads, one pair per connection; `close` ends them all.

Unlike a real partition, the client's packets are acknowledged by the proxy's own TCP stack: TCP keepalives
and ``tcp_user_timeout`` see nothing wrong, so what ends a call here is the store's own deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["TcpProxy"]


class TcpProxy:
    """Listens on 127.0.0.1 at `port` (default: one chosen free) and forwards each connection to
    ``(host, target_port)``."""

    def __init__(self, target_port: int, host: str = "127.0.0.1", *, port: int = 0) -> None:
        self._target = (host, target_port)
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self.connections = 0  # how many clients were accepted
        threading.Thread(target=self._accept, name="tcp-proxy-accept", daemon=True).start()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def partition(self) -> None:
        """Stop forwarding, both ways, on every connection, the ones accepted later too; close nothing."""
        self._flowing.clear()

    def heal(self) -> None:
        """Forward again: what was sent meanwhile goes through."""
        self._flowing.set()

    def heal_after(self, seconds: float) -> threading.Timer:
        """Heal in `seconds` (a test's safety net: code that waits for the partition to end does end)."""
        timer = threading.Timer(seconds, self.heal)
        timer.daemon = True
        timer.start()
        return timer

    def close(self) -> None:
        """Close the listener and every connection (their threads then end)."""
        self._closed.set()
        self._flowing.set()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for each in (self._listener, *sockets):
            with contextlib.suppress(OSError):
                each.shutdown(socket.SHUT_RDWR)
            each.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target, timeout=10)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._closed.is_set():
                    client.close()
                    server.close()
                    return
                self._sockets += [client, server]
                self.connections += 1
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        """Copy `source` to `sink` while flowing; an end or error on either side ends both."""
        try:
            while True:
                self._flowing.wait()  # partitioned: read nothing, send nothing, close nothing
                data = source.recv(65536)
                self._flowing.wait()  # what came just as the partition began (an end too) waits for the heal
                if not data or self._closed.is_set():
                    return
                sink.sendall(data)
        except OSError:
            return
        finally:
            for each in (source, sink):
                with contextlib.suppress(OSError):
                    each.shutdown(socket.SHUT_RDWR)
