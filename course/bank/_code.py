"""The fields of a code question (`course.bank.Kind.CODE`), checked without running anything: the names of
its checker and of the function the learner writes, and its starter and solution, which must be Python that
parses and defines that function. Whether the solution passes its checker is ``python -m course check``'s to
say (`course.terminal.check`): running a checker loads numpy, and the bank stays light.
"""

from __future__ import annotations

import ast
import keyword
import re
import textwrap

__all__ = [
    "CHECKER_PREFIX",
    "checker_name_problem",
    "code_block",
    "code_problem",
    "function_name_problem",
    "normalised_code",
]

CHECKER_PREFIX = "check_"
_FENCE_LINE = re.compile(r"^```[ \t]*$", re.MULTILINE)


def checker_name_problem(name: str) -> str | None:
    """Why `name` cannot name a checker of `course.checkers` (an identifier starting with ``check_``)."""
    if name.isidentifier() and not keyword.iskeyword(name) and name.startswith(CHECKER_PREFIX):
        return None
    return (
        f"{name!r} must name a checker in course.checkers: a Python identifier starting with "
        f"{CHECKER_PREFIX} (e.g. 'check_card_causal_mask')"
    )


def function_name_problem(name: str) -> str | None:
    """Why `name` cannot be the name of the function the learner writes."""
    if name.isidentifier() and not keyword.iskeyword(name):
        return None
    return (
        f"{name!r} must be a Python identifier, the name of the function the learner writes "
        "(e.g. 'causal_mask')"
    )


def normalised_code(code: str) -> str:
    """`code` dedented, without the blank lines around it, ending with one newline."""
    lines = textwrap.dedent(code).split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines).rstrip() + "\n"


def code_problem(code: str, function: str | None) -> str | None:
    """Why `code` (normalised) cannot be a starter or a solution: not valid Python (its line said), a line
    that is only ``` (it would end the code block that shows it), or, when `function` is given, no top-level
    ``def`` of it."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        where = f" (line {err.lineno})" if err.lineno else ""
        return f"not valid Python: {err.msg}{where}"
    except ValueError as err:  # a NUL character: the check of control characters reports it first
        return f"not valid Python: {err}"
    fence = _FENCE_LINE.search(code)
    if fence is not None:
        line = code.count("\n", 0, fence.start()) + 1
        return f"line {line} is only ```, which would end the code block that shows the code"
    if function is None:
        return None
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if function not in defined:
        return f"defines no top-level function named {function!r} (def {function}(...): the field 'function')"
    return None


def code_block(code: str) -> str:
    """`code` as a fenced Markdown code block, as the answer of a code question is shown."""
    return f"```python\n{code}```"
