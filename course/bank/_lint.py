"""Warnings about a valid question bank: what `course.bank` accepts but a good question avoids.

`lint` never rejects a bank (that is `course.bank.load_bank`'s job); it returns `LintWarning` records, which
``python -m course check`` prints after "question bank OK". The rules:

- **An answer fits in one sentence.** A recall answer has one sentence and at most `MAX_ANSWER_WORDS` (30)
  words; a choice option has at most `MAX_OPTION_WORDS` (25) words. Words are the whitespace-separated
  tokens of the text once each code span (```...```, `` `...` ``) and each math span (``$...$``,
  ``$$...$$``) is counted as one word. A second sentence starts where ``.``, ``!`` or ``?`` (outside code
  and math, and not ending "e.g.", "i.e.", "etc.", "vs." or "cf.") is followed by white space and more
  text, or where a blank line starts a new paragraph.
- **The right option does not give itself away by its length.** A choice question's right option is
  *the longest* when its rendered length (`rendered_length`: the text without the Markdown and math
  markers `` ` ``, ``$``, ``*``, ``\\``, white space collapsed) is strictly greater than every other
  option's. Over the bank, and within each lesson, that may hold for at most `MAX_LONGEST_RIGHT_SHARE`
  (40%) of the choice questions; above it, one warning for the bank (with every lesson file's count) and
  one for each such lesson file (naming its questions). Single questions are not warned about: a right
  option may well be the longest, as long as learners cannot count on it.
- **The right option is not clearly the longest.** A choice question's right option may not be
  `MAX_RIGHT_OPTION_RATIO` (1.3) times as long (`rendered_length`) as every other option, or more: a learner
  could pick it by its length alone, without the share above ever being reached.
- **The right option is not the only one that explains itself.** When a choice question's right option is the
  longest (`right_option_is_longest`) and the only option that gives a reason (`gives_reason`: after a ``:``,
  ``;`` or a dash, or with a word such as "because", "so" or "which", outside code and math), a learner can
  pick it as the careful-sounding one without knowing the answer: give the wrong options their (wrong) reasons
  too, or cut the right one's.
- **A code question asks for one step.** Its solution has `MIN_CODE_LINES` (3) to `MAX_CODE_LINES` (15)
  lines, blank ones not counted: a card asks for what a learner writes from memory in a few minutes, not a
  whole exercise. (The rules about options do not apply to code questions, nor the one-sentence answer.)
- **A numeric question says its unit.** A numeric question with a unit names that unit in its prompt (the
  learner may answer in another unit of the same kind: `course.bank.UNITS`).
- **No two questions of a lesson have the same answer.** Answers are compared once normalised (`normalise`):
  numbers (numeric answers, and recall answers or right options that are a number) by value; text (recall
  answers and choice questions' right options) lowercased, without Markdown and math markers and
  punctuation, white space collapsed. The later question is warned about, naming the first.
- **No two lessons ask the same example.** Two questions of different lessons with the same answer and the
  same numbers in their prompts (`example_numbers`, at least one) ask the same thing twice: the later lesson's
  is warned about, naming the first.

Two checks one might expect are not here. Every option has its explanation (``why``): the loader already
rejects an option whose ``why`` is missing or empty, so a lint check could never fire. And the position of
the right option is not checked: options are shuffled when they are shown, so their order in the file does
not reach the learner.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from course.bank._bank import Bank, Question
from course.bank._kinds import Kind

__all__ = [
    "MAX_ANSWER_WORDS",
    "MAX_CODE_LINES",
    "MAX_LONGEST_RIGHT_SHARE",
    "MAX_OPTION_WORDS",
    "MAX_RIGHT_OPTION_RATIO",
    "MIN_CODE_LINES",
    "LintWarning",
    "example_numbers",
    "figures",
    "gives_reason",
    "length_bias",
    "lint",
    "normalise",
    "rendered_length",
    "right_option_is_longest",
    "sentence_count",
    "word_count",
]

MAX_ANSWER_WORDS = 30
MAX_OPTION_WORDS = 25
MAX_LONGEST_RIGHT_SHARE = 0.4
MAX_RIGHT_OPTION_RATIO = 1.3
MIN_CODE_LINES, MAX_CODE_LINES = 3, 15

# Code first (a '$' inside code is not math), then display math, then inline math; '\$' is a literal dollar.
_SPANS = re.compile(r"```.*?```|`[^`\n]+`|\$\$.*?\$\$|(?<!\\)\$.+?(?<!\\)\$", re.DOTALL)
_SENTENCE_END = re.compile(r"[.!?]['\")\]]*\s+\S|\n[ \t]*\n\s*\S")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
_MARKUP = re.compile(r"[`$*\\]")
_NOT_WORD = re.compile(r"[^\w\s]|_")
_REASON = re.compile(
    r"[:;\N{EM DASH}\N{EN DASH}]|\s-\s"
    r"|\b(?:because|since|so|as|which|thus|therefore|hence|whereas|otherwise|unless)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"[-+\N{MINUS SIGN}]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True)
class LintWarning:
    """One warning: the file it is about (None: the whole bank), the question (None: the whole file or bank),
    and what is wrong. Printed as ``FILE: question 'ID': message``, ``FILE: message`` or
    ``question bank: message``."""

    file: str | None
    question: str | None
    message: str

    def __str__(self) -> str:
        parts = [self.file if self.file is not None else "question bank"]
        if self.question is not None:
            parts.append(f"question {self.question!r}")
        parts.append(self.message)
        return ": ".join(parts)


def _spans_as_words(text: str) -> str:
    """`text` with each code and math span replaced by one placeholder word, ``x``."""
    return _SPANS.sub(" x ", text)


def word_count(text: str) -> int:
    """The number of words in `text`, each code or math span counting as one."""
    return len(_spans_as_words(text).split())


def sentence_count(text: str) -> int:
    """The number of sentences in `text` (see the module docstring for where one ends)."""
    prose = _spans_as_words(text).strip()
    if not prose:
        return 0
    ends = [
        match
        for match in _SENTENCE_END.finditer(prose)
        if not _ends_with_abbreviation(prose, match.start() + 1)
    ]
    return 1 + len(ends)


def _ends_with_abbreviation(text: str, end: int) -> bool:
    """Whether ``text[:end]`` ends with one of `_ABBREVIATIONS`, in any case. It looks at the last few
    characters only (copying the whole prefix for each sentence end made `sentence_count` quadratic)."""
    window = max(len(abbreviation) for abbreviation in _ABBREVIATIONS)
    return text[max(0, end - window) : end].lower().endswith(_ABBREVIATIONS)


def rendered_length(text: str) -> int:
    """The length of `text` as a learner sees it, roughly: without `` ` ``, ``$``, ``*`` and ``\\``, white
    space collapsed."""
    return len(" ".join(_MARKUP.sub("", text).split()))


def right_option_is_longest(question: Question) -> bool:
    """Whether a choice question's right option is strictly longer (`rendered_length`) than every other."""
    lengths = [rendered_length(option.text) for option in question.options]
    right = lengths.pop(question.correct_option)
    return all(right > length for length in lengths)


def gives_reason(text: str) -> bool:
    """Whether an option's text explains itself: a ``:``, ``;`` or dash, or a word such as "because", "so" or
    "which", outside its code and math spans."""
    return _REASON.search(_spans_as_words(text)) is not None


def _only_reasoned_longest(question: Question) -> bool:
    """Whether a choice question's right option is the longest and the only one that gives a reason."""
    reasons = [gives_reason(option.text) for option in question.options]
    return right_option_is_longest(question) and reasons[question.correct_option] and sum(reasons) == 1


def normalise(answer: str | int | float) -> float | str:
    """The form in which answers are compared: a number when the answer is one (numeric answers; text that,
    without markup, reads as a number), otherwise the text lowercased, without markup and punctuation, white
    space collapsed."""
    if not isinstance(answer, str):
        return float(answer)
    plain = " ".join(_MARKUP.sub("", answer).split())
    if _NUMBER.fullmatch(plain):
        return float(plain.replace("\N{MINUS SIGN}", "-"))
    return " ".join(_NOT_WORD.sub(" ", plain.lower()).split())


def example_numbers(text: str) -> frozenset[float]:
    """The numbers in a prompt, by value, markup ignored (``$n = 4096$`` gives 4096): its example."""
    plain = _MARKUP.sub(" ", text).replace("{,}", "")
    return frozenset(float(number.replace("\N{MINUS SIGN}", "-")) for number in _NUMBER.findall(plain))


def _right_option_ratio(question: Question) -> float:
    """How many times as long as the longest other option a choice question's right option is."""
    lengths = [rendered_length(option.text) for option in question.options]
    right = lengths.pop(question.correct_option)
    return right / max(1, max(lengths))


def _unit_named(question: Question) -> bool:
    """Whether a numeric question's prompt names its unit (as a word, in any case)."""
    pattern = rf"(?<![\w]){re.escape(question.unit)}(?![\w])"
    return re.search(pattern, _MARKUP.sub(" ", question.prompt), re.IGNORECASE) is not None


def _answer_warnings(question: Question) -> list[str]:
    messages: list[str] = []
    if question.kind == Kind.CHOICE:
        ratio = _right_option_ratio(question)
        if ratio >= MAX_RIGHT_OPTION_RATIO:
            messages.append(
                f"the right option is {ratio:.2f} times as long as the longest other one (under "
                f"{MAX_RIGHT_OPTION_RATIO:g}: a learner must not find it by its length)"
            )
        if _only_reasoned_longest(question):
            messages.append(
                "the right option is the longest and the only one that gives a reason: give the wrong "
                "options their reasons too, or cut the right one's"
            )
    if question.kind == Kind.NUMERIC and question.unit and not _unit_named(question):
        messages.append(f"the prompt does not say the answer's unit ({question.unit})")
    if question.kind == Kind.RECALL:
        assert isinstance(question.answer, str)
        sentences, words = sentence_count(question.answer), word_count(question.answer)
        if sentences > 1:
            messages.append(f"answer has {sentences} sentences (keep it to one)")
        if words > MAX_ANSWER_WORDS:
            messages.append(f"answer has {words} words (at most {MAX_ANSWER_WORDS})")
    if question.kind == Kind.CODE and question.solution is not None:
        lines = sum(1 for line in question.solution.splitlines() if line.strip())
        if not MIN_CODE_LINES <= lines <= MAX_CODE_LINES:
            messages.append(
                f"the solution has {lines} line{'' if lines == 1 else 's'} ({MIN_CODE_LINES} to "
                f"{MAX_CODE_LINES}: a card asks for one step, not a whole exercise)"
            )
    for number, option in enumerate(question.options, start=1):
        words = word_count(option.text)
        if words > MAX_OPTION_WORDS:
            messages.append(f"options[{number}] has {words} words (at most {MAX_OPTION_WORDS})")
    return messages


def _same(value: float | str) -> str:
    return f"both equal {value:g}" if isinstance(value, float) else f"both normalise to {value!r}"


def _by_file(questions: Iterable[Question]) -> dict[str, list[Question]]:
    files: dict[str, list[Question]] = {}
    for question in questions:
        files.setdefault(question.source, []).append(question)
    return files


def _percent(share: float) -> str:
    text = f"{share * 100:.1f}".removesuffix(".0")
    return f"{text}%"


def _share_message(longest: int, choices: int, noun: str = "choice questions") -> str:
    return (
        f"the right option is the longest in {longest} of {choices} {noun} "
        f"({_percent(longest / choices)}, more than {_percent(MAX_LONGEST_RIGHT_SHARE)})"
    )


def length_bias(bank: Bank, *, predictions: bool = False) -> list[LintWarning]:
    """The right-option length warnings: one per lesson file where the right option is the longest in more
    than `MAX_LONGEST_RIGHT_SHARE` of its choice questions, then one for the bank when that holds over
    all of them. With `predictions`, the same over the choice predictions instead."""
    warnings: list[LintWarning] = []
    counts: list[tuple[str, int, int]] = []  # file, right option longest, choice questions
    noun = "choice predictions" if predictions else "choice questions"
    for file, questions in _by_file(bank.predictions() if predictions else bank).items():
        choices = [q for q in questions if q.kind == Kind.CHOICE]
        longest = [q.id for q in choices if right_option_is_longest(q)]
        if not choices:
            continue
        counts.append((file, len(longest), len(choices)))
        if len(longest) > MAX_LONGEST_RIGHT_SHARE * len(choices):
            message = f"{_share_message(len(longest), len(choices), noun)}: {', '.join(longest)}"
            warnings.append(LintWarning(file, None, message))
    longest_total = sum(n for _, n, _ in counts)
    choices_total = sum(n for _, _, n in counts)
    if longest_total > MAX_LONGEST_RIGHT_SHARE * choices_total:
        per_file = ", ".join(f"{file} {n} of {total}" for file, n, total in counts)
        message = f"{_share_message(longest_total, choices_total, noun)}: {per_file}"
        warnings.append(LintWarning(None, None, message))
    return warnings


def figures(bank: Bank) -> str:
    """The bank's figures in one line: its questions by kind and, when it has choice questions, how often the
    right option is the longest (``kinds: 2 choice, 1 recall; the right option is the longest in 1 of 2 choice
    questions (50%)``)."""
    kinds: dict[str, int] = {}
    for question in bank:
        kinds[question.kind] = kinds.get(question.kind, 0) + 1
    line = "kinds: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    choices = [question for question in bank if question.kind == Kind.CHOICE]
    if choices:
        longest = sum(right_option_is_longest(question) for question in choices)
        line += (
            f"; the right option is the longest in {longest} of {len(choices)} choice questions "
            f"({_percent(longest / len(choices))})"
        )
    return line


def lint(bank: Bank) -> list[LintWarning]:
    """Every warning about `bank`: file by file, each question's, then the file's; the bank's last."""
    warnings: list[LintWarning] = []
    bias = length_bias(bank) + length_bias(bank, predictions=True)
    predicted = _by_file(bank.predictions())
    examples: dict[tuple[float | str, frozenset[float]], Question] = {}  # the first to ask each
    for file, questions in _by_file(bank).items():
        first: dict[float | str, str] = {}
        for question in questions:
            messages = _answer_warnings(question)
            key = normalise(question.answer)
            if key in first:
                messages.append(f"same answer as question {first[key]!r} ({_same(key)})")
            else:
                first[key] = question.id
            numbers = example_numbers(question.prompt)
            earlier = examples.setdefault((key, numbers), question) if numbers else question
            if earlier.lesson != question.lesson:
                messages.append(
                    f"same answer and example as question {earlier.id!r} of lesson {earlier.lesson} "
                    f"({_same(key)}; numbers {', '.join(f'{n:g}' for n in sorted(numbers))})"
                )
            warnings.extend(LintWarning(file, question.id, message) for message in messages)
        for prediction in predicted.get(file, ()):  # a prediction's options are held to a question's rules
            said = _answer_warnings(prediction)
            warnings.extend(LintWarning(file, prediction.id, message) for message in said)
        warnings.extend(warning for warning in bias if warning.file == file)
    warnings.extend(warning for warning in bias if warning.file is None)
    return warnings
