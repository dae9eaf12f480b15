"""A throw-away PostgreSQL cluster for the tests: ``initdb`` in a temporary folder, listening on a unix socket
in that folder (and, with ``tcp=True``, on 127.0.0.1 at a free port: `tcp_url`), password (scram-sha-256)
authentication for every role.

Debian's PostgreSQL (``apt-get install postgresql``: /usr/lib/postgresql/<version>/bin) or any ``initdb`` on
PATH. PostgreSQL refuses to run as root: as root the cluster is run as the ``postgres`` user (``runuser``),
in a folder it owns. Without the binaries the tests that need a server are skipped, except on CI (``CI``
set), where they fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import pytest

ADMIN = "course_admin_test"  # the superuser the cluster is created with
ADMIN_PASSWORD = "admin-secret"
PORT = 5432  # the socket's name only, unless the cluster listens on TCP (then its free port)
ADVICE = (
    "PostgreSQL not found: install it with `apt-get install postgresql` (Debian) to run the PostgreSQL store "
    "tests"
)


def learner_password(name: str) -> str:
    """Every test role's password, derived from its name."""
    return f"pw-{name}"


def find_binaries() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    found = shutil.which("initdb")
    if found is not None:
        folder = Path(os.path.realpath(found)).parent
        if (folder / "pg_ctl").exists() and (folder / "postgres").exists():
            return folder
        # Debian's /usr/bin/initdb is a wrapper; the real ones are under /usr/lib/postgresql
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parent.parent.name)
    return versions[-1].parent if versions else None


def require_postgres(environ: Mapping[str, str] = os.environ) -> Path:
    """The binaries' folder; a skip (a failure on CI) without them."""
    folder = find_binaries()
    if folder is None:
        if environ.get("CI"):
            pytest.fail(ADVICE)
        pytest.skip(ADVICE)
    return folder


class PostgresServer:
    """One cluster: ``start()``, ``stop()``, ``remove()``; URLs for the admin and for any role."""

    def __init__(self, binaries: Path, *, tcp: bool = False) -> None:
        self.binaries = binaries
        self.tcp = tcp
        self.port = free_port() if tcp else PORT
        self.as_root = os.geteuid() == 0
        self.folder = Path(tempfile.mkdtemp(prefix="course-pg-"))
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self._databases = 0
        try:
            self._create()
        except BaseException:
            self.remove()
            raise

    def _create(self) -> None:
        if self.as_root:
            shutil.chown(self.folder, "postgres", "postgres")
        password_file = self.folder / "admin-password"
        password_file.write_text(ADMIN_PASSWORD + "\n", encoding="utf-8")
        if self.as_root:
            shutil.chown(password_file, "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            ADMIN,
            "--auth=scram-sha-256",
            f"--pwfile={password_file}",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
        )
        password_file.unlink()
        settings = {
            "listen_addresses": "'127.0.0.1'" if self.tcp else "''",
            "unix_socket_directories": f"'{self.folder}'",
            "port": str(self.port),
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "max_connections": "100",
        }
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.writelines(f"{name} = {value}\n" for name, value in settings.items())
        hba = "local all all scram-sha-256\n" + (
            "host all all 127.0.0.1/32 scram-sha-256\n" if self.tcp else ""
        )
        (self.data / "pg_hba.conf").write_text(hba, encoding="utf-8")

    def _run(self, program: str, *arguments: str) -> None:
        command = [str(self.binaries / program), *arguments]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self.folder)
        if result.returncode != 0:
            log = self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}{log}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-m", "fast", "stop")

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, user: str, password: str | None, database: str = "postgres") -> str:
        secret = "" if password is None else ":" + quote(password, safe="")
        return (
            f"postgresql://{quote(user, safe='')}{secret}@/{quote(database, safe='')}"
            f"?host={quote(str(self.folder), safe='')}&port={self.port}"
        )

    def tcp_url(self, user: str, password: str | None, database: str, port: int | None = None) -> str:
        """A URL over TCP to 127.0.0.1 at `port` (default: the cluster's own; a proxy's, say)."""
        if not self.tcp:
            raise RuntimeError("this cluster listens on its unix socket only: PostgresServer(..., tcp=True)")
        secret = "" if password is None else ":" + quote(password, safe="")
        return (
            f"postgresql://{quote(user, safe='')}{secret}@127.0.0.1:{port or self.port}/"
            f"{quote(database, safe='')}"
        )

    def admin_url(self, database: str = "postgres") -> str:
        return self.url(ADMIN, ADMIN_PASSWORD, database)

    def learner_url(self, database: str, name: str) -> str:
        return self.url(name, learner_password(name), database)

    def create_database(self, name: str | None = None) -> str:
        """A new empty database (its name made up when not given)."""
        import psycopg
        from psycopg import sql

        if name is None:
            self._databases += 1
            name = f"test_{os.getpid()}_{self._databases}"
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return name

    def ensure_role(self, name: str) -> None:
        """A login role ``name`` with its test password, unless it exists: a learner of the course (in
        ``course_learner``, made as ``install`` makes it when missing), so that ``add_learner`` takes it as
        one of its own, as it takes no other role."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            group = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = 'course_learner'").fetchone()
            if group is None:
                connection.execute("CREATE ROLE course_learner NOLOGIN NOINHERIT")
            if connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone() is None:
                connection.execute(
                    sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE course_learner").format(
                        sql.Identifier(name), sql.Literal(learner_password(name))
                    )
                )

    def has_database(self, name: str) -> bool:
        import psycopg

        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            return (
                connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
                is not None
            )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def database_for(location: Path) -> str:
    """A database name for a test's folder (the contract tests name stores by path)."""
    return "db_" + hashlib.sha1(str(location.parent).encode()).hexdigest()[:16]


def learner_for(location: Path) -> str:
    """A learner (a role) for a store's file name: two names in one folder are two learners of one class."""
    return "learner_" + "".join(c if c.isalnum() else "_" for c in location.stem.lower())
