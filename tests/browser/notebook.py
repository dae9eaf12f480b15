"""Drive the notebook open in JupyterLab through ``window.jupyterapp`` (needs ``expose_app_in_browser``)."""

from __future__ import annotations

import re
from typing import Any

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# The current widget is the notebook at `path`, loaded, and its kernel is connected and idle.
_KERNEL_IDLE = """(path) => {
  const app = window.jupyterapp;
  const panel = app && app.shell && app.shell.currentWidget;
  if (!panel || !panel.context || panel.context.path !== path || !panel.context.isReady) return false;
  const session = panel.sessionContext && panel.sessionContext.session;
  const kernel = session && session.kernel;
  return !!kernel && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""

# Text of every error output in the current notebook, from the model (not the DOM).
_ERRORS = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const errors = [];
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    for (const output of cell.model.outputs.toJSON()) {
      if (output.output_type === 'error') {
        errors.push(output.ename + ': ' + output.evalue + '\\n' + (output.traceback || []).join('\\n'));
      }
    }
  }
  return errors;
}"""

# How many outputs the current notebook's code cells hold, from the model.
OUTPUT_COUNT = """() => {
  const panel = window.jupyterapp.shell.currentWidget;
  return panel.content.widgets
    .filter((cell) => cell.model.type === 'code')
    .reduce((total, cell) => total + cell.model.outputs.length, 0);
}"""

# Fired, not awaited: awaiting commands.execute inside page.evaluate can hang.
_RUN_ALL = """() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"""

# Run code in the notebook's kernel, outside any cell; resolves to its stdout (and error, if any).
_KERNEL_EXEC = """async (code) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const future = kernel.requestExecute({code: code, silent: false, store_history: false});
  let out = '';
  future.onIOPub = (msg) => {
    if (msg.header.msg_type === 'stream') out += msg.content.text;
    if (msg.header.msg_type === 'error') out += msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return out;
}"""

# An element matching `selector` (and containing `text`) is in the notebook, or some cell has an error output.
_OUTPUT_OR_ERROR = """([selector, text, errorsFn]) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const nodes = Array.from(panel.node.querySelectorAll(selector));
  return nodes.some((node) => node.textContent.includes(text)) || eval(errorsFn)().length > 0;
}"""


def wait_kernel_idle(page: Any, path: str, timeout_ms: float = 30_000) -> None:
    page.wait_for_function(_KERNEL_IDLE, arg=path, timeout=timeout_ms, polling=100)


def run_all(page: Any) -> None:
    page.evaluate(_RUN_ALL)


# No code cell of the current notebook is queued or running (JupyterLab marks each with the prompt `*`).
_ALL_RUN = """() => [...window.jupyterapp.shell.currentWidget.content.widgets]
  .every((cell) => cell.model.type !== 'code' || !(cell.promptNode?.textContent || '').includes('*'))"""


def wait_all_run(page: Any, timeout_ms: float = 60_000) -> None:
    """Wait until every cell that `run_all` queued has run: until then a widget's callback waits its turn."""
    page.wait_for_function(_ALL_RUN, timeout=timeout_ms, polling=200)


def errors(page: Any) -> list[str]:
    return [_ANSI.sub("", text) for text in page.evaluate(_ERRORS)]


def kernel_exec(page: Any, code: str) -> str:
    return str(page.evaluate(_KERNEL_EXEC, code))


def wait_for_text(page: Any, selector: str, text: str = "", timeout_ms: float = 30_000) -> None:
    """Wait until an element matching `selector` and containing `text` shows up in the notebook.

    Fails at once, with the traceback, if a cell raised instead.
    """
    page.wait_for_function(_OUTPUT_OR_ERROR, arg=[selector, text, _ERRORS], timeout=timeout_ms, polling=100)
    found = errors(page)
    if found:
        raise AssertionError("a notebook cell raised:\n" + "\n\n".join(found))


# Every element matching `selector` in the notebook is typeset: no raw `$` delimiters left in its text.
_MATH_TYPESET = """(selector) => {
  const nodes = window.jupyterapp.shell.currentWidget.node.querySelectorAll(selector);
  return nodes.length > 0 && Array.from(nodes).every((node) => !node.textContent.includes('$'));
}"""


def wait_math_typeset(page: Any, selector: str, timeout_ms: float = 10_000) -> None:
    page.wait_for_function(_MATH_TYPESET, arg=selector, timeout=timeout_ms, polling=100)


# Shut down the current notebook's kernel the way Lab's "Kernel → Shut Down Kernel" does, minus its dialog.
# Fired, not awaited (see _RUN_ALL).
_SHUTDOWN_KERNEL = (
    """() => { window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); return true; }"""
)

# Open a document in a new tab, as double-clicking it in the file browser does. Fired, not awaited.
_OPEN = """(path) => { window.jupyterapp.commands.execute('docmanager:open', {path: path}); return true; }"""


def shut_down_kernel(page: Any) -> None:
    page.evaluate(_SHUTDOWN_KERNEL)


def open_document(page: Any, path: str) -> None:
    page.evaluate(_OPEN, path)


def current_panel(page: Any) -> Any:
    """A locator for the current notebook's panel: other open notebooks stay in the DOM, hidden."""
    panel_id = page.evaluate("() => window.jupyterapp.shell.currentWidget.id")
    return page.locator(f"[id='{panel_id}']")
