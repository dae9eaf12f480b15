"""The checkers' engine: run a learner's function on fixed cases and say, in one sentence, what is wrong.

Each ``check_*`` function (one module per lesson) runs the learner's function on a list of :class:`Case`
(simple ones first, then the edge cases: a length-1 sequence, d_k = 1, batch axes, a fully masked row, scores
large enough to overflow a naive softmax) through :func:`run_cases`, compares with the reference in
:mod:`course.attention`, stops at the first problem, prints one sentence and returns a :class:`CheckResult`.
The sentence names the case and then the first problem found, in this order: an exception, an input array
changed in place, a missing or non-array result, (weights, output) in the wrong order, a wrong shape (or
dtype, for masks), NaN or inf, a masked position that leaked, attention weights that do not sum to 1, a wrong
value (first wrong index, both values). It then names the typical mistake the result matches, when it matches
one (scales that coincide for a case are named together), or else says that the values are right in the wrong
shape, or that a float16 dtype lost precision, or that an integer one lost the fractions that were expected
(not when whole numbers were: counts, token ids). Numbers are printed to 6 significant digits. A torch tensor
is taken as its values, detached from autograd.

Attention exercises may return the output alone or ``(output, weights)``; weights, when given, are checked
too. A case may require the pair (a code card whose prompt asks for both): the output alone is then refused.
A function that raises NotImplementedError (the workbook's stub) before it has returned anything is reported
as not written yet, in a sentence that starts with "·" rather than "✗"; once it has returned for another
case, NotImplementedError is reported like any other exception. The learner's function gets copies of
its arrays and tensors (inside tuples and lists too), and changing one of them in place is reported. A case
may also bound the memory the function holds at its peak (numpy's allocations, traced by tracemalloc), for an
exercise that forbids building a large matrix; that is checked once the values are right. A typical mistake
also matches a result with NaN rows where the mistake leaves a query no key (a mask gone wrong). A checker
whose cases are not :class:`Case` passes its own ``check`` to :func:`run_cases` (the permutation test does:
its sentence says what the function returned and what was expected), and one that mixes both calls
:func:`check_case` for its :class:`Case` (grouped-query attention does).
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from course.checkers._listening import heard
from course.checkers._result import CheckResult
from course.efficient import peak_memory

# Public here: the lesson modules build their checkers from these (CheckResult is _result's, re-exported).
__all__ = [
    "ATOL",
    "NOT_WRITTEN",
    "RTOL",
    "Case",
    "CheckResult",
    "Problem",
    "as_array",
    "call_learner",
    "check_case",
    "from_torch",
    "run_cases",
    "shape_text",
]

RTOL = 1e-5
ATOL = 1e-7  # loose enough for a learner computing in float32


@dataclass(frozen=True)
class Case:
    """One call of the learner's function and what it should return.

    ``weights`` is set for attention exercises (the function may then return ``(output, weights)``),
    ``allowed`` (True = may attend, broadcast to the weights' shape) for masked ones, with ``v_arg`` the
    position of the values among ``args`` (to detect leaks by changing a masked key's value). ``mistakes``
    pairs what a typical wrong solution would return with the words that explain it; ``nonfinite_hint`` is
    added when the output has NaN or inf, ``error_hint`` when the function raises an exception whose sentence
    contains one of ``error_when`` (any exception when it is empty).
    For boolean masks, ``mask_words(index, expected, where)`` describes a wrong entry. With ``peak_limit``
    (bytes) the function must hold less than that at once while it runs; ``peak_words`` says what to do when
    it holds more. With ``weights_required`` (and ``weights``) the function must return ``(output, weights)``:
    the output alone is refused.
    """

    name: str
    args: tuple[Any, ...]
    output: NDArray[Any]
    weights: NDArray[Any] | None = None
    allowed: NDArray[np.bool_] | None = None
    v_arg: int = 2
    mistakes: tuple[tuple[NDArray[Any], str], ...] = field(default=())
    nonfinite_hint: str = ""
    error_hint: str = ""
    error_when: tuple[str, ...] = ()
    mask_words: Callable[[tuple[int, ...], bool, str], str] | None = None
    peak_limit: int = 0
    peak_words: str = ""
    weights_required: bool = False


class Problem(Exception):
    """Raised inside a case check with the sentence (without the case prefix) that describes the problem."""


class _NotWritten(Exception):
    """Raised when the learner's function raises NotImplementedError: the workbook's stub, still in place."""


NOT_WRITTEN = (
    "· {title}: not written yet. Replace the `raise NotImplementedError` line with your code, then run this "
    "cell again."
)


# ----------------------------------------------------------------------------------------------------
# Formatting


def _num(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def _idx(name: str, index: Sequence[int]) -> str:
    if len(index) == 0:  # a single number
        return f"the {name}"
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def shape_text(shape: Sequence[int]) -> str:
    return str(tuple(int(s) for s in shape))  # (2, 3), (3,)


def _query(index: Sequence[int]) -> str:
    """Name a query from an index into (..., T_q): 'query 2', or 'query 2 of batch item [1]'."""
    *batch, i = (int(j) for j in index)
    return f"query {i}" if not batch else f"query {i} of batch item [{', '.join(map(str, batch))}]"


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


# ----------------------------------------------------------------------------------------------------
# The engine


def _is_tensor(value: Any) -> bool:
    """Whether ``value`` is a torch tensor (torch is not imported: whoever passes one has imported it)."""
    return type(value).__module__.startswith("torch") and hasattr(value, "clone")


def _copy(value: Any) -> Any:
    """A copy of every array and tensor in ``value``, inside tuples and lists too; anything else as it is."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if _is_tensor(value):
        return value.clone()
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return type(value)(_copy(item) for item in value)
    return value


# The callables that have returned in the current run of cases: NotImplementedError from one of them is a
# case it does not handle, not a stub left in place.
_RETURNED: ContextVar[list[Any] | None] = ContextVar("_RETURNED", default=None)


def call_learner(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """Call the learner's function on copies of ``args``, with numpy's warnings silenced (NaN is reported),
    and make sure it left those copies as they were."""
    return _call(fn, args, measure=False)[0]


def _call(fn: Callable[..., Any], args: tuple[Any, ...], *, measure: bool) -> tuple[Any, int]:
    """``call_learner``, and the bytes the call held at its peak when ``measure`` (0 otherwise)."""
    copies = _copy(args)
    returned = _RETURNED.get()
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            result, peak = _measured(fn, copies) if measure else (fn(*copies), 0)
    except NotImplementedError as e:
        if returned is not None and any(f is fn for f in returned):
            raise Problem(_raised(e)) from None  # written, but not for this input
        raise _NotWritten from None
    except Exception as e:  # the learner's bug, reported as a sentence, never a traceback
        raise Problem(_raised(e)) from None
    if returned is not None and not any(f is fn for f in returned):
        returned.append(fn)
    _check_unchanged(fn, args, copies)
    return result, peak


def _measured(fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, int]:
    """``(fn(*args), peak bytes)``; a learner's function run in another process measures its peak there
    (its ``call_measured``, `course.checkers._apart`)."""
    elsewhere = getattr(fn, "call_measured", None)
    if callable(elsewhere):
        result, peak = elsewhere(*args)
        return result, int(peak)
    return peak_memory(fn, *args)


def _raised(error: Exception) -> str:
    """'your function raised TypeError: its first line', or only its type when ``str(error)`` fails too."""
    try:
        message = _first_line(str(error)).rstrip(".")  # the sentence adds its own full stop
    except Exception:
        message = ""
    return f"your function raised {type(error).__name__}" + (f": {message}" if message else "")


def _unchanged(original: Any, given: Any) -> bool:
    """Whether ``given``, the learner's copy of ``original``, still holds what ``original`` holds."""
    if isinstance(original, (tuple, list)) and type(original) in (tuple, list):
        return all(_unchanged(a, b) for a, b in zip(original, given, strict=True))
    if _is_tensor(original):
        same = original.shape == given.shape and original.dtype == given.dtype
        return bool(same and ((original == given) | ((original != original) & (given != given))).all())
    if not isinstance(original, np.ndarray):
        return True
    same = given.shape == original.shape and given.dtype == original.dtype
    return same and bool(np.array_equal(given, original, equal_nan=original.dtype.kind in "fc"))


def _check_unchanged(fn: Callable[..., Any], args: tuple[Any, ...], copies: tuple[Any, ...]) -> None:
    """Raise :class:`Problem` when ``fn`` changed an array or tensor it was given (``copies``, made of
    ``args``), itself or inside a tuple or list."""
    for position, (original, given) in enumerate(zip(args, copies, strict=True)):
        if _unchanged(original, given):
            continue
        name = _parameter(fn, position)
        kind = "tensor" if _is_tensor(original) else "array"
        raise Problem(f"your function changed its input {name} in place; compute a new {kind} instead")


def _parameter(fn: Callable[..., Any], position: int) -> str:
    """The name of ``fn``'s positional parameter at ``position``, in backticks, or 'number N' (from 1)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    for callable_ in (fn, getattr(fn, "forward", None)):  # an nn.Module is called through its forward
        try:
            parameters = list(inspect.signature(callable_).parameters.values())  # type: ignore[arg-type]
        except (TypeError, ValueError):  # None, a builtin or another callable without a signature
            continue
        names = [parameter.name for parameter in parameters if parameter.kind in kinds]
        if position < len(names):
            return f"`{names[position]}`"
    return f"number {position + 1}"


def from_torch(value: Any, what: str) -> Any:
    """A torch tensor as a numpy array, detached from autograd and moved to the CPU (torch is not imported:
    a learner who returns a tensor has imported it); anything else as it is."""
    if not type(value).__module__.startswith("torch") or not hasattr(value, "detach"):
        return value
    if str(getattr(value, "dtype", "")) == "torch.bfloat16":
        raise Problem(
            f"{what} is a bfloat16 tensor, which keeps only about 3 significant digits; compute in float64 "
            "(or float32)"
        )
    try:
        return value.detach().cpu().resolve_conj().resolve_neg().numpy()
    except Exception:
        return value


def as_array(value: Any, what: str) -> NDArray[Any]:
    """``value``, returned by the learner as ``what``, as a numpy array of real numbers or booleans; a
    :class:`Problem` saying what it is otherwise."""
    if value is None:
        raise Problem(f"your function returned None instead of {what} (is a return statement missing?)")
    value = from_torch(value, what)
    try:
        array = np.asarray(value)
    except Exception:
        raise Problem(f"expected {what} as an array, got {type(value).__name__}") from None
    if np.issubdtype(array.dtype, np.complexfloating):
        raise Problem(f"expected {what} as real numbers, got complex numbers (dtype {array.dtype})")
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        got = f"an array of dtype {array.dtype}" if isinstance(value, np.ndarray) else type(value).__name__
        raise Problem(f"expected {what} as an array of numbers, got {got}")
    return array


_OUTPUT_ALONE = (
    "your function returned one array, not the pair (output, weights); return the attention weights too: "
    "return output, weights"
)


def _split_result(result: Any, case: Case) -> tuple[NDArray[Any], NDArray[Any] | None]:
    if isinstance(result, tuple):  # a list is taken as an array (a pure-Python answer)
        if case.weights is None or len(result) != 2:
            wanted = "the output, or (output, weights)" if case.weights is not None else "one array"
            kind = type(result).__name__
            raise Problem(f"your function returned a {kind} of {len(result)} items; expected {wanted}")
        return as_array(result[0], "the output"), as_array(result[1], "the weights")
    if case.weights_required and case.weights is not None:
        raise Problem(_OUTPUT_ALONE)
    return as_array(result, "the output"), None


def _check_order(out: NDArray[Any], weights: NDArray[Any] | None, case: Case) -> None:
    """Raise :class:`Problem` when the function returned ``(weights, output)`` instead of the other way."""
    if weights is None or case.weights is None:
        return
    if out.shape != case.weights.shape or weights.shape != case.output.shape:
        return
    if out.shape != case.output.shape or (
        _equal(out, case.weights) and _equal(weights, case.output) and not _equal(out, case.output)
    ):
        raise Problem("your function returned (weights, output); return (output, weights), the output first")


def _check_shapes(out: NDArray[Any], weights: NDArray[Any] | None, case: Case) -> None:
    if out.shape != case.output.shape:
        expected = shape_text(case.output.shape) if case.output.shape else "a single number, shape ()"
        raise Problem(f"the output has shape {shape_text(out.shape)}, expected {expected}")
    if weights is None or case.weights is None or weights.shape == case.weights.shape:
        return
    sentence = (
        f"the weights have shape {shape_text(weights.shape)}, expected {shape_text(case.weights.shape)}"
    )
    if case.weights.ndim >= 3 and weights.shape == case.weights.shape[:-3] + case.weights.shape[-2:]:
        sentence += " (one matrix per head; do not average over the heads)"
    raise Problem(sentence)


_EMPTY = "{query} may attend to no key, so its weights and output should be all zero"


def _empty_row(query: tuple[int, ...], case: Case) -> bool:
    """Whether the query at ``query`` (batch indices then position) may attend to no key."""
    return case.allowed is not None and not case.allowed[query].any()


def _first(wrong: NDArray[np.bool_]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(wrong)[0])


def _check_finite(got: NDArray[Any], expected: NDArray[Any], name: str, case: Case) -> None:
    bad = ~np.isfinite(got)
    if not bad.any():
        return
    index = _first(bad)
    if _empty_row(index[:-1], case):
        raise Problem(
            f"{_EMPTY.format(query=_query(index[:-1]))}, got {_idx(name, index)} = {_num(got[index])}"
        )
    hint = f" ({case.nonfinite_hint})" if case.nonfinite_hint else ""
    raise Problem(f"{_idx(name, index)} is {_num(got[index])}, expected {_num(expected[index])}{hint}")


def _check_leaks(fn: Callable[..., Any], case: Case, out: NDArray[Any], weights: NDArray[Any] | None) -> None:
    """A masked key must get zero weight: read it from the weights, or else change that key's value and see
    whether the output moves."""
    if case.allowed is None:
        return
    blocked = ~case.allowed  # (..., T_q, T_k)
    if weights is not None:
        leaked = blocked & (np.abs(weights) > ATOL)
        if leaked.any():
            index = _first(leaked)
            query, key, got = index[:-1], index[-1], f"{_idx('weights', index)} = {_num(weights[index])}"
            if _empty_row(query, case):
                raise Problem(f"{_EMPTY.format(query=_query(query))}, got {got}")
            raise Problem(f"{_query(query)} attends to masked key {key} ({got}, expected 0)")
        return
    for key in range(blocked.shape[-1]):
        args = list(case.args)
        args[case.v_arg] = args[case.v_arg].copy()
        args[case.v_arg][..., key, :] += 1.0
        changed = as_array(call_learner(fn, tuple(args)), "the output")
        if changed.shape != out.shape:
            raise Problem(
                f"the output has shape {shape_text(changed.shape)} once the value of key {key} changes, "
                f"{shape_text(out.shape)} before; its shape must depend only on the inputs' shapes"
            )
        with np.errstate(all="ignore"):  # booleans and integers too: compare as floats
            difference = np.abs(changed.astype(np.float64) - out.astype(np.float64))
        moved = difference.max(axis=-1) > ATOL  # (..., T_q)
        leaked = np.broadcast_to(moved, blocked.shape[:-1]) & blocked[..., key]
        if leaked.any():
            query = _first(leaked)
            if _empty_row(query, case):
                empty = _EMPTY.format(query=_query(query))
                raise Problem(f"{empty}, but its output changes when the value of key {key} changes")
            raise Problem(
                f"{_query(query)} attends to masked key {key} (its output changes with that key's value)"
            )


def _check_row_sums(weights: NDArray[Any], case: Case) -> None:
    sums = weights.sum(axis=-1)  # (..., T_q)
    target = case.weights.sum(axis=-1)  # type: ignore[union-attr]  # 1, or 0 for a fully masked query
    wrong = ~np.isclose(sums, target, rtol=RTOL, atol=1e-6)
    if wrong.any():
        query = _first(wrong)
        raise Problem(
            f"the weights of {_query(query)} sum to {_num(sums[query])}, expected {_num(target[query])}"
        )


def _check_values(got: NDArray[Any], expected: NDArray[Any], name: str, case: Case) -> None:
    wrong = ~np.isclose(got, expected, rtol=RTOL, atol=ATOL)
    if not wrong.any():
        return
    index = _first(wrong)
    if name == "output" and case.allowed is not None and _empty_row(index[:-1], case):
        raise Problem(
            f"{_EMPTY.format(query=_query(index[:-1]))}, got {_idx(name, index)} = {_num(got[index])}"
        )
    raise Problem(f"{_idx(name, index)} is {_num(got[index])}, expected {_num(expected[index])}")


def _check_mask_values(got: NDArray[Any], case: Case) -> None:
    if got.dtype != np.bool_:
        raise Problem(f"the mask has dtype {got.dtype}, expected bool (True = may attend)")
    wrong = got != case.output
    if wrong.any():
        index = _first(wrong)
        raise Problem(case.mask_words(index, bool(case.output[index]), _idx("mask", index)))  # type: ignore[misc]


def _equal(a: NDArray[Any], b: NDArray[Any]) -> bool:
    """Same shape and the same values (booleans exactly, numbers up to the checkers' tolerance)."""
    if a.shape != b.shape:
        return False
    if a.dtype == np.bool_ or b.dtype == np.bool_:
        return bool(np.array_equal(a, b))
    return bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))


def _matches(output: NDArray[Any], alternative: NDArray[Any], case: Case) -> bool:
    """Whether ``output`` is what a typical mistake gives: equal to ``alternative``, or, in a masked case,
    equal except for rows (along the last axis) of NaN or inf where ``alternative`` is all zero. Those are the
    rows a mistaken mask leaves without any key: the reference gives them zeros, a learner's softmax of an all
    -inf row NaN."""
    if _equal(output, alternative):
        return True
    if case.allowed is None or output.shape != alternative.shape or output.ndim < 2:
        return False
    if np.bool_ in (output.dtype, alternative.dtype):
        return False
    empty = ~np.isfinite(output).all(axis=-1)  # (...): rows with NaN or inf
    if not empty.any() or empty.all() or np.any(alternative[empty] != 0):
        return False
    return _equal(output[~empty], alternative[~empty])


def _known_mistake(output: NDArray[Any], case: Case) -> str | None:
    """The explanation of the first typical mistake whose result equals ``output``, if any. A mistake that
    gives the right output on this case (no scaling when d_k = 1, say) explains nothing and is skipped."""
    for alternative, explanation in case.mistakes:
        if _matches(output, alternative, case) and not _equal(alternative, case.output):
            return explanation
    return None


def _shape_hint(output: NDArray[Any], case: Case) -> str | None:
    """Words for the right values in the wrong shape, if ``output`` holds them."""
    if output.shape == case.output.shape or output.size != case.output.size:
        return None
    if not _equal(output.reshape(case.output.shape), case.output):
        return None
    if np.squeeze(output).shape == np.squeeze(case.output).shape:
        extra = output.ndim > case.output.ndim
        return f"the values are right, with {'an extra' if extra else 'a missing'} axis of length 1"
    return "the values are right, in the wrong shape"


def _has_fractions(expected: NDArray[Any] | None) -> bool:
    """Whether ``expected`` holds a number that is not a whole number (NaN and inf aside)."""
    if expected is None or expected.dtype.kind not in "fc":
        return False
    finite = expected[np.isfinite(expected)]
    return bool(np.any(finite != np.round(finite)))


def _dtype_hint(arrays: Sequence[tuple[NDArray[Any] | None, str]], case: Case) -> str | None:
    """Words for a result whose dtype cannot hold the expected values: float16, or integers or booleans
    where fractions were expected (whole numbers, a count or token ids, fit an integer dtype)."""
    if case.output.dtype == np.bool_:
        return None
    expected = {"output": case.output, "weights": case.weights}
    for array, name in arrays:
        if array is None:
            continue
        if array.dtype == np.float16:
            return (
                f"the {name} has dtype float16, which keeps only about 3 significant digits; compute in "
                "float64 (or float32)"
            )
        if array.dtype.kind in "iub" and _has_fractions(expected.get(name)):
            return (
                f"the {name} has dtype {array.dtype}, which cannot hold fractions; compute with floats "
                "(np.zeros(n) rather than np.zeros(n, dtype=int), for example)"
            )
    return None


def _explain(out: NDArray[Any], weights: NDArray[Any] | None, case: Case) -> str | None:
    """The words added after a problem: the typical mistake, the right values misshaped, or a poor dtype."""
    known = _known_mistake(out, case) or _shape_hint(out, case)
    return known or _dtype_hint(((out, "output"), (weights, "weights")), case)


def _call_case(fn: Callable[..., Any], case: Case) -> tuple[Any, int]:
    """Call ``fn`` on the case's arguments, measuring its peak memory when the case bounds it; an exception's
    sentence gets the case's hint when it applies."""
    try:
        return _call(fn, case.args, measure=case.peak_limit > 0)
    except Problem as problem:
        sentence = str(problem)
        if not case.error_hint or (case.error_when and not any(w in sentence for w in case.error_when)):
            raise
        raise Problem(f"{sentence} ({case.error_hint})") from None


def check_case(fn: Callable[..., Any], case: Case) -> None:
    """Raise :class:`Problem` describing the first thing wrong with ``fn`` on ``case``: what
    :func:`run_cases` does with each :class:`Case`, for a checker that mixes them with cases of its own."""
    result, peak = _call_case(fn, case)
    out, weights = _split_result(result, case)
    _check_order(out, weights, case)  # says what to do; no typical mistake to add
    try:
        _check_shapes(out, weights, case)
        if case.output.dtype == np.bool_:
            _check_mask_values(out, case)
            return
        _check_finite(out, case.output, "output", case)
        if weights is not None:
            _check_finite(weights, case.weights, "weights", case)  # type: ignore[arg-type]
        _check_leaks(fn, case, out, weights)
        if weights is not None:
            _check_row_sums(weights, case)
            _check_values(weights, case.weights, "weights", case)  # type: ignore[arg-type]
        _check_values(out, case.output, "output", case)
    except Problem as problem:
        explanation = _explain(out, weights, case)
        if explanation is None:
            raise
        raise Problem(f"{problem}; {explanation}") from None
    if case.peak_limit and peak >= case.peak_limit:
        raise Problem(case.peak_words)


def run_cases(
    title: str,
    fn: Callable[..., Any],
    cases: Sequence[Any],
    check: Callable[[Callable[..., Any], Any], None] = check_case,
) -> CheckResult:
    """Run ``check(fn, case)`` on each case (a :class:`Case` by default), print one sentence, return it;
    the listeners hear it (`course.checkers.listen`)."""
    token = _RETURNED.set([])
    try:
        message = _first_problem(title, fn, cases, check)
    finally:
        _RETURNED.reset(token)
    print(message)
    result = CheckResult(message.startswith("✓"), message)
    heard(result)
    return result


def _first_problem(
    title: str, fn: Callable[..., Any], cases: Sequence[Any], check: Callable[[Callable[..., Any], Any], None]
) -> str:
    for number, case in enumerate(cases, start=1):
        try:
            check(fn, case)
        except _NotWritten:
            return NOT_WRITTEN.format(title=title)
        except Problem as problem:
            return f"✗ {title}, case {number} of {len(cases)} ({case.name}): {problem}."
    return f"✓ {title}: all {len(cases)} cases pass."
