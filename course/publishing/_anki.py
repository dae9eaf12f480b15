"""The question bank as an Anki package (``.apkg``), for learners who review in Anki.

One deck, "Attention course", and one note type, "Attention course question" (fields Front, Back, Lesson,
Id), both with fixed ids; each note's GUID is derived from its question id, so importing a newer export
updates the notes of edited questions instead of adding copies. Text goes through the widgets' Markdown
rendering (`course.bank.to_html`: HTML escaped, ``$`` math kept), then the math delimiters become Anki's
MathJax ones: ``$...$`` -> ``\\(...\\)``, ``$$...$$`` -> ``\\[...\\]``. Retired questions are not questions
of the bank, so they are never exported.

A code question is exported as text, Anki running no code: its front is the prompt and the starter code, its
back the worked solution (as code blocks) and the explanation.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import os
import random
import re
import sqlite3
import tempfile
import zipfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import genanki  # type: ignore[import-untyped]

from course.bank import Bank, Kind, Presentation, Question, inline_html, to_html

__all__ = [
    "DECK_ID",
    "DECK_NAME",
    "FIELDS",
    "MODEL_ID",
    "MODEL_NAME",
    "anki_math",
    "back",
    "front",
    "note_fields",
    "tags",
    "write_package",
]

DECK_ID = 1_733_091_201
DECK_NAME = "Attention course"
MODEL_ID = 1_733_091_202
MODEL_NAME = "Attention course question"
FIELDS = ("Front", "Back", "Lesson", "Id")
_FIELD_SEPARATOR = "\x1f"
_CSS = ".card { font-family: sans-serif; font-size: 18px; text-align: left; }\n.answer { font-weight: bold; }"
_CODE = re.compile(r"(<pre><code>.*?</code></pre>|<code>.*?</code>)", re.DOTALL)
_DISPLAY = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.DOTALL)
_INLINE = re.compile(r"(?<!\\)\$(.+?)(?<!\\)\$", re.DOTALL)


def anki_math(html: str) -> str:
    """`html` with ``$$...$$`` as ``\\[...\\]`` and ``$...$`` as ``\\(...\\)``, outside code; ``\\$`` as
    ``$``."""
    parts = _CODE.split(html)
    for index in range(0, len(parts), 2):  # the odd parts are code, kept as they are
        text = _DISPLAY.sub(lambda match: f"\\[{match.group(1)}\\]", parts[index])
        text = _INLINE.sub(lambda match: f"\\({match.group(1)}\\)", text)
        parts[index] = text.replace("\\$", "$")
    return "".join(parts)


def _html(text: str) -> str:
    return anki_math(to_html(text))


def _inline(text: str) -> str:
    """`text` rendered without the paragraph around it when it is one paragraph (an option, an answer)."""
    return anki_math(inline_html(text))


def _code(code: str) -> str:
    return f"<pre><code>{html.escape(code.rstrip(chr(10)), quote=False)}</code></pre>"


def shown_order(question: Question) -> Presentation:
    """A choice question's options in the order its note shows them, the same at every export: the right
    option at a position drawn from the question's id, the others in an order drawn from it too. The bank
    keeps the right option first in most questions (the quiz shuffles at each showing; a deck in file order
    had the answer at A nine times in ten), so across the deck each letter is the answer about equally
    often."""
    seed = int.from_bytes(hashlib.sha256(question.id.encode()).digest()[:8], "big")
    wrong = [index for index in range(len(question.options)) if index != question.correct_option]
    random.Random(seed).shuffle(wrong)
    order = list(wrong)
    order.insert(seed % len(question.options), question.correct_option)
    return Presentation(question, tuple(order))


def front(question: Question) -> str:
    """The prompt, and for a choice question its options, lettered A, B, ...; for a code question its
    starter code."""
    if question.kind == Kind.CODE:
        return f"{_html(question.prompt)}\n<p>Starter code:</p>\n{_code(question.starter or '')}"
    if question.kind != Kind.CHOICE:
        return _html(question.prompt)
    options = "".join(f"<li>{_inline(shown.option.text)}</li>" for shown in shown_order(question).shown())
    return f'{_html(question.prompt)}\n<ol type="A">{options}</ol>'


def back(question: Question) -> str:
    """The answer (a choice question's right option and why each option is right or wrong; a number with
    its unit; a code question's worked solution), then the explanation."""
    if question.kind == Kind.CHOICE:
        shown = shown_order(question)
        right = shown.option(shown.right_position)
        answer = f"{shown.right_label}. {_inline(right.text)}"
        whys = "".join(
            f"<li>{'Right' if each.option.correct else 'Wrong'}: {_inline(each.option.why)}</li>"
            for each in shown.shown()
        )
        body = f'<p class="answer">Answer: {answer}</p>\n<ol type="A">{whys}</ol>'
    elif question.kind == Kind.CODE:
        body = f'<p class="answer">A worked solution:</p>\n{_code(question.solution or "")}'
    elif question.kind == Kind.NUMERIC:
        unit = f" {_inline(question.unit)}" if question.unit else ""
        body = f'<p class="answer">Answer: {question.answer}{unit}</p>'
    else:
        body = f'<div class="answer">{_html(str(question.answer))}</div>'
    return f"{body}\n{_html(question.explanation)}"


def tags(question: Question) -> list[str]:
    return [f"lesson-{question.lesson}"]


def _model() -> genanki.Model:
    return genanki.Model(
        MODEL_ID,
        MODEL_NAME,
        fields=[{"name": name} for name in FIELDS],
        templates=[
            {"name": "Question", "qfmt": "{{Front}}", "afmt": "{{FrontSide}}\n<hr id=answer>\n{{Back}}"}
        ],
        css=_CSS,
    )


def note_fields(question: Question) -> list[str]:
    """The note's fields, in the order of `FIELDS`. A ValueError, naming the question and the field, when one
    holds U+001F, the character Anki keeps between a note's fields: the note would have one field too many
    (the bank's check refuses every control character, so a bank that loads never has one)."""
    fields = [front(question), back(question), question.lesson, question.id]
    for name, text in zip(FIELDS, fields, strict=True):
        if _FIELD_SEPARATOR in text:
            raise ValueError(
                f"question {question.id!r}: its {name} field holds U+001F, which separates the fields of an "
                "Anki note; remove it from the question"
            )
    return fields


def _deck(questions: Sequence[Question]) -> genanki.Deck:
    model = _model()
    deck = genanki.Deck(DECK_ID, DECK_NAME)
    for question in questions:
        fields = note_fields(question)
        deck.add_note(
            genanki.Note(model=model, fields=fields, tags=tags(question), guid=genanki.guid_for(question.id))
        )
    return deck


def write_package(bank: Bank, lessons: Sequence[str], path: Path, at: datetime) -> int:
    """Write the questions of `lessons` (in bank order) to the Anki package `path`, replacing it whole;
    return how many notes. `at` is the notes' modification time (and where their row ids start). A question
    whose note would have the wrong number of fields is a ValueError (`note_fields`), before anything is
    written."""
    questions = [question for question in bank.all() if question.lesson in lessons]
    package = genanki.Package(_deck(questions))
    folder = path.resolve().parent
    with tempfile.TemporaryDirectory(dir=folder, prefix=".anki-") as scratch:
        collection = Path(scratch) / "collection.anki2"
        connection = sqlite3.connect(collection)
        try:
            package.write_to_db(
                connection.cursor(), at.timestamp(), itertools.count(int(at.timestamp() * 1000))
            )
            connection.commit()
        finally:
            connection.close()
        staged = Path(scratch) / "package.apkg"
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(collection, "collection.anki2")
            archive.writestr("media", "{}")
        os.replace(staged, path)
    return len(questions)
