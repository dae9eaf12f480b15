"""The widgets in the browser: their chrome (a style sheet and a tiny script), focus and display bundle.

The widget's text has the notebook's size and a clearly visible focus ring (`CHROME`, a style sheet and a tiny
script in a hidden child). The script marks the widget's root and every control in it with
``data-lm-suppress-shortcuts`` (keys pressed in the quiz belong to it, not to JupyterLab's notebook shortcuts;
Lumino looks at the focused element first), names each option button with its text and each slider with its
description (and its value as shown, not the slider's inner number), says which toggle button is pressed,
groups the rating radio buttons, makes the status line (`STATUS_CLASS`, visually hidden) a polite live region
that says what just happened, moves the focus where the kernel asks (`focus_here`: the next question, the
summary), sends a typed answer with its text (`course.widgets._typed`), keeps a code box
(`course.widgets._code`) a code editor (Enter keeps the indentation, a level more after a colon; Backspace at
an indent removes a level; Tab indents, Escape then Tab or Shift+Tab leaves; it grows with its code;
Shift+Enter sends the code with its text), lets a formula wider than its column (MathJax breaks none) scroll
within it and take the focus (`WIDE_MATH_CLASS`), and says what to do when a click or a submission gets no
answer from the kernel (`STALE_TEXT`: it was restarted or stopped, run the cell again).
"""

from __future__ import annotations

import html
import itertools
import json
from typing import Any

import ipywidgets as widgets

__all__ = [
    "ANSWER_ROW_CLASS",
    "CHROME",
    "CODE_CLASS",
    "CODE_HINT_CLASS",
    "CODE_ROWS",
    "FOCUS_PREFIX",
    "LIVE_CLASS",
    "NUMBER_CLASS",
    "OPTION_CLASS",
    "ROOT_CLASS",
    "STALE_AFTER_MS",
    "STALE_CLASS",
    "STALE_TEXT",
    "STATUS_CLASS",
    "SUBMIT_CLASS",
    "SUMMARY_CLASS",
    "TYPED_CLASS",
    "WIDE_MATH_CLASS",
    "focus",
    "focus_here",
    "view_bundle",
]

# The CSS classes the chrome's style sheet and script look for.
ROOT_CLASS = "course-widget"
LIVE_CLASS = "course-live"  # a live() widget: its chosen option is pressed (aria-pressed, a ring, bold)
OPTION_CLASS = "course-option"  # an option button: the script names it with its tooltip (the option's text)
STATUS_CLASS = "course-status"  # the live region (visually hidden)
SUMMARY_CLASS = "course-summary"  # the summary at the end
FOCUS_PREFIX = "course-focus-"  # + a count: the script focuses the element once per new count (`focus_here`)
ANSWER_ROW_CLASS = "course-answer-row"  # a typed answer's row: its box, unit, button and hidden channel
NUMBER_CLASS = "course-number"  # the box a typed answer is typed in
SUBMIT_CLASS = "course-submit"  # the button that sends it
TYPED_CLASS = "course-typed"  # the hidden box the script sends "<count>:<text typed>" through
CODE_CLASS = "course-code"  # a code box (a textarea): Tab indents, Shift+Enter sends its code as JSON
CODE_HINT_CLASS = "course-code-hint"  # the keys of the code box beside it: its description
CODE_ROWS = (6, 40)  # the fewest and the most rows a code box grows to (`course.widgets._code`)
STALE_CLASS = "course-stale"  # where the script says that the kernel does not answer
WIDE_MATH_CLASS = "course-math-wide"  # a formula wider than its column: it scrolls, and takes the focus
STALE_TEXT = (
    "Nothing happened? This widget is not connected to a running kernel any more (it was restarted or "
    "stopped). Run this cell again (Shift+Enter) to start it again."
)
STALE_AFTER_MS = 4000
# Contrasts against the white page: the brand blue #1976d2 4.6:1, #616161 6.2:1, #757575 4.6:1.
_STYLE = f"""<style>
.{ROOT_CLASS} {{ --jp-widgets-font-size: var(--jp-content-font-size1, 14px);
  font-size: var(--jp-content-font-size1, 14px); max-width: 100%; }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content, .{ROOT_CLASS} .widget-label,
.{ROOT_CLASS} .widget-radio-box label, .{ROOT_CLASS} .jupyter-button, .{ROOT_CLASS} input,
.{ROOT_CLASS} select {{ font-size: var(--jp-content-font-size1, 14px); }}
.{ROOT_CLASS} .widget-html-content, .{ROOT_CLASS} .widget-htmlmath-content {{ line-height: 1.5;
  white-space: normal; overflow-wrap: break-word; }}
.{ROOT_CLASS} .widget-html, .{ROOT_CLASS} .widget-htmlmath {{ overflow: visible; height: auto;
  max-width: 100%; min-width: 0; }}
.{ROOT_CLASS} .widget-htmlmath-content {{ max-width: 100%; overflow-x: auto; }}
.{ROOT_CLASS} .widget-hbox {{ flex-wrap: wrap; max-width: 100%; }}
.{ROOT_CLASS} .widget-hbox > * {{ min-width: 0; }}
.{ROOT_CLASS} .{NUMBER_CLASS} {{ min-width: 0; max-width: 100%; }}
.{ROOT_CLASS} .{NUMBER_CLASS} input {{ min-width: 6em; }}
.{ROOT_CLASS} button:focus-visible, .{ROOT_CLASS} input:focus-visible, .{ROOT_CLASS} select:focus-visible,
.{ROOT_CLASS} [tabindex]:focus-visible {{
  outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 2px !important; }}
.{ROOT_CLASS} select, .{ROOT_CLASS} input[type=text], .{ROOT_CLASS} input[type=number],
.{ROOT_CLASS} textarea {{ border: 1px solid #757575; }}
.{ROOT_CLASS} .widget-radio {{ width: auto; max-width: 100%; flex-wrap: wrap; }}
.{ROOT_CLASS} .widget-radio-box {{ min-width: 0; }}
.{ROOT_CLASS} .widget-radio-box label {{ min-height: 24px; display: flex; align-items: center;
  padding: 2px 0; white-space: normal; }}
.{ROOT_CLASS} .widget-radio-box input[type=radio] {{ width: 18px; height: 18px; margin: 0 0.4em 0 0;
  order: -1; flex: none; }}
.{ROOT_CLASS} .noUi-target, .{ROOT_CLASS} .noUi-connects {{ background: #757575; }}
.{ROOT_CLASS} .noUi-handle {{ background: #fff !important; border: 2px solid #616161 !important; }}
.{ROOT_CLASS} .noUi-handle:focus-visible {{ border-color: var(--jp-brand-color1, #1976d2) !important; }}
.{ROOT_CLASS} .widget-toggle-button.mod-active {{ box-shadow: inset 0 0 0 2px #616161; font-weight: 600; }}
.{LIVE_CLASS} button.{OPTION_CLASS}.mod-info {{ background: #00695c; color: #fff; font-weight: 700;
  box-shadow: inset 0 0 0 3px #fff, 0 0 0 2px #00695c; }}
.{ROOT_CLASS} .{CODE_CLASS} {{ flex-direction: column; align-items: stretch; align-self: stretch;
  width: auto; max-width: 100%; min-width: 0; }}
.{ROOT_CLASS} .{CODE_CLASS} .widget-label {{ width: auto; text-align: left; font-weight: 600;
  margin-bottom: 0.25em; max-width: 100%; height: auto; line-height: 1.4; white-space: normal;
  overflow-wrap: anywhere; }}
.{ROOT_CLASS} .{CODE_CLASS} textarea {{ font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-code-font-size, 13px); line-height: 1.4; tab-size: 4; white-space: pre;
  overflow-x: auto; overflow-wrap: normal; resize: vertical; border: 1px solid #757575; padding: 0.4em;
  box-sizing: border-box; width: 100%; max-width: 100%; }}
.{ROOT_CLASS} .{CODE_CLASS} textarea:disabled {{ color: var(--jp-ui-font-color1, #212121); opacity: 1;
  background: var(--jp-layout-color2, #eee); white-space: pre-wrap; overflow-wrap: anywhere; }}
.{ROOT_CLASS} .{CODE_CLASS} textarea:focus-visible {{
  outline: 2px solid var(--jp-brand-color1, #1976d2) !important; outline-offset: 2px !important; }}
.{ROOT_CLASS} .{CODE_HINT_CLASS} .widget-html-content {{ color: var(--jp-ui-font-color2, #616161); }}
.{ROOT_CLASS} pre {{ font-family: var(--jp-code-font-family, monospace); background: var(--jp-layout-color2,
  #eee); padding: 0.5em; white-space: pre-wrap; overflow-wrap: anywhere; }}
.{STATUS_CLASS} {{ position: absolute !important; width: 1px !important; height: 1px !important;
  margin: -1px !important; padding: 0 !important; overflow: hidden !important; clip: rect(0 0 0 0) !important;
  white-space: nowrap !important; border: 0 !important; }}
.{ROOT_CLASS} mjx-container.{WIDE_MATH_CLASS} {{ max-width: 100%; overflow-x: auto; overflow-y: hidden; }}
.{ROOT_CLASS} mjx-container.{WIDE_MATH_CLASS}:not([display="true"]) {{ display: inline-block;
  vertical-align: middle; }}
.{ROOT_CLASS} mjx-container.{WIDE_MATH_CLASS}:focus-visible {{
  outline: 2px solid var(--jp-brand-color1, #1976d2); outline-offset: 1px; }}
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
function set(el, name, value) {{ if (el.getAttribute(name) !== value) el.setAttribute(name, value); }}
function fit(box) {{  // a code box: as many rows as its lines and one more, within CODE_ROWS
  var rows = Math.max({CODE_ROWS[0]}, Math.min({CODE_ROWS[1]}, box.value.split('\\n').length + 1));
  if (Number(box.getAttribute('rows')) < rows) box.setAttribute('rows', String(rows));
  box.setAttribute('data-fitted', box.getAttribute('rows'));
}}
function wide() {{  // a formula wider than its column (MathJax does not break one) scrolls within it, and
  // so that the keyboard can scroll it, takes the focus; one that fits is left as MathJax set it
  root.querySelectorAll('mjx-container').forEach(function (m) {{
    var column = m.parentElement && m.parentElement.closest('.widget-htmlmath-content, .widget-html-content');
    if (!column) return;
    var was = m.classList.contains('{WIDE_MATH_CLASS}');
    // its own width, measured while MathJax's (not this) style sets it: the choice never flips back and forth
    if (!was) m.setAttribute('data-width', String(m.getBoundingClientRect().width));
    var now = Number(m.getAttribute('data-width')) > column.clientWidth + 1;
    if (now === was) return;
    m.classList.toggle('{WIDE_MATH_CLASS}', now);
    if (now) m.setAttribute('tabindex', '0'); else m.removeAttribute('tabindex');
  }});
}}
function tidy() {{
  wide();
  root.querySelectorAll('button, input, select, textarea, [tabindex]').forEach(function (el) {{
    set(el, 'data-lm-suppress-shortcuts', 'true');
  }});
  root.querySelectorAll('.widget-radio-box').forEach(function (box) {{
    var group = box.querySelector('input[name]');
    var name = group ? group.name : 'course-radio-' + Math.random().toString(36).slice(2);
    box.querySelectorAll('input[type=radio]:not([name])').forEach(function (r) {{ r.name = name; }});
    var label = box.parentElement && box.parentElement.querySelector(':scope > .widget-label');
    set(box, 'role', 'radiogroup');  // the options are one group, named by the widget's description
    if (label && label.textContent.trim()) set(box, 'aria-label', label.textContent.trim());
  }});
  root.querySelectorAll('[title="null"]').forEach(function (el) {{ el.removeAttribute('title'); }});
  root.querySelectorAll('.widget-slider').forEach(function (s) {{
    var label = s.querySelector('.widget-label'), handle = s.querySelector('[role=slider]');
    var readout = s.querySelector('.widget-readout');
    var name = label && label.textContent.trim();
    if (handle && name) set(handle, 'aria-label', name);
    var shown = readout && (readout.value !== undefined && readout.value !== '' ? readout.value :
      readout.textContent).trim();
    if (handle && shown) set(handle, 'aria-valuetext', shown);
  }});
  root.querySelectorAll('.widget-toggle-button').forEach(function (b) {{
    set(b, 'aria-pressed', b.classList.contains('mod-active') ? 'true' : 'false');
  }});
  if (root.classList.contains('{LIVE_CLASS}')) {{
    root.querySelectorAll('button.{OPTION_CLASS}').forEach(function (b) {{
      set(b, 'aria-pressed', b.classList.contains('mod-info') ? 'true' : 'false');  // the answer sent, or not
    }});
  }}
  root.querySelectorAll('button.{OPTION_CLASS}[title]').forEach(function (b) {{
    set(b, 'aria-label', b.title);
  }});
  root.querySelectorAll('.{STATUS_CLASS}:not([role])').forEach(function (s) {{
    s.setAttribute('role', 'status'); s.setAttribute('aria-live', 'polite');
    s.setAttribute('aria-atomic', 'true');
  }});
  root.querySelectorAll('.{CODE_CLASS} textarea').forEach(function (box) {{
    set(box, 'spellcheck', 'false'); set(box, 'autocapitalize', 'off'); set(box, 'autocomplete', 'off');
    var row = box.closest('.{ANSWER_ROW_CLASS}'), hint = row && row.querySelector('.{CODE_HINT_CLASS}');
    if (hint) {{
      if (!hint.id) hint.id = 'course-hint-' + Math.random().toString(36).slice(2);
      set(box, 'aria-describedby', hint.id);
    }}
    if (box.getAttribute('data-fitted') !== box.getAttribute('rows')) fit(box);
  }});
  root.querySelectorAll('[class*="{FOCUS_PREFIX}"]').forEach(function (el) {{
    var mark = Array.prototype.find.call(el.classList, function (c) {{
      return c.indexOf('{FOCUS_PREFIX}') === 0; }});
    if (!mark || el.getAttribute('data-focused') === mark) return;
    el.setAttribute('data-focused', mark);
    el.setAttribute('tabindex', '-1');
    el.setAttribute('data-lm-suppress-shortcuts', 'true');  // Lumino looks at the focused element itself
    var now = document.activeElement;
    if (!now || now === document.body || root.contains(now)) el.focus();
  }});
}}
new MutationObserver(function (records) {{
  if (records.some(function (r) {{ return !stale.contains(r.target) && r.type !== 'attributes'; }})) {{
    clearTimeout(timer); timer = null; stale.textContent = '';
  }}
  tidy();
}}).observe(root, {{subtree: true, childList: true, characterData: true, attributes: true,
  attributeFilter: ['title', 'class', 'aria-valuenow']}});
// the key that sends a typed answer: Enter in a text box, Shift+Enter in a code box
function sends(event, t) {{
  if (event.key !== 'Enter') return false;
  if (t.tagName === 'INPUT' && t.type === 'text') return true;
  return t.tagName === 'TEXTAREA' && event.shiftKey && !!t.closest('.{CODE_CLASS}');
}}
function waiting(event) {{
  var t = event.target;
  var act = event.type === 'click' ? t.closest && t.closest('button') : (sends(event, t) ? t : null);
  if (!act || act.disabled || timer !== null) return;
  timer = setTimeout(function () {{
    timer = null; stale.textContent = {json.dumps(STALE_TEXT)};
  }}, {STALE_AFTER_MS});
}}
function typed(event) {{
  var t = event.target, row = t.closest && t.closest('.{ANSWER_ROW_CLASS}');
  if (!row) return;
  var box = row.querySelector('.{NUMBER_CLASS} input, .{CODE_CLASS} textarea');
  var channel = row.querySelector('.{TYPED_CLASS} input');
  var button = row.querySelector('button.{SUBMIT_CLASS}');
  if (!box || !channel) return;
  if (event.type === 'click' ? !(button && button.contains(t) && !button.disabled) :
    !(sends(event, t) && t === box && !box.disabled)) return;
  event.preventDefault(); event.stopPropagation();
  var count = Number(channel.getAttribute('data-count') || '0') + 1;
  channel.setAttribute('data-count', String(count));
  channel.value = count + ':' + (box.tagName === 'TEXTAREA' ? JSON.stringify(box.value) : box.value);
  channel.dispatchEvent(new Event('change', {{bubbles: true}}));
}}
function indent(event) {{  // Tab in a code box indents; Escape then Tab, or Shift+Tab, leaves it
  var t = event.target;
  if (t.tagName !== 'TEXTAREA' || !t.closest('.{CODE_CLASS}') || t.disabled) return;
  if (event.key === 'Escape') {{ t.setAttribute('data-leave', 'true'); return; }}
  if (event.key !== 'Tab' || event.shiftKey || event.ctrlKey || event.altKey || event.metaKey) {{
    if (event.key !== 'Shift') t.removeAttribute('data-leave');
    return;
  }}
  if (t.getAttribute('data-leave')) {{ t.removeAttribute('data-leave'); return; }}
  event.preventDefault();
  // insertText keeps the browser's undo and fires the input event that tells the widget
  if (!document.execCommand || !document.execCommand('insertText', false, '    ')) {{
    t.setRangeText('    ', t.selectionStart, t.selectionEnd, 'end');
    t.dispatchEvent(new Event('input', {{bubbles: true}}));
  }}
}}
function edit(event) {{  // Enter keeps the indentation (one level more after a colon); Backspace at an
  // indent removes one level (4 spaces)
  var t = event.target;
  if (t.tagName !== 'TEXTAREA' || !t.closest('.{CODE_CLASS}') || t.disabled) return;
  if (event.shiftKey || event.ctrlKey || event.altKey || event.metaKey || event.isComposing) return;
  var at = t.selectionStart, line = t.value.slice(t.value.lastIndexOf('\\n', at - 1) + 1, at);
  var lead = line.match(/^ */)[0];
  if (event.key === 'Enter') {{
    var more = /:\\s*$/.test(line) ? '    ' : '';
    event.preventDefault();
    insert(t, '\\n' + lead + more);
  }} else if (event.key === 'Backspace' && at === t.selectionEnd && line.length > 0 && lead === line) {{
    event.preventDefault();
    t.setSelectionRange(at - (line.length % 4 || 4), at);
    insert(t, '');
  }}
}}
function insert(t, text) {{  // insertText keeps the browser's undo and fires the input event
  if (!document.execCommand || !document.execCommand(text ? 'insertText' : 'delete', false, text)) {{
    t.setRangeText(text, t.selectionStart, t.selectionEnd, 'end');
    t.dispatchEvent(new Event('input', {{bubbles: true}}));
  }}
}}
var across = root.clientWidth;  // the screen narrowed or widened: a formula may fit now, or no longer
if (window.ResizeObserver) new ResizeObserver(function () {{
  if (root.clientWidth !== across) {{ across = root.clientWidth; wide(); }}
}}).observe(root);
root.addEventListener('keydown', indent, true);
root.addEventListener('keydown', edit, true);
root.addEventListener('input', function (event) {{
  var t = event.target;
  if (t.tagName === 'TEXTAREA' && t.closest('.{CODE_CLASS}')) fit(t);
}}, true);
root.addEventListener('focusout', function (event) {{
  if (event.target.removeAttribute) event.target.removeAttribute('data-leave');
}}, true);
root.addEventListener('click', waiting, true);
root.addEventListener('keydown', waiting, true);
root.addEventListener('click', typed, true);
root.addEventListener('keydown', typed, true);
tidy();
}})(this)"""
CHROME = f'{_STYLE}<img alt="" hidden src="data:," onerror="{html.escape(_SCRIPT)}">'


def focus(widget: widgets.Widget | None) -> None:
    """Move the keyboard focus to `widget` (ipywidgets 8; 7.7 has no focus and keeps it where it was)."""
    method = getattr(widget, "focus", None)
    if callable(method):
        method()


_focus_count = itertools.count(1)


def focus_here(widget: widgets.DOMWidget) -> None:
    """Ask the chrome's script to move the keyboard focus to `widget` (made focusable, not tabbable) once it
    is on screen, if the focus is in the widget or nowhere: each call a new mark, and so one focus."""
    widget._dom_classes = (
        *(name for name in widget._dom_classes if not name.startswith(FOCUS_PREFIX)),
        f"{FOCUS_PREFIX}{next(_focus_count)}",
    )


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
