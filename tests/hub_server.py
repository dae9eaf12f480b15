"""A throw-away JupyterHub for the tests: everything under one temporary folder.

The hub listens on 127.0.0.1 only (the proxy's public port, the hub's own port and the proxy's API port are
free ports picked here); its sqlite database, cookie secret, proxy pid file and log are in the folder. Users
log in with one shared test password (``SharedPasswordAuthenticator``: what JupyterHub 5.3 deprecated
``DummyAuthenticator.password`` for), only the users named. Their servers are this virtual environment's
``jupyterhub-singleuser`` run by ``SimpleLocalProcessSpawner`` as the hub's own user (``--allow-root`` as
root), each with its home, Jupyter's and IPython's folders and Lab's settings under the folder, JupyterLab on
(``/lab``, the app exposed as ``window.jupyterapp``), and whatever environment the test gives that user (a
``pre_spawn_hook``: e.g. ``COURSE_DB``, their own class-database URL).

Needs the ``jupyterhub`` package (requirements-test.txt) and ``configurable-http-proxy`` from npm: on PATH or
in ``.ci/proxy`` (``npm install --prefix .ci/proxy configurable-http-proxy@<version>``, as ``.ci/run`` does
on CI). Without them the hub's tests are skipped, except on CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import nbformat
import pytest
from browser.lab import free_port, write_settings

REPO = Path(__file__).resolve().parents[1]
PROXY_FOLDER = REPO / ".ci" / "proxy"  # where .ci/run installs configurable-http-proxy from npm
PASSWORD = "hub-test-password"  # every user's, at the hub's login form (8 characters at least)
MARKER = "COURSE_HUB_TEST"  # in the environment of the hub, its proxy, the users' servers and their kernels

HUB_ADVICE = "JupyterHub not found: `pip install -r requirements-test.txt` to run the hub test"
PROXY_ADVICE = (
    "configurable-http-proxy not found: `npm install --prefix .ci/proxy configurable-http-proxy` "
    "(needs node: `apt-get install nodejs npm` on Debian) to run the hub test"
)

# Lab as the browser tests run it: the app in `window.jupyterapp`, no update check.
SERVER_CONFIG = {
    "LabApp": {"expose_app_in_browser": True, "check_for_updates_class": "jupyterlab.NeverCheckForUpdate"}
}

CONFIG = """\
# Written by tests/hub_server.py for one test run.
import json
from pathlib import Path

FOLDER = Path({folder!r})
USERS = json.loads((FOLDER / "users.json").read_text(encoding="utf-8"))

c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.JupyterHub.db_url = "sqlite:///" + str(FOLDER / "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = str(FOLDER / "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.pid_file = str(FOLDER / "proxy.pid")
c.ConfigurableHTTPProxy.should_start = True

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = {password!r}
c.Authenticator.allowed_users = set(USERS)

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(FOLDER / "home" / "{{username}}")
c.Spawner.cmd = [{singleuser!r}]
c.Spawner.args = {args!r}
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120


def pre_spawn_hook(spawner):
    home = FOLDER / "home" / spawner.user.name
    spawner.environment = {{
        "{marker}": str(FOLDER),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter-config"),
        "JUPYTER_DATA_DIR": str(home / ".jupyter-data"),
        "JUPYTER_RUNTIME_DIR": str(home / ".jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / ".lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / ".lab-workspaces"),
        "IPYTHONDIR": str(home / ".ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        **USERS[spawner.user.name],
    }}


c.Spawner.pre_spawn_hook = pre_spawn_hook
"""


def proxy_command() -> str | None:
    """configurable-http-proxy: on PATH, else the one .ci/run installs into .ci/proxy."""
    found = shutil.which("configurable-http-proxy")
    if found is not None:
        return found
    local = PROXY_FOLDER / "node_modules" / ".bin" / "configurable-http-proxy"
    return str(local) if local.exists() and shutil.which("node") is not None else None


def missing() -> str | None:
    """Why a hub cannot run here, or None when it can."""
    if importlib.util.find_spec("jupyterhub") is None:
        return HUB_ADVICE
    if proxy_command() is None:
        return PROXY_ADVICE
    return None


def require_hub(environ: Mapping[str, str] = os.environ) -> None:
    """A skip (a failure on CI) without JupyterHub or its proxy."""
    reason = missing()
    if reason is None:
        return
    if environ.get("CI"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def write_notebook(path: Path, *sources: str) -> None:
    """A notebook of code cells `sources`, no outputs."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


class HubServer:
    """``start()`` ... ``stop()``. `users`: each user's name and the environment their server gets on top;
    `extra_config`: lines added to the hub's config (a hub-managed service, roles).

    ``home(user)`` is their home folder (their server's root: put their notebooks there before they log in).
    """

    def __init__(self, folder: Path, users: Mapping[str, Mapping[str, str]], extra_config: str = "") -> None:
        proxy = proxy_command()
        assert proxy is not None, "require_hub() first"
        self.folder = folder
        self.users = {name: dict(env) for name, env in users.items()}
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.config_path = folder / "jupyterhub_config.py"
        self.log_path = folder / "hub.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.stray: list[int] = []  # what `stop` had to kill
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "users.json").write_text(json.dumps(self.users, indent=2), encoding="utf-8")
        for name in self.users:
            self._prepare_home(self.home(name))
        self.config_path.write_text(self._config(proxy) + extra_config, encoding="utf-8")

    def set_environment(self, user: str, name: str, value: str) -> None:
        """Give `user`'s server `name` = `value` too (before the hub starts it)."""
        self.users[user][name] = value
        (self.folder / "users.json").write_text(json.dumps(self.users, indent=2), encoding="utf-8")

    def home(self, user: str) -> Path:
        return self.folder / "home" / user

    @staticmethod
    def _prepare_home(home: Path) -> None:
        write_settings(home / ".lab-settings")  # no news, no autosave, the kernel started at once
        config = home / ".jupyter-config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "jupyter_server_config.json").write_text(json.dumps(SERVER_CONFIG, indent=2), "utf-8")

    def _config(self, proxy: str) -> str:
        bin_dir = Path(sys.executable).parent  # this virtual environment's, not resolved out of it
        args = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
        return CONFIG.format(
            folder=str(self.folder),
            port=self.port,
            hub_port=free_port(),
            api_port=free_port(),
            proxy=proxy,
            password=PASSWORD,
            singleuser=str(bin_dir / "jupyterhub-singleuser"),
            args=args,
            marker=MARKER,
        )

    def start(self) -> None:
        """Start the hub (it starts the proxy); `wait_ready` waits for it to answer."""
        env = dict(os.environ)
        env[MARKER] = str(self.folder)
        env["CONFIGPROXY_AUTH_TOKEN"] = secrets.token_hex(16)
        proxy_bin = str(Path(proxy_command() or "").parent)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", ""), proxy_bin])
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(self.config_path)],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a process group with the proxy (the users' servers: not in it)
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until ``/hub/health`` answers through the proxy."""
        assert self.process is not None, "start() first"
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterHub exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/hub/health", timeout=5) as response:
                    if response.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterHub did not answer in {timeout:.0f} s:\n{self.log_tail()}")
            time.sleep(0.2)

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def stop(self, timeout: float = 30.0, grace: float = 10.0) -> None:
        """Stop the hub: on SIGTERM it stops the users' servers and the proxy, and their kernels follow. What
        is still alive `grace` seconds later (found by `MARKER` in its environment) is killed, and kept in
        ``stray``."""
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
        if process is not None:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout)
        # The users' kernels notice their server is gone within a second or two.
        deadline = time.monotonic() + grace
        while self.left_over_pids() and time.monotonic() < deadline:
            time.sleep(0.2)
        self.stray = self.left_over_pids()
        for pid in self.stray:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def left_over_pids(self) -> list[int]:
        """Processes started for this hub still alive: the hub, proxy, servers and kernels (Linux only)."""
        marker = f"{MARKER}={self.folder}".encode()
        pids = []
        for environ in Path("/proc").glob("[0-9]*/environ"):
            with contextlib.suppress(OSError):
                if marker in environ.read_bytes().split(b"\0"):
                    pids.append(int(environ.parent.name))
        return [pid for pid in pids if pid != os.getpid()]
