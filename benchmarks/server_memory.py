"""What one learner's JupyterHub server needs: each lesson's kernel run top to bottom, its peak memory and the
CPU it used, and the Jupyter server's own memory at rest.

Usage: python benchmarks/server_memory.py [NOTEBOOK ...]   (default: every lesson of notebooks/)

Each lesson runs in a fresh kernel as a learner's would (Run All; torch and numpy with their default threads;
a throw-away progress file); a cell appended at its end reads the kernel's own peak resident memory
(``VmHWM``, Linux) and CPU time (user and system, ``resource.getrusage``). It prints, per lesson, the peak in
MB, the CPU seconds, the wall seconds and their ratio (the cores it kept busy on average), then the largest
peak, and the memory of a Jupyter server started with no kernel (``VmRSS`` after it answers). A server's
memory limit is then the server's memory plus the largest kernel's, plus one more kernel for a learner who
opens a second lesson without closing the first (docs/classroom.md, "Sizing the learners' servers").
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
MEASURE = """import json, resource
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
usage = resource.getrusage(resource.RUSAGE_SELF)
found = {"peak_kb": int(status["VmHWM"].split()[0]), "cpu_s": usage.ru_utime + usage.ru_stime}
print("MEASURED " + json.dumps(found))
"""


def measure(path: Path) -> tuple[float, float, float]:
    """The lesson's kernel: its peak memory (MB), CPU seconds and wall seconds."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(MEASURE))
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "COURSE_DB": str(Path(scratch) / "progress.sqlite3")}
        started = time.monotonic()
        client = NotebookClient(
            nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
        )
        client.execute(env=env)
        wall = time.monotonic() - started
    text = "".join(output.get("text", "") for output in nb.cells[-1].outputs)
    found = json.loads(text.split("MEASURED ", 1)[1])
    return found["peak_kb"] / 1024, found["cpu_s"], wall


def server_rss_mb() -> float:
    """A Jupyter server with JupyterLab and no kernel: its resident memory once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as home:
        command = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
            "--IdentityProvider.token=", f"--ServerApp.root_dir={home}", "--allow-root",
        ]  # fmt: skip
        env = {**os.environ, "JUPYTER_CONFIG_DIR": home, "JUPYTER_RUNTIME_DIR": home}
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=2).read()
                    break
                except OSError:
                    time.sleep(0.5)
            time.sleep(2)
            status = Path(f"/proc/{server.pid}/status").read_text()
            rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
            return int(rss.split()[1]) / 1024
        finally:
            server.terminate()
            server.wait(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((REPO / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    print(f"{'lesson':40} {'peak MB':>8} {'CPU s':>7} {'wall s':>7} {'cores':>6}")
    peaks = []
    for path in paths:
        peak, cpu, wall = measure(path)
        peaks.append(peak)
        print(f"{path.stem:40} {peak:8.0f} {cpu:7.1f} {wall:7.1f} {cpu / wall:6.2f}", flush=True)
    server = server_rss_mb()
    print(f"the largest kernel: {max(peaks):.0f} MB; JupyterLab's server, no kernel: {server:.0f} MB")
    print(f"a server with two of the largest kernels open: {server + 2 * max(peaks):.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
