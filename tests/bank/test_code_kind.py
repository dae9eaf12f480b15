"""The code kind in the question bank: its fields read and checked with exact messages, the record, the lint,
``python -m course check`` running each solution and starter through its checker, and the Anki note."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from course.bank import BankError, Kind, Question, lint, load_bank, to_html
from course.publishing._anki import back, front, note_fields
from course.terminal import cli

F = "05-x.toml"
Q = f"{F}: question '05-mask'"

SOLUTION = """\
def causal_mask(t):
    ones = np.ones((t, t), dtype=bool)
    return np.tril(ones)
"""
STARTER = """\
def causal_mask(t):
    raise NotImplementedError
"""


def code_question(*lines: str, qid: str = "05-mask") -> str:
    """A code question checked by `course.checkers.check_causal_mask`: `lines` replace the key they set
    (``-key`` drops it)."""
    fields = {
        "prompt": "prompt = '''Write `causal_mask(t)`: a (t, t) boolean mask, True where query i may see key "
        "j.'''",
        "checker": 'checker = "check_causal_mask"',
        "function": 'function = "causal_mask"',
        "starter": f"starter = '''\n{STARTER}'''",
        "solution": f"solution = '''\n{SOLUTION}'''",
        "explanation": "explanation = '''The lower triangle, diagonal included: `np.tril`.'''",
        "section": 'section = "3. The causal mask"',
    }
    extra = []
    for line in lines:
        key = line.split("=", 1)[0].strip()
        if line.startswith("-"):
            fields.pop(line[1:])
        elif key in fields:
            fields[key] = line
        else:
            extra.append(line)
    body = "\n".join([f'id = "{qid}"', 'kind = "code"', *fields.values(), *extra])
    return f"\n[[question]]\n{body}\n"


def write_bank(tmp_path: Path, *questions: str) -> Path:
    (tmp_path / F).write_text('lesson = "05"\n' + "".join(questions or (code_question(),)), encoding="utf-8")
    return tmp_path


def problems(tmp_path: Path, *questions: str) -> list[str]:
    with pytest.raises(BankError) as caught:
        load_bank(write_bank(tmp_path, *questions))
    return caught.value.problems


def test_a_code_question_is_read_with_its_fields(tmp_path: Path) -> None:
    question = load_bank(write_bank(tmp_path))["05-mask"]
    assert question.kind is Kind.CODE
    assert (question.checker, question.function) == ("check_causal_mask", "causal_mask")
    assert (question.starter, question.solution) == (STARTER, SOLUTION)
    assert question.answer == f"```python\n{SOLUTION}```"
    assert question.options == () and question.tolerance == 0.0 and question.unit == ""
    assert to_html(str(question.answer)) == (
        "<pre><code>def causal_mask(t):\n    ones = np.ones((t, t), dtype=bool)\n    return np.tril(ones)"
        "</code></pre>"
    )
    with pytest.raises(TypeError) as caught:
        question.is_correct("x")
    assert str(caught.value) == (
        "question '05-mask' is a code question: its checker check_causal_mask grades it "
        "(course.checkers.run_code), is_correct does not"
    )


def test_other_kinds_have_no_code_fields(tmp_path: Path) -> None:
    (tmp_path / "00-a.toml").write_text(
        'lesson = "00"\n[[question]]\nid = "00-a"\nkind = "recall"\nprompt = "P"\nanswer = "A"\n'
        'explanation = "E"\nsection = "S"\n',
        encoding="utf-8",
    )
    question = load_bank(tmp_path)["00-a"]
    assert (question.checker, question.function, question.starter, question.solution) == (None,) * 4


def test_code_is_dedented_and_trimmed(tmp_path: Path) -> None:
    indented = (
        "solution = '''\n\n    def causal_mask(t):\n"
        "        return np.tril(np.ones((t, t), dtype=bool))\n\n  '''"
    )
    question = load_bank(write_bank(tmp_path, code_question(indented)))["05-mask"]
    assert question.solution == "def causal_mask(t):\n    return np.tril(np.ones((t, t), dtype=bool))\n"


MISSING = "missing (required for code: "
FENCED = r'solution = "def causal_mask(t):\n    s = \"\"\"\n```\n\"\"\"\n    return s\n"'
CASES = [
    ("no checker", ["-checker"], [
        f"{Q}: field 'checker': {MISSING}the name of its checker in course.checkers, e.g. "
        "'check_card_causal_mask')"]),
    ("no function", ["-function"], [
        f"{Q}: field 'function': {MISSING}the name of the function the learner writes, e.g. 'causal_mask')"]),
    ("no starter", ["-starter"], [
        f"{Q}: field 'starter': {MISSING}the code the learner starts from, defining the function)"]),
    ("no solution", ["-solution"], [
        f"{Q}: field 'solution': {MISSING}a worked solution, which passes the checker)"]),
    ("checker not a name", ['checker = "check causal"'], [
        f"{Q}: field 'checker': 'check causal' must name a checker in course.checkers: a Python identifier "
        "starting with check_ (e.g. 'check_card_causal_mask')"]),
    ("checker without check_", ['checker = "causal"'], [
        f"{Q}: field 'checker': 'causal' must name a checker in course.checkers: a Python identifier "
        "starting with check_ (e.g. 'check_card_causal_mask')"]),
    ("checker not a string", ["checker = 3"], [f"{Q}: field 'checker': must be a string (got integer)"]),
    ("function not an identifier", ['function = "causal-mask"'], [
        f"{Q}: field 'function': 'causal-mask' must be a Python identifier, the name of the function the "
        "learner writes (e.g. 'causal_mask')"]),
    ("function a keyword", ['function = "lambda"'], [
        f"{Q}: field 'function': 'lambda' must be a Python identifier, the name of the function the learner "
        "writes (e.g. 'causal_mask')"]),
    ("starter empty", ["starter = ''"], [f"{Q}: field 'starter': must not be empty"]),
    ("starter without the function", ["starter = '''def mask(t):\n    ...\n'''"], [
        f"{Q}: field 'starter': defines no top-level function named 'causal_mask' (def causal_mask(...): the "
        "field 'function')"]),
    ("solution not Python", ["solution = '''def causal_mask(t):\n    return np.tril(\n'''"], [
        f"{Q}: field 'solution': not valid Python: '(' was never closed (line 2)"]),
    ("solution badly indented", ["solution = '''def causal_mask(t):\nreturn 1\n'''"], [
        f"{Q}: field 'solution': not valid Python: expected an indented block after function definition on "
        "line 1 (line 2)"]),
    ("solution with a fence line", [FENCED], [
        f"{Q}: field 'solution': line 3 is only ```, which would end the code block that shows the code"]),
    ("solution with a control character", [r'solution = "def causal_mask(t):\n    return 1\u001b"'], [
        f"{Q}: field 'solution': must not contain control characters (found U+001B at line 2, column 13 of "
        "the text)"]),
    ("an answer", ['answer = "np.tril"'], [
        f"{Q}: field 'answer': not allowed for kind 'code' (the answer of a code question is its solution)"]),
    ("options", ['options = [{ text = "a", why = "b" }]'], [
        f"{Q}: field 'options': not allowed for kind 'code'"]),
    ("every field wrong at once", ['function = "1x"', "-starter", "solution = '''x = (\n'''"], [
        f"{Q}: field 'function': '1x' must be a Python identifier, the name of the function the learner "
        "writes (e.g. 'causal_mask')",
        f"{Q}: field 'starter': {MISSING}the code the learner starts from, defining the function)",
        f"{Q}: field 'solution': not valid Python: '(' was never closed (line 1)"]),
]  # fmt: skip


@pytest.mark.parametrize(("lines", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_code_fields_are_checked(tmp_path: Path, lines: list[str], expected: list[str]) -> None:
    assert problems(tmp_path, code_question(*lines)) == expected


@pytest.mark.parametrize("key", ["checker", "function", "starter", "solution"])
def test_code_keys_belong_to_code_questions(tmp_path: Path, key: str) -> None:
    (tmp_path / "00-a.toml").write_text(
        f'lesson = "00"\n[[question]]\nid = "00-a"\nkind = "recall"\nprompt = "P"\nanswer = "A"\n'
        f'explanation = "E"\nsection = "S"\n{key} = "x"\n',
        encoding="utf-8",
    )
    with pytest.raises(BankError) as caught:
        load_bank(tmp_path)
    assert caught.value.problems == [
        f"00-a.toml: question '00-a': field '{key}': not allowed for kind 'recall'"
    ]


# ---- the lint


def test_the_lint_warns_about_a_solution_too_short_or_too_long(tmp_path: Path) -> None:
    short = "solution = '''def causal_mask(t):\n    return np.tril(np.ones((t, t), dtype=bool))\n'''"
    body = "".join(f"    x{i} = {i}\n" for i in range(15))
    long = f"solution = '''def causal_mask(t):\n{body}\n    return np.tril(np.ones((t, t), dtype=bool))\n'''"
    bank = load_bank(write_bank(tmp_path, code_question(short), code_question(long, qid="05-long")))
    assert [str(warning) for warning in lint(bank)] == [
        f"{F}: question '05-mask': the solution has 2 lines (3 to 15: a card asks for one step, not a whole "
        "exercise)",
        f"{F}: question '05-long': the solution has 17 lines (3 to 15: a card asks for one step, not a whole "
        "exercise)",
    ]


def test_the_lint_has_nothing_to_say_about_a_good_code_question(tmp_path: Path) -> None:
    assert lint(load_bank(write_bank(tmp_path))) == []


# ---- python -m course check


def check(tmp_path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = cli.main(["check", "--bank", str(tmp_path)], stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_check_runs_each_solution_and_starter(tmp_path: Path) -> None:
    write_bank(tmp_path)
    assert check(tmp_path) == (
        0,
        "question bank OK: 1 question in 1 lesson\nkinds: 1 code\nno warnings\n",
        "",
    )


def test_check_reports_a_failing_solution_a_passing_starter_and_a_missing_checker(tmp_path: Path) -> None:
    wrong = (
        "solution = '''def causal_mask(t):\n    ones = np.ones((t, t), dtype=bool)\n"
        "    return ~np.tril(ones)\n'''"
    )
    write_bank(
        tmp_path,
        code_question(wrong),
        code_question(f"starter = '''\n{SOLUTION}'''", qid="05-given"),
        code_question('checker = "check_card_nothing"', qid="05-unknown"),
    )
    assert check(tmp_path) == (
        1,
        f"{F}: question '05-mask': field 'solution': does not pass its checker check_causal_mask: ✗ causal "
        "mask, case 1 of 3 (T = 4): query 0 is blocked from key 0, which it may see (mask[0, 0] should be "
        "True); the mask is inverted (True = blocked is nn.MultiheadAttention's convention); here True "
        "means may attend.\n"
        f"{F}: question '05-given': field 'starter': passes its checker check_causal_mask (a starter leaves "
        "the learner something to write)\n"
        f"{F}: question '05-unknown': field 'checker': course.checkers has no checker named "
        "'check_card_nothing'\n"
        "question bank has 3 problems\n",
        "",
    )


# ---- the Anki note


def test_the_anki_note_shows_the_prompt_and_starter_then_the_solution(tmp_path: Path) -> None:
    question = load_bank(write_bank(tmp_path))["05-mask"]
    assert front(question) == (
        "<p>Write <code>causal_mask(t)</code>: a (t, t) boolean mask, True where query i may see key j.</p>\n"
        "<p>Starter code:</p>\n<pre><code>def causal_mask(t):\n    raise NotImplementedError</code></pre>"
    )
    assert back(question) == (
        '<p class="answer">A worked solution:</p>\n<pre><code>def causal_mask(t):\n'
        "    ones = np.ones((t, t), dtype=bool)\n    return np.tril(ones)</code></pre>\n"
        "<p>The lower triangle, diagonal included: <code>np.tril</code>.</p>"
    )
    assert note_fields(question)[2:] == ["05", "05-mask"]


def test_code_in_an_anki_note_is_escaped_and_keeps_its_dollars() -> None:
    question = Question(
        "05-x", "05", Kind.CODE, "P", "", "E", "S", checker="check_x", function="f",
        starter="def f(a):\n    ...\n", solution='def f(a):\n    return a < 1 and "$x$"\n',
    )  # fmt: skip
    assert back(question).startswith(
        '<p class="answer">A worked solution:</p>\n'
        '<pre><code>def f(a):\n    return a &lt; 1 and "$x$"</code></pre>'
    )
