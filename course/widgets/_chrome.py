"""The widgets in the browser: their chrome (a style sheet and a tiny script), focus and display bundle.

The widget's text has the notebook's size and a clearly visible focus ring (`CHROME`, a style sheet and a tiny
script in a hidden child). The script marks the widget's root and every control in it with
``data-lm-suppress-shortcuts`` (keys pressed in the quiz belong to it, not to JupyterLab's notebook shortcuts;
Lumino looks at the focused element first), names each option button with its text and each slider with its
description, groups the rating radio buttons, makes the status line (`STATUS_CLASS`, visually hidden) a
polite live region that says what just happened, moves the focus to the summary at the end
(`SUMMARY_CLASS`), and says what to do when a click gets no answer from the kernel (`STALE_TEXT`: it was
restarted or stopped, run the cell again).
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as widgets

__all__ = [
    "CHROME",
    "OPTION_CLASS",
    "ROOT_CLASS",
    "STALE_AFTER_MS",
    "STALE_CLASS",
    "STALE_TEXT",
    "STATUS_CLASS",
    "SUMMARY_CLASS",
    "focus",
    "view_bundle",
]

# The CSS classes the chrome's style sheet and script look for.
ROOT_CLASS = "course-widget"
OPTION_CLASS = "course-option"  # an option button: the script names it with its tooltip (the option's text)
STATUS_CLASS = "course-status"  # the live region (visually hidden)
SUMMARY_CLASS = "course-summary"  # the summary at the end, focused when it appears
STALE_CLASS = "course-stale"  # where the script says that the kernel does not answer
STALE_TEXT = (
    "Nothing happened? This widget is not connected to a running kernel any more (it was restarted or "
    "stopped). Run this cell again (Shift+Enter) to start it again."
)
STALE_AFTER_MS = 4000
_STYLE = f"""<style>
.{ROOT_CLASS} {{ --jp-widgets-font-size: var(--jp-content-font-size1, 14px);
  font-size: var(--jp-content-font-size1, 14px); }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content, .{ROOT_CLASS} .widget-label,
.{ROOT_CLASS} .widget-radio-box label, .{ROOT_CLASS} .jupyter-button, .{ROOT_CLASS} input {{
  font-size: var(--jp-content-font-size1, 14px); }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content {{ line-height: 1.5; }}
.{ROOT_CLASS} button:focus-visible, .{ROOT_CLASS} input:focus-visible,
.{ROOT_CLASS} [tabindex]:focus-visible {{
  outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 2px !important; }}
.{STATUS_CLASS} {{ position: absolute !important; width: 1px !important; height: 1px !important;
  margin: -1px !important; padding: 0 !important; overflow: hidden !important; clip: rect(0 0 0 0) !important;
  white-space: nowrap !important; border: 0 !important; }}
.{STALE_CLASS}:empty {{ display: none; }}
.{STALE_CLASS} {{ margin: 0.5em 0; padding: 0.5em; border-left: 4px solid var(--jp-warn-color1, #f57c00); }}
</style>"""
# Runs once, when the hidden chrome child is rendered (an image that fails to load: script tags set through
# innerHTML do not run). `this` is the image; everything it touches is inside the widget's root.
_SCRIPT = f"""(function (img) {{
var root = img.closest('.{ROOT_CLASS}');
if (!root || root.hasAttribute('data-lm-suppress-shortcuts')) return;
root.setAttribute('data-lm-suppress-shortcuts', 'true');
var stale = document.createElement('div');
stale.className = '{STALE_CLASS}';
stale.setAttribute('role', 'alert');
root.appendChild(stale);
var timer = null;
function tidy() {{
  root.querySelectorAll('button, input, select, textarea, [tabindex]').forEach(function (el) {{
    if (!el.hasAttribute('data-lm-suppress-shortcuts')) el.setAttribute('data-lm-suppress-shortcuts', 'true');
  }});
  root.querySelectorAll('.widget-radio-box').forEach(function (box) {{
    var group = box.querySelector('input[name]');
    var name = group ? group.name : 'course-radio-' + Math.random().toString(36).slice(2);
    box.querySelectorAll('input[type=radio]:not([name])').forEach(function (r) {{ r.name = name; }});
  }});
  root.querySelectorAll('.widget-slider').forEach(function (s) {{
    var label = s.querySelector('.widget-label'), handle = s.querySelector('[role=slider]');
    var name = label && label.textContent.trim();
    if (handle && name && handle.getAttribute('aria-label') !== name) handle.setAttribute('aria-label', name);
  }});
  root.querySelectorAll('button.{OPTION_CLASS}[title]').forEach(function (b) {{
    if (b.getAttribute('aria-label') !== b.title) b.setAttribute('aria-label', b.title);
  }});
  root.querySelectorAll('.{STATUS_CLASS}:not([role])').forEach(function (s) {{
    s.setAttribute('role', 'status'); s.setAttribute('aria-live', 'polite');
    s.setAttribute('aria-atomic', 'true');
  }});
  root.querySelectorAll('[data-seen]:not(.{SUMMARY_CLASS})').forEach(function (el) {{
    el.removeAttribute('data-seen');
  }});
  var summary = root.querySelector('.{SUMMARY_CLASS}:not([data-seen])');
  if (summary) {{
    summary.setAttribute('data-seen', '');
    summary.setAttribute('tabindex', '-1');
    var now = document.activeElement;
    if (!now || now === document.body || root.contains(now)) summary.focus();
  }}
}}
new MutationObserver(function (records) {{
  if (records.some(function (r) {{ return !stale.contains(r.target) && r.type !== 'attributes'; }})) {{
    clearTimeout(timer); timer = null; stale.textContent = '';
  }}
  tidy();
}}).observe(root, {{subtree: true, childList: true, characterData: true, attributes: true,
  attributeFilter: ['title', 'class']}});
function waiting(event) {{
  var t = event.target;
  var act = event.type === 'click' ? t.closest && t.closest('button') :
    (event.key === 'Enter' && t.tagName === 'INPUT' && t.type === 'text' ? t : null);
  if (!act || act.disabled || timer !== null) return;
  timer = setTimeout(function () {{
    timer = null; stale.textContent = {json.dumps(STALE_TEXT)};
  }}, {STALE_AFTER_MS});
}}
root.addEventListener('click', waiting, true);
root.addEventListener('keydown', waiting, true);
tidy();
}})(this)"""
CHROME = f'{_STYLE}<img alt="" hidden src="data:," onerror="{html.escape(_SCRIPT)}">'


def focus(widget: widgets.Widget | None) -> None:
    """Move the keyboard focus to `widget` (ipywidgets 8; 7.7 has no focus and keeps it where it was)."""
    method = getattr(widget, "focus", None)
    if callable(method):
        method()


def view_bundle(root: widgets.Widget, text: str) -> dict[str, Any]:
    """A display bundle: the live widget view, and `text` as the stable plain-text form nbval compares."""
    return {
        "text/plain": text,
        "application/vnd.jupyter.widget-view+json": {
            "version_major": 2,
            "version_minor": 0,
            "model_id": root.model_id,
        },
    }
