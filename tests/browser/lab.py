"""A throw-away JupyterLab server for browser tests.

Everything the server reads or writes lives under one temporary directory: the notebooks (a copy, since Lab
saves), Jupyter's config/data/runtime dirs, Lab's user settings and workspaces, IPython's profile and the
course's progress database (``COURSE_DB``, inherited by every kernel the server starts).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

TOKEN = "attention-course-browser-test"

# User settings that keep a pristine Lab from getting in the way: no "Select Kernel" dialog, no news
# notification, no autosave (the test's copy of the notebooks stays as it was copied).
SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/notebook-extension/tracker": {"autoStartDefaultKernel": True},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_settings(settings_dir: Path) -> None:
    for plugin, values in SETTINGS.items():
        path = settings_dir / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=2), encoding="utf-8")


class JupyterLab:
    """``spawn()``, ``wait_ready()`` ... ``stop()``; ``home`` is a scratch directory for everything else."""

    def __init__(self, root_dir: Path, home: Path, *, extra_env: dict[str, str] | None = None) -> None:
        self.root_dir = root_dir
        self.home = home
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = home / "jupyterlab.log"
        self.env = self._environment(extra_env or {})
        self.process: subprocess.Popen[bytes] | None = None

    def _environment(self, extra: dict[str, str]) -> dict[str, str]:
        env = dict(os.environ)
        dirs = {
            "JUPYTER_CONFIG_DIR": "jupyter-config",
            "JUPYTER_DATA_DIR": "jupyter-data",
            "JUPYTER_RUNTIME_DIR": "jupyter-runtime",
            "JUPYTERLAB_SETTINGS_DIR": "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": "lab-workspaces",
            "IPYTHONDIR": "ipython",
        }
        for var, name in dirs.items():
            path = self.home / name
            path.mkdir(parents=True, exist_ok=True)
            env[var] = str(path)
        write_settings(Path(env["JUPYTERLAB_SETTINGS_DIR"]))
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_PREFER_ENV_PATH", None)
        env.update(extra)
        return env

    def command(self) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--IdentityProvider.token={TOKEN}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-root")
        return cmd

    def spawn(self) -> None:
        """Start the server process; `wait_ready` waits for it to answer."""
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=self.root_dir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a hung server can be killed as a whole
            )

    def wait_ready(self, timeout: float = 30.0) -> None:
        assert self.process is not None, "spawn() first"
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("GET", "/api/status")
                return
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    message = f"JupyterLab did not answer in {timeout:.0f} s:\n{self.log_tail()}"
                    raise RuntimeError(message) from None
                time.sleep(0.1)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={TOKEN}"

    def api(self, method: str, path: str, timeout: float = 5.0) -> Any:
        request = urllib.request.Request(
            f"{self.base_url}{path}", method=method, headers={"Authorization": f"token {TOKEN}"}
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
        return json.loads(body) if body else None

    def delete_sessions(self) -> None:
        """Shut down every kernel session: kernels outlive the browser page."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}", timeout=10.0)

    def stop(self, timeout: float = 10.0) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.terminate()  # the server shuts its kernels down on SIGTERM
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout)
            # Kernels run in sessions of their own, so killing the server's group leaves them: find them by
            # the sandboxed runtime dir in their environment (Linux only; elsewhere this finds nothing).
            for pid in self._sandboxed_pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def _sandboxed_pids(self) -> list[int]:
        marker = f"JUPYTER_RUNTIME_DIR={self.env['JUPYTER_RUNTIME_DIR']}".encode()
        pids = []
        for environ in Path("/proc").glob("[0-9]*/environ"):
            with contextlib.suppress(OSError):
                if marker in environ.read_bytes().split(b"\0"):
                    pids.append(int(environ.parent.name))
        return [pid for pid in pids if pid != os.getpid()]
