"""`course.terminal.text`: the question bank's Markdown as plain text for a terminal, exact outputs.

The inputs marked with a question id are that question's text in the shipped bank, copied here so that an
edit of the bank does not change what these tests check."""

from __future__ import annotations

import pytest

from course.bank import Kind, load_bank
from course.terminal.text import terminal_text

CASES = [
    pytest.param(  # 01-naive-big-scores prompt: a sum, subscripts inside superscripts, code spans
        "In float64, what does the naive softmax $e^{x_i} / \\sum_j e^{x_j}$, computed literally, "
        "return for the\nscores `[1000, 1001, 1002]`?",
        60,
        "In float64, what does the naive softmax\n"
        "e^(x_i) / ∑_j e^(x_j), computed literally, return for the\n"
        "scores [1000, 1001, 1002]?",
        id="sum-and-scripts",
    ),
    pytest.param(  # 01-scale-dot-vs-cosine explanation: norms, \cdot, \cos
        r"$q \cdot k = \lVert q \rVert \lVert k \rVert \cos(q, k)$: the dot product grows with the "
        "length of\neach vector.",
        40,
        "q · k = ‖q‖ ‖k‖ cos(q, k): the dot\nproduct grows with the length of each\nvector.",
        id="norms",
    ),
    pytest.param(  # 01-mixture-in-range prompt: strong emphasis
        "Which first component can the weighted average **not** have?",
        80,
        "Which first component can the weighted average NOT have?",
        id="bold",
    ),
    pytest.param(  # 05-mask-scores-not-weights answer: bold around math
        "Set that key's **score** to $-\\infty$ **before** the softmax, so that its weight comes out "
        "exactly 0.",
        50,
        "Set that key's SCORE to -∞ BEFORE the softmax, so\nthat its weight comes out exactly 0.",
        id="bold-and-infinity",
    ),
    pytest.param(  # 02-saturation prompt: a square root of one word
        "**Without** the $1/\\sqrt{d_k}$\nscaling, what happens to a query's attention weights as "
        "$d_k$ grows?",
        80,
        "WITHOUT the 1/√d_k scaling, what happens to a query's attention weights as d_k\ngrows?",
        id="sqrt",
    ),
    pytest.param(  # 00-exp-sign why: Unicode superscripts, \approx, \times
        "However negative $x$ is, $e^x$ is positive, only very small: "
        "$e^{-50} \\approx 1.9 \\times 10^{-22}$.",
        80,
        "However negative x is, e^x is positive, only very small: e⁻⁵⁰ ≈ 1.9 × 10⁻²².",
        id="superscripts",
    ),
    pytest.param(  # 02-vanishing-gradient answer: partial derivatives, a Kronecker delta
        "Every entry of its Jacobian, $\\partial p_i/\\partial s_j = p_i(\\delta_{ij} - p_j)$, "
        "then has a factor\nclose to 0.",
        80,
        "Every entry of its Jacobian, ∂ p_i/∂ s_j = p_i(δ_ij - p_j), then has a factor\nclose to 0.",
        id="partials",
    ),
    pytest.param(  # 03-weights-count prompt: \mathrm, \top
        "How many entries does its weight matrix $A = \\mathrm{softmax}(QK^\\top/\\sqrt{d_k})$ have?",
        80,
        "How many entries does its weight matrix A = softmax(QKᵀ/√d_k) have?",
        id="softmax-formula",
    ),
    pytest.param(  # 00-uniform-weights-mean explanation: \frac
        "The uniform distribution over $n$ outcomes gives each one $1/n$, and $\\sum_i \\frac{1}{n} x_i$ is\n"
        "the mean.",
        80,
        "The uniform distribution over n outcomes gives each one 1/n, and ∑_i 1/n x_i is\nthe mean.",
        id="frac",
    ),
    pytest.param(  # 05-fully-masked-fix explanation, start: \infty in a superscript
        "The exponentials are then $e^{-\\infty} = 0$, the weights 0.",
        80,
        "The exponentials are then e^(-∞) = 0, the weights 0.",
        id="superscript-infinity",
    ),
    pytest.param(  # a recurrence: a non-word subscript is bracketed
        "$h_t = \\tanh(x_t W_x + h_{t-1} W_h)$",
        80,
        "h_t = tanh(x_t W_x + h_(t-1) W_h)",
        id="subscript-expression",
    ),
    pytest.param(  # 01-naive-big-scores explanation: code spans with spaces, never split
        "$e^{x}$ overflows to `inf` above about 709.8 in float64, and `inf / inf` is `nan` (section 5).",
        40,
        "e^x overflows to inf above about 709.8\nin float64, and inf / inf is nan\n(section 5).",
        id="code-spans",
    ),
    pytest.param(  # 00-variance-by-hand explanation, end: a code span with an equals sign, \$-free text
        '"sample" variance, `np.var(x, ddof=1)`, divides by $n - 1$ and gives $20/3$.)',
        80,
        '"sample" variance, np.var(x, ddof=1), divides by n - 1 and gives 20/3.)',
        id="code-with-arguments",
    ),
    pytest.param(  # no word is broken, not even one longer than the width
        "A reshape refills `(B, h, T, d_head)` row-major, last index fastest.",
        12,
        "A reshape\nrefills\n(B, h, T, d_head)\nrow-major,\nlast index\nfastest.",
        id="narrow",
    ),
    pytest.param(
        "First:\n\n- a list item that is long enough to wrap\n- $x_i$ and `y`\n1. numbered\n   and continued",
        24,
        "First:\n\n- a list item that is\n  long enough to wrap\n- x_i and y\n1. numbered and\n   continued",
        id="lists",
    ),
    pytest.param(
        "The softmax:\n\n$$\\mathrm{softmax}(x)_i = e^{x_i} / \\sum_j e^{x_j}$$\n\nfor every $i$.",
        80,
        "The softmax:\n\n    softmax(x)_i = e^(x_i) / ∑_j e^(x_j)\n\nfor every i.",
        id="display-math",
    ),
    pytest.param(
        "$$\nd_k = d_{model} / h\n$$",
        80,
        "    d_k = d_model / h",
        id="display-math-on-lines-of-its-own",
    ),
    pytest.param(
        "Run:\n\n```python\nscores = q @ k.T   # **not** bold, $not$ math\n```\n\nthen look.",
        20,
        "Run:\n\nscores = q @ k.T   # **not** bold, $not$ math\n\nthen look.",
        id="fenced-code",
    ),
    pytest.param(
        "A first paragraph\nwritten on two lines.\n\nA second one, *emphasised* and with a \\$5 price.",
        80,
        "A first paragraph written on two lines.\n\nA second one, emphasised and with a $5 price.",
        id="paragraphs-emphasis-escapes",
    ),
]


@pytest.mark.parametrize(("markdown", "width", "expected"), CASES)
def test_terminal_text(markdown: str, width: int, expected: str) -> None:
    assert terminal_text(markdown, width) == expected


def test_every_text_of_the_shipped_bank_is_rendered_without_markup() -> None:
    """No dollar, backslash, brace or emphasis mark is left of the bank's math and Markdown, and no line is
    wider than asked unless it is one unbreakable word or formula; a code question's solution is shown line
    for line as written."""
    bank = load_bank()
    width = 60
    for lesson in bank.lessons():
        for question in bank.questions(lesson):
            texts = [question.prompt, question.explanation]
            if question.kind == Kind.CODE:  # its answer is code, shown as it is written
                assert terminal_text(str(question.answer), width) == str(question.solution).rstrip("\n")
            else:
                texts.append(str(question.answer))
            texts += [text for option in question.options for text in (option.text, option.why)]
            for text in texts:
                shown = terminal_text(text, width)
                leftovers = [mark for mark in ("$", "\\", "{", "}", "**", "`") if mark in shown]
                assert leftovers == [], (question.id, text, shown)
                for line in shown.split("\n"):
                    assert len(line) <= width or " " not in line.strip(), (question.id, line)
