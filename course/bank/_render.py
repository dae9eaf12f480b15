"""Markdown with math -> HTML, for the HTMLMath widgets; and -> plain text, for accessible names.

A deliberately small, safe subset: paragraphs, bullet and numbered lists, fenced code blocks, `code`,
**bold** and *italic*. Everything else is text. The text is HTML-escaped before any markup is added, so a
question can never inject HTML; math (``$...$``, ``$$...$$``) is cut out first, escaped but otherwise kept
verbatim, and put back with its delimiters so MathJax typesets it in the browser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

__all__ = ["inline_html", "plain_text", "to_html"]

_FENCE_CLOSE = re.compile(r"```[ \t]*")  # a whole line that closes a fenced code block
# Spans are bounded in length (_SPAN characters), so that text full of unclosed markers ("**a **a ...") is
# read in time linear in its length: an unbounded lazy span rescans the rest of the text from every marker.
_SPAN = 500
# Order matters: escaped dollars, display math, inline math, inline code.
_INLINE = re.compile(rf"\\\$|\$\$.{{1,{4 * _SPAN}}}?\$\$|\$[^$\n]+?\$|`[^`\n]+`", re.DOTALL)
_BOLD = re.compile(rf"\*\*(?=\S)(.{{1,{_SPAN}}}?)(?<=\S)\*\*")
_ITALIC = re.compile(rf"(?<![*\w])\*(?=[^\s*])(.{{1,{_SPAN}}}?)(?<=[^\s*])\*(?![*\w])")
_BULLET = re.compile(r"^[-*+][ \t]+")
_NUMBER = re.compile(r"^\d+[.)][ \t]+")
# Placeholders that cannot appear in the text (NUL and SOH are stripped from the input first):
# \x00N\x00 holds an inline fragment (math, code), \x01N\x01 a block (fenced code).
_SLOT_RE = re.compile("([\x00\x01])(\\d+)\\1")


def to_html(text: str) -> str:
    """Convert the Markdown subset in ``text`` to HTML, escaping everything that is not markup."""
    text = text.replace("\x00", "").replace("\x01", "").replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    slots: list[str] = []

    def keep(fragment: str, mark: str = "\x00") -> str:
        slots.append(fragment)
        return f"{mark}{len(slots) - 1}{mark}"

    def fence(code: str) -> str:
        return "\n\n" + keep(f"<pre><code>{html.escape(code.rstrip(chr(10)))}</code></pre>", "\x01") + "\n\n"

    def inline(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("`"):
            return keep(f"<code>{html.escape(token[1:-1])}</code>")
        return keep(html.escape(token, quote=False))  # math (or \$): escaped, delimiters kept for MathJax

    text = _replace_fences(text, fence)
    text = _INLINE.sub(inline, text)
    text = html.escape(text, quote=False)
    out = "\n".join(_block(block) for block in re.split(r"\n[ \t]*\n", text) if block.strip())
    return _SLOT_RE.sub(lambda m: slots[int(m.group(2))], out)


def _replace_fences(text: str, replace: Callable[[str], str]) -> str:
    """Replace each fenced code block, from a line starting with ``` to the next line that is only ```, by
    ``replace(code)``. One pass: the next closing line after each line is found by a backward scan first."""
    lines = text.split("\n")
    next_close = [len(lines)] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        next_close[i] = i if _FENCE_CLOSE.fullmatch(lines[i]) else next_close[i + 1]
    out: list[str] = []
    i = 0
    while i < len(lines):
        close = next_close[i + 1] if lines[i].startswith("```") else len(lines)
        if close < len(lines):
            body = lines[i + 1 : close]
            out.append(replace("\n".join(body) + ("\n" if body else "")))
            i = close + 1
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _block(block: str) -> str:
    lines = [line.strip() for line in block.strip("\n").split("\n")]
    if len(lines) == 1 and lines[0].startswith("\x01"):  # a fenced code block, alone in its block
        return lines[0]
    for pattern, tag in ((_BULLET, "ul"), (_NUMBER, "ol")):
        if pattern.match(lines[0]):
            return _list(lines, pattern, tag)
    return f"<p>{_inline(' '.join(lines))}</p>"


def _list(lines: list[str], pattern: re.Pattern[str], tag: str) -> str:
    entries: list[str] = []
    for line in lines:
        if pattern.match(line):
            entries.append(pattern.sub("", line, count=1))
        elif entries:  # a continuation line of the previous entry
            entries[-1] += " " + line
    body = "".join(f"<li>{_inline(entry)}</li>" for entry in entries)
    return f"<{tag}>{body}</{tag}>"


def _inline(text: str) -> str:
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    return _ITALIC.sub(r"<em>\1</em>", text)


# TeX commands read as words or symbols in plain text; any other command loses its backslash.
_TEX_WORDS = {"top": "T", "cdot": "·", "times": "×", "le": "≤", "ge": "≥", "ne": "≠", "to": "→", "infty": "∞"}
_TEX_SQRT = re.compile(r"\\sqrt\{([^{}]*)\}")
_TEX_TEXT = re.compile(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}")
_TEX_COMMAND = re.compile(r"\\([A-Za-z]+)\s?")


def _plain_math(tex: str) -> str:
    tex = _TEX_SQRT.sub(r"sqrt(\1)", tex)
    tex = _TEX_TEXT.sub(r"\1", tex)
    tex = _TEX_COMMAND.sub(lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), tex)
    return tex.replace("{", "").replace("}", "")


def plain_text(text: str) -> str:
    """The Markdown subset as plain one-line text: no markup, math as readable text (``$\\sqrt{d_k}$`` ->
    ``sqrt(d_k)``). For a button's accessible name or a tooltip, where nothing is typeset."""
    text = re.sub(
        r"(?<!\\)\$\$(.+?)\$\$|(?<!\\)\$([^$\n]+?)\$", lambda m: _plain_math(m.group(1) or m.group(2)), text
    )
    text = re.sub(r"`([^`\n]+)`", r"\1", text)
    text = _BOLD.sub(r"\1", text)
    text = _ITALIC.sub(r"\1", text)
    return " ".join(text.replace("\\$", "$").split())


def inline_html(text: str) -> str:
    """Markdown to HTML without the paragraph around a one-paragraph text (for list entries)."""
    rendered = to_html(text)
    if rendered.startswith("<p>") and rendered.endswith("</p>") and rendered.count("<p>") == 1:
        return rendered[3:-4]
    return rendered
