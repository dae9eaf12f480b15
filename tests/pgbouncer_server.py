"""A throw-away PgBouncer in front of a test cluster, configured as docs/classroom.md advises: transaction
pooling, one server connection per learner's pool, idle server connections closed quickly (here after
``server_idle_timeout = 1`` s, so that a test sees one closed between two answers).

Debian's ``pgbouncer`` (``apt-get install pgbouncer``: /usr/sbin/pgbouncer) or one on PATH. It listens on
127.0.0.1 at a free port (and a unix socket in its folder). Learners authenticate as they do with the server
itself (SCRAM): PgBouncer looks each role's verifier up in the cluster (``auth_query``, as the cluster's
superuser, whose password is its ``auth_file``'s one line) and logs in to the cluster with the keys the
client's SCRAM exchange gave it. Like the server, it refuses to run as root: as root it is run as the
``postgres`` user. Without the binary the tests that need it are skipped, except on CI, where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import pytest
from postgres_server import ADMIN, ADMIN_PASSWORD, PostgresServer, free_port, learner_password

IDLE_TIMEOUT_S = 1  # server_idle_timeout: a server connection idle this long is closed
ADVICE = "PgBouncer not found: install it with `apt-get install pgbouncer` (Debian) to run the pooler tests"


def require_pgbouncer(environ: Mapping[str, str] = os.environ) -> Path:
    """The pgbouncer binary; a skip (a failure on CI) without it."""
    found = shutil.which("pgbouncer") or next(
        (path for path in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(path, os.X_OK)), None
    )
    if found is None:
        if environ.get("CI"):
            pytest.fail(ADVICE)
        pytest.skip(ADVICE)
    return Path(found)


class PgBouncer:
    """One pooler in front of `server`: ``start()``, ``stop()``; URLs for any role, as the server's."""

    def __init__(self, server: PostgresServer, binary: Path) -> None:
        self.server = server
        self.binary = binary
        self.as_root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="course-pgbouncer-"))
        self.port = free_port()
        self.log = self.folder / "pgbouncer.log"
        self._process: subprocess.Popen[bytes] | None = None
        userlist = self.folder / "userlist.txt"
        userlist.write_text(f'"{ADMIN}" "{ADMIN_PASSWORD}"\n', encoding="utf-8")
        settings = {
            "listen_addr": "127.0.0.1",
            "listen_port": str(self.port),
            "unix_socket_dir": str(self.folder),
            "auth_type": "scram-sha-256",
            "auth_file": str(userlist),
            "auth_user": ADMIN,
            "auth_query": "SELECT usename, passwd FROM pg_catalog.pg_shadow WHERE usename = $1",
            "pool_mode": "transaction",
            "default_pool_size": "1",
            "max_db_connections": "50",
            "max_client_conn": "500",
            "server_idle_timeout": str(IDLE_TIMEOUT_S),
            "logfile": str(self.log),
            "pidfile": str(self.folder / "pgbouncer.pid"),
        }
        self.ini = self.folder / "pgbouncer.ini"
        self.ini.write_text(
            f"[databases]\n* = host={server.folder} port={server.port}\n\n[pgbouncer]\n"
            + "".join(f"{name} = {value}\n" for name, value in settings.items()),
            encoding="utf-8",
        )
        if self.as_root:
            for path in (self.folder, userlist, self.ini):
                shutil.chown(path, "postgres", "postgres")

    def start(self) -> None:
        command = [str(self.binary), str(self.ini)]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    log = self.log.read_text(errors="replace") if self.log.exists() else ""
                    raise RuntimeError(f"pgbouncer did not start:\n{log}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=30)
        self._process = None

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, user: str, password: str | None, database: str) -> str:
        """A URL through the pooler, over TCP."""
        secret = "" if password is None else ":" + quote(password, safe="")
        return f"postgresql://{quote(user, safe='')}{secret}@127.0.0.1:{self.port}/{quote(database, safe='')}"

    def learner_url(self, database: str, name: str) -> str:
        return self.url(name, learner_password(name), database)
