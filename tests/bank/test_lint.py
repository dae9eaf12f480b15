"""The question bank's lint: every rule with its exact warning, its limits, and ``python -m course check``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from course.bank import Bank, Question, lint, load_bank
from course.bank._lint import (
    LintWarning,
    length_bias,
    normalise,
    rendered_length,
    right_option_is_longest,
    sentence_count,
    word_count,
)
from course.terminal import cli


def recall(qid: str, answer: str) -> str:
    return f"""
[[question]]
id = "{qid}"
kind = "recall"
prompt = "P"
answer = {json.dumps(answer)}
explanation = "E"
section = "S"
"""


def numeric(qid: str, answer: float) -> str:
    return f"""
[[question]]
id = "{qid}"
kind = "numeric"
prompt = "P"
answer = {answer}
tolerance = 0
explanation = "E"
section = "S"
"""


def choice(qid: str, right: str, *wrong: str) -> str:
    options = [{"text": right, "correct": True, "why": "W"}] + [{"text": w, "why": "W"} for w in wrong]
    rows = ", ".join(
        "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in option.items()) + " }" for option in options
    )
    return f"""
[[question]]
id = "{qid}"
kind = "choice"
prompt = "P"
options = [{rows}]
explanation = "E"
section = "S"
"""


def lesson(number: str, *questions: str) -> str:
    return f'lesson = "{number}"\n' + "".join(questions)


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def bank_of(tmp_path: Path, files: dict[str, str]) -> Bank:
    return load_bank(write(tmp_path / "bank", files))


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


A, B = "00-a.toml", "01-b.toml"
BIAS = "the right option is the longest in"


def fair(qid: str) -> str:
    """A choice question whose right option is not the longest."""
    return choice(qid, f"no {qid}", f"yes or no {qid}", f"maybe {qid}")


def long(qid: str) -> str:
    """A choice question whose right option is the longest, but not by 1.3 times."""
    return choice(qid, f"yes, surely {qid}", f"no, never {qid}", f"maybe {qid}")


def numeric_in(qid: str, answer: float, unit: str, prompt: str) -> str:
    return (
        numeric(qid, answer)
        .replace('prompt = "P"', f"prompt = {json.dumps(prompt)}")
        .replace("tolerance = 0\n", f"tolerance = 0\nunit = {json.dumps(unit)}\n")
    )


def asked(qid: str, prompt: str, answer: str) -> str:
    return recall(qid, answer).replace('prompt = "P"', f"prompt = {json.dumps(prompt)}")


FAIR = (fair("00-b"), fair("00-c"), fair("00-d"))  # keeps the share of longest right options under 40%

CASES: list[tuple[str, dict[str, str], list[str]]] = [
    ("clean", {A: lesson("00", recall("00-a", "One sentence, e.g. this one."), numeric("00-b", 64))}, []),
    # ---- the right option clearly the longest (issue 23: 07-no-residual-result, 1.75 times)
    (
        "right option 1.3 times as long",
        {A: lesson("00", choice("00-a", "abcdefghijklm", "abcdefghij", "xy"), fair("00-b"), fair("00-c"))},
        [
            f"{A}: question '00-a': the right option is 1.30 times as long as the longest other one "
            "(under 1.3: a learner must not find it by its length)"
        ],
    ),
    (
        "right option 1.2 times as long",
        {A: lesson("00", choice("00-a", "abcdefghijkl", "abcdefghij"), fair("00-b"), fair("00-c"))},
        [],
    ),
    # ---- the right option the longest and the only one with a reason (issue 34: 07-paper-dropout)
    (
        "the only reasoned option is the right one and the longest",
        {A: lesson("00", choice("00-a", "yes, because it is", "no it is not ever", "maybe not"), *FAIR)},
        [
            f"{A}: question '00-a': the right option is the longest and the only one that gives a reason: "
            "give the wrong options their reasons too, or cut the right one's"
        ],
    ),
    (
        "a wrong option gives a reason too",
        {A: lesson("00", choice("00-a", "yes, because it is", "no: it is not eve", "maybe not"), *FAIR)},
        [],
    ),
    (
        "the reasoned right option is not the longest",
        {A: lesson("00", choice("00-a", "yes, so it is", "no it is not at all", "maybe"), *FAIR)},
        [],
    ),
    (
        "a reason word inside code does not count",
        {A: lesson("00", choice("00-a", "yes `because` yes!!", "no it is not yet", "maybe not"), *FAIR)},
        [],
    ),
    ("a wrong option twice as long", {A: lesson("00", choice("00-a", "abcde", "abcdefghij"))}, []),
    # ---- a numeric question names its unit (08-score-matrix-bytes: "how many bytes")
    (
        "unit not named",
        {A: lesson("00", numeric_in("00-a", 64, "MiB", "How large is the score matrix?"))},
        [f"{A}: question '00-a': the prompt does not say the answer's unit (MiB)"],
    ),
    ("unit named", {A: lesson("00", numeric_in("00-a", 64, "MiB", "How many $\\mathrm{MiB}$ (mib)?"))}, []),
    (
        "unit inside a word",
        {A: lesson("00", numeric_in("00-a", 3, "bit", "How many bits?"))},
        [f"{A}: question '00-a': the prompt does not say the answer's unit (bit)"],
    ),
    # ---- the same answer and example in two lessons (issue 23: GQA's "head 7" in 04 and 05)
    (
        "same answer and example in two lessons",
        {
            A: lesson(
                "00", asked("00-a", "With 8 query heads and 2 groups, which group has head 7?", "Group 1.")
            ),
            B: lesson("01", asked("01-a", "Head $7$ of $8$ in $2$ groups: which group?", "group 1")),
        },
        [
            f"{B}: question '01-a': same answer and example as question '00-a' of lesson 00 (both normalise "
            "to 'group 1'; numbers 2, 7, 8)"
        ],
    ),
    (
        "same answer, another example",
        {
            A: lesson(
                "00", asked("00-a", "With 8 query heads and 2 groups, which group has head 7?", "Group 1.")
            ),
            B: lesson(
                "01", asked("01-a", "With 8 query heads and 4 groups, which group has head 3?", "Group 1.")
            ),
        },
        [],
    ),
    (
        "same answer, no numbers",
        {
            A: lesson("00", asked("00-a", "Why scale?", "To keep it small.")),
            B: lesson("01", asked("01-a", "Why?", "To keep it small.")),
        },
        [],
    ),
    # ---- recall answers: one sentence, at most 30 words
    (
        "two sentences",
        {A: lesson("00", recall("00-a", "It scales. It also centres."))},
        [f"{A}: question '00-a': answer has 2 sentences (keep it to one)"],
    ),
    (
        "three sentences, one a question",
        {A: lesson("00", recall("00-a", 'Why? "Because." It does'))},
        [f"{A}: question '00-a': answer has 3 sentences (keep it to one)"],
    ),
    (
        "a second paragraph is a second sentence",
        {A: lesson("00", recall("00-a", "It scales\n\nby the root"))},
        [f"{A}: question '00-a': answer has 2 sentences (keep it to one)"],
    ),
    (
        "periods in numbers, math, code and abbreviations end no sentence",
        {
            A: lesson(
                "00",
                recall(
                    "00-a", "About 0.5 (i.e. half), vs. $x. y$ and `a. b` etc. as in\n`np.exp`, cf. below."
                ),
            )
        },
        [],
    ),
    ("30 words", {A: lesson("00", recall("00-a", words(30)))}, []),
    (
        "31 words",
        {A: lesson("00", recall("00-a", words(31)))},
        [f"{A}: question '00-a': answer has 31 words (at most 30)"],
    ),
    (
        "a math or code span is one word",
        {A: lesson("00", recall("00-a", words(28) + " $a + b = c$ `x = y + z`"))},
        [],
    ),
    (
        "two sentences and too long",
        {A: lesson("00", recall("00-a", words(20) + ". " + words(20)))},
        [
            f"{A}: question '00-a': answer has 2 sentences (keep it to one)",
            f"{A}: question '00-a': answer has 40 words (at most 30)",
        ],
    ),
    # ---- choice options: at most 25 words
    ("25-word options", {A: lesson("00", choice("00-a", "no", words(25), "maybe"))}, []),
    (
        "26-word options",
        {A: lesson("00", choice("00-a", words(26), "no", words(27)))},
        [
            f"{A}: question '00-a': options[1] has 26 words (at most 25)",
            f"{A}: question '00-a': options[3] has 27 words (at most 25)",
        ],
    ),
    # ---- duplicate answers within a lesson
    (
        "same number",
        {A: lesson("00", numeric("00-a", 64), numeric("00-b", 64.0), recall("00-c", "$64$"))},
        [
            f"{A}: question '00-b': same answer as question '00-a' (both equal 64)",
            f"{A}: question '00-c': same answer as question '00-a' (both equal 64)",
        ],
    ),
    (
        "same text once normalised",
        {
            A: lesson(
                "00",
                recall("00-a", "The *softmax*."),
                choice("00-b", "the softmax", "the softmax again", "x"),
                recall("00-c", "The `softmax`!"),
                recall("00-d", "soft-max"),
            )
        },
        [
            f"{A}: question '00-b': same answer as question '00-a' (both normalise to 'the softmax')",
            f"{A}: question '00-c': same answer as question '00-a' (both normalise to 'the softmax')",
        ],
    ),
    (
        "two right options",
        {A: lesson("00", choice("00-a", "no", "yes"), choice("00-b", "No", "yes or no"))},
        [f"{A}: question '00-b': same answer as question '00-a' (both normalise to 'no')"],
    ),
    (
        "a wrong option may repeat an answer; other lessons may too",
        {
            A: lesson("00", recall("00-a", "no"), choice("00-b", "yes", "no", "maybe or no")),
            B: lesson("01", recall("01-a", "no"), numeric("01-b", 1)),
        },
        [],
    ),
    # ---- right option longest: more than 40% of the choice questions, per file and over the bank
    (
        "2 of 5: at most 40%",
        {A: lesson("00", *((long if x in "ab" else fair)(f"00-{x}") for x in "abcde"))},
        [],
    ),
    (
        "3 of 5 in one file, 3 of 7 over the bank",
        {
            A: lesson("00", *((long if x in "ace" else fair)(f"00-{x}") for x in "abcde")),
            B: lesson("01", fair("01-a"), fair("01-b"), recall("01-c", "R")),
        },
        [
            f"{A}: {BIAS} 3 of 5 choice questions (60%, more than 40%): 00-a, 00-c, 00-e",
            f"question bank: {BIAS} 3 of 7 choice questions (42.9%, more than 40%): {A} 3 of 5, {B} 0 of 2",
        ],
    ),
    (
        "2 of 2 in one file, 2 of 5 over the bank",
        {
            A: lesson("00", long("00-a"), long("00-b"), recall("00-c", "R")),
            B: lesson("01", fair("01-a"), fair("01-b"), fair("01-c")),
        },
        [f"{A}: {BIAS} 2 of 2 choice questions (100%, more than 40%): 00-a, 00-b"],
    ),
    (
        "1 of 3 and 2 of 4, 3 of 7 over the bank",
        {
            A: lesson("00", long("00-a"), fair("00-b"), fair("00-c")),
            B: lesson("01", long("01-a"), fair("01-b"), fair("01-c"), long("01-d")),
        },
        [
            f"{B}: {BIAS} 2 of 4 choice questions (50%, more than 40%): 01-a, 01-d",
            f"question bank: {BIAS} 3 of 7 choice questions (42.9%, more than 40%): {A} 1 of 3, {B} 2 of 4",
        ],
    ),
    # ---- order: file by file, each question's warnings in order, then the file's; the bank's last
    (
        "order",
        {
            A: lesson("00", recall("00-a", "One. Two."), long("00-b"), recall("00-c", "one")),
            B: lesson("01", choice("01-a", words(26), "no"), numeric("01-b", 2), numeric("01-c", 2)),
        },
        [
            f"{A}: question '00-a': answer has 2 sentences (keep it to one)",
            f"{A}: {BIAS} 1 of 1 choice questions (100%, more than 40%): 00-b",
            f"{B}: question '01-a': the right option is 46.50 times as long as the longest other one (under "
            "1.3: a learner must not find it by its length)",
            f"{B}: question '01-a': options[1] has 26 words (at most 25)",
            f"{B}: question '01-c': same answer as question '01-b' (both equal 2)",
            f"{B}: {BIAS} 1 of 1 choice questions (100%, more than 40%): 01-a",
            f"question bank: {BIAS} 2 of 2 choice questions (100%, more than 40%): {A} 1 of 1, {B} 1 of 1",
        ],
    ),
]


@pytest.mark.parametrize(("files", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_lint(tmp_path: Path, files: dict[str, str], expected: list[str]) -> None:
    assert [str(warning) for warning in lint(bank_of(tmp_path, files))] == expected


def test_lengths_as_rendered(tmp_path: Path) -> None:
    """Markup does not count; a right option as long as the longest other one is not the longest."""
    bank = bank_of(
        tmp_path,
        {
            A: lesson(
                "00",
                choice("00-a", "`$x$`", "xy"),  # 1 character against 2
                choice("00-b", "**ab**", "cd"),  # 2 against 2
                choice("00-c", "$\\sqrt{d}$", "sqrt", "s"),  # 7 ("sqrt{d}") against 4 and 1
                choice("00-d", "a  b\n c", "abcd"),  # 5 ("a b c") against 4
            )
        },
    )
    assert [right_option_is_longest(q) for q in bank] == [False, False, True, True]
    assert [rendered_length(q.options[0].text) for q in bank] == [1, 2, 7, 5]
    with pytest.raises(TypeError) as caught:
        right_option_is_longest(Question("00-r", "00", "recall", "P", "A", "E", "S"))
    assert str(caught.value) == "question '00-r' is a recall question; only choice questions have options"


@pytest.mark.parametrize(
    ("text", "sentences", "n_words"),
    [
        ("", 0, 0),
        ("One.", 1, 1),
        ("One. two", 2, 2),
        ("Is it? Yes!", 2, 3),
        ("(As said.) Then", 2, 3),
        ("E.g. this, i.e. that", 1, 4),
        ("$$a. b$$ and ```\nx. y\n``` and \\$5. Then", 2, 6),
        ("Costs \\$5. Then $x$", 2, 4),
        ("first\n  \nsecond", 2, 2),
        ("wrapped\nline", 1, 2),
    ],
)
def test_sentences_and_words(text: str, sentences: int, n_words: int) -> None:
    assert (sentence_count(text), word_count(text)) == (sentences, n_words)


@pytest.mark.parametrize(
    ("answer", "key"),
    [
        (64, 64.0),
        (0.5, 0.5),
        ("$-0.50$", -0.5),
        ("\N{MINUS SIGN}3", -3.0),
        ("1e3", 1000.0),
        ("NaN", "nan"),
        ("The `Soft-max`, $\\sqrt{d_k}$!", "the soft max sqrt d k"),
        ("  two\n words ", "two words"),
    ],
)
def test_normalise(answer: str | float, key: float | str) -> None:
    assert normalise(answer) == key


def test_warning_records() -> None:
    assert str(LintWarning("00-a.toml", "00-a", "m")) == "00-a.toml: question '00-a': m"
    assert str(LintWarning("00-a.toml", None, "m")) == "00-a.toml: m"
    assert str(LintWarning(None, None, "m")) == "question bank: m"


# ---- python -m course check

CHECKED = {
    A: lesson("00", recall("00-a", "One. Two."), fair("00-b"), numeric("00-c", 2)),
    B: lesson("01", numeric("01-a", 2), numeric("01-b", 2)),
}


def check(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["check", *map(str, args)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_check_prints_the_warnings(tmp_path: Path) -> None:
    directory = write(tmp_path / "bank", CHECKED)
    expected = (
        "question bank OK: 5 questions in 2 lessons\n"
        "kinds: 1 choice, 3 numeric, 1 recall; the right option is the longest in 0 of 1 choice questions "
        "(0%)\n"
        f"{A}: question '00-a': answer has 2 sentences (keep it to one)\n"
        f"{B}: question '01-b': same answer as question '01-a' (both equal 2)\n"
        "2 warnings\n"
    )
    assert check("--bank", directory) == (0, expected, "")
    assert check("--bank", directory, "--strict") == (1, expected, "")


def test_check_one_warning(tmp_path: Path) -> None:
    directory = write(tmp_path / "bank", {A: CHECKED[A]})
    expected = (
        "question bank OK: 3 questions in 1 lesson\n"
        "kinds: 1 choice, 1 numeric, 1 recall; the right option is the longest in 0 of 1 choice questions "
        "(0%)\n"
        f"{A}: question '00-a': answer has 2 sentences (keep it to one)\n"
        "1 warning\n"
    )
    assert check("--bank", directory, "--strict") == (1, expected, "")


def test_check_without_warnings(tmp_path: Path) -> None:
    directory = write(tmp_path / "bank", {B: lesson("01", numeric("01-a", 2), recall("01-b", "Two."))})
    expected = "question bank OK: 2 questions in 1 lesson\nkinds: 1 numeric, 1 recall\nno warnings\n"
    assert check("--bank", directory) == (0, expected, "")
    assert check("--bank", directory, "--strict") == (0, expected, "")


def test_check_an_invalid_bank_is_not_linted(tmp_path: Path) -> None:
    directory = write(tmp_path / "bank", {A: lesson("00", recall("00-a", "One. Two."), recall("00-a", "x"))})
    assert check("--bank", directory, "--strict") == (
        1,
        f"{A}: question '00-a': field 'id': duplicate of question #1 in {A}\nquestion bank has 1 problem\n",
        "",
    )


# ---- the shipped bank


def test_shipped_bank_has_no_length_bias() -> None:
    """The right option is the longest in at most 40% of the choice questions, in the bank and per lesson."""
    bank = load_bank()
    choices = [q for q in bank if q.kind == "choice"]
    longest = [q.id for q in choices if right_option_is_longest(q)]
    assert len(longest) <= 0.4 * len(choices), longest
    assert length_bias(bank) == []
