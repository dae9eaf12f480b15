"""What the projector widgets share: projector type, and the keys that drive them from the front of the room.

`projector_chrome(keys, label)` is a style sheet and a tiny script (in a hidden child) for a widget whose root
has `CLASS_CLASS`. The root takes the focus, is named `label` (an application: a screen reader passes its
keys through), and turns each key of `keys` into a press of the button with that CSS class. A focused
button keeps its own Enter and Space; a focused box keeps every key, and Enter there hands the keys back to
the root. With a count box (`COUNT_CLASS`), a digit typed anywhere else goes into it: "type the count, then
Enter" works without Tab.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping

__all__ = ["CLASS_CLASS", "COUNT_CLASS", "PROJECTOR_STYLE", "projector_chrome"]

CLASS_CLASS = "course-class-review"
COUNT_CLASS = "course-class-count"  # the box the room's count is typed in
# Projector type: 30 px prompts, 26 px options, black on white; the right option in dark green with a mark.
# Code keeps the size of the text around it (JupyterLab sets code to 13 px).
PROJECTOR_STYLE = f"""<style>
.course-widget.{CLASS_CLASS} {{ font-size: 26px; color: #000; background: #fff; padding: 0.5em; }}
.{CLASS_CLASS}:focus {{ outline: 3px solid #1976d2; outline-offset: 2px; }}
.{CLASS_CLASS} .widget-html-content, .{CLASS_CLASS} .widget-htmlmath-content {{ font-size: 26px;
  line-height: 1.4; color: #000; }}
.{CLASS_CLASS} .course-class-prompt .widget-htmlmath-content {{ font-size: 30px; font-weight: 600; }}
.{CLASS_CLASS} code, .{CLASS_CLASS} pre, .{CLASS_CLASS} kbd {{ font-size: 0.92em !important; }}
.{CLASS_CLASS} .course-class-option {{ border: 2px solid #000; border-radius: 6px; padding: 0.2em 0.5em;
  margin: 0.2em 0; }}
.{CLASS_CLASS} .course-class-right {{ border: 4px solid #00441b; background: #e5f5e0; }}
.{CLASS_CLASS} .course-class-right .widget-htmlmath-content {{ color: #00441b; font-weight: 700; }}
.course-widget.{CLASS_CLASS} .jupyter-button, .course-widget.{CLASS_CLASS} input {{ font-size: 22px;
  height: auto; padding: 0.2em 0.6em; }}
.course-widget.{CLASS_CLASS} .jupyter-button {{ width: auto; min-width: 5em; max-width: 100%;
  overflow: visible; text-overflow: clip; white-space: normal; overflow-wrap: break-word; }}
.course-widget.{CLASS_CLASS} .widget-label {{ font-size: 22px; }}
.{CLASS_CLASS} .course-class-of {{ white-space: nowrap; margin: 0 0.6em; flex: none; }}
.course-widget.{CLASS_CLASS} .{COUNT_CLASS} {{ width: auto; max-width: 100%; min-width: 0; flex-wrap: wrap;
  height: auto; }}
.course-widget.{CLASS_CLASS} .{COUNT_CLASS} .widget-label {{ width: auto; max-width: 100%; height: auto;
  white-space: normal; overflow: visible; text-overflow: clip; line-height: 1.4; }}
.course-widget.{CLASS_CLASS} .{COUNT_CLASS} input {{ flex: 0 1 6em; width: 6em; min-width: 3em;
  max-width: 100%; }}
</style>"""


def projector_chrome(keys: Mapping[str, str], label: str, style: str = "") -> str:
    """The hidden child's HTML: `PROJECTOR_STYLE`, then `style`, and the key script. `keys`: key (as
    ``KeyboardEvent.key`` names it) -> the CSS class of the button it presses."""
    script = f"""(function (img) {{
var root = img.closest('.{CLASS_CLASS}');
if (!root || root.hasAttribute('data-keys')) return;
root.setAttribute('data-keys', '');
root.tabIndex = 0;
root.setAttribute('role', 'application');
root.setAttribute('aria-label', {json.dumps(label)});
var keys = {json.dumps(dict(keys))};
root.addEventListener('keydown', function (e) {{
  var t = e.target;
  if (t.tagName === 'INPUT') {{
    if (e.key === 'Enter') {{ setTimeout(function () {{ root.focus(); }}, 0); }}
    return;
  }}
  if (t.tagName === 'BUTTON' && (e.key === 'Enter' || e.key === ' ')) return;
  var count = root.querySelector('.{COUNT_CLASS} input');
  if (count && !count.disabled && /^[0-9]$/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {{
    // the digit goes into the box as typed (not set by the script: a value set so is not a change, and
    // Enter after one digit would send nothing); what the box held is selected, so the digit replaces it
    count.focus(); count.select();
    return;
  }}
  var name = keys[e.key];
  var button = name && root.querySelector('button.' + name);
  if (!button || button.disabled) return;
  e.preventDefault(); e.stopPropagation(); button.click();
}}, true);
// a button pressed, then disabled or redrawn (Reveal at the answer, Next at the last question, Start),
// drops the focus to the page: it comes back here, where the keys work
var had = false;
root.addEventListener('focusin', function () {{ had = true; }});
document.addEventListener('focusin', function (e) {{ if (!root.contains(e.target)) had = false; }});
new MutationObserver(function () {{
  var now = document.activeElement;
  var lost = !now || now === document.body || (now.disabled && root.contains(now)) || !now.isConnected;
  if (had && root.isConnected && lost) root.focus();
}}).observe(root, {{subtree: true, childList: true, attributes: true,
  attributeFilter: ['disabled', 'class']}});
root.focus();
}})(this)"""
    return f'{PROJECTOR_STYLE}{style}<img alt="" hidden src="data:," onerror="{html.escape(script)}">'
