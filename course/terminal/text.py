"""The question bank's Markdown as plain text for a terminal.

Math (``$...$`` inline, ``$$...$$`` on lines of its own) becomes Unicode text through pylatexenc's
``LatexNodes2Text``, with a few rules of this course's notation on top: symbols keep the spacing written
around them (``d_{model} \\times d_{model}`` gives ``d_model × d_model``), superscripts that Unicode has are
written as such (``QK^\\top`` gives ``QKᵀ``, ``10^{-22}`` gives ``10⁻²²``), other superscripts and non-word
subscripts are bracketed (``e^{x_i}`` gives ``e^(x_i)``, ``h_{t-1}`` gives ``h_(t-1)``), a square root of one
word has no brackets (``\\sqrt{d_k}`` gives ``√d_k``). Strong emphasis (``**not**``) is shown in capitals
(``NOT``), other emphasis and the backticks of code spans are dropped; code is kept as written. Paragraphs
are wrapped at word boundaries to the width given (words longer than it are not broken, nor short formulas
and code spans); list items keep their marker and hang their continuation lines under its text; fenced code
keeps its lines.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import cache

from pylatexenc import latex2text, latexwalker

__all__ = ["terminal_text"]

_FENCE = "```"
_DISPLAY = "$$"
_LIST_ITEM = re.compile(r"([-*+]|[0-9]{1,3}[.)])[ \t]+")
# Spans are bounded in length (_SPAN characters), so that text full of unclosed markers ("**a **a ...") is
# read in time linear in its length: an unbounded lazy span rescans the rest of the text from every marker.
_SPAN = 500
_INLINE = re.compile(rf"(`+)(.{{1,{4 * _SPAN}}}?)\1|\$([^$]+?)\$", re.DOTALL)  # a code span, or inline math
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!$|])")
_STRONG = re.compile(rf"\*\*(?=\S)(.{{1,{_SPAN}}}?)(?<=\S)\*\*|__(?=\S)(.{{1,{_SPAN}}}?)(?<=\S)__")
_EMPHASIS = re.compile(
    rf"(?<![\w*])\*(?=\S)(.{{1,{_SPAN}}}?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)(.{{1,{_SPAN}}}?)(?<=\S)_(?![\w_])"
)
_CONTROL_WORD = re.compile(r"\\([A-Za-z]+)")
_SPACING = {"\\,": " ", "\\;": " ", "\\:": " ", "\\!": "", "\\ ": " ", "\\quad": " ", "\\qquad": " "}
_SUP, _SUB = "\x01", "\x02"  # ^ and _ once their argument is written out, so that they are not read again
_SCRIPT_CHAR = re.compile(r"([\^_])\s*([^\s{}\\\x01\x02])")
_SCRIPT_GROUP = re.compile(r"([\^_])\s*\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SUPERSCRIPTS = str.maketrans("0123456789+-−=()⊤", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵀ")
_NORM = re.compile(r"‖([^‖]*)‖")  # ‖ k ‖ is written ‖k‖
_WORD = re.compile(r"[\w\x02]+")
_UNBREAKABLE = 30  # inline math or code up to this long is never split across lines
_NO_BREAK = "\N{NO-BREAK SPACE}"


@dataclass(frozen=True)
class _Block:
    """A paragraph (`lines` are its logical lines: one, or one per list item), fenced code or display math."""

    kind: str  # "paragraph", "code" or "math"
    lines: tuple[str, ...]


def terminal_text(markdown: str, width: int) -> str:
    """`markdown` (a question's prompt, option, answer or explanation) as plain Unicode text, its paragraphs
    wrapped to `width` columns and separated by an empty line."""
    return "\n\n".join(_render(block, max(width, 1)) for block in _blocks(markdown))


# ---------------------------------------------------------------------------------------------- blocks


def _blocks(markdown: str) -> list[_Block]:
    blocks: list[_Block] = []
    lines = markdown.expandtabs(4).strip("\n").splitlines()
    paragraph: list[str] = []

    def end_paragraph() -> None:
        if paragraph:
            blocks.append(_Block("paragraph", tuple(paragraph)))
            paragraph.clear()

    at = 0
    while at < len(lines):
        line = lines[at]
        stripped = line.strip()
        if stripped.startswith(_FENCE) or stripped.startswith(_DISPLAY):
            end_paragraph()
            at = _fenced(lines, at, blocks)
            continue
        if not stripped:
            end_paragraph()
        elif _LIST_ITEM.match(stripped) or not paragraph:
            paragraph.append(stripped)
        else:
            paragraph[-1] += " " + stripped
        at += 1
    end_paragraph()
    return blocks


def _fenced(lines: list[str], at: int, blocks: list[_Block]) -> int:
    """Add the code block or display math starting at line `at`; return the line after it."""
    opening = lines[at].strip()
    if opening.startswith(_FENCE):
        end = next((k for k in range(at + 1, len(lines)) if lines[k].strip().startswith(_FENCE)), len(lines))
        blocks.append(_Block("code", tuple(lines[at + 1 : end])))
        return end + 1
    body = opening[len(_DISPLAY) :]
    end = at
    while _DISPLAY not in body and end + 1 < len(lines):
        end += 1
        body += "\n" + lines[end]
    blocks.append(_Block("math", (body.split(_DISPLAY, 1)[0],)))
    return end + 1


def _render(block: _Block, width: int) -> str:
    if block.kind == "code":
        return "\n".join(block.lines)
    if block.kind == "math":
        return textwrap.fill(_math(block.lines[0]), width, initial_indent="    ", subsequent_indent="    ")
    return "\n".join(_wrapped(line, width) for line in block.lines)


def _wrapped(line: str, width: int) -> str:
    marker = _LIST_ITEM.match(line)
    hang = " " * len(marker.group(0)) if marker else ""
    text = textwrap.fill(
        _inline(line),
        width,
        subsequent_indent=hang if len(hang) < width // 2 else "",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return text.replace(_NO_BREAK, " ")


# ---------------------------------------------------------------------------------------------- inline


def _inline(text: str) -> str:
    """One logical line: code spans as written, math as Unicode, emphasis marks dropped."""
    pieces: list[str] = []
    last = 0
    for found in _INLINE.finditer(text):
        start = found.start()
        if start > 0 and text[start - 1] == "\\" and found.group(3) is not None:
            continue  # \$ is a dollar sign, not math
        pieces.append(_prose(text[last:start]))
        code = found.group(2)
        pieces.append(_unbreakable(code.strip() or code if code is not None else _math(found.group(3))))
        last = found.end()
    pieces.append(_prose(text[last:]))
    return " ".join("".join(pieces).split(" ")).strip()


def _unbreakable(text: str) -> str:
    """A formula or code span, kept on one line when it is short."""
    return text.replace(" ", _NO_BREAK) if len(text) <= _UNBREAKABLE else text


def _prose(text: str) -> str:
    text = _STRONG.sub(lambda found: (found.group(1) or found.group(2)).upper(), text)
    text = _EMPHASIS.sub(lambda found: found.group(1) or found.group(2), text)
    return _ESCAPE.sub(r"\1", text)


# ------------------------------------------------------------------------------------------------ math


def _math(tex: str) -> str:
    """One formula (without its dollars) as Unicode text on one line."""
    source = tex
    for command, spacing in _SPACING.items():
        source = source.replace(command, spacing)
    source = _CONTROL_WORD.sub(_symbol, source)
    source = _scripts(source)
    text = _converter().latex_to_text(source)
    text = " ".join(text.replace(_SUP, "^").replace(_SUB, "_").split())
    return _NORM.sub(lambda found: f"‖{found.group(1).strip()}‖", text)


@cache
def _converter() -> latex2text.LatexNodes2Text:
    return latex2text.LatexNodes2Text(math_mode="text", strict_latex_spaces="based-on-source")


@cache
def _symbols() -> dict[str, str]:
    """pylatexenc's text for each control word that takes no argument and stands for a fixed text (\\times,
    \\tau, \\ln...), so that it can be written in place, keeping the spaces around it."""
    parsing = latexwalker.get_default_latex_context_db()
    texts = latex2text.get_default_latex_context_db()
    symbols: dict[str, str] = {}
    for category in texts.categories():
        for spec in texts.iter_macro_specs([category]):
            repl = getattr(spec, "simplify_repl", None)
            if isinstance(repl, str) and "%" not in repl and parsing.get_macro_spec(spec.macroname) is None:
                symbols.setdefault(spec.macroname, repl)
    return symbols


def _symbol(found: re.Match[str]) -> str:
    return _symbols().get(found.group(1), found.group(0))


def _scripts(source: str) -> str:
    """Superscripts, subscripts and square roots written out, innermost first."""
    while True:
        before = source
        source = _SCRIPT_CHAR.sub(_script, source)
        source = _SCRIPT_GROUP.sub(_script, source)
        source = _SQRT.sub(_root, source)
        if source == before:
            return source


def _script(found: re.Match[str]) -> str:
    mark, argument = found.group(1), " ".join(found.group(2).split())
    if mark == "^":
        if argument and all(char in _SUPERSCRIPTS for char in map(ord, argument)):
            return argument.translate(_SUPERSCRIPTS)
        return _SUP + (argument if len(argument) == 1 else f"({argument})")
    return _SUB + (argument if _WORD.fullmatch(argument) else f"({argument})")


def _root(found: re.Match[str]) -> str:
    argument = " ".join(found.group(1).split())
    return "√" + (argument if _WORD.fullmatch(argument) else f"({argument})")
