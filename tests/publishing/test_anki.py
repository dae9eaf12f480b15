"""``python -m course export-anki``: the package read back as Anki reads it (a zip holding
``collection.anki2``, an SQLite database: notes, cards, and the collection's models and decks as JSON)."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import genanki  # type: ignore[import-untyped]
import pytest
from bank_samples import bank_text

from course.bank import Bank, Question
from course.publishing import write_package
from course.publishing._anki import DECK_ID, DECK_NAME, MODEL_ID, MODEL_NAME, anki_math, note_fields
from course.terminal import cli

NOW = "2025-03-03T10:00:00+00:00"

LESSON_00 = """lesson = "00"
retired = ["00-old"]

[[question]]
id = "00-r"
kind = "recall"
prompt = '''Is $a<b$ or <script>alert(1)</script>?'''
answer = '''$$a_1 = b$$ and `$c$`'''
explanation = '''It costs \\$5 & **more**.'''
section = "1. Sums"

[[question]]
id = "00-c"
kind = "choice"
prompt = "Pick $b$."
explanation = "It says b."
section = "2. Letters"
options = [{ text = "a", why = "Not b." }, { text = "$b$", correct = true, why = "Asked for." }]

[[question]]
id = "00-n"
kind = "numeric"
prompt = "How many heads?"
answer = 12
tolerance = 0
unit = "heads"
explanation = "768 / 64."
section = "3. Heads"
"""

LESSON_01 = bank_text("01-one")  # its one question, 01-r

FIELDS = {
    "00-r": [
        "<p>Is \\(a&lt;b\\) or &lt;script&gt;alert(1)&lt;/script&gt;?</p>",
        '<div class="answer"><p>\\[a_1 = b\\] and <code>$c$</code></p></div>\n'
        "<p>It costs $5 &amp; <strong>more</strong>.</p>",
        "00",
        "00-r",
    ],
    "00-c": [
        # the right option second in the file, first in the note: its place is drawn from the id (shown_order)
        '<p>Pick \\(b\\).</p>\n<ol type="A"><li>\\(b\\)</li><li>a</li></ol>',
        '<p class="answer">Answer: A. \\(b\\)</p>\n'
        '<ol type="A"><li>Right: Asked for.</li><li>Wrong: Not b.</li></ol>\n<p>It says b.</p>',
        "00",
        "00-c",
    ],
    "00-n": [
        "<p>How many heads?</p>",
        '<p class="answer">Answer: 12 heads</p>\n<p>768 / 64.</p>',
        "00",
        "00-n",
    ],
    "01-r": ["<p>One?</p>", '<div class="answer"><p>1</p></div>\n<p>One.</p>', "01", "01-r"],
}


@dataclass(frozen=True)
class Collection:
    """What Anki reads from a package."""

    notes: list[tuple[str, int, list[str], str]]  # guid, model id, fields, tags
    cards: list[tuple[int, int]]  # note id, deck id
    note_ids: list[int]
    models: dict[str, Any]
    decks: dict[str, Any]


def read_package(path: Path, scratch: Path) -> Collection:
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["collection.anki2", "media"]
        (scratch / "collection.anki2").write_bytes(archive.read("collection.anki2"))
    connection = sqlite3.connect(scratch / "collection.anki2")
    try:
        rows = connection.execute("SELECT id, guid, mid, flds, tags FROM notes ORDER BY id").fetchall()
        cards = connection.execute("SELECT nid, did FROM cards ORDER BY nid").fetchall()
        models, decks = connection.execute("SELECT models, decks FROM col").fetchone()
    finally:
        connection.close()
    return Collection(
        [(guid, mid, flds.split("\x1f"), tags) for _, guid, mid, flds, tags in rows],
        cards,
        [row[0] for row in rows],
        json.loads(models),
        json.loads(decks),
    )


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "00-sums.toml").write_text(LESSON_00)
    (directory / "01-one.toml").write_text(LESSON_01)
    return directory


def export(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["export-anki", *map(str, args), "--now", NOW], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_the_package_holds_one_note_per_question_as_anki_reads_it(bank: Path, tmp_path: Path) -> None:
    target = tmp_path / "course.apkg"
    assert export(target, "--bank", bank) == (
        0,
        f"Wrote 4 notes (lessons 00-01) to {target}. Import it in Anki: File > Import.\n",
        "",
    )
    collection = read_package(target, tmp_path)
    assert collection.notes == [
        (genanki.guid_for(question_id), MODEL_ID, fields, f" lesson-{fields[2]} ")
        for question_id, fields in FIELDS.items()
    ]  # retired 00-old is no question: not exported
    assert collection.cards == [(note_id, DECK_ID) for note_id in collection.note_ids]
    model = collection.models[str(MODEL_ID)]
    assert model["name"] == MODEL_NAME
    assert [field["name"] for field in model["flds"]] == ["Front", "Back", "Lesson", "Id"]
    assert [(t["name"], t["qfmt"], t["afmt"]) for t in model["tmpls"]] == [
        ("Question", "{{Front}}", "{{FrontSide}}\n<hr id=answer>\n{{Back}}")
    ]
    assert collection.decks[str(DECK_ID)]["name"] == DECK_NAME


def test_a_question_keeps_its_note_across_exports_and_edits(bank: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "first.apkg", tmp_path / "second.apkg"
    export(first, "--bank", bank)
    (bank / "01-one.toml").write_text(LESSON_01.replace('prompt = "One?"', 'prompt = "The number one?"'))
    export(second, "--bank", bank)
    before, after = read_package(first, tmp_path), read_package(second, tmp_path)
    assert [note[0] for note in before.notes] == [note[0] for note in after.notes]
    assert after.notes[3] == (
        genanki.guid_for("01-r"),
        MODEL_ID,
        ["<p>The number one?</p>", *FIELDS["01-r"][1:]],
        " lesson-01 ",
    )


def test_lessons_named_restrict_the_export(bank: Path, tmp_path: Path) -> None:
    target = tmp_path / "one.apkg"
    assert export(target, "--bank", bank, "--lessons", "1") == (
        0,
        f"Wrote 1 note (lesson 01) to {target}. Import it in Anki: File > Import.\n",
        "",
    )
    assert [note[2] for note in read_package(target, tmp_path).notes] == [FIELDS["01-r"]]


def test_an_unknown_lesson_is_refused_and_nothing_written(bank: Path, tmp_path: Path) -> None:
    target = tmp_path / "none.apkg"
    assert export(target, "--bank", bank, "--lessons", "00", "42") == (
        2,
        "",
        "unknown lesson '42' (lessons with questions: 00, 01)\n",
    )
    assert not target.exists()
    assert export(target, "--bank", bank, "--lessons", "03") == (
        2,
        "",
        "lesson 03 has no questions yet (lessons with questions: 00, 01)\n",
    )


def test_math_delimiters_become_mathjax_ones_outside_code() -> None:
    assert (
        anki_math("<p>$x$, $$y$$, \\$1, <code>$z$</code></p>")
        == "<p>\\(x\\), \\[y\\], $1, <code>$z$</code></p>"
    )


def test_a_bank_with_a_control_character_is_refused_and_nothing_written(bank: Path, tmp_path: Path) -> None:
    """Issue 20, item 18: a prompt holding U+001F (written \\u001f in TOML) is refused by the bank's check, so
    export-anki writes no package, rather than a note with one field too many."""
    (bank / "01-one.toml").write_text(LESSON_01.replace('prompt = "One?"', 'prompt = "One\\u001f?"'))
    target = tmp_path / "out.apkg"
    assert export(target, "--bank", bank) == (
        1,
        "",
        "the question bank is invalid (python -m course check lists the problems):\n01-one.toml: question "
        "'01-r': field 'prompt': must not contain control characters (found U+001F at line 1, column 4 of "
        "the text)\n",
    )
    assert not target.exists()


def test_a_note_never_gets_the_wrong_number_of_fields(tmp_path: Path) -> None:
    """A bank built in code, without the check, cannot slip U+001F into a note either: `note_fields` refuses
    it, naming the question and the field, before anything is written."""
    question = Question("01-x", "01", "recall", "P", "A\x1fB", "E", "1. S")
    target = tmp_path / "out.apkg"
    with pytest.raises(ValueError) as refused:
        write_package(Bank([question]), ["01"], target, datetime(2025, 3, 3, tzinfo=timezone.utc))
    assert str(refused.value) == (
        "question '01-x': its Back field holds U+001F, which separates the fields of an Anki note; remove it "
        "from the question"
    )
    assert list(tmp_path.iterdir()) == []
    assert note_fields(Question("01-y", "01", "recall", "P\tQ", "A", "E", "1. S"))[2:] == ["01", "01-y"]


LESSON_05_CODE = """lesson = "05"

[[question]]
id = "05-mask"
kind = "code"
prompt = "Write `causal_mask(t)`, True where $j \\\\le i$."
checker = "check_causal_mask"
function = "causal_mask"
starter = '''
def causal_mask(t):
    raise NotImplementedError
'''
solution = '''
def causal_mask(t):
    keep = np.ones((t, t), dtype=bool)  # "$x$" < 1
    return np.tril(keep)
'''
explanation = "The lower triangle: `np.tril`."
section = "3. The causal mask"
"""


def test_a_code_question_is_a_note_of_its_prompt_and_starter_then_its_worked_solution(tmp_path: Path) -> None:
    directory = tmp_path / "bank"
    directory.mkdir()
    (directory / "05-masks.toml").write_text(LESSON_05_CODE)
    target = tmp_path / "code.apkg"
    assert export(target, "--bank", directory) == (
        0,
        f"Wrote 1 note (lesson 05) to {target}. Import it in Anki: File > Import.\n",
        "",
    )
    assert read_package(target, tmp_path).notes == [
        (
            genanki.guid_for("05-mask"),
            MODEL_ID,
            [
                "<p>Write <code>causal_mask(t)</code>, True where \\(j \\le i\\).</p>\n<p>Starter code:</p>\n"
                "<pre><code>def causal_mask(t):\n    raise NotImplementedError</code></pre>",
                '<p class="answer">A worked solution:</p>\n<pre><code>def causal_mask(t):\n'
                '    keep = np.ones((t, t), dtype=bool)  # "$x$" &lt; 1\n'
                "    return np.tril(keep)</code></pre>\n"
                "<p>The lower triangle: <code>np.tril</code>.</p>",
                "05",
                "05-mask",
            ],
            " lesson-05 ",
        )
    ]


def test_the_answer_is_no_letter_more_than_the_others_and_each_note_keeps_its_order() -> None:
    from collections import Counter

    from course.bank import Kind, load_bank
    from course.publishing._anki import shown_order

    choice = [question for question in load_bank().all() if question.kind == Kind.CHOICE]
    in_file = Counter("ABCD"[question.correct_option] for question in choice)
    in_deck = Counter(shown_order(question).right_label for question in choice)
    assert in_file["A"] > 0.8 * len(choice)  # the bank's order: the answer at A nine times in ten (56 of 63)
    # in the deck each letter is the answer for 15 % to 35 % of the notes (now A 15, B 19, C 11, D 18 of 63)
    assert set(in_deck) == set("ABCD")
    assert all(0.15 * len(choice) <= count <= 0.35 * len(choice) for count in in_deck.values()), in_deck
    for question in choice:  # the same order at every export, every option once, the explanations with them
        shown = shown_order(question)
        assert shown == shown_order(question)
        assert sorted(shown.order) == list(range(len(question.options)))
        assert shown.option(shown.right_position).correct
