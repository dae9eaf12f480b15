"""Find the system Chromium and launch it headless through Playwright (no browser download needed)."""

from __future__ import annotations

import os
import shutil
from typing import Any

ADVICE = "Chromium not found: install it with `apt-get install chromium` (Debian) to run the browser test"
PLAYWRIGHT_ADVICE = (
    "The playwright Python package is not installed: `pip install -r requirements-test.txt` "
    "(no `playwright install` needed; the test uses the system Chromium) to run the browser test"
)

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def missing() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    if shutil.which("chromium") is None:
        return ADVICE
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return PLAYWRIGHT_ADVICE
    return None


def must_fail(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """On CI (``CI`` set to anything non-empty) a missing browser is an error, not a skip."""
    return bool(environ.get("CI"))


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=ARGS)
