"""axe-core in a Playwright page (``axe.min.js`` as shipped by the ``axe-playwright-python`` package)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# JupyterLab's <body> is 0 px high with overflow hidden: axe then takes the notebook for off-screen and skips
# color-contrast. A full-height body changes nothing on screen.
_RUN = """async (selector) => {
  document.body.style.height = '100vh';
  const nodes = Array.from(window.jupyterapp.shell.currentWidget.node.querySelectorAll(selector));
  if (nodes.length === 0) return ['nothing matches ' + selector];
  const result = await axe.run({include: nodes}, {resultTypes: ['violations']});
  return result.violations.map((v) => v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
    v.nodes.map((n) => n.target.join(' ') + ' [' + n.failureSummary.replace(/\\s+/g, ' ') + ']').join('; '));
}"""


def script_path() -> Path:
    import axe_playwright_python

    return Path(axe_playwright_python.__file__).with_name("axe.min.js")


def violations(page: Any, selector: str) -> list[str]:
    """axe-core's violations inside the current notebook's elements matching `selector`, one line each."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(script_path()))
    return list(page.evaluate(_RUN, selector))
